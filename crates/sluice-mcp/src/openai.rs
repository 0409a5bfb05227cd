//! OpenAI's Secure MCP Tunnel, spoken by Sluice itself: it long-polls OpenAI's tunnel service
//! for what a ChatGPT connector sent, runs each request through the remote front's router in
//! process (the same gate, limits, pause, stop and audit as a request a tunnel brings over
//! loopback), and posts the answer back. Nothing listens: not even a loopback port is open for
//! this tunnel.
//!
//! The wire protocol is OpenAI's published one (the tunnel-client's `docs/protocol.md`):
//! `GET /v1/tunnels/{id}/poll`, `POST /v1/tunnels/{id}/response`, bearer auth with the tunnel's
//! API key, the shard token echoed only in its header, a command's optional `response_timeout`
//! anchored at the poll's receipt (an expired command is dropped unanswered), unknown command
//! types ignored, and the retry rules for polls and responses. Sluice serves the `main` channel
//! only; it runs no Harpoon, so OAuth through the tunnel is not offered: the connector uses no
//! authentication, and calls run under the tunnel's own grant
//! (`sluice_engine::reach::openai`). Of the headers a command carries only
//! `Mcp-Protocol-Version` is applied: never the connector's `Authorization` (no token
//! passthrough), `Host` or `Origin`.
//!
//! Written by hand: OpenAI publishes the protocol and a Go client, no Rust one; hyper's
//! connection API with rustls (as [`crate::cimd`]) keeps it to the one host, with the platform's
//! trust store and no proxy from the environment.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{HeaderMap, Method, StatusCode, header};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sluice_engine::Engine;
use sluice_engine::reach::{OPENAI_ORIGIN, Reach, Tunnel, TunnelState};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;
use zeroize::Zeroizing;

use crate::cimd::{AbortOnDrop, connect, connector};
use crate::http::MAX_BODY_BYTES;
use crate::limits::Limits;
use crate::reach::remote_router;
use crate::tunnel::Tracker;

/// The long poll Sluice asks for, and how long it waits for its answer in all.
const POLL_WAIT_MS: u64 = 15_000;
const POLL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one response POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(20);
/// Commands run at once; a poll's batch waits for a free slot.
const CONCURRENCY: usize = 8;
/// The pauses between failed polls: growing to the most, or the long one when OpenAI refused
/// the key or the tunnel (that needs the person, not a tight loop).
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
const REFUSED_PAUSE: Duration = Duration::from_secs(60);
/// Attempts of a terminal response POST.
const POST_ATTEMPTS: u32 = 5;
/// The largest answer read from Sluice's own router for one command.
const MAX_ANSWER_BYTES: usize = 4 * MAX_BODY_BYTES;
/// The one channel Sluice serves, and its declaration to the tunnel service.
const MAIN: &str = "main";
const SERVER_INFO: &str = r#"{"version":1,"channels":[{"name":"main"}]}"#;
/// The only headers of a command applied to its request: MCP's own, which the server checks
/// against the body. Never `Authorization` (no token passthrough), `Host`, `Origin` or a cookie.
const FORWARDED: [&str; 3] = ["mcp-protocol-version", "mcp-method", "mcp-name"];
const MAX_HEADER_BYTES: usize = 256;

