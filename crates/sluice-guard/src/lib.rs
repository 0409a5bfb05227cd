//! The path sandbox and the sensitive-file shield.
//!
//! Everything that turns a string from an AI client into a file on disk goes through this crate:
//!
//! - [`RelPath`] is the only path type the runner accepts. Parsing is purely lexical and uses the
//!   same rules on every platform, so Windows attack forms are refused on Linux too.
//! - [`Root`] is an authorized folder held open by handle. Every open is relative to that handle
//!   and enforced by the operation itself (`openat2(RESOLVE_BENEATH)` on Linux, a no-follow
//!   walk elsewhere), never by checking a path string and then using it.
//! - [`Shield`] hides and refuses secrets (`.env`, keys, credential folders, `.git/`, …).
//! - [`AutoRun`] names the paths other programs run on their own (`.mcp.json`, `.vscode/tasks.json`,
//!   `.envrc`, git hooks, CI workflows, …), whose changes ask the user or are refused.
//!
//! Errors name only project-relative paths; physical paths never leave this crate.

mod autorun;
mod error;
mod globs;
mod relpath;
mod root;
mod shield;

pub use autorun::AutoRun;
pub use error::GuardError;
pub use relpath::RelPath;
pub use root::{DirEntry, DirHandle, EntryKind, EntryMeta, FileId, Root};
pub use shield::Shield;
