//! What the analysis needs to know about the project: its `package.json` scripts and a hash of
//! the task files `make` and `just` read ([`ProjectFacts`]).

use std::collections::BTreeMap;
use std::path::Path;

/// Facts about the project the analysis needs: the `package.json` scripts of the working
/// directory (only scripts that exist may run, and the approval shows their content), and a
/// hash of its task files (`Makefile`, `justfile`, …), whose recipes `make` and `just` run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectFacts {
    pub scripts: BTreeMap<String, String>,
    pub task_files: Option<String>,
    /// A `package.json` that is there but was not parsed for scripts (a symbolic link, not a
    /// file, too large): a hash of where it points and what is there, since the package manager
    /// would still run its scripts.
    pub opaque_package_json: Option<String>,
    /// Files in the command's folder or above it in the project that choose what a version
    /// manager or a tool runs ([`crate::pins::present`]); project-relative.
    pub pins: Vec<String>,
}

/// The task files `make` and `just` read, in the order they look for them.
const TASK_FILES: &[&str] =
    &["GNUmakefile", "makefile", "Makefile", "justfile", "Justfile", ".justfile"];

/// The largest `package.json` or task file read.
const MAX_FACT_FILE: u64 = 1024 * 1024;

impl ProjectFacts {
    /// Parses the `scripts` of a `package.json`; anything malformed yields no scripts.
    pub fn from_package_json(text: &str) -> ProjectFacts {
        let scripts = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("scripts").and_then(|s| s.as_object()).cloned())
            .map(|obj| {
                obj.into_iter().filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_owned()))).collect()
            })
            .unwrap_or_default();
        ProjectFacts { scripts, task_files: None, opaque_package_json: None, pins: Vec::new() }
    }

    /// Reads `package.json` and the task files in `dir` (a physical folder the caller already
    /// contained). A missing, oversized or symlinked `package.json` yields no scripts; task files
    /// count by name and content, an unreadable one as such, so any change changes the hash.
    pub fn load(dir: &Path) -> ProjectFacts {
        let regular = |file: &Path| {
            std::fs::symlink_metadata(file)
                .is_ok_and(|m| m.file_type().is_file() && m.len() <= MAX_FACT_FILE)
        };
        let file = dir.join("package.json");
        let mut facts = match regular(&file).then(|| std::fs::read_to_string(&file)) {
            Some(Ok(text)) => ProjectFacts::from_package_json(&text),
            _ => ProjectFacts {
                opaque_package_json: std::fs::symlink_metadata(&file).is_ok().then(|| {
                    let mut hasher = blake3::Hasher::new();
                    digest_file(&mut hasher, "package.json", &file);
                    hasher.finalize().to_hex().to_string()
                }),
                ..ProjectFacts::default()
            },
        };
        let mut hasher = blake3::Hasher::new();
        let mut any = false;
        for name in TASK_FILES {
            let file = dir.join(name);
            if std::fs::symlink_metadata(&file).is_err() {
                continue;
            }
            any = true;
            digest_file(&mut hasher, name, &file);
        }
        facts.task_files = any.then(|| hasher.finalize().to_hex().to_string());
        facts
    }

    /// The project-defined text `name args` runs, as a hash an allow rule is bound to (AP-05):
    /// every `package.json` script for a package manager (hooks and scripts that call each
    /// other included), the task files for `make` and `just`; `None` for other programs.
    pub fn content_for(&self, name: &str) -> Option<String> {
        match name {
            "npm" | "pnpm" | "yarn" | "bun" if self.opaque_package_json.is_some() => {
                self.opaque_package_json.clone()
            }
            "npm" | "pnpm" | "yarn" | "bun" => {
                let json = serde_json::to_string(&self.scripts).ok()?;
                Some(blake3::hash(json.as_bytes()).to_hex().to_string())
            }
            "make" | "gmake" | "just" => {
                Some(self.task_files.clone().unwrap_or_else(|| "no task files".into()))
            }
            _ => None,
        }
    }
}

/// Adds file `name` at `file` to `hasher` as the program reading it sees it: a symbolic link by
/// where it points and what is there, content up to [`MAX_FACT_FILE`], else "unreadable".
fn digest_file(hasher: &mut blake3::Hasher, name: &str, file: &Path) {
    hasher.update(name.as_bytes()).update(b"\0");
    if let Ok(target) = std::fs::read_link(file) {
        hasher.update(b"-> ").update(target.to_string_lossy().as_bytes()).update(b"\0");
    }
    let followed = std::fs::metadata(file)
        .is_ok_and(|m| m.is_file() && m.len() <= MAX_FACT_FILE)
        .then(|| std::fs::read(file).ok())
        .flatten();
    match followed {
        Some(bytes) => hasher.update(&(bytes.len() as u64).to_le_bytes()).update(&bytes),
        None => hasher.update(b"unreadable"),
    };
}
