//! What every bench shares: the CLI against a data folder of its own, a `sluice serve` started
//! and waited for, projects and a token to call it with, a tool call over plain HTTP that
//! approves through the CLI what asks, and the statistics the tables print.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

pub(crate) struct Serve {
    pub(crate) child: Child,
    pub(crate) port: u16,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

pub(crate) fn sluice(bin: &Path, data: &Path) -> Command {
    let mut c = Command::new(bin);
    c.arg("--data-dir").arg(data).args(["--secret-store", "file"]);
    c
}

pub(crate) fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("{cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(crate) fn start(bin: &Path, data: &Path) -> Result<(Serve, Duration)> {
    start_with(bin, data, &[])
}

/// [`start`] with more `sluice serve` arguments.
pub(crate) fn start_with(bin: &Path, data: &Path, extra: &[&str]) -> Result<(Serve, Duration)> {
    let port = free_port()?;
    let t0 = Instant::now();
    let mut child = sluice(bin, data)
        .args(["serve", "--port", &port.to_string()])
        // The load generator is one client calling as fast as it can: lift the per-token limits
        // that would otherwise (rightly) throttle it.
        .args(["--rate-limit", "1000000", "--burst", "1000000"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
    let ready = t0.elapsed();
    if !line.contains("serving") {
        bail!("sluice serve did not start: {line}");
    }
    Ok((Serve { child, port }, ready))
}

/// A figure in KiB from `/proc/<pid>/status`: `VmRSS` (resident now), `VmHWM` (its peak).
pub(crate) fn proc_status_kib(pid: u32, field: &str) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status_value(&status, field).with_context(|| field.to_owned())
}

/// A numeric field of `/proc/PID/status` text: KiB for sizes, a count for `Threads`.
pub(crate) fn status_value(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

pub(crate) fn median_p95(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let p95 = v[((v.len() * 95).div_ceil(100)).saturating_sub(1).min(v.len() - 1)];
    (v[v.len() / 2], p95)
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

/// The data folder, `count` projects (`any` execution) and a full token.
pub(crate) fn setup(
    bin: &Path,
    work: &Path,
    count: usize,
) -> Result<(std::path::PathBuf, Projects, String)> {
    let data = work.join("exec-data");
    let mut projects = Vec::new();
    for i in 0..count {
        let name = format!("exec{i}");
        let dir = work.join(&name);
        std::fs::create_dir_all(&dir)?;
        output(sluice(bin, &data).args(["project", "add"]).arg(&dir).args([
            "--name",
            &name,
            "--access",
            "read-write",
            "--exec",
            "any",
        ]))?;
        projects.push((name, dir));
    }
    let token = full_token(bin, &data, "bench-exec")?;
    Ok((data, projects, token))
}

/// A new token of the `full` profile in `data`, labelled `label`: its plaintext.
pub(crate) fn full_token(bin: &Path, data: &Path, label: &str) -> Result<String> {
    token_in(&output(sluice(bin, data).args([
        "token",
        "create",
        "--label",
        label,
        "--profile",
        "full",
    ]))?)
}

/// The token in `sluice token create`'s output.
pub(crate) fn token_in(created: &str) -> Result<String> {
    Ok(created
        .split_whitespace()
        .find(|w| w.starts_with("slc_") && w.len() == 56)
        .context("token")?
        .to_owned())
}

pub(crate) type Projects = Vec<(String, std::path::PathBuf)>;

pub(crate) struct Ctx<'a> {
    pub(crate) bin: &'a Path,
    pub(crate) data: &'a Path,
    pub(crate) token: &'a str,
}

impl Ctx<'_> {
    pub(crate) fn cli(&self, args: &[&str]) -> Result<String> {
        output(sluice(self.bin, self.data).args(args))
    }

    /// Calls a tool that asks the first time: approves it with `--always` through the CLI, so
    /// the exact command runs without asking from then on.
    pub(crate) fn call_approving(&self, port: u16, tool: &str, args: Value) -> Result<Value> {
        self.call_approved(port, tool, args, &["--always"])
    }

    /// Calls a tool, approving through the CLI (`approvals approve <id>` and `extra`) whatever
    /// asks while it runs: an interactive start asks every time and takes no `--always`.
    pub(crate) fn call_approved(
        &self,
        port: u16,
        tool: &str,
        args: Value,
        extra: &[&str],
    ) -> Result<Value> {
        let token = self.token.to_owned();
        let tool = tool.to_owned();
        let call = std::thread::spawn(move || call(port, &token, &tool, &args));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !call.is_finished() {
            let list: Value = serde_json::from_str(&self.cli(&["approvals", "list", "--json"])?)?;
            for a in list.as_array().into_iter().flatten().filter(|a| a["state"] == "pending") {
                let id = a["id"].as_str().context("approval id")?;
                self.cli(&[&["approvals", "approve", id], extra].concat())?;
            }
            if Instant::now() > deadline {
                bail!("the call neither asked nor finished");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        call.join().map_err(|_| anyhow::anyhow!("the calling thread panicked"))?
    }
}

/// One JSON-RPC `tools/call` over its own HTTP/1.1 connection; the tool's structured result.
pub(crate) fn call(port: u16, token: &str, tool: &str, args: &Value) -> Result<Value> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": tool, "arguments": args }
    })
    .to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(600)))?;
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut reply = String::new();
    s.read_to_string(&mut reply)?;
    let (head, rest) = reply.split_once("\r\n\r\n").context("no HTTP head")?;
    if !head.starts_with("HTTP/1.1 200") {
        bail!("{tool}: {head}\n{rest}");
    }
    // The JSON-RPC response is the body, or the `data:` line of an event stream (possibly in a
    // chunked body, where it sits on a line of its own).
    let text = rest.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(rest);
    let v: Value = serde_json::from_str(text.trim()).with_context(|| format!("{tool}: {rest}"))?;
    let result = &v["result"];
    if result["isError"] == json!(true) {
        bail!("{tool} failed: {}", result["structuredContent"]);
    }
    Ok(result["structuredContent"].clone())
}

/// Where cargo keeps registry sources: `$CARGO_HOME/registry/src/<index>`.
pub fn cargo_registry_src() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let src = cargo_home.join("registry/src");
    std::fs::read_dir(src).ok()?.flatten().map(|e| e.path()).find(|p| p.is_dir())
}

/// SplitMix64: small, seeded, and the same everywhere (a sample drawn today is drawn again by
/// any later build, which a library generator does not promise across its versions).
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}
