//! `cargo xtask screenshots`: a PNG of every view of the real app, in `docs/screenshots/`.
//!
//! Builds the window and the app with the UI embedded (as the end-to-end test does), then runs
//! `src-tauri/examples/screenshots.rs`, which seeds a temporary data folder with demo content
//! through the engine and the Python MCP SDK, starts the app under Xvfb and drives it with the
//! end-to-end test's WebDriver harness. Nothing in the pictures is staged by hand.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

use crate::{APP_FEATURES, build_ui, deps, sh};

/// Screenshots larger than this make the README slow to load.
const MAX_PNG_BYTES: u64 = 300 * 1024;

pub fn run(root: &Path, extra: &[String]) -> Result<()> {
    let env = deps::install(root)?;
    build_ui(root)?;
    sh(Command::new("cargo")
        .args([
            "build",
            "--locked",
            "-p",
            "sluice-app",
            "--bin",
            "sluice-app",
            "--bin",
            "sluice-tray",
        ])
        .args(APP_FEATURES))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let app = target.join("debug").join("sluice-app");
    let out = root.join("docs/screenshots");
    let mut cmd = Command::new("cargo");
    cmd.args(["run", "--locked", "-p", "sluice-app", "--example", "screenshots"])
        .args(APP_FEATURES)
        .arg("--")
        .arg("--app")
        .arg(&app)
        .arg("--out")
        .arg(&out)
        .args(extra);
    for (k, v) in &env.vars {
        cmd.env(k, v);
    }
    sh(&mut cmd)?;
    check_sizes(&out)
}

/// Every PNG exists and stays small enough for the README.
fn check_sizes(out: &Path) -> Result<()> {
    let mut pngs = 0;
    for entry in std::fs::read_dir(out)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "png") {
            let size = std::fs::metadata(&path)?.len();
            eprintln!("{} ({} KB)", path.display(), size / 1024);
            if size > MAX_PNG_BYTES {
                bail!("{} is {} KB; keep screenshots under 300 KB", path.display(), size / 1024);
            }
            pngs += 1;
        }
    }
    if pngs == 0 {
        bail!("no screenshots in {}", out.display());
    }
    Ok(())
}
