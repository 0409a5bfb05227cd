//! Files in a project that choose which program an inspection really runs.
//!
//! An inspection (`cargo --version`, `python3 --version` in `safe` mode) needs no approval
//! because it runs the user's own program. Version managers break that: rustup's `cargo` runs the
//! toolchain a `rust-toolchain.toml` names (even one inside the project: `[toolchain] path`),
//! pyenv's, rbenv's, asdf's, mise's and nodenv's shims read `.python-version`, `.tool-versions`
//! and the like, Volta's and corepack's read `package.json`; and some tools run what their own
//! project configuration names (`.yarnrc.yml`'s `yarnPath`, `.cargo/config.toml`'s
//! `build.rustc`, `global.json`'s SDK paths). When the program an inspection resolves to reads
//! such a file and the project has one — in the command's folder or any folder up to the
//! project's root — the inspection asks instead of running unasked: the class, not one file.
//! (`go` is told `GOTOOLCHAIN=local` instead, see `spec`.)

use std::path::{Path, PathBuf};

/// Programs that rustup installs as proxies beside itself.
const RUSTUP_PROXIES: &[&str] = &[
    "cargo",
    "rustc",
    "rustdoc",
    "rustfmt",
    "cargo-fmt",
    "cargo-clippy",
    "clippy-driver",
    "rust-analyzer",
    "rust-gdb",
    "rust-lldb",
    "rust-gdbgui",
    "cargo-miri",
    "rls",
];

/// Shim folders of version managers (the end of the folder's path, `/`-separated), what the
/// manager is called, and the files it reads in a project.
const SHIMS: &[(&str, &str, &[&str])] = &[
    (".pyenv/shims", "pyenv", &[".python-version"]),
    (".pyenv/pyenv-win/shims", "pyenv", &[".python-version"]),
    (".rbenv/shims", "rbenv", &[".ruby-version"]),
    (".nodenv/shims", "nodenv", &[".node-version"]),
    (".jenv/shims", "jenv", &[".java-version"]),
    (".goenv/shims", "goenv", &[".go-version"]),
    (".asdf/shims", "asdf", &[".tool-versions"]),
    (".proto/shims", "proto", &[".prototools"]),
    (".volta/bin", "Volta", &["package.json"]),
    (
        "mise/shims",
        "mise",
        &[
            ".tool-versions",
            "mise.toml",
            ".mise.toml",
            "mise.local.toml",
            ".mise.local.toml",
            ".mise/config.toml",
            ".config/mise.toml",
            ".config/mise/config.toml",
            ".python-version",
            ".node-version",
            ".nvmrc",
            ".ruby-version",
            ".go-version",
            ".java-version",
        ],
    ),
];

/// Tools that read their own project configuration, which can name a program they then run.
const CONFIGURED: &[(&str, &[&str])] = &[
    ("cargo", &[".cargo/config.toml", ".cargo/config"]),
    ("yarn", &[".yarnrc.yml", ".yarnrc", "package.json"]),
    ("pnpm", &["package.json"]),
    ("dotnet", &["global.json"]),
];

/// Every file any of the above reads, so the engine can look for them once per command.
pub fn candidates() -> Vec<&'static str> {
    let mut all: Vec<&str> = vec!["rust-toolchain.toml", "rust-toolchain"];
    for (_, _, files) in SHIMS {
        all.extend_from_slice(files);
    }
    for (_, files) in CONFIGURED {
        all.extend_from_slice(files);
    }
    all.sort_unstable();
    all.dedup();
    all
}

/// The candidate files present in `dir` or a folder above it up to `root` (both physical,
/// `dir` inside `root`), as project-relative paths. A link counts like a file: the manager would
/// follow it.
pub fn present(root: &Path, dir: &Path) -> Vec<String> {
    let names = candidates();
    let mut found = Vec::new();
    let mut at: Option<PathBuf> = Some(dir.to_path_buf());
    while let Some(folder) = at {
        if !folder.starts_with(root) {
            break;
        }
        for name in &names {
            let file = folder.join(name);
            if std::fs::symlink_metadata(&file).is_err() {
                continue;
            }
            // Volta and corepack read a key of package.json; any other package.json is inert.
            if *name == "package.json" && !picks_a_package_manager(&file) {
                continue;
            }
            let rel = file.strip_prefix(root).unwrap_or(&file);
            found.push(rel.to_string_lossy().replace('\\', "/"));
        }
        at = folder.parent().map(Path::to_path_buf);
        if folder == root {
            break;
        }
    }
    found
}

