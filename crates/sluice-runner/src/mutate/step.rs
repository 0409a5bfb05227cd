//! What a plan is made of, as the journal records it: [`Step`]s, each with the exact [`State`]
//! it expects to find at its path (a file by its identity and content hash, a folder, a link,
//! or nothing). `action` executes and undoes them; `store` keeps them in journal records.

use serde::{Deserialize, Serialize};
use sluice_guard::FileId;

/// A file's identity on disk, serializable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Ident {
    pub dev: u64,
    pub ino: u64,
}

impl From<FileId> for Ident {
    fn from(id: FileId) -> Ident {
        Ident { dev: id.dev, ino: id.ino }
    }
}

/// What is at a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum State {
    Absent,
    File { id: Ident, size: u64, hash: String, mode: u32 },
    Dir { id: Ident, mode: u32 },
    Link { id: Ident, target: String },
}

impl State {
    /// The same thing for undo purposes: content for files, target for links, kind for dirs.
    pub(crate) fn same_content(&self, other: &State) -> bool {
        match (self, other) {
            (State::Absent, State::Absent) | (State::Dir { .. }, State::Dir { .. }) => true,
            (State::File { hash: a, .. }, State::File { hash: b, .. }) => a == b,
            (State::Link { target: a, .. }, State::Link { target: b, .. }) => a == b,
            _ => false,
        }
    }

    pub fn size(&self) -> Option<u64> {
        match self {
            State::File { size, .. } => Some(*size),
            _ => None,
        }
    }
}

/// One primitive change. Paths are resolved project-relative paths; `parent` is the identity of
/// the containing folder at planning time, `None` when an earlier step of the plan creates it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Step {
    /// Create or replace a regular file with new content (temp file + rename).
    Write {
        path: String,
        parent: Option<Ident>,
        before: State,
        new_hash: String,
        new_size: u64,
        mode: u32,
    },
    Mkdir {
        path: String,
        parent: Option<Ident>,
        mode: u32,
    },
    /// Remove a file, a link (itself) or an empty folder.
    Remove {
        path: String,
        parent: Option<Ident>,
        before: State,
    },
    /// Re-create a link Sluice removed (restore only).
    Link {
        path: String,
        parent: Option<Ident>,
        target: String,
    },
    Rename {
        from: String,
        to: String,
        from_parent: Option<Ident>,
        to_parent: Option<Ident>,
        before_from: State,
        before_to: State,
    },
    /// Set the permission bits of a file or folder, through a handle on the entry itself
    /// (restoring a checkpoint). The content is neither read nor written.
    Chmod {
        path: String,
        parent: Option<Ident>,
        before: State,
        mode: u32,
    },
}

impl Step {
    /// Every path the step changes.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Step::Write { path, .. }
            | Step::Mkdir { path, .. }
            | Step::Remove { path, .. }
            | Step::Link { path, .. }
            | Step::Chmod { path, .. } => vec![path],
            Step::Rename { from, to, .. } => vec![from, to],
        }
    }
}

/// The content hash steps and blobs are named by (BLAKE3, hex).
pub(crate) fn hex_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}
