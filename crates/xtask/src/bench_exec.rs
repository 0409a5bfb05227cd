//! `cargo xtask bench` — execution, against the real release `sluice serve` over loopback HTTP
//! (raw JSON-RPC, one connection per call, as a minimal client would), with the user's side
//! played through the real CLI:
//!
//! - **Emergency stop**: as many jobs as the engine runs at once, each a tree with a plain
//!   child, a `setsid` child and a double-forked grandchild; time from invoking `sluice stop`
//!   (another process, as a user at a terminal) until a `/proc` scan finds none of their
//!   processes alive (zombies ignored: PID 1 here does not reap), and the survivors.
//! - **Job log throughput**: a job writing 200 MiB to stdout, start to final state (the client
//!   polling `job_status` every 5 ms, and waiting in one `job_status` call), beside the same
//!   program writing to `/dev/null` and to a pipe the bench drains. `cargo xtask bench exec log`
//!   measures only this, and replaces only its part of docs/BENCHMARKS.md.
//! - **run_command overhead**: `/bin/true` through `run_command` (any mode, exact allow rule,
//!   so nothing asks) beside spawning `/bin/true` from the bench process, in the same run.
//! - **A build in the sandbox**: `cargo test` of a small crate from a clean target folder,
//!   through `run_command` (namespaces, Landlock, the copy-on-write cargo home) beside the same
//!   command run directly by the bench, alternating.
//! - **Interactive jobs** (`bench_keys.rs`): keystroke to echo through MCP beside a pty the
//!   bench opens, and how soon a `job_logs` wait returns on new output. `cargo xtask bench exec
//!   keys` measures only this, and replaces only its part of docs/BENCHMARKS.md.
//!
//! Each measure gets a fresh server: the engine's start-rate limit (60 starts a minute) would
//! otherwise throttle the bench, rightly.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::bench_util::{Ctx, call, loadavg, median_p95, ms, setup, start, start_with};

/// The heading of this section in docs/BENCHMARKS.md.
pub const HEADING: &str = "## Execution, release `sluice serve`";

/// 50 running jobs over two projects; the server is started with limits that allow them (by
/// default it runs 8 at once, 4 per project, 60 starts a minute).
const STOP_PROJECTS: usize = 2;
const STOP_JOBS_PER_PROJECT: usize = 25;
const STOP_LIMITS: &[&str] =
    &["--max-jobs", "50", "--max-jobs-per-project", "25", "--job-starts-per-minute", "1000"];
const STOP_ROUNDS: usize = 5;
const LOG_BYTES: usize = 200 << 20;
const LOG_RUNS: usize = 3;
/// Below the engine's 60 starts a minute, with the approval and warm-up calls.
const OVERHEAD_CALLS: usize = 50;

/// The heading of the log throughput part of the section.
pub const LOG_HEADING: &str = "### Job log throughput";

/// Runs the execution benchmarks and returns their markdown section.
pub fn run(bin: &Path, work: &Path) -> Result<String> {
    let (data, projects, token) = setup(bin, work, STOP_PROJECTS)?;
    let ctx = Ctx { bin, data: &data, token: &token };

    let load_before = loadavg();
    let stop = emergency_stop(&ctx, &projects)?;
    let logs = log_throughput(&ctx, &projects[0], false)?;
    let overhead = run_overhead(&ctx)?;
    let cargo = cargo_in_and_out(&ctx, &projects[1])?;
    #[cfg(target_os = "linux")]
    let keys = crate::bench_keys::run(&ctx, &projects[0].0, false)?;
    #[cfg(not(target_os = "linux"))]
    let keys = String::new();
    let mut md = format!(
        "{HEADING}\n\nLoad average (1 min) when this section started and ended: {load_before} \
         and {}; other work on the machine shows up in these figures.\n\n",
        loadavg()
    );
    md.push_str(&stop);
    md.push_str(&logs);
    md.push_str(&overhead);
    md.push_str(&cargo);
    md.push_str(&keys);
    Ok(md)
}

