//! The HTTP front door: binds loopback, and checks every request before rmcp sees it — Host
//! (DNS rebinding), Origin and Fetch Metadata (browser pages), method and content type (simple
//! cross-site requests), bearer token, pause, and per-token limits. Only `/mcp` exists: there is
//! no admin endpoint to find (UI-01). A refusal closes its connection (`Connection: close`):
//! the request's body may be unread, and hyper then drops the connection rather than drain it,
//! which a client reusing it would only see as a request that vanished.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
};
use serde_json::json;
use sluice_core::{ErrorCode, Failure};
use sluice_engine::{AuditOutcome, Caller, Durability, Engine, RequestAudit};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::direct::{Call, Direct};
use crate::limits::{Limiter, Limits, Refusal};
use crate::peek::Peek;
use crate::server::SluiceServer;

/// The largest request body accepted (a JSON-RPC message, file contents included).
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Connections open at once; more are closed on accept (HS-07).
pub const MAX_CONNECTIONS: usize = 512;
/// A client must start its request within this time of connecting, and send the whole header
/// within it of starting (slowloris); idle keep-alive connections close after it too.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A client must send its whole request body within this time.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(
        "port {port} on 127.0.0.1 is already in use (is another Sluice running?); \
         stop it or choose another port with --port"
    )]
    PortInUse { port: u16 },
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Other { port: u16, source: std::io::Error },
}

/// The runtime `sluice serve` runs the endpoint on: an async worker per core (at least two) plus
/// tokio's blocking pool. A read-only call's file work is microseconds and runs on its request's
/// task (`Work::OneFile`), and loopback sends do the receiver's share of TCP on the sending
/// thread, so under concurrent clients the workers are what is busy (docs/BENCHMARKS.md).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    tokio::runtime::Builder::new_multi_thread().worker_threads(cores.max(2)).enable_all().build()
}

/// Binds 127.0.0.1 only: never a wildcard or LAN address (HS-01).
pub async fn bind(port: u16) -> Result<TcpListener, BindError> {
    TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await.map_err(|source| {
        if source.kind() == std::io::ErrorKind::AddrInUse {
            BindError::PortInUse { port }
        } else {
            BindError::Other { port, source }
        }
    })
}

/// rmcp's service in the configuration Sluice serves it.
type McpService = StreamableHttpService<SluiceServer, NeverSessionManager>;

struct Gate {
    engine: Arc<Engine>,
    /// The tools that may ask the user: their calls are answered as an event stream whose
    /// headers go out at once, so a client with a short header timeout does not give up while
    /// the user decides (everything else is answered as one JSON body).
    streamed: McpService,
    /// Which tools may ask (every tool not annotated read-only).
    server: SluiceServer,
    /// Read-only tool calls that need none of rmcp's per-request machinery (`None` in tests
    /// that compare the two paths).
    direct: Option<Direct>,
    /// Exact `Host` values accepted: `127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`, or on
    /// the remote front the public host alone.
    hosts: Vec<String>,
    /// Exact `Origin` values accepted: the same, as origins.
    origins: Vec<String>,
    limiter: Limiter,
    /// On the remote front: the resource metadata URL the 401 challenge names (RFC 9728 §5.1).
    /// The local front answers a bare challenge, which keeps clients on their configured header.
    remote: Option<HeaderValue>,
}

/// The web origins of the hosted assistants reach serves.
const HOSTED_ORIGINS: &[&str] = &["https://claude.ai", "https://claude.com", "https://chatgpt.com"];

/// Which door a router serves: the local clients' port, or the port a tunnel connects to.
pub(crate) enum Front {
    Local { port: u16 },
    Remote { host: String, origin: String, resource_metadata: String },
}

/// Builds the router: `/mcp` behind the gate, nothing else.
pub fn router(
    engine: Arc<Engine>,
    port: u16,
    limits: Limits,
    shutdown: CancellationToken,
) -> axum::Router {
    build_router(engine, Front::Local { port }, limits, shutdown, true)
}

