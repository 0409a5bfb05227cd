//! The tunnel process Sluice runs for reach from the web: started when the process that owns
//! the reach port takes it, watched (its output read for the public address it announces, and
//! started again with a growing pause when it ends), and stopped with its whole process group
//! when reach is turned off or changed, or Sluice exits.
//!
//! The program and its arguments come from the user's setting only (see
//! [`sluice_engine::reach::Tunnel`]); it runs with Sluice's environment minus Sluice's own
//! variables, and nothing it prints reaches a log: its last line is kept, redacted and made
//! safe to show, in the status the window and `sluice reach status` read.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_engine::Engine;
use sluice_engine::reach::{Reach, Tunnel, TunnelState, TunnelStatus};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::limits::Limits;

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
/// The most of the last line shown in the status.
const MAX_MESSAGE_CHARS: usize = 200;

/// What starts a tunnel process: a change to it starts the process again.
pub(crate) type TunnelKey = (Tunnel, u16, Option<String>);

/// The key of `reach`'s tunnel, if Sluice runs one.
pub(crate) fn key_of(reach: &Reach) -> Option<TunnelKey> {
    reach.tunnel_key().map(|(t, port, url)| (t, port, url.map(str::to_owned)))
}

/// A supervised tunnel process.
pub(crate) struct TunnelRunner {
    pub(crate) key: TunnelKey,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl TunnelRunner {
    /// Starts supervising the tunnel `reach` names (it must name one): its process, or for
    /// OpenAI's tunnel, Sluice's own poller, whose calls get `limits`.
    pub(crate) fn start(
        engine: Arc<Engine>,
        reach: Reach,
        key: TunnelKey,
        limits: Limits,
    ) -> TunnelRunner {
        let stop = CancellationToken::new();
        let task = if key.0.runs_program() {
            tokio::spawn(supervise(engine, reach, key.0.clone(), stop.clone()))
        } else {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut tracker =
                    Tracker { engine: engine.clone(), status: TunnelStatus::default() };
                crate::openai::run(engine.clone(), reach, limits, stop, &mut tracker).await;
                if let Err(f) = engine.set_tunnel_status(None) {
                    tracing::warn!(code = %f.code, "cannot clear the tunnel's state");
                }
            })
        };
        TunnelRunner { key, stop, task }
    }

    /// Stops the process group and waits until it is gone.
    pub(crate) async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// The supervisor's record of the tunnel, written through to the engine.
pub(crate) struct Tracker {
    engine: Arc<Engine>,
    pub(crate) status: TunnelStatus,
}

impl Tracker {
    pub(crate) fn set(&mut self, state: TunnelState, pid: Option<u32>, message: Option<String>) {
        self.status.state = state;
        self.status.pid = pid;
        if message.is_some() {
            self.status.message = message;
        }
        if let Err(f) = self.engine.set_tunnel_status(Some(&self.status)) {
            tracing::warn!(code = %f.code, "cannot record the tunnel's state");
        }
    }
}

async fn supervise(engine: Arc<Engine>, reach: Reach, tunnel: Tunnel, stop: CancellationToken) {
    let mut tracker = Tracker { engine: engine.clone(), status: TunnelStatus::default() };
    stop_orphan(&engine, &reach);
    let mut backoff = FIRST_BACKOFF;
    loop {
        tracker.set(TunnelState::Starting, None, None);
        let started = Instant::now();
        let (state, why) = match spawn(&engine, &reach) {
            Ok(child) => match run(&engine, &reach, &tunnel, child, &mut tracker, &stop).await {
                Some(why) => (TunnelState::Restarting, why),
                None => break,
            },
            Err(why) => (TunnelState::Failed, why),
        };
        tracker.status.restarts += 1;
        tracker.set(state, None, Some(why));
        if started.elapsed() >= STEADY {
            backoff = FIRST_BACKOFF;
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
    if let Err(f) = engine.set_tunnel_status(None) {
        tracing::warn!(code = %f.code, "cannot clear the tunnel's state");
    }
}

/// Starts the tunnel program in a process group of its own.
fn spawn(engine: &Engine, reach: &Reach) -> Result<Child, String> {
    let (program, args) = engine.tunnel_command(reach).map_err(|f| f.message)?;
    let mut cmd = Command::new(&program);
    cmd.args(&args)
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
async fn run(
    engine: &Engine,
    reach: &Reach,
    tunnel: &Tunnel,
    mut child: Child,
    tracker: &mut Tracker,
    stop: &CancellationToken,
) -> Option<String> {
    let pid = child.id();
    tracker.set(TunnelState::Running, pid, None);
    let (tx, mut rx) = mpsc::channel::<String>(64);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(lines(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(lines(err, tx));
    }
    let mut announced = !reach.learned;
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
                if !announced && let Some(url) = tunnel.address_in(&line) {
                    announced = true;
                    match engine.tunnel_announced(reach, &url) {
                        Ok(_) => tracing::info!("the tunnel announced its public address"),
                        Err(f) => tracing::warn!(code = %f.code, "cannot record the tunnel's address"),
                    }
                }
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
                    Ok(s) => format!("the tunnel exited ({s})"),
                    Err(e) => format!("the tunnel could not be watched: {e}"),
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

/// Ends the tunnel's whole process group: SIGTERM, then SIGKILL after `GRACE` (Unix). On
/// Windows the process is terminated at once: a console-less process has no gentler signal.
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

/// The tunnel a Sluice process left running when it was killed before it could stop it: its
/// process group is stopped if the recorded process still leads its own group and runs the
/// tunnel program. Linux only (it reads `/proc`); elsewhere such a tunnel only forwards to a
/// port that refuses its host.
fn stop_orphan(engine: &Engine, reach: &Reach) {
    #[cfg(target_os = "linux")]
    {
        let Ok(Some(TunnelStatus { pid: Some(pid), .. })) = engine.tunnel_status() else { return };
        let Ok((program, _)) = engine.tunnel_command(reach) else { return };
        let Some(id) = rustix::process::Pid::from_raw(pid as i32) else { return };
        let exe = std::fs::canonicalize(format!("/proc/{pid}/exe"));
        let leads = rustix::process::getpgid(Some(id)).is_ok_and(|g| g == id);
        if leads && exe.is_ok() && exe.ok() == std::fs::canonicalize(&program).ok() {
            tracing::info!(pid, "stopping the tunnel an earlier Sluice process left running");
            let _ = rustix::process::kill_process_group(id, rustix::process::Signal::KILL);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (engine, reach);
}
