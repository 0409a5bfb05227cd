//! Approvals: one row per "ask". The engine creates a row when a tool call's policy says ask,
//! the human decides it (window, tray or CLI — possibly from another process, which is why the
//! decision goes through the database), and the waiting call reads the outcome. A decision is a
//! conditional update from `pending`, so each approval is decided once.

use rusqlite::{OptionalExtension, Row, params};
use sluice_core::{AutoRunHit, ChangeTally, ProjectId, TokenId};

use crate::projects::decode_error;
use crate::{Store, StoreError, now_ms};

/// How an approval ended, or that it has not yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalState {
    Pending,
    Approved,
    /// Denied by the user, with the reason they gave (returned to the assistant).
    Denied(Option<String>),
    Expired,
    /// The client cancelled or went away while waiting.
    Withdrawn,
    /// The engine stopped while it was pending; never acted on.
    Aborted,
}

impl ApprovalState {
    pub fn as_str(&self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Denied(_) => "denied",
            ApprovalState::Expired => "expired",
            ApprovalState::Withdrawn => "withdrawn",
            ApprovalState::Aborted => "aborted",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRecord {
    pub id: String,
    pub project_id: ProjectId,
    pub project_name: String,
    pub token_id: TokenId,
    pub token_label: String,
    pub tool: String,
    pub summary: String,
    /// The auto-run paths the change touches, with what runs them (empty for most changes and
    /// for commands). Already safe to display.
    pub autorun: Vec<AutoRunHit>,
    /// What a change to files does, counted from its effects when it was planned; `None` for
    /// commands (and for approvals an older Sluice recorded).
    pub tally: Option<ChangeTally>,
    /// Why it asked: the policy, execution mode or auto-run list that required the approval
    /// ("" for approvals an older Sluice recorded).
    pub asked_because: String,
    pub fingerprint: [u8; 32],
    pub created_ms: i64,
    pub expires_ms: i64,
    pub state: ApprovalState,
    pub decided_ms: Option<i64>,
    pub decided_by: Option<String>,
}

impl ApprovalRecord {
    /// The record as every surface shows it (CLI, `--json`, tray, window, notification): each
    /// field an assistant, a project or a person chose rendered by [`sluice_core::text`], the
    /// summary line by line. Applied on the way out as well as on the way in, so a record an
    /// older Sluice stored is shown safely too.
    pub fn shown(&self) -> ApprovalRecord {
        use sluice_core::text::{visible, visible_lines};
        let own = |s: &str| visible(s).into_owned();
        ApprovalRecord {
            project_name: own(&self.project_name),
            token_label: own(&self.token_label),
            tool: own(&self.tool),
            summary: visible_lines(&self.summary).into_owned(),
            asked_because: own(&self.asked_because),
            autorun: self
                .autorun
                .iter()
                .map(|h| AutoRunHit {
                    path: own(&h.path),
                    program: own(&h.program),
                    consequence: own(&h.consequence),
                })
                .collect(),
            state: match &self.state {
                ApprovalState::Denied(Some(reason)) => ApprovalState::Denied(Some(own(reason))),
                state => state.clone(),
            },
            decided_by: self.decided_by.as_deref().map(own),
            ..self.clone()
        }
    }
}

const COLUMNS: &str = "id, project_id, project_name, token_id, token_label, tool, summary, \
                       fingerprint, created_ms, expires_ms, state, decided_ms, decided_by, reason, \
                       autorun, tally, asked_because";

fn approval_from_row(r: &Row<'_>) -> rusqlite::Result<ApprovalRecord> {
    let project: String = r.get(1)?;
    let token: String = r.get(3)?;
    let fingerprint: Vec<u8> = r.get(7)?;
    let state: String = r.get(10)?;
    let reason: Option<String> = r.get(13)?;
    let autorun: String = r.get(14)?;
    let autorun = serde_json::from_str(&autorun)
        .map_err(|e| decode_error(14, format!("bad auto-run list: {e}")))?;
    let tally: Option<String> = r.get(15)?;
    let tally = tally
        .map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|e| decode_error(15, format!("bad change tally: {e}")))?;
    Ok(ApprovalRecord {
        id: r.get(0)?,
        project_id: ProjectId::parse(&project)
            .ok_or_else(|| decode_error(1, format!("bad project id {project:?}")))?,
        project_name: r.get(2)?,
        token_id: TokenId::parse(&token)
            .ok_or_else(|| decode_error(3, format!("bad token id {token:?}")))?,
        token_label: r.get(4)?,
        tool: r.get(5)?,
        summary: r.get(6)?,
        autorun,
        tally,
        asked_because: r.get(16)?,
        fingerprint: fingerprint
            .try_into()
            .map_err(|_| decode_error(7, "fingerprint is not 32 bytes".into()))?,
        created_ms: r.get(8)?,
        expires_ms: r.get(9)?,
        state: match state.as_str() {
            "pending" => ApprovalState::Pending,
            "approved" => ApprovalState::Approved,
            "denied" => ApprovalState::Denied(reason),
            "expired" => ApprovalState::Expired,
            "withdrawn" => ApprovalState::Withdrawn,
            "aborted" => ApprovalState::Aborted,
            other => return Err(decode_error(10, format!("bad approval state {other:?}"))),
        },
        decided_ms: r.get(11)?,
        decided_by: r.get(12)?,
    })
}

impl Store {
    pub fn insert_approval(&self, a: &ApprovalRecord) -> Result<(), StoreError> {
        let autorun = serde_json::to_string(&a.autorun)
            .map_err(|e| StoreError::Invalid(format!("bad auto-run list: {e}")))?;
        let tally = a
            .tally
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| StoreError::Invalid(format!("bad change tally: {e}")))?;
        self.conn().execute(
            &format!("INSERT INTO approvals ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending', NULL, NULL, NULL, ?11, ?12, ?13)"),
            params![
                a.id,
                a.project_id.as_str(),
                a.project_name,
                a.token_id.as_str(),
                a.token_label,
                a.tool,
                a.summary,
                a.fingerprint.as_slice(),
                a.created_ms,
                a.expires_ms,
                autorun,
                tally,
                a.asked_because,
            ],
        )?;
        Ok(())
    }

