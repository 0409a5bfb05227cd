//! One job's threads: [`launch`] spawns the process and its output readers, and the supervisor
//! waits for the exit (keeping the leader unreaped), enforces the timeout, carries out kills,
//! cleans up what is left of the tree, and then starts the queued jobs that now fit the limits
//! ([`dispatch_queue`]).

use std::io::Read;
use std::sync::mpsc;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

use super::admission::can_run;
#[cfg(unix)]
use super::input::InputEnd;
use super::{Channel, Control, Inner, Job, JobEvent, JobRequest, JobState, Stream, lock};

use crate::error::ExecError;
use crate::kill::{self, Tree};
use crate::output::OutputPipeline;
use crate::spawn;

/// Spawns the job's process and its threads. Called with the registry locked, so the job is
/// running (and killable) before any stop can look at the registry. With `channel`, its stdin
/// and stdout are returned to the engine ([`super::Jobs::start_channel`]) and only its stderr
/// is read into its log.
pub(super) fn launch(
    inner: &Arc<Inner>,
    job: &Arc<Job>,
    req: JobRequest,
    channel: bool,
) -> Result<Option<Channel>, ExecError> {
    let interactive = if channel { Some(spawn::Interactive::Pipe) } else { req.interactive };
    let live = spawn::Live { interactive, publish: req.publish.clone() };
    let mut spawned = spawn::spawn_with(&req.command, &req.sandbox, &req.path, &live)?;
    *lock(&job.ports) = spawned.ports.clone();
    let made = match channel {
        true => match take_channel(&mut spawned) {
            Ok(made) => Some(made),
            Err(e) => {
                kill::kill_tree(&spawned.tree, Duration::ZERO);
                let _ = spawned.child.wait();
                return Err(e);
            }
        },
        false => None,
    };
    #[cfg(windows)]
    let egress = spawned.egress.take();
    let mut child = spawned.child;
    let tree = spawned.tree;
    // A terminal's master carries the job's output (one stream) and takes its input.
    #[cfg(unix)]
    let terminal_output: Option<Box<dyn Source>> = match spawned.input {
        Some(spawn::SpawnedInput::Terminal(master)) => {
            let master = Arc::new(master);
            *lock(&job.input) = Some(InputEnd::Terminal(master.clone()));
            Some(Box::new(TerminalReader(master)))
        }
        Some(spawn::SpawnedInput::Pipe(fd)) => {
            *lock(&job.input) = Some(InputEnd::Pipe(Some(fd)));
            None
        }
        None => None,
    };
    #[cfg(not(unix))]
    let terminal_output: Option<Box<dyn Source>> = None;
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

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut readers = 0;
    let (stdout, stderr) = output_of(&mut child);
    let pipes: [(Stream, Option<Box<dyn Source>>); 2] =
        [(Stream::Stdout, terminal_output.or(stdout)), (Stream::Stderr, stderr)];
    for (stream, pipe) in pipes {
        let Some(pipe) = pipe else { continue };
        let pipeline = OutputPipeline::new(job.redactor.clone());
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
        supervise(Supervision {
            job: job2,
            inner: inner2,
            child,
            tree,
            ctl: ctl_rx,
            timeout,
            grace,
            readers_done: done_rx,
            readers,
            #[cfg(windows)]
            egress,
        })
    });
    if let Err(e) = supervisor {
        kill::kill_tree(&tree, Duration::ZERO);
        return Err(ExecError::os("starting the job's supervisor thread", e));
    }
    Ok(made)
}

/// A channel job's stdin (blocking again: its writer is the engine's own thread) and stdout.
#[cfg(unix)]
fn take_channel(spawned: &mut spawn::Spawned) -> Result<Channel, ExecError> {
    let input = match spawned.input.take() {
        Some(spawn::SpawnedInput::Pipe(fd)) => fd,
        _ => return Err(ExecError::Invalid("a channel job's input must be a pipe".into())),
    };
    rustix::io::ioctl_fionbio(&input, false)
        .map_err(|e| ExecError::os("preparing the job's channel", e.into()))?;
    let output = spawned
        .child
        .child()
        .stdout
        .take()
        .ok_or_else(|| ExecError::Invalid("a channel job's output must be a pipe".into()))?;
    Ok(Channel { input: Box::new(std::fs::File::from(input)), output: Box::new(output) })
}

