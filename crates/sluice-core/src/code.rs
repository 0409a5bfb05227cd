//! Stable error codes. Every refusal that crosses the MCP, CLI or UI boundary carries one of
//! these codes plus a human message; clients match on the code, never on the message.

use std::fmt;

/// Declares [`ErrorCode`] with its wire strings, [`ErrorCode::ALL`] and [`ErrorCode::as_str`]
/// from one list, so a code cannot exist without its string or be missing from `ALL`.
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $s:literal, )+) => {
        /// A machine-readable reason for a refusal. The string forms are part of the public
        /// contract (MCP results, the CLI's `--json`, the window's `IpcError.code`, exported to
        /// TypeScript as a union): never rename one, add new ones instead.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The stable wire form, e.g. `path_outside_project`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $s,)+
                }
            }
        }
    };
}

error_codes! {
    /// An argument is malformed or out of range.
    InvalidArgument = "invalid_argument",
    /// The path is not acceptable as a project-relative path (absolute, traversal, device, …).
    PathInvalid = "path_invalid",
    /// The path resolves outside the project, or through a link that leaves it.
    PathOutsideProject = "path_outside_project",
    /// The path matches the sensitive-file shield.
    PathShielded = "path_shielded",
    /// Nothing exists at the path.
    NotFound = "not_found",
    /// The path exists but is of the wrong kind (a directory where a file was expected, a FIFO…).
    WrongKind = "wrong_kind",
    /// The file is larger than the tool will handle.
    TooLarge = "too_large",
    /// The file looks binary and the tool reads text.
    BinaryFile = "binary_file",
    /// The image is larger than `read_media` decodes: the file, or the dimensions or memory its
    /// header declares (a decompression bomb is refused before anything is allocated).
    ImageTooLarge = "image_too_large",
    /// The file starts like an image but does not decode: truncated, corrupt or unsupported.
    ImageInvalid = "image_invalid",
    /// The file is text and the tool reads images and binary files (`read_file` reads text).
    TextFile = "text_file",
    /// No project with that id or name is visible to this token.
    ProjectNotFound = "project_not_found",
    /// The project exists but is disabled or its root is lost.
    ProjectUnavailable = "project_unavailable",
    /// The project's access mode forbids the operation.
    ReadOnlyProject = "read_only_project",
    /// The tool is not in the token's profile (`review`, `edit`, `agent`); the user can change
    /// the profile in Sluice.
    OutsideProfile = "outside_profile",
    /// The project is not a git repository (or git is unavailable).
    NotAGitRepository = "not_a_git_repository",
    /// A git command failed.
    GitFailed = "git_failed",
    /// Bearer token missing, malformed, unknown, revoked or expired.
    Unauthorized = "unauthorized",
    /// Too many requests for this token.
    RateLimited = "rate_limited",
    /// AI access is paused (or stopped) by the user.
    Paused = "paused",
    /// The user pressed the emergency stop: every request is refused until they resume.
    Stopped = "stopped",
    /// A limit (time, files, bytes) stopped the operation early.
    LimitExceeded = "limit_exceeded",
    /// The request conflicts with existing state (duplicate name, nested root, …).
    Conflict = "conflict",
    /// A git hook the project allows (run as a job in its sandbox) refused the commit: it exited
    /// with an error, or changed what was staged; nothing was committed.
    HookFailed = "hook_failed",
    /// Input for a job that takes none: it was not started as interactive.
    NotInteractive = "not_interactive",
    /// Input for a job that has ended, or whose input was closed; nothing was sent.
    JobEnded = "job_ended",
    /// A job's ports cannot be published here: its project's network is on (the job shares
    /// the machine's network), or jobs have no network namespace of their own.
    CannotPublish = "cannot_publish",
    /// The port is not one a running job of this project published.
    PortNotPublished = "port_not_published",
    /// The operation is refused by policy (dangerous root, disallowed mode, …).
    Forbidden = "forbidden",
    /// The user denied the action; the message carries their reason when they gave one.
    Denied = "denied",
    /// The action waited for the user's approval and the approval expired unanswered.
    ApprovalExpired = "approval_expired",
    /// The client cancelled the request (it closed the response stream or sent
    /// `notifications/cancelled`); the command the call started was stopped.
    Cancelled = "cancelled",
    /// No language server for the file's language is on the PATH Sluice runs programs from; the
    /// message says what to install.
    LanguageServerMissing = "language_server_missing",
    /// The project's language server did not answer: it failed to start, ended, timed out or
    /// refused the question; the message says which.
    LanguageServerFailed = "language_server_failed",
    /// The project requires full confinement for its jobs and this system cannot give it (on
    /// Linux: no namespaces, only the Landlock and seccomp fallback, or a layer missing).
    ConfinementUnavailable = "confinement_unavailable",
    /// The client keeps no config file Sluice can write (copy its snippet instead).
    NoConfigFile = "no_config_file",
    /// The client's config file does not parse in its format; nothing was written.
    ConfigUnparseable = "config_unparseable",
    /// Changing the client's config file would have touched more than Sluice's entry.
    ConfigUnsafeEdit = "config_unsafe_edit",
    /// The client's config file changed since the preview the user saw; nothing was written.
    ConfigChanged = "config_changed",
    /// The client has no Sluice entry to check or repair; connect it instead.
    NotConfigured = "not_configured",
    /// No such preview (already applied, or never made).
    PreviewNotFound = "preview_not_found",
    /// The preview is too old to apply; make a new one.
    PreviewExpired = "preview_expired",
    /// The `sluice` command-line binary a stdio client would run is not where it should be.
    SluiceBinaryMissing = "sluice_binary_missing",
    /// The OS keychain (or its owner-only file fallback) refused to keep or give a secret.
    SecretStore = "secret_store",
    /// Reading or writing a local file failed; the message says which and why.
    Io = "io",
    /// Something failed inside Sluice; details are in the local log only.
    Internal = "internal",
}

impl ErrorCode {
    /// The code whose wire form is `s`.
    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == s)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_one_distinct_snake_case_string_that_parses_back() {
        let mut seen = std::collections::HashSet::new();
        for &code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(!s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{s}");
            assert_eq!(ErrorCode::parse(s), Some(code));
        }
        assert_eq!(ErrorCode::parse("Not_Found"), None);
    }
}
