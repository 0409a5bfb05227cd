//! The crate's one error type. Messages never contain physical paths: the engine forwards them
//! to assistants as they are.

use sluice_core::{Coded, ErrorCode, Failure};

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The command is refused by the project's execution mode or the command policy.
    #[error("{0}")]
    Refused(String),
    /// The command is malformed (empty program, NUL in an argument, bad working directory, …).
    #[error("{0}")]
    Invalid(String),
    /// The program is not on the trusted PATH (or resolves into a project).
    #[error("{0}")]
    NotFound(String),
    /// A job limit (concurrency, queue, start rate) was hit.
    #[error("{0}")]
    Limit(String),
    /// Starts are refused after an emergency stop until `resume`.
    #[error("execution is stopped (emergency stop); the user must resume it")]
    Stopped,
    /// No known toolchain was found for `run_tests` / `run_build`.
    #[error("{0}")]
    NoToolchain(String),
    /// Input for a job that takes none.
    #[error("{0}")]
    NotInteractive(String),
    /// Input for a job that has ended (or whose input was closed).
    #[error("{0}")]
    Ended(String),
    /// One write carries more than the limit.
    #[error("{0}")]
    InputTooLarge(String),
    /// More input in one second than the limit.
    #[error("{0}")]
    InputRate(String),
    /// The job takes no input right now: it is still queued, or its program stopped reading
    /// (then part of the write may have been sent; the message says how much).
    #[error("{0}")]
    InputNotTaken(String),
    /// The job's ports cannot be published in this sandbox (network on, no namespaces).
    #[error("{0}")]
    CannotPublish(String),
    /// The job publishes no such port (or has ended).
    #[error("{0}")]
    NotPublished(String),
    /// No job with that id.
    #[error("no job with id {0}")]
    NoSuchJob(String),
    /// The confinement the caller requires cannot be enforced on this system.
    #[error("{0}")]
    Unconfinable(String),
    /// The project requires every layer of confinement and this system lacks one.
    #[error("{0}")]
    ConfinementUnavailable(String),
    /// The operating system refused (spawn, pipes, signals); details are in the local log.
    #[error("{context}: {source}")]
    Os {
        context: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl ExecError {
    pub(crate) fn os(context: &'static str, source: std::io::Error) -> ExecError {
        ExecError::Os { context, source }
    }
}

impl Coded for ExecError {
    fn code(&self) -> ErrorCode {
        match self {
            ExecError::Refused(_) | ExecError::Unconfinable(_) => ErrorCode::Forbidden,
            ExecError::Invalid(_) => ErrorCode::InvalidArgument,
            ExecError::NotFound(_) | ExecError::NoSuchJob(_) | ExecError::NoToolchain(_) => {
                ErrorCode::NotFound
            }
            ExecError::Limit(_) => ErrorCode::LimitExceeded,
            ExecError::NotInteractive(_) => ErrorCode::NotInteractive,
            ExecError::Ended(_) => ErrorCode::JobEnded,
            ExecError::CannotPublish(_) => ErrorCode::CannotPublish,
            ExecError::NotPublished(_) => ErrorCode::PortNotPublished,
            ExecError::InputTooLarge(_) => ErrorCode::TooLarge,
            ExecError::InputRate(_) => ErrorCode::RateLimited,
            ExecError::InputNotTaken(_) => ErrorCode::Conflict,
            ExecError::ConfinementUnavailable(_) => ErrorCode::ConfinementUnavailable,
            ExecError::Stopped => ErrorCode::Stopped,
            ExecError::Os { .. } => ErrorCode::Internal,
        }
    }
}

impl From<ExecError> for Failure {
    fn from(e: ExecError) -> Failure {
        Failure::new(e.code(), e.to_string())
    }
}
