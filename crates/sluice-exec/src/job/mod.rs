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
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{broadcast, watch};

mod admission;
mod input;
mod registry;
mod sampler;
mod supervisor;

pub use crate::spawn::Interactive;
pub use input::{InputPart, InputReport, Key};
pub use registry::Jobs;

use crate::confine::LandlockReport;
use crate::kill::Tree;
pub use crate::output::LogPage;
use crate::output::LogRing;
use crate::spawn::Sandbox;
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
    /// Interactive jobs (queued or running) one project may have at once.
    pub max_interactive_per_project: usize,
    /// Interactive jobs (queued or running) one owner (token) may have at once.
    pub max_interactive_per_owner: usize,
    /// The most bytes one write to an interactive job may carry.
    pub max_input_per_write: usize,
    /// The most bytes an interactive job may be sent in any one second.
    pub max_input_per_second: usize,
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
            max_interactive_per_project: 4,
            max_interactive_per_owner: 3,
            max_input_per_write: 16 * 1024,
            max_input_per_second: 64 * 1024,
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
    /// Whether its owner may type into it, and through what ([`Interactive`]); `None`: stdin
    /// is `/dev/null`.
    pub interactive: Option<Interactive>,
    /// Ports its program will listen on, to forward from the host's loopback while it runs
    /// ([`crate::publish`]).
    pub publish: Vec<u16>,
    /// The checkpoint the engine took of the project right before it (its id), so what the
    /// command changes can be undone; shown with the job's status.
    pub checkpoint: Option<String>,
    /// How the job's command is shown instead of its argv (a git hook, named by its place in
    /// the project rather than by its physical path).
    pub shown_as: Option<String>,
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
    /// Its published ports while it runs (none once it ended).
    pub ports: Vec<crate::publish::PublishedPort>,
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
    /// Who started it (the engine's token id).
    pub owner: Option<String>,
    /// Whether it takes input, and through what.
    pub interactive: Option<Interactive>,
    /// Its published ports, while it runs.
    pub ports: Vec<crate::publish::PublishedPort>,
    /// The checkpoint taken right before it, if one was ([`JobRequest::checkpoint`]).
    pub checkpoint: Option<String>,
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

/// The engine's ends of a job it talks to ([`Jobs::start_channel`]): what is written to
/// `input` is the job's stdin, what the job prints on stdout is read from `output`, unredacted
/// and unlogged (the caller redacts what it shows). Dropping `input` is end of input.
pub struct Channel {
    pub input: Box<dyn std::io::Write + Send>,
    pub output: Box<dyn std::io::Read + Send>,
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Channel")
    }
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
    /// Ctrl-C for a job whose input is a pipe: SIGINT to its process group, sent by the
    /// supervisor while the leader is unreaped (see the module docs).
    Interrupt,
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
    checkpoint: Option<String>,
    display: String,
    cwd: String,
    state: watch::Sender<JobState>,
    data: Mutex<JobData>,
    stdout: Mutex<LogRing>,
    stderr: Mutex<LogRing>,
    control: Mutex<Option<mpsc::Sender<Control>>>,
    interactive: Option<Interactive>,
    /// Where input goes while the job runs; `None` before it starts and after it ends.
    input: Mutex<Option<input::InputEnd>>,
    meter: Mutex<input::InputMeter>,
    /// Bytes of output so far, both streams: waiters wake on every change.
    output: watch::Sender<u64>,
    /// Its published ports while it runs; `None` before it starts and after it ends.
    ports: Mutex<Option<std::sync::Arc<crate::publish::Ports>>>,
    /// What its output (and its servers' answers) is redacted with, built once: each stream
    /// and each answer takes a fresh copy.
    redactor: sluice_core::redact::StreamRedactor,
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
            owner: self.owner.clone(),
            interactive: self.interactive,
            ports: lock(&self.ports).as_ref().map(|p| p.published.clone()).unwrap_or_default(),
            checkpoint: self.checkpoint.clone(),
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
            ports: match state.is_final() {
                true => Vec::new(),
                false => {
                    lock(&self.ports).as_ref().map(|p| p.published.clone()).unwrap_or_default()
                }
            },
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
