//! What a tool call works on: a project resolved for its caller, with the modes that apply to
//! that caller and the project's open workspace, syntax index and repository.

use std::path::PathBuf;
use std::sync::Arc;

use sluice_core::{AccessMode, ExecMode, ProjectId};
use sluice_runner::Workspace;

/// A project resolved for one tool call: its modes and an open workspace.
#[derive(Clone)]
pub struct ProjectHandle {
    pub id: ProjectId,
    pub name: String,
    pub access: AccessMode,
    pub exec: ExecMode,
    /// Deleting or moving files away asks the user first.
    pub ask_deletes: bool,
    /// Creating or changing files asks the user first.
    pub ask_writes: bool,
    /// Whether the git tools show the e-mail addresses of the project's history.
    pub git_emails: sluice_core::GitEmails,
    /// Whether `git_commit` runs the repository's hooks (as jobs in the project's sandbox).
    pub git_hooks: sluice_core::GitHooks,
    /// The caller's token limited itself to read-only (`drop_privileges`): `access` and `exec`
    /// are narrowed to read-only and off whatever the project allows.
    pub self_limited: bool,
    pub workspace: Arc<Workspace>,
    /// The project's syntax index (`sluice-code`), kept while the engine runs.
    pub code: Arc<sluice_code::CodeIndex>,
    /// A worktree project's parent root: its repository opens only as that worktree.
    pub parent_root: Option<PathBuf>,
}

impl ProjectHandle {
    /// Opens the project's git repository (the project root must be the repository root).
    pub fn repo(&self) -> Result<sluice_git::Repo, sluice_git::GitError> {
        let root = self.workspace.root().path();
        match &self.parent_root {
            Some(parent) => sluice_git::Repo::open_worktree(root, parent),
            None => sluice_git::Repo::open(root),
        }
    }

    /// Whether the sensitive-file shield hides `path` (project-relative). Unparseable paths are
    /// hidden: when in doubt, keep it out.
    pub fn is_hidden(&self, path: &str) -> bool {
        sluice_guard::RelPath::parse(path).map_or(true, |p| self.workspace.shield().is_shielded(&p))
    }
}
