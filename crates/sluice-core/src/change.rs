//! What a change to files does, counted from its structured effects when it is planned, and kept
//! with its approval: the one source from which the window's card, the tray, the CLI and the
//! audit log all say how risky it is. Never read back from display text.

use serde::{Deserialize, Serialize};

/// How many of each kind of effect a planned change has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeTally {
    pub deleted_files: u64,
    pub deleted_folders: u64,
    /// Entries below the deleted folders, recursively.
    pub deleted_entries: u64,
    /// Files and folders moved to another path.
    pub moved: u64,
    pub overwritten: u64,
    pub created_files: u64,
    pub created_folders: u64,
    /// Effects that remove or replace something: deletes, moves, overwrites.
    pub destructive: u64,
    /// Of those, how many `restore` cannot undo.
    pub not_restorable: u64,
}

/// A change's risk in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeClass {
    /// A few words: "deletes 3 files (restorable)", "creates 1 file".
    pub class: String,
    /// One line: why it is in that class.
    pub why: String,
}

/// "3 files", "1 file".
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl ChangeTally {
    /// What the change destroys first, with whether that can be restored, then what it only
    /// adds; and why that is its class.
    pub fn class(&self) -> ChangeClass {
        let mut deleted = Vec::new();
        if self.deleted_files > 0 {
            deleted.push(count(self.deleted_files, "file", "files"));
        }
        if self.deleted_folders > 0 {
            deleted.push(format!(
                "{} ({})",
                count(self.deleted_folders, "folder", "folders"),
                count(self.deleted_entries, "entry", "entries")
            ));
        }
        let mut destroys = Vec::new();
        if !deleted.is_empty() {
            destroys.push(format!("deletes {}", deleted.join(" and ")));
        }
        if self.moved > 0 {
            destroys.push(format!("moves {}", count(self.moved, "item", "items")));
        }
        if self.overwritten > 0 {
            destroys.push(format!("overwrites {}", count(self.overwritten, "file", "files")));
        }
        let mut class = destroys.join(", ");
        if self.destructive > 0 {
            class.push_str(&match self.not_restorable {
                0 => " (restorable)".to_owned(),
                n if n == self.destructive => " (not restorable)".to_owned(),
                n => format!(" ({n} of {} not restorable)", self.destructive),
            });
        }
        let mut created = Vec::new();
        if self.created_files > 0 {
            created.push(count(self.created_files, "file", "files"));
        }
        if self.created_folders > 0 {
            created.push(count(self.created_folders, "folder", "folders"));
        }
        if !created.is_empty() {
            if !class.is_empty() {
                class.push_str("; ");
            }
            class.push_str(&format!("creates {}", created.join(" and ")));
        }
        let undo = match self.not_restorable {
            0 => "Sluice backs them up first, so this can be restored",
            _ => "part of this cannot be restored from Sluice's backups",
        };
        let why = if self.deleted_files + self.deleted_folders + self.moved > 0 {
            format!("files leave their place in the project; {undo}")
        } else if self.overwritten > 0 {
            format!("existing contents are replaced; {undo}")
        } else {
            "only adds new files and folders; nothing that exists changes".to_owned()
        };
        ChangeClass { class, why }
    }
}