/// Serves `reach`'s OpenAI tunnel until `stop`.
pub(crate) async fn run(
    engine: Arc<Engine>,
    reach: Reach,
    limits: Limits,
    stop: CancellationToken,
    tracker: &mut Tracker,
) {
    let Some(Tunnel::OpenAi { tunnel_id }) = reach.tunnel.clone() else { return };
    let mut pause = FIRST_BACKOFF;
    // The key and the grant: read and minted once per run (a revoked grant stays revoked).
    let started = loop {
        match start(&engine, &reach, &tunnel_id) {
            Ok(started) => break started,
            Err(why) => {
                tracker.status.restarts += 1;
                tracker.set(TunnelState::Failed, None, Some(why));
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(REFUSED_PAUSE) => {}
                }
            }
        }
    };
    let (service, token) = started;
    let tunnel = Arc::new(Poller {
        service,
        token,
        router: remote_router(engine, &reach, limits, stop.child_token()),
        host: reach.host().to_owned(),
    });
    let slots = Arc::new(Semaphore::new(CONCURRENCY));
    tracker.set(TunnelState::Starting, None, None);
    let path = format!("/v1/tunnels/{tunnel_id}/poll?limit=25&timeout_ms={POLL_WAIT_MS}");
    loop {
        let polled = tokio::select! {
            _ = stop.cancelled() => break,
            polled = tunnel.service.send(Method::GET, &path, &[], None, POLL_TIMEOUT) => polled,
        };
        let received = Instant::now();
        let wait = match polled {
            Ok(answer) if answer.status == StatusCode::NO_CONTENT => None,
            Ok(answer) if answer.status == StatusCode::OK => {
                for command in commands(&answer.body) {
                    let Ok(slot) = slots.clone().acquire_owned().await else { break };
                    let tunnel = tunnel.clone();
                    let stop = stop.clone();
                    tokio::spawn(async move {
                        tokio::select! {
                            _ = stop.cancelled() => {}
                            _ = tunnel.process(command, received) => {}
                        }
                        drop(slot);
                    });
                }
                None
            }
            Ok(answer) => Some(refusal(&answer, &tunnel_id)),
            Err(e) => Some((FIRST_BACKOFF, format!("cannot reach {}: {e}", tunnel.service.host))),
        };
        match wait {
            None => {
                pause = FIRST_BACKOFF;
                if tracker.status.state != TunnelState::Running {
                    tracker.set(TunnelState::Running, None, Some("connected to OpenAI".into()));
                }
            }
            Some((at_least, why)) => {
                let state = if at_least >= REFUSED_PAUSE {
                    TunnelState::Failed
                } else {
                    TunnelState::Restarting
                };
                tracker.status.restarts += 1;
                tracker.set(state, None, Some(why));
                let jitter = Duration::from_millis(u64::from(sluice_core::random_bytes::<1>()[0]));
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(pause.max(at_least) + jitter) => {}
                }
                pause = (pause * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// The tunnel service's client and the grant's token, or why the tunnel cannot start.
fn start(
    engine: &Engine,
    reach: &Reach,
    tunnel_id: &str,
) -> Result<(ControlPlane, Zeroizing<String>), String> {
    let key = engine.openai_api_key(tunnel_id).map_err(|f| f.message)?;
    let tls = connector()?;
    let token = engine.openai_tunnel_grant(reach).map_err(|f| f.message)?;
    let host = OPENAI_ORIGIN.trim_start_matches("https://").to_owned();
    let instance = sluice_core::id::base32(&sluice_core::random_bytes::<16>());
    Ok((ControlPlane { host, tls, key, tunnel_id: tunnel_id.to_owned(), instance }, token))
}

/// How long to wait after a poll OpenAI did not answer with commands, and why, for the status.
fn refusal(answer: &Answer, tunnel_id: &str) -> (Duration, String) {
    let status = answer.status;
    match status.as_u16() {
        401 | 403 => (
            REFUSED_PAUSE,
            format!(
                "OpenAI refused the tunnel's API key ({status}): check the key and that it may use {tunnel_id}"
            ),
        ),
        404 => (REFUSED_PAUSE, format!("OpenAI does not know the tunnel {tunnel_id} ({status})")),
        429 | 500..=599 => (
            retry_after(&answer.headers).unwrap_or(FIRST_BACKOFF),
            format!("OpenAI's tunnel service answered {status}; trying again"),
        ),
        _ => (MAX_BACKOFF, format!("OpenAI's tunnel service answered {status}")),
    }
}

/// A valid `Retry-After` in seconds, capped (the HTTP-date form is taken as no hint).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let secs: u64 = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(secs.min(MAX_BACKOFF.as_secs())))
}

/// The commands of a poll's answer, each kept as it came (one that does not parse is skipped
/// alone).
fn commands(body: &[u8]) -> Vec<Value> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(mut list)) => match list.remove("commands") {
            Some(Value::Array(commands)) => commands,
            _ => Vec::new(),
        },
        _ => {
            tracing::warn!("OpenAI's tunnel service sent a poll answer that is not a command list");
            Vec::new()
        }
    }
}

/// `response_timeout`'s grammar: one unsigned integer and one unit. Anything else (absent,
/// `null`, malformed, too large) is `None`: no deadline, as the protocol asks.
fn response_timeout(value: Option<&Value>) -> Option<Duration> {
    let text = value?.as_str()?;
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let n: u64 = number.parse().ok()?;
    let nanos: u64 = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    };
    n.checked_mul(nanos).map(Duration::from_nanos)
}

