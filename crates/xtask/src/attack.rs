//! `cargo xtask attack [--long]`: the red-team suite as one command. It runs every test named
//! after a case id of `docs/THREATS.md`, in every crate (`ps01_…` to `ui04_…`: the rig in
//! `crates/sluice-cli/tests/it/attack/` against a running engine over HTTP and stdio, the
//! library-level attacks, the window end to end) and the window's unit tests named after one
//! (`UI-03: …`), then prints the cases attempted and passed by group, the figures the cases
//! report (race iterations, the timing statistic, fork counts) and any known case without a
//! test. `--long` sets `SLUICE_ATTACK_LONG=1`: 10 000 TOCTOU swaps, 1 000 stop races, thousands
//! of timing samples. `cargo xtask test` runs the same tests at their short length.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Result, bail};

/// The groups of `docs/THREATS.md`, by id prefix.
const GROUPS: &[(&str, &str)] = &[
    ("PS", "path sandbox"),
    ("SL", "links and races"),
    ("TA", "tokens and timing"),
    ("HS", "HTTP surface"),
    ("AP", "approvals"),
    ("CI", "command injection"),
    ("ES", "environment and secrets"),
    ("OR", "output redaction"),
    ("PE", "pause and emergency stop"),
    ("RX", "resource exhaustion"),
    ("PC", "persistence and crash recovery"),
    ("UI", "window and IPC"),
];

/// Every case id the suite must attempt: those of `docs/THREATS.md`, where each is described.
const CASES: &[&str] = &[
    "PS-01", "PS-02", "PS-03", "PS-05", "PS-06", "SL-01", "SL-02", "SL-03", "TA-01", "TA-02",
    "TA-03", "TA-05", "HS-01", "HS-02", "HS-03", "HS-05", "HS-07", "AP-01", "AP-02", "AP-03",
    "AP-05", "AP-06", "AP-07", "CI-01", "CI-02", "CI-03", "CI-06", "CI-07", "ES-01", "ES-02",
    "ES-04", "OR-01", "PE-01", "PE-02", "PE-03", "RX-01", "RX-02", "PC-01", "PC-02", "PC-03",
    "UI-01", "UI-02", "UI-03", "UI-04",
];

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let long = args.iter().any(|a| a == "--long");
    if let Some(other) = args.iter().find(|a| *a != "--long") {
        bail!("unknown argument {other}; usage: cargo xtask attack [--long]");
    }
    let env = crate::deps::install(root)?;
    crate::build_ui(root)?;
    let mut results = Results::default();

    // The window's unit tests named after a case.
    let mut vitest = Command::new("npm");
    vitest.current_dir(root.join("ui")).env("NO_COLOR", "1");
    vitest.args(["test", "--silent", "--", "--reporter=verbose"]);
    vitest
        .args(["-t", &GROUPS.iter().map(|(g, _)| format!("{g}-0")).collect::<Vec<_>>().join("|")]);
    results.stream(&mut vitest, |line| {
        let passed = line.trim_start().starts_with('✓');
        let failed = line.trim_start().starts_with('×');
        (passed || failed).then(|| (line.trim().to_owned(), passed))
    })?;

    // Every Rust test named after a case, in every crate.
    let mut cargo = Command::new("cargo");
    // Every test binary runs even when one fails, so the summary is whole.
    cargo.args(["test", "--workspace", "--locked", "--no-fail-fast"]).args(crate::APP_FEATURES);
    cargo.arg("--");
    cargo.args(GROUPS.iter().map(|(g, _)| format!("{}0", g.to_ascii_lowercase())));
    cargo.arg("--nocapture");
    for (k, v) in &env.vars {
        cargo.env(k, v);
    }
    if long {
        cargo.env("SLUICE_ATTACK_LONG", "1");
    }
    results.stream(&mut cargo, |line| {
        let rest = line.strip_prefix("test ")?;
        let (name, outcome) = rest.split_once(" ... ")?;
        let passed = outcome.starts_with("ok");
        (passed || outcome.starts_with("FAILED")).then(|| (name.to_owned(), passed))
    })?;
    results.report(long)
}

#[derive(Default)]
struct Results {
    /// Case id → (test, passed) for every test that names it.
    tests: BTreeMap<String, Vec<(String, bool)>>,
    /// Lines the cases print about themselves (`SL-03: 10000 calls …`).
    figures: Vec<String>,
    failed_commands: Vec<String>,
}

