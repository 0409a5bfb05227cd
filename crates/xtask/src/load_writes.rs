//! `cargo xtask load writes [--clients N] [--writes N] [--before <sluice>]`, also the first phase
//! of `cargo xtask load`: N clients (32), each with its own token, write a file of their own in
//! one project as fast as they can, each write waiting for the one before (`write_file` with the
//! previous answer's hash as `expected_hash`). Reports writes per second and p50/p99 latency.
//!
//! Beside it, in the same run: `@modelcontextprotocol/server-filesystem`'s `write_file` through
//! its stdio transport, the same clients sharing one server process (requests in flight
//! together, matched to answers by id). It neither checks an expected hash, keeps a backup nor
//! syncs anything to disk, so it is the floor of what a write costs here, not a like-for-like
//! peer. `--before` runs an older `sluice` in the same turn, with its own data folder.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::load::{Engine, error_code, percentile, read_write_project};
use crate::mcp_http::Client;

/// Who is measured, and how to reach it.
pub(crate) enum Writer {
    Sluice { bin: PathBuf, label: &'static str },
    Peer { node: PathBuf, script: PathBuf },
}

/// One writer's figures.
pub(crate) struct Figures {
    pub label: String,
    pub writes: usize,
    pub elapsed: Duration,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl Figures {
    pub fn rate(&self) -> f64 {
        self.writes as f64 / self.elapsed.as_secs_f64()
    }
}

/// Runs every writer in turn, each into a fresh project under `work`; fails on any error.
pub(crate) fn run(
    writers: &[Writer],
    work: &Path,
    clients: usize,
    writes: usize,
) -> Result<Vec<Figures>> {
    let mut out = Vec::new();
    for (idx, writer) in writers.iter().enumerate() {
        let dir = work.join(format!("writes-{idx}"));
        let project = dir.join("project");
        std::fs::create_dir_all(project.join("out"))?;
        let figures = match writer {
            Writer::Sluice { bin, label } => sluice(bin, label, &dir, clients, writes)?,
            Writer::Peer { node, script } => peer(node, script, &project, clients, writes)?,
        };
        out.push(figures);
    }
    Ok(out)
}

/// The Markdown table of [`run`]'s figures, the first line the base of the ratios.
pub(crate) fn table(figures: &[Figures]) -> String {
    let mut md = String::from(
        "| server | writes | writes/s | p50 (ms) | p99 (ms) |\n|---|---:|---:|---:|---:|\n",
    );
    for f in figures {
        md.push_str(&format!(
            "| {} | {} | {:.0} | {:.2} | {:.2} |\n",
            f.label,
            f.writes,
            f.rate(),
            f.p50_ms,
            f.p99_ms
        ));
    }
    md
}

fn sluice(bin: &Path, label: &str, dir: &Path, clients: usize, writes: usize) -> Result<Figures> {
    let data = dir.join("data");
    let tokens = read_write_project(bin, &data, &dir.join("project"), "writes", clients)?;
    let engine = Engine::start(
        bin,
        &data,
        &["--rate-limit", "1000000", "--burst", "1000000", "--max-in-flight", "1024"],
    )?;
    let port = engine.port;
    let timed = drive(clients, writes, move |idx| {
        let mut client = Client::new(port, &tokens[idx]);
        let path = format!("out/c{idx}.txt");
        let mut hash: Option<String> = None;
        move |i: usize| -> Result<()> {
            let args = json!({"project": "writes", "path": path, "expected_hash": hash,
                              "content": content(idx, i)});
            let r = client.call("write_file", args)?;
            if let Some(code) = error_code(&r) {
                bail!("write_file failed: {code}");
            }
            hash = r.body["result"]["structuredContent"]["files"][0]["hash_after"]
                .as_str()
                .map(str::to_owned);
            Ok(())
        }
    })?;
    drop(engine);
    Ok(figures(label.to_owned(), timed))
}

/// About a kibibyte of text, different for every write.
fn content(client: usize, write: usize) -> String {
    format!("client {client} write {write}\n{}", "0123456789abcdef".repeat(64))
}

/// `clients` threads, each making `writes` calls with the function `make(idx)` gives it, all
/// starting together; returns the wall time and every call's latency in µs.
fn drive<M, F>(clients: usize, writes: usize, make: M) -> Result<(Duration, Vec<u64>)>
where
    M: Fn(usize) -> F + Send + Sync + 'static,
    F: FnMut(usize) -> Result<()>,
{
    let make = Arc::new(make);
    let start = Arc::new(Barrier::new(clients + 1));
    let threads: Vec<_> = (0..clients)
        .map(|idx| {
            let (make, start) = (make.clone(), start.clone());
            std::thread::spawn(move || -> Result<Vec<u64>> {
                let mut call = make(idx);
                let mut micros = Vec::with_capacity(writes);
                start.wait();
                for i in 0..writes {
                    let t = Instant::now();
                    call(i)?;
                    micros.push(t.elapsed().as_micros() as u64);
                }
                Ok(micros)
            })
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    let mut all = Vec::new();
    for t in threads {
        all.extend(t.join().map_err(|_| anyhow::anyhow!("a client thread panicked"))??);
    }
    Ok((t0.elapsed(), all))
}

fn figures(label: String, (elapsed, mut micros): (Duration, Vec<u64>)) -> Figures {
    micros.sort_unstable();
    Figures {
        label,
        writes: micros.len(),
        elapsed,
        p50_ms: percentile(&micros, 0.5),
        p99_ms: percentile(&micros, 0.99),
    }
}

/// server-filesystem over stdio, shared by all clients: requests carry ids, one thread reads
/// the answers and hands each to the client waiting for it.
struct StdioPeer {
    stdin: Mutex<ChildStdin>,
    waiting: Arc<Mutex<HashMap<u64, Sender<Value>>>>,
    next: AtomicU64,
}

impl StdioPeer {
    fn request(&self, method: &str, params: Value) -> Result<Value> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = channel();
        self.waiting.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.insert(id, tx);
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        {
            let mut stdin = self.stdin.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
            writeln!(stdin, "{line}")?;
            stdin.flush()?;
        }
        let answer = rx.recv_timeout(Duration::from_secs(60)).context("no answer from the peer")?;
        if answer.get("error").is_some() || answer["result"]["isError"] == true {
            bail!("the peer refused {method}: {answer}");
        }
        Ok(answer)
    }
}

fn peer(
    node: &Path,
    script: &Path,
    project: &Path,
    clients: usize,
    writes: usize,
) -> Result<Figures> {
    let mut child = Command::new(node)
        .arg(script)
        .arg(project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting server-filesystem")?;
    let stdout = child.stdout.take().context("stdout")?;
    let waiting: Arc<Mutex<HashMap<u64, Sender<Value>>>> = Arc::default();
    let routes = waiting.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
            let Some(id) = msg["id"].as_u64() else { continue };
            if let Some(tx) = routes.lock().ok().and_then(|mut w| w.remove(&id)) {
                let _ = tx.send(msg);
            }
        }
    });
    let server = Arc::new(StdioPeer {
        stdin: Mutex::new(child.stdin.take().context("stdin")?),
        waiting,
        next: AtomicU64::new(1),
    });
    let result = (|| {
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "xtask-load", "version": "1"}}),
        )?;
        {
            let mut stdin = server.stdin.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
            writeln!(
                stdin,
                "{}",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            )?;
        }
        let root = project.to_path_buf();
        let shared = server.clone();
        drive(clients, writes, move |idx| {
            let (server, path) = (shared.clone(), root.join(format!("out/c{idx}.txt")));
            move |i: usize| -> Result<()> {
                server.request(
                    "tools/call",
                    json!({"name": "write_file",
                           "arguments": {"path": path, "content": content(idx, i)}}),
                )?;
                Ok(())
            }
        })
    })();
    let _ = child.kill();
    let _ = child.wait();
    Ok(figures("server-filesystem (no fsync, no backup)".into(), result?))
}
