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

/// The runtime `sluice stdio` runs on: one thread. With the streams of [`std_streams`] the bridge
/// waits for stdin, stdout and the engine's socket in the same epoll, so a message costs no hand-off
/// between threads (measured: thread hand-offs were most of the bridge's CPU per call).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build()
}

/// The bridge's input.
pub type Input = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
/// The bridge's output.
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// This process's stdin and stdout for [`run`], inside a runtime. Pipes and sockets (how clients
/// start a stdio server) are switched to non-blocking mode and polled by the runtime itself;
/// anything else (a terminal, whose mode the shell shares; a file) uses tokio's streams, which
/// read and write on a helper thread.
pub fn std_streams() -> (Input, Output) {
    #[cfg(unix)]
    {
        let input: Input = match pipe::Pipe::stdin() {
            Some(p) => Box::new(p),
            None => Box::new(tokio::io::stdin()),
        };
        let output: Output = match pipe::Pipe::stdout() {
            Some(p) => Box::new(p),
            None => Box::new(tokio::io::stdout()),
        };
        (input, output)
    }
    #[cfg(not(unix))]
    {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

#[cfg(unix)]
mod pipe {
    use std::io;
    use std::os::fd::{AsFd, AsRawFd};
    use std::pin::Pin;
    use std::task::{Context, Poll, ready};

    use rustix::fs::{FileType, OFlags};
    use tokio::io::unix::AsyncFd;
    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

    /// A pipe or socket end (stdin, stdout) in non-blocking mode, driven by the runtime's epoll.
    /// Its original flags come back when it is dropped.
    pub struct Pipe<T: AsFd + AsRawFd> {
        fd: AsyncFd<T>,
        flags: OFlags,
    }

    impl Pipe<std::io::Stdin> {
        pub fn stdin() -> Option<Self> {
            Pipe::new(std::io::stdin())
        }
    }

    impl Pipe<std::io::Stdout> {
        pub fn stdout() -> Option<Self> {
            Pipe::new(std::io::stdout())
        }
    }

    impl<T: AsFd + AsRawFd> Pipe<T> {
        /// `None` unless `end` is a pipe or a socket that could be registered.
        fn new(end: T) -> Option<Pipe<T>> {
            let stat = rustix::fs::fstat(end.as_fd()).ok()?;
            if !matches!(FileType::from_raw_mode(stat.st_mode), FileType::Fifo | FileType::Socket) {
                return None;
            }
            let flags = rustix::fs::fcntl_getfl(end.as_fd()).ok()?;
            rustix::fs::fcntl_setfl(end.as_fd(), flags | OFlags::NONBLOCK).ok()?;
            // SAFETY: `end` is this process's stdin or stdout, which stay open for its whole
            // life (std never closes them), and their `as_raw_fd` is always 0 or 1.
            match unsafe { AsyncFd::register(end) } {
                Ok(fd) => Some(Pipe { fd, flags }),
                Err(err) => {
                    let (end, err) = err.into_parts();
                    let _ = rustix::fs::fcntl_setfl(end.as_fd(), flags);
                    tracing::debug!(%err, "cannot poll a standard stream; using a helper thread");
                    None
                }
            }
        }
    }

    impl<T: AsFd + AsRawFd> Drop for Pipe<T> {
        fn drop(&mut self) {
            let _ = rustix::fs::fcntl_setfl(self.fd.get_ref().as_fd(), self.flags);
        }
    }

    impl<T: AsFd + AsRawFd + Unpin> AsyncRead for Pipe<T> {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            loop {
                let mut ready = ready!(self.fd.poll_read_ready(cx))?;
                let unfilled = buf.initialize_unfilled();
                match ready.try_io(|fd| Ok(rustix::io::read(fd.get_ref().as_fd(), unfilled)?)) {
                    Ok(Ok(n)) => {
                        buf.advance(n);
                        return Poll::Ready(Ok(()));
                    }
                    Ok(Err(err)) => return Poll::Ready(Err(err)),
                    Err(_would_block) => continue,
                }
            }
        }
    }

    impl<T: AsFd + AsRawFd + Unpin> AsyncWrite for Pipe<T> {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            loop {
                let mut ready = ready!(self.fd.poll_write_ready(cx))?;
                match ready.try_io(|fd| Ok(rustix::io::write(fd.get_ref().as_fd(), buf)?)) {
                    Ok(result) => return Poll::Ready(result),
                    Err(_would_block) => continue,
                }
            }
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
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
    /// Whole JSON-RPC messages for stdout, one per line (without the newline).
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// Keep-alive connections to the engine that are free, with when each became free. A
    /// request takes one (or opens one) and owns it until the response is read, so aborting the
    /// request closes its connection, which is how the engine learns of the cancellation.
    idle: Mutex<Vec<(Instant, Sender)>>,
}

/// One HTTP/1.1 connection to the engine, as the bridge and the connection check hold it.
pub(crate) type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// Starts HTTP/1.1 on a new connection to the engine; a task of its own drives the connection
/// for as long as the sender lives.
pub(crate) async fn handshake(stream: TcpStream) -> Result<Sender, hyper::Error> {
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

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
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
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
            Ok(msg) => bridge.clone().dispatch(msg, Bytes::copy_from_slice(line)),
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

fn rpc_error(id: Value, code: i64, message: &str) -> Vec<u8> {
    line(&json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }))
}

/// One message as a line for stdout (serde_json escapes every newline inside strings).
fn line(msg: &Value) -> Vec<u8> {
    serde_json::to_vec(msg).unwrap_or_default()
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Bridge {
    /// Forwards one client message; `raw` is its text, sent to the engine as it came.
    fn dispatch(self: Arc<Self>, msg: Value, raw: Bytes) {
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
                    let answers = this.forward(&method, &msg, raw, Some(&id)).await;
                    this.lock_in_flight().remove(&id_key(&id));
                    for answer in answers {
                        let _ = this.out.send(answer);
                    }
                });
                self.lock_in_flight().insert(key, task.abort_handle());
            }
            (Some(method), None) => {
                tokio::spawn(async move {
                    self.forward(&method, &msg, raw, None).await;
                });
            }
            // Responses to server-initiated requests: a stateless server sends none.
            (None, _) => {}
        }
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, AbortHandle>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// POSTs one message and returns the lines to hand back to the client.
    async fn forward(
        &self,
        method: &str,
        msg: &Value,
        body: Bytes,
        id: Option<&Value>,
    ) -> Vec<Vec<u8>> {
        let fail = |code: i64, message: &str| match id {
            Some(id) => vec![rpc_error(id.clone(), code, message)],
            None => vec![],
        };
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
        let Ok(req) = req.body(Full::new(body)) else {
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
        let Some(id) = id else { return vec![] };
        // The common case, an answer to a request: the engine's one JSON object goes to the
        // client as it is, without parsing and printing it again (a read's result is the whole
        // file, escaped twice).
        if status.is_success() && !sse && method != "initialize" && is_one_json_line(&bytes) {
            return vec![bytes.to_vec()];
        }
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
        // The gate answers refusals (401, 429, 503) before it parses the body, with a null id;
        // give the client its own id back so it can match the answer.
        for m in &mut messages {
            if m.get("id") == Some(&Value::Null) {
                m["id"] = id.clone();
            }
        }
        if method == "initialize"
            && let Some(v) = messages
                .iter()
                .find_map(|m| m.pointer("/result/protocolVersion").and_then(Value::as_str))
        {
            *self.protocol.lock().unwrap_or_else(|e| e.into_inner()) = Some(v.to_owned());
        }
        messages.iter().map(line).collect()
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
                handshake(stream).await?
            }
        };
        let res = sender.send_request(req).await?;
        Ok((res, sender))
    }
}

/// Whether `body` can be written to stdout as one protocol line: a JSON object (the engine's
/// serializer) with no raw newline in it.
fn is_one_json_line(body: &[u8]) -> bool {
    body.first() == Some(&b'{') && body.last() == Some(&b'}') && !body.contains(&b'\n')
}

/// The JSON messages carried in an SSE body (`data:` lines, events split by blank lines).
pub(crate) fn sse_messages(body: &[u8]) -> Vec<Value> {
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
