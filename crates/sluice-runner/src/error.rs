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
        "`{path}` looks like a binary file (it contains NUL bytes); read_file returns text only"
    )]
    BinaryFile { path: String },
    /// An I/O failure while reading; the physical path is never included.
    #[error("could not read `{path}`: {kind}")]
    Io { path: String, kind: std::io::ErrorKind },
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
            RunnerError::Io { .. } => ErrorCode::Internal,
        }
    }
}