/// [`router`], with or without the direct path for read-only tool calls.
pub(crate) fn build_router(
    engine: Arc<Engine>,
    front: Front,
    limits: Limits,
    shutdown: CancellationToken,
    direct: bool,
) -> axum::Router {
    let (hosts, origins, remote) = match front {
        Front::Local { port } => (
            vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")],
            own_origins(port).to_vec(),
            None,
        ),
        Front::Remote { host, origin, resource_metadata } => {
            let challenge = HeaderValue::from_str(&format!(
                r#"Bearer resource_metadata="{resource_metadata}""#
            ))
            .ok();
            // The hosted assistants call from their servers; should one send its own web
            // origin, it is let through (a bearer token is never an ambient credential, so an
            // origin is no attack here). Any other origin is refused as on the local door.
            let mut origins = vec![origin];
            origins.extend(HOSTED_ORIGINS.iter().map(|o| (*o).to_owned()));
            (vec![host], origins, challenge)
        }
    };
    // The direct path answers as rmcp does in this configuration only: stateless (no sessions),
    // JSON responses, no required per-request protocol metadata.
    let base = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_allowed_hosts(hosts.clone())
        // Browsers may only call from Sluice's own origin (which serves no MCP pages).
        .with_allowed_origins(origins.clone())
        .enforce_origin_validation()
        .with_cancellation_token(shutdown.child_token());
    let server = SluiceServer::new(engine.clone());
    let direct = direct.then(|| Direct::new(server.clone()));
    let service = |json: bool| -> McpService {
        let server = server.clone();
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            base.clone().with_json_response(json),
        )
    };
    let mcp = service(true);
    let gate = Arc::new(Gate {
        engine,
        streamed: service(false),
        server: server.clone(),
        direct,
        hosts,
        origins,
        limiter: Limiter::new(limits),
        remote,
    });
    axum::Router::new()
        // Exactly `/mcp`: not `/mcp/…`, so no other path can reach the MCP service either.
        .route_service("/mcp", mcp)
        .fallback(|| async { plain(StatusCode::NOT_FOUND, "not found; the MCP endpoint is /mcp") })
        .layer(middleware::from_fn_with_state(gate, guard))
}

/// Serves until `shutdown` is cancelled. TCP_NODELAY on every socket (it cuts loopback latency
/// several-fold), a header timeout against slowloris, and a cap on open connections.
pub async fn serve(listener: TcpListener, router: axum::Router, shutdown: CancellationToken) {
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, _) = tokio::select! {
            _ = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(err) => {
                    // Typically out of file descriptors: back off instead of spinning.
                    tracing::warn!(%err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            tracing::warn!("connection limit reached; closing a new connection");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            // hyper's header timer starts at the first byte; a connection that never sends one
            // would hold its slot forever.
            let mut first = [0u8; 1];
            let started = tokio::time::timeout(HEADER_TIMEOUT, stream.peek(&mut first)).await;
            if !matches!(started, Ok(Ok(1))) {
                return;
            }
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_buf_size(64 * 1024);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = shutdown.cancelled() => conn.as_mut().graceful_shutdown(),
            }
            drop(permit);
        });
    }
}

/// The origins of Sluice's own endpoint. A page can only have one of them if it was served from
/// Sluice's port, which serves no pages; DNS-rebinding pages carry the attacker's host name.
fn own_origins(port: u16) -> [String; 3] {
    [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ]
}

