//! The state's integrity as a whole ([`crate::seal`] seals each row and value): the first
//! sealing after the upgrade ([`Store::attach_secret`]), what does not verify
//! ([`Store::integrity`]: rows and values, the audit head, reach from the web), and the user's
//! reseal ([`Store::reseal`]).

use std::sync::atomic::Ordering;

use rusqlite::{Connection, OptionalExtension};

use crate::seal::{
    FindingKind, IntegrityFinding, MARKER_KEY, PAUSED_KEY, PENDING, PROJECTS, RULES, SEALED,
    STOPPED_KEY, TOKENS, kv_get_sealed, kv_put_sealed,
};
use crate::secret::Marks;
use crate::{InstallSecret, Store, StoreError};

impl Store {
    /// Gives the store the install secret's seal key, and on the first start after the schema
    /// 14 migration seals the state as it is and records in the secret's storage that it did.
    /// Every process that writes sealed state (the engine, the CLI) calls it right after
    /// loading the secret. An error when the secret's storage refuses that record.
    pub fn attach_secret(&self, secret: &InstallSecret) -> Result<(), StoreError> {
        let key = secret.seal_key();
        if !self.sealed_schema() {
            let _ = self.seal_key.set(key);
            return Ok(());
        }
        let storage_sealed = secret.storage_says_sealed();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let marker: Option<String> = tx
            .query_row("SELECT value FROM kv WHERE key = ?1", [MARKER_KEY], |r| r.get(0))
            .optional()?;
        if marker.as_deref() == Some(PENDING) {
            // A database just migrated from schema 13 holds no seal at all. One that does had
            // its record reset to `pending` by hand; one whose secret says sealing began was
            // put back to before it (stripped, or its schema version set back). Neither is
            // sealed as it is: its edits stay findings until the user reseals.
            if storage_sealed {
                tracing::warn!("the database was reset to before sealing; not sealing it");
            } else if holds_seals(&tx)? {
                tracing::warn!("the seal record was reset in a sealed database; not resealing it");
            } else {
                let (p, r, t) = seal_everything(&tx, &key, false)?;
                tracing::info!(projects = p, rules = r, tokens = t, "sealed the state");
            }
        }
        // The audit log begins with a head record (the genesis head, for an empty log), which
        // the secret then records: from then on a missing head is `audit-reset`, not a start.
        let audit_said = secret.storage_says_audit_begun();
        let exists = "SELECT EXISTS (SELECT 1 FROM kv WHERE key = ?1)";
        let mut has_head: bool = tx.query_row(exists, [crate::audit::HEAD_KEY], |r| r.get(0))?;
        let reset = storage_sealed && marker.as_deref() != Some(SEALED);
        if !(has_head || audit_said || reset) {
            has_head = crate::audit::begin_log(&tx, &key)?;
        }
        tx.commit()?;
        drop(conn);
        // Sealing has begun for this database now, or did before (maybe under a Sluice that
        // did not record it): the secret's storage records it once, with the audit log's
        // beginning. After the commit, so a crash in between leaves a sealed database and an
        // unmarked secret, which the next start marks; the other order would leave a false
        // `seal-reset` or `audit-reset`.
        let marks = Marks { sealed: true, audit: audit_said || has_head };
        let recorded = (marks.sealed != storage_sealed || marks.audit != audit_said)
            && secret.record(marks)?;
        self.secret_says_sealed.store(storage_sealed || recorded, Ordering::Relaxed);
        self.secret_says_audit.store(audit_said || (recorded && marks.audit), Ordering::Relaxed);
        let _ = self.seal_key.set(key);
        Ok(())
    }