/// What runs the commands.
struct Poller {
    service: ControlPlane,
    token: Zeroizing<String>,
    router: axum::Router,
    /// The `Host` the remote front expects.
    host: String,
}

/// One answer to post for a command.
struct Reply {
    kind: &'static str,
    code: u16,
    json: Option<Value>,
}

impl Poller {
    /// Runs one command and posts its answer, within its deadline if it has one.
    async fn process(&self, command: Value, received: Instant) {
        let request_id = command.get("request_id").and_then(Value::as_str).unwrap_or_default();
        let shard = command.get("shard_token").and_then(Value::as_str).unwrap_or_default();
        if request_id.is_empty() || shard.is_empty() {
            tracing::warn!("a tunnel command without its request ID or shard token was skipped");
            return;
        }
        let work = self.answer(&command, request_id, shard);
        // A timeout too far out to add to the clock is no deadline, like a malformed one.
        let deadline = response_timeout(command.get("response_timeout"))
            .and_then(|timeout| received.checked_add(timeout));
        match deadline {
            Some(deadline) => {
                if deadline <= Instant::now() {
                    return;
                }
                if tokio::time::timeout_at(deadline, work).await.is_err() {
                    tracing::info!(request_id, "a tunnel command passed its deadline; dropped");
                }
            }
            None => work.await,
        }
    }

    async fn answer(&self, command: &Value, request_id: &str, shard: &str) {
        let channel = command.get("channel").and_then(Value::as_str).unwrap_or(MAIN);
        let kind = command.get("command_type").and_then(Value::as_str).unwrap_or("jsonrpc");
        let message = command.get("jsonrpc");
        let id = message.and_then(|m| m.get("id")).cloned();
        let post = |reply| self.post(request_id, shard, channel, reply);
        if !matches!(kind, "jsonrpc" | "session_termination") {
            tracing::info!(
                request_id,
                "a tunnel command of a type Sluice does not know was skipped"
            );
            return;
        }
        if channel != MAIN {
            let reply = match (kind, &id) {
                ("session_termination", _) => {
                    Reply { kind: "session_termination_response", code: 400, json: None }
                }
                (_, Some(id)) => Reply {
                    kind: "jsonrpc_response",
                    code: 400,
                    json: Some(error(id.clone(), -32600, "Sluice serves only the main channel")),
                },
                (_, None) => Reply { kind: "notify_ack", code: 400, json: None },
            };
            post(reply).await;
            return;
        }
        if kind == "session_termination" {
            // Sluice's MCP front keeps no sessions: there is nothing to close.
            post(Reply { kind: "session_termination_response", code: 204, json: None }).await;
            return;
        }
        let Some(message) = message.filter(|m| m.is_object()) else {
            let json = Some(error(Value::Null, -32600, "the command carries no JSON-RPC message"));
            post(Reply { kind: "jsonrpc_response", code: 400, json }).await;
            return;
        };
        let forwarded = FORWARDED.map(|name| (name, protocol_header(command, name)));
        let answer = self.call(message, &forwarded).await;
        let notification = id.is_none();
        let reply = match answer {
            Ok((status, Answered::Stream(mut events))) => {
                let mut final_reply = None;
                let mut notify = true;
                while let Some(event) = events.next().await {
                    let is_final = event.get("id").is_some_and(|i| Some(i) == id.as_ref())
                        && (event.get("result").is_some() || event.get("error").is_some());
                    if is_final {
                        final_reply = Some(event);
                        break;
                    }
                    // Progress and other notifications are best effort.
                    if notify {
                        let reply = Reply { kind: "jsonrpc_notify", code: 200, json: Some(event) };
                        notify = self.post_once(request_id, shard, channel, &reply).await;
                    }
                }
                let json = final_reply.unwrap_or_else(|| {
                    failure(id.clone().unwrap_or(Value::Null), status.as_u16(), "transport_closed")
                });
                Reply { kind: "jsonrpc_response", code: status.as_u16(), json: Some(json) }
            }
            Ok((status, Answered::Body(_))) if notification => {
                Reply { kind: "notify_ack", code: status.as_u16(), json: None }
            }
            Ok((status, Answered::Body(body))) => {
                let json = serde_json::from_slice::<Value>(&body)
                    .ok()
                    .filter(|v| v.get("result").is_some() || v.get("error").is_some())
                    .unwrap_or_else(|| {
                        failure(id.clone().unwrap_or(Value::Null), status.as_u16(), "target_http")
                    });
                Reply { kind: "jsonrpc_response", code: status.as_u16(), json: Some(json) }
            }
            Err(()) if notification => Reply { kind: "notify_ack", code: 502, json: None },
            Err(()) => Reply {
                kind: "jsonrpc_response",
                code: 502,
                json: Some(failure(id.clone().unwrap_or(Value::Null), 502, "client_internal")),
            },
        };
        post(reply).await;
    }

