//! Stable error codes. Every refusal that crosses the MCP, CLI or UI boundary carries one of
//! these codes plus a human message; clients match on the code, never on the message.

use std::fmt;

/// A machine-readable reason for a refusal. The string forms are part of the public contract:
/// never rename one, add new ones instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// An argument is malformed or out of range.
    InvalidArgument,
    /// The path is not acceptable as a project-relative path (absolute, traversal, device, …).
    PathInvalid,
    /// The path resolves outside the project, or through a link that leaves it.
    PathOutsideProject,
    /// The path matches the sensitive-file shield.
    PathShielded,
    /// Nothing exists at the path.
    NotFound,
    /// The path exists but is of the wrong kind (a directory where a file was expected, a FIFO…).
    WrongKind,
    /// The file is larger than the tool will handle.
    TooLarge,
    /// The file looks binary and the tool reads text.
    BinaryFile,
    /// No project with that id or name is visible to this token.
    ProjectNotFound,
    /// The project exists but is disabled or its root is lost.
    ProjectUnavailable,
    /// The project's access mode forbids the operation.
    ReadOnlyProject,
    /// The project is not a git repository (or git is unavailable).
    NotAGitRepository,
    /// A git command failed.
    GitFailed,
    /// Bearer token missing, malformed, unknown, revoked or expired.
    Unauthorized,
    /// Too many requests for this token.
    RateLimited,
    /// AI access is paused (or stopped) by the user.
    Paused,
    /// The user pressed the emergency stop: every request is refused until they resume.
    Stopped,
    /// A limit (time, files, bytes) stopped the operation early.
    LimitExceeded,
    /// The request conflicts with existing state (duplicate name, nested root, …).
    Conflict,
    /// The operation is refused by policy (dangerous root, disallowed mode, …).
    Forbidden,
    /// The user denied the action; the message carries their reason when they gave one.
    Denied,
    /// The action waited for the user's approval and the approval expired unanswered.
    ApprovalExpired,
    /// The client cancelled the request (it closed the response stream or sent
    /// `notifications/cancelled`); the command the call started was stopped.
    Cancelled,
    /// The project requires full confinement for its jobs and this system cannot give it (on
    /// Linux: no namespaces, only the Landlock and seccomp fallback, or a layer missing).
    ConfinementUnavailable,
    /// Something failed inside Sluice; details are in the local log only.
    Internal,
}

impl ErrorCode {
    /// The stable wire form, e.g. `path_outside_project`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::PathInvalid => "path_invalid",
            ErrorCode::PathOutsideProject => "path_outside_project",
            ErrorCode::PathShielded => "path_shielded",
            ErrorCode::NotFound => "not_found",
            ErrorCode::WrongKind => "wrong_kind",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::BinaryFile => "binary_file",
            ErrorCode::ProjectNotFound => "project_not_found",
            ErrorCode::ProjectUnavailable => "project_unavailable",
            ErrorCode::ReadOnlyProject => "read_only_project",
            ErrorCode::NotAGitRepository => "not_a_git_repository",
            ErrorCode::GitFailed => "git_failed",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Paused => "paused",
            ErrorCode::Stopped => "stopped",
            ErrorCode::LimitExceeded => "limit_exceeded",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::Denied => "denied",
            ErrorCode::ApprovalExpired => "approval_expired",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::ConfinementUnavailable => "confinement_unavailable",
            ErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Implemented by every crate's error type so the boundaries can turn it into `{code, message}`.
pub trait Coded: std::error::Error {
    fn code(&self) -> ErrorCode;
}

/// A refusal as data: the stable code and a message meant for the reader (a model or a person).
/// The message never contains a physical path, a secret or file contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    pub code: ErrorCode,
    pub message: String,
}

impl Failure {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Failure {
        Failure { code, message: message.into() }
    }

    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(ErrorCode::InvalidArgument, message)
    }

    pub fn internal() -> Failure {
        Failure::new(ErrorCode::Internal, "internal error in Sluice; see the local log")
    }
}

impl Coded for Failure {
    fn code(&self) -> ErrorCode {
        self.code
    }
}
