//! `cargo xtask load`: `sluice serve` under load (issue 18), with a dependency-free client
//! (std threads, raw HTTP/1.1 keep-alive over `TcpStream`).
//!
//! - Phase 1, limits raised: `--clients` (32) clients with their own token each make
//!   `--calls` (default 2000) mixed calls each — read_file, list_directory, search_text, stat,
//!   git_status, write_file to a file of their own. Reports throughput, p50/p99 latency per
//!   tool, errors by code (none is intended here, so any fails the run), and the engine's RSS
//!   and open descriptors after a warm-up round, after half the calls and at the end, each once
//!   the engine has been idle a few seconds, with RSS through the run beside them. More than
//!   10 % growth over the second half fails: the first is where the allocator settles.
//! - Phase 2, default limits: one token floods with many threads while another calls at an
//!   ordinary pace. Reports the quiet token's latency alone and during the flood, and the
//!   flood's statuses: anything but 200 and 429-with-Retry-After fails, and so does any error
//!   for the quiet token.
//!
//! - Phase 0 (alone: `cargo xtask load writes`): writes into one project beside
//!   server-filesystem ([`crate::load_writes`]); `--writes` (100) per client, `--before <sluice>`
//!   adds an older build to the same turn.
//!
//! Builds `sluice` in debug unless a `run-release` binary already exists (`--release` builds
//! that profile); the report says which it used.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::bench_util::{proc_status_kib, status_value};
use crate::mcp_http::{Client, Response};
use crate::{RUN_PROFILE, sh, target_dir};

/// Most growth of RSS or open descriptors over the second half of phase 1, each measured idle.
const MAX_GROWTH: f64 = 0.10;
/// How long the engine is left without calls before a sample: past the 12 s after which it
/// gives back what its ended threads held (sluice-engine's `memory`), plus a 2-second tick.
const IDLE: Duration = Duration::from_secs(15);