/// `res`, saying the connection closes after it (see the module doc).
pub(crate) fn closing(mut res: Response) -> Response {
    res.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

fn plain(status: StatusCode, message: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response()
}

/// JSON-RPC codes of the gate's refusals. MCP 2026-07-28 assigns none for these: it reserves
/// −32020…−32099 for its own codes, calls −32000…−32019 legacy (new implementations should not
/// use them), and asks that other codes be allocated outside JSON-RPC's reserved range. These
/// are Sluice's, echoing the HTTP status; `data.code` (`unauthorized`, `rate_limited`,
/// `paused`, `stopped`) stays the stable, machine-readable reason.
pub mod rpc_code {
    pub const UNAUTHORIZED: i32 = -31401;
    pub const RATE_LIMITED: i32 = -31429;
    pub const UNAVAILABLE: i32 = -31503;
}

/// The most of a refused request's body read to find its JSON-RPC id: a refusal is not worth
/// buffering megabytes for, least of all for a client without a credential. A larger body is
/// answered with `id: null`, as the spec allows when the id cannot be read.
const REFUSAL_PEEK_BYTES: usize = 64 * 1024;

/// The longest a refusal waits for the body to read its id; a slower body gets `id: null`. A
/// refused request holds no request slot, so it must not hold its connection for the whole
/// [`BODY_TIMEOUT`] either: a flooding token's refused requests would then fill the connection
/// cap, which every token shares.
const REFUSAL_BODY_WAIT: Duration = Duration::from_secs(2);

/// A request the gate refuses with a JSON-RPC error: why, and how to say it.
struct Refused {
    status: StatusCode,
    rpc_code: i32,
    failure: Failure,
    retry_after: Option<Duration>,
}

impl Refused {
    fn unauthorized(message: &str) -> Refused {
        Refused {
            status: StatusCode::UNAUTHORIZED,
            rpc_code: rpc_code::UNAUTHORIZED,
            failure: Failure::new(ErrorCode::Unauthorized, message),
            retry_after: None,
        }
    }

    fn too_many(wait: Duration, message: String) -> Refused {
        Refused {
            status: StatusCode::TOO_MANY_REQUESTS,
            rpc_code: rpc_code::RATE_LIMITED,
            failure: Failure::new(ErrorCode::RateLimited, message),
            retry_after: Some(wait),
        }
    }

    /// AI access paused or stopped, by the user or by the token itself.
    fn unavailable(failure: Failure) -> Refused {
        Refused {
            status: StatusCode::SERVICE_UNAVAILABLE,
            rpc_code: rpc_code::UNAVAILABLE,
            failure,
            retry_after: None,
        }
    }

    /// The refusal for a request whose body has not been read: reads a bounded part of it,
    /// for a bounded time, to answer with the request's own id.
    async fn answer_unread(self, body: Body) -> Response {
        let id = match tokio::time::timeout(
            REFUSAL_BODY_WAIT,
            axum::body::to_bytes(body, REFUSAL_PEEK_BYTES),
        )
        .await
        {
            Ok(Ok(bytes)) => Peek::of(&bytes).ok().and_then(|p| p.id),
            _ => None,
        };
        self.answer(id)
    }

    /// A JSON-RPC error body with Sluice's stable code in `data.code`, echoing `id` when the
    /// request's could be read.
    fn answer(self, id: Option<serde_json::Value>) -> Response {
        let body = json!({
            "jsonrpc": "2.0",
            "id": id.unwrap_or(serde_json::Value::Null),
            "error": {
                "code": self.rpc_code,
                "message": self.failure.message,
                "data": { "code": self.failure.code.as_str() },
            },
        });
        let mut res = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            // A plain Bearer challenge with no resource metadata keeps clients on their
            // configured header instead of starting an OAuth flow.
            res.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(r#"Bearer realm="sluice""#),
            );
        }
        if let Some(wait) = self.retry_after {
            let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                res.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        res
    }
}

/// Exactly one `Authorization: Bearer <token>` header; anything else is no credential at all.
fn bearer(headers: &HeaderMap) -> Result<&str, &'static str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let value =
        values.next().ok_or("missing Authorization header; send `Authorization: Bearer slc_…`")?;
    if values.next().is_some() {
        return Err("more than one Authorization header");
    }
    let value = value.to_str().map_err(|_| "malformed Authorization header")?;
    let (scheme, token) = value.split_once(' ').ok_or("malformed Authorization header")?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err("unsupported authorization scheme; use Bearer");
    }
    let token = token.trim();
    if token.is_empty() {
        return Err("empty bearer token");
    }
    Ok(token)
}

/// Whether the request's media type (parameters aside) is `want`.
pub(crate) fn content_type_is(headers: &HeaderMap, want: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(want))
}

