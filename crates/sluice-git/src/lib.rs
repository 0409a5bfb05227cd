//! Git for Sluice's MCP tools: `git_status`, `git_diff`, `git_log`, `git_show` and `git_refs`
//! read; `git_commit`, `git_branch`, `git_tag`, `git_switch` and `git_stash` write
//! ([`write`](crate::write): planned, approved, then run with compare-and-swap, and undone by
//! operation id through [`undo`](crate::undo)). Push and fetch are not offered. Linked
//! worktrees are made and removed by [`worktree`](crate::worktree), and opened only when they
//! are the ones Sluice made ([`Repo::open_worktree`]).
//!
//! git runs as the system CLI, hardened so that no repository-controlled program ever runs
//! (hooks, fsmonitor, pagers, external diff, textconv, filters, signature programs,
//! transports): see [`exec`](crate::exec) for the layers. The one exception is a project whose
//! user allowed its hooks: `git_commit` then names them to the caller, which runs each as a job
//! in the project's sandbox ([`hooks`](crate::hooks)). Every request value is validated
//! before it reaches git's command line, outputs are parsed from NUL-separated formats, files
//! matched by the caller's sensitive-file shield are dropped from every output, and commit
//! messages and patches pass through [`sluice_core::redact::redact`]. Author e-mail addresses
//! are left out unless the project's setting shows them ([`privacy`](crate::privacy)).
//!
//! Architecture invariant: no physical path leaves this crate. Outputs carry
//! repository-relative paths (the repository root is the project root) and error messages are
//! sanitized.

mod commit;
mod diff;
mod error;
mod exec;
mod files;
mod hooks;
mod log;
mod parse;
mod privacy;
mod refs;
mod repo;
mod schema;
mod show;
mod status;
mod switch;
mod undo;
mod validate;
mod worktree;
mod write;

pub use commit::{GitCommitArgs, plan_commit};
pub use diff::{GitDiffArgs, GitDiffOutput, diff};
pub use error::GitError;
pub use files::DiffFile;
pub use hooks::{HookCall, HookRun, HookRunner};
pub use log::{ChangedFile, Commit, GitLogArgs, GitLogOutput, log};
pub use parse::FileStatus;
pub use privacy::HIDDEN as EMAIL_HIDDEN;
pub use refs::{
    GitBranchArgs, GitRefsArgs, GitRefsOutput, GitTagArgs, RefEntry, RefOp, plan_branch, plan_tag,
    refs_list,
};
pub use repo::{Repo, git_version};
pub use show::{GitShowArgs, GitShowOutput, show};
pub use sluice_core::GitEmails;
pub use status::{GitStatusArgs, GitStatusOutput, StatusEntry, status};
pub use switch::{GitStashArgs, GitSwitchArgs, StashOp, plan_stash, plan_switch};
pub use undo::{GitJournal, execute, is_git_operation, plan_undo};
pub use worktree::{
    add_worktree, discard_worktree, remove_worktree, require_clean_worktree, worktree_name,
};
pub use write::{GitPlan, GitWriteOutput};
