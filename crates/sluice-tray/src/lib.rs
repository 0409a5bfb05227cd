//! Sluice's tray process: what runs for as long as Sluice does. It starts the same engine
//! `sluice serve` runs and serves MCP on 127.0.0.1, draws the tray, shows notifications and
//! the native confirmations, and starts the control-center window — a process of its own
//! (`sluice-app --window`, in src-tauri) — while the user has it open.
//!
//! No browser engine here: the tray, menus and event loop are the crates Tauri's own tray is
//! built on (tao, tray-icon, muda), used directly, because Tauri's runtime links WebKit and a
//! Sluice sitting in the tray should not carry it: this process is ~32 MiB instead of ~70 with
//! it (`cargo xtask bench app`, docs/BENCHMARKS.md).

mod engine;
mod instance;
mod native;
mod tray;
mod window;

use std::sync::{Arc, Mutex};

use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder, EventLoopProxy};

use sluice_ipc::wire::HIDDEN_ARG as HIDDEN;

/// Something for the main thread, where the tray, the menus and the dialogs live.
enum Main {
    Menu(muda::MenuEvent),
    Icon(tray_icon::TrayIconEvent),
    /// Redraw the tray from the engine's state.
    Refresh,
    /// Work for the main thread ([`App::run_on_main`]).
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    Run(Box<dyn FnOnce() + Send>),
    Quit,
}

/// What every part of the tray process shares; cheap to clone, usable from any thread.
#[derive(Clone)]
pub(crate) struct App(Arc<Inner>);

struct Inner {
    shell: engine::Shell,
    window: window::Window,
    proxy: Mutex<EventLoopProxy<Main>>,
    runtime: tokio::runtime::Handle,
    /// A redraw of the tray is queued: a burst of engine events makes one redraw, not one each.
    refresh_queued: std::sync::atomic::AtomicBool,
}

impl App {
    pub(crate) fn shell(&self) -> &engine::Shell {
        &self.0.shell
    }

    pub(crate) fn engine(&self) -> &sluice_engine::Engine {
        &self.0.shell.engine
    }

    fn send(&self, message: Main) {
        let proxy = self.0.proxy.lock().unwrap_or_else(|p| p.into_inner());
        // Fails only once the event loop has ended: the process is exiting.
        let _ = proxy.send_event(message);
    }

    /// Runs `f` on the main thread (GTK, the tray and the dialogs live there). Only Linux and
    /// macOS need it (GTK; AppKit's dialogs): on Windows a dialog runs on a thread of its own.
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    pub(crate) fn run_on_main(&self, f: impl FnOnce() + Send + 'static) {
        self.send(Main::Run(Box::new(f)));
    }

    /// Redraws the tray from the engine's state, on the main thread (once for any number of
    /// calls made before the redraw starts).
    pub(crate) fn refresh_tray(&self) {
        if !self.0.refresh_queued.swap(true, std::sync::atomic::Ordering::AcqRel) {
            self.send(Main::Refresh);
        }
    }

    /// Shows the window, on `view` if given.
    pub(crate) fn show(&self, view: Option<&str>) {
        window::show(self, view);
    }

    pub(crate) fn quit(&self) {
        self.send(Main::Quit);
    }
}

/// The tray process's `main`: returns only if Sluice cannot start or another instance runs.
pub fn main() -> anyhow::Result<()> {
    let hidden = std::env::args().any(|a| a == HIDDEN);
    let config = engine::env_config()?;
    // First: a second launch only asks the running instance to show its window.
    let claim = match instance::claim(&config.data_dir)? {
        instance::Claim::First(claim) => claim,
        instance::Claim::Running => {
            if !hidden {
                instance::signal(&config.data_dir)?;
            }
            return Ok(());
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("sluice-engine")
        .build()?;
    let shell = engine::start(&runtime, config)?;
    let event_loop = EventLoopBuilder::<Main>::with_user_event().build();
    let app = App(Arc::new(Inner {
        shell,
        window: window::Window::default(),
        proxy: Mutex::new(event_loop.create_proxy()),
        runtime: runtime.handle().clone(),
        refresh_queued: Default::default(),
    }));
    {
        let proxy = Mutex::new(event_loop.create_proxy());
        muda::MenuEvent::set_event_handler(Some(move |e| {
            let _ = proxy.lock().unwrap_or_else(|p| p.into_inner()).send_event(Main::Menu(e));
        }));
        let proxy = Mutex::new(event_loop.create_proxy());
        tray_icon::TrayIconEvent::set_event_handler(Some(move |e| {
            let _ = proxy.lock().unwrap_or_else(|p| p.into_inner()).send_event(Main::Icon(e));
        }));
    }
    let shown = app.clone();
    claim.listen(move || shown.show(None))?;
    engine::forward_events(&app);
    engine::forward_jobs(&app);
    // SIGTERM (logging out) or Ctrl-C: quit as the tray's Quit does, audit queue written.
    let stopping = app.clone();
    runtime.spawn(async move {
        sluice_engine::shutdown::signal().await;
        stopping.quit();
    });

    let mut tray = None;
    event_loop.run(move |event, _, control_flow| {
        *control_flow = ControlFlow::Wait;
        match event {
            // The tray is made once the loop runs (macOS requires it).
            Event::NewEvents(StartCause::Init) => {
                match tray::create(&app) {
                    Ok(t) => tray = Some(t),
                    Err(err) => tracing::error!(%err, "cannot create the tray icon"),
                }
                // `cargo xtask bench app` times the start to here (SLUICE_LOG=sluice_tray=info).
                tracing::info!("tray ready");
                if !hidden {
                    app.show(None);
                }
            }
            Event::UserEvent(Main::Menu(e)) => tray::on_menu(&app, e.id.as_ref()),
            Event::UserEvent(Main::Icon(e)) => tray::on_icon(&app, e),
            Event::UserEvent(Main::Refresh) => {
                // Cleared first: a change from here on queues another redraw.
                app.0.refresh_queued.store(false, std::sync::atomic::Ordering::Release);
                if let Some(t) = &tray {
                    tray::refresh(&app, t);
                }
            }
            #[cfg(any(target_os = "linux", target_os = "macos"))]
            Event::UserEvent(Main::Run(f)) => f(),
            Event::UserEvent(Main::Quit) => {
                // Quit: the window first, then the engine (jobs die with this process).
                app.0.window.close();
                app.shell().stop();
                tray = None;
                *control_flow = ControlFlow::Exit;
            }
            _ => {}
        }
    })
}
