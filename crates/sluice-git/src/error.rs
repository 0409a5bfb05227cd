//! The crate's one error type. Every message is written for the model reading the tool result:
//! short, actionable, and never holding a physical path, a secret or file contents.

use sluice_core::{Coded, ErrorCode};

/// Why a git tool refused or failed. The string payload is the sanitized message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// The project root is not a repository root Sluice will use (or git itself is unusable).
    #[error("{0}")]
    NotAGitRepository(String),
    /// A revision, path or number in the request is not acceptable.
    #[error("{0}")]
    InvalidArgument(String),
    /// A requested path matches the caller's sensitive-file shield.
    #[error("{0}")]
    PathShielded(String),
    /// git ran and reported an error (message sanitized: no absolute paths).
    #[error("{0}")]
    GitFailed(String),
    /// The repository's state does not allow the write (a dirty tree, a detached HEAD, nothing
    /// to commit, a ref that moved or already exists); nothing was changed.
    #[error("{0}")]
    Refused(String),
    /// Refused by policy whatever the state (a signature Sluice will not make).
    #[error("{0}")]
    Forbidden(String),
    /// A time or size limit stopped git.
    #[error("{0}")]
    LimitExceeded(String),
    /// A hook the project allows refused the commit ([`ErrorCode::HookFailed`]), or could not
    /// run (the runner's own code: paused, stopped, no confinement, …); nothing was committed.
    #[error("{1}")]
    Hook(ErrorCode, String),
    /// Sluice could not run git at all (spawn or pipe failure); details stay local.
    #[error("{0}")]
    Internal(String),
}

impl Coded for GitError {
    fn code(&self) -> ErrorCode {
        match self {
            GitError::NotAGitRepository(_) => ErrorCode::NotAGitRepository,
            GitError::InvalidArgument(_) => ErrorCode::InvalidArgument,
            GitError::PathShielded(_) => ErrorCode::PathShielded,
            GitError::GitFailed(_) => ErrorCode::GitFailed,
            GitError::Refused(_) => ErrorCode::Conflict,
            GitError::Forbidden(_) => ErrorCode::Forbidden,
            GitError::LimitExceeded(_) => ErrorCode::LimitExceeded,
            GitError::Hook(code, _) => *code,
            GitError::Internal(_) => ErrorCode::Internal,
        }
    }
}

impl GitError {
    pub(crate) fn invalid(message: impl Into<String>) -> GitError {
        GitError::InvalidArgument(message.into())
    }
}
