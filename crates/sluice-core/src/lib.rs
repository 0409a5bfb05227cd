//! Domain vocabulary shared by every Sluice crate: identifiers, project modes, stable error
//! codes, and the redaction of secret-looking text.
//!
//! This crate has no I/O and no async: it is the common language, not a layer.

pub mod autorun;
pub mod change;
pub mod code;
pub mod id;
pub mod link;
pub mod mode;
pub mod redact;
pub mod sandbox;
pub mod schema;
pub mod text;

pub use autorun::{AutoRunAction, AutoRunHit, AutoRunRule};
pub use change::{ChangeClass, ChangeTally};
pub use code::{Coded, ErrorCode, Failure};
pub use id::{ProjectId, TokenId, random_bytes};
pub use mode::{
    AccessMode, ExecMode, GitEmails, GitHooks, NetworkMode, Profile, ProjectState, SelfLimit,
};
pub use sandbox::{HostPath, SandboxSettings};

/// The red-team suite's length: `ci` iterations in the test command, `long` when
/// `SLUICE_ATTACK_LONG=1` (`cargo xtask attack --long`). For the attack tests of every crate,
/// so the switch is spelled once.
#[doc(hidden)]
pub fn attack_scale(ci: usize, long: usize) -> usize {
    if std::env::var_os("SLUICE_ATTACK_LONG").is_some_and(|v| v == "1") { long } else { ci }
}
