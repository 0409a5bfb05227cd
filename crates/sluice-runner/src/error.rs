//! [`RunnerError`]: every refusal of the file tools, with a stable code and a message that names
//! only project-relative paths and tells the model how to recover.

use sluice_core::{Coded, ErrorCode};
use sluice_guard::GuardError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum RunnerError {
    /// A path or shield refusal from the sandbox.
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// A malformed or out-of-range argument.
    #[error("{0}")]
    InvalidArgument(String),
    /// The file is larger than the tool reads at once.
    #[error("{0}")]
    TooLarge(String),
    /// The file looks binary.
    #[error(
        "`{path}` looks like a binary file (it contains NUL bytes); read_file returns text only. \
         Use read_media: it returns an image (PNG, JPEG, GIF, WebP) as a picture and any other \
         binary file as a byte range"
    )]
    BinaryFile { path: String },
    /// The file is text; `read_media` reads images and binary files.
    #[error(
        "`{path}` is a text file (SVG included); read it with read_file, which returns text \
         with secrets redacted. read_media returns images and binary files"
    )]
    TextFile { path: String },
    /// The image is over a bound of `read_media` (file size, dimensions, decoder memory).
    #[error("{0}")]
    ImageTooLarge(String),
    /// The file starts like an image but does not decode.
    #[error(
        "`{path}` starts like an image but could not be decoded ({reason}); it may be truncated \
         or corrupt. Its raw bytes can be read with read_media's offset and length"
    )]
    ImageInvalid { path: String, reason: String },
    /// An I/O failure while reading; the physical path is never included.
    #[error("could not read `{path}`: {kind}")]
    Io { path: String, kind: std::io::ErrorKind },
    /// The target is not in the state the change expects (changed since it was read or
    /// planned, exists already, …). Nothing was changed.
    #[error("{0}")]
    Conflict(String),
    /// A count or size limit of the mutation tools.
    #[error("{0}")]
    LimitExceeded(String),
    /// Refused by policy (Sluice's own data folder).
    #[error("{0}")]
    Forbidden(String),
    /// Something the request names does not exist (a backup, a parent folder).
    #[error("{0}")]
    Missing(String),
    /// An I/O failure while changing a file; whatever was done was rolled back.
    #[error("could not write `{path}`: {kind}; nothing was changed")]
    WriteFailed { path: String, kind: std::io::ErrorKind },
    /// Sluice's own backup or journal folder failed; the project was not changed.
    #[error(
        "Sluice could not update its backup or journal folder ({0}); the project was not \
         changed. See the local log"
    )]
    State(std::io::ErrorKind),
}

impl RunnerError {
    pub(crate) fn invalid(message: impl Into<String>) -> RunnerError {
        RunnerError::InvalidArgument(message.into())
    }
}

impl Coded for RunnerError {
    fn code(&self) -> ErrorCode {
        match self {
            RunnerError::Guard(e) => e.code(),
            RunnerError::InvalidArgument(_) => ErrorCode::InvalidArgument,
            RunnerError::TooLarge(_) => ErrorCode::TooLarge,
            RunnerError::BinaryFile { .. } => ErrorCode::BinaryFile,
            RunnerError::TextFile { .. } => ErrorCode::TextFile,
            RunnerError::ImageTooLarge(_) => ErrorCode::ImageTooLarge,
            RunnerError::ImageInvalid { .. } => ErrorCode::ImageInvalid,
            RunnerError::Io { .. } => ErrorCode::Internal,
            RunnerError::Conflict(_) => ErrorCode::Conflict,
            RunnerError::LimitExceeded(_) => ErrorCode::LimitExceeded,
            RunnerError::Forbidden(_) => ErrorCode::Forbidden,
            RunnerError::Missing(_) => ErrorCode::NotFound,
            RunnerError::WriteFailed { .. } | RunnerError::State(_) => ErrorCode::Internal,
        }
    }
}
