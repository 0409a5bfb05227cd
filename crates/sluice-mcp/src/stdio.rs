//! `sluice stdio`: a stdio MCP server that forwards every message to the running engine's HTTP
//! endpoint, so pause, limits, scope and audit apply to stdio clients exactly as to HTTP ones.
//! stdout carries protocol messages only; diagnostics go to stderr (through `tracing`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// The longest line accepted from the client (a JSON-RPC message).
const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error(
        "Sluice is not running on 127.0.0.1:{port}; start the Sluice app (or `sluice serve`) first"
    )]
    NotRunning { port: u16 },
    #[error("reading stdin failed: {0}")]
    Stdin(std::io::Error),
    #[error(
        "no token: set SLUICE_TOKEN to a Sluice client token, or pass --connection NAME for a \
         connection made by `sluice connect` (tokens are never passed as arguments)"
    )]
    NoToken,
    #[error(
        "Sluice has no token for the connection {0:?}; run `sluice connect` for this client again"
    )]
    UnknownConnection(String),
    #[error("cannot read the token of connection {name:?}: {message}")]
    ConnectionToken { name: String, message: String },
}

/// The token `sluice stdio` uses: `SLUICE_TOKEN` when it is set (and not blank), else the
/// token `sluice connect` stored for `connection` in the OS keychain (or its owner-only file
/// fallback), so a stdio client's config needs no secret at all.
pub fn resolve_token(
    env_token: Option<String>,
    data_dir: &std::path::Path,
    preference: sluice_engine::SecretPreference,
    connection: Option<&str>,
) -> Result<String, BridgeError> {
    if let Some(token) = env_token.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()) {
        return Ok(token);
    }
    let Some(name) = connection else { return Err(BridgeError::NoToken) };
    let keychain = if preference == sluice_engine::SecretPreference::FileOnly {
        &sluice_engine::Keychain::unavailable("not used")
    } else {
        sluice_engine::Keychain::platform()
    };
    match sluice_engine::connections::load(data_dir, preference, keychain, name) {
        Ok(Some(token)) => Ok(token.trim().to_owned()),
        Ok(None) => Err(BridgeError::UnknownConnection(name.to_owned())),
        Err(e) => {
            Err(BridgeError::ConnectionToken { name: name.to_owned(), message: e.to_string() })
        }
    }
}

struct Bridge {
    port: u16,
    authorization: String,
    /// The protocol version negotiated by `initialize`, sent as `MCP-Protocol-Version`.
    protocol: Mutex<Option<String>>,
    /// In-flight requests by JSON-RPC id, so `notifications/cancelled` can abort them (closing
    /// the HTTP response is how cancellation is expressed over Streamable HTTP).
    in_flight: Mutex<HashMap<String, AbortHandle>>,
    out: mpsc::UnboundedSender<Value>,
    /// Keep-alive connections to the engine that are free, with when each became free. A
    /// request takes one (or opens one) and owns it until the response is read, so aborting the
    /// request closes its connection, which is how the engine learns of the cancellation.
    idle: Mutex<Vec<(Instant, Sender)>>,
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// A free connection is reused only this soon after its last response: well within the
/// engine's idle timeout (`http::HEADER_TIMEOUT`), so it cannot be closing as a request leaves.
const REUSE_WITHIN: Duration = Duration::from_secs(3);

/// Runs the bridge until stdin closes. `token` comes from the environment, never argv.
pub async fn run<W: AsyncWrite + Unpin + Send + 'static>(
    port: u16,
    token: &str,
    stdin: impl tokio::io::AsyncRead + Unpin,
    mut stdout: W,
) -> Result<(), BridgeError> {
    if TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        return Err(BridgeError::NotRunning { port });
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            let mut line = msg.to_string();
            line.push('\n');
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let bridge = Arc::new(Bridge {
        port,
        authorization: format!("Bearer {token}"),
        protocol: Mutex::new(None),
        in_flight: Mutex::new(HashMap::new()),
        out: tx,
        idle: Mutex::new(Vec::new()),
    });

    let mut lines = BufReader::new(stdin);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = read_line_capped(&mut lines, &mut buf).await.map_err(BridgeError::Stdin)?;
        if n == 0 {
            break;
        }
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if line.len() > MAX_LINE_BYTES {
            let _ = bridge.out.send(rpc_error(Value::Null, -32600, "message too large"));
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(msg) => bridge.clone().dispatch(msg),
            Err(_) => {
                let _ = bridge.out.send(rpc_error(Value::Null, -32700, "parse error"));
            }
        }
    }
    // In-flight requests hold the bridge (and so the output channel) until they have written
    // their answers; the writer ends when the last of them is done.
    drop(bridge);
    let _ = writer.await;
    Ok(())
}

/// Reads one line, keeping at most `MAX_LINE_BYTES + 1` bytes of it so a huge line cannot
/// exhaust memory; the rest of an oversized line is discarded.
async fn read_line_capped(
    reader: &mut (impl AsyncBufReadExt + Unpin),
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(total);
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = (MAX_LINE_BYTES + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        reader.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
    }
}

