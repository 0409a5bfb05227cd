//! `cargo xtask bench`: Sluice measured beside its peers in one run, written to
//! `docs/BENCHMARKS.md`. Uses the release build, the official Python MCP client as the load
//! generator, `@modelcontextprotocol/server-filesystem` as the `read_file` peer and ripgrep as
//! the search peer, on the cargo registry sources of this machine.
//!
//! - `read_file` of a 4 KiB file: calls/s and server CPU per call (from /proc, so the client's
//!   own cost is excluded), over HTTP and through `sluice stdio`, beside server-filesystem.
//! - `search_text` vs `rg` on the same tree and patterns, warm and cold, with the hits compared
//!   (`bench_search.rs`, alone: `cargo xtask bench search`).
//! - Engine start to ready (median of 20 starts) and resident memory when idle.
//! - The code tools (`bench_code.rs`, alone: `cargo xtask bench code`): `code_definition`
//!   checked against rustdoc's resolved links and the real language servers beside
//!   `search_text`'s candidates, warm latency, and the syntax index of a 100k-line project.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::bench_util::{output, proc_status_kib, sluice, start};
use crate::{
    bench_app, bench_checkpoint, bench_code, bench_engine, bench_exec, bench_http, bench_search,
    deps, sh,
};

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    if let Some(which @ ("checkpoint" | "code")) = args.first().map(String::as_str) {
        return section_only(root, which);
    }
    if let Some(which @ ("http" | "search" | "engine")) = args.first().map(String::as_str) {
        let (mut before, mut profile) = (None, "release".to_owned());
        for pair in args[1..].chunks(2) {
            match pair {
                [flag, bin] if flag == "--before" => before = Some(PathBuf::from(bin)),
                [flag, name] if flag == "--profile" => profile = name.clone(),
                other => bail!(
                    "bench {which}: unexpected arguments {other:?} \
                     (takes --profile <cargo profile> and --before <sluice binary>)"
                ),
            }
        }
        if which == "search" {
            return search_only(root, &profile, before.as_deref());
        }
        if which == "engine" {
            return profiled_section(root, &profile, bench_engine::HEADING, |bin, work| {
                bench_engine::run(bin, &profile, before.as_deref(), work)
            });
        }
        return http_only(root, &profile, before.as_deref());
    }
    if let Some(which @ ("exec" | "app")) = args.first().map(String::as_str) {
        return match args.get(1).map(String::as_str) {
            Some("log") if which == "exec" => {
                part_only(root, bench_exec::LOG_HEADING, bench_exec::run_log)
            }
            Some("keys") if which == "exec" => keys_only(root),
            Some(other) => bail!("bench {which}: unknown part {other:?} (exec has: log, keys)"),
            None => section_only(root, which),
        };
    }
    let env = deps::install(root)?;
    let python = env
        .vars
        .iter()
        .find(|(k, _)| k == "SLUICE_TEST_PYTHON")
        .map(|(_, v)| v.clone())
        .context("python")?;
    let node = deps::node_env(root)?;
    sh(Command::new("cargo").args(["build", "--release", "--locked", "-p", "sluice-cli"]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let bin = target.join("release/sluice");
    let work = tempdir(&target)?;
    let data = work.join("data");
    let project = work.join("bench");
    std::fs::create_dir_all(&project)?;
    let line = "0123456789abcdef".repeat(4) + "\n"; // 65 bytes
    let mut text = line.repeat(4096 / line.len());
    text.push_str(&"x".repeat(4096 - text.len()));
    std::fs::write(project.join("file4k.txt"), &text)?;
    // The registry stays a project of this data folder (search has its own, bench_search.rs):
    // the engine's start and memory below have always been measured with it.
    let token = bench_engine::data_folder(&bin, &data, &project)?;

    // Start to ready, and idle memory.
    let engine_load = crate::bench_util::loadavg();
    let copied = bench_engine::copy(&bin, &work.join("sluice-now"))?;
    let engine = bench_engine::measure(&[(&copied, &data, Some(&token))])?.remove(0);
    let (serve, _) = start(&bin, &data)?;

    let url = format!("http://127.0.0.1:{}/mcp", serve.port);
    let read = output(
        Command::new(&python)
            .arg(root.join("tests/bench/read_file_bench.py"))
            .args(["--sluice-url", &url, "--sluice-pid", &serve.child.id().to_string()])
            .arg("--sluice-bin")
            .arg(&bin)
            .arg("--file")
            .arg(project.join("file4k.txt"))
            .arg("--peer")
            .arg(&node)
            .arg(root.join(
                "tests/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
            ))
            .arg(&project)
            .env("SLUICE_TOKEN", &token)
            .env("SLUICE_DATA_DIR", &data),
    )?;
    let idle_rss_after = proc_status_kib(serve.child.id(), "VmRSS")?;
    output(sluice(&bin, &data).args(["project", "set", "bench", "--access", "read-write"]))?;
    let writes = output(
        Command::new(&python)
            .arg(root.join("tests/bench/write_bench.py"))
            .args(["--url", &url, "--sluice"])
            .arg(&bin)
            .env("SLUICE_TOKEN", &token)
            .env("SLUICE_DATA_DIR", &data)
            .env("SLUICE_SECRET_STORE", "file"),
    )?;
    drop(serve);

    let mut md = String::from(
        "# Benchmarks\n\nProduced by `cargo xtask bench` (release build, this machine: 2 cores). \
         Every figure comes from one run of that command; peers run in the same run.\n\n",
    );
    md.push_str("## read_file, 4 KiB file, official Python MCP client\n\n");
    md.push_str(
        "| server | calls/s | server CPU per call (µs) | CPU beside server-filesystem |\n\
         |---|---:|---:|---:|\n",
    );
    let rows: Vec<serde_json::Value> =
        read.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let cpu = |row: &serde_json::Value| row["server_cpu_us_per_call"].as_f64();
    let peer = rows.iter().find(|r| r["target"].as_str().is_some_and(|t| !t.starts_with("sluice")));
    for l in &rows {
        let ratio = match (cpu(l), peer.and_then(cpu)) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
            _ => "?".into(),
        };
        md.push_str(&format!(
            "| {} | {} | {} | {ratio} |\n",
            l["target"].as_str().unwrap_or("?"),
            l["calls_per_sec"],
            l["server_cpu_us_per_call"]
        ));
    }
    let first = rows.first();
    let (rounds, calls) = (
        first.map_or(0, |r| r["rounds"].as_u64().unwrap_or(1)),
        first.map_or(0, |r| r["calls"].as_u64().unwrap_or(0)),
    );
    md.push_str(&format!(
        "\nThe stdio row counts the engine and the `sluice stdio` bridge together. The three \
         servers took turns for {rounds} rounds of {calls} calls; each figure is the median of \
         its rounds.\n\n"
    ));
    md.push_str(
        "## Changes and approvals, official Python MCP client over HTTP\n\n| measure | median (ms) | p90 (ms) | n |\n|---|---:|---:|---:|\n",
    );
    for l in writes.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()) {
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            l["measure"].as_str().unwrap_or("?"),
            l["median_ms"],
            l["p90_ms"],
            l["n"]
        ));
    }
    md.push_str(
        "\nwrite_file replaces a 250-byte file with its expected hash (backup, fsync, rename); apply_patch updates 9 files and adds one, all or nothing. The approval rows play the user through the CLI: \"visible\" is polled every 5 ms through `sluice approvals list` (a process start each time), so it includes that polling.\n\n",
    );
    md.push_str(&bench_search::run(root, &bin, "release", None, Some(Path::new(&python)), &work)?);
    md.push_str(&bench_engine::section(
        "release",
        &[("sluice", &engine)],
        &engine_load,
        Some(idle_rss_after),
    ));
    md.push_str(&bench_http::run(&bin, "release", None, &work)?);
    md.push_str(&bench_exec::run(&bin, &work)?);
    md.push_str(&bench_checkpoint::run(&bin, &work)?);
    md.push_str(&bench_code::run(root, &bin, &work)?);
    md.push_str(&bench_app::run(root, &target)?);
    let old = std::fs::read_to_string(root.join("docs/BENCHMARKS.md")).unwrap_or_default();
    md.push_str(&kept_sections(&old));
    std::fs::write(root.join("docs/BENCHMARKS.md"), &md)?;
    println!("{md}");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// `cargo xtask bench exec|app`: only that section, re-measured and replaced in (or appended
