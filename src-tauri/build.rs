//! Generates the app's ACL: one `allow-<command>` permission per command, so a window gets
//! only the commands its capability lists (docs/THREATS.md UI-04).
//!
//! With `custom-protocol` the page in `ui/dist` is embedded at compile time. Cargo does not
//! know that, so a binary built before `npm run build` finished (or while `ui/dist` was empty)
//! kept that empty page through every later build and showed "asset not found: index.html".
//! Here the whole folder is a build input, and a build without the page is refused.

include!("src/command_names.rs");

fn main() {
    // Read when the script runs, not when it was compiled: a build script compiled for one
    // checkout may be run for another that shares the target folder.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dist = std::path::Path::new(&manifest).join("../ui/dist");
    // A folder makes cargo rerun this script (and rebuild the crate, which embeds the page)
    // when any file beneath it changes.
    println!("cargo:rerun-if-changed={}", dist.display());
    println!("cargo:rerun-if-changed=src/command_names.rs");
    if std::env::var_os("CARGO_FEATURE_CUSTOM_PROTOCOL").is_some()
        && !dist.join("index.html").is_file()
    {
        panic!(
            "{} has no index.html: build the window first (`npm run build` in ui/, which \
             `cargo xtask run` and `cargo xtask test` do)",
            dist.display()
        );
    }
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMAND_NAMES)),
    )
    .expect("tauri build script");
}
