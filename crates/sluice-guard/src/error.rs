//! The crate's single error type. Every variant carries a stable [`ErrorCode`] and a message
//! written for the model: it names only project-relative paths and says how to recover.

use sluice_core::{Coded, ErrorCode};

/// Why the guard refused or failed. Paths in variants are project-relative display strings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// The input is not an acceptable project-relative path.
    #[error("invalid path: {reason}")]
    InvalidPath { reason: String },
    /// The path resolves outside the project (a link that leaves it, or an escape attempt).
    /// Deliberately the same whether or not the target exists.
    #[error(
        "`{path}` leads outside the project (through a symbolic link or junction); only files \
         inside the project are accessible"
    )]
    OutsideProject { path: String },
    /// Nothing exists at the path.
    #[error("nothing exists at `{path}`; use list_directory or find_files to see what exists")]
    NotFound { path: String },
    /// The path exists but is of another kind.
    #[error("`{path}` is {found}, not {expected}")]
    WrongKind { path: String, expected: &'static str, found: &'static str },
    /// The path is protected by the sensitive-file shield.
    #[error(
        "`{path}` is protected by the sensitive-file shield (secrets, keys, credentials, git \
         internals); it cannot be read, listed or searched unless the user changes the \
         project's shield list"
    )]
    Shielded { path: String },
    /// Too many symbolic links, or a link loop.
    #[error("`{path}` goes through too many symbolic links (a link loop?)")]
    LinkLoop { path: String },
    /// The operating system refused access.
    #[error("permission denied by the operating system for `{path}`")]
    PermissionDenied { path: String },
    /// A shield or filter pattern is not a valid glob.
    #[error("invalid glob pattern {pattern:?}: {reason}")]
    BadPattern { pattern: String, reason: String },
    /// The project folder itself cannot be used (missing, not a folder, moved away).
    #[error("the project folder is unavailable: {reason}")]
    RootUnavailable { reason: String },
    /// Any other I/O failure; the kind is safe to show, the physical path is never included.
    #[error("I/O error on `{path}`: {kind}")]
    Io { path: String, kind: std::io::ErrorKind },
}

impl GuardError {
    /// The same refusal, reported for `rel` (the path the caller asked about) instead of the
    /// intermediate path where it was detected.
    pub(crate) fn for_path(self, rel: &crate::RelPath) -> GuardError {
        let path = rel.to_string();
        match self {
            GuardError::OutsideProject { .. } => GuardError::OutsideProject { path },
            GuardError::NotFound { .. } => GuardError::NotFound { path },
            GuardError::LinkLoop { .. } => GuardError::LinkLoop { path },
            GuardError::PermissionDenied { .. } => GuardError::PermissionDenied { path },
            GuardError::Io { kind, .. } => GuardError::Io { path, kind },
            GuardError::WrongKind { .. } => GuardError::NotFound { path },
            other => other,
        }
    }

    pub(crate) fn invalid(reason: impl Into<String>) -> GuardError {
        GuardError::InvalidPath { reason: reason.into() }
    }
}

impl Coded for GuardError {
    fn code(&self) -> ErrorCode {
        match self {
            GuardError::InvalidPath { .. } | GuardError::LinkLoop { .. } => ErrorCode::PathInvalid,
            GuardError::OutsideProject { .. } => ErrorCode::PathOutsideProject,
            GuardError::NotFound { .. } => ErrorCode::NotFound,
            GuardError::WrongKind { .. } => ErrorCode::WrongKind,
            GuardError::Shielded { .. } => ErrorCode::PathShielded,
            GuardError::PermissionDenied { .. } => ErrorCode::Forbidden,
            GuardError::BadPattern { .. } => ErrorCode::InvalidArgument,
            GuardError::RootUnavailable { .. } => ErrorCode::ProjectUnavailable,
            GuardError::Io { .. } => ErrorCode::Internal,
        }
    }
}
