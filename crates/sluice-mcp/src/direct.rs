//! The direct path for read-only tool calls over HTTP.
//!
//! rmcp's stateless Streamable HTTP service builds a whole service for every request — a serve
//! loop, its channels, three spawned tasks — to run one handler and hand back one message; for a
//! 4 KiB `read_file` that was about a sixth of the server's CPU per call. Here a plain JSON-RPC
//! `tools/call` of a read-only tool, in the stateless protocol, goes through the very same
//! dispatch — rmcp's [`Service::handle_request`], then [`SluiceServer`]'s `call_tool` with its
//! access check and audit record — on the gate's task, and the answer is framed as rmcp frames it
//! in JSON-response mode (status 200, `application/json`, the same serialization).
//!
//! The gate sends a request here only after all of its own checks, which include rmcp's Host and
//! Origin checks (the gate accepts only exact spellings of the same allowed values).
//! [`Direct::accepts`] takes a request only when rmcp's HTTP layer would pass it straight to the
//! handler; anything else — a parameterized `Accept`, an unknown protocol version, `_meta` beyond
//! 2026-07-28's required keys, an unknown field, a tool that is not read-only, a body it cannot
//! parse — goes to rmcp unchanged, so every HTTP-level refusal and parse error stays rmcp's own.
//!
//! Two protocol shapes are served: a version before 2026-07-28 with no `_meta` at all, and a
//! 2026-07-28 (or later known) request whose `MCP-Protocol-Version` header and `_meta` agree, whose
//! `_meta` holds the required `protocolVersion` and `clientCapabilities` (and at most
//! `clientInfo`), and whose standard headers are plain and match the body: one `Mcp-Method:
//! tools/call`, one `Mcp-Name` equal to the tool's name, no `Mcp-Param-*` (Sluice's tools annotate
//! none). rmcp's handler then sees the same request `_meta` in its context as rmcp's serve loop
//! would put there, and makes the same decisions on it.

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, JsonObject, JsonRpcVersion2_0,
    ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{RequestContext, RxJsonRpcMessage, TxJsonRpcMessage, serve_directly};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleServer, Service};
use serde::Deserialize;

use crate::peek::Peek;
use crate::server::SluiceServer;

/// The largest body the direct path looks at. Read-only calls carry a project, paths, globs and
/// patterns; larger bodies are changes (file contents, patches), which go to rmcp anyway, and
/// parsing them here first would only add a pass over them.
const MAX_BODY_BYTES: usize = 64 * 1024;

pub(crate) struct Direct {
    server: SluiceServer,
    /// The peer every direct call's context carries (see [`Direct::peer`]).
    peer: OnceLock<Peer<RoleServer>>,
}

/// A `tools/call` request in exactly the shape the direct path serves. Any other field —
/// `_meta` (progress tokens, per-request protocol negotiation), input responses, request state —
/// fails the parse, and rmcp gets the request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Call {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    method: String,
    params: CallParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
}

/// The `_meta` keys a 2026-07-28 request may carry on the direct path: the two every such request
/// must and `clientInfo`. Anything else (a progress token, a log level) asks for something only
/// rmcp's serve loop does.
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

impl Call {
    /// What the gate reads of a request, from the parsed call.
    pub(crate) fn peek(&self) -> Peek {
        Peek {
            method: Some(self.method.clone()),
            id: serde_json::to_value(&self.id).ok(),
            tool: Some(self.params.name.clone()),
        }
    }
}

impl Direct {
    pub(crate) fn new(server: SluiceServer) -> Direct {
        Direct { server, peer: OnceLock::new() }
    }

    /// The call in `body`, if this path serves it exactly as rmcp would.
    pub(crate) fn accepts(&self, headers: &HeaderMap, body: &[u8]) -> Option<Call> {
        if body.len() > MAX_BODY_BYTES || !accepts_json_and_sse(headers) {
            return None;
        }
        let version = stateless_version(headers)?;
        let call: Call = serde_json::from_slice(body).ok()?;
        let shaped = match (version, &call.params.meta) {
            (Version::Plain, None) => true,
            (Version::PerRequest(version), Some(meta)) => {
                per_request_meta(meta, version) && standard_headers(headers, &call.params.name)
            }
            _ => false,
        };
        (shaped && call.method == "tools/call" && self.server.is_read_only(&call.params.name))
            .then_some(call)
    }

