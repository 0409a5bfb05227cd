//! `cargo xtask bench exec keys` — an interactive job's latency, against the real release
//! `sluice serve` over loopback HTTP (raw JSON-RPC, one connection per call, as the rest of the
//! execution section), in one run:
//!
//! - **Keystroke to echo through MCP**: `python3 -i` on a terminal of its own in the sandbox
//!   (`start_job` with `interactive: terminal`); per keystroke, one `write_job_input` of one
//!   character, then `job_logs` waiting for output from the write's cursor until the echo is
//!   there, timed from just before the write to the return of the read that shows it. The write
//!   and read calls are timed apart, beside a `job_logs` call that does not wait, so what
//!   dominates is measured.
//! - **The peer**: the same program on a pty the bench opens itself; one byte written to the
//!   master, the echo read back.
//! - **A held echo**: a letter's echo, which the output pipeline may hold back while it could be
//!   the start of a secret; how many short waits for it end at their deadline.
//! - **A wait wakes on new output**: a job printing its `CLOCK_MONOTONIC` time every 100 ms (it
//!   shares the bench's clock: no time namespace, checked), read with `job_logs`
//!   `wait: output` in a loop; per line, from its timestamp to the wait's return in the bench.
//!
//! Linux only (a pty through `TIOCGPTPEER`, the time namespace in `/proc`), as the bench is run.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::bench_util::{Ctx, call, loadavg, median_p95, setup, start};

/// The heading of this part of the execution section in docs/BENCHMARKS.md.
pub const HEADING: &str = "### Interactive jobs: keystroke to echo, a wait on new output";

/// Keystrokes measured on each side, after [`WARM_UP`] unmeasured ones.
const KEYSTROKES: usize = 300;
const WARM_UP: usize = 20;
/// Keystrokes on one input line; then Enter (unmeasured) and a fresh prompt, so no line wraps.
const LINE: usize = 50;
/// The keystroke: a letter, as typed (its echo waits for the output to pause: the redactor
/// releases a word that cannot begin a secret then; [`Repl::held_letters`] checks it does).
/// One that begins no secret format: an `x` (as in `xoxb-`) is held until the next key.
const KEY: &str = "k";
/// Letters typed to see whether their echo is held back, and the wait for each.
const HELD_PROBES: usize = 5;
const HELD_WAIT_SECONDS: u64 = 1;
/// The timestamp job's lines and their spacing.
const TICKS: usize = 200;
const TICK_MS: u64 = 100;
/// The REPL and its arguments; `-q`: no banner.
const REPL: &str = "python3";
const REPL_ARGS: &[&str] = &["-i", "-q"];
/// The longest any single read waits for what it expects.
const PATIENCE: Duration = Duration::from_secs(10);
/// Typed into each REPL before the keystrokes: whether its line editor is loaded (then it, not
/// the kernel's line discipline, echoes each key) and which Python it is.
const PROBE: &str = concat!(
    "import sys; print('readline=%s version=%s' ",
    "% ('readline' in sys.modules, sys.version.split()[0]))"
);
/// What answers [`PROBE`] (its echo holds `readline=%s`, which does not match).
const PROBE_ANSWER: &str = r"readline=\w+ version=\S+\s";

/// The REPL's answer to [`PROBE`] in `text`: the Python version, if readline is loaded.
fn repl_version(text: &str) -> Result<String> {
    let (_, rest) = text.rsplit_once("readline=").context("no answer to the probe")?;
    match rest.split_whitespace().collect::<Vec<_>>()[..] {
        ["True", version, ..] => {
            Ok(version.strip_prefix("version=").context("no version")?.to_owned())
        }
        _ => bail!("the REPL has no line editor (readline) loaded: {text:?}"),
    }
}

/// Runs this part alone: its own data folder, project and token.
pub fn run_alone(bin: &Path, work: &Path) -> Result<String> {
    let (data, projects, token) = setup(bin, work, 1)?;
    let ctx = Ctx { bin, data: &data, token: &token };
    run(&ctx, &projects[0].0, true)
}

/// Measures everything on one fresh server (two job starts), then the peer, and returns the
/// markdown part (under [`HEADING`]); `alone`: it says it was measured by itself.
pub fn run(ctx: &Ctx, project: &str, alone: bool) -> Result<String> {
    let load_before = loadavg();
    let (serve, _) = start(ctx.bin, ctx.data)?;
    let repl = Repl::start(ctx, serve.port, project)?;
    let version = repl.version()?;
    let mcp = repl.keystrokes()?;
    let round_trip = repl.plain_reads()?;
    let held = repl.held_letters()?;
    let program = repl.program.clone();
    drop(repl);
    let wakes = wakes(ctx, serve.port, project)?;
    drop(serve);
    let mut pty = Pty::open(&program)?;
    let peer_version = pty.version()?;
    if peer_version != version {
        bail!("the pty runs Python {peer_version}, the job {version}");
    }
    let direct = pty.keystrokes()?;
    let figures = Figures { mcp, round_trip, held, direct, wakes, version };
    Ok(markdown(&figures, &load_before, alone))
}

