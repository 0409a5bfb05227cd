//! The registry of running work. A job is one confined process tree with its logs; it runs on
//! its own threads (a supervisor, an exit waiter and two output readers), so it keeps running
//! whatever happens to the client that started it, and is reachable by id afterwards.
//!
//! Every kill of a job — timeout, cancel, project downgrade, emergency stop, and the clean-up
//! of leftovers after the leader exits — happens on the job's supervisor thread while the
//! leader is still unreaped (the exit is observed with `waitid(WNOWAIT)`), so the leader's pid,
//! which is also the job's group and session id, cannot be reused by an unrelated process
//! while it is being used to find the tree.

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{broadcast, watch};

use crate::confine::LandlockReport;
use crate::error::ExecError;
use crate::kill::{self, Tree};
pub use crate::output::LogPage;
use crate::output::{LogRing, OutputPipeline, redactor_for};
use crate::spawn::{self, Sandbox};
use crate::spec::{ResolvedCommand, TrustedPath};

/// `job_…`, random.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct JobId(pub String);

impl JobId {
    fn generate() -> JobId {
        JobId(format!("job_{}", sluice_core::id::base32(&sluice_core::random_bytes::<10>())))
    }
}

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    TimedOut,
}

impl JobState {
    /// The stable kebab-case name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::TimedOut => "timed-out",
        }
    }

    /// The inverse of [`JobState::as_str`].
    pub fn parse(s: &str) -> Option<JobState> {
        [
            JobState::Queued,
            JobState::Running,
            JobState::Succeeded,
            JobState::Failed,
            JobState::Cancelled,
            JobState::TimedOut,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

impl JobState {
    pub fn is_final(self) -> bool {
        !matches!(self, JobState::Queued | JobState::Running)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Limits of one registry (one engine).
#[derive(Debug, Clone)]
pub struct JobLimits {
    pub max_running: usize,
    pub max_running_per_project: usize,
    /// Jobs waiting for a slot; beyond this, starts are refused.
    pub max_queued: usize,
    pub max_starts_per_minute: usize,
    /// Bytes kept per stream per job (older output is dropped and counted).
    pub output_cap: usize,
    /// Between TERM and KILL.
    pub kill_grace: Duration,
    /// Finished jobs remembered for `status`/`logs`.
    pub finished_kept: usize,
    pub sample_every: Duration,
}

impl Default for JobLimits {
    fn default() -> JobLimits {
        JobLimits {
            max_running: 8,
            max_running_per_project: 4,
            max_queued: 16,
            max_starts_per_minute: 60,
            output_cap: 1 << 20,
            kill_grace: Duration::from_millis(300),
            finished_kept: 200,
            sample_every: Duration::from_secs(1),
        }
    }
}

/// Everything needed to start a job. `project` is the engine's project key (its id).
#[derive(Debug, Clone)]
pub struct JobRequest {
    pub project: String,
    pub command: ResolvedCommand,
    pub sandbox: Sandbox,
    pub path: TrustedPath,
    /// Sluice's data folder, rewritten to a placeholder in output.
    pub data_dir: Option<PathBuf>,
    /// Exact strings never to show (the engine's tokens, canaries).
    pub secrets: Vec<String>,
    /// Who started it (the engine puts the token id here); kept in [`JobRecord`]s.
    pub owner: Option<String>,
}

/// One job's persistent facts, handed to the registry's observer on every state change
/// (queued, running, final). Wall-clock times in unix milliseconds. No physical paths besides
/// the resolved program, and no output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobRecord {
    pub id: JobId,
    pub project: String,
    pub owner: Option<String>,
    /// The argv, for display.
    pub command: String,
    /// The project-relative working folder (`""`: the root).
    pub cwd: String,
    pub state: JobState,
    pub error: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub created_ms: i64,
    pub started_ms: Option<i64>,
    pub ended_ms: Option<i64>,
}

/// Called with a job's record on every state change. It runs on the thread making the change,
/// sometimes with the registry locked: it must be quick and must not call back into [`Jobs`]
/// (the engine hands the record to a writer thread).
pub type JobObserver = Arc<dyn Fn(&JobRecord) + Send + Sync>;

/// Milliseconds since the Unix epoch (0 before it).
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A job as the engine and the window see it. No physical paths.
#[derive(Debug, Clone, Serialize)]
pub struct JobStatus {
    pub id: JobId,
    pub project: String,
    /// The argv, for display.
    pub command: String,
    pub state: JobState,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    /// When it started running, in Unix milliseconds; `None` while queued or if it never ran.
    pub started_ms: Option<i64>,
    pub runtime: Option<Duration>,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub dropped_bytes: u64,
    pub confinement: Option<LandlockReport>,
    pub sample: Option<Sample>,
    /// Only in a persisted record: the engine that ran the job stopped (restart, crash) before
    /// it finished; `state` is then `Failed` and `error` says so. A live registry never sets it.
    pub lost: bool,
}

/// CPU and memory of a job's whole tree at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    pub cpu_percent: f32,
    pub memory_bytes: u64,
    pub processes: usize,
}

/// For the desktop app: subscribe with [`Jobs::subscribe`].
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum JobEvent {
    Started { id: JobId },
    Output { id: JobId, stream: Stream, total_bytes: u64 },
    Finished { id: JobId, state: JobState },
    Sample { id: JobId, sample: Sample },
}

/// The result of a command run to completion.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutput {
    pub state: JobState,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Output was dropped because it exceeded the cap.
    pub truncated: bool,
    pub duration: Duration,
    pub timed_out: bool,
}

/// What an emergency stop did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StopReport {
    pub killed_jobs: usize,
    pub cancelled_queued: usize,
}

