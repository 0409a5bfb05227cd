//! Sluice's desktop app: a thin shell that starts the same engine `sluice serve` runs (in this
//! process), serves MCP on 127.0.0.1, and wires the tray and the control-center window to it.
//! Logic lives in the crates; here are only the builder, plugins, tray and window.
//!
//! Two processes: this one (engine, tray, notifications, native dialogs) runs as long as
//! Sluice does and never creates a webview; the window runs in `sluice-app --window`
//! ([`webview`]), started while it is open ([`window`]).

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[cfg(test)]
mod command_names;
#[cfg(test)]
mod config_checks;
mod engine;
mod native;
mod tray;
mod webview;
mod window;

use tauri::{Manager, RunEvent};
use tauri_plugin_notification::NotificationExt;

/// The argument that starts Sluice in the tray, without opening its window.
const HIDDEN: &str = "--hidden";

fn main() {
    #[cfg(target_os = "linux")]
    webkit_env();
    sluice_engine::logging::init("warn");
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == window::WINDOW) {
        let view = args.iter().find_map(|a| a.strip_prefix("--view=")).map(str::to_owned);
        return webview::run(view);
    }
    let app = tauri::Builder::default()
        // First: a second launch only focuses the running instance.
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            if !args.iter().any(|a| a == HIDDEN) {
                window::show(app, None);
            }
        }))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .manage(window::Window::default())
        .setup(|app| {
            let shell = engine::start(app.handle())?;
            // Before the first notification: a click on one opens its view.
            let handle = app.handle().clone();
            app.notification().on_action(move |action| {
                if action.action_id() == "tap" {
                    window::show(&handle, Some(last_notified_view()));
                }
            })?;
            tray::create(app.handle(), &shell.engine)?;
            // `cargo xtask bench app` times the start to here (with SLUICE_LOG=sluice_app=info).
            tracing::info!("tray ready");
            engine::forward_events(app.handle().clone(), shell.engine.clone());
            engine::forward_jobs(app.handle().clone(), shell.engine.clone());
            app.manage(shell);
            if !std::env::args().any(|a| a == HIDDEN) {
                window::show(app.handle(), None);
            }
            Ok(())
        })
        .build(context())
        .unwrap_or_else(|err| {
            eprintln!("sluice-app: cannot start: {err}");
            std::process::exit(1);
        });
    app.run(|app, event| match event {
        // No window keeps this process alive: only Quit (an explicit exit code) ends it.
        RunEvent::ExitRequested { code: None, api, .. } => api.prevent_exit(),
        RunEvent::Exit => {
            app.state::<window::Window>().close();
            if let Some(shell) = app.try_state::<engine::Shell>() {
                shell.stop();
            }
        }
        _ => {}
    });
}

/// The app's configuration and embedded page, shared by both processes.
fn context() -> tauri::Context {
    tauri::generate_context!()
}

/// "Start at login" in Settings (a .desktop file in ~/.config/autostart on Linux): the window
/// turns it on and off; a start at login goes to the tray only.
fn autostart() -> tauri::plugin::TauriPlugin<tauri::Wry> {
    tauri_plugin_autostart::Builder::new().arg(HIDDEN).build()
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
