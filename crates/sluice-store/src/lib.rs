//! Sluice's persistent state: the only crate that speaks SQL, and the keeper of the install
//! secret (the key behind token hashes and the audit chain).
//!
//! One SQLite file, `<data_dir>/sluice.db`, holds projects, client tokens (as keyed hashes),
//! the tamper-evident audit log, allow rules and a small key/value table for engine state. The
//! CLI and a running engine open the same file concurrently: WAL mode and a busy timeout make
//! that safe, and [`Store::data_version`] tells the engine when the other side committed.
//!
//! Architecture invariants kept here:
//! - No plaintext token, file content, command output or secret is ever written to the database.
//! - The audit log is append-only through this API; every entry is chained with a keyed MAC, so
//!   edits, deletions, reordering and forged rows are detected by [`Store::audit_verify`].
//! - Projects, allow rules, tokens, the stop, the pause and the audit head are sealed under the
//!   install secret (module `seal`): state edited without it is read as less privilege, never more,
//!   and listed by [`Store::integrity`].
//! - A fresh install secret is never created while tokens or audit entries exist: that would
//!   silently orphan them (see [`secret`]).

mod approvals;
mod audit;
pub mod connections;
mod credential;
mod db;
mod error;
pub mod fsperm;
mod hex;
mod integrity;
mod jobs;
mod kv;
mod oauth;
mod projects;
mod rules;
mod schema;
mod seal;
mod sealed_table;
pub mod secret;
mod tasks;
mod tokens;
mod worktrees;

pub use approvals::{ApprovalRecord, ApprovalState};
pub use audit::{
    ActorKind, AuditEntry, AuditFilter, AuditRecord, ChainBreak, ChainReport, Outcome,
};
pub use db::{BACKUPS_KEPT, DB_FILE, Store};
/// The schema version this build migrates a database to.
pub const SCHEMA_VERSION: usize = schema::LATEST;
pub use error::StoreError;
pub use jobs::{JOBS_KEPT, JobRow};
pub use oauth::{
    CodeRedemption, MAX_OAUTH_CLIENTS, NewOAuthRequest, OAuthClient, OAuthDecision, OAuthGrant,
    OAuthRequest, REACH_KEY, RefreshRotation,
};
pub use projects::{ModeChange, NewProject, Project, RootFingerprint};
pub use rules::{AllowRule, Channel, RuleOrigin};
pub use seal::{FindingKind, IntegrityFinding};
pub use secret::{
    InstallSecret, Keychain, LoadedSecret, SecretContext, SecretKind, SecretPreference,
    SecretSource, hashes_equal, load_or_create, params_hash, token_hash,
};
pub use tasks::{TaskRow, TaskStatus};
pub use tokens::{NewToken, TokenRecord};

/// Milliseconds since the Unix epoch, the one time unit of every stored timestamp.
///
/// A clock before 1970 yields 0 rather than a panic: timestamps are informational, never used
/// for security decisions except token expiry, where an early clock errs on "not yet expired".
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