    /// Sends `message` through the remote front, as the tunnel's grant, with the protocol
    /// headers the connector sent.
    async fn call(
        &self,
        message: &Value,
        forwarded: &[(&str, Option<&str>)],
    ) -> Result<(StatusCode, Answered), ()> {
        let body = serde_json::to_vec(message).map_err(drop)?;
        let mut request = axum::http::Request::post("/mcp")
            .header(header::HOST, &self.host)
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token.as_str()))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
        for (name, value) in forwarded {
            if let Some(value) = value {
                request = request.header(*name, *value);
            }
        }
        let request = request.body(Body::from(body)).map_err(drop)?;
        let response = self.router.clone().oneshot(request).await.map_err(drop)?;
        let status = response.status();
        let streamed = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if streamed {
            return Ok((status, Answered::Stream(Events::new(response.into_body()))));
        }
        let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(drop)?
            .to_bytes();
        Ok((status, Answered::Body(body)))
    }

    /// Posts a terminal answer, retrying what the protocol says may be retried.
    async fn post(&self, request_id: &str, shard: &str, channel: &str, reply: Reply) {
        let mut pause = FIRST_BACKOFF;
        for attempt in 1..=POST_ATTEMPTS {
            match self.send_reply(request_id, shard, channel, &reply).await {
                Ok(answer) if answer.status.is_success() => return,
                Ok(answer) if matches!(answer.status.as_u16(), 408 | 429 | 502 | 503 | 504) => {
                    pause = pause.max(retry_after(&answer.headers).unwrap_or_default());
                }
                Ok(answer) => {
                    // 404: already fulfilled or no longer pending; other 4xx are not retried.
                    tracing::info!(request_id, status = %answer.status, "a tunnel answer was not taken");
                    return;
                }
                Err(e) => {
                    tracing::info!(request_id, attempt, "posting a tunnel answer failed: {e}")
                }
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }

    /// Posts a notification once (a 429 once more); whether later ones should still be sent.
    async fn post_once(&self, request_id: &str, shard: &str, channel: &str, reply: &Reply) -> bool {
        for _ in 0..2 {
            match self.send_reply(request_id, shard, channel, reply).await {
                Ok(answer) if answer.status.is_success() => return true,
                Ok(answer) if answer.status == StatusCode::TOO_MANY_REQUESTS => {
                    tokio::time::sleep(retry_after(&answer.headers).unwrap_or(FIRST_BACKOFF)).await;
                }
                _ => return false,
            }
        }
        false
    }

    async fn send_reply(
        &self,
        request_id: &str,
        shard: &str,
        channel: &str,
        reply: &Reply,
    ) -> Result<Answer, String> {
        let mut body = json!({
            "request_id": request_id,
            "channel": channel,
            "resp_code": reply.code,
            "resp_type": reply.kind,
        });
        if let Some(json) = &reply.json {
            body["resp_json"] = json.clone();
            body["resp_headers"] = json!({ "Content-Type": ["application/json"] });
        }
        let body = Bytes::from(serde_json::to_vec(&body).map_err(|e| e.to_string())?);
        let path = format!("/v1/tunnels/{}/response", self.service.tunnel_id);
        let headers = [("x-tunnel-shard-token", shard), ("content-type", "application/json")];
        self.service.send(Method::POST, &path, &headers, Some(body), POST_TIMEOUT).await
    }
}

/// The one value of the protocol header `name` among a command's headers (any case), if it is
/// short visible text; a header given twice, or anything else, is not applied.
fn protocol_header<'a>(command: &'a Value, name: &str) -> Option<&'a str> {
    let headers = command.get("headers")?.as_object()?;
    let mut values = headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
    let (_, value) = values.next()?;
    let value = match value.as_array()?.as_slice() {
        [one] => one.as_str()?,
        _ => return None,
    };
    let shown =
        |v: &str| v.len() <= MAX_HEADER_BYTES && v.bytes().all(|b| (b' '..=b'~').contains(&b));
    (values.next().is_none() && shown(value)).then_some(value)
}

