//! A caller's view of jobs: which it sees (those of its projects, running or remembered) and
//! which it may end. Any other job is "not found", exactly like one that does not exist.

use sluice_core::{ErrorCode, Failure, ProjectId};
use sluice_exec::{JobId, JobStatus};

use crate::exec::{STORED_JOBS_LISTED, refuse_exec_off};
use crate::{Caller, Engine};

impl Engine {
    /// A job of a project this caller sees, running or remembered (also from before a
    /// restart); any other is "not found".
    pub fn job_for(&self, caller: &Caller, id: &str) -> Result<JobStatus, Failure> {
        let not_found = || Failure::new(ErrorCode::NotFound, format!("no job {id:?}"));
        let status = match self.jobs.status(&sluice_exec::JobId(id.to_owned())) {
            Ok(status) => status,
            Err(_) => self.stored_job(id).ok_or_else(not_found)?,
        };
        match ProjectId::parse(&status.project) {
            Some(p) if self.find_project(p.as_str()).is_ok_and(|p| caller.sees(&p)) => Ok(status),
            _ => Err(not_found()),
        }
    }

    /// The job `id`, for a caller that wants to end it: found as [`Engine::job_for`] finds it,
    /// and refused unless the caller may run commands in its project now. Ending a job is a
    /// change: a token that limited itself, a hosted assistant reach exposes read-only, or any
    /// caller of a project whose execution is off ends nothing (also no finished job); and a
    /// hosted assistant that may write ends only the jobs it started itself.
    pub fn job_to_cancel(&self, caller: &Caller, id: &str) -> Result<JobStatus, Failure> {
        let status = self.job_for(caller, id)?;
        let handle = self.project(caller, &status.project)?;
        if caller.read_only && !handle.self_limited {
            return Err(Failure::new(
                ErrorCode::Forbidden,
                format!(
                    "reach exposes project {:?} read-only: a hosted assistant changes, runs and \
                     ends nothing there; only the user can widen reach in Sluice",
                    handle.name
                ),
            ));
        }
        refuse_exec_off(&handle)?;
        if caller.is_remote()
            && self.job_owner(&status.id).as_deref() != Some(caller.token_id.as_str())
        {
            return Err(Failure::new(
                ErrorCode::Forbidden,
                format!(
                    "job {} was not started by this hosted assistant, and a hosted assistant \
                     ends only the jobs it started; the user can end it in Sluice",
                    status.id
                ),
            ));
        }
        Ok(status)
    }

    /// Who started job `id` (a token id), from the registry or else the stored record.
    fn job_owner(&self, id: &JobId) -> Option<String> {
        match self.jobs.owner(id) {
            Ok(owner) => owner,
            Err(_) => self.store.job(&id.0).ok().flatten().and_then(|row| row.token_id),
        }
    }

    /// The jobs of the projects this caller sees, oldest first: the stored history (the newest
    /// [`STORED_JOBS_LISTED`], also from before a restart) followed by the registry's jobs.
    pub fn jobs_for(&self, caller: &Caller) -> Vec<JobStatus> {
        let visible: Vec<ProjectId> =
            self.visible_projects(caller).into_iter().map(|p| p.id).collect();
        let live: Vec<JobStatus> = self
            .jobs
            .list()
            .into_iter()
            .filter(|j| visible.iter().any(|p| p.as_str() == j.project))
            .collect();
        let mut all: Vec<JobStatus> = self
            .stored_jobs(&visible, STORED_JOBS_LISTED)
            .into_iter()
            .filter(|s| !live.iter().any(|l| l.id == s.id))
            .collect();
        all.extend(live);
        all
    }
}