/// Whether a `package.json` has the keys Volta and corepack choose a program by (a link or an
/// unreadable file counts as having them).
fn picks_a_package_manager(file: &Path) -> bool {
    let regular = std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_file());
    match std::fs::read_to_string(file) {
        Ok(text) if regular => text.contains("\"volta\"") || text.contains("\"packageManager\""),
        _ => true,
    }
}

/// Why the inspection `program` (resolved, absolute) may run a program the project chose, given
/// the project's `pins` ([`present`]); `None` when it runs what it would outside the project.
pub fn chosen_by_project(program: &Path, pins: &[String]) -> Option<String> {
    let name = program_name(program);
    let folder = program.parent()?;
    let has = |files: &[&str]| -> Vec<String> {
        pins.iter()
            .filter(|p| files.iter().any(|f| *p == f || p.ends_with(&format!("/{f}"))))
            .cloned()
            .collect()
    };
    let mut why = Vec::new();
    if RUSTUP_PROXIES.contains(&name.as_str()) && is_rustup_folder(folder) {
        let found = has(&["rust-toolchain.toml", "rust-toolchain"]);
        if !found.is_empty() {
            why.push(format!(
                "`{name}` is rustup's proxy and {} picks the toolchain it runs",
                found.join(", ")
            ));
        }
    }
    let real_folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    let shown = real_folder.to_string_lossy().replace('\\', "/");
    for (end, manager, files) in SHIMS {
        if shown.ends_with(&format!("/{end}")) {
            let found = has(files);
            if !found.is_empty() {
                why.push(format!(
                    "`{name}` is a {manager} shim and {} picks what it runs",
                    found.join(", ")
                ));
            }
        }
    }
    for (tool, files) in CONFIGURED {
        if name == *tool {
            let found = has(files);
            if !found.is_empty() {
                why.push(format!("{} can name a program `{name}` runs", found.join(", ")));
            }
        }
    }
    (!why.is_empty())
        .then(|| format!("{}: it may run a program from the project, so it asks", why.join("; ")))
}

/// A folder where rustup put its proxies: it holds `rustup` itself.
fn is_rustup_folder(folder: &Path) -> bool {
    ["rustup", "rustup.exe"].iter().any(|r| folder.join(r).is_file())
}

fn program_name(program: &Path) -> String {
    let base = program.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase());
    let base = base.unwrap_or_default();
    base.strip_suffix(".exe").map(str::to_owned).unwrap_or(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidates_cover_every_manager_and_tool() {
        let all = candidates();
        for f in [
            "rust-toolchain.toml",
            ".python-version",
            ".tool-versions",
            "mise.toml",
            ".yarnrc.yml",
            ".cargo/config.toml",
            "global.json",
            "package.json",
        ] {
            assert!(all.contains(&f), "{f}");
        }
    }

    #[test]
    fn a_tool_reading_its_project_configuration_asks_only_when_the_project_has_it() {
        let cargo = Path::new("/usr/bin/cargo");
        assert_eq!(chosen_by_project(cargo, &[]), None);
        assert_eq!(chosen_by_project(cargo, &["rust-toolchain.toml".into()]), None, "not rustup's");
        let why = chosen_by_project(cargo, &["sub/.cargo/config.toml".into()]).unwrap();
        assert!(why.contains("sub/.cargo/config.toml"), "{why}");
        assert!(chosen_by_project(Path::new("/usr/bin/yarn"), &[".yarnrc.yml".into()]).is_some());
        assert!(chosen_by_project(Path::new("/usr/bin/git"), &[".yarnrc.yml".into()]).is_none());
    }
}
