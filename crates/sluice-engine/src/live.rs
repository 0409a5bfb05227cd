//! Interactive jobs as the engine sees them: a session belongs to the token that started it.
//! Its output can hold whatever was typed into it (an interpreter echoes it), so no other
//! token reads it, and no other token types into it; typing is a change to a job, refused
//! where ending it would be ([`Engine::job_to_cancel`]). Input is audited by its size and a
//! keyed hash, never by its content.

use sluice_core::{ErrorCode, Failure};
use sluice_exec::JobStatus;
use sluice_store::{ActorKind, AuditRecord, Outcome as AuditOutcome};

use crate::{Caller, Durability, Engine};

impl Engine {
    /// The job `id` for reading its output: found as [`Engine::job_for`] finds it, and refused
    /// for an interactive job another token started.
    pub fn job_to_read(&self, caller: &Caller, id: &str) -> Result<JobStatus, Failure> {
        let status = self.job_for(caller, id)?;
        own_session(caller, &status)?;
        Ok(status)
    }

    /// The job `id` for typing into it: a change to a job ([`Engine::job_to_cancel`]), and
    /// only by the token that started it.
    pub fn job_to_write(&self, caller: &Caller, id: &str) -> Result<JobStatus, Failure> {
        let status = self.job_to_cancel(caller, id)?;
        own_session(caller, &status)?;
        Ok(status)
    }

    /// A port `id` publishes, for the caller to fetch from: the job as [`Engine::job_to_read`]
    /// finds it, still running, with `port` among its published ones. Returns the port on the
    /// host's loopback and the redactor the answer goes through, the one its output gets
    /// (secrets, and physical paths rewritten).
    pub fn port_to_fetch(
        &self,
        caller: &Caller,
        id: &str,
        port: u16,
    ) -> Result<(u16, sluice_core::redact::StreamRedactor), Failure> {
        let status = self.job_to_read(caller, id)?;
        let Some(published) = status.ports.iter().find(|p| p.port == port) else {
            let open: Vec<String> = status.ports.iter().map(|p| p.port.to_string()).collect();
            return Err(Failure::new(
                ErrorCode::PortNotPublished,
                format!(
                    "job {} does not publish port {port}{}; only ports a running job of this \
                     project published (start_job with `publish`) can be fetched",
                    status.id,
                    match open.is_empty() {
                        true => " (it publishes none now)".to_owned(),
                        false => format!(" (it publishes {})", open.join(", ")),
                    }
                ),
            ));
        };
        let redactor = self.jobs().redactor(&status.id).map_err(Failure::from)?;
        Ok((published.host_port, redactor))
    }

    /// Records input sent to a job: its size and a keyed hash of its bytes, never the bytes
    /// (an audit reader learns neither what was typed nor, by guessing, a short answer).
    /// `sent` is `None` when the program stopped reading part-way (some bytes may have gone).
    pub fn record_job_input(
        &self,
        caller: &Caller,
        job: &JobStatus,
        input: &[u8],
        sent: Option<usize>,
    ) {
        let hash = sluice_store::params_hash(&self.secret, input);
        let hex: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
        let record = AuditRecord {
            time_ms: sluice_store::now_ms(),
            actor: caller.label.clone(),
            actor_kind: ActorKind::Mcp,
            token_id: Some(caller.token_id.clone()),
            action: "job_input".to_owned(),
            project_id: sluice_core::ProjectId::parse(&job.project),
            outcome: AuditOutcome::Ok,
            error_code: None,
            duration_ms: None,
            params_hash: Some(hash),
            detail: Some(format!(
                "{} of {} bytes to {} (keyed hash {hex}…)",
                sent.map_or_else(|| "some".to_owned(), |n| n.to_string()),
                input.len(),
                job.id
            )),
        };
        self.audit.append(record, Durability::Now);
    }
}

/// Refuses an interactive job's session to every token but its owner's.
fn own_session(caller: &Caller, status: &JobStatus) -> Result<(), Failure> {
    if status.interactive.is_some() && status.owner.as_deref() != Some(caller.token_id.as_str()) {
        return Err(Failure::new(
            ErrorCode::Forbidden,
            format!(
                "job {} is an interactive session another token started: only that token can \
                 read its output or type into it",
                status.id
            ),
        ));
    }
    Ok(())
}
