//! A dependency-free MCP client over HTTP/1.1 (std `TcpStream`, keep-alive, a bearer token)
//! for xtask's drivers of a running `sluice serve`: `load` floods it from many threads,
//! `windows check` talks to the Windows build under Wine. Hand-written because xtask must not
//! pull an HTTP stack and an MCP SDK into every `cargo xtask` build for a few requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// A keep-alive HTTP/1.1 connection to the engine; reconnects when the server closed it.
pub struct Client {
    port: u16,
    token: String,
    conn: Option<BufReader<TcpStream>>,
}

/// What came back: status, `Retry-After`, the JSON-RPC message.
pub struct Response {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Value,
}

impl Client {
    pub fn new(port: u16, token: &str) -> Client {
        Client { port, token: token.to_owned(), conn: None }
    }

    /// A `tools/call` of `tool` with `args`.
    pub fn call(&mut self, tool: &str, args: Value) -> Result<Response> {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }

    /// Any JSON-RPC request (`initialize`, `tools/list`, …).
    pub fn request(&mut self, method: &str, params: Value) -> Result<Response> {
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        // A kept connection the server closed meanwhile fails at once: try a fresh one.
        let reused = self.conn.is_some();
        let res = self.exchange(&body);
        match res {
            Err(_) if reused => {
                self.conn = None;
                self.exchange(&body).inspect_err(|_| self.conn = None)
            }
            Err(e) => {
                self.conn = None;
                Err(e)
            }
            ok => ok,
        }
    }

    fn exchange(&mut self, body: &str) -> Result<Response> {
        if self.conn.is_none() {
            let s = TcpStream::connect(("127.0.0.1", self.port))?;
            s.set_read_timeout(Some(Duration::from_secs(60)))?;
            s.set_nodelay(true)?;
            self.conn = Some(BufReader::new(s));
        }
        let conn = self.conn.as_mut().context("connection")?;
        let port = self.port;
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nAuthorization: Bearer {}\r\n\
             MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
            self.token,
            body.len()
        );
        conn.get_mut().write_all(request.as_bytes())?;
        let mut status_line = String::new();
        if conn.read_line(&mut status_line)? == 0 {
            bail!("connection closed");
        }
        let status: u16 =
            status_line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).context("status")?;
        let (mut length, mut chunked, mut close, mut retry_after) = (None, false, false, None);
        loop {
            let mut line = String::new();
            conn.read_line(&mut line)?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let Some((k, v)) = line.split_once(':') else { continue };
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            match k.as_str() {
                "content-length" => length = v.parse::<usize>().ok(),
                "transfer-encoding" => chunked = v.eq_ignore_ascii_case("chunked"),
                "connection" => close = v.eq_ignore_ascii_case("close"),
                "retry-after" => retry_after = Some(v.to_owned()),
                _ => {}
            }
        }
        let mut raw = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                conn.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim(), 16).context("chunk size")?;
                let mut chunk = vec![0; n + 2];
                conn.read_exact(&mut chunk)?;
                if n == 0 {
                    break;
                }
                raw.extend_from_slice(&chunk[..n]);
            }
        } else if let Some(n) = length {
            raw.resize(n, 0);
            conn.read_exact(&mut raw)?;
        } else {
            conn.read_to_end(&mut raw)?;
            close = true;
        }
        if close {
            self.conn = None;
        }
        let text = String::from_utf8_lossy(&raw);
        let json = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&text).trim();
        let body = if json.is_empty() { Value::Null } else { serde_json::from_str(json)? };
        Ok(Response { status, retry_after, body })
    }
}
