//! `cargo xtask bench http [--before <sluice binary>]`: tool calls over HTTP under concurrent
//! load, Sluice beside a bare rmcp server (`crates/sluice-mcp/examples/bare_rmcp.rs`, built here
//! from the crate registry's rmcp, the version Sluice uses) in the same run.
//!
//! The load is `wrk` (Debian's package), every connection keep-alive, each request a stateless
//! MCP 2026-07-28 `tools/call` of `read_file` on a 4 KiB file, with the standard headers and the
//! request `_meta` that protocol requires. The servers take turns, a round each, 8 and then 32
//! connections; each figure is the median of its rounds. CPU per call is the server process's
//! own (from `/proc`), so wrk's share of the 2 cores is excluded. `--before` adds another Sluice
//! binary (an earlier build) to the same turns.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::bench_util::{Serve, full_token, loadavg, output, sluice, start_with};
use crate::deps;

pub(crate) const HEADING: &str = "## HTTP under load: tools/call beside a bare rmcp server";

const ROUNDS: usize = 3;
const SECONDS: u32 = 10;
const CONNECTIONS: [u32; 2] = [8, 32];

/// One server under test: what the table calls it, the process wrk loads, and the token and
/// wrk script it is called with.
struct Target {
    name: String,
    pid: u32,
    port: u16,
    token: String,
    script: std::path::PathBuf,
}

/// One wrk round against one target.
#[derive(Clone, Copy)]
struct Round {
    calls_per_sec: f64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_us_per_call: f64,
}

/// Measures `bin` (built with `profile`), the bare server built here with the same profile, and
/// `before` when given.
pub(crate) fn run(bin: &Path, profile: &str, before: Option<&Path>, work: &Path) -> Result<String> {
    if !deps::have("wrk") {
        deps::apt(&["wrk"])?;
    }
    crate::sh(Command::new("cargo").args([
        "build",
        "--profile",
        profile,
        "--locked",
        "-p",
        "sluice-mcp",
        "--example",
        "bare_rmcp",
    ]))?;
    let target_dir = bin.parent().context("binary folder")?;
    let bare = target_dir.join("examples/bare_rmcp");

    let project = work.join("http-project");
    std::fs::create_dir_all(&project)?;
    let line = "0123456789abcdef".repeat(4) + "\n";
    let mut text = line.repeat(4096 / line.len());
    text.push_str(&"x".repeat(4096 - text.len()));
    std::fs::write(project.join("file4k.txt"), &text)?;
    // One engine serves a data folder: each Sluice gets its own, with the same project.
    let serve = |bin: &Path, data: &str| -> Result<(Serve, String)> {
        let data = work.join(data);
        let token = full_token(bin, &data, "http")?;
        // Limits raised so that the load measures the path, not the (rightly) throttled token.
        Ok((start_with(bin, &data, &["--max-in-flight", "1024"])?.0, token))
    };
    // Start and idle memory are the Engine section's (`cargo xtask bench engine --before`).
    let builds = std::iter::once((bin, "http-data")).chain(before.map(|b| (b, "http-data-before")));
    for (bin, data) in builds {
        output(
            sluice(bin, &work.join(data))
                .args(["project", "add"])
                .arg(&project)
                .args(["--name", "bench"]),
        )?;
    }
    let (now, token) = serve(bin, "http-data")?;
    let earlier = before.map(|before| serve(before, "http-data-before")).transpose()?;
    let peer = BarePeer::start(&bare, &project, &token)?;
    let target = |name: &str, pid: u32, port: u16, token: &str| -> Result<Target> {
        let script = work.join(format!("call-{port}.lua"));
        std::fs::write(&script, lua(token))?;
        Ok(Target { name: name.into(), pid, port, token: token.into(), script })
    };
    let mut targets = vec![target("sluice", now.child.id(), now.port, &token)?];
    if let Some((earlier, token)) = &earlier {
        targets.push(target("sluice, before", earlier.child.id(), earlier.port, token)?);
    }
    targets.push(target("bare rmcp", peer.child.id(), peer.port, &token)?);
    for t in &targets {
        check_answer(t, &text)?;
    }

    let load_start = loadavg();
    let mut rows = Vec::new();
    for connections in CONNECTIONS {
        let mut rounds: Vec<Vec<Round>> = vec![Vec::new(); targets.len()];
        for _ in 0..ROUNDS {
            for (i, t) in targets.iter().enumerate() {
                rounds[i].push(wrk(t, connections)?);
            }
        }
        for (t, r) in targets.iter().zip(rounds) {
            rows.push((connections, t.name.clone(), median(r)));
        }
    }
    let load_end = loadavg();
    drop((now, earlier, peer));

    let before_note = match before {
        Some(_) => {
            " \"sluice, before\" is the binary given with `--before` (a build from before \
                    the change being measured), in the same turns."
        }
        None => "",
    };
    let mut md = format!("{HEADING}\n\n");
    md.push_str(&format!(
        "`cargo xtask bench http` (also part of `cargo xtask bench`), `{profile}` builds. `wrk -t2 \
         -c<connections> -d{SECONDS}s`, keep-alive connections, each request a stateless MCP \
         2026-07-28 `tools/call` of `read_file` (4 KiB file) with its standard headers and \
         request `_meta`. The servers took turns for {ROUNDS} rounds; each figure is the median \
         of its rounds. The bare server is rmcp's streamable HTTP service with the same tool and \
         only a bearer check in front (`crates/sluice-mcp/examples/bare_rmcp.rs`): its \
         `read_file` answers Sluice's structured result (text, line range and count, size, \
         modification time, BLAKE3 hash) through rmcp's `Json`, so both answers are about 9 KiB; \
         Sluice answers after its own checks (token, scope, limits, pause, containment, the \
         shield, redaction, the audit record). CPU is the server process's own per call.{before_note} Load average (1 min) at the start and \
         end: {load_start} and {load_end}.\n\n"
    ));
    md.push_str(
        "| connections | server | calls/s | beside bare rmcp | p50 (ms) | p99 (ms) | CPU per call (µs) |\n\
         |---:|---|---:|---:|---:|---:|---:|\n",
    );
    for (connections, name, r) in &rows {
        let bare = rows
            .iter()
            .find(|(c, n, _)| c == connections && n == "bare rmcp")
            .map(|(_, _, b)| b.calls_per_sec)
            .unwrap_or(f64::NAN);
        md.push_str(&format!(
            "| {connections} | {name} | {:.0} | {:.2}× | {:.2} | {:.2} | {:.0} |\n",
            r.calls_per_sec,
            r.calls_per_sec / bare,
            r.p50_ms,
            r.p99_ms,
            r.cpu_us_per_call
        ));
    }
    md.push_str(
        "\nStart to ready and idle memory, beside an earlier build: the Engine section \
         (`cargo xtask bench engine --before <sluice>`).\n",
    );
    md.push('\n');
    Ok(md)
}

