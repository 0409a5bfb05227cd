//! The control-center window, seen from the tray process: it runs in a process of its own
//! (`sluice-app --window`, src-tauri/src/webview.rs), started when the user opens it and gone
//! when they close it, so that WebKit's memory goes with it. This module starts that process,
//! answers the commands its page calls ([`sluice_ipc::dispatch`]) and forwards engine events to
//! it.
//!
//! Only the process started here holds the other end of its pipe: nothing the MCP side
//! receives can reach these commands.

use std::io::BufReader;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sluice_ipc::dispatch::{self, Api};
use sluice_ipc::wire::{self, ToTray, ToWindow};

use crate::App;

/// The window process, while there is one.
#[derive(Default)]
pub struct Window {
    open: Mutex<Option<Open>>,
}

struct Open {
    process: Child,
    to_window: mpsc::Sender<ToWindow>,
    /// Tells this process from one started later (the reader of an old one may end late).
    serial: u64,
}

impl Window {
    fn lock(&self) -> MutexGuard<'_, Option<Open>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Closes the window and waits a moment for its process to end; then ends it.
    pub fn close(&self) {
        let Some(mut open) = self.lock().take() else { return };
        // Dropping the sender closes the pipe: the window process exits on its own.
        drop(open.to_window);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = open.process.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = open.process.kill();
        let _ = open.process.wait();
    }
}

/// Shows, raises and focuses the window, on `view` if given; starts its process when it is not
/// running.
pub fn show(app: &App, view: Option<&str>) {
    let mut open = app.0.window.lock();
    if let Some(o) = open.as_ref()
        && o.to_window.send(ToWindow::Show { view: view.map(str::to_owned) }).is_ok()
    {
        return;
    }
    // One whose pipe broke before its reader noticed: it is gone or going; reap it.
    if let Some(mut gone) = open.take() {
        let _ = gone.process.kill();
        let _ = gone.process.wait();
    }
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    match start(app, view, serial) {
        Ok(started) => *open = Some(started),
        Err(err) => {
            tracing::error!(%err, "cannot open the window");
            crate::native::notify(app, "Sluice could not open its window", &err.to_string());
        }
    }
}

/// Sends an engine event to the page, if the window is open.
pub fn emit(app: &App, event: sluice_ipc::UiEvent) {
    if let Some(open) = app.0.window.lock().as_ref() {
        let _ = open.to_window.send(ToWindow::Event { event });
    }
}

/// The desktop app's binary, beside this one: Tauri's, with the webview.
const APP_BINARY: &str = if cfg!(windows) { "sluice-app.exe" } else { "sluice-app" };

fn start(app: &App, view: Option<&str>, serial: u64) -> std::io::Result<Open> {
    let mut cmd = Command::new(std::env::current_exe()?.with_file_name(APP_BINARY));
    cmd.arg(wire::WINDOW_ARG).stdin(Stdio::piped()).stdout(Stdio::piped());
    if let Some(view) = view {
        cmd.arg(format!("--view={view}"));
    }
    let mut process = cmd.spawn()?;
    let (Some(stdin), Some(stdout)) = (process.stdin.take(), process.stdout.take()) else {
        let _ = process.kill();
        return Err(std::io::Error::other("the window process has no pipe"));
    };
    let (to_window, queue) = mpsc::channel::<ToWindow>();
    // One writer, so messages never interleave and a slow window blocks no one.
    std::thread::Builder::new().name("sluice-to-window".into()).spawn(move || {
        let mut stdin = stdin;
        for message in queue {
            if wire::send(&mut stdin, &message).is_err() {
                break;
            }
        }
    })?;
    let (handle, replies) = (app.clone(), to_window.clone());
    std::thread::Builder::new()
        .name("sluice-from-window".into())
        .spawn(move || serve(handle, stdout, replies, serial))?;
    Ok(Open { process, to_window, serial })
}

/// Answers the page's calls until the window process ends, then forgets it.
fn serve(app: App, stdout: ChildStdout, replies: mpsc::Sender<ToWindow>, serial: u64) {
    let mut reader = wire::Reader::new(BufReader::new(stdout));
    loop {
        match reader.read::<ToTray>() {
            Ok(Some(ToTray::Call { id, cmd, args })) => {
                let (app, replies) = (app.clone(), replies.clone());
                // Commands block (confirmations wait for the user): off the async workers.
                app.0.runtime.clone().spawn_blocking(move || {
                    let result = call(&app, &cmd, args);
                    let _ = replies.send(ToWindow::Reply { id, result });
                });
            }
            Ok(None) => break,
            Err(err) => {
                tracing::error!(%err, "the window process sent something unreadable; closing it");
                break;
            }
        }
    }
    let mut open = app.0.window.lock();
    if open.as_ref().is_some_and(|o| o.serial == serial)
        && let Some(mut ended) = open.take()
    {
        drop(open);
        let _ = ended.process.kill();
        let _ = ended.process.wait();
    }
}

pub(crate) fn call(
    app: &App,
    cmd: &str,
    args: serde_json::Value,
) -> Result<serde_json::Value, sluice_ipc::IpcError> {
    let shell = app.shell();
    let desktop = crate::native::Desktop(app.clone());
    let api =
        Api { engine: &shell.engine, ctx: &shell.ctx, connector: connector(), desktop: &desktop };
    dispatch::call(&api, cmd, args)
}

/// The previews Connect waits on: one set for the app's lifetime.
fn connector() -> &'static sluice_ipc::Connector {
    static CONNECTOR: std::sync::OnceLock<sluice_ipc::Connector> = std::sync::OnceLock::new();
    CONNECTOR.get_or_init(sluice_ipc::Connector::new)
}
