//! [`Jobs`], the registry: starting (now or queued, within the limits), looking up, listing,
//! reading logs, cancelling and stopping jobs.

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, watch};

use super::admission::{can_run, running};
use super::input::{self, InputMeter, InputPart, InputReport};
use super::sampler::start_sampler;
use super::supervisor::launch;
use super::{
    Channel, Control, Inner, Job, JobData, JobEvent, JobId, JobLimits, JobObserver, JobRequest,
    JobState, JobStatus, LogPage, Registry, RunOutput, StopReport, Stream, lock, now_ms,
};
use crate::output::{LogRing, redactor_for};

use crate::error::ExecError;

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
        self.admit(req, false).map(|(id, _)| id)
    }

    /// Starts a job the engine itself talks to (a language server): its stdin and stdout are
    /// the returned [`Channel`], raw, instead of input its owner may type and a log; its stderr
    /// is its log. It is never queued: when no slot is free it is refused. It stays a job in
    /// every other way, shown in the list and killed by a cancel, a downgrade or a stop.
    /// Linux and macOS only.
    pub fn start_channel(&self, req: JobRequest) -> Result<(JobId, Channel), ExecError> {
        if req.interactive.is_some() {
            return Err(ExecError::Invalid("a channel job takes no other input".into()));
        }
        let (id, channel) = self.admit(req, true)?;
        channel.map(|c| (id, c)).ok_or_else(|| ExecError::Invalid("no channel was made".into()))
    }

    fn admit(&self, req: JobRequest, channel: bool) -> Result<(JobId, Option<Channel>), ExecError> {
        let limits = &self.inner.limits;
        // Outside the registry's lock: it looks paths up on disk.
        let redactor = redactor_for(
            &req.sandbox.project_root,
            &req.sandbox.state_dir,
            req.data_dir.as_deref(),
            &req.secrets,
        );
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
        if req.interactive.is_some() {
            check_interactive(&reg, limits, &req)?;
        }
        let can_run = can_run(&reg, limits, &req.project);
        if channel && !can_run {
            return Err(ExecError::Limit(format!(
                "{} jobs are running, as many as may; wait for one to finish or cancel one",
                running(&reg, None)
            )));
        }
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
            checkpoint: req.checkpoint.clone(),
            display: req.shown_as.clone().unwrap_or_else(|| req.command.display()),
            cwd: req.command.cwd.clone(),
            state: watch::channel(JobState::Queued).0,
            data: Mutex::new(JobData { created_ms: now_ms(), ..JobData::default() }),
            stdout: Mutex::new(LogRing::new(limits.output_cap)),
            stderr: Mutex::new(LogRing::new(limits.output_cap)),
            control: Mutex::new(None),
            interactive: req.interactive,
            input: Mutex::new(None),
            meter: Mutex::new(InputMeter::default()),
            output: watch::channel(0).0,
            ports: Mutex::new(None),
            redactor,
        });
        let mut made = None;
        if can_run {
            made = launch(&self.inner, &job, req, channel)?;
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
        Ok((id, made))
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

    /// Who started the job: the owner its request named (the engine's token id).
    pub fn owner(&self, id: &JobId) -> Result<Option<String>, ExecError> {
        Ok(self.job(id)?.owner.clone())
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

    /// Sends `parts` to an interactive job's input, within the per-write and per-second
    /// limits. Refused, with nothing sent, for a job that is not interactive, has not started,
    /// or has ended. Blocks up to a couple of seconds when the program does not read its input
    /// (call it from a blocking context in async code).
    pub fn write_input(&self, id: &JobId, parts: &[InputPart]) -> Result<InputReport, ExecError> {
        let job = self.job(id)?;
        let Some(kind) = job.interactive else {
            return Err(ExecError::NotInteractive(format!(
                "job {id} was not started as interactive, so it takes no input (its stdin is \
                 empty); start it with `interactive` to type into it"
            )));
        };
        let limits = &self.inner.limits;
        let n = input::size(kind, parts);
        if n > limits.max_input_per_write {
            return Err(ExecError::InputTooLarge(format!(
                "this write carries {n} bytes and one write takes at most {}; nothing was sent, \
                 split it into smaller writes",
                limits.max_input_per_write
            )));
        }
        let mut end = lock(&job.input);
        let state = *job.state.borrow();
        let Some(end) = end.as_mut() else {
            return Err(match state {
                JobState::Queued => ExecError::InputNotTaken(format!(
                    "job {id} is queued and has not started yet; nothing was sent, wait until \
                     it runs"
                )),
                _ => ExecError::Ended(format!(
                    "job {id} has ended ({}); nothing was sent",
                    state.as_str()
                )),
            });
        };
        lock(&job.meter).take(n, limits.max_input_per_second)?;
        let interrupt = || {
            let control = lock(&job.control).clone();
            control.is_some_and(|tx| tx.send(Control::Interrupt).is_ok())
        };
        #[cfg(unix)]
        return input::write(end, kind, parts, &interrupt);
        #[cfg(not(unix))]
        {
            let _ = interrupt;
            input::write(end, kind, parts, &|| false)
        }
    }

    /// A fresh copy of the redactor of job `id`'s output, for other text it hands out (the
    /// answers of its servers).
    pub fn redactor(&self, id: &JobId) -> Result<sluice_core::redact::StreamRedactor, ExecError> {
        Ok(self.job(id)?.redactor.clone())
    }

    /// Whether something accepts connections on the job's published `port` now (a readiness
    /// probe, inside the job's network namespace).
    pub fn port_accepting(&self, id: &JobId, port: u16) -> Result<bool, ExecError> {
        let job = self.job(id)?;
        let ports = lock(&job.ports).clone();
        match ports {
            Some(p) if p.published.iter().any(|pp| pp.port == port) => Ok(p.accepting(port)),
            _ => Err(ExecError::NotPublished(format!(
                "job {id} does not publish port {port} (or no longer runs); nothing was opened"
            ))),
        }
    }

    /// Receivers that change with the job's output (bytes so far, both streams) and its
    /// state: what a caller waiting for output, a pattern or the end waits on.
    pub fn watch(
        &self,
        id: &JobId,
    ) -> Result<(watch::Receiver<u64>, watch::Receiver<JobState>), ExecError> {
        let job = self.job(id)?;
        Ok((job.output.subscribe(), job.state.subscribe()))
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

/// Refuses an interactive job beyond the per-project and per-owner limits (queued and
/// running interactive jobs count).
fn check_interactive(
    reg: &Registry,
    limits: &JobLimits,
    req: &JobRequest,
) -> Result<(), ExecError> {
    let live =
        || reg.jobs.values().filter(|j| j.interactive.is_some() && !j.state.borrow().is_final());
    let in_project = live().filter(|j| j.project == req.project).count();
    if in_project >= limits.max_interactive_per_project {
        return Err(ExecError::Limit(format!(
            "this project already has {in_project} interactive jobs, the most it may have; \
             cancel one (cancel_job) before starting another"
        )));
    }
    if let Some(owner) = &req.owner {
        let owned = live().filter(|j| j.owner.as_ref() == Some(owner)).count();
        if owned >= limits.max_interactive_per_owner {
            return Err(ExecError::Limit(format!(
                "you already have {owned} interactive jobs, the most one token may have; cancel \
                 one (cancel_job) before starting another"
            )));
        }
    }
    Ok(())
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
