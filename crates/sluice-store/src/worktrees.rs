//! Projects that are linked worktrees of another project: authorized in one sealed write that
//! copies the parent's modes, lists, policy and sandbox, so a worktree never grants more than
//! the project it was made from.

use std::path::Path;

use rusqlite::params;
use sluice_core::ProjectId;

use crate::projects::{
    fingerprint_columns, project_conflict, project_not_found, root_text, validate_name,
};
use crate::seal::{Before, PROJECTS, tampered_error};
use crate::{Project, RootFingerprint, Store, StoreError, now_ms};

impl Store {
    /// Authorizes `root` as a worktree of `parent`, with the parent's access and execution
    /// modes, shield and auto-run lists, policy, network, sandbox and git e-mail setting, read
    /// in the same transaction. Refused when the parent's seal does not verify, when the parent
    /// is itself a worktree, or before schema 19.
    pub fn insert_worktree_project(
        &self,
        parent: &ProjectId,
        name: &str,
        root: &Path,
        fingerprint: Option<RootFingerprint>,
    ) -> Result<Project, StoreError> {
        if self.schema < crate::schema::WORKTREE_SCHEMA {
            return Err(StoreError::Invalid("this database predates worktree projects".into()));
        }
        let name = validate_name(name)?;
        let root = root_text(root)?;
        let id = ProjectId::generate();
        let (dev, ino) = fingerprint_columns(fingerprint);
        let key = self.sealing()?;
        self.write_sealed(&PROJECTS, id.as_str(), Before::Any, |tx| {
            let nested: Option<Option<String>> = tx
                .query_row(
                    "SELECT worktree_of FROM projects WHERE id = ?1",
                    [parent.as_str()],
                    |r| r.get(0),
                )
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })?;
            match nested {
                None => return Err(project_not_found(parent.as_str())),
                Some(Some(_)) => {
                    return Err(StoreError::Invalid(
                        "a worktree is made from the main project, not from another worktree"
                            .into(),
                    ));
                }
                Some(None) => {}
            }
            if let Some(key) = key
                && !PROJECTS.verify(tx, key, &parent.as_str())?
            {
                return Err(tampered_error(&PROJECTS, parent.as_str()));
            }
            let now = now_ms();
            tx.execute(
                "INSERT INTO projects (id, name, root, access, exec, state, shield_patterns,
                                       root_dev, root_ino, created_ms, updated_ms, ask_deletes,
                                       ask_writes, network_mode, autorun_rules, hide_paths,
                                       unhide_paths, grants, sockets, require_full, git_emails,
                                       worktree_of, git_hooks)
                 SELECT ?1, ?2, ?3, access, exec, 'available', shield_patterns, ?4, ?5, ?6, ?6,
                        ask_deletes, ask_writes, network_mode, autorun_rules, hide_paths,
                        unhide_paths, grants, sockets, require_full, git_emails, id, git_hooks
                 FROM projects WHERE id = ?7",
                params![id.as_str(), name, root, dev, ino, now, parent.as_str()],
            )
            .map_err(|e| project_conflict(e, name))?;
            Ok(())
        })?;
        self.project(&id)?.ok_or_else(|| project_not_found(id.as_str()))
    }
}
