//! Job metadata: what ran, where, for whom, and how it ended. Written on every state change so
//! `job_status` and `list_jobs` answer after a restart; a job the store still calls queued or
//! running when a new engine starts serving is marked `lost` (its processes died with the old
//! engine). Output is never stored.

use rusqlite::{OptionalExtension, Row, params};
use sluice_core::ProjectId;

use crate::{Store, StoreError};

/// One job as stored. `state` is the job's kebab-case state (`running`, `timed-out`, `lost`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRow {
    pub id: String,
    pub project_id: String,
    pub token_id: Option<String>,
    /// The resolved argv for display.
    pub command: String,
    /// The normalized project-relative working folder (`""`: the root).
    pub cwd: String,
    pub state: String,
    pub error: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub created_ms: i64,
    pub started_ms: Option<i64>,
    pub ended_ms: Option<i64>,
    /// Published ports while it runs: `port:host_port` pairs, comma-separated.
    pub ports: Option<String>,
}

const COLUMNS: &str = "id, project_id, token_id, command, cwd, state, error, exit_code, signal, \
                       created_ms, started_ms, ended_ms, ports";

/// Jobs kept in the table; older finished ones are deleted by [`Store::prune_jobs`].
pub const JOBS_KEPT: usize = 1000;

impl Store {
    /// Inserts a job or updates its state, error, exit and times. The command, folder, project
    /// and owner are those of the first write: a job never changes what it is.
    pub fn upsert_job(&self, job: &JobRow) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO jobs (id, project_id, token_id, command, cwd, state, error, exit_code,
                               signal, created_ms, started_ms, ended_ms, ports)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (id) DO UPDATE SET
                 state = excluded.state, error = excluded.error, exit_code = excluded.exit_code,
                 ports = excluded.ports,
                 signal = excluded.signal, started_ms = coalesce(excluded.started_ms, started_ms),
                 ended_ms = coalesce(excluded.ended_ms, ended_ms)",
            params![
                job.id,
                job.project_id,
                job.token_id,
                job.command,
                job.cwd,
                job.state,
                job.error,
                job.exit_code,
                job.signal,
                job.created_ms,
                job.started_ms,
                job.ended_ms,
                job.ports
            ],
        )?;
        Ok(())
    }

    pub fn job(&self, id: &str) -> Result<Option<JobRow>, StoreError> {
        let conn = self.conn();
        let sql = format!("SELECT {COLUMNS} FROM jobs WHERE id = ?1");
        Ok(conn.query_row(&sql, [id], job_from_row).optional()?)
    }

    /// The newest `limit` jobs of `projects` (all projects when `None`), oldest first.
    pub fn list_jobs(
        &self,
        projects: Option<&[ProjectId]>,
        limit: usize,
    ) -> Result<Vec<JobRow>, StoreError> {
        let filter = projects
            .map(|p| serde_json::to_string(&p.iter().map(ProjectId::as_str).collect::<Vec<_>>()))
            .transpose()
            .map_err(|e| StoreError::Invalid(format!("bad project list: {e}")))?;
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM jobs
             WHERE ?1 IS NULL OR project_id IN (SELECT value FROM json_each(?1))
             ORDER BY created_ms DESC, id DESC LIMIT ?2"
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![filter, limit], job_from_row)?;
        let mut jobs: Vec<JobRow> = rows.collect::<Result<_, _>>()?;
        jobs.reverse();
        Ok(jobs)
    }

    /// Marks every job still recorded as queued or running as `lost` with `reason`: called by
    /// a newly serving engine, whose registry is empty, so no such job can still be alive.
    /// Returns how many were marked.
    pub fn mark_lost_jobs(&self, reason: &str, now_ms: i64) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "UPDATE jobs SET state = 'lost', error = ?1, ended_ms = ?2, ports = NULL
             WHERE state IN ('queued', 'running')",
            params![reason, now_ms],
        )?)
    }

    /// Deletes the oldest finished jobs beyond `keep`. Returns how many were deleted.
    pub fn prune_jobs(&self, keep: usize) -> Result<usize, StoreError> {
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        Ok(self.conn().execute(
            "DELETE FROM jobs WHERE state NOT IN ('queued', 'running') AND id NOT IN
                 (SELECT id FROM jobs ORDER BY created_ms DESC, id DESC LIMIT ?1)",
            [keep],
        )?)
    }
}