fn rpc_error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Bridge {
    fn dispatch(self: Arc<Self>, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = msg.get("id").cloned();
        if method.as_deref() == Some("notifications/cancelled") {
            let target = msg.pointer("/params/requestId").map(id_key);
            if let Some(handle) = target.and_then(|k| self.lock_in_flight().remove(&k)) {
                handle.abort();
            }
        }
        match (method, id) {
            (Some(method), Some(id)) => {
                let key = id_key(&id);
                let this = self.clone();
                let task = tokio::spawn(async move {
                    let answers = this.forward(&method, &msg, Some(&id)).await;
                    this.lock_in_flight().remove(&id_key(&id));
                    for answer in answers {
                        let _ = this.out.send(answer);
                    }
                });
                self.lock_in_flight().insert(key, task.abort_handle());
            }
            (Some(method), None) => {
                tokio::spawn(async move {
                    self.forward(&method, &msg, None).await;
                });
            }
            // Responses to server-initiated requests: a stateless server sends none.
            (None, _) => {}
        }
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, AbortHandle>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// POSTs one message and returns the JSON-RPC messages to hand back to the client.
    async fn forward(&self, method: &str, msg: &Value, id: Option<&Value>) -> Vec<Value> {
        let fail = |code: i64, message: &str| match id {
            Some(id) => vec![rpc_error(id.clone(), code, message)],
            None => vec![],
        };
        let body = msg.to_string();
        let protocol = msg
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| self.protocol.lock().unwrap_or_else(|e| e.into_inner()).clone());
        let mut req = Request::post("/mcp")
            .header("host", format!("127.0.0.1:{}", self.port))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", &self.authorization)
            .header("mcp-method", method);
        if let Some(name) = msg
            .pointer("/params/name")
            .or_else(|| msg.pointer("/params/uri"))
            .and_then(Value::as_str)
            && method != "initialize"
        {
            req = req.header("mcp-name", name);
        }
        if let Some(v) = &protocol
            && method != "initialize"
        {
            req = req.header("mcp-protocol-version", v);
        }
        let Ok(req) = req.body(Full::new(Bytes::from(body))) else {
            return fail(-32600, "request could not be forwarded (invalid header value)");
        };
        let (res, sender) = match self.send(req).await {
            Ok(sent) => sent,
            Err(err) => {
                tracing::warn!(%err, "forwarding to the engine failed");
                return fail(-32603, "Sluice is not reachable; is the Sluice app running?");
            }
        };
        let status = res.status();
        let sse = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let Ok(collected) = res.into_body().collect().await else {
            return fail(-32603, "the engine closed the response early");
        };
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push((Instant::now(), sender));
        let bytes = collected.to_bytes();
        let mut messages: Vec<Value> = if sse {
            sse_messages(&bytes)
        } else {
            serde_json::from_slice::<Value>(&bytes).into_iter().collect()
        };
        if messages.is_empty() && !status.is_success() {
            let text = String::from_utf8_lossy(&bytes);
            return fail(
                -32603,
                &format!("Sluice refused the request ({status}): {}", text.trim()),
            );
        }
        if let Some(id) = id {
            // The gate answers refusals (401, 429, 503) before it parses the body, with a null
            // id; give the client its own id back so it can match the answer.
            for m in &mut messages {
                if m.get("id") == Some(&Value::Null) {
                    m["id"] = id.clone();
                }
            }
        }
        if method == "initialize"
            && let Some(v) = messages
                .iter()
                .find_map(|m| m.pointer("/result/protocolVersion").and_then(Value::as_str))
        {
            *self.protocol.lock().unwrap_or_else(|e| e.into_inner()) = Some(v.to_owned());
        }
        if id.is_none() {
            return vec![];
        }
        messages
    }

    /// Sends on a recently freed connection or a new one; returns the connection with the
    /// response, to be given back once the body is read.
    async fn send(
        &self,
        req: Request<Full<Bytes>>,
    ) -> Result<(hyper::Response<Incoming>, Sender), Box<dyn std::error::Error + Send + Sync>> {
        let reused = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.retain(|(freed, sender)| freed.elapsed() < REUSE_WITHIN && sender.is_ready());
            idle.pop().map(|(_, sender)| sender)
        };
        let mut sender = match reused {
            Some(sender) => sender,
            None => {
                let stream = TcpStream::connect(("127.0.0.1", self.port)).await?;
                stream.set_nodelay(true)?;
                let (sender, conn) =
                    hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
                tokio::spawn(conn);
                sender
            }
        };
        let res = sender.send_request(req).await?;
        Ok((res, sender))
    }
}

/// The JSON messages carried in an SSE body (`data:` lines, events split by blank lines).
fn sse_messages(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body);
    let mut out = Vec::new();
    let mut data = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.is_empty() {
            if !data.is_empty() {
                if let Ok(v) = serde_json::from_str::<Value>(&data) {
                    out.push(v);
                }
                data.clear();
            }
        } else if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_bodies_yield_their_messages() {
        let body = b"id: 1\nretry: 3000\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {\"a\":\ndata: 1}\n\n";
        let msgs = sse_messages(body);
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0]["id"], 1);
        assert_eq!(msgs[1]["a"], 1);
    }
}
