//! `cargo xtask screenshots`: a PNG of every view of the real app, in `docs/screenshots/`.
//!
//! Builds the window and the app as `cargo xtask run` does (UI embedded, the optimized
//! [`RUN_PROFILE`]: the pictures show what users run), then runs
//! `src-tauri/examples/screenshots.rs` in the same profile, which seeds a temporary data folder with demo content
//! through the engine and the Python MCP SDK, starts the app under Xvfb and drives it with the
//! end-to-end test's WebDriver harness. Nothing in the pictures is staged by hand.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

use crate::{RUN_PROFILE, build_run_app, deps, sh};

/// Screenshots larger than this make the README slow to load.
const MAX_PNG_BYTES: u64 = 300 * 1024;

pub fn run(root: &Path, extra: &[String]) -> Result<()> {
    let env = deps::install(root)?;
    let app = build_run_app(root)?;
    let out = root.join("docs/screenshots");
    let mut cmd = Command::new("cargo");
    cmd.args(["run", "--profile", RUN_PROFILE, "--locked", "-p", "sluice-app"])
        .args(["--features", "custom-protocol", "--example", "screenshots", "--"])
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
