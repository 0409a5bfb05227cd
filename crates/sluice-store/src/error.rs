//! The crate's one error type. Every variant maps to a stable [`ErrorCode`]; database and I/O
//! internals map to `Internal`, whose detail is meant for the local log, never for a client.

use sluice_core::{Coded, ErrorCode, Failure};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The change would break a uniqueness rule (duplicate name, root, label, …).
    #[error("{0}")]
    Conflict(String),
    /// No row matched the id, name or label.
    #[error("{0}")]
    NotFound(String),
    /// The change is refused by a rule (mode combination, insecure secret file, …).
    #[error("{0}")]
    Forbidden(String),
    /// An argument is malformed.
    #[error("{0}")]
    Invalid(String),
    /// The database was written by a newer Sluice; opening it could corrupt it.
    #[error(
        "the database schema is version {found}, newer than this Sluice understands \
         (version {known}); update Sluice"
    )]
    SchemaTooNew { found: usize, known: usize },
    /// The install secret cannot be loaded or created; the message says why and what to do.
    #[error("{0}")]
    Secret(String),
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
    #[error("database migration failed: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A stored value could not be decoded (hand-edited or corrupted database).
    #[error("corrupt value in the database: {0}")]
    Corrupt(String),
}

impl StoreError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> StoreError {
        StoreError::Io { context: context.into(), source }
    }

    /// The error as boundary data: internal details are replaced by a generic message so they
    /// reach the local log only.
    pub fn to_failure(&self) -> Failure {
        match self.code() {
            ErrorCode::Internal => Failure::internal(),
            code => Failure::new(code, self.to_string()),
        }
    }
}

impl Coded for StoreError {
    fn code(&self) -> ErrorCode {
        match self {
            StoreError::Conflict(_) => ErrorCode::Conflict,
            StoreError::NotFound(_) => ErrorCode::NotFound,
            StoreError::Forbidden(_) => ErrorCode::Forbidden,
            StoreError::Invalid(_) => ErrorCode::InvalidArgument,
            StoreError::SchemaTooNew { .. } => ErrorCode::Conflict,
            StoreError::Secret(_) => ErrorCode::Internal,
            StoreError::Database(_)
            | StoreError::Migration(_)
            | StoreError::Io { .. }
            | StoreError::Corrupt(_) => ErrorCode::Internal,
        }
    }
}

/// The constraint name SQLite reports for a failed UNIQUE check (`table.column`), if any.
pub(crate) fn unique_violation(err: &rusqlite::Error) -> Option<&str> {
    match err {
        rusqlite::Error::SqliteFailure(e, Some(msg))
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                || e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
        {
            msg.strip_prefix("UNIQUE constraint failed: ")
        }
        _ => None,
    }
}

/// Whether the error is a failed FOREIGN KEY check.
pub(crate) fn is_foreign_key_violation(err: &rusqlite::Error) -> bool {
    matches!(err, rusqlite::Error::SqliteFailure(e, _)
        if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY)
}