/// The gate every request passes before rmcp: the header policy, then admission (token,
/// limits, a readable body, access), then the request itself, then the audit record of a
/// protocol request.
async fn guard(State(gate): State<Arc<Gate>>, req: Request, next: Next) -> Response {
    if let Some(refused) = header_refusal(&gate, &req) {
        return closing(refused);
    }
    let Admitted { caller, permit, mut parts, bytes, peek, direct } = match admit(&gate, req).await
    {
        Ok(admitted) => admitted,
        Err(mut refused) => {
            if let Some(challenge) = &gate.remote
                && refused.status() == StatusCode::UNAUTHORIZED
            {
                refused.headers_mut().insert(header::WWW_AUTHENTICATE, challenge.clone());
            }
            return closing(refused);
        }
    };
    parts.extensions.insert::<Caller>(caller.clone());
    let started = std::time::Instant::now();
    let may_ask = peek.method.as_deref() == Some("tools/call")
        && peek.tool.as_deref().is_some_and(|tool| !gate.server.is_read_only(tool));
    let res = match direct {
        Some((direct, call)) => direct.serve(call, parts).await,
        None if may_ask => {
            gate.streamed.handle(Request::from_parts(parts, Body::from(bytes))).await.map(Body::new)
        }
        None => next.run(Request::from_parts(parts, Body::from(bytes))).await,
    };
    drop(permit);
    audit_protocol_request(&gate, &caller, &peek, res.status(), started);
    res
}

/// The header policy: what a request must look like before its credential is even read (the
/// Host, the browser headers, no upgrade, no query string, a JSON POST). Returns the
/// plain-text refusal of a request that breaks it.
fn header_refusal(gate: &Gate, req: &Request) -> Option<Response> {
    let headers = req.headers();

    // DNS rebinding (HS-02): the Host must name loopback and our port exactly.
    let host_ok = headers.get_all(header::HOST).iter().count() == 1
        && headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| gate.hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(h)));
    if !host_ok {
        return Some(plain(StatusCode::FORBIDDEN, "forbidden: unexpected Host header"));
    }
    // Browser pages (HS-03, HS-05): only Sluice's own origin, compared exactly (no prefix,
    // suffix or subdomain matching), and no cross-site fetch or protocol upgrade.
    let mut origins = headers.get_all(header::ORIGIN).iter();
    if let Some(origin) = origins.next() {
        let own = origin
            .to_str()
            .is_ok_and(|o| gate.origins.iter().any(|allowed| allowed.eq_ignore_ascii_case(o)));
        if !own || origins.next().is_some() {
            return Some(plain(
                StatusCode::FORBIDDEN,
                "forbidden: browser origins may not call Sluice",
            ));
        }
    }
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && site != "none"
        && site != "same-origin"
    {
        return Some(plain(StatusCode::FORBIDDEN, "forbidden: cross-site request"));
    }
    if headers.contains_key(header::UPGRADE) {
        return Some(plain(StatusCode::FORBIDDEN, "forbidden: protocol upgrades are not served"));
    }
    if req.uri().query().is_some_and(|q| !q.is_empty()) {
        // Credentials only travel in the Authorization header, never in the URL (TA-01).
        return Some(plain(StatusCode::BAD_REQUEST, "query strings are not accepted on /mcp"));
    }
    match *req.method() {
        Method::POST => {
            if !content_type_is(headers, "application/json") {
                return Some(plain(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "requests must have Content-Type: application/json",
                ));
            }
        }
        // Stateless server: no standalone SSE stream and no session to delete.
        _ => {
            let mut res = plain(StatusCode::METHOD_NOT_ALLOWED, "use POST");
            res.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
            return Some(res);
        }
    }
    None
}

/// A request let in: who sent it, its slot under the token's concurrency limit (held until the
/// answer), and its body, read once, with what the gate learned from it.
struct Admitted<'a> {
    caller: Caller,
    permit: tokio::sync::OwnedSemaphorePermit,
    parts: axum::http::request::Parts,
    bytes: bytes::Bytes,
    peek: Peek,
    /// The call, when the direct path serves it (with the path).
    direct: Option<(&'a Direct, Call)>,
}

