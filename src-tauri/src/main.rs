//! `sluice-app`, Sluice's desktop app. Sluice runs as two processes:
//!
//! - the tray process (`sluice-tray`, crates/sluice-tray): engine, MCP server, tray,
//!   notifications and native dialogs, for as long as Sluice runs, with no browser engine;
//! - the window process (`sluice-app --window`, [`webview`]): the control-center window,
//!   started by the tray process while the user has it open.
//!
//! Launched any other way (the desktop entry, a start at login, `cargo tauri dev`), this binary
//! becomes the tray process at once ([`become_tray`]), so what the user starts is what runs.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[cfg(test)]
mod command_names;
#[cfg(test)]
mod config_checks;
mod webview;

fn main() {
    #[cfg(target_os = "linux")]
    webkit_env();
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == sluice_ipc::wire::WINDOW_ARG) {
        become_tray(&args[1..]);
    }
    sluice_engine::logging::init("warn");
    let view = args.iter().find_map(|a| a.strip_prefix("--view=")).map(str::to_owned);
    webview::run(view);
}

/// Replaces this process with the tray process, `sluice-tray` beside this binary, with the
/// same arguments. On Unix the process stays the same (its id, its parent, what started it
/// waiting on it) and drops WebKit, which this binary links; Windows has no exec, so the
/// tray process is started and this one exits.
fn become_tray(args: &[String]) -> ! {
    let tray = match std::env::current_exe() {
        Ok(exe) => {
            exe.with_file_name(if cfg!(windows) { "sluice-tray.exe" } else { "sluice-tray" })
        }
        Err(err) => fail(&format!("cannot find this program's folder: {err}")),
    };
    let mut cmd = std::process::Command::new(&tray);
    cmd.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let err = cmd.exec();
        fail(&format!("cannot start {}: {err}", tray.display()))
    }
    #[cfg(not(unix))]
    match cmd.spawn() {
        Ok(_) => std::process::exit(0),
        Err(err) => fail(&format!("cannot start {}: {err}", tray.display())),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("sluice-app: {message}");
    std::process::exit(1);
}

/// The app's configuration and embedded page.
fn context() -> tauri::Context {
    tauri::generate_context!()
}

/// "Start at login" in Settings (a .desktop file in ~/.config/autostart on Linux), turned on
/// and off from the window: it starts this binary with `--hidden`, which becomes the tray
/// process with no window.
fn autostart() -> tauri::plugin::TauriPlugin<tauri::Wry> {
    tauri_plugin_autostart::Builder::new().arg(sluice_ipc::wire::HIDDEN_ARG).build()
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
