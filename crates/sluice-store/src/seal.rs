//! Seals over the security-relevant state, so an edit of the database by something without the
//! install secret (a sync tool, a restored backup, a process that can write the file but not
//! read the keychain) is noticed at the next read instead of being obeyed (case PC-02).
//!
//! A seal is `BLAKE3-keyed(K, "sluice.seal.v1" ‖ table ‖ every sealed column ‖ extra)`, with
//! `K` derived from the install secret for this purpose only and every value type-tagged and
//! length-prefixed, so no two rows encode alike. Sealed are: each project row (its root and
//! every mode and list), each allow rule, each token (with its scope rows), and the kv values
//! of the emergency stop, the pause and the audit head. Every writer of that state goes through
//! this crate, which recomputes the seal in the same transaction; every read checks it.
//!
//! What a bad seal does is decided where the state is read, always towards less privilege: a
//! project becomes unavailable, a rule is ignored, a token is refused, a missing or unsealed
//! stop or pause counts as on, and `audit verify` names the head record. [`Store::integrity`]
//! lists what does not verify; [`Store::reseal`] is the human's explicit "accept it as it is".
//!
//! Sealing begins at the first [`Store::attach_secret`] after the schema 14 migration, which
//! leaves the marker `pending`: the rows present then are sealed as they are (an upgrade trusts
//! the database it upgrades), and the install secret's stored form (keychain entry or file)
//! then gains a marker of its own ([`crate::secret::SEALED_SUFFIX`]). From then on a missing
//! seal is a broken one. Nothing in the database can tell a stripped database (every seal
//! removed, `pending` written back, or the schema version put back to 13) from an upgrade; the
//! secret's marker can: with it, `pending` seals nothing and is the finding `seal-reset`, and
//! everything sealed reads as broken until the user reseals. A `pending` marker in a database
//! that still holds seals seals nothing either.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, params};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

pub(crate) use crate::sealed_table::{PROJECTS, RULES, SealedTable, TOKENS};
use crate::secret::{from_hex, to_hex};
use crate::{Store, StoreError};

/// The kv key recording that sealing began: `pending` (left by the schema 14 migration), then
/// `sealed` with a seal of its own.
pub(crate) const MARKER_KEY: &str = "sluice.seal";
pub(crate) const PENDING: &str = "pending";
pub(crate) const SEALED: &str = "sealed";
/// The kv keys whose values are sealed; a seal lives under `seal:<key>`.
pub(crate) const STOPPED_KEY: &str = "stopped";
pub(crate) const PAUSED_KEY: &str = "paused";

/// The first schema version whose rows carry seals.
pub(crate) const SEALED_SCHEMA: usize = 14;

/// The seal key, derived from the install secret.
pub(crate) type SealKey = Zeroizing<[u8; 32]>;

/// What kind of state failed its seal. The code is stable: the window and scripts match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindingKind {
    Project,
    AllowRule,
    Token,
    Stop,
    Pause,
    AuditHead,
    /// The audit log and its head were removed while the secret's storage says it began.
    AuditReset,
    Marker,
    /// The database was put back to before sealing while the secret's storage says it began.
    Reset,
    /// The setting of reach from the web (it reads as off).
    Reach,
    /// A hosted assistant's connection request (it reads as denied).
    ConnectionRequest,
    /// The grant behind a remote token (the token is refused).
    Grant,
}

