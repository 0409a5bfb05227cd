//! `cargo xtask`: Sluice's dev automation, as a crate instead of scripts (as rust-analyzer
//! does). Every command installs what it needs, idempotently, on a fresh Debian/Ubuntu machine.
//!
//! - `cargo xtask run`   — build (optimized, in minutes: `run-release`) and run the desktop
//!   app (`--headless`: `sluice serve`; `--check`: start that very build under Xvfb and check
//!   its window draws the Projects view, as the end-to-end test does).
//! - `cargo xtask test`  — install test dependencies, build the window, then run every test
//!   (Rust, the window's vitest suite, the app end to end in WebKit, and the Windows build
//!   under Wine, compiled beside the rest).
//! - `cargo xtask attack [--long]` — the red-team suite: every test named after a
//!   docs/THREATS.md id, with a summary by group (`--long`: the 10 000-iteration races).
//! - `cargo xtask deps`  — only install the dependencies.
//! - `cargo xtask screenshots` — PNGs of every view of the real app in docs/screenshots/.
//! - `cargo xtask bench` — the benchmarks, beside their peers (see docs/BENCHMARKS.md);
//!   `cargo xtask bench exec` / `bench app` re-measure only the execution / desktop app section,
//!   `cargo xtask bench exec log` only the job log throughput in it, `bench exec keys` only the
//!   interactive jobs' latency (keystroke to echo, a wait on new output), `bench checkpoint`
//!   only the checkpoints of a 10k-file project, `bench code` only the code tools (definitions
//!   checked against rustdoc and the real language servers, latency, the index of a 100k-line
//!   project), `bench http [--before <sluice>]` only tool calls under 8 and 32 connections
//!   beside a bare rmcp server, `bench search [--profile P] [--before <sluice>]` only
//!   `search_text` beside ripgrep, warm and cold, `bench engine [--profile P] [--before
//!   <sluice>]` only a start's time and memory and the first `tools/list`.
//! - `cargo xtask load [writes] [--clients N] [--calls N] [--writes N] [--before <sluice>]` —
//!   32 clients writing into one project beside server-filesystem, then `sluice serve` under
//!   their mixed calls, then one token's flood beside another's (docs/BENCHMARKS.md, "Load").
//! - `cargo xtask bundle` — the .deb and .rpm installers and Claude Desktop's `.mcpb`
//!   (`--test`: then install and test the .deb).
//! - `cargo xtask mcpb [--binary PATH] [--out PATH]` — only the `.mcpb` bundle.
//! - `cargo xtask check-targets [TRIPLE…]` — type-check every crate and target kind for
//!   Windows (msvc, gnu) and macOS (aarch64, x86_64) with a private toolchain; `test` runs it
//!   too once that toolchain is cached, and says how to run it when not.
//! - `cargo xtask windows <build|run|check|installer> [--profile P] [-- ARGS…]` — a linked
//!   Windows build of `sluice.exe` and the desktop app (mingw-w64, with `check-targets`'
//!   toolchain), `sluice.exe` run under Wine (`run`), their per-user installer (NSIS), and
//!   `check`: the CLI's `--version`, `serve` answering MCP and engine calls, the engine's own
//!   tests, then the installer installed, run (the CLI and the app) and uninstalled.
//! - `cargo xtask fuzz [--seconds N] [target…]` — run each fuzz target (`fuzz/`, bodies in
//!   `crates/sluice-fuzz`) for N seconds on nightly and print its executions; not part of
//!   `test`, which replays the committed corpora only.