#[cfg(not(unix))]
fn take_channel(_: &mut spawn::Spawned) -> Result<Channel, ExecError> {
    Err(ExecError::NotInteractive("a job the engine talks to needs Linux or macOS".into()))
}

/// One output stream of the job, if it has it.
type Pipe = Option<Box<dyn Source>>;

/// The leader's output pipes (stdout, stderr), as the job's readers take them.
fn output_of(leader: &mut spawn::Leader) -> (Pipe, Pipe) {
    match leader {
        spawn::Leader::Std(child) => (
            child.stdout.take().map(|p| Box::new(widened(p)) as Box<dyn Source>),
            child.stderr.take().map(|p| Box::new(widened(p)) as Box<dyn Source>),
        ),
        #[cfg(windows)]
        spawn::Leader::Account(p) => (
            p.stdout.take().map(|f| Box::new(f) as Box<dyn Source>),
            p.stderr.take().map(|f| Box::new(f) as Box<dyn Source>),
        ),
    }
}

/// How much a job's output pipe holds (on Linux, where the system allows it; 64 KiB by
/// default): a job that writes fast runs this far ahead of its reader instead of waiting for it
/// every 64 KiB. Pages are only taken while they hold output not yet read.
#[cfg(target_os = "linux")]
const PIPE_SIZE: usize = 1 << 20;
/// What the reader takes at once: fewer reads and chunks through the pipeline, while its
/// buffers stay small enough for the processor's cache.
const READ_SIZE: usize = 128 * 1024;

/// The pipe, holding [`PIPE_SIZE`] if the system allows it (else as it was).
#[cfg(target_os = "linux")]
fn widened<P: std::os::fd::AsFd>(pipe: P) -> P {
    let _ = rustix::pipe::fcntl_setpipe_size(&pipe, PIPE_SIZE);
    pipe
}

#[cfg(not(target_os = "linux"))]
fn widened<P>(pipe: P) -> P {
    pipe
}

/// How long a stream must stay quiet before held-back text that can be shown is released (a
/// prompt: see [`OutputPipeline::flush_idle_into`]); what is released does not depend on it.
const IDLE: Duration = Duration::from_millis(2);

/// A job's output stream: read, and (where the system says so) whether more arrives soon.
trait Source: Read + Send {
    /// Whether there is something to read within `wait` (`true` where that cannot be known,
    /// so nothing is released early there).
    fn arrives_within(&self, wait: Duration) -> bool {
        let _ = wait;
        true
    }
}

#[cfg(unix)]
impl<T: Read + Send + std::os::fd::AsFd> Source for T {
    fn arrives_within(&self, wait: Duration) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut fds = [PollFd::new(self, PollFlags::IN)];
        let timeout = Timespec {
            tv_sec: wait.as_secs().try_into().unwrap_or(i64::MAX),
            tv_nsec: wait.subsec_nanos().into(),
        };
        // An error (EINTR) counts as arriving: the read that follows finds out.
        !matches!(poll(&mut fds, Some(&timeout)), Ok(0))
    }
}

#[cfg(not(unix))]
impl<T: Read + Send> Source for T {}

