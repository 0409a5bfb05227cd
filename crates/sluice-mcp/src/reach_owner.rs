//! Reach from the web while it is on, in the one process that serves the data folder: the
//! listener of the remote front (`reach.rs`) for exactly the current setting, and the tunnel it
//! names — a program (`tunnel.rs`) or OpenAI's poller (`openai.rs`) — started again only when
//! what starts it changed.

use std::sync::Arc;
use std::time::Duration;

use sluice_engine::Engine;
use sluice_engine::reach::{Reach, Tunnel};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::http::{bind, serve};
use crate::limits::Limits;
use crate::reach::remote_router;
use crate::tunnel::{self, Tracker};

/// How often the setting is read to follow it.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// Follows the reach setting until `shutdown`: while reach is on, serves the remote front on
/// `127.0.0.1:<port>` with `limits` per token, and runs the tunnel the setting names.
pub async fn serve_reach(engine: Arc<Engine>, limits: Limits, shutdown: CancellationToken) {
    let mut owner: Option<Owner> = None;
    loop {
        // A setting that cannot be read this moment (the database busy) changes nothing: a
        // tunnel stopped for it would come back with another address.
        let wanted = match engine.reach() {
            Ok(wanted) => wanted,
            Err(f) => {
                tracing::warn!(code = %f.code, "cannot read the reach setting; keeping it as is");
                owner.as_ref().and_then(|o| o.listening.as_ref().map(|(r, _)| r.clone()))
            }
        };
        match (wanted, owner.as_mut()) {
            (Some(reach), Some(owner)) => owner.follow(reach).await,
            (Some(reach), None) => {
                let mut started = Owner::new(&engine, limits, &shutdown);
                started.follow(reach).await;
                owner = Some(started);
            }
            (None, Some(_)) => {
                if let Some(owner) = owner.take() {
                    owner.close().await;
                }
                tracing::info!("reach from the web stopped");
            }
            (None, None) => {}
        }
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(WATCH_INTERVAL) => {}
        }
    }
    if let Some(owner) = owner {
        owner.close().await;
    }
}

/// Reach while it is on, in the one process that serves the data folder (the tray or `sluice
/// serve`: the engine's serving lock keeps it one, so there is never a second tunnel announcing
/// an address of its own).
struct Owner {
    engine: Arc<Engine>,
    limits: Limits,
    shutdown: CancellationToken,
    /// The setting served, and its listener's stop (`None` while its port cannot be bound:
    /// tried again every tick, said once).
    listening: Option<(Reach, Option<CancellationToken>)>,
    failed_port: Option<u16>,
    tunnel: Option<TunnelRunner>,
}

impl Owner {
    fn new(engine: &Arc<Engine>, limits: Limits, shutdown: &CancellationToken) -> Owner {
        Owner {
            engine: engine.clone(),
            limits,
            shutdown: shutdown.clone(),
            listening: None,
            failed_port: None,
            tunnel: None,
        }
    }

    /// Serves `reach`: the tunnel it names (started again only when what starts it changed,
    /// never for an address it announced itself), and the listener for exactly this setting.
    async fn follow(&mut self, reach: Reach) {
        let key = key_of(&reach);
        // OpenAI's tunnel is Sluice's own poller, whose router and grant are this setting's:
        // any change starts it again.
        let polled = reach.tunnel.as_ref().is_some_and(|t| !t.runs_program());
        let changed = self.listening.as_ref().map(|(r, _)| r) != Some(&reach);
        if self.tunnel.as_ref().map(|t| &t.key) != key.as_ref() || (polled && changed) {
            if let Some(old) = self.tunnel.take() {
                old.stop().await;
            }
            self.tunnel = key.map(|key| {
                TunnelRunner::start(self.engine.clone(), reach.clone(), key, self.limits)
            });
        }
        if self.listening.as_ref().map(|(r, _)| r) != Some(&reach) {
            if let Some((_, Some(stop))) = self.listening.take() {
                stop.cancel();
                // Time for the old listener to let the port go before the new one binds it.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            self.listening = Some((reach, None));
        }
        let Some((reach, listening @ None)) = &mut self.listening else { return };
        // OpenAI's tunnel is polled, not connected to: nothing listens for it.
        if reach.tunnel.as_ref().is_some_and(|t| !t.runs_program()) {
            return;
        }
        match bind(reach.port).await {
            Ok(listener) => {
                let stop = self.shutdown.child_token();
                let router = remote_router(self.engine.clone(), reach, self.limits, stop.clone());
                tokio::spawn(serve(listener, router, stop.clone()));
                tracing::info!(port = reach.port, "reach from the web is on");
                *listening = Some(stop);
                self.failed_port = None;
            }
            Err(err) if self.failed_port != Some(reach.port) => {
                tracing::error!(%err, "cannot listen for the tunnel; trying again");
                self.failed_port = Some(reach.port);
            }
            Err(_) => {}
        }
    }

    /// Stops the tunnel and the listener.
    async fn close(mut self) {
        if let Some(tunnel) = self.tunnel.take() {
            tunnel.stop().await;
        }
        if let Some((_, Some(stop))) = self.listening.take() {
            stop.cancel();
        }
    }
}

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
            tokio::spawn(tunnel::supervise(engine, reach, key.0.clone(), stop.clone()))
        } else {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut tracker = Tracker::new(engine.clone());
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
