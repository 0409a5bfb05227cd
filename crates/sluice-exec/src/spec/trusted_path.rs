//! The trusted PATH: programs are resolved only from folders outside every project, so a
//! project cannot plant a `cargo` that Sluice then runs.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::error::ExecError;

/// The engine's PATH with every entry that is relative or lies inside a project removed: a
/// project must not be able to plant a `cargo` that Sluice then runs.
#[derive(Debug, Clone, Default)]
pub struct TrustedPath {
    dirs: Vec<PathBuf>,
    projects: Vec<PathBuf>,
}

impl TrustedPath {
    /// Filters `path` (a PATH value). `projects` are the physical roots of every project.
    pub fn new(path: &OsStr, projects: &[PathBuf]) -> TrustedPath {
        let projects: Vec<PathBuf> = projects
            .iter()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
            .collect();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in std::env::split_paths(path) {
            if !dir.is_absolute() {
                continue;
            }
            let Ok(canon) = std::fs::canonicalize(&dir) else { continue };
            if !canon.is_dir() || projects.iter().any(|p| canon.starts_with(p)) {
                continue;
            }
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        TrustedPath { dirs, projects }
    }

    /// The engine's own PATH, filtered.
    pub fn from_env(projects: &[PathBuf]) -> TrustedPath {
        TrustedPath::new(&std::env::var_os("PATH").unwrap_or_default(), projects)
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The value given to jobs as `PATH`.
    pub fn joined(&self) -> OsString {
        std::env::join_paths(&self.dirs).unwrap_or_default()
    }

    /// Resolves a bare name on the trusted PATH, or accepts an absolute path; either way the
    /// result is an executable file whose real location is outside every project.
    pub fn resolve(&self, program: &str) -> Result<PathBuf, ExecError> {
        let candidates: Vec<PathBuf> = if Path::new(program).is_absolute() {
            vec![PathBuf::from(program)]
        } else if program.contains(['/', '\\']) || program == "." || program == ".." {
            return Err(ExecError::Refused(format!(
                "{program:?}: programs run from the trusted PATH only (a bare name) or by \
                 absolute path, never relative to the project"
            )));
        } else {
            self.dirs
                .iter()
                .flat_map(|d| exe_names(program).into_iter().map(|n| d.join(n)))
                .collect()
        };
        for candidate in candidates {
            if !is_executable(&candidate) {
                continue;
            }
            let real = std::fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
            if self.projects.iter().any(|p| real.starts_with(p)) {
                return Err(ExecError::Refused(format!(
                    "`{program}` resolves into a project folder; only programs outside projects \
                     run"
                )));
            }
            return Ok(candidate);
        }
        Err(ExecError::NotFound(format!("`{program}` was not found on the trusted PATH")))
    }
}

#[cfg(windows)]
fn exe_names(program: &str) -> Vec<String> {
    // Never `.bat`/`.cmd`: Windows runs those through cmd.exe, an implicit shell.
    vec![format!("{program}.exe"), format!("{program}.com"), program.to_owned()]
}

#[cfg(not(windows))]
fn exe_names(program: &str) -> Vec<String> {
    vec![program.to_owned()]
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}
