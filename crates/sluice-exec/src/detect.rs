//! Which toolchain tests or builds a project folder (`run_tests` / `run_build`): the folder's
//! manifest files decide, and the result is an ordinary [`CommandSpec`] that then goes through
//! [`crate::decide`] like any other command. Detection only reads a few small files of one
//! folder (never through a symlink) and refuses what it builds unless it is one of
//! [`crate::spec`]'s toolchain forms, so extra arguments cannot inject options in any mode.
//!
//! Order when several fit: the language manifests (Cargo, package.json scripts, Go, Gradle,
//! Maven, .NET, Python), then Makefile and justfile targets. A caller who wants another one
//! names it (`toolchain`).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sluice_guard::RelPath;

use crate::error::ExecError;
use crate::spec::{CommandSpec, Form, ProjectFacts, TrustedPath, assess, validate};

/// What to do with the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Test,
    Build,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Action::Test => "test",
            Action::Build => "build",
        }
    }
}

/// A toolchain detection knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Toolchain {
    Cargo,
    Npm,
    Pnpm,
    Yarn,
    Bun,
    Go,
    Gradle,
    Maven,
    Dotnet,
    Pytest,
    Make,
    Just,
}

impl Toolchain {
    /// Every toolchain, in detection order.
    pub const ALL: [Toolchain; 12] = [
        Toolchain::Cargo,
        Toolchain::Npm,
        Toolchain::Pnpm,
        Toolchain::Yarn,
        Toolchain::Bun,
        Toolchain::Go,
        Toolchain::Gradle,
        Toolchain::Maven,
        Toolchain::Dotnet,
        Toolchain::Pytest,
        Toolchain::Make,
        Toolchain::Just,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Toolchain::Cargo => "cargo",
            Toolchain::Npm => "npm",
            Toolchain::Pnpm => "pnpm",
            Toolchain::Yarn => "yarn",
            Toolchain::Bun => "bun",
            Toolchain::Go => "go",
            Toolchain::Gradle => "gradle",
            Toolchain::Maven => "maven",
            Toolchain::Dotnet => "dotnet",
            Toolchain::Pytest => "pytest",
            Toolchain::Make => "make",
            Toolchain::Just => "just",
        }
    }

    /// The inverse of [`Toolchain::as_str`] (`mvn` is accepted for maven).
    pub fn parse(s: &str) -> Result<Toolchain, ExecError> {
        let s = if s == "mvn" { "maven" } else { s };
        Toolchain::ALL.into_iter().find(|t| t.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Toolchain::ALL.iter().map(|t| t.as_str()).collect();
            ExecError::Invalid(format!("unknown toolchain {s:?}; known: {}", names.join(", ")))
        })
    }

    fn is_node(self) -> bool {
        matches!(self, Toolchain::Npm | Toolchain::Pnpm | Toolchain::Yarn | Toolchain::Bun)
    }
}

impl fmt::Display for Toolchain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `run_tests` / `run_build` asked for.
#[derive(Debug, Clone, Copy)]
pub struct DetectRequest<'a> {
    pub action: Action,
    /// Only consider this toolchain.
    pub toolchain: Option<Toolchain>,
    /// A test name filter (tests only); never read as an option.
    pub filter: Option<&'a str>,
    /// Extra arguments; they must fit the toolchain's allowed form.
    pub args: &'a [String],
}

/// The command detection chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    pub toolchain: Toolchain,
    /// The file that decided it, relative to the working folder (`Cargo.toml`, `Makefile`, …).
    pub detected_from: String,
    /// The command, with the working folder set and no timeout.
    pub spec: CommandSpec,
}

/// Largest manifest read (package.json, Makefile, justfile).
const MAX_MANIFEST: u64 = 1024 * 1024;

/// One folder of the project, read without following links.
struct Folder {
    dir: PathBuf,
}

impl Folder {
    fn is_file(&self, name: &str) -> bool {
        std::fs::symlink_metadata(self.dir.join(name)).is_ok_and(|m| m.file_type().is_file())
    }