impl Results {
    /// Runs `cmd`, echoing its output, and records what `parse` finds in each line.
    fn stream(
        &mut self,
        cmd: &mut Command,
        parse: impl Fn(&str) -> Option<(String, bool)>,
    ) -> Result<()> {
        let shown = format!("{cmd:?}");
        eprintln!("$ {shown}");
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        let stderr = child.stderr.take().expect("piped");
        let errs = std::thread::spawn(move || {
            BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
                .inspect(|l| eprintln!("{l}"))
                .collect::<Vec<_>>()
        });
        let out: Vec<String> = BufReader::new(child.stdout.take().expect("piped"))
            .lines()
            .map_while(Result::ok)
            .inspect(|l| println!("{l}"))
            .collect();
        let status = child.wait()?;
        for line in out.iter().chain(errs.join().unwrap_or_default().iter()) {
            if let Some((name, passed)) = parse(line) {
                for id in case_ids(&name) {
                    self.tests.entry(id).or_default().push((name.clone(), passed));
                }
            } else if let Some(figure) = figure(line) {
                self.figures.push(figure.to_owned());
            }
        }
        if !status.success() {
            self.failed_commands.push(shown);
        }
        Ok(())
    }

    fn report(&self, long: bool) -> Result<()> {
        println!("\nThe red-team suite{}:", if long { " (long runs)" } else { "" });
        let (mut attempted, mut passed_all) = (0, 0);
        for (group, title) in GROUPS {
            let ids: Vec<&String> = self.tests.keys().filter(|id| id.starts_with(group)).collect();
            let tests: Vec<&(String, bool)> = ids.iter().flat_map(|id| &self.tests[*id]).collect();
            let passed = tests.iter().filter(|t| t.1).count();
            let cases_passed = ids.iter().filter(|id| self.tests[**id].iter().all(|t| t.1)).count();
            attempted += ids.len();
            passed_all += cases_passed;
            println!(
                "  {group} {title:<32} {cases_passed}/{} cases passed ({passed}/{} tests)  {}",
                ids.len(),
                tests.len(),
                ids.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
            );
        }
        println!("  {passed_all} of {attempted} cases passed");
        if !self.figures.is_empty() {
            println!("\nFigures:");
            for f in &self.figures {
                println!("  {f}");
            }
        }
        let missing: Vec<&&str> = CASES.iter().filter(|c| !self.tests.contains_key(**c)).collect();
        for (id, tests) in &self.tests {
            for (name, _) in tests.iter().filter(|t| !t.1) {
                println!("FAILED {id}: {name}");
            }
        }
        if !missing.is_empty() {
            bail!("cases without a test: {missing:?}");
        }
        if passed_all != attempted || !self.failed_commands.is_empty() {
            bail!("the red-team suite failed: {:?}", self.failed_commands);
        }
        Ok(())
    }
}

/// The case ids a test's name carries: `attack::paths::ps01_…` → PS-01, `UI-03: …` → UI-03.
fn case_ids(name: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric() && c != '-') {
        // `ps01…` in Rust names, `PS-01` in the window's test names.
        let (a, b, c, d) = match part.as_bytes() {
            [a, b, b'-', c, d, ..] | [a, b, c, d, ..] => (*a, *b, *c, *d),
            _ => continue,
        };
        if !c.is_ascii_digit() || !d.is_ascii_digit() {
            continue;
        }
        let id =
            format!("{}{}-{}{}", a as char, b as char, c as char, d as char).to_ascii_uppercase();
        if GROUPS.iter().any(|(g, _)| id.starts_with(g)) && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// A figure a case printed: a line starting with its id and a colon.
fn figure(line: &str) -> Option<&str> {
    let line = line.trim();
    let id = line.get(..5)?;
    let known = GROUPS.iter().any(|(g, _)| id.starts_with(g))
        && id.as_bytes()[2] == b'-'
        && line[5..].starts_with(':');
    known.then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_ids_are_read_from_test_names() {
        assert_eq!(case_ids("attack::paths::ps01_a_sibling"), ["PS-01"]);
        assert_eq!(case_ids("sl03_swap_race_with_fallback_walk"), ["SL-03"]);
        assert_eq!(case_ids("✓ src/views/Approvals.test.tsx > x > AP-06: focuses Deny"), ["AP-06"]);
        assert!(case_ids("tests::steps01_are_not_cases").is_empty());
        assert!(case_ids("valid_request_works").is_empty());
        assert_eq!(figure("SL-03: 300 calls"), Some("SL-03: 300 calls"));
        assert_eq!(figure("RX-01 Http read_file: 3ms"), None);
    }
}