    pub fn approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"),
                [id],
                approval_from_row,
            )
            .optional()?)
    }

    /// Pending approvals first (oldest first), then the most recent decided ones.
    pub fn list_approvals(&self, decided_limit: usize) -> Result<Vec<ApprovalRecord>, StoreError> {
        let conn = self.conn();
        let mut out: Vec<ApprovalRecord> = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE state = 'pending' ORDER BY created_ms, id"
            ))?
            .query_map([], approval_from_row)?
            .collect::<Result<_, _>>()?;
        let decided: Vec<ApprovalRecord> = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE state != 'pending'
                 ORDER BY coalesce(decided_ms, created_ms) DESC, id LIMIT ?1"
            ))?
            .query_map([decided_limit.min(1000) as i64], approval_from_row)?
            .collect::<Result<_, _>>()?;
        out.extend(decided);
        Ok(out)
    }

    /// Moves a pending approval to its final state. Returns `false` (and changes nothing) when it
    /// was no longer pending: a decision is taken once.
    pub fn decide_approval(
        &self,
        id: &str,
        state: &ApprovalState,
        decided_by: &str,
    ) -> Result<bool, StoreError> {
        if matches!(state, ApprovalState::Pending) {
            return Err(StoreError::Invalid("a decision cannot be `pending`".into()));
        }
        let reason = match state {
            ApprovalState::Denied(reason) => reason.clone(),
            _ => None,
        };
        let n = self.conn().execute(
            "UPDATE approvals SET state = ?2, decided_ms = ?3, decided_by = ?4, reason = ?5
             WHERE id = ?1 AND state = 'pending'",
            params![id, state.as_str(), now_ms(), decided_by, reason],
        )?;
        Ok(n == 1)
    }

    /// Marks every pending approval `aborted`: called when an engine starts, since no call can
    /// still be waiting for one made by a previous process.
    pub fn abort_pending_approvals(&self) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "UPDATE approvals SET state = 'aborted', decided_ms = ?1, decided_by = 'engine restart'
             WHERE state = 'pending'",
            [now_ms()],
        )?)
    }
}
