//! Persisted job metadata. The job registry reports every state change of every job (queued,
//! running, final) to an observer; the observer hands the record to one writer thread, so the
//! registry never waits for the database (a start racing an emergency stop holds the
//! registry's lock). The store then answers `job_status` and `list_jobs` for jobs the registry
//! no longer holds: pruned ones, and those of an engine that ran before this one. Logs are
//! never persisted.
//!
//! A new serving engine marks every job the store still calls queued or running as `lost`:
//! its registry starts empty, and the old engine's processes died with it (they are started
//! with a parent-death signal and the engine is their subreaper).

use std::sync::{Arc, mpsc};
use std::time::Duration;

use sluice_exec::{JobId, JobObserver, JobRecord, JobState, JobStatus};
use sluice_store::{JOBS_KEPT, JobRow, Store};

use crate::Engine;

/// The reason recorded on jobs an engine restart found unfinished.
pub const LOST_REASON: &str =
    "Sluice stopped (restart or crash) before the job finished; its processes ended with it";

/// How many records the writer writes between two prunes of the table.
const PRUNE_EVERY: usize = 500;

/// An observer that writes each record to `store` on a writer thread of its own.
pub(crate) fn observer(store: Arc<Store>) -> JobObserver {
    let (tx, rx) = mpsc::channel::<JobRecord>();
    let started = std::thread::Builder::new().name("sluice-job-store".into()).spawn(move || {
        for (n, record) in rx.into_iter().enumerate() {
            if let Err(err) = store.upsert_job(&row(&record)) {
                tracing::warn!(%err, job = %record.id, "could not record a job's state");
            }
            // A long-running engine keeps the table bounded too, not only at start.
            if n % PRUNE_EVERY == PRUNE_EVERY - 1 {
                let _ = store.prune_jobs(JOBS_KEPT);
            }
        }
    });
    if let Err(err) = started {
        tracing::error!(%err, "cannot start the job writer; job history will not persist");
    }
    Arc::new(move |record: &JobRecord| {
        // A send fails only when the writer is gone; the job itself is unaffected.
        let _ = tx.send(record.clone());
    })
}

fn row(r: &JobRecord) -> JobRow {
    JobRow {
        id: r.id.0.clone(),
        project_id: r.project.clone(),
        token_id: r.owner.clone(),
        // An argument may carry a token an assistant pasted: stored redacted, like the logs.
        command: sluice_core::redact::redact(&r.command).into_owned(),
        cwd: r.cwd.clone(),
        state: r.state.as_str().to_owned(),
        error: r.error.clone(),
        exit_code: r.exit_code,
        signal: r.signal,
        created_ms: r.created_ms,
        started_ms: r.started_ms,
        ended_ms: r.ended_ms,
        ports: (!r.ports.is_empty()).then(|| {
            let pairs: Vec<String> =
                r.ports.iter().map(|p| format!("{}:{}", p.port, p.host_port)).collect();
            pairs.join(",")
        }),
    }
}

/// A stored job as a status (no output counters, no samples: they lived in memory).
pub(crate) fn status(row: JobRow) -> Option<JobStatus> {
    let (state, lost) = match row.state.as_str() {
        "lost" => (JobState::Failed, true),
        other => (JobState::parse(other)?, false),
    };
    let runtime = match (row.started_ms, row.ended_ms) {
        (Some(s), Some(e)) if e >= s => Some(Duration::from_millis((e - s) as u64)),
        _ => None,
    };
    Some(JobStatus {
        id: JobId(row.id),
        project: row.project_id,
        command: row.command,
        state,
        exit_code: row.exit_code,
        signal: row.signal,
        error: row.error,
        started_ms: row.started_ms,
        runtime,
        stdout_bytes: 0,
        stderr_bytes: 0,
        dropped_bytes: 0,
        confinement: None,
        sample: None,
        lost,
        owner: row.token_id,
        interactive: None,
        ports: Vec::new(),
        checkpoint: None,
    })
}

impl Engine {
    /// At the start of serving: marks what a previous engine left unfinished as lost, and
    /// keeps the table bounded.
    pub(crate) fn recover_jobs(&self) {
        match self.store.mark_lost_jobs(LOST_REASON, sluice_store::now_ms()) {
            Ok(0) => {}
            Ok(n) => tracing::warn!(jobs = n, "jobs of a previous run were marked lost"),
            Err(err) => tracing::error!(%err, "could not mark the jobs of a previous run lost"),
        }
        if let Err(err) = self.store.prune_jobs(JOBS_KEPT) {
            tracing::warn!(%err, "could not prune old job records");
        }
    }

    /// The job history for the local user (CLI, window): the newest `limit` stored jobs of one
    /// project or of all, oldest first. Jobs of this process's registry are there too: every
    /// state change is written.
    pub fn job_history(
        &self,
        project: Option<&sluice_core::ProjectId>,
        limit: usize,
    ) -> Result<Vec<JobRow>, sluice_core::Failure> {
        let only = project.map(std::slice::from_ref);
        self.store.list_jobs(only, limit).map_err(crate::store_failure)
    }

