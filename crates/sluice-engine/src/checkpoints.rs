//! The user's side of checkpoints (the CLI, later the window): listing and restoring a
//! project's checkpoints by project reference. The user needs no approval, but the restore is
//! the same plan and commit an assistant's goes through (all or nothing, refused on a
//! concurrent change, undoable with `restore`) and is audited as the user's act.

use sluice_core::{Coded, ErrorCode, Failure};
use sluice_runner::{
    CheckpointInfo, CreateCheckpointArgs, ListCheckpointsOutput, MutationOutput,
    RestoreCheckpointArgs, RunnerError,
};

use crate::{AuditOutcome, Engine};

fn runner_failure(e: RunnerError) -> Failure {
    Failure::new(e.code(), e.to_string())
}

impl Engine {
    /// A project's checkpoints, newest first.
    pub fn checkpoints(&self, reference: &str) -> Result<ListCheckpointsOutput, Failure> {
        let project = self.find_project(reference)?;
        self.mutations_for(&project)?.list_checkpoints().map_err(runner_failure)
    }

    /// A project's checkpoints, newest first, without the space they take.
    pub fn checkpoint_infos(&self, reference: &str) -> Result<Vec<CheckpointInfo>, Failure> {
        let project = self.find_project(reference)?;
        self.mutations_for(&project)?.checkpoint_infos().map_err(runner_failure)
    }

    /// Takes a checkpoint of a project for the user.
    pub fn create_checkpoint(
        &self,
        reference: &str,
        args: &CreateCheckpointArgs,
    ) -> Result<CheckpointInfo, Failure> {
        let project = self.find_project(reference)?;
        self.mutations_for(&project)?.create_checkpoint(args, None).map_err(runner_failure)
    }

    /// Puts a project's tree back as checkpoint `id` holds it, for the user.
    pub fn restore_checkpoint(&self, reference: &str, id: &str) -> Result<MutationOutput, Failure> {
        let project = self.find_project(reference)?;
        if !project.state.is_available() {
            return Err(Failure::new(
                ErrorCode::ProjectUnavailable,
                format!("project {:?} is not available right now", project.name),
            ));
        }
        let m = self.mutations_for(&project)?;
        let args = RestoreCheckpointArgs { checkpoint_id: id.to_owned() };
        let result = m.plan_restore_checkpoint(&args).and_then(|plan| m.commit(&plan));
        let (outcome, code) = match &result {
            Ok(_) => (AuditOutcome::Ok, None),
            Err(e) => (AuditOutcome::Error, Some(e.code().to_string())),
        };
        self.record_human_detail(
            "checkpoint.restore",
            Some(&project.id),
            outcome,
            code.as_deref(),
            Some(id.to_owned()),
        );
        result.map_err(runner_failure)
    }
}

/// Debug builds only: `SLUICE_FAILPOINT_CHECKPOINT_MAX_ENTRIES=N` makes every project "too large"
/// for a checkpoint of more than N entries, so an end-to-end test can see a command run without
/// one. Release builds do not contain it.
#[cfg(debug_assertions)]
pub(crate) fn failpoint(m: sluice_runner::Mutations) -> sluice_runner::Mutations {
    match std::env::var("SLUICE_FAILPOINT_CHECKPOINT_MAX_ENTRIES").ok().and_then(|v| v.parse().ok())
    {
        Some(max_entries) => m.with_checkpoint_limits(sluice_runner::CheckpointLimits {
            max_entries,
            ..Default::default()
        }),
        None => m,
    }
}
