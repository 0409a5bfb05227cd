//! The peer of `cargo xtask bench http`: a bare rmcp server, as its README builds one, with the
//! one tool the bench calls and only a bearer check in front, served stateless with JSON answers
//! like Sluice. Its `read_file` answers what Sluice's does — the same structured result (text,
//! line range and count, size, modification time, BLAKE3 hash) through rmcp's `Json`, so the
//! answers are the same size — but with none of Sluice's guards: no token store, scope, pause,
//! limits, containment, shield, redaction or audit. It is the floor Sluice is held to.
//!
//! `bare_rmcp <folder> <port> <token>`; prints `ready` once it listens.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::IntoResponse;
use axum::serve::ListenerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};

#[derive(Clone)]
struct Bare {
    folder: Arc<PathBuf>,
    tool_router: ToolRouter<Bare>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReadArgs {
    /// The file, relative to the folder.
    path: String,
}

/// The fields of Sluice's `read_file` result, filled in the plain way.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct ReadOutput {
    path: String,
    content: String,
    encoding: String,
    lossy: bool,
    redacted: bool,
    total_lines: u64,
    start_line: u64,
    end_line: u64,
    truncated: bool,
    size: u64,
    modified: Option<String>,
    hash: String,
}

#[tool_router]
impl Bare {
    #[tool(description = "Read a text file.", annotations(read_only_hint = true))]
    async fn read_file(
        &self,
        Parameters(args): Parameters<ReadArgs>,
    ) -> Result<Json<ReadOutput>, ErrorData> {
        let path = self.folder.join(&args.path);
        let failed = |e: std::io::Error| ErrorData::invalid_params(e.to_string(), None);
        let raw = tokio::fs::read(&path).await.map_err(failed)?;
        let meta = tokio::fs::metadata(&path).await.map_err(failed)?;
        let content = String::from_utf8_lossy(&raw).into_owned();
        let lines = content.lines().count() as u64;
        Ok(Json(ReadOutput {
            path: args.path,
            lossy: std::str::from_utf8(&raw).is_err(),
            content,
            encoding: "utf-8".into(),
            redacted: false,
            total_lines: lines,
            start_line: 1,
            end_line: lines,
            truncated: false,
            size: meta.len(),
            modified: meta
                .modified()
                .ok()
                .map(|t| humantime::format_rfc3339_seconds(t).to_string()),
            hash: format!("blake3:{}", blake3::hash(&raw).to_hex()),
        }))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(folder), Some(port), Some(token)) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: bare_rmcp <folder> <port> <token>");
        std::process::exit(2);
    };
    let port: u16 = port.parse().map_err(std::io::Error::other)?;
    let bare = Bare { folder: Arc::new(folder.into()), tool_router: Bare::tool_router() };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts([format!("127.0.0.1:{port}")]);
    let service = StreamableHttpService::new(
        move || Ok(bare.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let expected: Arc<str> = format!("Bearer {token}").into();
    let app = axum::Router::new().route_service("/mcp", service).layer(middleware::from_fn(
        move |req: Request, next: Next| {
            let expected = expected.clone();
            async move {
                let ok = req
                    .headers()
                    .get(header::AUTHORIZATION)
                    .is_some_and(|v| v.as_bytes() == expected.as_bytes());
                if ok { next.run(req).await } else { StatusCode::UNAUTHORIZED.into_response() }
            }
        },
    ));
    // TCP_NODELAY, as Sluice sets it.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    println!("ready");
    axum::serve(listener, app).await
}
