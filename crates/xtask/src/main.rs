//! `cargo xtask`: Sluice's dev automation, as a crate instead of scripts (as rust-analyzer
//! does). Every command installs what it needs, idempotently, on a fresh Debian/Ubuntu machine.
//!
//! - `cargo xtask run`   — build and run the headless engine (`sluice serve`).
//! - `cargo xtask test`  — install test dependencies, then run every test.
//! - `cargo xtask deps`  — only install the dependencies.
//! - `cargo xtask bench` — the benchmarks, beside their peers (see docs/BENCHMARKS.md).

mod bench;
mod deps;

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
        Some("run") => run(&args[1..]),
        Some("bench") => bench::run(&root, &args[1..]),
        _ => {
            eprintln!("usage: cargo xtask <run|test|deps|bench> [args…]");
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

fn test(root: &Path, extra: &[String]) -> Result<()> {
    let env = deps::install(root)?;
    sh(Command::new("cargo").args(["fmt", "--all", "--", "--check"]))?;
    sh(Command::new("cargo").args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ]))?;
    let mut cmd = Command::new("cargo");
    cmd.args(["test", "--workspace", "--locked"]).args(extra);
    for (k, v) in &env.vars {
        cmd.env(k, v);
    }
    sh(&mut cmd)
}

fn run(extra: &[String]) -> Result<()> {
    let mut cmd = Command::new("cargo");
    cmd.args([
        "run",
        "--release",
        "--locked",
        "-p",
        "sluice-cli",
        "--bin",
        "sluice",
        "--",
        "serve",
    ])
    .args(extra);
    sh(&mut cmd)
}