impl FindingKind {
    /// Every kind, in declaration order.
    pub const ALL: &'static [FindingKind] = &[
        FindingKind::Project,
        FindingKind::AllowRule,
        FindingKind::Token,
        FindingKind::Stop,
        FindingKind::Pause,
        FindingKind::AuditHead,
        FindingKind::AuditReset,
        FindingKind::Marker,
        FindingKind::Reset,
        FindingKind::Reach,
        FindingKind::ConnectionRequest,
        FindingKind::Grant,
    ];

    /// The stable wire form (`sluice doctor`, the window's union `FindingCode`).
    pub const fn code(self) -> &'static str {
        match self {
            FindingKind::Project => "project-seal",
            FindingKind::AllowRule => "allow-rule-seal",
            FindingKind::Token => "token-seal",
            FindingKind::Stop => "stop-seal",
            FindingKind::Pause => "pause-seal",
            FindingKind::AuditHead => "audit-head-seal",
            FindingKind::AuditReset => "audit-reset",
            FindingKind::Marker => "seal-marker",
            FindingKind::Reset => "seal-reset",
            FindingKind::Reach => "reach-seal",
            FindingKind::ConnectionRequest => "connection-request-seal",
            FindingKind::Grant => "grant-seal",
        }
    }

    /// Whether `sluice doctor --reseal` accepts it. What would let something in from the
    /// internet (reach on, a request approved, a grant rebound) is never accepted: Sluice says
    /// how to undo it instead.
    pub const fn accepted_by_reseal(self) -> bool {
        !matches!(self, FindingKind::Reach | FindingKind::ConnectionRequest | FindingKind::Grant)
    }
}

/// One piece of sealed state that does not verify, and what Sluice does about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrityFinding {
    pub kind: FindingKind,
    /// What it is about: a project's or token's id, a rule's number, a kv key.
    pub subject: String,
    /// For people: what was found, naming the project, rule or token, and its effect.
    pub message: String,
}

/// `0` for absent; `1`, the length, then the bytes for present: unambiguous concatenation.
pub(crate) fn put_str(h: &mut blake3::Hasher, s: Option<&str>) {
    match s {
        None => h.update(&[0]),
        Some(s) => h.update(&[1]).update(&(s.len() as u64).to_be_bytes()).update(s.as_bytes()),
    };
}

/// The seal of one row: `values` are its sealed columns in a fixed order, `extra` further
/// strings bound to it (a token's scope).
pub(crate) fn seal_of(
    key: &[u8; 32],
    table: &str,
    values: &[ValueRef<'_>],
    extra: &[&str],
) -> [u8; 32] {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(b"sluice.seal.v1\0");
    put_str(&mut h, Some(table));
    h.update(&(values.len() as u64).to_be_bytes());
    for value in values {
        match value {
            ValueRef::Null => h.update(&[0]),
            ValueRef::Integer(i) => h.update(&[1]).update(&i.to_be_bytes()),
            ValueRef::Real(f) => h.update(&[2]).update(&f.to_bits().to_be_bytes()),
            ValueRef::Text(t) => h.update(&[3]).update(&(t.len() as u64).to_be_bytes()).update(t),
            ValueRef::Blob(b) => h.update(&[4]).update(&(b.len() as u64).to_be_bytes()).update(b),
        };
    }
    h.update(&(extra.len() as u64).to_be_bytes());
    for e in extra {
        put_str(&mut h, Some(e));
    }
    *h.finalize().as_bytes()
}

/// Whether `stored` (a seal column, maybe NULL) is the seal `computed`.
pub(crate) fn matches(computed: &[u8; 32], stored: Option<&[u8]>) -> bool {
    stored.is_some_and(|s| bool::from(computed.as_slice().ct_eq(s)))
}

fn kv_seal(key: &[u8; 32], name: &str, value: &str) -> [u8; 32] {
    seal_of(key, "kv", &[ValueRef::Text(name.as_bytes()), ValueRef::Text(value.as_bytes())], &[])
}

pub(crate) fn seal_name(key: &str) -> String {
    format!("seal:{key}")
}

/// Writes a sealed kv value in the caller's transaction.
pub(crate) fn kv_put_sealed(
    conn: &Connection,
    key: &[u8; 32],
    name: &str,
    value: &str,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO kv (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )?;
    stmt.execute(params![name, value])?;
    stmt.execute(params![seal_name(name), to_hex(&kv_seal(key, name, value))])?;
    Ok(())
}

/// A sealed kv value: `Ok(Some)` when present with a good seal, `Ok(None)` when the value is
/// missing or its seal is missing or wrong.
pub(crate) fn kv_get_sealed(
    conn: &Connection,
    key: &[u8; 32],
    name: &str,
) -> Result<Option<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT value FROM kv WHERE key = ?1")?;
    let value: Option<String> = stmt.query_row([name], |r| r.get(0)).optional()?;
    let seal: Option<String> = stmt.query_row([seal_name(name)], |r| r.get(0)).optional()?;
    let (Some(value), Some(seal)) = (value, seal) else { return Ok(None) };
    let good = from_hex(&seal).is_some_and(|s| matches(&kv_seal(key, name, &value), Some(&s)));
    Ok(good.then_some(value))
}

