//! The file tools: the read-only `list_directory`, `stat`, `read_file`, `read_media`,
//! `find_files` and `search_text`, and the mutations (`write_file`, `edit_file`, `apply_patch`, `move_path`,
//! `create_directory`, `delete_path`, `restore`, `list_backups`) as a plan/commit API in
//! [`Mutations`].
//!
//! Each tool is a plain function over a [`Workspace`] (an authorized root plus its shield),
//! taking a typed `*Args` and returning a typed `*Output`. The MCP crate exposes them as tools;
//! the argument structs double as the JSON Schema a model reads, so every field is documented
//! with its unit, default and cap.
//!
//! Architecture invariants:
//! - Physical paths never leave this crate: outputs and errors carry project-relative paths.
//! - Nothing is reached by a path string: files are opened through [`sluice_guard::Root`] and
//!   walks go directory handle by directory handle without following links.
//! - The shield is applied to the requested and the resolved path of every access, and walks
//!   never show or search a shielded entry.
//! - Every plan names the auto-run paths it touches ([`Plan::autorun`]) — requested and
//!   resolved paths, both ends of a move, everything inside a moved or deleted folder — and a
//!   plan touching a refused one is never made.

mod checkpoint;
mod error;
mod find;
mod list;
mod media;
mod model;
mod mutate;
mod read;
mod search;
mod sources;
mod stat;
mod walk;

use std::path::Path;

use sluice_core::AutoRunRule;
pub use sluice_guard::RelPath;
use sluice_guard::{AutoRun, Root, Shield};

pub use checkpoint::{
    CheckpointInfo, CheckpointLimits, CreateCheckpointArgs, ListCheckpointsOutput,
    RestoreCheckpointArgs,
};
pub use error::RunnerError;
pub use find::{FindFilesArgs, FindFilesOutput, FoundEntry, find_files};
pub use list::{ListDirectoryArgs, ListDirectoryOutput, ListedEntry, list_directory};
pub use media::{
    DEFAULT_MAX_DIMENSION, MAX_DECODE_ALLOC, MAX_IMAGE_FILE_BYTES, MAX_IMAGE_SIDE, MAX_RANGE_BYTES,
    Media, MediaKind, ReadMediaArgs, ReadMediaOutput, decode_dimensions, read_media,
};
pub use model::EntryKind;
pub use mutate::{
    ApplyPatchArgs, BackupEntry, BackupLimits, BackupRef, CreateDirectoryArgs, DeletePathArgs,
    EditFileArgs, Effect, EffectKind, FileResult, ListBackupsArgs, ListBackupsOutput,
    MAX_PATCH_BYTES, MAX_PATCH_FILES, MAX_TREE_BYTES, MAX_TREE_ENTRIES, MAX_WRITE_BYTES,
    MIN_FREE_BYTES, MovePathArgs, MutationOutput, Mutations, Plan, RecoveryReport, RestoreArgs,
    TextEdit, WriteFileArgs,
};
pub use read::{ReadFileArgs, ReadFileOutput, read_file};
pub use search::{CaseMode, SearchMatch, SearchTextArgs, SearchTextOutput, search_text};
pub use sources::{Source, SourcesReport, Stamp, each_source, open_source};
pub use stat::{StatArgs, StatOutput, stat};

/// `apply_patch`'s parser and applier, for the fuzz targets (`crates/sluice-fuzz`), which hold
/// them to their properties on any text. Not an API: the tools reach them only through
/// [`Mutations::plan_apply_patch`].
#[doc(hidden)]
pub mod patch {
    pub use crate::mutate::patch::{FileOp, FilePatch, Hunk, Line, apply, new_file_content, parse};
}

/// The most content `read_file` returns in one call, in bytes (the cap on `max_bytes`).
pub const READ_FILE_HARD_MAX_BYTES: u64 = read::MAX_BYTES;
/// The cap on `search_text`'s `max_results`.
pub const SEARCH_MAX_RESULTS_CAP: u64 = search::MAX_RESULTS as u64;

/// One authorized project as the tools see it: its root, held open, its shield and its
/// auto-run list.
#[derive(Debug)]
pub struct Workspace {
    root: Root,
    shield: Shield,
    autorun: AutoRun,
}

impl Workspace {
    /// Opens `root` and compiles `shield_patterns` as given (see
    /// [`Shield::default_patterns`] for the defaults a new project starts with), with the
    /// default auto-run list.
    pub fn open(root: &Path, shield_patterns: &[String]) -> Result<Workspace, RunnerError> {
        Workspace::open_with(root, shield_patterns, &AutoRun::default_rules())
    }

    /// [`Workspace::open`] with the project's own auto-run list (see
    /// [`AutoRun::default_rules`] for the defaults).
    pub fn open_with(
        root: &Path,
        shield_patterns: &[String],
        autorun: &[AutoRunRule],
    ) -> Result<Workspace, RunnerError> {
        Ok(Workspace {
            root: Root::open(root)?,
            shield: Shield::new(shield_patterns)?,
            autorun: AutoRun::new(autorun)?,
        })
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    pub fn shield(&self) -> &Shield {
        &self.shield
    }

    pub fn autorun(&self) -> &AutoRun {
        &self.autorun
    }

    /// Parses a client path and refuses it early if the shield covers it, before any
    /// filesystem access (so a refusal says nothing about existence).
    pub(crate) fn request(&self, input: Option<&str>) -> Result<RelPath, RunnerError> {
        let rel = RelPath::parse(input.unwrap_or(""))?;
        self.shield.check(&rel)?;
        Ok(rel)
    }

    /// The second shield check, on where the path actually led. Reported under the requested
    /// name so a link's target is not revealed.
    pub(crate) fn check_resolved(
        &self,
        requested: &RelPath,
        resolved: &RelPath,
    ) -> Result<(), RunnerError> {
        if self.shield.is_shielded(resolved) {
            return Err(sluice_guard::GuardError::Shielded { path: requested.to_string() }.into());
        }
        Ok(())
    }
}