struct Options {
    clients: usize,
    calls: usize,
    writes: usize,
    release: bool,
    writes_only: bool,
    before: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        clients: 32,
        calls: 2000,
        writes: 100,
        release: false,
        writes_only: false,
        before: None,
    };
    let mut args = args;
    if args.first().is_some_and(|a| a == "writes") {
        o.writes_only = true;
        args = &args[1..];
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> Result<usize> {
            it.next()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n > 0)
                .with_context(|| format!("{name} takes a positive number"))
        };
        match a.as_str() {
            "--clients" => o.clients = num("--clients")?,
            "--calls" => o.calls = num("--calls")?,
            "--writes" => o.writes = num("--writes")?,
            "--release" => o.release = true,
            "--before" => {
                let bin = it.next().map(PathBuf::from).context("--before takes a sluice binary")?;
                if !bin.is_file() {
                    bail!("--before: {} is not a file", bin.display());
                }
                o.before = Some(bin);
            }
            other => bail!(
                "unknown argument {other:?}; usage: cargo xtask load [writes] [--clients N] \
                 [--calls N] [--writes N] [--before <sluice>] [--release]"
            ),
        }
    }
    Ok(o)
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let opts = parse(args)?;
    let target = target_dir(root);
    let release_bin = target.join(RUN_PROFILE).join("sluice");
    let (bin, build) =
        if opts.release || release_bin.exists() {
            sh(Command::new("cargo")
                .args(["build", "--profile", RUN_PROFILE, "--locked"])
                .args(["-p", "sluice-cli", "--bin", "sluice"]))?;
            (release_bin, RUN_PROFILE)
        } else {
            sh(Command::new("cargo").args([
                "build",
                "--locked",
                "-p",
                "sluice-cli",
                "--bin",
                "sluice",
            ]))?;
            (target.join("debug/sluice"), "debug (unoptimized: figures are a floor)")
        };
    let work = target.join(format!("xtask/load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let res = writes(root, &bin, &work, &opts, build)
        .and_then(|()| if opts.writes_only { Ok(()) } else { phases(&bin, &work, &opts, build) });
    let _ = std::fs::remove_dir_all(&work);
    res
}

/// Phase 0: writes into one project, beside server-filesystem (and `--before`).
fn writes(root: &Path, bin: &Path, work: &Path, opts: &Options, build: &str) -> Result<()> {
    use crate::load_writes::{Writer, run, table};
    let node = crate::deps::node_env(root)?;
    let script =
        root.join("tests/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let mut writers = vec![Writer::Sluice { bin: bin.to_path_buf(), label: "sluice" }];
    if let Some(before) = &opts.before {
        writers.push(Writer::Sluice { bin: before.clone(), label: "sluice before" });
    }
    writers.push(Writer::Peer { node, script });
    println!("sluice: {} ({build})", bin.display());
    println!(
        "## Phase 0: {} clients x {} write_file each, one project, a file per client",
        opts.clients, opts.writes
    );
    let figures = run(&writers, work, opts.clients, opts.writes)?;
    print!("\n{}", table(&figures));
    println!("load average: {}", crate::bench_util::loadavg());
    Ok(())
}

/// Adds `project` read-write as `name` to the data folder and makes `clients` full tokens.
pub(crate) fn read_write_project(
    bin: &Path,
    data: &Path,
    project: &Path,
    name: &str,
    clients: usize,
) -> Result<Vec<String>> {
    let sluice = |args: &[&str]| -> Result<String> {
        let out = Command::new(bin)
            .args(args)
            .env("SLUICE_DATA_DIR", data)
            .env("SLUICE_SECRET_STORE", "file")
            .env_remove("SLUICE_TOKEN")
            .output()
            .with_context(|| format!("sluice {args:?}"))?;
        if !out.status.success() {
            bail!("sluice {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let dir = project.to_str().context("utf-8 path")?;
    sluice(&["project", "add", dir, "--name", name, "--access", "read-write"])?;
    (0..clients)
        .map(|i| {
            let out =
                sluice(&["token", "create", "--label", &format!("load-{i}"), "--profile", "full"])?;
            out.split_whitespace()
                .find(|w| w.starts_with("slc_"))
                .map(str::to_owned)
                .context("no token in `sluice token create` output")
        })
        .collect()
}

fn phases(bin: &Path, work: &Path, opts: &Options, build: &str) -> Result<()> {
    let data = work.join("data");
    let project = work.join("demo");
    make_project(&project)?;
    let tokens = read_write_project(bin, &data, &project, "demo", opts.clients)?;

    println!("sluice: {} ({build})", bin.display());
    println!("## Phase 1: {} clients x {} mixed calls, limits raised", opts.clients, opts.calls);
    let engine = Engine::start(
        bin,
        &data,
        &["--rate-limit", "1000000", "--burst", "1000000", "--max-in-flight", "1024"],
    )?;
    // Warm-up: a tenth of the calls (at least 50 each), so caches, pools and allocator arenas
    // come near their working size before the first sample.
    let warm = (opts.calls / 10).max(50);
    drive(engine.port, &tokens, warm, "warm")?;
    let warmed = engine.sample_idle()?;
    // Then the run in two halves, sampled idle after each. What the allocator keeps after a
    // trim settles at a level during the first half (its fragmentation, a few MB, whatever the
    // number of calls: docs/BENCHMARKS.md); memory that grows with calls grows in both halves,
    // so the second half is the one held to the bound.
    let half = (opts.calls / 2).max(1);
    let t0 = Instant::now();
    let curve = Curve::start(engine.child.id());
    let mut results = drive(engine.port, &tokens, half, "first")?;
    let mid_elapsed = t0.elapsed();
    let settled = engine.sample_idle()?;
    let t1 = Instant::now();
    results.extend(drive(engine.port, &tokens, opts.calls - half, "second")?);
    let elapsed = mid_elapsed + t1.elapsed();
    let curve = curve.finish();
    let busy = engine.sample()?;
    let after = engine.sample_idle()?;
    drop(engine);
    let failed = report_phase1(&results, elapsed, [warmed, settled, after]);
    println!(
        "engine RSS (KiB) at each tenth of the run (idle pauses included): {curve}; as the last \
         call was answered: {}",
        busy.rss_kib
    );

    println!("\n## Phase 2: one token floods, another keeps calling, default limits");
    let engine = Engine::start(bin, &data, &[])?;
    let failed2 = flood(engine.port, &tokens[0], &tokens[1])?;
    drop(engine);
    match (failed, failed2) {
        (None, None) => Ok(()),
        (a, b) => bail!("{}", [a, b].into_iter().flatten().collect::<Vec<_>>().join("; ")),
    }
}

/// A git repository with some sources, a README and a folder for the clients' writes.
fn make_project(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::create_dir_all(dir.join("out"))?;
    std::fs::write(dir.join("README.md"), "# Load\nhello world\n".repeat(40))?;
    for i in 0..20 {
        let body: String = (0..80).map(|l| format!("fn f{i}_{l}() -> u32 {{ {l} }}\n")).collect();
        std::fs::write(dir.join(format!("src/m{i}.rs")), body)?;
    }
    let git = |args: &[&str]| {
        sh(Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=load", "-c", "user.email=load@example.com"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .stderr(Stdio::null()))
    };
    git(&["init", "-q", "-b", "main"])?;
    git(&["add", "."])?;
    git(&["commit", "-q", "-m", "load"])?;
    Ok(())
}

/// A running `sluice serve`, killed on drop.
pub(crate) struct Engine {
    child: Child,
    pub port: u16,
}

#[derive(Clone)]
struct Sample {
    rss_kib: u64,
    fds: usize,
    threads: u64,
    /// RssAnon, RssFile and RssShmem, as /proc reports them.
    parts: String,
}

impl Engine {
    pub fn start(bin: &Path, data: &Path, extra: &[&str]) -> Result<Engine> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut child = Command::new(bin)
            .args(["serve", "--port", &port.to_string()])
            .args(extra)
            .env("SLUICE_DATA_DIR", data)
            .env("SLUICE_SECRET_STORE", "file")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
        if !line.contains("serving") {
            let _ = child.kill();
            bail!("sluice serve did not start: {line}");
        }
        Ok(Engine { child, port })
    }

    fn sample(&self) -> Result<Sample> {
        Sample::of(self.child.id())
    }

    /// A sample once the engine has been idle for [`IDLE`]: what it keeps between bursts of
    /// calls, after it gave back what its allocator held free (sluice-engine's `memory`).
    fn sample_idle(&self) -> Result<Sample> {
        std::thread::sleep(IDLE);
        self.sample()
    }
}

/// The engine's resident memory, read twice a second through a run.
struct Curve {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u64>>,
}

impl Curve {
    fn start(pid: u32) -> Curve {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut rss = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                if let Ok(kib) = proc_status_kib(pid, "VmRSS") {
                    rss.push(kib);
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            rss
        });
        Curve { stop, thread }
    }

    /// The samples at each tenth of the run, as a line.
    fn finish(self) -> String {
        self.stop.store(true, Ordering::Relaxed);
        let rss = self.thread.join().unwrap_or_default();
        if rss.is_empty() {
            return "no samples".into();
        }
        (0..=10).map(|i| rss[(rss.len() - 1) * i / 10].to_string()).collect::<Vec<_>>().join(", ")
    }
}

impl Sample {
    fn of(pid: u32) -> Result<Sample> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        let value = |field: &str| status_value(&status, field).with_context(|| field.to_owned());
        let (rss_kib, threads) = (value("VmRSS")?, value("Threads")?);
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))?.count();
        let parts = ["RssAnon", "RssFile", "RssShmem"]
            .map(|f| format!("{f}: {}", status_value(&status, f).unwrap_or(0)))
            .join(", ");
        // Threads by name, so growth in one pool shows.
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        for task in std::fs::read_dir(format!("/proc/{pid}/task"))?.flatten() {
            let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            *names.entry(name.trim().to_owned()).or_default() += 1;
        }
        let anon = std::fs::read_to_string(format!("/proc/{pid}/smaps"))
            .map(|smaps| anon_by_kind(&smaps))
            .unwrap_or_else(|e| format!("smaps: {e}"));
        let parts = format!("{parts}; anonymous by kind (KiB) {anon}; threads {names:?}");
        Ok(Sample { rss_kib, fds, threads, parts })
    }
}

/// Anonymous resident memory of `/proc/PID/smaps` text by where it lives, so growth can be
/// told apart: the main heap (`[heap]`), glibc's other arenas (mappings that start on a 64 MiB
/// boundary, their reserved size), thread stacks (a mapping right after a one-page guard),
/// and other mappings (large allocations, which malloc maps alone).
fn anon_by_kind(smaps: &str) -> String {
    const ARENA: u64 = 64 << 20;
    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut kind, mut guard_end) = (None::<&str>, None::<u64>);
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
        if let Some((start, end)) = range.split_once('-')
            && let (Ok(start), Ok(end)) =
                (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16))
        {
            let path = fields.nth(3);
            kind = match path {
                Some("[heap]") => Some("heap"),
                Some("[stack]") => Some("main stack"),
                Some(_) => None,
                None if perms != "rw-p" => None,
                None if start % ARENA == 0 => Some("arenas"),
                None if guard_end == Some(start) => Some("thread stacks"),
                None => Some("other"),
            };
            guard_end = (perms == "---p" && end - start == 4096).then_some(end);
        } else if let (Some(k), Some(kib)) = (kind, line.strip_prefix("Rss:")) {
            let kib = kib.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0);
            *kinds.entry(k).or_default() += kib;
        }
    }
    format!("{kinds:?}")
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One answered call: its tool, latency, and `None` or the error code it got.
struct Outcome {
    tool: &'static str,
    micros: u64,
    error: Option<String>,
}