    /// The first of `names` that is a regular file.
    fn first(&self, names: &[&str]) -> Option<String> {
        names.iter().find(|n| self.is_file(n)).map(|n| (*n).to_owned())
    }

    fn read(&self, name: &str) -> Option<String> {
        let path = self.dir.join(name);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.file_type().is_file() || meta.len() > MAX_MANIFEST {
            return None;
        }
        std::fs::read_to_string(path).ok()
    }

    /// The first regular file (by name) ending in one of `exts`.
    fn with_extension(&self, exts: &[&str]) -> Option<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .ok()?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| exts.iter().any(|x| n.ends_with(x)))
            .collect();
        names.sort();
        names.into_iter().next()
    }
}

/// The physical folder of `cwd` (project-relative), really inside `root`.
fn folder(root: &Path, cwd: &str) -> Result<(String, Folder), ExecError> {
    let cwd = if cwd == "." { "" } else { cwd };
    let rel = RelPath::parse(cwd).map_err(|e| ExecError::Invalid(format!("path: {e}")))?;
    let bad =
        || ExecError::Invalid(format!("path {:?} is not a folder in the project", rel.as_str()));
    let root = std::fs::canonicalize(root).map_err(|_| bad())?;
    let joined = if rel.as_str().is_empty() { root.clone() } else { root.join(rel.as_str()) };
    let dir = std::fs::canonicalize(&joined).map_err(|_| bad())?;
    if !dir.starts_with(&root) || !dir.is_dir() {
        return Err(bad());
    }
    Ok((rel.as_str().to_owned(), Folder { dir }))
}

/// Whether a Makefile or justfile defines `target` (a rule line `target:` or, for just,
/// `target args…:` and the quiet `@target:`). A plain textual check: it only chooses what to
/// propose; make or just itself decides what runs.
fn defines_target(text: &str, target: &str, just: bool) -> bool {
    text.lines().any(|line| {
        let line = if just { line.strip_prefix('@').unwrap_or(line) } else { line };
        let Some(rest) = line.strip_prefix(target) else { return false };
        // The name must end here: `tests:` is not `test`.
        if !rest.starts_with([':', ' ', '\t']) {
            return false;
        }
        let rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(':') {
            return !after.starts_with('=');
        }
        just && rest.contains(':') && !rest.contains(":=")
    })
}

/// The package manager a package.json folder uses: its `packageManager` field, else its
/// lockfile, else npm.
fn node_manager(folder: &Folder) -> (Toolchain, String) {
    if let Some(text) = folder.read("package.json")
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(pm) = v.get("packageManager").and_then(|p| p.as_str())
    {
        let name = pm.split('@').next().unwrap_or("");
        if let Ok(tc) = Toolchain::parse(name)
            && tc.is_node()
        {
            return (tc, "package.json".into());
        }
    }
    let locks = [
        ("pnpm-lock.yaml", Toolchain::Pnpm),
        ("yarn.lock", Toolchain::Yarn),
        ("bun.lockb", Toolchain::Bun),
        ("bun.lock", Toolchain::Bun),
        ("package-lock.json", Toolchain::Npm),
        ("npm-shrinkwrap.json", Toolchain::Npm),
    ];
    for (file, tc) in locks {
        if folder.is_file(file) {
            return (tc, file.into());
        }
    }
    (Toolchain::Npm, "package.json".into())
}

