//! Starts the engine and its MCP server in this process, exactly as `sluice serve` does, and
//! forwards engine events to the window and the tray.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use anyhow::{Context as _, Result};
use sluice_engine::{DEFAULT_PORT, Engine, EngineConfig, SecretPreference};
use sluice_exec::{JobEvent, JobState};
use tokio_util::sync::CancellationToken;

use crate::App;

/// What the commands and the tray share: the engine, the facts the window shows, and the
/// switch that stops the MCP server on quit.
pub struct Shell {
    pub engine: Arc<Engine>,
    pub ctx: sluice_ipc::Context,
    data_dir: PathBuf,
    shutdown: CancellationToken,
    /// Told when reach has stopped its listener and the tunnel Sluice runs.
    reach_done: Mutex<Option<mpsc::Receiver<()>>>,
}

impl Shell {
    /// Stops serving MCP, forgets the recorded port (so `sluice stdio` does not try a dead
    /// engine) and writes the audit entries still queued: the process exits without unwinding.
    pub fn stop(&self) {
        self.shutdown.cancel();
        let _ = std::fs::remove_file(sluice_engine::engine_file(&self.data_dir));
        // The tunnel's process group must not outlive the tray.
        let done = self.reach_done.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(done) = done {
            let _ = done.recv_timeout(Duration::from_secs(5));
        }
        self.engine.flush_audit();
    }
}

/// Where Sluice keeps its data, the MCP port and the secret store: the defaults, or
/// `SLUICE_DATA_DIR`, `SLUICE_PORT` and `SLUICE_SECRET_STORE` (tests, portable use).
pub struct Config {
    pub data_dir: PathBuf,
    port: u16,
    secret: SecretPreference,
}

pub fn env_config() -> Result<Config> {
    let data_dir = match std::env::var_os("SLUICE_DATA_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => sluice_engine::default_data_dir()
            .context("cannot find a data folder for Sluice; set SLUICE_DATA_DIR")?,
    };
    let port = match std::env::var("SLUICE_PORT") {
        Ok(p) => p.parse().with_context(|| format!("SLUICE_PORT={p:?} is not a port"))?,
        Err(_) => DEFAULT_PORT,
    };
    let secret = match std::env::var("SLUICE_SECRET_STORE").as_deref() {
        Ok("keychain") => SecretPreference::KeychainOnly,
        Ok("file") => SecretPreference::FileOnly,
        _ => SecretPreference::Auto,
    };
    Ok(Config { data_dir, port, secret })
}

/// The `sluice` CLI that stdio-only clients run: installed beside the app, else on PATH.
fn sluice_binary() -> PathBuf {
    std::env::current_exe()
        .ok()
        .map(|exe| exe.with_file_name(if cfg!(windows) { "sluice.exe" } else { "sluice" }))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("sluice"))
}

