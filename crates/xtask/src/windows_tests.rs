//! The engine's own test suites, built for Windows and run under Wine: the unit tests (`lib`)
//! and integration tests (`it`) of [`CRATES`], as the native Windows CI job runs them, here on
//! every `cargo xtask test`. Each test binary runs in the Wine prefix of [`crate::windows`],
//! beside the `ProcessPrng` stand-in; libtest's report is read and any failure fails the step.
//!
//! What Wine cannot show is listed, not assumed: `crates/xtask/wine/skips.txt` names each test
//! (or whole binary) not run under Wine, with the reason; a listed test is skipped by its exact
//! name (`--skip NAME --exact`). A test that fails and is not listed fails the check.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::windows::{Built, wine_program};
use crate::windows_check::{Report, Shown, output_within};

/// The crates whose suites run under Wine: the native Windows CI job's list. Among them paths
/// and their Windows forms (`sluice-guard`), the store (projects, tokens, seals, the audit
/// chain), the file tools with their backups and undo (`sluice-runner`), the job runner's own
/// units with the Job Object (`sluice-exec`), the engine and the MCP server's units, the
/// clients' files (`sluice-connect`). What needs git, language servers or the Linux test
/// Python is in the skip list; the CLI's steps ([`crate::windows_check`]) run jobs and servers.
pub const CRATES: &[&str] = &[
    "sluice-core",
    "sluice-guard",
    "sluice-store",
    "sluice-runner",
    "sluice-exec",
    "sluice-code",
    "sluice-git",
    "sluice-connect",
    "sluice-engine",
    "sluice-mcp",
];

/// The tests not run under Wine, with why (`crates/xtask/wine/skips.txt`).
const SKIPS: &str = include_str!("../wine/skips.txt");

/// How long one test binary may take under Wine.
const BINARY_DEADLINE: Duration = Duration::from_secs(600);

/// One test binary the build made.
pub struct TestExe {
    pub package: String,
    /// `lib`, or the integration test's name.
    pub target: String,
    pub exe: PathBuf,
}

/// The test executables in cargo's JSON messages (`--message-format=json`).
pub fn executables(messages: &str) -> Result<Vec<TestExe>> {
    let mut found = Vec::new();
    for line in messages.lines().filter(|l| l.starts_with('{')) {
        let v: Value =
            serde_json::from_str(line).context("cargo printed a line that is not JSON")?;
        if v["reason"] != "compiler-artifact" || v["profile"]["test"] != true {
            continue;
        }
        let Some(exe) = v["executable"].as_str() else { continue };
        let package = v["package_id"]
            .as_str()
            .and_then(package_name)
            .with_context(|| format!("no package name in {}", v["package_id"]))?;
        let kind = v["target"]["kind"][0].as_str().unwrap_or_default();
        let target = if kind == "test" {
            v["target"]["name"].as_str().unwrap_or_default().to_owned()
        } else {
            "lib".to_owned()
        };
        found.push(TestExe { package, target, exe: exe.into() });
    }
    Ok(found)
}

/// `path+file:///…/crates/sluice-core#0.1.0` or `…#sluice-core@0.1.0` → `sluice-core`.
fn package_name(id: &str) -> Option<String> {
    let tail = id.rsplit_once('#')?.1;
    match tail.split_once('@') {
        Some((name, _)) => Some(name.to_owned()),
        None => id.rsplit_once('#')?.0.rsplit('/').next().map(str::to_owned),
    }
}

/// The skip list: (crate, target) → the test names Wine cannot show.
fn skips() -> Result<BTreeMap<(String, String), Vec<String>>> {
    let mut map: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (n, line) in SKIPS.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (test, why) =
            line.split_once(" — ").with_context(|| format!("skips.txt:{}: no reason", n + 1))?;
        let mut parts = test.split_whitespace();
        let (Some(krate), Some(target)) = (parts.next(), parts.next()) else {
            bail!("skips.txt:{}: not `<crate> <target> <test>… — <reason>`", n + 1);
        };
        let names: Vec<String> = parts.map(str::to_owned).collect();
        if names.is_empty() {
            bail!("skips.txt:{}: names no test", n + 1);
        }
        if why.trim().is_empty() {
            bail!("skips.txt:{}: no reason", n + 1);
        }
        map.entry((krate.to_owned(), target.to_owned())).or_default().extend(names);
    }
    Ok(map)
}

/// What one binary did.
struct Ran {
    passed: u32,
    ignored: u32,
    /// As libtest counts them (`filtered out`): the listed tests it found and left out.
    skipped: u32,
}

impl Shown for Ran {
    fn shown(&self) -> String {
        format!(
            "{} passed, {} ignored, {} skipped for Wine",
            self.passed, self.ignored, self.skipped
        )
    }
}

