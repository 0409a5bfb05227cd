//! Sluice's desktop app: a thin shell that starts the same engine `sluice serve` runs (in this
//! process), serves MCP on 127.0.0.1, and wires the tray and the control-center window to it.
//! Logic lives in the crates; here are only the builder, plugins, tray, window and commands of
//! one line each.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[cfg(test)]
mod command_names;
mod commands;
mod engine;
mod native;
mod tray;

use tauri::{Emitter, Manager, RunEvent};
use tauri_plugin_notification::NotificationExt;

/// The argument that starts Sluice in the tray, without opening its window.
const HIDDEN: &str = "--hidden";

fn main() {
    #[cfg(target_os = "linux")]
    webkit_env();
    sluice_engine::logging::init("warn");
    let app = tauri::Builder::default()
        // First: a second launch only focuses the running instance.
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            if !args.iter().any(|a| a == HIDDEN) {
                show_window(app);
            }
        }))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        // "Start at login" in Settings (a .desktop file in ~/.config/autostart on Linux). A start
        // at login goes to the tray only: no window, so no WebKit processes either.
        .plugin(tauri_plugin_autostart::Builder::new().arg(HIDDEN).build())
        .invoke_handler(commands::handler())
        .setup(|app| {
            let shell = engine::start(app.handle())?;
            // Before the first notification: a click on one opens the Approvals view.
            let handle = app.handle().clone();
            app.notification().on_action(move |action| {
                if action.action_id() == "tap" {
                    show_view(&handle, last_notified_view());
                }
            })?;
            tray::create(app.handle(), &shell.engine)?;
            // `cargo xtask bench app` times the start to here (with SLUICE_LOG=sluice_app=info).
            tracing::info!("tray ready");
            engine::forward_events(app.handle().clone(), shell.engine.clone());
            engine::forward_jobs(app.handle().clone(), shell.engine.clone());
            app.manage(shell);
            if !std::env::args().any(|a| a == HIDDEN) {
                show_window(app.handle());
            }
            Ok(())
        })
        .build(tauri::generate_context!())
        .unwrap_or_else(|err| {
            eprintln!("sluice-app: cannot start: {err}");
            std::process::exit(1);
        });
    app.run(|app, event| match event {
        // Closing the window destroys it — the webview and WebKit's processes with it — and
        // Sluice keeps running in the tray; only Quit (an explicit exit code) ends it.
        RunEvent::ExitRequested { code: None, api, .. } => api.prevent_exit(),
        RunEvent::Exit => {
            if let Some(shell) = app.try_state::<engine::Shell>() {
                shell.stop();
            }
        }
        _ => {}
    });
}

/// Settings for GTK and WebKit, made before either starts; a value the user set is kept.
///
/// - `GDK_GL=disable` on X11: GTK's X11 backend loads the OpenGL driver when it opens the
///   display, only to choose visuals, which maps Mesa and LLVM into this process (about 30 MiB,
///   most of it private: LLVM's relocated pages). Nothing here draws with GTK's GL — the tray
///   is an icon and a menu, and WebKit sets up its own EGL when a window opens. Wayland's
///   backend loads no GL at start and is left alone.
/// - `JSC_useJIT=false`, which WebKit's web process inherits: the window runs only Sluice's own
///   bundled script (CSP `script-src 'self'`), which needs no JIT tiers, and a JIT is the usual
///   way into a web process; the interpreter also uses less memory.
///
/// Measured with `cargo xtask bench app` (docs/BENCHMARKS.md): started at login 104 → 70 MiB;
/// window open −9 MiB.
#[cfg(target_os = "linux")]
fn webkit_env() {
    let set = |key: &str, value: &str| {
        if std::env::var_os(key).is_none() {
            // SAFETY: the first thing `main` does, while this is the only thread.
            unsafe { std::env::set_var(key, value) };
        }
    };
    if std::env::var_os("WAYLAND_DISPLAY").is_none() {
        set("GDK_GL", "disable");
    }
    set("JSC_useJIT", "false");
}

/// Shows, restores and focuses the control-center window, opening it again (from the window
/// configuration in tauri.conf.json) when it was closed.
pub fn show_window(app: &tauri::AppHandle) {
    let window = app.get_webview_window("main").or_else(|| {
        let config = app.config().app.windows.iter().find(|w| w.label == "main")?;
        tauri::WebviewWindowBuilder::from_config(app, config)
            .and_then(|builder| builder.build())
            .inspect_err(|err| tracing::warn!(%err, "cannot open the window"))
            .ok()
    });
    if let Some(w) = window {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
    }
}

/// Shows the window on one view (`approvals`, …).
pub fn show_view(app: &tauri::AppHandle, view: &str) {
    show_window(app);
    let _ =
        app.emit(sluice_ipc::EVENT_CHANNEL, sluice_ipc::UiEvent::OpenView { view: view.into() });
}

/// The view the newest notification is about: a click on a notification opens it.
static LAST_NOTIFIED: std::sync::Mutex<&'static str> = std::sync::Mutex::new("approvals");

fn last_notified_view() -> &'static str {
    *LAST_NOTIFIED.lock().unwrap_or_else(|p| p.into_inner())
}

/// A notification about something a view shows (`approvals`, `jobs`).
pub fn notify_about(app: &tauri::AppHandle, view: &'static str, title: &str, body: &str) {
    *LAST_NOTIFIED.lock().unwrap_or_else(|p| p.into_inner()) = view;
    notify(app, title, body);
}

/// A native notification; where no notification server runs, only a log line.
pub fn notify(app: &tauri::AppHandle, title: &str, body: &str) {
    if let Err(err) = app.notification().builder().title(title).body(body).show() {
        tracing::warn!(%err, "cannot show a notification");
    }
}
