//! The peer of the app's memory benchmark (`cargo xtask bench app`): the smallest Tauri 2 app,
//! one window with one button, built with the same Tauri and measured the same way.

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!("examples/minimal/tauri.conf.json"))
        .unwrap_or_else(|err| {
            eprintln!("minimal: cannot start: {err}");
            std::process::exit(1);
        });
}
