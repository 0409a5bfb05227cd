//! The approval broker. A tool call whose policy says "ask" registers an approval for the exact
//! planned action (its fingerprint) and waits; the human decides from the window, the tray or
//! the CLI — possibly another process, so decisions travel through the database and the wait
//! polls it (cheaply, by primary key) besides being woken in-process. Each approval is decided
//! once; expiry, cancellation and pause all end it without running anything. Nothing a client
//! sends can decide one: there is no MCP path to [`Engine::decide`].

use std::time::Duration;

use sluice_core::{AutoRunHit, ChangeTally, ErrorCode, Failure, id::base32, random_bytes};
use sluice_store::{ActorKind, ApprovalRecord, ApprovalState, AuditRecord, Channel, RuleOrigin};
use tokio_util::sync::CancellationToken;

use crate::{AuditOutcome, Caller, Engine, EngineEvent, ProjectHandle, store_failure};

/// How long an approval waits for the human by default.
pub const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(300);

/// How often a waiting call looks for a decision made by another process.
const POLL: Duration = Duration::from_millis(100);

/// The human's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve,
    /// Approve, and always allow this exact command in this project from now on (commands
    /// only: the approval must be for a command). `from` is where the user chose it; the rule
    /// records it with the assistant that asked.
    ApproveAlways {
        from: Channel,
    },
    Deny {
        reason: Option<String>,
    },
}

/// What a tool call asks the human to approve.
pub struct AskRequest<'a> {
    pub caller: &'a Caller,
    pub project: &'a ProjectHandle,
    pub tool: &'a str,
    /// The exact action, one line per effect (see `Plan::summary`).
    pub summary: String,
    /// For a change to files, what it does, counted from its effects (`Plan::tally`): the one
    /// source of the risk every surface shows. `None` for commands.
    pub tally: Option<ChangeTally>,
    /// Why it asks: the policy, execution mode or auto-run list that requires the approval.
    pub asked_because: String,
    pub fingerprint: [u8; 32],
}

/// How the wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskOutcome {
    Approved { id: String },
    Denied { id: String, reason: Option<String> },
    Expired { id: String },
    Withdrawn { id: String },
}

impl AskOutcome {
    /// The refusal to return to the assistant, if the action must not run.
    pub fn refusal(&self) -> Option<Failure> {
        match self {
            AskOutcome::Approved { .. } => None,
            AskOutcome::Denied { reason, .. } => Some(Failure::new(
                ErrorCode::Denied,
                match reason {
                    Some(r) => format!("the user denied this action: {r}"),
                    None => "the user denied this action".to_owned(),
                },
            )),
            AskOutcome::Expired { .. } => Some(Failure::new(
                ErrorCode::ApprovalExpired,
                "the user did not answer the approval request in time; nothing was done",
            )),
            AskOutcome::Withdrawn { .. } => Some(Failure::new(
                ErrorCode::Denied,
                "the request was cancelled while waiting for approval; nothing was done",
            )),
        }
    }
}

fn new_id() -> String {
    format!("apr_{}", base32(&random_bytes::<10>()))
}

/// The audit detail of an approval, so the log alone says why something ran or did not: once
/// decided, the decision, who made it and the reason given; then why it asked, what a change
/// does and what runs on its own. Every part rendered by [`ApprovalRecord::shown`]; bounded.
fn approval_detail(r: &ApprovalRecord) -> Option<String> {
    const MAX: usize = 2000;
    let r = r.shown();
    let mut parts = Vec::new();
    if r.state != ApprovalState::Pending {
        let mut decided =
            format!("{} by {}", r.state.as_str(), r.decided_by.as_deref().unwrap_or("?"));
        if let ApprovalState::Denied(Some(reason)) = &r.state {
            decided.push_str(&format!(": {reason}"));
        }
        parts.push(decided);
    }
    if !r.asked_because.is_empty() {
        parts.push(format!("asked because {}", r.asked_because));
    }
    if let Some(tally) = &r.tally {
        parts.push(tally.class().class);
    }
    if !r.autorun.is_empty() {
        let lines: Vec<String> = r.autorun.iter().map(AutoRunHit::line).collect();
        parts.push(format!("runs on its own: {}", lines.join(" | ")));
    }
    if parts.is_empty() {
        return None;
    }
    let mut detail = parts.join("; ");
    if detail.len() > MAX {
        let mut end = MAX;
        while !detail.is_char_boundary(end) {
            end -= 1;
        }
        detail.truncate(end);
        detail.push('…');
    }
    Some(detail)
}