/// to) docs/BENCHMARKS.md, without the other sections' setup.
fn section_only(root: &Path, which: &str) -> Result<()> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let work = tempdir(&target)?;
    let (heading, section) = if which == "app" {
        (bench_app::HEADING, bench_app::run(root, &target)?)
    } else if which == "checkpoint" {
        sh(Command::new("cargo").args(["build", "--release", "--locked", "-p", "sluice-cli"]))?;
        let bin = target.join("release/sluice");
        (bench_checkpoint::HEADING, bench_checkpoint::run(&bin, &work)?)
    } else if which == "code" {
        sh(Command::new("cargo").args(["build", "--release", "--locked", "-p", "sluice-cli"]))?;
        let bin = target.join("release/sluice");
        (bench_code::HEADING, bench_code::run(root, &bin, &work)?)
    } else {
        sh(Command::new("cargo").args(["build", "--release", "--locked", "-p", "sluice-cli"]))?;
        (bench_exec::HEADING, bench_exec::run(&target.join("release/sluice"), &work)?)
    };
    let _ = std::fs::remove_dir_all(&work);
    replace_section(root, heading, &section)
}

/// Replaces the section under `heading` in docs/BENCHMARKS.md (up to the next `## `), or adds it
/// at the end.
fn replace_section(root: &Path, heading: &str, section: &str) -> Result<()> {
    let path = root.join("docs/BENCHMARKS.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let doc = match doc.find(heading) {
        Some(at) => {
            let rest = &doc[at + heading.len()..];
            let end = rest.find("\n## ").map_or(doc.len(), |e| at + heading.len() + e + 1);
            format!("{}{section}{}", &doc[..at], &doc[end..])
        }
        None => format!("{}\n{section}", doc.trim_end_matches('\n').to_owned() + "\n"),
    };
    std::fs::write(&path, doc)?;
    println!("{section}");
    Ok(())
}

