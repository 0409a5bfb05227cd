//! `sluice-tray`: Sluice's long-running process (engine, MCP server, tray), which `sluice-app`
//! becomes at start. It links no browser engine; see crates/sluice-tray.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    sluice_engine::logging::init("warn");
    if let Err(err) = sluice_tray::main() {
        eprintln!("sluice: cannot start: {err:#}");
        std::process::exit(1);
    }
}
