//! MCP tasks, as the engine keeps them: created durably before the client hears of them, ended
//! once, visible only to the token that created them and only while it still sees the project,
//! forgotten after [`TASK_TTL`]. A task the previous engine left working is failed at the next
//! start: its call ended with that process. What a task's call returned is not kept here (see
//! `sluice_store::TaskRow`): the MCP layer holds it in memory.

use std::time::Duration;

use sluice_core::id::{base32, random_bytes};
use sluice_core::{ErrorCode, Failure, ProjectId};
use sluice_store::{TaskRow, TaskStatus};

use crate::{Caller, Engine, ProjectHandle, store_failure};

/// How long a task is remembered after its creation.
pub const TASK_TTL: Duration = Duration::from_secs(24 * 3600);

/// Why a task the previous engine left working failed.
pub const TASK_LOST_REASON: &str =
    "Sluice stopped (restart or crash) before this task finished; whatever it ran ended with it";

impl Engine {
    /// Records a new working task for `caller`'s call of `tool` in `project`; committed when
    /// this returns.
    pub fn create_task(
        &self,
        caller: &Caller,
        project: &ProjectHandle,
        tool: &str,
    ) -> Result<TaskRow, Failure> {
        let now = sluice_store::now_ms();
        let task = TaskRow {
            id: format!("tsk_{}", base32(&random_bytes::<16>())),
            project_id: project.id.as_str().to_owned(),
            token_id: caller.token_id.as_str().to_owned(),
            tool: tool.to_owned(),
            status: TaskStatus::Working,
            error: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: TASK_TTL.as_millis() as i64,
        };
        self.store.insert_task(&task).map_err(store_failure)?;
        Ok(task)
    }

    /// Ends a working task (the first end stands).
    pub fn end_task(&self, id: &str, status: TaskStatus, error: Option<&str>) {
        if let Err(err) = self.store.end_task(id, status, error, sluice_store::now_ms()) {
            tracing::error!(%err, task = id, "could not record a task's end");
        }
    }

    /// A task this caller created, in a project it still sees, not yet expired; any other is
    /// "not found", whether it exists or not.
    pub fn task_for(&self, caller: &Caller, id: &str) -> Result<TaskRow, Failure> {
        let not_found = || Failure::new(ErrorCode::NotFound, format!("no task {id:?}"));
        let task = self.store.task(id).map_err(store_failure)?.ok_or_else(not_found)?;
        let visible = task.token_id == caller.token_id.as_str()
            && task.created_ms.saturating_add(task.ttl_ms) >= sluice_store::now_ms()
            && ProjectId::parse(&task.project_id)
                .is_some_and(|p| self.find_project(p.as_str()).is_ok_and(|p| caller.sees(&p)));
        if visible { Ok(task) } else { Err(not_found()) }
    }

    /// At the start of serving: fails what a previous engine left working, forgets what expired.
    pub(crate) fn recover_tasks(&self) {
        let now = sluice_store::now_ms();
        match self.store.fail_unfinished_tasks(TASK_LOST_REASON, now) {
            Ok(0) => {}
            Ok(n) => tracing::warn!(tasks = n, "tasks of a previous run were failed"),
            Err(err) => tracing::error!(%err, "could not fail the tasks of a previous run"),
        }
        if let Err(err) = self.store.prune_tasks(now) {
            tracing::warn!(%err, "could not prune expired tasks");
        }
    }
}
