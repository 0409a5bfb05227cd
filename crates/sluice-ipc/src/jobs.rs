//! Jobs and the emergency stop, as the window sees them: the engine's one job registry
//! (`Engine::jobs`) mapped to DTOs, log pages read by cursor, cancel, and the stop itself.
//! The window is the local user's, so it sees every project's jobs.

use serde::{Deserialize, Serialize};
use sluice_core::{ErrorCode, Failure};
use sluice_engine::Engine;
use sluice_exec::{JobEvent, JobId, JobState, JobStatus, Stream};
use ts_rs::TS;

use crate::{AppState, Context, IpcError, Res, app_state, invalid, project_names};

/// The largest log page the window may ask for: the window reads on by cursor, so a chatty
/// job never makes one reply large.
pub const MAX_LOG_PAGE: u32 = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum JobStateDto {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    TimedOut,
}

impl From<JobState> for JobStateDto {
    fn from(s: JobState) -> JobStateDto {
        match s {
            JobState::Queued => JobStateDto::Queued,
            JobState::Running => JobStateDto::Running,
            JobState::Succeeded => JobStateDto::Succeeded,
            JobState::Failed => JobStateDto::Failed,
            JobState::Cancelled => JobStateDto::Cancelled,
            JobState::TimedOut => JobStateDto::TimedOut,
        }
    }
}

impl JobStateDto {
    pub fn is_final(self) -> bool {
        !matches!(self, JobStateDto::Queued | JobStateDto::Running)
    }
}

/// One job: what runs, where, how it is doing. The command is the argv as one display line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct JobDto {
    pub id: String,
    pub project_id: String,
    /// `null` when the project was removed since.
    pub project_name: Option<String>,
    pub command: String,
    pub state: JobStateDto,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Why it could not start or run, when it could not.
    pub error: Option<String>,
    /// When it started running, in Unix milliseconds; `null` while queued or when it never ran.
    #[ts(type = "number | null")]
    pub started_ms: Option<i64>,
    /// How long it has run (so far, for a running job); `null` while queued.
    #[ts(type = "number | null")]
    pub runtime_ms: Option<u64>,
    #[ts(type = "number")]
    pub stdout_bytes: u64,
    #[ts(type = "number")]
    pub stderr_bytes: u64,
    /// Older output the bounded log no longer holds.
    #[ts(type = "number")]
    pub dropped_bytes: u64,
    /// The whole process tree's CPU use at the last sample (100 = one core).
    pub cpu_percent: Option<f32>,
    #[ts(type = "number | null")]
    pub memory_bytes: Option<u64>,
    pub processes: Option<u32>,
    /// How the job is confined (Landlock), one sentence.
    pub confinement: Option<String>,
    /// `terminal` or `pipe` when the assistant that started it can type into it.
    pub interactive: Option<String>,
    /// Ports its server published, while it runs: each opens in the browser.
    pub ports: Vec<JobPortDto>,
}

/// A port a job published, and where it is on this computer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct JobPortDto {
    pub port: u16,
    pub url: String,
}

impl JobDto {
    pub(crate) fn new(j: &JobStatus, names: &[(String, String)]) -> JobDto {
        JobDto {
            id: j.id.0.clone(),
            project_id: j.project.clone(),
            project_name: crate::dto::name_of(names, &j.project),
            command: j.command.clone(),
            state: j.state.into(),
            exit_code: j.exit_code,
            signal: j.signal,
            error: j.error.clone(),
            started_ms: j.started_ms,
            runtime_ms: j.runtime.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            stdout_bytes: j.stdout_bytes,
            stderr_bytes: j.stderr_bytes,
            dropped_bytes: j.dropped_bytes,
            cpu_percent: j.sample.map(|s| s.cpu_percent),
            memory_bytes: j.sample.map(|s| s.memory_bytes),
            processes: j.sample.map(|s| u32::try_from(s.processes).unwrap_or(u32::MAX)),
            confinement: j.confinement.as_ref().map(|c| c.summary.clone()),
            interactive: j.interactive.map(|i| i.as_str().to_owned()),
            ports: j
                .ports
                .iter()
                .map(|p| JobPortDto { port: p.port, url: sluice_core::link::job_link(p.host_port) })
                .collect(),
        }
    }

    /// One line for a notification: "<command> · <project> · exit code 1".
    pub fn headline(&self) -> String {
        let project = self.project_name.as_deref().unwrap_or("a removed project");
        let how = match (self.state, self.exit_code, self.signal) {
            (JobStateDto::TimedOut, _, _) => "timed out".to_owned(),
            (_, Some(code), _) => format!("exit code {code}"),
            (_, None, Some(sig)) => format!("killed by signal {sig}"),
            _ => self.error.clone().unwrap_or_else(|| "failed".to_owned()),
        };
        crate::visible(&format!("{} · {project} · {how}", self.command))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum LogStream {
    Stdout,
    Stderr,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct JobLogsQuery {
    pub id: String,
    pub stream: LogStream,
    /// 0 for the start, or the previous page's `nextCursor`.
    #[ts(type = "number")]
    pub cursor: u64,
    /// At most this many bytes (capped at 64 KiB).
    pub max_bytes: u32,
}

/// A page of one stream of a job's log (already ANSI-stripped and redacted by the engine).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct JobLogPage {
    pub text: String,
    /// Where this page starts (past the requested cursor when older output was dropped).
    #[ts(type = "number")]
    pub cursor: u64,
    #[ts(type = "number")]
    pub next_cursor: u64,
    /// Bytes between the requested cursor and `cursor` that the log no longer holds.
    #[ts(type = "number")]
    pub dropped_bytes: u64,
    /// Everything written so far has been read.
    pub at_end: bool,
    /// The job's state when the page was read: final and `atEnd` means nothing more comes.
    pub state: JobStateDto,
}

/// What the emergency stop did, and the state the window shows afterwards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StopResult {
    pub state: AppState,
    pub killed_jobs: u32,
    pub cancelled_queued: u32,
    pub denied_approvals: u32,
}

/// A job id as the registry makes them (`job_` and base32); anything else is refused before
/// it reaches the registry, and never echoed back at length.
fn job_id(id: &str) -> Res<JobId> {
    if id.len() > 64 {
        return Err(invalid("a job id has at most 64 characters"));
    }
    let ok = id
        .strip_prefix("job_")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_alphanumeric()));
    if !ok {
        return Err(invalid(format!("{:?} is not a job id", crate::visible(id))));
    }
    Ok(JobId(id.to_owned()))
}