enum Control {
    Exited,
    Kill(JobState, mpsc::Sender<()>),
}

#[derive(Default)]
struct JobData {
    exit_code: Option<i32>,
    signal: Option<i32>,
    error: Option<String>,
    started: Option<Instant>,
    finished: Option<Instant>,
    tree: Option<Tree>,
    confinement: Option<LandlockReport>,
    sample: Option<Sample>,
    created_ms: i64,
    started_ms: Option<i64>,
    ended_ms: Option<i64>,
}

struct Job {
    id: JobId,
    project: String,
    owner: Option<String>,
    display: String,
    cwd: String,
    state: watch::Sender<JobState>,
    data: Mutex<JobData>,
    stdout: Mutex<LogRing>,
    stderr: Mutex<LogRing>,
    control: Mutex<Option<mpsc::Sender<Control>>>,
}

impl Job {
    fn ring(&self, stream: Stream) -> MutexGuard<'_, LogRing> {
        lock(match stream {
            Stream::Stdout => &self.stdout,
            Stream::Stderr => &self.stderr,
        })
    }

    fn status(&self) -> JobStatus {
        let d = lock(&self.data);
        let (out, err) = (self.ring(Stream::Stdout), self.ring(Stream::Stderr));
        JobStatus {
            id: self.id.clone(),
            project: self.project.clone(),
            command: self.display.clone(),
            state: *self.state.borrow(),
            exit_code: d.exit_code,
            signal: d.signal,
            error: d.error.clone(),
            started_ms: d.started_ms,
            runtime: d.started.map(|s| d.finished.unwrap_or_else(Instant::now) - s),
            stdout_bytes: out.total(),
            stderr_bytes: err.total(),
            dropped_bytes: out.dropped() + err.dropped(),
            confinement: d.confinement.clone(),
            sample: d.sample,
            lost: false,
        }
    }

    fn record(&self) -> JobRecord {
        self.record_as(*self.state.borrow())
    }

    /// The record as it will be once the job is in `state`.
    fn record_as(&self, state: JobState) -> JobRecord {
        let d = lock(&self.data);
        JobRecord {
            id: self.id.clone(),
            project: self.project.clone(),
            owner: self.owner.clone(),
            command: self.display.clone(),
            cwd: self.cwd.clone(),
            state,
            error: d.error.clone(),
            exit_code: d.exit_code,
            signal: d.signal,
            created_ms: d.created_ms,
            started_ms: d.started_ms,
            ended_ms: d.ended_ms,
        }
    }
}

/// Locks, recovering from a poisoned mutex: the data stays usable, and no panic elsewhere
/// should take the registry down with it.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Default)]
struct Registry {
    jobs: HashMap<JobId, Arc<Job>>,
    order: Vec<JobId>,
    queue: VecDeque<(JobId, JobRequest)>,
    stopped: bool,
    starts: VecDeque<Instant>,
    sampler: bool,
}