mod attack;
mod bench;
mod bench_app;
mod bench_checkpoint;
mod bench_code;
mod bench_code_lsp;
mod bench_code_rustdoc;
mod bench_engine;
mod bench_exec;
mod bench_http;
#[cfg(target_os = "linux")]
mod bench_keys;
mod bench_search;
mod bench_util;
mod bundle;
mod check_targets;
mod deps;
mod fuzz;
mod load;
mod load_writes;
mod mcp_http;
mod mcpb;
mod screenshots;
mod windows;
mod windows_app;
mod windows_check;
mod windows_installer;
mod windows_tests;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = repo_root();
    std::env::set_current_dir(&root)?;
    match args.first().map(String::as_str) {
        Some("deps") => deps::install(&root).map(drop),
        Some("test") => test(&root, &args[1..]),
        Some("attack") => attack::run(&root, &args[1..]),
        Some("run") => run(&root, &args[1..]),
        Some("bench") => bench::run(&root, &args[1..]),
        Some("screenshots") => screenshots::run(&root, &args[1..]),
        Some("bundle") => bundle::run(&root, &args[1..]),
        Some("check-targets") => check_targets::run(&root, &args[1..]),
        Some("mcpb") => mcpb::run(&root, &args[1..]),
        Some("fuzz") => fuzz::run(&root, &args[1..]),
        Some("load") => load::run(&root, &args[1..]),
        Some("windows") => windows::run(&root, &args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask \
                 <run|test|attack|fuzz|load|deps|bench|screenshots|bundle|mcpb|check-targets|windows> \
                 [args…]"
            );
            std::process::exit(2);
        }
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("repo root").to_path_buf()
}

/// Runs a command, failing with its name if it fails.
pub fn sh(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    eprintln!("$ {shown}");
    let status = cmd.status().with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

/// The desktop app with its window embedded (`ui/dist`) instead of the vite dev server. Clippy
/// and the tests use the same features, so the app and tauri are built once.
const APP_FEATURES: &[&str] = &["--features", "sluice-app/custom-protocol"];

/// Builds `ui/dist`, which the app embeds at compile time.
pub(crate) fn build_ui(root: &Path) -> Result<()> {
    deps::ui_env(root)?;
    sh(Command::new("npm").current_dir(root.join("ui")).args(["run", "build", "--silent"]))
}

fn test(root: &Path, extra: &[String]) -> Result<()> {
    let env = deps::install(root)?;
    build_ui(root)?;
    // The Windows programs (sluice.exe and the desktop app) and the engine's test binaries are
    // built beside everything below, at the lowest priority, and checked under Wine at the end:
    // the build takes the cycles the rest leaves idle (single-threaded links, tests that wait),
    // some 9 minutes of work cold and 1–3 warm, instead of time of its own. It needs the
    // window's pages, so it starts after them; apt runs one command at a time, so its packages
    // come first.
    let windows = if check_targets::toolchain_offered()? {
        let prepared = windows::prepare(root)?;
        windows_installer::prepare()?;
        let log = target_dir(root).join("xtask-windows-build.log");
        // The log is appended to by each of its cargo commands: start it empty.
        let _ = std::fs::remove_file(&log);
        Some(windows::start(root, &prepared, windows::PROFILE, Some(log), true)?)
    } else {
        eprintln!(
            "windows: skipped: this system's apt offers no rustc-web (Ubuntu ships none), from \
             which the Windows std is built here; the native Windows CI job tests on Windows"
        );
        None
    };
    sh(Command::new("cargo").args(["fmt", "--all", "--", "--check"]))?;
    sh(Command::new("cargo")
        .args(["clippy", "--workspace", "--all-targets", "--locked"])
        .args(APP_FEATURES)
        .args(["--", "-D", "warnings"]))?;
    // Windows and macOS, type-checked: only with a warm cache, because a cold run (std and
    // every crate for four targets) would take longer than the rest of the suite.
    if check_targets::warm(root) {
        check_targets::check_all(root)?;
    } else {
        eprintln!(
            "check-targets: skipped, not every target checked in {} yet (run `cargo xtask \
             check-targets` once, ~1 h on 2 cores; later `cargo xtask test` runs include it)",
            check_targets::cache_dir(root).display()
        );
    }
    // The .deb's AppArmor profile, compiled by AppArmor 4's own parser in a cached Debian 13
    // chroot (Debian 12 has AppArmor 3). The chroot takes root, to build (about a minute, the
    // first time) and to enter: without root it runs through `sudo -n`, as installs do.
    let script = root.join("tests/package/apparmor4_parse.sh");
    let mut apparmor = if is_root() {
        Command::new("bash")
    } else {
        let mut c = Command::new("sudo");
        c.args(["-n", "--preserve-env=SLUICE_CI_CACHE,CARGO_TARGET_DIR,SLUICE_DEBIAN_MIRROR"]);
        c.arg("bash");
        c
    };
    sh(apparmor.arg(script))?;
    // The window's unit tests (IPC mocked at ui/src/api.ts).
    sh(Command::new("npm").current_dir(root.join("ui")).args(["test", "--silent"]))?;
    let mut cmd = Command::new("cargo");
    cmd.args(["test", "--workspace", "--locked"]).args(APP_FEATURES).args(extra);
    for (k, v) in &env.vars {
        cmd.env(k, v);
    }
    sh(&mut cmd)?;
    // Claude Desktop's bundle, of the binary the tests just used, installed and run as a host
    // would (needs the debug `sluice` the workspace tests built).
    mcpb::check(root, &deps::python(root)?)?;
    // The Windows build under Wine: the CLI, the engine's tests, the installer with the app.
    match windows {
        Some(build) => windows_check::run(root, &build.finish()?),
        None => Ok(()),
    }
}

/// Whether this process runs as root (as CI does), which installing packages and building a
/// chroot need.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The profile `run` builds with (root Cargo.toml): optimized, but without `release`'s fat
/// LTO and single codegen unit, so a first build takes minutes instead of ~40 on 2 cores.
/// Bundles and benchmarks keep `release`: what ships is what is measured.
pub const RUN_PROFILE: &str = "run-release";

/// Where cargo puts build output (`CARGO_TARGET_DIR` or `target/`).
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"))
}