/// Admission: a valid bearer token within its limits, a body that is one JSON-RPC message,
/// and access (pause, stop) as loaded. Refusals are JSON-RPC errors carrying the request's id
/// when it could be read.
async fn admit(gate: &Gate, req: Request) -> Result<Admitted<'_>, Response> {
    let caller = match authenticate(gate, req.headers()) {
        Ok(caller) => caller,
        Err(refused) => return Err(refused.answer_unread(req.into_body()).await),
    };
    let permit = match gate.limiter.admit(&caller.limit_key()) {
        Ok(permit) => permit,
        Err(refusal) => {
            let (wait, message) = match refusal {
                Refusal::Rate(wait) => {
                    (wait, format!("rate limit for token {:?} reached", caller.label))
                }
                Refusal::Concurrency => (
                    Duration::from_secs(1),
                    format!("too many requests in flight for token {:?}", caller.label),
                ),
            };
            return Err(Refused::too_many(wait, message).answer_unread(req.into_body()).await);
        }
    };

    // Read the (bounded) body once to learn the JSON-RPC method and id: refusals then carry the
    // client's id, and protocol requests other than tool calls reach the audit log too.
    let (parts, body) = req.into_parts();
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, MAX_BODY_BYTES))
        .await
    {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => return Err(plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large")),
        Err(_) => return Err(plain(StatusCode::REQUEST_TIMEOUT, "request body too slow")),
    };
    // A body that is not one well-formed JSON-RPC message is answered here, as the spec asks
    // (400 and a JSON-RPC error), and never reaches rmcp: in particular a member given twice
    // (`method`, `id`, `params`) is refused instead of being read one way here and another
    // way there.
    // A call the direct path takes was parsed whole, more strictly than the peek reads (every
    // member typed, none twice, none unknown): what the gate needs is read from it.
    let direct = gate
        .direct
        .as_ref()
        .and_then(|direct| Some((direct, direct.accepts(&parts.headers, &bytes)?)));
    let peek = match &direct {
        Some((_, call)) => call.peek(),
        None => match Peek::of(&bytes) {
            Ok(peek) => peek,
            Err(malformed) => return Err(malformed.answer()),
        },
    };
    // `authenticate` refreshed the engine's state at the start of this request; a tool call
    // checks again right before it acts, reading the store again if the call waited since
    // (`Engine::check_access_for`).
    if let Err(failure) = gate.engine.check_access_as_loaded() {
        return Err(Refused::unavailable(failure).answer(peek.id));
    }
    Ok(Admitted { caller, permit, parts, bytes, peek, direct })
}

/// Tool calls and listings are audited by the server with their details; other requests
/// (initialize, discover, ping, …) are recorded here. Notifications are not requests.
fn audit_protocol_request(
    gate: &Gate,
    caller: &Caller,
    peek: &Peek,
    status: StatusCode,
    started: std::time::Instant,
) {
    if peek.id.is_some()
        && let Some(method) = peek.method.as_deref()
        && method != "tools/call"
        && method != "tools/list"
    {
        let ok = status.is_success();
        gate.engine.audit_request(RequestAudit {
            caller,
            action: method,
            project_ref: None,
            outcome: if ok { AuditOutcome::Ok } else { AuditOutcome::Error },
            error_code: (!ok).then(|| format!("http:{}", status.as_u16())).as_deref(),
            duration_ms: started.elapsed().as_millis() as u64,
            params: None,
            durability: Durability::Soon,
        });
    }
}

/// The caller a request's bearer token names, or why there is none. Failed authentications are
/// rate-limited across all tokens; a token that paused itself is not a failed authentication.
fn authenticate(gate: &Gate, headers: &HeaderMap) -> Result<Caller, Refused> {
    let failed = |message: &str| match gate.limiter.auth_failed() {
        Err(wait) => Refused::too_many(wait, "too many failed authentications; slow down".into()),
        Ok(()) => Refused::unauthorized(message),
    };
    let token = bearer(headers).map_err(failed)?;
    let authenticated = match gate.remote {
        Some(_) => gate.engine.authenticate_remote(token),
        None => gate.engine.authenticate(token),
    };
    match authenticated {
        Ok(caller) => Ok(caller),
        // A valid token that paused itself (`drop_privileges`) is refused like AI access
        // paused by the user: not a failed authentication, which would slow other tokens.
        Err(failure) if failure.code == ErrorCode::Paused => Err(Refused::unavailable(failure)),
        Err(failure) => {
            tracing::info!(code = %failure.code, "rejected a bearer token");
            Err(failed(&failure.message))
        }
    }
}