fn job_from_row(r: &Row<'_>) -> rusqlite::Result<JobRow> {
    Ok(JobRow {
        id: r.get(0)?,
        project_id: r.get(1)?,
        token_id: r.get(2)?,
        command: r.get(3)?,
        cwd: r.get(4)?,
        state: r.get(5)?,
        error: r.get(6)?,
        exit_code: r.get(7)?,
        signal: r.get(8)?,
        created_ms: r.get(9)?,
        started_ms: r.get(10)?,
        ended_ms: r.get(11)?,
        ports: r.get(12)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, project: &str, state: &str, created: i64) -> JobRow {
        JobRow {
            id: id.into(),
            project_id: project.into(),
            token_id: Some("tok_a".into()),
            command: "/usr/bin/cargo test".into(),
            cwd: String::new(),
            state: state.into(),
            error: None,
            exit_code: None,
            signal: None,
            created_ms: created,
            started_ms: None,
            ended_ms: None,
            ports: None,
        }
    }

    #[test]
    fn jobs_are_upserted_listed_by_project_marked_lost_and_pruned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let (p1, p2) = (ProjectId::generate(), ProjectId::generate());
        store.upsert_job(&row("job_a", p1.as_str(), "queued", 1)).expect("insert");
        let running = JobRow {
            state: "running".into(),
            started_ms: Some(5),
            ports: Some("8000:41234".into()),
            ..row("job_a", p1.as_str(), "running", 1)
        };
        store.upsert_job(&running).expect("update");
        let stored = store.job("job_a").expect("read").expect("there");
        assert_eq!(stored.ports.as_deref(), Some("8000:41234"));
        // A later write cannot change what the job is, and keeps the start time.
        let done = JobRow {
            command: "other".into(),
            state: "failed".into(),
            exit_code: Some(3),
            ended_ms: Some(9),
            ..row("job_a", p2.as_str(), "failed", 1)
        };
        store.upsert_job(&done).expect("finish");
        let got = store.job("job_a").expect("get").expect("present");
        assert_eq!(
            (got.project_id.as_str(), got.command.as_str(), got.state.as_str()),
            (p1.as_str(), "/usr/bin/cargo test", "failed")
        );
        assert_eq!((got.exit_code, got.started_ms, got.ended_ms), (Some(3), Some(5), Some(9)));

        store.upsert_job(&row("job_b", p2.as_str(), "running", 2)).expect("b");
        store.upsert_job(&row("job_c", p1.as_str(), "queued", 3)).expect("c");
        let ids = |v: Vec<JobRow>| v.into_iter().map(|j| j.id).collect::<Vec<_>>();
        assert_eq!(ids(store.list_jobs(None, 10).expect("all")), ["job_a", "job_b", "job_c"]);
        assert_eq!(
            ids(store.list_jobs(Some(std::slice::from_ref(&p1)), 10).expect("p1")),
            ["job_a", "job_c"]
        );
        assert_eq!(ids(store.list_jobs(Some(&[]), 10).expect("none")), Vec::<String>::new());
        assert_eq!(ids(store.list_jobs(None, 2).expect("newest")), ["job_b", "job_c"]);

        assert_eq!(store.mark_lost_jobs("engine restarted", 42).expect("lost"), 2);
        let b = store.job("job_b").expect("get").expect("present");
        assert_eq!(
            (b.state.as_str(), b.error.as_deref(), b.ended_ms),
            ("lost", Some("engine restarted"), Some(42))
        );
        assert_eq!(store.job("job_a").expect("get").expect("a").state, "failed");

        assert_eq!(store.prune_jobs(1).expect("prune"), 2);
        assert_eq!(ids(store.list_jobs(None, 10).expect("left")), ["job_c"]);
        // The CHECK constraint refuses a state that is not one.
        assert!(store.upsert_job(&row("job_d", p1.as_str(), "exploded", 4)).is_err());
    }
}