struct Inner {
    limits: JobLimits,
    reg: Mutex<Registry>,
    events: broadcast::Sender<JobEvent>,
    observer: Option<JobObserver>,
}

impl Inner {
    /// Sets a job's state, telling the observer first (after the job's data is up to date): a
    /// caller woken by the new state then also finds it recorded.
    fn set_state(&self, job: &Job, state: JobState) {
        {
            let mut d = lock(&job.data);
            let now = now_ms();
            if state == JobState::Running {
                d.started_ms.get_or_insert(now);
            }
            if state.is_final() {
                d.ended_ms.get_or_insert(now);
            }
        }
        if let Some(observer) = &self.observer {
            observer(&job.record_as(state));
        }
        job.state.send_replace(state);
    }

    fn observe(&self, job: &Job) {
        if let Some(observer) = &self.observer {
            observer(&job.record());
        }
    }
}

/// The job registry of one engine. Cheap to clone; jobs live as long as their processes,
/// independently of the callers.
#[derive(Clone)]
pub struct Jobs {
    inner: Arc<Inner>,
}

impl Jobs {
    pub fn new(limits: JobLimits) -> Jobs {
        Jobs::build(limits, None)
    }

    /// A registry that reports every job's state changes to `observer` (for persistence).
    pub fn with_observer(limits: JobLimits, observer: JobObserver) -> Jobs {
        Jobs::build(limits, Some(observer))
    }

