//! The append-only, tamper-evident audit log.
//!
//! Entry `n` carries `mac_n = BLAKE3-keyed(K, "sluice.audit.v1" ‖ seq ‖ fields ‖ mac_{n-1})`
//! where `K` is derived from the install secret and every field is length-prefixed, so no two
//! different entries encode alike. Editing a field, deleting or reordering rows, or adding one
//! without the key breaks the chain at that entry. The newest `(seq, mac)` is also kept in the
//! kv table, so dropping the last rows is noticed unless the editor also rewinds that record.
//!
//! What goes in is metadata only: who, which tool, which project, outcome, duration, error
//! code, a keyed hash of the parameters and an optional detail line Sluice writes itself (what
//! an approval said would run on its own) — never file contents, outputs or secrets. An entry
//! without a detail encodes exactly as before the field existed, so older chains verify.

use std::sync::atomic::Ordering;

use rusqlite::{OptionalExtension, Row, TransactionBehavior, params};
use sluice_core::{ProjectId, TokenId};
use subtle::ConstantTimeEq;

use crate::projects::decode_error;
use crate::seal::put_str;
use crate::secret::{from_hex, to_hex};
use crate::{InstallSecret, Store, StoreError};

/// The kv key holding the newest entry as `<seq>:<mac hex>`.
pub(crate) const HEAD_KEY: &str = "sluice.audit.head";

/// Writes the genesis head (sequence 0, the chain's starting MAC) of a log without entries,
/// sealed: the log has begun. `false` (nothing written) when the log has entries.
pub(crate) fn begin_log(tx: &rusqlite::Connection, key: &[u8; 32]) -> Result<bool, StoreError> {
    let entries: bool = tx.query_row("SELECT EXISTS (SELECT 1 FROM audit)", [], |r| r.get(0))?;
    if !entries {
        put_head(tx, key, &format!("0:{}", to_hex(&[0u8; 32])))?;
    }
    Ok(!entries)
}

/// The user's acceptance of a log whose head is gone: it goes on from its newest entry, or
/// begins again when it has none.
pub(crate) fn accept_headless_log(
    tx: &rusqlite::Connection,
    key: &[u8; 32],
) -> Result<(), StoreError> {
    let newest: Option<(i64, Vec<u8>)> = tx
        .query_row("SELECT seq, mac FROM audit ORDER BY seq DESC LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    match newest {
        Some((seq, mac)) => put_head(tx, key, &format!("{seq}:{}", to_hex(&mac))),
        None => begin_log(tx, key).map(|_| ()),
    }
}

fn put_head(tx: &rusqlite::Connection, key: &[u8; 32], head: &str) -> Result<(), StoreError> {
    crate::seal::kv_put_sealed(tx, key, HEAD_KEY, head)
}
const MAX_TEXT: usize = 256;
const MAX_DETAIL: usize = 2048;
const MAX_LIST: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActorKind {
    /// An AI client through MCP, identified by its token.
    Mcp,
    /// The user, through the window, the tray or the CLI.
    Human,
}

impl ActorKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            ActorKind::Mcp => "mcp",
            ActorKind::Human => "human",
        }
    }

    fn parse(s: &str) -> Option<ActorKind> {
        [ActorKind::Mcp, ActorKind::Human].into_iter().find(|k| k.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Refused by policy, pause, scope or the user.
    Denied,
    /// Attempted and failed.
    Error,
}

impl Outcome {
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Denied => "denied",
            Outcome::Error => "error",
        }
    }

    fn parse(s: &str) -> Option<Outcome> {
        [Outcome::Ok, Outcome::Denied, Outcome::Error].into_iter().find(|o| o.as_str() == s)
    }
}

/// One event to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub time_ms: i64,
    /// The token's label, or "local user".
    pub actor: String,
    pub actor_kind: ActorKind,
    pub token_id: Option<TokenId>,
    /// The MCP tool or the human action (`approve`, `pause`, `token.create`, …).
    pub action: String,
    pub project_id: Option<ProjectId>,
    pub outcome: Outcome,
    /// A stable [`sluice_core::ErrorCode`] string when the outcome is not `ok`.
    pub error_code: Option<String>,
    pub duration_ms: Option<u64>,
    /// [`crate::params_hash`] of the canonical parameters, never the parameters themselves.
    pub params_hash: Option<[u8; 32]>,
    /// One line Sluice writes about the entry, e.g. what an approval said would run on its own
    /// (`.vscode/tasks.json: VS Code runs …`). Never parameters or contents.
    pub detail: Option<String>,
}

/// A stored record and its position in the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub seq: u64,
    pub record: AuditRecord,
}

