//! The connection check of `sluice connect`: a real MCP session made with a client's new
//! configuration — `initialize` and a `list_projects` call, over HTTP with the token, or
//! through the configured `sluice stdio` command exactly as the client will run it. Blocking
//! (a runtime of its own for the HTTP calls, a child process for stdio): call it off any async
//! runtime's threads.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Request;
use hyper::header::CONTENT_TYPE;
use serde_json::{Value, json};
use sluice_engine::clients::{Entry, Transport};
use sluice_engine::clients_health::{Probe, ProbeError};
use tokio::net::TcpStream;

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
const MAX_ANSWER: usize = 4 * 1024 * 1024;

/// How long a check waits for the engine's whole answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// One JSON-RPC message POSTed to /mcp over HTTP/1.1 on loopback, with the stdio bridge's hyper
/// client.
async fn post(port: u16, token: &str, msg: &Value) -> Result<Value, CheckError> {
    if token.chars().any(char::is_control) {
        return Err(CheckError::Failed("the token contains control characters".into()));
    }
    let stream =
        TcpStream::connect(("127.0.0.1", port)).await.map_err(|_| CheckError::NotRunning)?;
    let unexpected = |status: &str| CheckError::Failed(format!("unexpected answer ({status})"));
    let deadline = tokio::time::Instant::now() + ANSWER_TIMEOUT;
    let sent = async {
        let mut sender = crate::stdio::handshake(stream).await.ok()?;
        let req = Request::post("/mcp")
            .header("host", format!("127.0.0.1:{port}"))
            .header(CONTENT_TYPE, "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .header("mcp-protocol-version", PROTOCOL)
            .header("connection", "close")
            .body(Full::new(Bytes::from(msg.to_string())))
            .ok()?;
        sender.send_request(req).await.ok()
    };
    let Ok(Some(res)) = tokio::time::timeout_at(deadline, sent).await else {
        return Err(unexpected("no answer"));
    };
    // The status line, to name an answer that is not a JSON-RPC message.
    let status = format!("{:?} {}", res.version(), res.status());
    let sse = res
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let body = Limited::new(res.into_body(), MAX_ANSWER).collect();
    let Ok(Ok(body)) = tokio::time::timeout_at(deadline, body).await else {
        return Err(unexpected(&status));
    };
    let body = body.to_bytes();
    let answer = if sse {
        crate::stdio::sse_messages(&body).into_iter().next()
    } else {
        serde_json::from_slice(&body).ok()
    };
    answer.ok_or_else(|| unexpected(&status))
}

/// `initialize` then `list_projects` over Streamable HTTP with the token: the same calls an
/// HTTP client makes first.
pub fn http(port: u16, token: &str) -> Result<String, CheckError> {
    runtime()?.block_on(async {
        let init = post(port, token, &initialize()).await?;
        if init.get("result").is_none() {
            summarize(&init)?;
        }
        summarize(&post(port, token, &list_projects()).await?)
    })
}

/// The check's own runtime: one thread, for the few moments of a check.
fn runtime() -> Result<tokio::runtime::Runtime, CheckError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CheckError::Failed(format!("cannot start the check: {e}")))
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
    use std::io::{Read, Write};

    use super::*;

    /// The port of a one-shot server that reads one request and answers `reply` as is.
    fn answering(reply: &'static [u8]) -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            let mut buf = [0; 4096];
            // Headers, then the body its Content-Length announces.
            while let Ok(n @ 1..) = s.read(&mut buf) {
                seen.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&seen).to_ascii_lowercase();
                let Some(end) = text.find("\r\n\r\n") else { continue };
                let length = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|n| n.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if seen.len() >= end + 4 + length {
                    break;
                }
            }
            let _ = s.write_all(reply);
        });
        port
    }

    fn ask(port: u16) -> Result<Value, CheckError> {
        runtime()?.block_on(post(port, "token", &list_projects()))
    }

    #[test]
    fn chunked_answers_are_joined_as_bytes() {
        // "é" split across two chunks: no panic, the character comes back whole.
        let port = answering(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\
              3\r\n{\"\xc3\r\n3\r\n\xa9\":\r\n2\r\n1}\r\n0\r\n\r\n",
        );
        assert_eq!(ask(port).unwrap(), json!({"\u{e9}": 1}));
    }

    #[test]
    fn an_answer_that_is_not_json_rpc_is_named_by_its_status() {
        let sse = answering(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 22\r\n\r\n\
              data: {\"id\":2,\"a\":1}\n\n",
        );
        assert_eq!(ask(sse).unwrap(), json!({"id": 2, "a": 1}));
        let refused = answering(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 5\r\n\r\nnope!");
        let err = ask(refused).unwrap_err().to_string();
        assert_eq!(err, "unexpected answer (HTTP/1.1 502 Bad Gateway)");
        let silent = answering(b"");
        assert_eq!(ask(silent).unwrap_err().to_string(), "unexpected answer (no answer)");
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        assert!(matches!(ask(port), Err(CheckError::NotRunning)));
        let bad = runtime().unwrap().block_on(post(port, "to\nken", &list_projects()));
        let bad = bad.unwrap_err().to_string();
        assert_eq!(bad, "the token contains control characters");
    }
}
