//! A tunnel program Sluice runs for reach from the web (`reach_owner.rs` starts and stops it),
//! supervised by `sluice_exec::service` (every process Sluice starts is `sluice-exec`'s): this
//! side records its state for the window and `sluice reach status`, and learns the public
//! address it announces. OpenAI's tunnel is Sluice's own poller instead (`openai.rs`).
//!
//! The program and its arguments come from the user's setting only (see
//! [`sluice_engine::reach::Tunnel`]); nothing it prints reaches a log.

use std::path::PathBuf;
use std::sync::Arc;

use sluice_engine::Engine;
use sluice_engine::reach::{Reach, Tunnel, TunnelState, TunnelStatus};
use sluice_exec::service::{self, ServiceState, ServiceWatcher};
use tokio_util::sync::CancellationToken;

/// The supervisor's record of the tunnel, written through to the engine.
pub(crate) struct Tracker {
    engine: Arc<Engine>,
    pub(crate) status: TunnelStatus,
}

impl Tracker {
    /// A record that starts empty (nothing started yet).
    pub(crate) fn new(engine: Arc<Engine>) -> Tracker {
        Tracker { engine, status: TunnelStatus::default() }
    }

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

pub(crate) async fn supervise(
    engine: Arc<Engine>,
    reach: Reach,
    tunnel: Tunnel,
    stop: CancellationToken,
) {
    stop_orphan(&engine, &reach);
    let tracker = Tracker::new(engine.clone());
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
