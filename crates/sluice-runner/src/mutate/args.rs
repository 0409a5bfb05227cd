//! The wire types of the mutation tools: `*Args` are the MCP input schemas a model reads (every
//! field documented, with its default and cap), outputs are what the tools return.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::plain_integers;

/// Arguments of `write_file`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct WriteFileArgs {
    /// File to create or replace, relative to the project root, with `/` separators.
    pub path: String,
    /// The complete new content, UTF-8 text, written exactly as given (line endings included).
    /// At most 8 MiB.
    pub content: String,
    /// Required to replace an existing file: the `blake3:<hex>` hash that read_file returned
    /// for it. When absent, the file must not exist yet (it is created).
    pub expected_hash: Option<String>,
    /// Create missing parent folders. Default false.
    pub create_parents: bool,
}

/// One replacement of `edit_file`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct TextEdit {
    /// Exact text to find (not a regex). Must occur exactly once unless `replace_all`. In a
    /// file with CRLF line endings, `\n` here also matches `\r\n`.
    pub old_text: String,
    /// Replacement text. In a CRLF file its line endings are written as CRLF.
    pub new_text: String,
    /// Replace every occurrence instead of requiring exactly one. Default false.
    pub replace_all: bool,
}

/// Arguments of `edit_file`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct EditFileArgs {
    /// File to edit, relative to the project root, with `/` separators.
    pub path: String,
    /// Replacements applied in order, each to the result of the previous one; all succeed or
    /// nothing is written. At most 100.
    pub edits: Vec<TextEdit>,
    /// Optional `blake3:<hex>` hash from read_file; the edit is refused if the file changed.
    pub expected_hash: Option<String>,
}

/// Arguments of `apply_patch`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ApplyPatchArgs {
    /// A unified diff as `git diff` prints it (new, deleted and renamed files included), or a
    /// `*** Begin Patch` / `*** End Patch` envelope with `*** Add File:`, `*** Update File:`
    /// (optionally `*** Move to:`) and `*** Delete File:` sections. At most 8 MiB and 200
    /// files. Every file is checked before anything changes; on any failure nothing changes.
    pub patch: String,
}

/// Arguments of `move_path`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct MovePathArgs {
    /// File or folder to move or rename, relative to the project root.
    pub from: String,
    /// New path, relative to the project root. Its parent folder must exist.
    pub to: String,
    /// Replace an existing file at `to`. Default false. Requires `expected_hash`.
    pub overwrite: bool,
    /// With `overwrite`: the `blake3:<hex>` hash (from read_file) of the file being replaced.
    pub expected_hash: Option<String>,
}

/// Arguments of `create_directory`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct CreateDirectoryArgs {
    /// Folder to create, relative to the project root.
    pub path: String,
    /// Also create missing parent folders. Default false.
    pub parents: bool,
}

/// Arguments of `delete_path`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct DeletePathArgs {
    /// File, link or folder to delete, relative to the project root. A link is deleted itself,
    /// never what it points to.
    pub path: String,
    /// Required to delete a folder that is not empty. Links inside are removed, never
    /// followed. At most 10000 entries and 256 MiB. Default false.
    pub recursive: bool,
}

/// Arguments of `restore`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RestoreArgs {
    /// The `operation_id` of an earlier change to undo, as returned by the tool that made it
    /// (`op_…` for a file change, also listed by list_backups; `git_…` for a git write).
    /// Refused if anything it changed has changed since.
    pub operation_id: String,
}

/// Arguments of `list_backups`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = plain_integers)]
pub struct ListBackupsArgs {
    /// Only operations that touched this file or anything below this folder.
    pub path: Option<String>,
    /// Continue after this `operation_id` (the `next_cursor` of the previous page).
    pub cursor: Option<String>,
    /// Operations per page, newest first. Default 20, max 100.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// What a change does to one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EffectKind {
    Create,
    Overwrite,
    Delete,
    Move {
        /// The destination, project-relative.
        to: String,
    },
    Mkdir,
    /// Permission bits set (restoring a checkpoint); the content stays.
    Chmod {
        /// The new permission bits, e.g. 493 (0o755).
        mode: u32,
    },
}

/// One effect of a planned change, for the approval prompt and the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct Effect {
    /// The path that changes, project-relative, after in-project links in its folders.
    pub path: String,
    #[serde(flatten)]
    pub kind: EffectKind,
    /// Bytes before (for a folder: of all files in it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_before: Option<u64>,
    /// Bytes after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_after: Option<u64>,
    /// Entries below a deleted or moved folder (recursively).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_in_dir: Option<u64>,
    /// Whether `restore` can undo this effect from Sluice's backups.
    pub restorable: bool,
}

/// The result for one path.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct FileResult {
    /// The path, project-relative.
    pub path: String,
    /// `created`, `overwritten`, `deleted`, `moved` or `created_directory`.
    pub action: String,
    /// For `moved`: the new path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_before: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_after: Option<u64>,
    /// `blake3:<hex>` of the new content, usable as the next `expected_hash`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_after: Option<String>,
}

/// A file copied to Sluice's backups before it was changed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct BackupRef {
    /// The path whose previous content was saved, project-relative.
    pub path: String,
    pub bytes: u64,
    /// `blake3:<hex>` of the saved content.
    pub hash: String,
}

/// Result of every mutation tool.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct MutationOutput {
    /// Id of this change (`op_…`); pass it to `restore` to undo it.
    pub operation_id: String,
    /// The tool that made the change.
    pub tool: String,
    /// One entry per changed path.
    pub files: Vec<FileResult>,
    /// Previous contents saved before the change.
    pub backups: Vec<BackupRef>,
}

/// One recorded operation in `list_backups`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct BackupEntry {
    /// Pass to `restore` to undo it.
    pub operation_id: String,
    pub tool: String,
    /// When it was committed, RFC 3339 UTC.
    pub created: String,
    /// What it changed.
    pub effects: Vec<Effect>,
    /// Bytes of saved previous contents.
    pub backup_bytes: u64,
}

/// Result of `list_backups`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct ListBackupsOutput {
    /// Newest first.
    pub operations: Vec<BackupEntry>,
    /// Present when more operations follow; pass as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// What `Mutations::recover` found and did.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct RecoveryReport {
    /// Interrupted operations rolled back to their state before the operation.
    pub rolled_back: Vec<String>,
    /// Paths that could not be rolled back because they changed after the interruption; they
    /// were left as they are.
    pub conflicts: Vec<String>,
}