impl Engine {
    /// Registers an approval and waits for its outcome. `progress` is called at once, then
    /// every few seconds while waiting (the MCP layer turns it into progress notifications).
    pub async fn ask(
        &self,
        req: AskRequest<'_>,
        cancel: CancellationToken,
        progress: impl FnMut(Duration),
    ) -> Result<AskOutcome, Failure> {
        self.ask_change(req, Vec::new(), cancel, progress).await
    }

    /// [`Engine::ask`] for a change to files that touches auto-run paths (`Plan::autorun`): the
    /// approval carries each path with the program that runs it and what happens, for the
    /// window, the tray, the CLI and the audit log alike.
    pub async fn ask_change(
        &self,
        req: AskRequest<'_>,
        autorun: Vec<AutoRunHit>,
        cancel: CancellationToken,
        mut progress: impl FnMut(Duration),
    ) -> Result<AskOutcome, Failure> {
        let now = sluice_store::now_ms();
        let ttl = i64::try_from(self.approval_ttl.as_millis()).unwrap_or(i64::MAX);
        let record = ApprovalRecord {
            id: new_id(),
            project_id: req.project.id.clone(),
            project_name: req.project.name.clone(),
            token_id: req.caller.token_id.clone(),
            token_label: req.caller.label.clone(),
            tool: req.tool.to_owned(),
            // Every surface renders the summary line by line; whatever built it, no line can
            // carry a terminal escape, a second line or a bidi control into any of them.
            summary: sluice_core::text::visible_lines(&req.summary).into_owned(),
            autorun,
            tally: req.tally,
            asked_because: req.asked_because,
            fingerprint: req.fingerprint,
            created_ms: now,
            expires_ms: now.saturating_add(ttl),
            state: ApprovalState::Pending,
            decided_ms: None,
            decided_by: None,
        };
        self.store.insert_approval(&record).map_err(store_failure)?;
        let id = record.id.clone();
        self.record_approval_audit(&record, "approval.requested", AuditOutcome::Ok, None);
        self.emit(EngineEvent::ApprovalRequested { id: id.clone() });
        let started = std::time::Instant::now();
        let expires = tokio::time::Instant::now() + self.approval_ttl;
        // The first report goes out at once: it opens the client's response stream, so a
        // client with a short timeout hears that the call is waiting, not silence.
        progress(Duration::ZERO);
        let mut last_progress = std::time::Instant::now();
        loop {
            if let Some(done) = self.outcome_of(&id)? {
                return Ok(done);
            }
            let notified = self.decided.notified();
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(POLL) => {}
                _ = tokio::time::sleep_until(expires) => {
                    return self.finish(&id, ApprovalState::Expired, "expiry", AskOutcome::Expired { id: id.clone() });
                }
                _ = cancel.cancelled() => {
                    return self.finish(&id, ApprovalState::Withdrawn, req.caller.label.as_str(), AskOutcome::Withdrawn { id: id.clone() });
                }
            }
            if last_progress.elapsed() >= Duration::from_secs(5) {
                last_progress = std::time::Instant::now();
                progress(started.elapsed());
            }
        }
    }

    /// Ends a pending approval without a human decision (expiry, withdrawal); if the human
    /// decided in the meantime, their decision stands.
    fn finish(
        &self,
        id: &str,
        state: ApprovalState,
        by: &str,
        outcome: AskOutcome,
    ) -> Result<AskOutcome, Failure> {
        if self.store.decide_approval(id, &state, by).map_err(store_failure)? {
            if let Ok(Some(r)) = self.store.approval(id) {
                self.record_approval_audit(
                    &r,
                    &format!("approval.{}", state.as_str()),
                    AuditOutcome::Denied,
                    None,
                );
            }
            self.emit(EngineEvent::ApprovalDecided { id: id.to_owned(), state: state.as_str() });
            return Ok(outcome);
        }
        Ok(self.outcome_of(id)?.unwrap_or(outcome))
    }

    fn outcome_of(&self, id: &str) -> Result<Option<AskOutcome>, Failure> {
        let Some(r) = self.store.approval(id).map_err(store_failure)? else {
            return Err(Failure::internal());
        };
        let id = id.to_owned();
        Ok(match r.state {
            ApprovalState::Pending => None,
            ApprovalState::Approved => Some(AskOutcome::Approved { id }),
            ApprovalState::Denied(reason) => Some(AskOutcome::Denied { id, reason }),
            ApprovalState::Expired => Some(AskOutcome::Expired { id }),
            ApprovalState::Withdrawn | ApprovalState::Aborted => Some(AskOutcome::Withdrawn { id }),
        })
    }

    /// Pending approvals (oldest first), then recent decisions.
    pub fn approvals(&self) -> Result<Vec<ApprovalRecord>, Failure> {
        self.store.list_approvals(50).map_err(store_failure)
    }

    pub fn approval(&self, id: &str) -> Result<ApprovalRecord, Failure> {
        self.store
            .approval(id)
            .map_err(store_failure)?
            .ok_or_else(|| Failure::new(ErrorCode::NotFound, format!("no approval {id:?}")))
    }

    /// The human decides. Refused when the approval is no longer pending (decided, expired,
    /// withdrawn) — each approval is used at most once — or when AI access is paused, since an
    /// approval granted while paused would run on resume without the user looking again.
    pub fn decide(
        &self,
        id: &str,
        decision: Decision,
        actor: &str,
    ) -> Result<ApprovalRecord, Failure> {
        let current = self.approval(id)?;
        if current.state != ApprovalState::Pending {
            return Err(Failure::new(
                ErrorCode::Conflict,
                format!(
                    "approval {id} is already {}; each approval is decided once",
                    current.state.as_str()
                ),
            ));
        }
        if current.expires_ms <= sluice_store::now_ms() {
            return Err(Failure::new(ErrorCode::Conflict, format!("approval {id} has expired")));
        }
        let approving = matches!(decision, Decision::Approve | Decision::ApproveAlways { .. });
        if approving && self.is_paused()? {
            return Err(Failure::new(
                ErrorCode::Paused,
                "AI access is paused; resume it before approving (or deny the request)",
            ));
        }
        // Look the command up first: "always" for something that is not a command is refused
        // and the approval stays pending.
        let rule = match decision {
            Decision::ApproveAlways { from } => {
                let origin =
                    RuleOrigin { from: Some(from), asked_by: Some(current.token_label.clone()) };
                Some((self.offered_rule(&current)?, origin))
            }
            _ => None,
        };
        let (state, outcome) = match &decision {
            Decision::Approve => (ApprovalState::Approved, AuditOutcome::Ok),
            Decision::ApproveAlways { .. } => (ApprovalState::Approved, AuditOutcome::Ok),
            Decision::Deny { reason } => {
                let reason = reason.as_deref().map(crate::clean_reason).filter(|r| !r.is_empty());
                (ApprovalState::Denied(reason), AuditOutcome::Denied)
            }
        };
        if !self.store.decide_approval(id, &state, actor).map_err(store_failure)? {
            return Err(Failure::new(
                ErrorCode::Conflict,
                format!("approval {id} was decided meanwhile"),
            ));
        }
        let decided = self.approval(id)?;
        if let Some((rule, origin)) = &rule {
            // The approved call itself runs on the approval (its fingerprint is unchanged); the
            // rule is for the next identical command.
            self.add_allow_rule(&decided.project_id, rule, origin)?;
        }
        self.record_approval_decision(&decided, outcome);
        self.decided.notify_waiters();
        self.emit(EngineEvent::ApprovalDecided { id: id.to_owned(), state: state.as_str() });
        Ok(decided)
    }

    /// The audit entry of a decision not left to the assistant (the user's, or one made for
    /// them: a revoked token, an emergency stop): the decision, who made it, why it asked.
    pub(crate) fn record_approval_decision(&self, decided: &ApprovalRecord, outcome: AuditOutcome) {
        self.record_human_detail(
            &format!("approval.{}", decided.state.as_str()),
            Some(&decided.project_id),
            outcome,
            None,
            approval_detail(decided),
        );
    }

    pub(crate) fn record_approval_audit(
        &self,
        r: &ApprovalRecord,
        action: &str,
        outcome: AuditOutcome,
        code: Option<&str>,
    ) {
        // The assistant's side of the approval: its request, and how it ended without a human
        // decision. Written at once (a denial might be someone probing; a request is what the
        // user is about to decide on).
        let record = AuditRecord {
            time_ms: sluice_store::now_ms(),
            actor: r.token_label.clone(),
            actor_kind: ActorKind::Mcp,
            token_id: Some(r.token_id.clone()),
            action: action.to_owned(),
            project_id: Some(r.project_id.clone()),
            outcome,
            error_code: code.map(str::to_owned),
            duration_ms: Some(0),
            params_hash: None,
            detail: approval_detail(r),
        };
        self.audit.append(record, crate::Durability::Now);
    }
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
