//! `cargo xtask fuzz [--seconds N] [target…] [-- libFuzzer options…]`: runs each fuzz target
//! (`fuzz/`, cargo-fuzz's layout; every target's body is in `crates/sluice-fuzz`) for N
//! seconds (default 60), one after the other, and prints how many inputs each executed.
//!
//! It installs what it needs when missing: a nightly toolchain (`rustup toolchain install
//! nightly --profile minimal`; libFuzzer's instrumentation needs nightly flags) and the pinned
//! cargo-fuzz. Each target runs as one process (one core: machines are shared), without a
//! sanitizer — the code is safe Rust, where AddressSanitizer finds little and halves the
//! speed — but with debug assertions, so an arithmetic overflow is a crash too. New inputs go
//! to a scratch corpus under the target folder, read together with the committed seeds
//! (`fuzz/corpus/<target>/`), so a run never grows what is committed; a crashing input is
//! left in `fuzz/artifacts/<target>/` and the run fails at the end. Not part of `cargo xtask
//! test`: CI replays the committed corpora on stable (`crates/sluice-fuzz/tests`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::sh;

/// cargo-fuzz, pinned: its command line is what this module speaks.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// What one target's run came to.
struct Outcome {
    target: String,
    executions: Option<u64>,
    ok: bool,
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let (ours, libfuzzer) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let mut seconds: u64 = 60;
    let mut targets: Vec<String> = Vec::new();
    let mut it = ours.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--seconds" => {
                let n = it.next().context("--seconds needs a number")?;
                seconds = n.parse().with_context(|| format!("--seconds {n}"))?;
            }
            flag if flag.starts_with('-') => bail!("unknown option {flag}"),
            target => targets.push(target.to_owned()),
        }
    }
    let all = all_targets(root)?;
    if targets.is_empty() {
        targets = all.clone();
    }
    if let Some(unknown) = targets.iter().find(|t| !all.contains(t)) {
        bail!("no fuzz target {unknown:?}; the targets are {}", all.join(", "));
    }
    install()?;
    let scratch = crate::target_dir(root).join("fuzz");
    let mut outcomes = Vec::new();
    for target in &targets {
        outcomes.push(run_one(root, &scratch, target, seconds, libfuzzer)?);
    }
    eprintln!("\nfuzz: {seconds} s per target");
    for o in &outcomes {
        let execs = o.executions.map_or("?".to_owned(), |n| n.to_string());
        let verdict = if o.ok { "ok" } else { "FAILED (see fuzz/artifacts/)" };
        eprintln!("  {:<20} {:>12} executions  {verdict}", o.target, execs);
    }
    let failed: Vec<&str> = outcomes.iter().filter(|o| !o.ok).map(|o| o.target.as_str()).collect();
    if !failed.is_empty() {
        bail!("fuzz targets failed: {}", failed.join(", "));
    }
    Ok(())
}

/// The targets `fuzz/fuzz_targets/` holds, by name.
fn all_targets(root: &Path) -> Result<Vec<String>> {
    let dir = root.join("fuzz/fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| dir.display().to_string())?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".rs").map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}

/// Nightly and the pinned cargo-fuzz, each only when missing.
fn install() -> Result<()> {
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !nightly {
        sh(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    let installed = Command::new("cargo").args(["fuzz", "--version"]).output().is_ok_and(|o| {
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains(CARGO_FUZZ_VERSION)
    });
    if !installed {
        sh(Command::new("cargo").args([
            "install",
            "--locked",
            "cargo-fuzz",
            "--version",
            CARGO_FUZZ_VERSION,
        ]))?;
    }
    Ok(())
}

fn run_one(
    root: &Path,
    scratch: &Path,
    target: &str,
    seconds: u64,
    libfuzzer: &[String],
) -> Result<Outcome> {
    let new_inputs = scratch.join("new-inputs").join(target);
    std::fs::create_dir_all(&new_inputs)?;
    let seeds = root.join("fuzz/corpus").join(target);
    let mut cmd = Command::new("cargo");
    // `cargo xtask` runs under stable cargo, whose environment would pick stable again for the
    // inner builds; `+nightly` and `--target-dir` say what they need instead.
    for var in ["CARGO", "RUSTUP_TOOLCHAIN", "RUSTC", "CARGO_TARGET_DIR"] {
        cmd.env_remove(var);
    }
    cmd.current_dir(root.join("fuzz"))
        .args(["+nightly", "fuzz", "run", target, "--sanitizer", "none", "--debug-assertions"])
        .arg("--target-dir")
        .arg(scratch)
        .arg(&new_inputs)
        .arg(&seeds)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg("-print_final_stats=1")
        .args(libfuzzer)
        .stderr(Stdio::piped());
    eprintln!("$ {cmd:?}");
    let mut child = cmd.spawn().context("cannot start cargo fuzz")?;
    let stderr = child.stderr.take().context("cargo fuzz's stderr")?;
    let mut executions = None;
    for line in BufReader::new(stderr).lines() {
        let line = line?;
        eprintln!("{line}");
        // libFuzzer's final statistics (-print_final_stats=1).
        if let Some(n) = line.strip_prefix("stat::number_of_executed_units:") {
            executions = n.trim().parse().ok();
        }
    }
    let ok = child.wait()?.success();
    Ok(Outcome { target: target.to_owned(), executions, ok })
}