    /// Everything sealed that does not verify, with what Sluice does about each.
    pub fn integrity(&self) -> Result<Vec<IntegrityFinding>, StoreError> {
        let Some(key) = self.sealing()? else { return Ok(Vec::new()) };
        let conn = self.conn();
        let mut found = Vec::new();
        let marker = kv_get_sealed(&conn, key, MARKER_KEY)?;
        if marker.as_deref() != Some(SEALED) {
            found.push(if self.secret_says_sealed.load(Ordering::Relaxed) {
                IntegrityFinding {
                    kind: FindingKind::Reset,
                    subject: MARKER_KEY.into(),
                    message: "the database was reset outside Sluice to how it was before its \
                              state was sealed (its seals removed, or an older copy or schema \
                              put back), while the install secret records that sealing began: \
                              nothing sealed in it is trusted. Projects are unavailable, allow \
                              rules ignored, tokens refused, the stop and the pause on. If you \
                              restored or replaced the database yourself, review it and accept \
                              it with `sluice doctor --reseal`"
                        .into(),
                }
            } else {
                IntegrityFinding {
                    kind: FindingKind::Marker,
                    subject: MARKER_KEY.into(),
                    message: "the record that Sluice's state is sealed was removed or changed \
                              outside Sluice; every seal is still checked"
                        .into(),
                }
            });
        }
        for (id, good) in PROJECTS.check_all(&conn, key)? {
            if !good {
                let name: String =
                    conn.query_row("SELECT name FROM projects WHERE id = ?1", [&id], |r| r.get(0))?;
                found.push(IntegrityFinding {
                    kind: FindingKind::Project,
                    message: format!(
                        "project {name:?} ({id}) was changed outside Sluice (its seal does not \
                         match): it is unavailable. Remove it and add its folder again, or accept \
                         it as it is now with `sluice doctor --reseal`"
                    ),
                    subject: id,
                });
            }
        }
        for (id, good) in RULES.check_all(&conn, key)? {
            if !good {
                let (project, argv): (String, String) = conn.query_row(
                    "SELECT coalesce(p.name, r.project_id), r.argv FROM allow_rules r
                     LEFT JOIN projects p ON p.id = r.project_id WHERE r.id = ?1",
                    [&id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                let argv = sluice_core::text::visible(&argv).into_owned();
                found.push(IntegrityFinding {
                    kind: FindingKind::AllowRule,
                    message: format!(
                        "allow rule {id} of project {project:?} ({argv}) was added or changed \
                         outside Sluice (its seal does not match): it is ignored, so the command \
                         asks. Remove it (`sluice rules remove {id}`), or accept it with `sluice doctor \
                         --reseal`"
                    ),
                    subject: id,
                });
            }
        }
        for (id, good) in TOKENS.check_all(&conn, key)? {
            if !good {
                let label: String =
                    conn.query_row("SELECT label FROM tokens WHERE id = ?1", [&id], |r| r.get(0))?;
                found.push(IntegrityFinding {
                    kind: FindingKind::Token,
                    message: format!(
                        "token {label:?} ({id}) was changed outside Sluice (its scope, expiry, \
                         revocation, limit or profile; its seal does not match): it is refused. \
                         Revoke it and create a new one, or accept it with `sluice doctor \
                         --reseal`"
                    ),
                    subject: id,
                });
            }
        }
        for (name, kind, effect) in [
            (
                STOPPED_KEY,
                FindingKind::Stop,
                "the emergency stop was removed or changed outside Sluice: the stop stays on \
                 until you lift it with `sluice resume`",
            ),
            (
                PAUSED_KEY,
                FindingKind::Pause,
                "the pause was removed or changed outside Sluice: AI access stays paused until \
                 you resume it",
            ),
        ] {
            if kv_get_sealed(&conn, key, name)?.is_none() {
                found.push(IntegrityFinding { kind, subject: name.into(), message: effect.into() });
            }
        }
        let head: Option<String> = conn
            .query_row("SELECT value FROM kv WHERE key = ?1", [crate::audit::HEAD_KEY], |r| {
                r.get(0)
            })
            .optional()?;
        let entries: bool =
            conn.query_row("SELECT EXISTS (SELECT 1 FROM audit)", [], |r| r.get(0))?;
        if head.is_none() && self.secret_says_audit.load(Ordering::Relaxed) {
            found.push(IntegrityFinding {
                kind: FindingKind::AuditReset,
                subject: crate::audit::HEAD_KEY.into(),
                message: "the audit log was emptied or replaced outside Sluice: the record of its \
                          newest entry is gone, while the install secret records that the log \
                          had begun, so what assistants did before may be lost. If you emptied \
                          it yourself, accept it with `sluice doctor --reseal`"
                    .into(),
            });
        } else if (head.is_some() || entries)
            && kv_get_sealed(&conn, key, crate::audit::HEAD_KEY)?.is_none()
        {
            found.push(IntegrityFinding {
                kind: FindingKind::AuditHead,
                subject: crate::audit::HEAD_KEY.into(),
                message: "the record of the newest audit entry was removed or changed outside \
                          Sluice: entries may have been cut from the log; `sluice audit verify` \
                          says where"
                    .into(),
            });
        }
        found.extend(crate::oauth::reach_findings(&conn, key)?);
        Ok(found)
    }

    /// The user's "accept the state as it is now": every row and value is sealed again, except
    /// that a stop or pause whose record was removed or broken is sealed as *on* (accepting
    /// never lifts one), and reach from the web is left as it is (its findings stay). Returns
    /// what was accepted.
    pub fn reseal(&self) -> Result<Vec<IntegrityFinding>, StoreError> {
        let mut found = self.integrity()?;
        found.retain(|f| f.kind.accepted_by_reseal());
        let Some(key) = self.sealing()? else { return Ok(found) };
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        seal_everything(&tx, key, true)?;
        tx.commit()?;
        Ok(found)
    }
}

/// Seals every row and value and marks sealing begun. `keep_safe`: a stop or pause without a
/// good seal is sealed as on (the user's reseal); otherwise as stored, off when absent (the
/// first sealing after the upgrade, which trusts the database it upgrades).
fn seal_everything(
    tx: &Connection,
    key: &[u8; 32],
    keep_safe: bool,
) -> Result<(usize, usize, usize), StoreError> {
    let counts =
        (PROJECTS.reseal_all(tx, key)?, RULES.reseal_all(tx, key)?, TOKENS.reseal_all(tx, key)?);
    for name in [STOPPED_KEY, PAUSED_KEY] {
        let value = if keep_safe {
            kv_get_sealed(tx, key, name)?.unwrap_or_else(|| "true".into())
        } else {
            tx.query_row("SELECT value FROM kv WHERE key = ?1", [name], |r| r.get(0))
                .optional()?
                .unwrap_or_else(|| "false".into())
        };
        kv_put_sealed(tx, key, name, &value)?;
    }
    let head: Option<String> = tx
        .query_row("SELECT value FROM kv WHERE key = ?1", [crate::audit::HEAD_KEY], |r| r.get(0))
        .optional()?;
    match head {
        Some(head) => kv_put_sealed(tx, key, crate::audit::HEAD_KEY, &head)?,
        // The user's reseal accepts a headless log as it is (`audit-reset`).
        None if keep_safe => crate::audit::accept_headless_log(tx, key)?,
        None => {
            crate::audit::begin_log(tx, key)?;
        }
    }
    kv_put_sealed(tx, key, MARKER_KEY, SEALED)?;
    Ok(counts)
}

/// Whether any seal exists: a row's seal column or a sealed kv value.
fn holds_seals(conn: &Connection) -> Result<bool, StoreError> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM projects WHERE seal IS NOT NULL)
             OR EXISTS (SELECT 1 FROM allow_rules WHERE seal IS NOT NULL)
             OR EXISTS (SELECT 1 FROM tokens WHERE seal IS NOT NULL)
             OR EXISTS (SELECT 1 FROM kv WHERE key LIKE 'seal:%')",
        [],
        |r| r.get(0),
    )?)
}