fn read_stream(
    mut pipe: Box<dyn Source>,
    mut pipeline: OutputPipeline,
    job: &Job,
    stream: Stream,
    events: &broadcast::Sender<JobEvent>,
    done: mpsc::Sender<()>,
) {
    let mut buf = vec![0u8; READ_SIZE];
    let mut text = String::new();
    let publish = |text: &str| {
        if text.is_empty() {
            return;
        }
        let total = {
            let mut ring = job.ring(stream);
            ring.push(text);
            ring.total()
        };
        job.output.send_modify(|n| *n += text.len() as u64);
        let _ = events.send(JobEvent::Output { id: job.id.clone(), stream, total_bytes: total });
    };
    loop {
        if pipeline.holding() && !pipe.arrives_within(IDLE) {
            text.clear();
            pipeline.flush_idle_into(&mut text);
            publish(&text);
        }
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                text.clear();
                pipeline.push_into(&buf[..n], &mut text);
                publish(&text);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    publish(&pipeline.finish());
    let _ = done.send(());
}

/// Reads a terminal's non-blocking master as a blocking reader: waits for data with `poll`.
/// The end of the output is `EIO`: every holder of the slave has closed it (the job's tree is
/// gone).
#[cfg(unix)]
struct TerminalReader(Arc<std::os::fd::OwnedFd>);

#[cfg(unix)]
impl std::os::fd::AsFd for TerminalReader {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}

#[cfg(unix)]
impl Read for TerminalReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use rustix::event::{PollFd, PollFlags, poll};
        use rustix::io::Errno;
        loop {
            match rustix::io::read(&*self.0, &mut *buf) {
                Ok(n) => return Ok(n),
                Err(Errno::AGAIN | Errno::INTR) => {
                    let mut fds = [PollFd::new(&*self.0, PollFlags::IN)];
                    match poll(&mut fds, None) {
                        Ok(_) | Err(Errno::INTR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(Errno::IO) => return Ok(0),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Blocks until `pid` has exited, leaving it a zombie (unreaped), so its pid stays reserved.
/// Returns whether it observed the exit.
#[cfg(unix)]
fn wait_exit_keeping_zombie(pid: u32) -> bool {
    use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return true };
    // WNOWAIT observes the exit without reaping.
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
    loop {
        match waitid(WaitId::Pid(pid), options) {
            Err(rustix::io::Errno::INTR) => continue,
            _ => return true,
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

/// What a job's supervisor thread owns: the job, its process and tree, its control channel,
/// its time limits, and how many output readers it waits for.
struct Supervision {
    job: Arc<Job>,
    inner: Weak<Inner>,
    child: spawn::Leader,
    tree: Tree,
    ctl: mpsc::Receiver<Control>,
    timeout: Option<Duration>,
    grace: Duration,
    readers_done: mpsc::Receiver<()>,
    readers: usize,
    /// Windows: the job's registries proxy, which ends with it.
    #[cfg(windows)]
    egress: Option<crate::egress::LoopbackProxy>,
}

fn supervise(s: Supervision) {
    #[cfg(windows)]
    let _egress = s.egress;
    let Supervision {
        job, inner, mut child, tree, ctl, timeout, grace, readers_done, readers, ..
    } = s;
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
            Ok(Control::Interrupt) => interrupt(&tree),
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
    kill::release(&tree);
    for _ in 0..readers {
        // Every writer of the pipes is dead now; a reader that still does not finish holds a
        // pipe some survivor inherited, and the job ends without the rest of its output.
        if readers_done.recv_timeout(Duration::from_secs(2)).is_err() {
            break;
        }
    }
    let spawn::Exit { code, signal } = status.unwrap_or_default();
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
    // No input once it has ended: a write now is refused, not lost. Its ports went with it.
    *lock(&job.input) = None;
    *lock(&job.ports) = None;
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
        if let Err(e) = launch(inner, &job, req, false) {
            let mut d = lock(&job.data);
            d.error = Some(e.to_string());
            d.finished = Some(Instant::now());
            drop(d);
            inner.set_state(&job, JobState::Failed);
            let _ = inner.events.send(JobEvent::Finished { id, state: JobState::Failed });
        }
    }
}

/// SIGINT to the job's process group (Ctrl-C for a job whose input is a pipe). The leader is
/// unreaped, so its group id is still the job's.
#[cfg(unix)]
fn interrupt(tree: &Tree) {
    use rustix::process::{Pid, Signal, kill_process_group};
    if let Some(pid) = i32::try_from(tree.leader).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, Signal::INT);
    }
}

#[cfg(not(unix))]
fn interrupt(_: &Tree) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn output_pipes_are_widened_where_the_system_allows() {
        let (read, _write) = rustix::pipe::pipe().expect("pipe");
        let read = super::widened(read);
        let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        let size = rustix::pipe::fcntl_getpipe_size(&read).expect("pipe size");
        if max >= super::PIPE_SIZE {
            assert_eq!(size, super::PIPE_SIZE);
        } else {
            assert!(size >= 4096, "{size}");
        }
    }
}
