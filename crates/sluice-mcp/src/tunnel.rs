//! The tunnel Sluice runs for reach from the web: started when the process that owns the reach
//! port takes it, and stopped when reach is turned off or changed, or Sluice exits. A tunnel
//! program is supervised by `sluice_exec::service` (every process Sluice starts is
//! `sluice-exec`'s); this side records its state for the window and `sluice reach status`, and
//! learns the public address it announces. OpenAI's tunnel is Sluice's own poller instead.
//!
//! The program and its arguments come from the user's setting only (see
//! [`sluice_engine::reach::Tunnel`]); nothing it prints reaches a log.

use std::path::PathBuf;
use std::sync::Arc;

use sluice_engine::Engine;
use sluice_engine::reach::{Reach, Tunnel, TunnelState, TunnelStatus};
use sluice_exec::service::{self, ServiceState, ServiceWatcher};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::limits::Limits;

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

/// A tunnel program, as its supervisor sees it: what to run, where its state goes, and the
/// public address in its output.
struct TunnelWatcher {
    tracker: Tracker,
    reach: Reach,
    tunnel: Tunnel,
    /// Whether this run has announced its address (or need not: the user gave it).
    announced: bool,
}

impl ServiceWatcher for TunnelWatcher {
    fn command(&mut self) -> Result<(PathBuf, Vec<String>), String> {
        self.tracker.engine.tunnel_command(&self.reach).map_err(|f| f.message)
    }

    fn state(&mut self, state: ServiceState, pid: Option<u32>, message: Option<String>) {
        let state = match state {
            ServiceState::Starting => TunnelState::Starting,
            ServiceState::Running => {
                self.announced = !self.reach.learned;
                TunnelState::Running
            }
            ServiceState::Restarting => TunnelState::Restarting,
            ServiceState::Failed => TunnelState::Failed,
        };
        if matches!(state, TunnelState::Restarting | TunnelState::Failed) {
            self.tracker.status.restarts += 1;
        }
        let message = match state {
            TunnelState::Restarting => message.map(|m| format!("the tunnel {m}")),
            _ => message,
        };
        self.tracker.set(state, pid, message);
    }

    fn line(&mut self, line: &str) {
        if !self.announced
            && let Some(url) = self.tunnel.address_in(line)
        {
            self.announced = true;
            match self.tracker.engine.tunnel_announced(&self.reach, &url) {
                Ok(_) => tracing::info!("the tunnel announced its public address"),
                Err(f) => tracing::warn!(code = %f.code, "cannot record the tunnel's address"),
            }
        }
    }
}

async fn supervise(engine: Arc<Engine>, reach: Reach, tunnel: Tunnel, stop: CancellationToken) {
    stop_orphan(&engine, &reach);
    let tracker = Tracker { engine: engine.clone(), status: TunnelStatus::default() };
    let mut watcher = TunnelWatcher { tracker, reach, tunnel, announced: false };
    service::supervise(&mut watcher, stop).await;
    if let Err(f) = engine.set_tunnel_status(None) {
        tracing::warn!(code = %f.code, "cannot clear the tunnel's state");
    }
}

/// The tunnel an earlier Sluice process left running when it was killed before it could stop
/// it (its recorded process, if it still runs the tunnel program).
fn stop_orphan(engine: &Engine, reach: &Reach) {
    let Ok(Some(TunnelStatus { pid: Some(pid), .. })) = engine.tunnel_status() else { return };
    let Ok((program, _)) = engine.tunnel_command(reach) else { return };
    if service::stop_orphan(pid, &program) {
        tracing::info!(pid, "stopped the tunnel an earlier Sluice process left running");
    }
}