/// One keystroke through MCP: the whole, and its write call apart.
struct Keystroke {
    total: Duration,
    write: Duration,
    /// `job_logs` calls it took until the echo was there.
    reads: usize,
}

/// The REPL job, through the server.
struct Repl<'a> {
    port: u16,
    token: &'a str,
    job: String,
    /// The program as the engine resolved it (the peer runs the same file).
    program: String,
}

impl<'a> Repl<'a> {
    /// Starts the REPL (the user approves, through the CLI) and waits for its prompt.
    fn start(ctx: &'a Ctx, port: u16, project: &str) -> Result<Repl<'a>> {
        let args = json!({
            "project": project, "program": REPL, "args": REPL_ARGS, "interactive": "terminal"
        });
        let started = ctx.call_approved(port, "start_job", args, &[])?;
        let job = started["job_id"].as_str().context("job id")?.to_owned();
        let command = started["command"].as_str().context("command")?;
        let program = command.split_whitespace().next().context("program")?;
        let program = program.trim_matches('\'').to_owned();
        let repl = Repl { port, token: ctx.token, job, program };
        repl.prompt(0)?;
        Ok(repl)
    }

    fn call(&self, tool: &str, args: Value) -> Result<Value> {
        call(self.port, self.token, tool, &args)
    }

    /// Waits for the prompt in the output past `cursor`.
    fn prompt(&self, cursor: u64) -> Result<()> {
        let page = self.call(
            "job_logs",
            json!({"job_id": self.job, "cursor": cursor, "pattern": ">>> $",
                   "wait_seconds": PATIENCE.as_secs()}),
        )?;
        if page["waited"] != "pattern" {
            bail!("the REPL did not prompt: {page}");
        }
        Ok(())
    }

    /// The REPL's Python version (readline loaded, else an error).
    fn version(&self) -> Result<String> {
        let args = json!({"job_id": self.job, "text": PROBE, "keys": ["enter"]});
        let sent = self.call("write_job_input", args)?;
        let cursor = sent["next_cursor"].as_u64().context("next_cursor")?;
        let page = self.call(
            "job_logs",
            json!({"job_id": self.job, "cursor": cursor, "pattern": PROBE_ANSWER,
                   "wait_seconds": PATIENCE.as_secs()}),
        )?;
        let version = repl_version(page["text"].as_str().context("text")?)?;
        self.prompt(cursor)?;
        Ok(version)
    }

    /// Enter, then the next prompt (an empty line: the REPL just prompts again).
    fn enter(&self) -> Result<()> {
        let sent = self.call("write_job_input", json!({"job_id": self.job, "keys": ["enter"]}))?;
        self.prompt(sent["next_cursor"].as_u64().context("next_cursor")?)
    }

    /// One character typed; read until its echo is there.
    fn keystroke(&self, key: &str) -> Result<Keystroke> {
        let t0 = Instant::now();
        let sent = self.call("write_job_input", json!({"job_id": self.job, "text": key}))?;
        let write = t0.elapsed();
        let mut cursor = sent["next_cursor"].as_u64().context("next_cursor")?;
        let mut reads = 0;
        loop {
            reads += 1;
            let page = self.call(
                "job_logs",
                json!({"job_id": self.job, "cursor": cursor, "wait": "output",
                       "wait_seconds": PATIENCE.as_secs()}),
            )?;
            if page["text"].as_str().is_some_and(|t| t.contains(key)) {
                return Ok(Keystroke { total: t0.elapsed(), write, reads });
            }
            if page["waited"] != "output" {
                bail!("no echo of {key:?}: {page}");
            }
            cursor = page["next_cursor"].as_u64().context("next_cursor")?;
        }
    }

    /// [`WARM_UP`] then [`KEYSTROKES`] keystrokes, [`LINE`] to a line.
    fn keystrokes(&self) -> Result<Vec<Keystroke>> {
        let mut out = Vec::new();
        for i in 0..WARM_UP + KEYSTROKES {
            if i > 0 && i % LINE == 0 {
                self.enter()?;
            }
            let k = self.keystroke(KEY)?;
            if i >= WARM_UP {
                out.push(k);
            }
        }
        self.enter()?;
        Ok(out)
    }

    /// The round trip of a `job_logs` call that does not wait (one page from the end): what a
    /// call costs the client, the server and the loopback without any job in the way.
    fn plain_reads(&self) -> Result<Vec<Duration>> {
        let page = self.call("job_logs", json!({"job_id": self.job, "cursor": 0}))?;
        let end = page["next_cursor"].as_u64().context("next_cursor")?;
        let args = json!({"job_id": self.job, "cursor": end});
        let mut out = Vec::new();
        for _ in 0..KEYSTROKES {
            let t0 = Instant::now();
            self.call("job_logs", args.clone())?;
            out.push(t0.elapsed());
        }
        Ok(out)
    }

    /// Letters typed one at a time, each read with a short `wait: output`; returns how many of
    /// those waits ended at their deadline with no echo. Then a space, whose echo must bring
    /// the held letters along.
    fn held_letters(&self) -> Result<usize> {
        // In a comment, so that Enter then runs nothing.
        self.keystroke("# ")?;
        let mut held = 0;
        let mut first = None;
        for _ in 0..HELD_PROBES {
            let sent = self.call("write_job_input", json!({"job_id": self.job, "text": KEY}))?;
            let cursor = sent["next_cursor"].as_u64().context("next_cursor")?;
            first.get_or_insert(cursor);
            let page = self.call(
                "job_logs",
                json!({"job_id": self.job, "cursor": cursor, "wait": "output",
                       "wait_seconds": HELD_WAIT_SECONDS}),
            )?;
            if page["waited"] == "deadline" && page["text"] == "" {
                held += 1;
            }
        }
        self.keystroke(KEY)?;
        let cursor = first.context("no letter typed")?;
        let page = self.call("job_logs", json!({"job_id": self.job, "cursor": cursor}))?;
        if !page["text"].as_str().is_some_and(|t| t.contains(&KEY.repeat(HELD_PROBES))) {
            bail!("the letters' echo did not come with the space's: {page}");
        }
        self.enter()?;
        Ok(held)
    }
}

impl Drop for Repl<'_> {
    fn drop(&mut self) {
        let _ = self.call("cancel_job", json!({"job_id": self.job}));
    }
}