/// Which entries [`Store::audit_list`] returns; `None` fields match everything.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub project_id: Option<ProjectId>,
    pub token_id: Option<TokenId>,
    pub outcome: Option<Outcome>,
    pub actor_kind: Option<ActorKind>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainBreak {
    /// The first entry that does not verify (or that is missing).
    pub seq: u64,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport {
    /// How many entries the log holds.
    pub entries: u64,
    pub intact: bool,
    pub first_break: Option<ChainBreak>,
}

/// An entry exactly as stored: the MAC covers this representation, so appending and verifying
/// encode the very same values.
struct StoredRow {
    seq: i64,
    time_ms: i64,
    actor: String,
    actor_kind: String,
    token_id: Option<String>,
    action: String,
    project_id: Option<String>,
    outcome: String,
    error_code: Option<String>,
    duration_ms: Option<i64>,
    params_hash: Option<String>,
    detail: Option<String>,
}

const COLUMNS: &str = "seq, time_ms, actor, actor_kind, token_id, action, project_id, outcome, \
                       error_code, duration_ms, params_hash, mac, detail";
/// The columns of [`COLUMNS`], bound per row.
const ROW_PARAMS: usize = 13;
/// Rows one `INSERT` of a batch carries (well under SQLite's 32766 parameters).
const ROWS_PER_INSERT: usize = 16;

/// `INSERT INTO audit (…) VALUES (?1, …, ?13), (?14, …), …` for `rows` rows.
fn insert_sql(rows: usize) -> String {
    let values: Vec<String> = (0..rows)
        .map(|r| {
            let params: Vec<String> =
                (1..=ROW_PARAMS).map(|c| format!("?{}", r * ROW_PARAMS + c)).collect();
            format!("({})", params.join(", "))
        })
        .collect();
    format!("INSERT INTO audit ({COLUMNS}) VALUES {}", values.join(", "))
}

impl StoredRow {
    /// Binds this row, chained by `mac`, to the parameters after `offset` of `insert`, in the
    /// order of [`COLUMNS`].
    fn bind(
        &self,
        insert: &mut rusqlite::CachedStatement<'_>,
        offset: usize,
        mac: &[u8; 32],
    ) -> rusqlite::Result<()> {
        let at = |column: usize| offset + column;
        insert.raw_bind_parameter(at(1), self.seq)?;
        insert.raw_bind_parameter(at(2), self.time_ms)?;
        insert.raw_bind_parameter(at(3), &self.actor)?;
        insert.raw_bind_parameter(at(4), &self.actor_kind)?;
        insert.raw_bind_parameter(at(5), &self.token_id)?;
        insert.raw_bind_parameter(at(6), &self.action)?;
        insert.raw_bind_parameter(at(7), &self.project_id)?;
        insert.raw_bind_parameter(at(8), &self.outcome)?;
        insert.raw_bind_parameter(at(9), &self.error_code)?;
        insert.raw_bind_parameter(at(10), self.duration_ms)?;
        insert.raw_bind_parameter(at(11), &self.params_hash)?;
        insert.raw_bind_parameter(at(12), &mac[..])?;
        insert.raw_bind_parameter(at(13), &self.detail)
    }

    fn from_record(seq: i64, r: &AuditRecord) -> StoredRow {
        StoredRow {
            seq,
            time_ms: r.time_ms,
            actor: r.actor.clone(),
            actor_kind: r.actor_kind.as_str().to_owned(),
            token_id: r.token_id.as_ref().map(|t| t.as_str().to_owned()),
            action: r.action.clone(),
            project_id: r.project_id.as_ref().map(|p| p.as_str().to_owned()),
            outcome: r.outcome.as_str().to_owned(),
            error_code: r.error_code.clone(),
            duration_ms: r.duration_ms.map(|d| i64::try_from(d).unwrap_or(i64::MAX)),
            params_hash: r.params_hash.as_ref().map(|h| to_hex(h)),
            detail: r.detail.clone(),
        }
    }

    fn from_row(r: &Row<'_>) -> rusqlite::Result<(StoredRow, Vec<u8>)> {
        Ok((
            StoredRow {
                seq: r.get(0)?,
                time_ms: r.get(1)?,
                actor: r.get(2)?,
                actor_kind: r.get(3)?,
                token_id: r.get(4)?,
                action: r.get(5)?,
                project_id: r.get(6)?,
                outcome: r.get(7)?,
                error_code: r.get(8)?,
                duration_ms: r.get(9)?,
                params_hash: r.get(10)?,
                detail: r.get(12)?,
            },
            r.get(11)?,
        ))
    }

    fn mac(&self, key: &[u8; 32], prev: &[u8; 32]) -> [u8; 32] {
        let mut h = blake3::Hasher::new_keyed(key);
        h.update(b"sluice.audit.v1\0");
        h.update(&self.seq.to_be_bytes());
        h.update(&self.time_ms.to_be_bytes());
        put_str(&mut h, Some(&self.actor));
        put_str(&mut h, Some(&self.actor_kind));
        put_str(&mut h, self.token_id.as_deref());
        put_str(&mut h, Some(&self.action));
        put_str(&mut h, self.project_id.as_deref());
        put_str(&mut h, Some(&self.outcome));
        put_str(&mut h, self.error_code.as_deref());
        match self.duration_ms {
            None => h.update(&[0]),
            Some(d) => h.update(&[1]).update(&d.to_be_bytes()),
        };
        put_str(&mut h, self.params_hash.as_deref());
        // Added in schema 9: absent, nothing is hashed for it, so entries written before hash
        // as they did; present, a tag byte first, so no entry with a detail encodes like one
        // without.
        if let Some(detail) = &self.detail {
            h.update(b"d");
            put_str(&mut h, Some(detail));
        }
        h.update(prev);
        *h.finalize().as_bytes()
    }

    fn into_entry(self) -> Result<AuditEntry, String> {
        let bad = |what: &str, v: &str| format!("bad {what} {v:?} in audit entry {}", self.seq);
        let record = AuditRecord {
            time_ms: self.time_ms,
            actor_kind: ActorKind::parse(&self.actor_kind)
                .ok_or_else(|| bad("actor kind", &self.actor_kind))?,
            token_id: match &self.token_id {
                None => None,
                Some(t) => Some(TokenId::parse(t).ok_or_else(|| bad("token id", t))?),
            },
            project_id: match &self.project_id {
                None => None,
                Some(p) => Some(ProjectId::parse(p).ok_or_else(|| bad("project id", p))?),
            },
            outcome: Outcome::parse(&self.outcome).ok_or_else(|| bad("outcome", &self.outcome))?,
            duration_ms: self.duration_ms.map(|d| u64::try_from(d).unwrap_or(0)),
            params_hash: match &self.params_hash {
                None => None,
                Some(h) => Some(from_hex(h).ok_or_else(|| bad("params hash", h))?),
            },
            actor: self.actor,
            action: self.action,
            error_code: self.error_code,
            detail: self.detail,
        };
        let seq = u64::try_from(self.seq).map_err(|_| "negative audit seq".to_owned())?;
        Ok(AuditEntry { seq, record })
    }
}

fn check_text(what: &str, value: &str, required: bool) -> Result<(), StoreError> {
    if required && value.is_empty() {
        return Err(StoreError::Invalid(format!("audit {what} is empty")));
    }
    if value.len() > MAX_TEXT || value.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "audit {what} must be at most {MAX_TEXT} bytes without control characters"
        )));
    }
    Ok(())
}