/// Runs only the log throughput measure and returns its markdown part (under [`LOG_HEADING`]).
pub fn run_log(bin: &Path, work: &Path) -> Result<String> {
    let (data, projects, token) = setup(bin, work, STOP_PROJECTS)?;
    let ctx = Ctx { bin, data: &data, token: &token };
    log_throughput(&ctx, &projects[0], true)
}

/// Live (not zombie) processes whose command line contains `marker`.
fn survivors(marker: &str) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie =
                stat.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmd).contains(marker)
        })
        .count()
}

fn unique_marker() -> String {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}", 800_000 + (t.subsec_nanos() as u64 + std::process::id() as u64 * 31) % 90_000)
}

struct StopRound {
    processes: usize,
    total: Duration,
    /// How long the `sluice stop` command itself took.
    cli: Duration,
    noticed: Duration,
    survivors: usize,
}

fn emergency_stop(ctx: &Ctx, projects: &[(String, std::path::PathBuf)]) -> Result<String> {
    let mut rounds = Vec::new();
    for _ in 0..STOP_ROUNDS {
        rounds.push(stop_round(ctx, projects)?);
    }
    let per_job = rounds[0].processes / (STOP_PROJECTS * STOP_JOBS_PER_PROJECT);
    let (total_med, _) = median_p95(rounds.iter().map(|r| r.total).collect());
    let total_max = rounds.iter().map(|r| r.total).max().unwrap_or_default();
    let (noticed_med, _) = median_p95(rounds.iter().map(|r| r.noticed).collect());
    let noticed_max = rounds.iter().map(|r| r.noticed).max().unwrap_or_default();
    let (cli_med, _) = median_p95(rounds.iter().map(|r| r.cli).collect());
    let cli_max = rounds.iter().map(|r| r.cli).max().unwrap_or_default();
    let kill: Vec<Duration> = rounds.iter().map(|r| r.total - r.noticed).collect();
    let kill_max = kill.iter().copied().max().unwrap_or_default();
    let (kill_med, _) = median_p95(kill);
    let survivors: usize = rounds.iter().map(|r| r.survivors).sum();
    Ok(format!(
        "### Emergency stop\n\n\
         {jobs} running jobs ({per_project} per project, the server started with limits that \
         allow them), each a tree of {per_job} processes: `sh`, a `sleep`, a `setsid sleep` and \
         a double-forked `sleep` ({procs} processes). `sluice stop` is run as another process, \
         as a user would: it records the stop and rewrites the data folder's nudge file, which \
         the serving engine watches; the engine then kills every tree. {rounds} rounds, a fresh \
         server each.\n\n\
         | measure | median (ms) | max (ms) |\n|---|---:|---:|\n\
         | `sluice stop` invoked → every process dead | {tm} | {tx} |\n\
         | the `sluice stop` command itself (flag persisted, pending approvals denied) | {cm} | \
         {cx} |\n\
         | `sluice stop` invoked → the engine noticed (first process gone) | {nm} | {nx} |\n\
         | killing, first to last process gone | {km} | {kx} |\n\n\
         Survivors after the stop, all rounds: **{survivors}**.\n\n",
        jobs = STOP_PROJECTS * STOP_JOBS_PER_PROJECT,
        per_project = STOP_JOBS_PER_PROJECT,
        procs = rounds[0].processes,
        rounds = STOP_ROUNDS,
        tm = ms(total_med),
        tx = ms(total_max),
        cm = ms(cli_med),
        cx = ms(cli_max),
        nm = ms(noticed_med),
        nx = ms(noticed_max),
        km = ms(kill_med),
        kx = ms(kill_max),
    ))
}