fn no_job(id: &JobId) -> IpcError {
    Failure::new(
        ErrorCode::NotFound,
        format!("no job {} (finished jobs are forgotten after a while)", id.0),
    )
    .into()
}

fn status(engine: &Engine, id: &JobId) -> Res<JobStatus> {
    engine.jobs().status(id).map_err(|_| no_job(id))
}

/// Every remembered job, newest first (running and recent ones; the registry forgets the
/// oldest finished jobs).
pub fn list_jobs(engine: &Engine) -> Res<Vec<JobDto>> {
    let names = project_names(engine)?;
    let mut jobs: Vec<JobDto> =
        engine.jobs().list().iter().map(|j| JobDto::new(j, &names)).collect();
    jobs.reverse();
    Ok(jobs)
}

pub fn job(engine: &Engine, id: &str) -> Res<JobDto> {
    let id = job_id(id)?;
    let names = project_names(engine)?;
    Ok(JobDto::new(&status(engine, &id)?, &names))
}

/// A page of a job's log from `cursor`, at most [`MAX_LOG_PAGE`] bytes.
pub fn job_logs(engine: &Engine, query: JobLogsQuery) -> Res<JobLogPage> {
    let id = job_id(&query.id)?;
    let stream = match query.stream {
        LogStream::Stdout => Stream::Stdout,
        LogStream::Stderr => Stream::Stderr,
    };
    let max = query.max_bytes.clamp(1, MAX_LOG_PAGE) as usize;
    // The state first: a job that is final before the read has written everything it will.
    let state = status(engine, &id)?.state;
    let page = engine.jobs().logs(&id, stream, query.cursor, max).map_err(|_| no_job(&id))?;
    Ok(JobLogPage {
        text: page.text,
        cursor: page.cursor,
        next_cursor: page.next_cursor,
        dropped_bytes: page.dropped_bytes,
        at_end: page.at_end,
        state: state.into(),
    })
}

/// Cancels a queued or running job and returns once its whole process tree is dead (blocks
/// for up to the kill grace: call it off the UI thread). A finished job is a `conflict`.
/// The link of a port job `id` publishes now, to open in the user's browser. Only such a link:
/// the window names a job and a port, never a URL, so its script cannot open anything else.
pub fn job_port_link(engine: &Engine, id: &str, port: u16) -> Res<String> {
    let jid = job_id(id)?;
    let status = status(engine, &jid)?;
    let published = status.ports.iter().find(|p| p.port == port).ok_or_else(|| {
        Failure::new(
            ErrorCode::PortNotPublished,
            format!("job {id} does not publish port {port} now (it may have ended)"),
        )
    })?;
    Ok(sluice_core::link::job_link(published.host_port))
}

pub fn cancel_job(engine: &Engine, id: &str) -> Res<JobDto> {
    let jid = job_id(id)?;
    let before = status(engine, &jid)?;
    if before.state.is_final() {
        let state = state_word(before.state);
        return Err(Failure::new(
            ErrorCode::Conflict,
            format!("job {id} already ended ({state}); nothing to cancel"),
        )
        .into());
    }
    engine.jobs().cancel(&jid).map_err(|_| no_job(&jid))?;
    job(engine, id)
}

fn state_word(state: JobState) -> &'static str {
    match state {
        JobState::Queued => "queued",
        JobState::Running => "running",
        JobState::Succeeded => "succeeded",
        JobState::Failed => "failed",
        JobState::Cancelled => "cancelled",
        JobState::TimedOut => "timed out",
    }
}

/// The emergency stop: refuses every AI request until resumed (across restarts), denies every
/// waiting approval and kills every job tree. Blocks until the trees are dead.
pub fn emergency_stop(engine: &Engine, ctx: &Context) -> Res<StopResult> {
    let s = engine.emergency_stop()?;
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(StopResult {
        state: app_state(engine, ctx)?,
        killed_jobs: count(s.killed_jobs),
        cancelled_queued: count(s.cancelled_queued),
        denied_approvals: count(s.denied_approvals),
    })
}

/// A job event as the window receives it; `None` for the per-chunk output events, which the
/// shell coalesces into [`crate::UiEvent::JobActivity`] itself.
pub fn job_event(e: &JobEvent) -> Option<crate::UiEvent> {
    use crate::UiEvent;
    Some(match e {
        JobEvent::Started { id } => {
            UiEvent::JobChanged { id: id.0.clone(), state: JobStateDto::Running }
        }
        JobEvent::Finished { id, state } => {
            UiEvent::JobChanged { id: id.0.clone(), state: (*state).into() }
        }
        JobEvent::Sample { id, .. } => UiEvent::JobActivity { id: id.0.clone() },
        JobEvent::Output { .. } => return None,
    })
}