/// The same program on a pty of the bench's own, with the job's terminal size and the
/// environment's terminal settings (`TERM=dumb`, `NO_COLOR`).
struct Pty {
    master: OwnedFd,
    child: Child,
    /// Everything read from the master so far.
    seen: Vec<u8>,
    _home: TempHome,
}

impl Pty {
    fn open(program: &str) -> Result<Pty> {
        use rustix::pty::{OpenptFlags, grantpt, ioctl_tiocgptpeer, openpt, unlockpt};
        let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
        let master = openpt(flags)?;
        grantpt(&master)?;
        unlockpt(&master)?;
        let slave = ioctl_tiocgptpeer(&master, flags)?;
        let size = rustix::termios::Winsize { ws_row: 40, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0 };
        rustix::termios::tcsetwinsize(&slave, size)?;
        let home = TempHome::new()?;
        // `setsid --ctty`: a session of its own with the pty as its controlling terminal, as
        // the job has.
        let child = Command::new("setsid")
            .arg("--ctty")
            .arg(program)
            .args(REPL_ARGS)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .env("LANG", "C.UTF-8")
            .env("HOME", &home.0)
            .stdin(Stdio::from(slave.try_clone()?))
            .stdout(Stdio::from(slave.try_clone()?))
            .stderr(Stdio::from(slave))
            .spawn()?;
        let mut pty = Pty { master, child, seen: Vec::new(), _home: home };
        pty.read_until(0, b">>> ")?;
        Ok(pty)
    }

