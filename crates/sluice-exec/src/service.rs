//! A helper process Sluice runs for itself rather than for an assistant: the tunnel of reach
//! from the web. It is the user's own program, named in their settings, so it is not confined
//! like a job; what it gets is Sluice's environment minus Sluice's own variables, no console
//! window, and a process group of its own that goes with it. [`supervise`] starts it, hands
//! each line it prints to its [`ServiceWatcher`] (which finds what it needs there and never
//! logs it), starts it again with a growing pause when it ends, and stops the whole group when
//! told to.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The pause before the first restart; it doubles up to [`MAX_BACKOFF`] while the process keeps
/// ending within [`STEADY`] of its start.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
const STEADY: Duration = Duration::from_secs(60);
/// How long the process group has to exit after SIGTERM before SIGKILL.
#[cfg(unix)]
const GRACE: Duration = Duration::from_secs(3);
/// The most of one output line kept; the rest of the line is dropped.
const MAX_LINE: usize = 4096;
/// The most of the last line a state's message carries.
const MAX_MESSAGE_CHARS: usize = 200;

/// Where a supervised process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceState {
    Starting,
    Running,
    /// It ended; it starts again after a pause.
    Restarting,
    /// It could not start; it is tried again after a pause.
    Failed,
}

/// The side of a supervised process that knows what it is for.
pub trait ServiceWatcher: Send {
    /// What to start now: the program and its arguments, or why it cannot start.
    fn command(&mut self) -> Result<(PathBuf, Vec<String>), String>;
    /// The process's state changed; `message` comes with `Restarting` (how it ended, "exited
    /// (…)", then the last line it printed, redacted and made safe to show) and `Failed` (why
    /// it could not start).
    fn state(&mut self, state: ServiceState, pid: Option<u32>, message: Option<String>);
    /// One line it printed (at most 4 KiB, trailing white space trimmed).
    fn line(&mut self, line: &str);
}

/// Runs the process `watcher` names until `stop`, starting it again when it ends.
pub async fn supervise(watcher: &mut dyn ServiceWatcher, stop: CancellationToken) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        watcher.state(ServiceState::Starting, None, None);
        let started = Instant::now();
        let (state, why) = match watcher.command().and_then(|(p, args)| spawn(&p, &args)) {
            Ok(child) => match watch(child, watcher, &stop).await {
                Some(why) => (ServiceState::Restarting, why),
                None => return,
            },
            Err(why) => (ServiceState::Failed, why),
        };
        watcher.state(state, None, Some(why));
        if started.elapsed() >= STEADY {
            backoff = FIRST_BACKOFF;
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Starts `program` in a process group of its own.
fn spawn(program: &Path, args: &[String]) -> Result<Child, String> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("SLUICE_") {
            cmd.env_remove(name);
        }
    }
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    cmd.creation_flags(0x0800_0000); // CREATE_NO_WINDOW: no console flashes up from the tray
    cmd.spawn().map_err(|e| format!("cannot start {}: {e}", program.display()))
}

/// Watches `child` until it ends (returns why) or `stop` (returns `None` once it is gone).
async fn watch(
    mut child: Child,
    watcher: &mut dyn ServiceWatcher,
    stop: &CancellationToken,
) -> Option<String> {
    let pid = child.id();
    watcher.state(ServiceState::Running, pid, None);
    let (tx, mut rx) = mpsc::channel::<String>(64);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(lines(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(lines(err, tx));
    }
    let mut last = None;
    let mut open = true;
    loop {
        tokio::select! {
            _ = stop.cancelled() => {
                terminate(&mut child).await;
                return None;
            }
            line = rx.recv(), if open => {
                let Some(line) = line else {
                    open = false;
                    continue;
                };
                watcher.line(&line);
                let shown = sluice_core::text::visible(&sluice_core::redact::redact(&line))
                    .chars()
                    .take(MAX_MESSAGE_CHARS)
                    .collect::<String>();
                if !shown.trim().is_empty() {
                    last = Some(shown);
                }
            }
            status = child.wait() => {
                // What it started in its group must not outlive it.
                if let Some(pid) = pid {
                    sweep_group(pid).await;
                }
                let how = match status {
                    Ok(s) => format!("exited ({s})"),
                    Err(e) => format!("could not be watched: {e}"),
                };
                return Some(match last {
                    Some(line) => format!("{how}: {line}"),
                    None => how,
                });
            }
        }
    }
}

/// Sends each line `reader` yields (at most [`MAX_LINE`] bytes of it) until it ends.
async fn lines(reader: impl AsyncRead + Unpin, tx: mpsc::Sender<String>) {
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    loop {
        let (used, end) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => {
                let (used, end) = match buf.iter().position(|b| *b == b'\n') {
                    Some(at) => (at + 1, true),
                    None => (buf.len(), false),
                };
                let room = MAX_LINE.saturating_sub(line.len());
                line.extend_from_slice(&buf[..used.min(room)]);
                (used, end)
            }
        };
        reader.consume(used);
        if end {
            let text = String::from_utf8_lossy(&line).trim_end().to_owned();
            line.clear();
            if tx.send(text).await.is_err() {
                return;
            }
        }
    }
    if !line.is_empty() {
        let _ = tx.send(String::from_utf8_lossy(&line).trim_end().to_owned()).await;
    }
}

/// Ends the process's whole group: SIGTERM, then SIGKILL after `GRACE` (Unix). On Windows the
/// process is terminated at once: a console-less process has no gentler signal.
async fn terminate(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        let _ = tokio::time::timeout(GRACE, child.wait()).await;
    }
    let pid = child.id();
    let _ = child.kill().await;
    if let Some(pid) = pid {
        sweep_group(pid).await;
    }
}

/// Kills what is left of the process group `pid` led, and reaps those of its processes that
/// became this process's children (the engine is the jobs' subreaper on Linux), so none stays
/// a zombie.
async fn sweep_group(pid: u32) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process_group, waitid};
        let Some(group) = Pid::from_raw(pid as i32) else { return };
        let _ = kill_process_group(group, Signal::KILL);
        for _ in 0..50 {
            match waitid(WaitId::Pgid(Some(group)), WaitIdOptions::EXITED | WaitIdOptions::NOHANG) {
                Ok(Some(_)) => continue,
                Ok(None) if kill_process_group(group, Signal::KILL).is_ok() => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                _ => return,
            }
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Stops the process group a Sluice process killed before it could stop it left running: only
/// if `pid` still leads its own group and runs `program`. Linux only (it reads `/proc`);
/// elsewhere such a process is left alone. Returns whether it stopped one.
pub fn stop_orphan(pid: u32, program: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Some(id) = rustix::process::Pid::from_raw(pid as i32) else { return false };
        let exe = std::fs::canonicalize(format!("/proc/{pid}/exe"));
        let leads = rustix::process::getpgid(Some(id)).is_ok_and(|g| g == id);
        if leads && exe.is_ok() && exe.ok() == std::fs::canonicalize(program).ok() {
            return rustix::process::kill_process_group(id, rustix::process::Signal::KILL).is_ok();
        }
        false
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, program);
        false
    }
}
