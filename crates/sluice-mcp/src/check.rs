//! The connection check of `sluice connect`: a real MCP session made with a client's new
//! configuration — `initialize` and a `list_projects` call, over HTTP with the token, or
//! through the configured `sluice stdio` command exactly as the client will run it. Blocking
//! (plain sockets and a child process): call it off any async runtime's worker threads.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use sluice_engine::clients::{Entry, Transport};
use sluice_engine::clients_health::{Probe, ProbeError};

/// Checks a connection made for `entry`: through its stdio command (with no `SLUICE_TOKEN`,
/// so the token must come from the connection's stored entry), or over HTTP with `token`.
pub fn entry(entry: &Entry, port: u16, token: &str) -> Result<String, CheckError> {
    match entry.transport {
        Transport::Http => http(port, token),
        Transport::Stdio => {
            let (command, args) = entry
                .command_line()
                .ok_or_else(|| CheckError::Failed("the entry has no command".into()))?;
            stdio(Path::new(&command), &args)
        }
    }
}

/// Why a check did not pass.
#[derive(Debug)]
pub enum CheckError {
    /// Nothing listens on the port (or `sluice stdio` found no running engine).
    NotRunning,
    /// The engine refused the call: `code` is the refusal's stable `data.code`
    /// (`unauthorized` for a revoked, expired or unknown token).
    Refused { code: String, message: String },
    /// The engine answered, but not with a working MCP session for this token.
    Failed(String),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::NotRunning => f.write_str("Sluice is not running"),
            CheckError::Refused { message, .. } => {
                write!(f, "the engine refused the token: {message}")
            }
            CheckError::Failed(why) => f.write_str(why),
        }
    }
}

/// Makes the MCP call a client health check asks for (`Engine::client_health`).
pub fn probe(p: Probe<'_>) -> Result<String, ProbeError> {
    let res = match p {
        Probe::Http { port, token } => http(port, token),
        Probe::Stdio { program, args } => stdio(program, args),
    };
    res.map_err(|e| match e {
        CheckError::NotRunning => ProbeError::NotRunning,
        CheckError::Refused { code, message } => ProbeError::Refused { code, message },
        CheckError::Failed(why) => ProbeError::Failed(why),
    })
}

const PROTOCOL: &str = "2025-11-25";

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": { "name": "sluice-connect-check", "version": env!("CARGO_PKG_VERSION") } } })
}

fn list_projects() -> Value {
    json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "list_projects", "arguments": {} } })
}

/// Reads the answer of a `list_projects` call: how many projects the token sees.
fn summarize(answer: &Value) -> Result<String, CheckError> {
    if let Some(err) = answer.get("error") {
        let msg = err.get("message").and_then(Value::as_str).unwrap_or("error");
        if let Some(code) = err.pointer("/data/code").and_then(Value::as_str) {
            return Err(CheckError::Refused { code: code.to_owned(), message: msg.to_owned() });
        }
        return Err(CheckError::Failed(format!("the engine refused the token: {msg}")));
    }
    let result = answer.get("result").ok_or_else(|| CheckError::Failed("no result".into()))?;
    if result.get("isError") == Some(&Value::Bool(true)) {
        return Err(CheckError::Failed(format!("list_projects failed: {result}")));
    }
    let count =
        result.pointer("/structuredContent/projects").and_then(Value::as_array).map(Vec::len);
    Ok(match count {
        Some(n) => format!("list_projects answered, {n} project(s) visible"),
        None => "list_projects answered".to_owned(),
    })
}

/// The most of an answer read (a `list_projects` answer is a few kilobytes).
const MAX_ANSWER: u64 = 4 * 1024 * 1024;

/// One JSON-RPC message POSTed to /mcp over plain HTTP/1.1 (loopback only).
fn post(port: u16, token: &str, msg: &Value) -> Result<Value, CheckError> {
    if token.chars().any(char::is_control) {
        return Err(CheckError::Failed("the token contains control characters".into()));
    }
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|_| CheckError::NotRunning)?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let body = msg.to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n\
         MCP-Protocol-Version: {PROTOCOL}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).map_err(|e| CheckError::Failed(e.to_string()))?;
    let mut buf = Vec::new();
    let _ = (&mut s).take(MAX_ANSWER).read_to_end(&mut buf);
    let split = buf.windows(4).position(|w| w == b"\r\n\r\n");
    let (head, body) = match split {
        Some(i) => (&buf[..i], &buf[i + 4..]),
        None => (&buf[..], &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_vec()
    };
    let body = String::from_utf8_lossy(&body);
    let json_text = body.lines().find_map(|l| l.strip_prefix("data:")).unwrap_or(&body).trim();
    serde_json::from_str(json_text).map_err(|_| {
        let status = head.lines().next().unwrap_or("no answer");
        CheckError::Failed(format!("unexpected answer ({status})"))
    })
}

/// The payload of a chunked body (bytes, so a chunk may end inside a UTF-8 character).
fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&rest[..eol]);
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        let after = &rest[eol + 2..];
        if n == 0 || after.len() < n {
            break;
        }
        out.extend_from_slice(&after[..n]);
        rest = after[n..].strip_prefix(b"\r\n").unwrap_or(&after[n..]);
    }
    out
}

/// `initialize` then `list_projects` over Streamable HTTP with the token: the same calls an
/// HTTP client makes first.
pub fn http(port: u16, token: &str) -> Result<String, CheckError> {
    let init = post(port, token, &initialize())?;
    if init.get("result").is_none() {
        summarize(&init)?;
    }
    summarize(&post(port, token, &list_projects())?)
}

/// Runs the configured stdio command exactly as the client will (no SLUICE_TOKEN: the token
/// must come from the connection's stored entry) and makes the same MCP call through it.
pub fn stdio(binary: &Path, args: &[String]) -> Result<String, CheckError> {
    let mut child = Command::new(binary)
        .args(args)
        .env_remove("SLUICE_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| CheckError::Failed(format!("cannot start {}: {e}", binary.display())))?;
    let mut stdin = child.stdin.take().ok_or_else(|| CheckError::Failed("no stdin".into()))?;
    let stdout = child.stdout.take().ok_or_else(|| CheckError::Failed("no stdout".into()))?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    let notified = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let mut outcome = Err(CheckError::Failed("the stdio bridge gave no answer".into()));
    for msg in [initialize(), notified, list_projects()] {
        if writeln!(stdin, "{msg}").is_err() {
            break;
        }
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(v) if v.get("id") == Some(&json!(2)) => {
                outcome = summarize(&v).map(|s| format!("{s} through `sluice stdio`"));
                break;
            }
            Ok(v) if v.get("id") == Some(&json!(1)) && v.get("error").is_some() => {
                outcome = summarize(&v);
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    drop(stdin);
    let _ = child.kill();
    let out = child.wait_with_output();
    if let Err(CheckError::Failed(why)) = &outcome {
        let stderr =
            out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
        if stderr.contains("is not running") {
            return Err(CheckError::NotRunning);
        }
        return Err(CheckError::Failed(format!("{why}; {}", stderr.trim())));
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_joined_as_bytes() {
        // "é" split across two chunks: no panic, the character comes back whole.
        let body = b"3\r\n{\"\xc3\r\n3\r\n\xa9\":\r\n2\r\n1}\r\n0\r\n\r\n";
        let out = dechunk(body);
        assert_eq!(String::from_utf8(out).unwrap(), "{\"\u{e9}\":1}");
        assert!(dechunk(b"zz\r\nxx").is_empty());
        assert!(dechunk(b"ff\r\nshort").is_empty());
    }
}