impl Store {
    /// Appends one entry and returns its sequence number. The read of the previous MAC and the
    /// insert share one IMMEDIATE transaction, so writers in two processes stay in one chain.
    pub fn audit_append(
        &self,
        secret: &InstallSecret,
        record: &AuditRecord,
    ) -> Result<u64, StoreError> {
        self.audit_append_all(secret, std::slice::from_ref(record))
    }

    /// Appends entries in order in one transaction (one commit for all of them, which is most
    /// of an append's cost) and returns the sequence number of the last. Nothing is written if
    /// any entry is invalid or `records` is empty (then the result is the current head).
    pub fn audit_append_all(
        &self,
        secret: &InstallSecret,
        records: &[AuditRecord],
    ) -> Result<u64, StoreError> {
        for record in records {
            check_text("actor", &record.actor, true)?;
            check_text("action", &record.action, true)?;
            if let Some(code) = &record.error_code {
                check_text("error code", code, true)?;
            }
            if let Some(detail) = &record.detail
                && (detail.len() > MAX_DETAIL || detail.chars().any(char::is_control))
            {
                return Err(StoreError::Invalid(format!(
                    "an audit detail must be at most {MAX_DETAIL} bytes without control characters"
                )));
            }
        }
        let key = secret.audit_key();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        // Every MCP request appends here: cached statements keep SQL parsing off that path.
        let last: Option<(i64, Vec<u8>)> = tx
            .prepare_cached("SELECT seq, mac FROM audit ORDER BY seq DESC LIMIT 1")?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let (mut seq, mut prev) = match last {
            None => (0, [0u8; 32]),
            Some((seq, mac)) => {
                let prev: [u8; 32] = mac
                    .try_into()
                    .map_err(|_| StoreError::Corrupt(format!("audit entry {seq} has a bad MAC")))?;
                (seq, prev)
            }
        };
        if records.is_empty() {
            return Ok(seq as u64);
        }
        // The rows and their chain first, then inserted [`ROWS_PER_INSERT`] to a statement: a
        // statement's own cost (its run and reset) was most of an entry's.
        let rows: Vec<(StoredRow, [u8; 32])> = records
            .iter()
            .map(|record| {
                seq += 1;
                let row = StoredRow::from_record(seq, record);
                let mac = row.mac(&key, &prev);
                prev = mac;
                (row, mac)
            })
            .collect();
        let mut chunks = rows.chunks_exact(ROWS_PER_INSERT);
        if chunks.len() > 0 {
            let mut insert = tx.prepare_cached(&insert_sql(ROWS_PER_INSERT))?;
            for chunk in &mut chunks {
                for (i, (row, mac)) in chunk.iter().enumerate() {
                    row.bind(&mut insert, i * ROW_PARAMS, mac)?;
                }
                insert.raw_execute()?;
            }
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut insert = tx.prepare_cached(&insert_sql(1))?;
            for (row, mac) in rest {
                row.bind(&mut insert, 0, mac)?;
                insert.raw_execute()?;
            }
        }
        let head = format!("{seq}:{}", to_hex(&prev));
        // Once the secret records that the log began, only an existing head moves on: a log
        // emptied outside Sluice stays headless, and so a finding, until the user reseals.
        let written = if self.secret_says_audit.load(Ordering::Relaxed) {
            tx.prepare_cached("UPDATE kv SET value = ?2 WHERE key = ?1")?
                .execute(params![HEAD_KEY, head])?
        } else {
            tx.prepare_cached(
                "INSERT INTO kv (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![HEAD_KEY, head])?
        };
        if written > 0 && self.sealed_schema() {
            crate::seal::kv_put_sealed(&tx, &secret.seal_key(), HEAD_KEY, &head)?;
        }
        tx.commit()?;
        Ok(seq as u64)
    }

    /// Entries matching `filter`, newest first, at most `limit` (capped at 10 000), older than
    /// `before_seq` when given (for paging).
    pub fn audit_list(
        &self,
        filter: &AuditFilter,
        limit: usize,
        before_seq: Option<u64>,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM audit
             WHERE (?1 IS NULL OR project_id = ?1) AND (?2 IS NULL OR token_id = ?2)
               AND (?3 IS NULL OR outcome = ?3) AND (?4 IS NULL OR actor_kind = ?4)
               AND (?5 IS NULL OR seq < ?5)
             ORDER BY seq DESC LIMIT ?6"
        ))?;
        let before = before_seq.map(|s| i64::try_from(s).unwrap_or(i64::MAX));
        let limit = i64::try_from(limit.min(MAX_LIST)).unwrap_or(0);
        let rows = stmt.query_map(
            params![
                filter.project_id.as_ref().map(|p| p.as_str()),
                filter.token_id.as_ref().map(|t| t.as_str()),
                filter.outcome.map(Outcome::as_str),
                filter.actor_kind.map(ActorKind::as_str),
                before,
                limit
            ],
            StoredRow::from_row,
        )?;
        let mut entries = Vec::new();
        for row in rows {
            let (row, _mac) = row?;
            entries.push(row.into_entry().map_err(|e| decode_error(0, e))?);
        }
        Ok(entries)
    }

    /// Walks the whole chain and reports the first entry that does not verify.
    pub fn audit_verify(&self, secret: &InstallSecret) -> Result<ChainReport, StoreError> {
        let key = secret.audit_key();
        let mut conn = self.conn();
        // One snapshot for the count, the head and the entries: a writer in another process
        // appending between those reads would otherwise make an intact chain look cut. A read
        // transaction (deferred, not the connection's immediate default): in WAL mode it never
        // holds the write lock, so the engine's appends go on while the CLI verifies.
        let snapshot = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let conn = &*snapshot;
        let entries: i64 = conn.query_row("SELECT count(*) FROM audit", [], |r| r.get(0))?;
        let entries = u64::try_from(entries).unwrap_or(0);
        let head: Option<String> = conn
            .query_row("SELECT value FROM kv WHERE key = ?1", [HEAD_KEY], |r| r.get(0))
            .optional()?;
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM audit ORDER BY seq"))?;
        let mut rows = stmt.query([])?;
        let mut expected: i64 = 1;
        let mut prev = [0u8; 32];
        let broken = |seq: i64, reason: String| {
            let seq = u64::try_from(seq).unwrap_or(0);
            Ok(ChainReport {
                entries,
                intact: false,
                first_break: Some(ChainBreak { seq, reason }),
            })
        };
        while let Some(r) = rows.next()? {
            let (row, mac) = match StoredRow::from_row(r) {
                Ok(x) => x,
                Err(e) => return broken(expected, format!("entry {expected} is unreadable: {e}")),
            };
            if row.seq != expected {
                return broken(expected, format!("entry {expected} is missing"));
            }
            let computed = row.mac(&key, &prev);
            if !bool::from(computed.as_slice().ct_eq(&mac)) {
                return broken(
                    row.seq,
                    format!(
                        "entry {} was altered, moved or forged (its MAC does not match)",
                        row.seq
                    ),
                );
            }
            prev = computed;
            expected += 1;
        }
        let last = expected - 1;
        // The chain alone cannot see its tail cut off; the head record can, unless it was
        // rewound to an earlier (seq, mac) pair as well.
        match head.as_deref().and_then(|h| h.split_once(':')) {
            None if self.secret_says_audit.load(Ordering::Relaxed) => {
                return broken(
                    last.max(1),
                    "the log was emptied or replaced outside Sluice: the record of its newest \
                     entry is gone, while the install secret records that the log had begun"
                        .into(),
                );
            }
            None if last == 0 => {}
            None => return broken(last, "the record of the newest entry is missing".into()),
            Some((seq, mac)) => {
                let head_seq: i64 = seq.parse().unwrap_or(-1);
                if head_seq > last {
                    return broken(
                        last + 1,
                        format!("entries {} to {head_seq} are missing", last + 1),
                    );
                }
                let head_mac = from_hex(mac).unwrap_or([0; 32]);
                if head_seq != last || !bool::from(head_mac.ct_eq(&prev)) {
                    return broken(last, "the record of the newest entry does not match".into());
                }
            }
        }
        // The chain and its head agree; the head's seal says whether Sluice wrote that head.
        // Without it, entries after `last` may have been cut and the head rewound to match.
        if self.sealed_schema()
            && (last > 0 || head.is_some())
            && crate::seal::kv_get_sealed(conn, &secret.seal_key(), HEAD_KEY)?.is_none()
        {
            return broken(
                last + 1,
                format!(
                    "the record of the newest entry (#{last}) was rewritten outside Sluice (its \
                     seal does not match): entries after #{last} may have been cut"
                ),
            );
        }
        Ok(ChainReport { entries, intact: true, first_break: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MAC exactly as schema 8 computed it, before entries could carry a detail.
    fn mac_before_details(row: &StoredRow, key: &[u8; 32], prev: &[u8; 32]) -> [u8; 32] {
        let mut h = blake3::Hasher::new_keyed(key);
        h.update(b"sluice.audit.v1\0");
        h.update(&row.seq.to_be_bytes());
        h.update(&row.time_ms.to_be_bytes());
        put_str(&mut h, Some(&row.actor));
        put_str(&mut h, Some(&row.actor_kind));
        put_str(&mut h, row.token_id.as_deref());
        put_str(&mut h, Some(&row.action));
        put_str(&mut h, row.project_id.as_deref());
        put_str(&mut h, Some(&row.outcome));
        put_str(&mut h, row.error_code.as_deref());
        match row.duration_ms {
            None => h.update(&[0]),
            Some(d) => h.update(&[1]).update(&d.to_be_bytes()),
        };
        put_str(&mut h, row.params_hash.as_deref());
        h.update(prev);
        *h.finalize().as_bytes()
    }

    /// Chains written before schema 9 keep verifying: an entry without a detail hashes as it
    /// always did, and one with a detail never hashes like it.
    #[test]
    fn entries_without_a_detail_hash_as_before() {
        let record = AuditRecord {
            time_ms: 1_700_000_000_000,
            actor: "Cursor".into(),
            actor_kind: ActorKind::Mcp,
            token_id: None,
            action: "approval.requested".into(),
            project_id: None,
            outcome: Outcome::Ok,
            error_code: None,
            duration_ms: Some(3),
            params_hash: None,
            detail: None,
        };
        let (key, prev) = ([7u8; 32], [9u8; 32]);
        let plain = StoredRow::from_record(4, &record);
        assert_eq!(plain.mac(&key, &prev), mac_before_details(&plain, &key, &prev));
        let detailed = StoredRow::from_record(
            4,
            &AuditRecord { detail: Some(".mcp.json: Claude Code starts it".into()), ..record },
        );
        assert_ne!(detailed.mac(&key, &prev), plain.mac(&key, &prev));
    }
}