    /// Reads until the output past `from` holds `want`.
    fn read_until(&mut self, from: usize, want: &[u8]) -> Result<()> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let deadline = Instant::now() + PATIENCE;
        let mut buf = [0u8; 4096];
        while !self.seen[from..].windows(want.len()).any(|w| w == want) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!("the pty never showed {:?}", String::from_utf8_lossy(want));
            }
            let timeout = Timespec::try_from(left)?;
            let mut fds = [PollFd::new(&self.master, PollFlags::IN)];
            if poll(&mut fds, Some(&timeout))? == 0 {
                continue;
            }
            let n = rustix::io::read(&self.master, &mut buf[..])?;
            if n == 0 {
                bail!("the pty's program ended");
            }
            self.seen.extend_from_slice(&buf[..n]);
        }
        Ok(())
    }

    fn write(&self, bytes: &[u8]) -> Result<()> {
        if rustix::io::write(&self.master, bytes)? != bytes.len() {
            bail!("short write to the pty");
        }
        Ok(())
    }

    /// As [`Repl::version`].
    fn version(&mut self) -> Result<String> {
        let from = self.seen.len();
        self.write(format!("{PROBE}\r").as_bytes())?;
        self.read_until(from, b"\n>>> ")?;
        repl_version(&String::from_utf8_lossy(&self.seen[from..]))
    }

    fn keystroke(&mut self) -> Result<Duration> {
        let from = self.seen.len();
        let t0 = Instant::now();
        self.write(KEY.as_bytes())?;
        self.read_until(from, KEY.as_bytes())?;
        Ok(t0.elapsed())
    }

    /// As [`Repl::keystrokes`]: the same counts, lines and Enter.
    fn keystrokes(mut self) -> Result<Vec<Duration>> {
        let mut out = Vec::new();
        for i in 0..WARM_UP + KEYSTROKES {
            if i > 0 && i % LINE == 0 {
                let from = self.seen.len();
                self.write(b"\r")?;
                self.read_until(from, b">>> ")?;
            }
            let t = self.keystroke()?;
            if i >= WARM_UP {
                out.push(t);
            }
        }
        Ok(out)
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A HOME for the peer (its REPL keeps a history file there), removed after.
struct TempHome(std::path::PathBuf);

impl TempHome {
    fn new() -> Result<TempHome> {
        let dir = std::env::temp_dir().join(format!("sluice-bench-pty-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(TempHome(dir))
    }
}

impl Drop for TempHome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The timestamp job: first the clock it reads (its time namespace and that namespace's
/// offsets), then [`TICKS`] lines of `CLOCK_MONOTONIC` nanoseconds, each one `write`.
fn tick_script() -> String {
    format!(
        "import os, time\n\
         offsets = ' '.join(open('/proc/self/timens_offsets').read().split())\n\
         os.write(1, ('clock %s %s\\n' % (os.readlink('/proc/self/ns/time'), offsets)).encode())\n\
         for _ in range({TICKS}):\n    \
             time.sleep({secs})\n    \
             os.write(1, b'%d\\n' % time.monotonic_ns())\n",
        secs = TICK_MS as f64 / 1e3
    )
}

/// Starts the timestamp job, checks it reads the bench's clock, then waits on its output in a
/// loop: per line, its timestamp to the return of the wait that brought it.
fn wakes(ctx: &Ctx, port: u16, project: &str) -> Result<Vec<Duration>> {
    let args = json!({"project": project, "program": REPL, "args": ["-c", tick_script()]});
    let started = ctx.call_approving(port, "start_job", args)?;
    let job = started["job_id"].as_str().context("job id")?.to_owned();
    let (mut cursor, mut pending, mut out) = (0u64, String::new(), Vec::new());
    while out.len() < TICKS {
        let page = call(
            port,
            ctx.token,
            "job_logs",
            &json!({"job_id": job, "cursor": cursor, "wait": "output",
                    "wait_seconds": PATIENCE.as_secs()}),
        )?;
        let now = monotonic_ns()?;
        if page["waited"] != "output" {
            bail!("the timestamp job stopped writing: {page}");
        }
        pending.push_str(page["text"].as_str().context("text")?);
        cursor = page["next_cursor"].as_u64().context("next_cursor")?;
        while let Some((line, rest)) = pending.split_once('\n') {
            match line.strip_prefix("clock ") {
                Some(clock) => same_clock(clock)?,
                None => out.push(Duration::from_nanos(now.saturating_sub(line.parse()?))),
            }
            pending = rest.to_owned();
        }
    }
    Ok(out)
}

/// Whether the job's clock is the bench's: the same time namespace, with no offsets.
fn same_clock(job: &str) -> Result<()> {
    let ours = std::fs::read_link("/proc/self/ns/time")?;
    let (ns, offsets) = job.split_once(' ').context("the job's clock line")?;
    // `monotonic 0 0 boottime 0 0`: seconds and nanoseconds per clock.
    let offsets: Vec<i64> = offsets.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    if Path::new(ns) != ours || offsets.len() != 4 || offsets.iter().any(|&o| o != 0) {
        bail!("the job reads another clock ({job}; the bench's namespace is {ours:?})");
    }
    Ok(())
}

fn monotonic_ns() -> Result<u64> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    Ok(u64::try_from(t.tv_sec)? * 1_000_000_000 + u64::try_from(t.tv_nsec)?)
}

struct Figures {
    mcp: Vec<Keystroke>,
    round_trip: Vec<Duration>,
    held: usize,
    direct: Vec<Duration>,
    wakes: Vec<Duration>,
    /// The Python both REPLs run.
    version: String,
}

/// Milliseconds to the microsecond: the pty's echo takes tens of them.
fn ms3(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn markdown(f: &Figures, load_before: &str, alone: bool) -> String {
    let row = |what: &str, v: Vec<Duration>| {
        let n = v.len();
        let max = v.iter().copied().max().unwrap_or_default();
        let (med, p95) = median_p95(v);
        format!("| {what} | {} | {} | {} | {n} |\n", ms3(med), ms3(p95), ms3(max))
    };
    let mut table = String::from("| measure | median (ms) | p95 (ms) | max (ms) | n |\n");
    table.push_str("|---|---:|---:|---:|---:|\n");
    table += &row(
        "keystroke → echo through MCP (`write_job_input`, then `job_logs` waiting)",
        f.mcp.iter().map(|k| k.total).collect(),
    );
    table += &row("keystroke → echo on a pty the bench opened", f.direct.clone());
    table += &row("— of which the `write_job_input` call", f.mcp.iter().map(|k| k.write).collect());
    table += &row(
        "— of which the waiting `job_logs` call(s)",
        f.mcp.iter().map(|k| k.total - k.write).collect(),
    );
    table += &row("a `job_logs` call that does not wait (round trip)", f.round_trip.clone());
    table += &row("a line written → the `job_logs` wait on it returned", f.wakes.clone());
    let extra_reads = f.mcp.iter().filter(|k| k.reads > 1).count();
    format!(
        "{HEADING}\n\n\
         `{REPL} -i -q` (Python {version}, as the job's trusted PATH finds it) on a terminal of \
         its own in the sandbox (`start_job` with `interactive: terminal`), beside the same \
         file on a pty the bench opens itself (the job's terminal size, `TERM=dumb`, a session \
         of its own). A Python REPL rather than `cat`: its line editor (readline, loaded on \
         both sides, checked) echoes each key itself, as shells, `node` and debuggers do, so a \
         keystroke goes through the program; `cat` on a terminal is echoed by the kernel \
         without `cat` running at all. Per keystroke, one `write_job_input` of one character, \
         then `job_logs` with `wait: output` from the write's `next_cursor` until the echo is \
         there ({extra_reads} of {n} keystrokes took more than one read), timed from just \
         before the write to the return of that read; on the pty, one byte written to the \
         master and its echo read back. {warm} keystrokes of warm-up, then {n} on each side, \
         {line} to a line (Enter and the next prompt untimed). Every call is a new loopback \
         HTTP connection. Issue 30's goals: a median keystroke-to-echo of 20 ms at most, and a \
         wait that returns within 50 ms of new output. {how}Load average (1 min) when this \
         part started and ended: {load_before} and {load_after}.\n\n{held}\n\n\
         The wait: a job (`{REPL} -c`, not interactive) writes a line every {tick} ms, each \
         its own `CLOCK_MONOTONIC` time taken just before the `write` (the job has no time \
         namespace of its own, checked: its `/proc/self/ns/time` is the bench's and its \
         offsets are zero); the bench waits in `job_logs` (`wait: output`) from the last \
         cursor, again and again, and reads the same clock as each call returns.\n\n{table}\n",
        version = f.version,
        n = f.mcp.len(),
        warm = WARM_UP,
        line = LINE,
        load_after = loadavg(),
        held = held_text(f.held),
        how = if alone {
            "Measured alone with `cargo xtask bench exec keys`; the rest of this section comes \
             from the run of `cargo xtask bench` (or `bench exec`) before it. "
        } else {
            ""
        },
        tick = TICK_MS,
    )
}

/// What the letters typed in [`Repl::held_letters`] showed.
fn held_text(held: usize) -> String {
    let shown = HELD_PROBES - held;
    format!(
        "The keystroke is a letter, `{KEY}` (one no secret format begins with: the first letter \
         of `xoxb-` or `sk-` is held until the next key shows it is not one). The output \
         pipeline holds a trailing run of \
         non-whitespace back while it could be the start of a secret, and releases it when the \
         output pauses (2 ms without output) if it cannot; so the echo of a letter comes about \
         2 ms after the program wrote it. Of {HELD_PROBES} letters typed one at a time, each \
         read with a {HELD_WAIT_SECONDS} s `wait: output`, {shown} showed and {held} ended at \
         the deadline with nothing to show."
    )
}
