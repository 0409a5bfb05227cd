//! The audit log, page by page, and the check of its chain.

use serde::{Deserialize, Serialize};
use sluice_engine::{AuditEntry, AuditOutcome};
use ts_rs::TS;

use super::token::name_of;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Ok,
    Denied,
    Error,
}

impl From<Outcome> for AuditOutcome {
    fn from(o: Outcome) -> AuditOutcome {
        match o {
            Outcome::Ok => AuditOutcome::Ok,
            Outcome::Denied => AuditOutcome::Denied,
            Outcome::Error => AuditOutcome::Error,
        }
    }
}

impl From<AuditOutcome> for Outcome {
    fn from(o: AuditOutcome) -> Outcome {
        match o {
            AuditOutcome::Ok => Outcome::Ok,
            AuditOutcome::Denied => Outcome::Denied,
            AuditOutcome::Error => Outcome::Error,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditQuery {
    /// A project id or name.
    pub project: Option<String>,
    /// A token id.
    pub token: Option<String>,
    /// A tool or action name, matched exactly.
    pub action: Option<String>,
    pub outcome: Option<Outcome>,
    pub limit: u32,
    /// Entries older than this sequence number (paging back).
    #[ts(type = "number | null")]
    pub before_seq: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryDto {
    #[ts(type = "number")]
    pub seq: u64,
    #[ts(type = "number")]
    pub time_ms: i64,
    /// The token's label, or "local user".
    pub actor: String,
    pub by_assistant: bool,
    pub token_id: Option<String>,
    pub action: String,
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    pub outcome: Outcome,
    pub error_code: Option<String>,
    #[ts(type = "number | null")]
    pub duration_ms: Option<u64>,
    /// A line Sluice wrote about the entry: for an approval, what would run on its own.
    pub detail: Option<String>,
}

impl AuditEntryDto {
    pub(crate) fn new(e: &AuditEntry, names: &[(String, String)]) -> AuditEntryDto {
        let r = &e.record;
        AuditEntryDto {
            seq: e.seq,
            time_ms: r.time_ms,
            actor: r.actor.clone(),
            by_assistant: matches!(r.actor_kind, sluice_engine::ActorKind::Mcp),
            token_id: r.token_id.as_ref().map(|t| t.as_str().to_owned()),
            action: r.action.clone(),
            project_id: r.project_id.as_ref().map(|p| p.as_str().to_owned()),
            project_name: r.project_id.as_ref().and_then(|p| name_of(names, p.as_str())),
            outcome: r.outcome.into(),
            error_code: r.error_code.clone(),
            duration_ms: r.duration_ms,
            detail: r.detail.as_deref().map(crate::visible),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditPage {
    pub entries: Vec<AuditEntryDto>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChainStatus {
    #[ts(type = "number")]
    pub entries: u64,
    pub intact: bool,
    /// The first entry that does not verify.
    #[ts(type = "number | null")]
    pub break_at: Option<u64>,
    pub break_reason: Option<String>,
}