/// Runs every test binary of `built` under Wine, one report step each.
pub fn run(report: &mut Report, built: &Built) {
    if built.tests.is_empty() {
        return;
    }
    let skips = match skips() {
        Ok(s) => s,
        Err(e) => {
            report.step("crates/xtask/wine/skips.txt", || -> Result<String> { Err(e) });
            return;
        }
    };
    for t in &built.tests {
        let listed = skips.get(&(t.package.clone(), t.target.clone())).cloned().unwrap_or_default();
        if listed.iter().any(|name| name == "*") {
            println!(
                "skip {} {}: not run under Wine (crates/xtask/wine/skips.txt)",
                t.package, t.target
            );
            continue;
        }
        report
            .step(&format!("{} {} under Wine", t.package, t.target), || run_one(built, t, &listed));
    }
}

fn run_one(built: &Built, t: &TestExe, skipped: &[String]) -> Result<Ran> {
    let dir = t.exe.parent().context("the test binary has no folder")?;
    // The stand-in beside the binary (a test folder, never shipped).
    std::fs::copy(built.wine_bin.join("bcryptprimitives.dll"), dir.join("bcryptprimitives.dll"))?;
    let mut cmd = wine_program(built, t.exe.as_os_str())?;
    cmd.current_dir(dir);
    for name in skipped {
        cmd.args(["--skip", name]);
    }
    if !skipped.is_empty() {
        cmd.arg("--exact");
    }
    let out = output_within(&mut cmd, BINARY_DEADLINE, &t.exe.display().to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = stdout.lines().find(|l| l.starts_with("test result:")).with_context(|| {
        format!("no test result (exit {}): {}", out.status, tail(&stdout, &out.stderr))
    })?;
    let count = |what: &str| -> u32 {
        result
            .split(';')
            .find_map(|part| {
                part.trim().strip_suffix(what)?.trim().rsplit(' ').next()?.parse().ok()
            })
            .unwrap_or(0)
    };
    let failed: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .collect();
    if !failed.is_empty() || !out.status.success() {
        bail!("{} failed: {failed:?}\n{}", failed.len(), panics(&stdout));
    }
    Ok(Ran { passed: count("passed"), ignored: count("ignored"), skipped: count("filtered out") })
}

/// Where each failed test panicked, and why: libtest's `thread '…' panicked at …` line and the
/// message after it, so a failure on a CI machine says more than its name.
fn panics(stdout: &str) -> String {
    let lines: Vec<&str> = stdout.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("thread '") && line.contains("panicked at") {
            out.push(format!("  {line}"));
            let message = lines[i + 1..]
                .iter()
                .take_while(|l| !l.is_empty() && !l.starts_with("stack backtrace:"))
                .take(6);
            out.extend(message.map(|l| format!("    {l}")));
        }
    }
    out.join("\n")
}

fn tail(stdout: &str, stderr: &[u8]) -> String {
    let stderr = String::from_utf8_lossy(stderr);
    let text = format!("{stdout}{stderr}");
    let lines: Vec<&str> = text.lines().rev().take(20).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skip_list_names_a_test_and_a_reason_on_every_line() {
        let map = skips().unwrap();
        let exec = &map[&("sluice-exec".to_owned(), "it".to_owned())];
        assert_eq!(exec, &["*"]);
        let schema = &map[&("sluice-connect".to_owned(), "it".to_owned())];
        assert_eq!(schema.len(), 3, "several tests on one line: {schema:?}");
        for (krate, _) in map.keys() {
            assert!(CRATES.contains(&krate.as_str()), "{krate} is not run under Wine");
        }
    }

    #[test]
    fn a_failure_says_where_and_why_each_test_panicked() {
        let stdout = "test a ... FAILED\n\nfailures:\n\n---- a stdout ----\n\
            thread 'a' (7) panicked at src/db.rs:412:9:\nthe log reached 17 bytes\n\
            stack backtrace:\n   0: x\n\nfailures:\n    a\n";
        let shown = panics(stdout);
        assert_eq!(
            shown,
            "  thread 'a' (7) panicked at src/db.rs:412:9:\n    the log reached 17 bytes"
        );
        assert_eq!(panics("test a ... ok\n"), "");
    }

    #[test]
    fn test_binaries_are_found_in_cargos_messages_with_their_crate_and_target() {
        let messages = [
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/sluice-core#0.1.0","target":{"kind":["lib"],"name":"sluice_core"},"profile":{"test":true},"executable":"/t/deps/sluice_core-1.exe"}"#,
            r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#serde@1.0.0","target":{"kind":["lib"],"name":"serde"},"profile":{"test":false},"executable":null}"#,
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/guard#sluice-guard@0.1.0","target":{"kind":["test"],"name":"it"},"profile":{"test":true},"executable":"/t/deps/it-2.exe"}"#,
            r#"{"reason":"build-finished","success":true}"#,
            "   Compiling something (not JSON)",
        ]
        .join("\n");
        let found = executables(&messages).unwrap();
        let got: Vec<(&str, &str, &str)> = found
            .iter()
            .map(|t| (t.package.as_str(), t.target.as_str(), t.exe.to_str().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                ("sluice-core", "lib", "/t/deps/sluice_core-1.exe"),
                ("sluice-guard", "it", "/t/deps/it-2.exe")
            ]
        );
    }
}