/// The sections of docs/BENCHMARKS.md written by hand (from `cargo xtask load`, from a
/// profile): a full run keeps them, after everything it measured.
const KEPT: &[&str] =
    &["## Load", "## Where a start's time and memory go", "## Where an HTTP call's time goes"];

fn kept_sections(doc: &str) -> String {
    let mut kept = String::new();
    for heading in KEPT {
        let Some(at) = doc.find(&format!("\n{heading}\n")).map(|at| at + 1) else { continue };
        let rest = &doc[at + heading.len()..];
        let end = rest.find("\n## ").map_or(doc.len(), |e| at + heading.len() + e + 1);
        kept.push_str(doc[at..end].trim_end_matches('\n'));
        kept.push_str("\n\n");
    }
    kept
}

/// `cargo xtask bench http`: only the HTTP load section, replaced in docs/BENCHMARKS.md. Both
/// servers are built with `profile` (`run-release` builds in minutes where `release`'s fat LTO
/// takes most of an hour on 2 cores; the section says which).
fn http_only(root: &Path, profile: &str, before: Option<&Path>) -> Result<()> {
    profiled_section(root, profile, bench_http::HEADING, |bin, work| {
        bench_http::run(bin, profile, before, work)
    })
}

/// `cargo xtask bench search`: only `search_text` beside ripgrep, replaced in
/// docs/BENCHMARKS.md, built with `profile` (the section says which), with `before` (an earlier
/// sluice binary) timed in the same turns when given.
fn search_only(root: &Path, profile: &str, before: Option<&Path>) -> Result<()> {
    let python = deps::python(root)?;
    if !deps::have("rg") {
        deps::apt(&["ripgrep"])?;
    }
    profiled_section(root, profile, bench_search::HEADING, |bin, work| {
        bench_search::run(root, bin, profile, before, Some(&python), work)
    })
}

/// One section of docs/BENCHMARKS.md measured alone: `sluice` built with `profile`, `measure`
/// given the binary and a work folder (removed after), its section replaced under `heading`.
fn profiled_section(
    root: &Path,
    profile: &str,
    heading: &str,
    measure: impl FnOnce(&Path, &Path) -> Result<String>,
) -> Result<()> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let work = tempdir(&target)?;
    sh(Command::new("cargo").args([
        "build",
        "--profile",
        profile,
        "--locked",
        "-p",
        "sluice-cli",
    ]))?;
    let section = measure(&target.join(profile).join("sluice"), &work);
    let _ = std::fs::remove_dir_all(&work);
    replace_section(root, heading, &section?)
}

