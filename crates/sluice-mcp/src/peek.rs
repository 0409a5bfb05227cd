//! What the HTTP gate reads of a request body before anything else: its JSON-RPC method, id
//! and tool ([`Peek`]), or why it is not one JSON-RPC message ([`Malformed`]), answered as the
//! spec asks.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use sluice_core::ErrorCode;

/// The parts of a JSON-RPC message the gate needs.
#[derive(Default)]
pub(crate) struct Peek {
    pub(crate) method: Option<String>,
    pub(crate) id: Option<serde_json::Value>,
    /// The tool a `tools/call` names.
    pub(crate) tool: Option<String>,
}

/// Why a body is not a JSON-RPC message.
pub(crate) enum Malformed {
    /// Not JSON at all (`-32700`).
    NotJson,
    /// JSON, but not one message: a member twice, or of the wrong type (`-32600`).
    Invalid(String),
}

impl Malformed {
    pub(crate) fn answer(self) -> Response {
        let (code, message) = match self {
            Malformed::NotJson => (-32700, "parse error: the body is not JSON".to_owned()),
            Malformed::Invalid(why) => (-32600, format!("invalid request: {why}")),
        };
        let body = json!({
            "jsonrpc": "2.0",
            "id": serde_json::Value::Null,
            "error": { "code": code, "message": message,
                       "data": { "code": ErrorCode::InvalidArgument.as_str() } },
        });
        (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
    }
}

impl Peek {
    pub(crate) fn of(bytes: &[u8]) -> Result<Peek, Malformed> {
        #[derive(serde::Deserialize)]
        struct Msg {
            method: Option<String>,
            id: Option<serde_json::Value>,
            params: Option<Params>,
        }
        #[derive(serde::Deserialize)]
        struct Params {
            name: Option<serde_json::Value>,
        }
        match serde_json::from_slice::<Msg>(bytes) {
            Ok(m) => Ok(Peek {
                method: m.method,
                id: m.id,
                tool: m.params.and_then(|p| p.name?.as_str().map(str::to_owned)),
            }),
            Err(e) if e.is_syntax() || e.is_eof() => Err(Malformed::NotJson),
            // serde names the member and the problem (to the client that sent it).
            Err(e) => Err(Malformed::Invalid(e.to_string())),
        }
    }
}