/// Whether a write of a sealed row first checks the row it changes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Before {
    /// The row must verify: an ordinary change never blesses what was edited outside Sluice.
    MustVerify,
    /// A new row, or a change that only narrows (a revocation), sealed whatever it was.
    Any,
}

impl Store {
    /// The seal key when the schema has seals; an error when the secret was never attached.
    pub(crate) fn sealing(&self) -> Result<Option<&[u8; 32]>, StoreError> {
        if !self.sealed_schema() {
            return Ok(None);
        }
        match self.seal_key.get() {
            Some(key) => Ok(Some(key)),
            None => Err(StoreError::Secret(
                "the install secret is not loaded, so sealed state can be neither read nor written"
                    .into(),
            )),
        }
    }

    /// A sealed flag (the stop, the pause): `None` when it is missing or its seal does not
    /// match — the caller then assumes the safe value.
    pub fn sealed_flag(&self, name: &str) -> Result<Option<bool>, StoreError> {
        let Some(key) = self.sealing()? else { return self.kv_get_bool(name) };
        let value = kv_get_sealed(&self.conn(), key, name)?;
        match value.as_deref() {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => {
                Err(StoreError::Corrupt(format!("kv {name:?} is not a bool: {other:?}")))
            }
        }
    }

    /// Sets a sealed flag.
    pub fn set_sealed_flag(&self, name: &str, value: bool) -> Result<(), StoreError> {
        let text = if value { "true" } else { "false" };
        let Some(key) = self.sealing()? else { return self.kv_set(name, text) };
        // One transaction, so another process never reads the value without its seal.
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        kv_put_sealed(&tx, key, name, text)?;
        tx.commit()?;
        Ok(())
    }

    /// Runs `write` on row `id` of `table` in one transaction and reseals the row after it.
    pub(crate) fn write_sealed<T>(
        &self,
        table: &SealedTable,
        id: &str,
        before: Before,
        write: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let key = self.sealing()?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        if let Some(key) = key
            && before == Before::MustVerify
            && exists(&tx, table, id)?
            && !table.verify(&tx, key, &id)?
        {
            return Err(tampered_error(table, id));
        }
        let out = write(&tx)?;
        if let Some(key) = key {
            table.reseal(&tx, key, &id)?;
        }
        tx.commit()?;
        Ok(out)
    }

    /// Whether row `id` of `table` carries a good seal (always, before schema 14).
    pub(crate) fn row_sealed(
        &self,
        conn: &Connection,
        table: &SealedTable,
        id: &dyn rusqlite::ToSql,
    ) -> Result<bool, StoreError> {
        match self.sealing()? {
            None => Ok(true),
            Some(key) => table.verify(conn, key, id),
        }
    }
}

pub(crate) fn exists(conn: &Connection, table: &SealedTable, id: &str) -> Result<bool, StoreError> {
    let sql = format!("SELECT EXISTS (SELECT 1 FROM {} WHERE {} = ?1)", table.table, table.id);
    Ok(conn.query_row(&sql, [id], |r| r.get(0))?)
}

pub(crate) fn tampered_error(table: &SealedTable, id: &str) -> StoreError {
    let what = match table.table {
        "projects" => "project",
        "tokens" => "token",
        "oauth_requests" => "authorization request",
        "oauth_grants" => "remote grant",
        _ => "allow rule",
    };
    StoreError::Forbidden(format!(
        "{what} {id} was changed outside Sluice (its seal does not match), so Sluice will not \
         change it further; `sluice doctor` shows what was found: remove it, or accept it as it \
         is with `sluice doctor --reseal`"
    ))
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod tests;