/// The error code of a reply, `None` for success.
pub(crate) fn error_code(r: &Response) -> Option<String> {
    if r.status != 200 {
        return Some(format!("http {}", r.status));
    }
    if let Some(code) = r.body["error"]["code"].as_i64() {
        return Some(format!("json-rpc {code}"));
    }
    (r.body["result"]["isError"] == true).then(|| {
        r.body["result"]["structuredContent"]["code"].as_str().unwrap_or("unknown").to_owned()
    })
}

/// Each client (one token each) makes `calls` mixed calls; returns every outcome.
fn drive(port: u16, tokens: &[String], calls: usize, phase: &str) -> Result<Vec<Outcome>> {
    let start = Arc::new(Barrier::new(tokens.len()));
    let workers: Vec<_> = tokens
        .iter()
        .enumerate()
        .map(|(idx, token)| {
            let (token, start, phase) = (token.clone(), start.clone(), phase.to_owned());
            std::thread::spawn(move || -> Result<Vec<Outcome>> {
                let mut client = Client::new(port, &token);
                let path = format!("out/{phase}-c{idx}.txt");
                let mut hash: Option<String> = None;
                let mut out = Vec::with_capacity(calls);
                start.wait();
                for i in 0..calls {
                    let (tool, args) = match (i + idx) % 6 {
                        0 => ("read_file", json!({"project": "demo", "path": "README.md"})),
                        1 => ("list_directory", json!({"project": "demo", "path": "src"})),
                        2 => ("search_text", json!({"project": "demo", "pattern": "f7_4[0-9]"})),
                        3 => ("stat", json!({"project": "demo", "path": "src/m3.rs"})),
                        4 => ("git_status", json!({"project": "demo"})),
                        _ => (
                            "write_file",
                            json!({"project": "demo", "path": path, "expected_hash": hash,
                                   "content": format!("client {idx} call {i}\n")}),
                        ),
                    };
                    let t = Instant::now();
                    let r = client.call(tool, args).with_context(|| format!("{tool} failed"))?;
                    let micros = t.elapsed().as_micros() as u64;
                    let error = error_code(&r);
                    if tool == "write_file" && error.is_none() {
                        hash = r.body["result"]["structuredContent"]["files"][0]["hash_after"]
                            .as_str()
                            .map(str::to_owned);
                    }
                    out.push(Outcome { tool, micros, error });
                }
                Ok(out)
            })
        })
        .collect();
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.join().map_err(|_| anyhow::anyhow!("a client thread panicked"))??);
    }
    Ok(all)
}