/// A JSON-RPC error answer.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// A JSON-RPC error for a request no valid answer came back for, with the protocol's bounded
/// provenance.
fn failure(id: Value, status: u16, source: &str) -> Value {
    let mut failure = json!({
        "version": 1,
        "source": source,
        "upstream_response_received": source == "target_http",
    });
    if source == "target_http" && (400..=599).contains(&status) {
        failure["upstream_status"] = json!(status);
    }
    let mut answer = error(id, -32603, "Bad Gateway");
    answer["error"]["data"] = json!({ "tunnel_failure": failure });
    answer
}

/// What Sluice's router answered.
enum Answered {
    Body(Bytes),
    Stream(Events),
}

/// The JSON messages of a server-sent event stream, as they arrive.
struct Events {
    body: Body,
    buffer: Vec<u8>,
    data: Vec<u8>,
    read: usize,
}

impl Events {
    fn new(body: Body) -> Events {
        Events { body, buffer: Vec::new(), data: Vec::new(), read: 0 }
    }

    /// The next event's JSON data; `None` at the end of the stream (or past the size cap).
    async fn next(&mut self) -> Option<Value> {
        loop {
            while let Some(at) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=at).collect();
                let line = line.strip_suffix(b"\n").unwrap_or(&line);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.is_empty() {
                    let data = std::mem::take(&mut self.data);
                    if let Ok(value) = serde_json::from_slice::<Value>(&data) {
                        return Some(value);
                    }
                } else if let Some(rest) = line.strip_prefix(b"data:") {
                    if !self.data.is_empty() {
                        self.data.push(b'\n');
                    }
                    self.data.extend_from_slice(rest.strip_prefix(b" ").unwrap_or(rest));
                }
            }
            let frame = self.body.frame().await?.ok()?;
            if let Ok(bytes) = frame.into_data() {
                self.read += bytes.len();
                if self.read > MAX_ANSWER_BYTES {
                    return None;
                }
                self.buffer.extend_from_slice(&bytes);
            }
        }
    }
}

/// OpenAI's tunnel service, one connection per request.
struct ControlPlane {
    host: String,
    tls: TlsConnector,
    key: Zeroizing<String>,
    tunnel_id: String,
    /// Identifies this run of the poller to the service, as the protocol asks.
    instance: String,
}

/// An answer of the tunnel service.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl ControlPlane {
    async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Bytes>,
        timeout: Duration,
    ) -> Result<Answer, String> {
        let attempt = async {
            let addrs: Vec<_> = tokio::net::lookup_host((self.host.as_str(), 443))
                .await
                .map_err(|e| format!("the name does not resolve ({e})"))?
                .collect();
            let tcp = connect(&addrs).await.map_err(|e| e.to_string())?;
            let name = ServerName::try_from(self.host.clone()).map_err(|e| e.to_string())?;
            let tls = self.tls.connect(name, tcp).await.map_err(|e| format!("TLS: {e}"))?;
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
                .await
                .map_err(|e| e.to_string())?;
            let _conn = AbortOnDrop(tokio::spawn(conn));
            let mut request = hyper::Request::builder()
                .method(method)
                .uri(path)
                .header(header::HOST, &self.host)
                .header(header::AUTHORIZATION, format!("Bearer {}", self.key.as_str()))
                .header(header::USER_AGENT, concat!("Sluice/", env!("CARGO_PKG_VERSION")))
                .header("x-tunnel-client-name", "sluice")
                .header("x-tunnel-client-version", env!("CARGO_PKG_VERSION"))
                .header("x-tunnel-client-instance-id", &self.instance)
                .header("x-tunnel-mcp-server-info", SERVER_INFO);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let request =
                request.body(Full::new(body.unwrap_or_default())).map_err(|e| e.to_string())?;
            let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
            let (parts, body) = response.into_parts();
            let limit = 25 * MAX_BODY_BYTES;
            let body = Limited::new(body, limit)
                .collect()
                .await
                .map_err(|_| "the answer was cut off or too large".to_owned())?
                .to_bytes();
            Ok(Answer { status: parts.status, headers: parts.headers, body })
        };
        tokio::time::timeout(timeout, attempt).await.map_err(|_| "no answer in time".to_owned())?
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