    /// Runs `call` (`parts` are the request's HTTP parts, with the gate's `Caller` in their
    /// extensions, as rmcp hands them to handlers) and answers it.
    pub(crate) async fn serve(&self, call: Call, parts: Parts) -> Response {
        let mut context = RequestContext::new(call.id.clone(), self.peer());
        context.extensions.insert(parts);
        // rmcp's serve loop moves a request's `_meta` into its context the same way.
        if let Some(meta) = call.params.meta {
            context.meta = meta;
        }
        // rmcp cancels a request's token when its client goes away mid-call; a dropped
        // connection drops this future, and the guard does the same.
        let cancel_on_drop = context.ct.clone().drop_guard();
        let mut params = CallToolRequestParams::new(call.params.name);
        params.arguments = call.params.arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let result = self.server.handle_request(request, context).await;
        cancel_on_drop.disarm();
        let message = match result {
            Ok(result) => ServerJsonRpcMessage::response(result, call.id),
            Err(error) => {
                // rmcp's serve loop logs this too.
                tracing::warn!(id = %call.id, code = error.code.0, "tool call failed");
                ServerJsonRpcMessage::error(error, Some(call.id))
            }
        };
        match serde_json::to_vec(&message) {
            Ok(body) => {
                let mut res = Response::new(Body::from(body));
                res.headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                res
            }
            Err(err) => {
                tracing::error!(%err, "tool call response did not serialize");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response()
            }
        }
    }

    /// rmcp makes a [`Peer`] only for a running service, so one is made once, for a service whose
    /// transport is closed from the start: its serve loop ends at once, and anything sent through
    /// the peer fails instead of reaching a client. That is sound because only read-only tools
    /// come here, and they never talk to the client mid-call (only changes and commands ask for
    /// approval and report progress while they wait).
    fn peer(&self) -> Peer<RoleServer> {
        self.peer
            .get_or_init(|| {
                serve_directly::<RoleServer, _, _, _, _>(self.server.clone(), Closed, None)
                    .peer()
                    .clone()
            })
            .clone()
    }
}

/// A transport with nothing to receive and nowhere to send.
struct Closed;

impl Transport<RoleServer> for Closed {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Err(std::io::Error::from(std::io::ErrorKind::NotConnected)))
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        std::future::ready(None)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        std::future::ready(Ok(()))
    }
}

/// Whether `Accept` names both JSON and SSE plainly — no parameters, no quoting — so rmcp's own
/// check (which also weighs `q` values) passes. rmcp answers 406 when one is missing.
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { return false };
        if value.contains(['"', ';']) {
            return false;
        }
        for essence in value.split(',').map(str::trim) {
            json |= essence.eq_ignore_ascii_case("application/json");
            sse |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// The protocol shape of a request rmcp would serve statelessly with no HTTP-level rule left to
/// apply here.
#[derive(Debug, PartialEq)]
enum Version<'a> {
    /// No `MCP-Protocol-Version` (rmcp assumes 2025-03-26), or exactly one naming a version it
    /// knows from before 2026-07-28.
    Plain,
    /// Exactly one naming a version it knows, 2026-07-28 or later: per-request negotiation and
    /// the standard headers.
    PerRequest(&'a str),
}

fn stateless_version(headers: &HeaderMap) -> Option<Version<'_>> {
    let mut values = headers.get_all("mcp-protocol-version").iter();
    let Some(value) = values.next() else { return Some(Version::Plain) };
    if values.next().is_some() {
        return None;
    }
    let v = value.to_str().ok()?;
    if !ProtocolVersion::KNOWN_VERSIONS.iter().any(|known| known.as_str() == v) {
        return None;
    }
    // ISO dates compare as text; both rules begin with the same version today.
    let standard = ProtocolVersion::STANDARD_HEADERS.as_str();
    let no_initialize = ProtocolVersion::NO_INITIALIZE.as_str();
    if v < standard && v < no_initialize {
        Some(Version::Plain)
    } else if v >= standard && v >= no_initialize {
        Some(Version::PerRequest(v))
    } else {
        None
    }
}

/// Whether a 2026-07-28 request's `_meta` is complete and well formed by rmcp's own reading (a
/// malformed one is answered 400 by rmcp's HTTP layer), names the header's version, and asks for
/// nothing beyond the call.
fn per_request_meta(meta: &RequestMetaObject, version: &str) -> bool {
    meta.keys().all(|key| {
        RequestMetaObject::DRAFT_REQUIRED_KEYS.contains(&key.as_str()) || key == META_CLIENT_INFO
    }) && meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty()
        && meta.protocol_version().is_some_and(|v| v.as_str() == version)
}

/// Whether the standard headers of a `tools/call` of `tool` are there exactly once each, plain
/// (not Base64-encoded) and equal to the body; and no `Mcp-Param-*` header is sent.
fn standard_headers(headers: &HeaderMap, tool: &str) -> bool {
    let only = |name: &str, want: &str| {
        let mut values = headers.get_all(name).iter();
        values.next().is_some_and(|v| v.as_bytes() == want.as_bytes()) && values.next().is_none()
    };
    !tool.starts_with("=?")
        && only("mcp-method", "tools/call")
        && only("mcp-name", tool)
        && !headers.keys().any(|name| name.as_str().starts_with("mcp-param-"))
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
