//! Domain vocabulary shared by every Sluice crate: identifiers, project modes, stable error
//! codes, and the redaction of secret-looking text.
//!
//! This crate has no I/O and no async: it is the common language, not a layer.

pub mod autorun;
pub mod change;
pub mod code;
pub mod id;
pub mod mode;
pub mod redact;
pub mod sandbox;
pub mod schema;
pub mod text;

pub use autorun::{AutoRunAction, AutoRunHit, AutoRunRule};
pub use change::{ChangeClass, ChangeTally};
pub use code::{Coded, ErrorCode, Failure};
pub use id::{ProjectId, TokenId, random_bytes};
pub use mode::{AccessMode, ExecMode, NetworkMode, ProjectState, SelfLimit};
pub use sandbox::{HostPath, SandboxSettings};