/// The bare rmcp server, stopped when dropped.
struct BarePeer {
    child: Child,
    port: u16,
}

impl BarePeer {
    fn start(bin: &Path, folder: &Path, token: &str) -> Result<BarePeer> {
        use std::io::BufRead;
        let port = crate::bench_util::free_port()?;
        let mut child = Command::new(bin)
            .arg(folder)
            .arg(port.to_string())
            .arg(token)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
        if line.trim() != "ready" {
            let _ = child.kill();
            bail!("the bare rmcp server did not start: {line}");
        }
        Ok(BarePeer { child, port })
    }
}

impl Drop for BarePeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn body() -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "read_file",
            "arguments": {"project": "bench", "path": "file4k.txt"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "wrk", "version": "4"},
            },
        },
    })
    .to_string()
}

fn headers(token: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".into()),
        ("Accept", "application/json, text/event-stream".into()),
        ("Authorization", format!("Bearer {token}")),
        ("MCP-Protocol-Version", "2026-07-28".into()),
        ("Mcp-Method", "tools/call".into()),
        ("Mcp-Name", "read_file".into()),
    ]
}

fn lua(token: &str) -> String {
    let mut s = format!("wrk.method = \"POST\"\nwrk.body = {:?}\n", body());
    for (name, value) in headers(token) {
        s.push_str(&format!("wrk.headers[\"{name}\"] = {value:?}\n"));
    }
    s
}

