//! MCP tasks (the `io.modelcontextprotocol/tasks` extension): one row per tool call a client
//! asked to run as a task. The row exists before the client hears the task's id, so the handle
//! survives a restart; it holds what the call is and how it ended, never what it returned —
//! results carry command output and file contents, which are never written here, so they live
//! only in the serving engine's memory.

use rusqlite::{OptionalExtension, Row, params};

use crate::{Store, StoreError};

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Working,
    /// The call returned a result (which may itself be a refusal, `is_error`).
    Completed {
        is_error: bool,
    },
    /// The call failed at the protocol level, or Sluice stopped before it finished.
    Failed,
    Cancelled,
}

impl TaskStatus {
    fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::Completed { .. } => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    pub fn is_terminal(self) -> bool {
        self != TaskStatus::Working
    }
}

/// One task as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRow {
    /// Unguessable (`tsk_` and 128 random bits): knowing a task's id is never enough to see it,
    /// but a guessed one must not even exist.
    pub id: String,
    pub project_id: String,
    pub token_id: String,
    pub tool: String,
    pub status: TaskStatus,
    /// Why it failed, when it did (a sentence for the reader; no content).
    pub error: Option<String>,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// How long after its creation the task may be forgotten.
    pub ttl_ms: i64,
}

const COLUMNS: &str =
    "id, project_id, token_id, tool, status, is_error, error, created_ms, updated_ms, ttl_ms";

impl Store {
    /// Records a new task (`working`); committed when this returns.
    pub fn insert_task(&self, task: &TaskRow) -> Result<(), StoreError> {
        let is_error = matches!(task.status, TaskStatus::Completed { is_error: true });
        self.conn().execute(
            &format!(
                "INSERT INTO tasks ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
            ),
            params![
                task.id,
                task.project_id,
                task.token_id,
                task.tool,
                task.status.as_str(),
                is_error,
                task.error,
                task.created_ms,
                task.updated_ms,
                task.ttl_ms
            ],
        )?;
        Ok(())
    }

    /// Ends a working task; a task that already ended keeps its first end. Returns whether it
    /// was still working.
    pub fn end_task(
        &self,
        id: &str,
        status: TaskStatus,
        error: Option<&str>,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let is_error = matches!(status, TaskStatus::Completed { is_error: true });
        let changed = self.conn().execute(
            "UPDATE tasks SET status = ?2, is_error = ?3, error = ?4, updated_ms = ?5
             WHERE id = ?1 AND status = 'working'",
            params![id, status.as_str(), is_error, error, now_ms],
        )?;
        Ok(changed == 1)
    }

    pub fn task(&self, id: &str) -> Result<Option<TaskRow>, StoreError> {
        let conn = self.conn();
        let sql = format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1");
        conn.query_row(&sql, [id], task_from_row).optional()?.transpose()
    }

    /// Fails every task still working with `reason`: called by a newly serving engine, since
    /// the calls behind them ended with the previous one. Returns how many.
    pub fn fail_unfinished_tasks(&self, reason: &str, now_ms: i64) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "UPDATE tasks SET status = 'failed', error = ?1, updated_ms = ?2
             WHERE status = 'working'",
            params![reason, now_ms],
        )?)
    }

    /// Deletes the tasks whose time to live has passed. Returns how many.
    pub fn prune_tasks(&self, now_ms: i64) -> Result<usize, StoreError> {
        Ok(self.conn().execute("DELETE FROM tasks WHERE created_ms + ttl_ms < ?1", [now_ms])?)
    }
}

fn task_from_row(r: &Row<'_>) -> rusqlite::Result<Result<TaskRow, StoreError>> {
    let status: String = r.get(4)?;
    let is_error: bool = r.get(5)?;
    let status = match status.as_str() {
        "working" => TaskStatus::Working,
        "completed" => TaskStatus::Completed { is_error },
        "failed" => TaskStatus::Failed,
        "cancelled" => TaskStatus::Cancelled,
        other => return Ok(Err(StoreError::Invalid(format!("unknown task status {other:?}")))),
    };
    Ok(Ok(TaskRow {
        id: r.get(0)?,
        project_id: r.get(1)?,
        token_id: r.get(2)?,
        tool: r.get(3)?,
        status,
        error: r.get(6)?,
        created_ms: r.get(7)?,
        updated_ms: r.get(8)?,
        ttl_ms: r.get(9)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, created: i64) -> TaskRow {
        TaskRow {
            id: id.into(),
            project_id: "proj_a".into(),
            token_id: "tok_a".into(),
            tool: "run_command".into(),
            status: TaskStatus::Working,
            error: None,
            created_ms: created,
            updated_ms: created,
            ttl_ms: 1000,
        }
    }

    #[test]
    fn a_task_ends_once_and_unfinished_ones_fail_at_the_next_start() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        store.insert_task(&row("tsk_1", 10)).unwrap();
        store.insert_task(&row("tsk_2", 10)).unwrap();
        assert!(
            store.end_task("tsk_1", TaskStatus::Completed { is_error: true }, None, 20).unwrap()
        );
        // The first end stands: a late cancel does not turn a result into a cancellation.
        assert!(!store.end_task("tsk_1", TaskStatus::Cancelled, None, 30).unwrap());
        let t = store.task("tsk_1").unwrap().unwrap();
        assert_eq!((t.status, t.updated_ms), (TaskStatus::Completed { is_error: true }, 20));
        assert_eq!(store.fail_unfinished_tasks("stopped", 40).unwrap(), 1);
        let t = store.task("tsk_2").unwrap().unwrap();
        assert_eq!((t.status, t.error.as_deref()), (TaskStatus::Failed, Some("stopped")));
        assert_eq!(store.prune_tasks(1011).unwrap(), 2);
        assert!(store.task("tsk_1").unwrap().is_none());
    }
}