/// `cargo xtask bench exec keys`: only the interactive jobs' latency.
#[cfg(target_os = "linux")]
fn keys_only(root: &Path) -> Result<()> {
    part_only(root, crate::bench_keys::HEADING, crate::bench_keys::run_alone)
}

#[cfg(not(target_os = "linux"))]
fn keys_only(_: &Path) -> Result<()> {
    bail!("bench exec keys runs on Linux (a pty of its own, the time namespace in /proc)")
}

/// `cargo xtask bench exec log|keys`: one part of the execution section, re-measured by
/// `measure` (given the release binary and a work folder) and replaced in docs/BENCHMARKS.md
/// (from its heading up to the next heading), or added at the end of the section.
fn part_only(
    root: &Path,
    heading: &str,
    measure: fn(&Path, &Path) -> Result<String>,
) -> Result<()> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let work = tempdir(&target)?;
    sh(Command::new("cargo").args(["build", "--release", "--locked", "-p", "sluice-cli"]))?;
    let part = measure(&target.join("release/sluice"), &work);
    let _ = std::fs::remove_dir_all(&work);
    let part = part?;
    let path = root.join("docs/BENCHMARKS.md");
    let doc = std::fs::read_to_string(&path)?;
    let (at, end) = part_span(&doc, heading)?;
    std::fs::write(&path, format!("{}{part}{}", &doc[..at], &doc[end..]))?;
    println!("{part}");
    Ok(())
}

/// Where the part under `heading` lies in the execution section of `doc` (from its heading up
/// to the next heading), or the empty span at the section's end when it has no such part yet.
fn part_span(doc: &str, heading: &str) -> Result<(usize, usize)> {
    let section = doc.find(bench_exec::HEADING).context("no execution section to update")?;
    let body = section + bench_exec::HEADING.len();
    let section_end = doc[body..].find("\n## ").map_or(doc.len(), |e| body + e + 1);
    let Some(found) = doc[section..section_end].find(heading) else {
        return Ok((section_end, section_end));
    };
    let at = section + found;
    let rest = &doc[at + heading.len()..];
    Ok((at, rest.find("\n#").map_or(doc.len(), |e| at + heading.len() + e + 1)))
}

fn tempdir(target: &Path) -> Result<PathBuf> {
    let dir = target.join(format!("xtask/bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

pub(crate) fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => count_files(&e.path()),
            Ok(t) if t.is_file() => 1,
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Benchmarks\n\n## Execution, release `sluice serve`\n\nLoad.\n\n\
                       ### Job log throughput\n\nold log\n\n### run_command overhead\n\nrun\n\n\
                       ## Desktop app\n\napp\n";

    #[test]
    fn a_full_run_keeps_the_sections_written_by_hand() {
        let doc = "# Benchmarks\n\n## read_file\n\nmeasured\n\n## Load\n\nby hand\n\n\
                   ## Desktop app\n\napp\n\n## Where an HTTP call's time goes\n\nprofile\n";
        assert_eq!(
            kept_sections(doc),
            "## Load\n\nby hand\n\n## Where an HTTP call's time goes\n\nprofile\n\n"
        );
        assert_eq!(kept_sections("# Benchmarks\n\n## Engine\n\nx\n"), "");
    }

    #[test]
    fn a_part_is_replaced_up_to_the_next_heading_or_added_at_the_end_of_its_section() {
        let (at, end) = part_span(DOC, bench_exec::LOG_HEADING).expect("span");
        assert_eq!(&DOC[at..end], "### Job log throughput\n\nold log\n\n");
        let (at, end) = part_span(DOC, "### Interactive jobs").expect("span");
        assert_eq!(at, end);
        assert!(DOC[at..].starts_with("## Desktop app"), "{}", &DOC[at..]);
        // The last section: a new part goes at the end of the file.
        let last = &DOC[..DOC.find("## Desktop").expect("desktop")];
        assert_eq!(
            part_span(last, "### Interactive jobs").expect("span"),
            (last.len(), last.len())
        );
        // A heading of the same name in another section is not this section's part.
        let elsewhere = format!("{DOC}\n### Interactive jobs\n\nnot ours\n");
        let (at, _) = part_span(&elsewhere, "### Interactive jobs").expect("span");
        assert!(elsewhere[at..].starts_with("## Desktop app"));
        assert!(part_span("# Benchmarks\n", bench_exec::LOG_HEADING).is_err());
    }
}