pub fn start(runtime: &tokio::runtime::Runtime, config: Config) -> Result<Shell> {
    let Config { data_dir, port, secret } = config;
    let engine = Engine::open(&EngineConfig::new(data_dir.clone(), secret))
        .map_err(|f| anyhow::anyhow!("cannot open Sluice's data: {}", f.message))?;
    // As `sluice serve` does: the data folder's one serving engine, crash recovery, stale
    // approvals aborted, the engine non-dumpable and the jobs' subreaper.
    engine.start_serving().map_err(|f| anyhow::anyhow!("{}", f.message))?;
    let engine = Arc::new(engine);
    let shutdown = CancellationToken::new();
    let listener = runtime
        .block_on(sluice_mcp::bind(port))
        .with_context(|| format!("cannot serve MCP on 127.0.0.1:{port}"))?;
    // Port 0 takes a free port: everything below names the one bound.
    let port = listener.local_addr().context("cannot read the bound port")?.port();
    let router =
        sluice_mcp::router(engine.clone(), port, sluice_mcp::Limits::default(), shutdown.clone());
    sluice_engine::write_engine_file(&data_dir, port).context("cannot record the engine's port")?;
    let (watch_engine, stop) = (engine.clone(), shutdown.clone());
    let (reach_done, reach_stopped) = mpsc::channel();
    runtime.spawn(async move {
        let watcher = sluice_engine::watch_roots(watch_engine.clone());
        // The remote front follows the reach setting (off unless the user turned it on).
        let reach =
            sluice_mcp::serve_reach(watch_engine, sluice_mcp::Limits::default(), stop.clone());
        tokio::spawn(async move {
            reach.await;
            let _ = reach_done.send(());
        });
        sluice_mcp::serve(listener, router, stop).await;
        watcher.abort();
    });
    tracing::info!(port, "serving MCP");
    let ctx = sluice_ipc::Context {
        port,
        sluice_binary: sluice_binary(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let reach_done = Mutex::new(Some(reach_stopped));
    Ok(Shell { engine, ctx, data_dir, shutdown, reach_done })
}

/// Engine events → the window and the tray.
pub fn forward_events(app: &App) {
    let (app, engine) = (app.clone(), app.shell().engine.clone());
    let mut rx = engine.subscribe();
    app.0.runtime.clone().spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match rx.recv().await {
                Ok(event) => {
                    use sluice_engine::EngineEvent as E;
                    if let E::AccessChanged { .. }
                    | E::ApprovalRequested { .. }
                    | E::ApprovalDecided { .. } = &event
                    {
                        app.refresh_tray();
                    }
                    if let E::ApprovalRequested { id } = &event
                        && let Ok(a) = sluice_ipc::approval(&engine, id)
                    {
                        crate::native::notify_about(
                            &app,
                            "approvals",
                            "An assistant asks for your approval",
                            &a.notification(),
                        );
                    }
                    crate::window::emit(&app, sluice_ipc::event(&event));
                }
                // Missed some: the window reloads on any event, so one is enough.
                Err(RecvError::Lagged(_)) => {
                    app.refresh_tray();
                    crate::window::emit(&app, sluice_ipc::UiEvent::ProjectsChanged);
                    crate::window::emit(&app, sluice_ipc::UiEvent::TokensChanged);
                    // Any approval event makes the window reload its list.
                    crate::window::emit(
                        &app,
                        sluice_ipc::UiEvent::ApprovalDecided {
                            id: String::new(),
                            state: String::new(),
                        },
                    );
                }
                Err(RecvError::Closed) => break,
            }
        }
    });
}

/// How often the window hears about a running job's output at most.
const JOB_ACTIVITY_EVERY: Duration = Duration::from_millis(250);

/// Job events → the window, the tray, and a notification when a job fails.
/// Output arrives per chunk: it is coalesced to at most one `jobActivity` per job every
/// [`JOB_ACTIVITY_EVERY`], so a chatty job cannot flood the window.
pub fn forward_jobs(app: &App) {
    let (app, engine) = (app.clone(), app.shell().engine.clone());
    let mut rx = engine.jobs().subscribe();
    app.0.runtime.clone().spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        let emit = |e: sluice_ipc::UiEvent| crate::window::emit(&app, e);
        let mut active: BTreeSet<String> = BTreeSet::new();
        let mut tick = tokio::time::interval(JOB_ACTIVITY_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                got = rx.recv() => match got {
                    Ok(JobEvent::Output { id, .. }) => {
                        active.insert(id.0);
                    }
                    Ok(event) => {
                        if let JobEvent::Finished { id, state: JobState::Failed | JobState::TimedOut } =
                            &event
                            && let Ok(job) = sluice_ipc::job(&engine, &id.0)
                        {
                            crate::native::notify_about(&app, "jobs", "A job failed", &job.headline());
                        }
                        if matches!(event, JobEvent::Started { .. } | JobEvent::Finished { .. }) {
                            app.refresh_tray();
                        }
                        emit_opt(&emit, sluice_ipc::job_event(&event));
                    }
                    // Missed some: an activity event without an id makes the window reload.
                    Err(RecvError::Lagged(_)) => {
                        app.refresh_tray();
                        emit(sluice_ipc::UiEvent::JobActivity { id: String::new() });
                    }
                    Err(RecvError::Closed) => break,
                },
                _ = tick.tick(), if !active.is_empty() => {
                    for id in std::mem::take(&mut active) {
                        emit(sluice_ipc::UiEvent::JobActivity { id });
                    }
                }
            }
        }
    });
}

fn emit_opt(emit: &impl Fn(sluice_ipc::UiEvent), e: Option<sluice_ipc::UiEvent>) {
    if let Some(e) = e {
        emit(e);
    }
}