/// Why a toolchain does not fit, or its program, base arguments and deciding file.
type Candidate = Result<(String, Vec<String>, String), String>;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn candidate(
    tc: Toolchain,
    folder: &Folder,
    action: Action,
    facts: &ProjectFacts,
    trusted: &TrustedPath,
) -> Candidate {
    let act = action.as_str();
    let test = action == Action::Test;
    match tc {
        Toolchain::Cargo => folder
            .first(&["Cargo.toml"])
            .map(|f| ("cargo".into(), strings(&[act]), f))
            .ok_or_else(|| "no Cargo.toml".into()),
        Toolchain::Npm | Toolchain::Pnpm | Toolchain::Yarn | Toolchain::Bun => {
            if !folder.is_file("package.json") {
                return Err("no package.json".into());
            }
            if !facts.scripts.contains_key(act) {
                return Err(format!("package.json has no {act:?} script"));
            }
            Ok((tc.as_str().into(), strings(&["run", act]), "package.json".into()))
        }
        Toolchain::Go => folder
            .first(&["go.mod"])
            .map(|f| ("go".into(), strings(&[act]), f))
            .ok_or_else(|| "no go.mod".into()),
        Toolchain::Gradle => folder
            .first(&["build.gradle.kts", "build.gradle", "settings.gradle.kts", "settings.gradle"])
            .map(|f| ("gradle".into(), strings(&[if test { "test" } else { "assemble" }]), f))
            .ok_or_else(|| "no build.gradle".into()),
        Toolchain::Maven => folder
            .first(&["pom.xml"])
            .map(|f| ("mvn".into(), strings(&[if test { "test" } else { "compile" }]), f))
            .ok_or_else(|| "no pom.xml".into()),
        Toolchain::Dotnet => folder
            .with_extension(&[".sln", ".slnx", ".csproj", ".fsproj", ".vbproj"])
            .map(|f| ("dotnet".into(), strings(&[act]), f))
            .ok_or_else(|| "no .sln or project file".into()),
        Toolchain::Pytest => {
            if !test {
                return Err("pytest only tests".into());
            }
            let marker = folder
                .first(&["pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py"])
                .ok_or_else(|| "no pyproject.toml, pytest.ini or setup.cfg".to_owned())?;
            if trusted.resolve("pytest").is_ok() {
                Ok(("pytest".into(), Vec::new(), marker))
            } else {
                Ok(("python3".into(), strings(&["-m", "pytest"]), marker))
            }
        }
        Toolchain::Make => {
            let file = folder
                .first(&["GNUmakefile", "makefile", "Makefile"])
                .ok_or_else(|| "no Makefile".to_owned())?;
            let text = folder.read(&file).unwrap_or_default();
            if defines_target(&text, act, false) {
                Ok(("make".into(), strings(&[act]), file))
            } else {
                Err(format!("the {file} has no `{act}` target"))
            }
        }
        Toolchain::Just => {
            let file = folder
                .first(&["justfile", "Justfile", ".justfile"])
                .ok_or_else(|| "no justfile".to_owned())?;
            let text = folder.read(&file).unwrap_or_default();
            if defines_target(&text, act, true) {
                Ok(("just".into(), strings(&[act]), file))
            } else {
                Err(format!("the {file} has no `{act}` recipe"))
            }
        }
    }
}

/// Adds the filter and the extra arguments where `tc` takes them.
fn with_extras(
    tc: Toolchain,
    mut args: Vec<String>,
    filter: Option<&str>,
    extra: &[String],
) -> Result<Vec<String>, ExecError> {
    let none = |what: &str| {
        Err(ExecError::Invalid(format!("{tc} takes no {what} here; use run_command instead")))
    };
    let filter = filter.map(str::to_owned);
    match tc {
        // The filter is cargo's positional, before anything that may contain `--`.
        Toolchain::Cargo => {
            args.extend(filter);
            args.extend_from_slice(extra);
        }
        t if t.is_node() => {
            if filter.is_some() || !extra.is_empty() {
                args.push("--".into());
                args.extend_from_slice(extra);
                args.extend(filter);
            }
        }
        Toolchain::Go => {
            args.extend_from_slice(extra);
            if let Some(f) = filter {
                args.extend(["-run".to_owned(), f]);
            }
            if !extra.iter().any(|a| a == "." || a.starts_with("./")) {
                args.push("./...".into());
            }
        }
        Toolchain::Pytest => {
            args.extend_from_slice(extra);
            if let Some(f) = filter {
                args.extend(["-k".to_owned(), f]);
            }
        }
        Toolchain::Gradle => {
            args.extend_from_slice(extra);
            if let Some(f) = filter {
                args.extend(["--tests".to_owned(), f]);
            }
        }
        Toolchain::Maven => {
            args.extend_from_slice(extra);
            if let Some(f) = filter {
                args.push(format!("-Dtest={f}"));
            }
        }
        Toolchain::Dotnet => {
            args.extend_from_slice(extra);
            if let Some(f) = filter {
                args.extend(["--filter".to_owned(), f]);
            }
        }
        Toolchain::Make => {
            if filter.is_some() {
                return none("test filter");
            }
            args.extend_from_slice(extra);
        }
        _ => {
            if filter.is_some() {
                return none("test filter");
            }
            if !extra.is_empty() {
                return none("extra arguments");
            }
        }
    }
    Ok(args)
}