/// Builds the desktop app as `run` does (UI embedded, [`RUN_PROFILE`]) and returns its binary.
fn build_run_app(root: &Path) -> Result<PathBuf> {
    build_ui(root)?;
    // Both binaries: `sluice-app` becomes `sluice-tray` at start (src-tauri/src/main.rs).
    sh(Command::new("cargo")
        .args(["build", "--profile", RUN_PROFILE, "--locked", "-p", "sluice-app"])
        .args(["--features", "custom-protocol"]))?;
    Ok(target_dir(root).join(RUN_PROFILE).join("sluice-app"))
}

/// The end-to-end test `window_opens_on_the_projects_view` built in [`RUN_PROFILE`], so its
/// app is the binary `run` starts (same profile, features and target folder).
fn check_run_app(root: &Path) -> Result<()> {
    let env = deps::install(root)?;
    build_ui(root)?;
    let mut cmd = Command::new("cargo");
    cmd.args(["test", "--profile", RUN_PROFILE, "--locked", "-p", "sluice-app"])
        .args(["--features", "custom-protocol", "--test", "e2e"])
        .args(["--", "window_opens_on_the_projects_view"]);
    for (k, v) in &env.vars {
        cmd.env(k, v);
    }
    sh(&mut cmd)
}

/// The desktop app (engine, MCP server, tray and window), optimized ([`RUN_PROFILE`]);
/// `--headless` runs `sluice serve` instead, for machines without a display.
fn run(root: &Path, extra: &[String]) -> Result<()> {
    if extra.first().map(String::as_str) == Some("--check") {
        return check_run_app(root);
    }
    if extra.first().map(String::as_str) != Some("--headless") {
        deps::apt(deps::APP_APT_PACKAGES)?;
        if !deps::have("npm") {
            deps::apt(&["nodejs", "npm"])?;
        }
        let app = build_run_app(root)?;
        return sh(Command::new(app).args(extra));
    }
    let extra = &extra[1..];
    let mut cmd = Command::new("cargo");
    cmd.args(["run", "--profile", RUN_PROFILE, "--locked", "-p", "sluice-cli"])
        .args(["--bin", "sluice", "--", "serve"])
        .args(extra);
    sh(&mut cmd)
}
