//! A repository's commit hooks, for a project whose user allowed them (`GitHooks::Sandbox`).
//!
//! Sluice never runs a hook itself: [`commit`](crate::commit) finds each one here and hands it
//! to the caller's [`HookRunner`], which runs it as a job in the project's sandbox (where the
//! user's credentials and the host's sockets are out of sight, and `.git/config` and the hooks
//! folder are read-only). A hook counts only where git itself would run it: in the hooks folder
//! (`core.hooksPath` from the configuration, or `.git/hooks`), a regular executable file. A
//! hooks folder outside the project cannot be seen from the sandbox, so a commit there refuses
//! rather than commit without the checks the user asked for.

use std::path::{Path, PathBuf};

use serde::Serialize;
use sluice_core::ErrorCode;

use crate::{GitError, Repo};

/// One hook to run: the program (an absolute path inside the project), its arguments and the
/// environment git gives it. It runs in the project root.
#[derive(Debug, Clone)]
pub struct HookCall {
    /// The hook's name (`pre-commit`, …).
    pub name: &'static str,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// How one hook ended, as the commit reports it.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct HookRun {
    /// The hook's name (`pre-commit`, `commit-msg`, …).
    pub hook: String,
    /// The job it ran as (its log stays in `job_logs` while the job is kept).
    pub job_id: String,
    /// Its exit code; null when it was killed or timed out.
    pub exit_code: Option<i32>,
    /// The end of its output (stdout, then stderr), secrets redacted.
    pub output: String,
}

impl HookRun {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Runs a hook as a job in the project's sandbox and waits for its end. A refusal to start it
/// (paused, stopped, no confinement) is an error with its own code; a hook that ran and failed
/// is a [`HookRun`] with a nonzero exit.
pub trait HookRunner {
    fn run(&self, call: &HookCall) -> Result<HookRun, GitError>;
}

/// The folder the repository's hooks are read from, or `None` when there is none to run.
pub(crate) fn hooks_dir(
    repo: &Repo,
    configured: Option<&str>,
) -> Result<Option<PathBuf>, GitError> {
    if repo.common_dir().is_some() {
        return Err(GitError::Hook(
            ErrorCode::Forbidden,
            "this project runs its git hooks in its sandbox, and as a worktree its repository \
             (index and hooks) lives in its parent's folder, which the sandbox cannot see; \
             nothing was done. Commit and switch in the parent project, or the user can turn this \
             project's git hooks off in Sluice."
                .into(),
        ));
    }
    let root = repo.root();
    let dir = match configured.map(str::trim).filter(|p| !p.is_empty()) {
        // `~` and `%(prefix)` expand to places outside every project.
        Some(p) if p.starts_with('~') || p.starts_with("%(") => return Err(outside()),
        Some(p) if Path::new(p).is_absolute() => PathBuf::from(p),
        // A relative hooks path is relative to the root of the working tree.
        Some(p) => root.join(p),
        None => repo.git_dir().join("hooks"),
    };
    let Ok(real) = std::fs::canonicalize(&dir) else {
        return Ok(None);
    };
    let real_root = std::fs::canonicalize(root)
        .map_err(|_| GitError::Internal("cannot resolve the project root".into()))?;
    if !real.starts_with(&real_root) {
        return Err(outside());
    }
    Ok(real.is_dir().then_some(real))
}

/// The refusal for a hooks folder the sandbox cannot see. It does not name the folder: a
/// configured `core.hooksPath` is a physical path, which never leaves the machine.
fn outside() -> GitError {
    GitError::Hook(
        ErrorCode::Forbidden,
        "this project runs its git hooks in its sandbox, and its hooks folder (core.hooksPath, \
         or .git/hooks through a link) is outside the project, where the sandbox cannot see it; \
         nothing was done. The user can point core.hooksPath inside the project or turn the \
         project's git hooks off in Sluice."
            .into(),
    )
}

/// The hook `name` in `dir` when git would run it: a regular, executable file inside the
/// project.
pub(crate) fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    let path = dir.join(name);
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return None;
        }
    }
    // The canonical path keeps a link inside the hooks folder from naming a program elsewhere.
    let real = std::fs::canonicalize(&path).ok()?;
    real.starts_with(dir).then_some(real)
}

/// Runs the hook `name` if the folder has one; a hook that fails stops the commit.
pub(crate) fn run_required(
    runner: &dyn HookRunner,
    dir: &Path,
    name: &'static str,
    args: Vec<String>,
    env: &[(String, String)],
    ran: &mut Vec<HookRun>,
) -> Result<(), GitError> {
    let Some(program) = find(dir, name) else {
        return Ok(());
    };
    let run = runner.run(&HookCall { name, program, args, env: env.to_vec() })?;
    let ok = run.succeeded();
    let report = format!(
        "the {name} hook (run as job {}) {}; nothing was committed. Its output ends:\n{}",
        run.job_id,
        match run.exit_code {
            Some(code) => format!("exited with {code}"),
            None => "was stopped before it finished".into(),
        },
        run.output
    );
    ran.push(run);
    if ok { Ok(()) } else { Err(GitError::Hook(ErrorCode::HookFailed, report)) }
}