fn stop_round(ctx: &Ctx, projects: &[(String, std::path::PathBuf)]) -> Result<StopRound> {
    let (serve, _) = start_with(ctx.bin, ctx.data, STOP_LIMITS)?;
    let m = unique_marker();
    let script = format!("setsid sleep {m} & (sleep {m} &); sleep {m} & wait");
    for (name, _) in projects {
        let job = json!({"project": name, "program": "sh", "args": ["-c", script]});
        ctx.call_approving(serve.port, "start_job", job.clone())?;
        for _ in 1..STOP_JOBS_PER_PROJECT {
            call(serve.port, ctx.token, "start_job", &job)?;
        }
    }
    // Per job: the `sh` leader (its argv holds the marker too) and its three sleeps.
    let expected = STOP_PROJECTS * STOP_JOBS_PER_PROJECT * 4;
    let deadline = Instant::now() + Duration::from_secs(30);
    while survivors(&m) < expected {
        if Instant::now() > deadline {
            bail!("only {} of {expected} job processes started", survivors(&m));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The short-lived subshell of the double fork may still be counted: let it exit.
    std::thread::sleep(Duration::from_millis(200));
    let processes = survivors(&m);
    let t0 = Instant::now();
    ctx.cli(&["stop"])?;
    let cli = t0.elapsed();
    let mut noticed = None;
    let limit = Duration::from_secs(15);
    loop {
        let alive = survivors(&m);
        if alive < processes && noticed.is_none() {
            noticed = Some(t0.elapsed());
        }
        if alive == 0 || t0.elapsed() > limit {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let total = t0.elapsed();
    let left = survivors(&m);
    ctx.cli(&["resume"])?;
    drop(serve);
    Ok(StopRound { processes, total, cli, noticed: noticed.unwrap_or(total), survivors: left })
}

fn log_throughput(
    ctx: &Ctx,
    (project, dir): &(String, std::path::PathBuf),
    alone: bool,
) -> Result<String> {
    // Build-log-like lines, written once.
    let file = dir.join("big.log");
    {
        let mut text = String::with_capacity(LOG_BYTES + 200);
        let mut i = 0u64;
        while text.len() < LOG_BYTES {
            text.push_str(&format!(
                "   Compiling crate-{i:06} v0.{}.{} (registry) warning: unused variable `x{i}` \
                 at src/lib.rs:{}:{}\n",
                i % 17,
                i % 5,
                i % 977,
                i % 80
            ));
            i += 1;
        }
        text.truncate(LOG_BYTES);
        std::fs::write(&file, text)?;
    }
    let load_before = loadavg();
    let (serve, _) = start(ctx.bin, ctx.data)?;
    let job = json!({"project": project, "program": "cat", "args": ["big.log"]});
    // The first run waits for the approval: a warm-up. Then the client polls `job_status`
    // every 5 ms, or waits in it (`wait_seconds`: the call returns when the job ends), in turns.
    let mut polled = Vec::new();
    let mut waited = Vec::new();
    let mut last = Value::Null;
    for run in 0..=2 * LOG_RUNS {
        let t0 = Instant::now();
        let started = if run == 0 {
            ctx.call_approving(serve.port, "start_job", job.clone())?
        } else {
            call(serve.port, ctx.token, "start_job", &job)?
        };
        let id = started["job_id"].as_str().context("job id")?.to_owned();
        let wait = run % 2 == 0 && run > 0;
        let args =
            if wait { json!({"job_id": id, "wait_seconds": 30}) } else { json!({"job_id": id}) };
        let status = loop {
            let st = call(serve.port, ctx.token, "job_status", &args)?;
            if !matches!(st["state"].as_str(), Some("queued" | "running")) {
                break st;
            }
            if !wait {
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        if status["state"] != "succeeded" || status["stdout_bytes"] != json!(LOG_BYTES) {
            bail!("the log job did not write everything: {status}");
        }
        match run {
            0 => {}
            _ if wait => waited.push(t0.elapsed()),
            _ => polled.push(t0.elapsed()),
        }
        last = status;
    }
    drop(serve);
    let mut direct_null = Vec::new();
    let mut direct_pipe = Vec::new();
    for _ in 0..LOG_RUNS {
        direct_null.push(time_direct(&file, Stdio::from(std::fs::File::create("/dev/null")?))?);
        let t0 = Instant::now();
        let mut child = Command::new("cat").arg(&file).stdout(Stdio::piped()).spawn()?;
        let mut out = child.stdout.take().context("stdout")?;
        let mut buf = vec![0u8; 1 << 16];
        while out.read(&mut buf)? > 0 {}
        child.wait()?;
        direct_pipe.push(t0.elapsed());
    }
    let median = |v: Vec<Duration>| median_p95(v).0;
    let (polled, waited) = (median(polled), median(waited));
    let (direct_null, direct_pipe) = (median(direct_null), median(direct_pipe));
    let mib = LOG_BYTES as f64 / (1 << 20) as f64;
    let rate = |d: Duration| format!("{:.0}", mib / d.as_secs_f64());
    let how = if alone {
        format!(
            "Measured alone with `cargo xtask bench exec log` (load average, 1 min, when it \
             started and ended: {load_before} and {}); the rest of this section comes from \
             the run of `cargo xtask bench` (or `bench exec`) before it. ",
            loadavg()
        )
    } else {
        String::new()
    };
    Ok(format!(
        "{LOG_HEADING}\n\n\
         `cat` of a {mib:.0} MiB build-log-like file as a job (`start_job`, then `job_status` \
         until it finished: polled every 5 ms, or one call waiting for the end with \
         `wait_seconds`, in turns); every byte goes through the engine's output pipeline (ANSI \
         stripping, path rewriting, secret redaction) into the job's bounded log (1 MiB kept \
         per stream, {dropped} bytes dropped and counted). {how}Median of {runs} runs each.\n\n\
         | path | time (ms) | MiB/s |\n|---|---:|---:|\n\
         | job log (start_job → succeeded, `job_status` polled every 5 ms) | {p} | {pr} |\n\
         | job log (start_job → succeeded, waiting in `job_status`) | {w} | {wr} |\n\
         | `cat` to `/dev/null` directly | {n} | {nr} |\n\
         | `cat` to a pipe the bench drains | {d} | {dr} |\n\n",
        dropped = last["dropped_bytes"],
        runs = LOG_RUNS,
        p = ms(polled),
        pr = rate(polled),
        w = ms(waited),
        wr = rate(waited),
        n = ms(direct_null),
        nr = rate(direct_null),
        d = ms(direct_pipe),
        dr = rate(direct_pipe),
    ))
}

fn time_direct(file: &Path, stdout: Stdio) -> Result<Duration> {
    let t0 = Instant::now();
    let st = Command::new("cat").arg(file).stdout(stdout).status()?;
    if !st.success() {
        bail!("cat failed");
    }
    Ok(t0.elapsed())
}

/// Rounds of the sandboxed and the direct `cargo test` (each from a clean target folder).
const CARGO_ROUNDS: usize = 5;

fn cargo_in_and_out(ctx: &Ctx, (project, dir): &(String, std::path::PathBuf)) -> Result<String> {
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )?;
    let mut lib = String::from(
        "pub fn fib(n: u64) -> u64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }\n",
    );
    lib.push_str("#[cfg(test)]\nmod tests {\n");
    for i in 0..20 {
        lib.push_str(&format!(
            "    #[test] fn t{i}() {{ assert_eq!(super::fib({i}), super::fib({i})); }}\n"
        ));
    }
    lib.push_str("}\n");
    std::fs::write(dir.join("src/lib.rs"), lib)?;
    let argv = ["test", "--offline", "--quiet"];
    let (serve, _) = start(ctx.bin, ctx.data)?;
    let args =
        json!({"project": project, "program": "cargo", "args": argv, "timeout_seconds": 300});
    let clean = || -> Result<()> {
        match std::fs::remove_dir_all(dir.join("target")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    };
    clean()?;
    let first = ctx.call_approving(serve.port, "run_command", args.clone())?;
    if first["state"] != "succeeded" {
        bail!("cargo test did not succeed in the sandbox: {first}");
    }
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for _ in 0..CARGO_ROUNDS {
        clean()?;
        let t0 = Instant::now();
        let out = call(serve.port, ctx.token, "run_command", &args)?;
        inside.push(t0.elapsed());
        if out["state"] != "succeeded" {
            bail!("cargo test failed in the sandbox: {out}");
        }
        clean()?;
        let t0 = Instant::now();
        // As the job runs it: in the project's own target folder, not the bench's.
        let st = Command::new("cargo")
            .args(argv)
            .current_dir(dir)
            .env_remove("CARGO_TARGET_DIR")
            .stdout(Stdio::null())
            .status()?;
        outside.push(t0.elapsed());
        if !st.success() {
            bail!("cargo test failed outside the sandbox");
        }
    }
    drop(serve);
    let (im, ip) = median_p95(inside);
    let (om, op) = median_p95(outside);
    let ratio = im.as_secs_f64() / om.as_secs_f64();
    Ok(format!(
        "### A build in the sandbox\n\n\
         `cargo test --offline` of a small crate (20 tests) from a clean target folder, \
         {n} times each, alternating: through `run_command` (client wall time: namespaces, \
         Landlock, the copy-on-write cargo home, the engine) and run directly by the bench.\n\n\
         | path | median (ms) | p95 (ms) |\n|---|---:|---:|\n\
         | inside the sandbox (`run_command`) | {im} | {ip} |\n\
         | outside (the bench runs cargo) | {om} | {op} |\n\n\
         Inside / outside, medians: {ratio:.3}.\n\n",
        n = CARGO_ROUNDS,
        im = ms(im),
        ip = ms(ip),
        om = ms(om),
        op = ms(op),
    ))
}

fn run_overhead(ctx: &Ctx) -> Result<String> {
    let (serve, _) = start(ctx.bin, ctx.data)?;
    let args = json!({"project": "exec0", "program": "/bin/true"});
    let first = ctx.call_approving(serve.port, "run_command", args.clone())?;
    if first["state"] != "succeeded" {
        bail!("/bin/true did not succeed: {first}");
    }
    for _ in 0..3 {
        call(serve.port, ctx.token, "run_command", &args)?;
    }
    let mut through = Vec::new();
    let mut inside = Vec::new();
    for _ in 0..OVERHEAD_CALLS {
        let t0 = Instant::now();
        let out = call(serve.port, ctx.token, "run_command", &args)?;
        through.push(t0.elapsed());
        inside.push(Duration::from_millis(out["duration_ms"].as_u64().unwrap_or(0)));
    }
    drop(serve);
    let mut direct = Vec::new();
    for _ in 0..OVERHEAD_CALLS + 3 {
        let t0 = Instant::now();
        let st = Command::new("/bin/true").status()?;
        if !st.success() {
            bail!("/bin/true failed");
        }
        direct.push(t0.elapsed());
    }
    direct.drain(..3);
    let (tm, tp) = median_p95(through);
    let (im, ip) = median_p95(inside);
    let (dm, dp) = median_p95(direct);
    Ok(format!(
        "### run_command overhead\n\n\
         `/bin/true` in a project in `any` mode with an exact allow rule (nothing asks), \
         {n} calls, each a new loopback HTTP connection, beside spawning `/bin/true` from the \
         bench process.\n\n\
         | path | median (ms) | p95 (ms) |\n|---|---:|---:|\n\
         | `run_command`, client wall time | {tm} | {tp} |\n\
         | `run_command`, the job's own runtime (`duration_ms`, whole ms) | {im} | {ip} |\n\
         | `/bin/true` spawned directly (`std::process::Command`) | {dm} | {dp} |\n\n",
        n = OVERHEAD_CALLS,
        tm = ms(tm),
        tp = ms(tp),
        im = ms(im),
        ip = ms(ip),
        dm = ms(dm),
        dp = ms(dp),
    ))
}