fn check_filter(filter: Option<&str>, action: Action) -> Result<(), ExecError> {
    let Some(f) = filter else { return Ok(()) };
    if action == Action::Build {
        return Err(ExecError::Invalid("a filter applies to tests only".into()));
    }
    if f.is_empty() || f.starts_with('-') || f.chars().any(char::is_control) || f.len() > 1024 {
        return Err(ExecError::Invalid(
            "the filter must be a non-empty name that does not start with '-'".into(),
        ));
    }
    Ok(())
}

/// Detects how to run `req.action` in the project folder `cwd` (project-relative) of the
/// project at `root`, and builds the command. Refuses a command that is not a toolchain form
/// (so extra arguments cannot smuggle options in), whatever the execution mode.
pub fn detect(
    root: &Path,
    cwd: &str,
    req: &DetectRequest<'_>,
    trusted: &TrustedPath,
) -> Result<Detection, ExecError> {
    check_filter(req.filter, req.action)?;
    let (cwd, folder) = folder(root, cwd)?;
    let facts = ProjectFacts::load(&folder.dir);
    let order: Vec<Toolchain> = match req.toolchain {
        Some(tc) => vec![tc],
        None => {
            // One node manager, the one the folder uses.
            let (manager, _) = node_manager(&folder);
            Toolchain::ALL.into_iter().filter(|t| !t.is_node() || *t == manager).collect()
        }
    };
    let mut why_not = Vec::new();
    for tc in order {
        match candidate(tc, &folder, req.action, &facts, trusted) {
            Ok((program, base, marker)) => {
                let marker = if tc.is_node() && req.toolchain.is_none() {
                    node_manager(&folder).1
                } else {
                    marker
                };
                let args = with_extras(tc, base, req.filter, req.args)?;
                let spec = CommandSpec { program, args, cwd, env: Vec::new(), timeout: None };
                validate(&spec)?;
                let assessment = assess(&spec, &facts);
                if assessment.form != Form::Toolchain {
                    return Err(ExecError::Refused(format!(
                        "these arguments do not fit `{tc} {}`: {}",
                        req.action.as_str(),
                        assessment.not_toolchain.as_deref().unwrap_or("not a toolchain form")
                    )));
                }
                return Ok(Detection { toolchain: tc, detected_from: marker, spec });
            }
            Err(why) => why_not.push(format!("{tc}: {why}")),
        }
    }
    let place = if cwd.is_empty() { "the project root".to_owned() } else { format!("{cwd:?}") };
    let act = req.action.as_str();
    Err(ExecError::NoToolchain(match req.toolchain {
        Some(tc) => format!("cannot {act} with {tc} in {place}: {}", why_not.join("; ")),
        None => format!(
            "found no way to {act} {place}: looked for Cargo.toml, package.json with a {act:?} \
             script, go.mod, build.gradle, pom.xml, a .sln or project file{}, and a Makefile or \
             justfile with a `{act}` target. Pass `path` for a subfolder, `toolchain` to choose, \
             or use run_command.",
            if req.action == Action::Test { ", pyproject.toml/pytest.ini/setup.cfg" } else { "" }
        ),
    }))
}

#[cfg(test)]
#[path = "detect_tests.rs"]
mod tests;