pub(crate) fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx] as f64 / 1000.0
}

fn latency_line(name: &str, micros: &mut [u64]) -> String {
    micros.sort_unstable();
    format!(
        "| {name} | {} | {:.2} | {:.2} |",
        micros.len(),
        percentile(micros, 0.5),
        percentile(micros, 0.99)
    )
}

fn growth(a: f64, b: f64) -> f64 {
    if a == 0.0 { 0.0 } else { (b - a) / a }
}

/// Prints phase 1; returns why it failed, if it did.
fn report_phase1(results: &[Outcome], elapsed: Duration, samples: [Sample; 3]) -> Option<String> {
    println!(
        "{} calls in {:.1} s: {:.0} calls/s",
        results.len(),
        elapsed.as_secs_f64(),
        results.len() as f64 / elapsed.as_secs_f64()
    );
    println!("\n| tool | calls | p50 (ms) | p99 (ms) |\n|---|---:|---:|---:|");
    let mut by_tool: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for r in results {
        by_tool.entry(r.tool).or_default().push(r.micros);
    }
    let mut all: Vec<u64> = results.iter().map(|r| r.micros).collect();
    println!("{}", latency_line("all", &mut all));
    for (tool, mut micros) in by_tool {
        println!("{}", latency_line(tool, &mut micros));
    }
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for r in results {
        if let Some(e) = &r.error {
            *errors.entry(format!("{} {e}", r.tool)).or_default() += 1;
        }
    }
    println!(
        "\nerrors by code: {}",
        if errors.is_empty() { "none".into() } else { format!("{errors:?}") }
    );
    let [warmed, settled, after] = samples;
    let rss = growth(settled.rss_kib as f64, after.rss_kib as f64);
    let fds = growth(settled.fds as f64, after.fds as f64);
    println!(
        "engine RSS (KiB), idle: {} after warm-up, {} after the first half ({:+.1} %), {} at the \
         end ({:+.1} % over the second half)\n\
         engine open fds, idle: {} after warm-up, {} after the first half, {} at the end \
         ({:+.1} % over the second half)\n\
         engine threads: {}, {}, {}\n\
         engine memory after warm-up: {}\n\
         engine memory after the first half: {}\n\
         engine memory at the end: {}",
        warmed.rss_kib,
        settled.rss_kib,
        growth(warmed.rss_kib as f64, settled.rss_kib as f64) * 100.0,
        after.rss_kib,
        rss * 100.0,
        warmed.fds,
        settled.fds,
        after.fds,
        fds * 100.0,
        warmed.threads,
        settled.threads,
        after.threads,
        warmed.parts,
        settled.parts,
        after.parts
    );
    let mut why = Vec::new();
    if !errors.is_empty() {
        why.push(format!("unintended errors under raised limits: {errors:?}"));
    }
    if rss > MAX_GROWTH {
        why.push(format!(
            "RSS grew {:.1} % over the second half (limit {:.0} %)",
            rss * 100.0,
            MAX_GROWTH * 100.0
        ));
    }
    if fds > MAX_GROWTH {
        why.push(format!(
            "open fds grew {:.1} % over the second half (limit {:.0} %)",
            fds * 100.0,
            MAX_GROWTH * 100.0
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Calls the quiet token makes in each of its two measurements.
const QUIET_CALLS: usize = 200;
/// Threads of the flooding token.
const FLOOD_THREADS: usize = 24;

/// The quiet token's read_file calls, one at a time at about 50 per second; latencies in µs.
fn quiet(port: u16, token: &str) -> Result<(Vec<u64>, BTreeMap<String, usize>)> {
    let mut client = Client::new(port, token);
    let mut micros = Vec::new();
    let mut errors = BTreeMap::new();
    for _ in 0..QUIET_CALLS {
        let t = Instant::now();
        let r = client.call("read_file", json!({"project": "demo", "path": "README.md"}))?;
        micros.push(t.elapsed().as_micros() as u64);
        if let Some(e) = error_code(&r) {
            *errors.entry(e).or_default() += 1;
        }
        std::thread::sleep(Duration::from_millis(20).saturating_sub(t.elapsed()));
    }
    Ok((micros, errors))
}

/// Phase 2; returns why it failed, if it did.
fn flood(port: u16, quiet_token: &str, flood_token: &str) -> Result<Option<String>> {
    let (mut alone, alone_errors) = quiet(port, quiet_token)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flooders: Vec<_> = (0..FLOOD_THREADS)
        .map(|_| {
            let (stop, token) = (stop.clone(), flood_token.to_owned());
            std::thread::spawn(move || -> Result<BTreeMap<String, usize>> {
                let mut client = Client::new(port, &token);
                let mut seen = BTreeMap::new();
                while !stop.load(Ordering::Relaxed) {
                    let r = client.call("stat", json!({"project": "demo", "path": "README.md"}))?;
                    let key = match (r.status, &r.retry_after) {
                        (200, _) if error_code(&r).is_none() => "200".to_owned(),
                        (429, Some(after)) if after.parse::<u64>().is_ok() => {
                            "429 with Retry-After".to_owned()
                        }
                        _ => format!("unexpected: {:?} {:?}", error_code(&r), r.retry_after),
                    };
                    *seen.entry(key).or_default() += 1;
                }
                Ok(seen)
            })
        })
        .collect();
    // Let the flood use up its burst before measuring.
    std::thread::sleep(Duration::from_secs(3));
    let (mut during, during_errors) = quiet(port, quiet_token)?;
    stop.store(true, Ordering::Relaxed);
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    for f in flooders {
        for (k, n) in f.join().map_err(|_| anyhow::anyhow!("a flood thread panicked"))?? {
            *statuses.entry(k).or_default() += n;
        }
    }
    println!("\n| quiet token, read_file | calls | p50 (ms) | p99 (ms) |\n|---|---:|---:|---:|");
    println!("{}", latency_line("alone", &mut alone));
    println!("{}", latency_line("during the flood", &mut during));
    println!("\nflood ({FLOOD_THREADS} threads, one token): {statuses:?}");
    println!("quiet token errors: alone {alone_errors:?}, during the flood {during_errors:?}");
    let mut why = Vec::new();
    if !alone_errors.is_empty() || !during_errors.is_empty() {
        why.push("the quiet token got errors".to_owned());
    }
    if statuses.keys().any(|k| k.starts_with("unexpected")) {
        why.push(format!("the flood got other answers than 200 and 429: {statuses:?}"));
    }
    if !statuses.contains_key("429 with Retry-After") {
        why.push("the flood was never throttled".to_owned());
    }
    Ok((!why.is_empty()).then(|| why.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_memory_is_told_apart_by_where_it_lives() {
        let smaps = "\
55d0c0000000-55d0c0100000 r-xp 00000000 fe:01 123 /usr/bin/sluice
Rss:                 900 kB
55d0c1000000-55d0c1400000 rw-p 00000000 00:00 0 [heap]
Rss:                4000 kB
7f0000000000-7f0000300000 rw-p 00000000 00:00 0
Rss:                3000 kB
7f0000300000-7f0004000000 ---p 00000000 00:00 0
Rss:                   0 kB
7f1000000000-7f1000001000 ---p 00000000 00:00 0
Rss:                   0 kB
7f1000001000-7f1000201000 rw-p 00000000 00:00 0
Rss:                  64 kB
7f1000300000-7f1000500000 rw-p 00000000 00:00 0
Rss:                2048 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]
Rss:                  40 kB
";
        assert_eq!(
            anon_by_kind(smaps),
            r#"{"arenas": 3000, "heap": 4000, "main stack": 40, "other": 2048, "thread stacks": 64}"#
        );
    }

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        let v: Vec<u64> = (1..=100).map(|ms| ms * 1000).collect();
        assert_eq!(percentile(&v, 0.5), 51.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