    /// A stored job, when the registry no longer holds it.
    pub(crate) fn stored_job(&self, id: &str) -> Option<JobStatus> {
        self.store.job(id).ok().flatten().and_then(status)
    }

    /// The newest `limit` stored jobs of `projects`, oldest first.
    pub(crate) fn stored_jobs(
        &self,
        projects: &[sluice_core::ProjectId],
        limit: usize,
    ) -> Vec<JobStatus> {
        match self.store.list_jobs(Some(projects), limit) {
            Ok(rows) => rows.into_iter().filter_map(status).collect(),
            Err(err) => {
                tracing::warn!(%err, "could not read stored jobs");
                Vec::new()
            }
        }
    }
}

// Its jobs are `sh` (on Windows a job runs only as the sandbox account: docs/SANDBOX.md).
#[cfg(all(test, unix))]
mod tests {
    use sluice_core::{AccessMode, ErrorCode, ExecMode};
    use sluice_exec::CommandSpec;

    use super::*;
    use crate::{EngineConfig, SecretPreference};

    fn open(dir: &std::path::Path) -> Engine {
        Engine::open(&EngineConfig::new(dir.join("data"), SecretPreference::FileOnly)).unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_are_remembered_across_a_restart_and_unfinished_ones_are_lost() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("proj")).unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        let engine = open(&root);
        engine.start_serving().unwrap();
        engine
            .add_project(&root.join("proj"), Some("demo"), AccessMode::ReadWrite, ExecMode::Any)
            .unwrap();
        engine
            .add_project(&root.join("other"), Some("other"), AccessMode::ReadOnly, ExecMode::Off)
            .unwrap();
        let (token, plaintext) = engine.create_token("t", None, None).unwrap();
        let caller = engine.authenticate(&plaintext).unwrap();
        let (_, scoped) = engine.create_token("s", Some(vec!["other".into()]), None).unwrap();
        let scoped = engine.authenticate(&scoped).unwrap();
        let handle = engine.project(&caller, "demo").unwrap();
        let start = |args: &[&str]| {
            let verdict = engine.plan_exec(&handle, &CommandSpec::new("sh", args)).unwrap();
            let mut req = engine.job_request(&handle, &verdict).unwrap();
            req.owner = Some(token.id.to_string());
            engine.jobs().start(req).unwrap()
        };
        let done = start(&["-c", "exit 3"]);
        let status = engine.jobs().wait(&done).await.unwrap();
        assert_eq!((status.state, status.exit_code), (JobState::Failed, Some(3)));
        let running = start(&["-c", "sleep 30"]);
        // The writer thread records asynchronously: wait until both rows are there.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let rows = engine.store.list_jobs(None, 10).unwrap();
            let state = |id: &JobId| rows.iter().find(|r| r.id == id.0).map(|r| r.state.clone());
            if state(&done).as_deref() == Some("failed")
                && state(&running).as_deref() == Some("running")
            {
                let row = rows.iter().find(|r| r.id == done.0).unwrap();
                assert_eq!(row.token_id.as_deref(), Some(token.id.as_str()));
                assert!(row.command.ends_with("sh -c 'exit 3'"), "{}", row.command);
                assert!(row.started_ms.is_some() && row.ended_ms.is_some());
                break;
            }
            assert!(std::time::Instant::now() < deadline, "rows: {rows:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Simulate a crash: the registry (and its processes) goes away without a final write.
        let (done_id, running_id) = (done.0.clone(), running.0.clone());
        engine.jobs().cancel(&running).unwrap();
        // The writer records the cancellation asynchronously: let it land before overwriting
        // the row with what a crash would have left.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while engine.store.job(&running_id).unwrap().map(|r| r.state).as_deref()
            != Some("cancelled")
        {
            assert!(std::time::Instant::now() < deadline, "the cancellation was not recorded");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        engine
            .store
            .upsert_job(&JobRow {
                state: "running".into(),
                ended_ms: None,
                ..engine.store.job(&running_id).unwrap().unwrap()
            })
            .unwrap();
        drop(engine);

        let engine = open(&root);
        engine.start_serving().unwrap();
        let past = engine.job_for(&caller, &done_id).unwrap();
        assert_eq!((past.state, past.exit_code, past.lost), (JobState::Failed, Some(3), false));
        let lost = engine.job_for(&caller, &running_id).unwrap();
        assert!(lost.lost && lost.state == JobState::Failed, "{lost:?}");
        assert_eq!(lost.error.as_deref(), Some(LOST_REASON));
        let ids: Vec<String> = engine.jobs_for(&caller).into_iter().map(|j| j.id.0).collect();
        assert_eq!(ids, [done_id.clone(), running_id.clone()]);
        // Scoped like live jobs: another project's token sees none of them.
        assert_eq!(engine.job_for(&scoped, &done_id).unwrap_err().code, ErrorCode::NotFound);
        assert!(engine.jobs_for(&scoped).is_empty());
    }
}