/// Both servers must answer the bench's request with the file's text before they are timed.
fn check_answer(t: &Target, text: &str) -> Result<()> {
    use std::io::{Read, Write};
    let body = body();
    let mut req = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", t.port);
    for (name, value) in headers(&t.token) {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()));
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", t.port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(req.as_bytes())?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw)?;
    let (head, answer) = raw.split_once("\r\n\r\n").context("no HTTP answer")?;
    let answer: serde_json::Value = serde_json::from_str(answer)
        .with_context(|| format!("{}: not JSON: {head}\n{answer}", t.name))?;
    let content = &answer["result"]["content"][0]["text"];
    let read = content.as_str().map(|c| {
        // Sluice's text block is its structured result, serialized.
        serde_json::from_str::<serde_json::Value>(c)
            .ok()
            .and_then(|v| v["content"].as_str().map(str::to_owned))
            .unwrap_or_else(|| c.to_owned())
    });
    if !head.starts_with("HTTP/1.1 200") || read.as_deref() != Some(text) {
        bail!("{} did not answer the bench's call with the file: {head}\n{answer}", t.name);
    }
    Ok(())
}

fn wrk(t: &Target, connections: u32) -> Result<Round> {
    let cpu_before = cpu_ticks(t.pid)?;
    let out = output(
        Command::new("wrk")
            .args(["-t2", &format!("-c{connections}"), &format!("-d{SECONDS}s"), "--latency"])
            .arg("-s")
            .arg(&t.script)
            .arg(format!("http://127.0.0.1:{}/mcp", t.port)),
    )?;
    let cpu_after = cpu_ticks(t.pid)?;
    if let Some(line) = out.lines().find(|l| l.contains("Non-2xx") || l.contains("Socket errors")) {
        bail!("{}: wrk saw failed requests: {line}\n{out}", t.name);
    }
    let calls: f64 = out
        .lines()
        .find_map(|l| l.trim().split_once(" requests in ")?.0.parse().ok())
        .context("wrk: no request count")?;
    let calls_per_sec = out
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:")?.trim().parse().ok())
        .context("wrk: no rate")?;
    let percentile = |p: &str| -> Result<f64> {
        out.lines()
            .find_map(|l| {
                let mut words = l.split_whitespace();
                (words.next()? == p).then(|| words.next().and_then(duration_ms))?
            })
            .with_context(|| format!("wrk: no {p} latency"))
    };
    let ticks = (cpu_after - cpu_before) as f64;
    let hz = 100.0; // USER_HZ on Linux
    Ok(Round {
        calls_per_sec,
        p50_ms: percentile("50%")?,
        p99_ms: percentile("99%")?,
        cpu_us_per_call: ticks / hz * 1e6 / calls,
    })
}

/// A wrk duration (`812.00us`, `1.25ms`, `2.01s`) in milliseconds.
fn duration_ms(s: &str) -> Option<f64> {
    let split = s.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = s.split_at(split);
    let n: f64 = n.parse().ok()?;
    Some(match unit {
        "us" => n / 1e3,
        "ms" => n,
        "s" => n * 1e3,
        "m" => n * 60e3,
        _ => return None,
    })
}

/// User plus system CPU of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name may hold spaces; the fields after it are fixed.
    let rest = &stat[stat.rfind(')').context("stat")? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Ok(fields[11].parse::<u64>()? + fields[12].parse::<u64>()?)
}

fn median(mut rounds: Vec<Round>) -> Round {
    let mid = rounds.len() / 2;
    let pick = |rounds: &mut Vec<Round>, f: fn(&Round) -> f64| {
        rounds.sort_by(|a, b| f(a).total_cmp(&f(b)));
        f(&rounds[mid])
    };
    Round {
        calls_per_sec: pick(&mut rounds, |r| r.calls_per_sec),
        p50_ms: pick(&mut rounds, |r| r.p50_ms),
        p99_ms: pick(&mut rounds, |r| r.p99_ms),
        cpu_us_per_call: pick(&mut rounds, |r| r.cpu_us_per_call),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrk_durations_read_in_milliseconds() {
        assert_eq!(duration_ms("812.00us"), Some(0.812));
        assert_eq!(duration_ms("1.25ms"), Some(1.25));
        assert_eq!(duration_ms("2.5s"), Some(2500.0));
        assert_eq!(duration_ms("12"), None);
        assert_eq!(duration_ms("3.0h"), None);
    }
}
