//! Sluice's desktop app: a thin shell that starts the same engine `sluice serve` runs (in this
//! process), serves MCP on 127.0.0.1, and wires the tray and the control-center window to it.
//! Logic lives in the crates; here are only the builder, plugins, tray, window and commands of
//! one line each.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[cfg(test)]
mod command_names;
mod commands;
mod engine;
mod tray;

use tauri::{Emitter, Manager, RunEvent, WindowEvent};
use tauri_plugin_notification::NotificationExt;

fn main() {
    sluice_engine::logging::init("warn");
    let app = tauri::Builder::default()
        // First: a second launch only focuses the running instance.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| show_window(app)))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .invoke_handler(commands::handler())
        .setup(|app| {
            let shell = engine::start(app.handle())?;
            // Before the first notification: a click on one opens the Approvals view.
            let handle = app.handle().clone();
            app.notification().on_action(move |action| {
                if action.action_id() == "tap" {
                    show_view(&handle, "approvals");
                }
            })?;
            tray::create(app.handle(), &shell.engine)?;
            engine::forward_events(app.handle().clone(), shell.engine.clone());
            app.manage(shell);
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the window keeps Sluice running in the tray.
            if let WindowEvent::CloseRequested { api, .. } = event {
                api.prevent_close();
                let _ = window.hide();
            }
        })
        .build(tauri::generate_context!())
        .unwrap_or_else(|err| {
            eprintln!("sluice-app: cannot start: {err}");
            std::process::exit(1);
        });
    app.run(|app, event| {
        if let RunEvent::Exit = event
            && let Some(shell) = app.try_state::<engine::Shell>()
        {
            shell.stop();
        }
    });
}

/// Shows, restores and focuses the control-center window.
pub fn show_window(app: &tauri::AppHandle) {
    if let Some(w) = app.get_webview_window("main") {
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

/// A native notification; where no notification server runs, only a log line.
pub fn notify(app: &tauri::AppHandle, title: &str, body: &str) {
    if let Err(err) = app.notification().builder().title(title).body(body).show() {
        tracing::warn!(%err, "cannot show a notification");
    }
}