    fn build(limits: JobLimits, observer: Option<JobObserver>) -> Jobs {
        let (events, _) = broadcast::channel(1024);
        let reg = Mutex::new(Registry::default());
        Jobs { inner: Arc::new(Inner { limits, reg, events, observer }) }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<JobEvent> {
        self.inner.events.subscribe()
    }

    /// Starts a job now, or queues it when a concurrency limit is reached. Refused after an
    /// emergency stop, above the start rate, or when the queue is full. Spawn failures of a job
    /// started now are returned as errors (nothing is left registered).
    pub fn start(&self, req: JobRequest) -> Result<JobId, ExecError> {
        let limits = &self.inner.limits;
        let mut reg = lock(&self.inner.reg);
        // The stop flag is checked under the same lock `stop_all` sets it under: a start racing
        // an emergency stop either registered its job before (and is killed) or is refused.
        if reg.stopped {
            return Err(ExecError::Stopped);
        }
        let now = Instant::now();
        while reg.starts.front().is_some_and(|t| now.duration_since(*t) > Duration::from_secs(60)) {
            reg.starts.pop_front();
        }
        if reg.starts.len() >= limits.max_starts_per_minute {
            return Err(ExecError::Limit(format!(
                "more than {} job starts in the last minute; try again shortly",
                limits.max_starts_per_minute
            )));
        }
        let can_run = can_run(&reg, limits, &req.project);
        if !can_run && reg.queue.len() >= limits.max_queued {
            return Err(ExecError::Limit(format!(
                "{} jobs are running and {} are queued; wait for one to finish or cancel one",
                running(&reg, None),
                reg.queue.len()
            )));
        }
        reg.starts.push_back(now);
        let id = JobId::generate();
        let job = Arc::new(Job {
            id: id.clone(),
            project: req.project.clone(),
            owner: req.owner.clone(),
            display: req.command.display(),
            cwd: req.command.cwd.clone(),
            state: watch::channel(JobState::Queued).0,
            data: Mutex::new(JobData { created_ms: now_ms(), ..JobData::default() }),
            stdout: Mutex::new(LogRing::new(limits.output_cap)),
            stderr: Mutex::new(LogRing::new(limits.output_cap)),
            control: Mutex::new(None),
        });
        if can_run {
            launch(&self.inner, &job, req)?;
        } else {
            reg.queue.push_back((id.clone(), req));
            self.inner.observe(&job);
        }
        reg.jobs.insert(id.clone(), job);
        reg.order.push(id.clone());
        prune(&mut reg, limits.finished_kept);
        if !reg.sampler {
            reg.sampler = true;
            start_sampler(Arc::downgrade(&self.inner), limits.sample_every);
        }
        Ok(id)
    }

    fn job(&self, id: &JobId) -> Result<Arc<Job>, ExecError> {
        lock(&self.inner.reg)
            .jobs
            .get(id)
            .cloned()
            .ok_or_else(|| ExecError::NoSuchJob(id.0.clone()))
    }

    pub fn status(&self, id: &JobId) -> Result<JobStatus, ExecError> {
        Ok(self.job(id)?.status())
    }

    /// Every remembered job, oldest first.
    pub fn list(&self) -> Vec<JobStatus> {
        let reg = lock(&self.inner.reg);
        reg.order.iter().filter_map(|id| reg.jobs.get(id)).map(|j| j.status()).collect()
    }

    /// A page of one stream's log from `cursor` (0 for the start).
    pub fn logs(
        &self,
        id: &JobId,
        stream: Stream,
        cursor: u64,
        max_bytes: usize,
    ) -> Result<LogPage, ExecError> {
        Ok(self.job(id)?.ring(stream).read(cursor, max_bytes))
    }

    /// Waits until the job has finished.
    pub async fn wait(&self, id: &JobId) -> Result<JobStatus, ExecError> {
        let job = self.job(id)?;
        let mut rx = job.state.subscribe();
        // The sender lives in `job`, which we hold: the channel cannot close under us.
        let _ = rx.wait_for(|s| s.is_final()).await;
        Ok(job.status())
    }

    /// Starts `req`, waits for it, and returns its (capped, redacted) output.
    pub async fn run(&self, req: JobRequest) -> Result<RunOutput, ExecError> {
        self.output(&self.start(req)?).await
    }

    /// Waits for a job to finish and returns its (capped, redacted) output.
    pub async fn output(&self, id: &JobId) -> Result<RunOutput, ExecError> {
        let status = self.wait(id).await?;
        let job = self.job(id)?;
        let (out, err) = (job.ring(Stream::Stdout), job.ring(Stream::Stderr));
        Ok(RunOutput {
            state: status.state,
            exit_code: status.exit_code,
            signal: status.signal,
            stdout: out.contents(),
            stderr: err.contents(),
            truncated: out.dropped() + err.dropped() > 0,
            duration: status.runtime.unwrap_or_default(),
            timed_out: status.state == JobState::TimedOut,
        })
    }

    /// Cancels a job and returns once its whole tree is dead (blocks up to the kill grace plus
    /// a few milliseconds; call it from a blocking context in async code).
    pub fn cancel(&self, id: &JobId) -> Result<JobState, ExecError> {
        let job = self.job(id)?;
        self.kill_jobs(std::slice::from_ref(&job), JobState::Cancelled);
        Ok(*job.state.borrow())
    }

    /// Kills every job of `project` (queued ones are cancelled): the project was downgraded,
    /// disabled or removed. Returns how many jobs were ended.
    pub fn kill_project(&self, project: &str) -> usize {
        let jobs: Vec<Arc<Job>> = {
            let reg = lock(&self.inner.reg);
            reg.jobs.values().filter(|j| j.project == project).cloned().collect()
        };
        self.kill_jobs(&jobs, JobState::Cancelled)
    }

    /// Kills every job `owner` started (queued ones are cancelled): the token limited itself.
    /// Returns how many jobs were ended.
    pub fn kill_owned(&self, owner: &str) -> usize {
        let jobs: Vec<Arc<Job>> = {
            let reg = lock(&self.inner.reg);
            reg.jobs.values().filter(|j| j.owner.as_deref() == Some(owner)).cloned().collect()
        };
        self.kill_jobs(&jobs, JobState::Cancelled)
    }

    /// Emergency stop: refuses new starts until [`Jobs::resume`], cancels queued jobs and kills
    /// every running tree; returns once they are dead.
    pub fn stop_all(&self) -> StopReport {
        let jobs: Vec<Arc<Job>> = {
            let mut reg = lock(&self.inner.reg);
            reg.stopped = true;
            reg.jobs.values().cloned().collect()
        };
        let queued = jobs.iter().filter(|j| *j.state.borrow() == JobState::Queued).count();
        let killed = self.kill_jobs(&jobs, JobState::Cancelled);
        StopReport { killed_jobs: killed - queued.min(killed), cancelled_queued: queued }
    }

    /// Lifts an emergency stop.
    pub fn resume(&self) {
        lock(&self.inner.reg).stopped = false;
    }

    pub fn is_stopped(&self) -> bool {
        lock(&self.inner.reg).stopped
    }

    /// Ends `jobs` with `reason`: queued ones leave the queue, running ones are killed by their
    /// supervisors in parallel; waits for all of them.
    fn kill_jobs(&self, jobs: &[Arc<Job>], reason: JobState) -> usize {
        let mut ended = 0;
        let mut replies = Vec::new();
        {
            let mut reg = lock(&self.inner.reg);
            for job in jobs {
                if let Some(pos) = reg.queue.iter().position(|(id, _)| *id == job.id) {
                    reg.queue.remove(pos);
                    lock(&job.data).finished = Some(Instant::now());
                    self.inner.set_state(job, reason);
                    let _ = self
                        .inner
                        .events
                        .send(JobEvent::Finished { id: job.id.clone(), state: reason });
                    ended += 1;
                }
            }
        }
        for job in jobs {
            let control = lock(&job.control).clone();
            if let Some(tx) = control {
                let (reply_tx, reply_rx) = mpsc::channel();
                if tx.send(Control::Kill(reason, reply_tx)).is_ok() {
                    replies.push(reply_rx);
                }
            }
        }
        for reply in replies {
            // A supervisor that already finished drops the sender: that is an answer too.
            let _ = reply.recv_timeout(Duration::from_secs(30));
            ended += 1;
        }
        ended
    }
}

fn running(reg: &Registry, project: Option<&str>) -> usize {
    reg.jobs
        .values()
        .filter(|j| *j.state.borrow() == JobState::Running)
        .filter(|j| project.is_none_or(|p| j.project == p))
        .count()
}

fn can_run(reg: &Registry, limits: &JobLimits, project: &str) -> bool {
    running(reg, None) < limits.max_running
        && running(reg, Some(project)) < limits.max_running_per_project
}

/// Forgets the oldest finished jobs beyond `keep`.
fn prune(reg: &mut Registry, keep: usize) {
    let finished: Vec<JobId> = reg
        .order
        .iter()
        .filter(|id| reg.jobs.get(*id).is_some_and(|j| j.state.borrow().is_final()))
        .cloned()
        .collect();
    if finished.len() > keep {
        for id in &finished[..finished.len() - keep] {
            reg.jobs.remove(id);
        }
        let jobs = &reg.jobs;
        reg.order.retain(|id| jobs.contains_key(id));
    }
}

/// Spawns the job's process and its threads. Called with the registry locked, so the job is
/// running (and killable) before any stop can look at the registry.
fn launch(inner: &Arc<Inner>, job: &Arc<Job>, req: JobRequest) -> Result<(), ExecError> {
    let spawned = spawn::spawn(&req.command, &req.sandbox, &req.path)?;
    let mut child = spawned.child;
    let tree = spawned.tree;
    {
        let mut d = lock(&job.data);
        d.started = Some(Instant::now());
        d.tree = Some(tree);
        d.confinement = Some(spawned.confinement);
    }
    inner.set_state(job, JobState::Running);
    let _ = inner.events.send(JobEvent::Started { id: job.id.clone() });

    let (ctl_tx, ctl_rx) = mpsc::channel();
    *lock(&job.control) = Some(ctl_tx.clone());

    let redactor = |_: ()| {
        redactor_for(
            &req.sandbox.project_root,
            &req.sandbox.state_dir,
            req.data_dir.as_deref(),
            &req.secrets,
        )
    };
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut readers = 0;
    let pipes: [(Stream, Option<Box<dyn Read + Send>>); 2] = [
        (Stream::Stdout, child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
        (Stream::Stderr, child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
    ];
    for (stream, pipe) in pipes {
        let Some(pipe) = pipe else { continue };
        let pipeline = OutputPipeline::new(redactor(()));
        let (job, events, done) = (job.clone(), inner.events.clone(), done_tx.clone());
        let started = std::thread::Builder::new()
            .name("sluice-job-output".into())
            .spawn(move || read_stream(pipe, pipeline, &job, stream, &events, done));
        if started.is_ok() {
            readers += 1;
        }
    }
    drop(done_tx);

    let pid = tree.leader;
    let waiter_tx = ctl_tx;
    let waiter = std::thread::Builder::new().name("sluice-job-wait".into()).spawn(move || {
        if wait_exit_keeping_zombie(pid) {
            let _ = waiter_tx.send(Control::Exited);
        }
    });
    if let Err(e) = waiter {
        // Without a waiter the job could never finish: kill it now and report.
        kill::kill_tree(&tree, Duration::ZERO);
        let _ = child.wait();
        return Err(ExecError::os("starting the job's waiter thread", e));
    }

    let (job2, inner2) = (job.clone(), Arc::downgrade(inner));
    let timeout = req.command.timeout;
    let grace = inner.limits.kill_grace;
    let supervisor = std::thread::Builder::new().name("sluice-job".into()).spawn(move || {
        supervise(job2, inner2, child, tree, ctl_rx, timeout, grace, done_rx, readers)
    });
    if let Err(e) = supervisor {
        kill::kill_tree(&tree, Duration::ZERO);
        return Err(ExecError::os("starting the job's supervisor thread", e));
    }
    Ok(())
}

fn read_stream(
    mut pipe: Box<dyn Read + Send>,
    mut pipeline: OutputPipeline,
    job: &Job,
    stream: Stream,
    events: &broadcast::Sender<JobEvent>,
    done: mpsc::Sender<()>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    let publish = |text: String| {
        if text.is_empty() {
            return;
        }
        let total = {
            let mut ring = job.ring(stream);
            ring.push(&text);
            ring.total()
        };
        let _ = events.send(JobEvent::Output { id: job.id.clone(), stream, total_bytes: total });
    };
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => publish(pipeline.push(&buf[..n])),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    publish(pipeline.finish());
    let _ = done.send(());
}

/// Blocks until `pid` has exited, leaving it a zombie (unreaped), so its pid stays reserved.
/// Returns whether it observed the exit.
#[cfg(unix)]
fn wait_exit_keeping_zombie(pid: u32) -> bool {
    // Pids are positive and fit id_t on every unix.
    let id = pid as libc::id_t;
    loop {
        // SAFETY: siginfo_t is plain data; waitid writes into the one we own.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on one specific child pid with WNOWAIT: observes without reaping.
        let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return true;
        }
    }
}

/// Windows (untested here): there is no "wait without reaping"; the supervisor polls
/// `try_wait` instead (see `POLL`).
#[cfg(not(unix))]
fn wait_exit_keeping_zombie(_pid: u32) -> bool {
    false
}

/// How often the supervisor checks the child itself where no waiter reports the exit.
const POLL: Option<Duration> = if cfg!(unix) { None } else { Some(Duration::from_millis(50)) };

#[allow(clippy::too_many_arguments)]
fn supervise(
    job: Arc<Job>,
    inner: Weak<Inner>,
    mut child: std::process::Child,
    tree: Tree,
    ctl: mpsc::Receiver<Control>,
    timeout: Option<Duration>,
    grace: Duration,
    readers_done: mpsc::Receiver<()>,
    readers: usize,
) {
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut reason: Option<JobState> = None;
    let mut replies: Vec<mpsc::Sender<()>> = Vec::new();
    let mut exited = false;
    while !exited {
        let until_deadline = deadline
            .filter(|_| reason.is_none())
            .map(|d| d.saturating_duration_since(Instant::now()));
        let wait = match (until_deadline, POLL) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let msg = match wait {
            Some(w) => ctl.recv_timeout(w),
            None => ctl.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match msg {
            Ok(Control::Exited) => exited = true,
            Ok(Control::Kill(why, reply)) => {
                replies.push(reply);
                if reason.is_none() {
                    reason = Some(why);
                    kill::kill_tree(&tree, grace);
                    #[cfg(not(unix))]
                    let _ = child.kill();
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if POLL.is_some() && matches!(child.try_wait(), Ok(Some(_))) {
                    exited = true;
                } else if deadline.is_some_and(|d| Instant::now() >= d) && reason.is_none() {
                    reason = Some(JobState::TimedOut);
                    kill::kill_tree(&tree, grace);
                    #[cfg(not(unix))]
                    let _ = child.kill();
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // The leader is gone (still a zombie): kill whatever it left behind — background and
    // daemonized descendants do not outlive their job.
    kill::kill_tree(&tree, Duration::from_millis(50));
    let status = child.wait();
    for _ in 0..readers {
        // Every writer of the pipes is dead now; a reader that still does not finish holds a
        // pipe some survivor inherited, and the job ends without the rest of its output.
        if readers_done.recv_timeout(Duration::from_secs(2)).is_err() {
            break;
        }
    }
    let (code, signal) = match &status {
        Ok(s) => (s.code(), exit_signal(s)),
        Err(_) => (None, None),
    };
    let state =
        reason.unwrap_or(if code == Some(0) { JobState::Succeeded } else { JobState::Failed });
    {
        let mut d = lock(&job.data);
        d.exit_code = code;
        d.signal = signal;
        d.finished = Some(Instant::now());
        if state == JobState::TimedOut {
            d.error = Some("the job exceeded its timeout and was killed".into());
        }
    }
    *lock(&job.control) = None;
    let inner = inner.upgrade();
    match &inner {
        Some(inner) => inner.set_state(&job, state),
        None => {
            job.state.send_replace(state);
        }
    }
    // Kill requests that arrived while finishing are answered too.
    while let Ok(msg) = ctl.try_recv() {
        if let Control::Kill(_, reply) = msg {
            replies.push(reply);
        }
    }
    for reply in replies {
        let _ = reply.send(());
    }
    if let Some(inner) = inner {
        let _ = inner.events.send(JobEvent::Finished { id: job.id.clone(), state });
        dispatch_queue(&inner);
    }
}

#[cfg(unix)]
fn exit_signal(s: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    s.signal()
}

#[cfg(not(unix))]
fn exit_signal(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// Starts queued jobs that now fit the limits, oldest first.
fn dispatch_queue(inner: &Arc<Inner>) {
    let mut reg = lock(&inner.reg);
    if reg.stopped {
        return;
    }
    let mut idx = 0;
    while idx < reg.queue.len() {
        let project = reg.queue[idx].1.project.clone();
        if !can_run(&reg, &inner.limits, &project) {
            idx += 1;
            continue;
        }
        let Some((id, req)) = reg.queue.remove(idx) else { break };
        let Some(job) = reg.jobs.get(&id).cloned() else { continue };
        if let Err(e) = launch(inner, &job, req) {
            let mut d = lock(&job.data);
            d.error = Some(e.to_string());
            d.finished = Some(Instant::now());
            drop(d);
            inner.set_state(&job, JobState::Failed);
            let _ = inner.events.send(JobEvent::Finished { id, state: JobState::Failed });
        }
    }
}

/// Samples CPU and memory of every running job's tree while the registry exists.
fn start_sampler(inner: Weak<Inner>, every: Duration) {
    let _ = std::thread::Builder::new().name("sluice-job-sampler".into()).spawn(move || {
        use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};
        let mut sys = System::new().ok();
        loop {
            std::thread::sleep(every);
            let Some(inner) = inner.upgrade() else { return };
            let running: Vec<Arc<Job>> = {
                let reg = lock(&inner.reg);
                reg.jobs
                    .values()
                    .filter(|j| *j.state.borrow() == JobState::Running)
                    .cloned()
                    .collect()
            };
            let Some(sys) = sys.as_mut() else { continue };
            for job in running {
                let Some(tree) = lock(&job.data).tree else { continue };
                let pids: Vec<Pid> =
                    kill::tree_pids(&tree).into_iter().map(Pid::from_u32).collect();
                sys.refresh_processes_specifics(
                    ProcessesToUpdate::Some(&pids),
                    true,
                    ProcessRefreshKind::nothing().with_cpu().with_memory(),
                );
                let (cpu, mem) = pids
                    .iter()
                    .filter_map(|p| sys.process(*p))
                    .fold((0.0f32, 0u64), |(c, m), p| (c + p.cpu_usage(), m + p.memory()));
                let sample = Sample { cpu_percent: cpu, memory_bytes: mem, processes: pids.len() };
                lock(&job.data).sample = Some(sample);
                let _ = inner.events.send(JobEvent::Sample { id: job.id.clone(), sample });
            }
        }
    });
}
