//! The remote front's rate limits, over real connections to `remote_router`: every token a
//! hosted client holds counts against one allowance (neither a refresh nor a second grant
//! brings a fresh burst), and one client's flood never slows another client or a local token.

use std::sync::Arc;

use sluice_core::{AccessMode, ExecMode};
use sluice_engine::reach::{AuthorizationState, AuthorizeParams, ReachRequest, TokenParams};
use sluice_engine::{Engine, EngineConfig, SecretPreference};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::remote_router;
use crate::http::{Front, bind, build_router, serve};
use crate::limits::Limits;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K9uhvlrWXzrbDhzcIv0L6hOdq0";
const CHALLENGE: &str = "71sBKApreKw_UZi7L3qzh2gmzhu2A3KNpyV1F7ko0B8";
const CALLBACK: &str = "https://claude.ai/api/mcp/auth_callback";
const HOST: &str = "sluice.example.com";
/// A burst of this many, then (practically) nothing: the rate is one request per 1000 s.
const BURST: usize = 4;

/// A client registers, the person approves, the code is exchanged: (client, access, refresh).
fn connect(engine: &Engine, name: &str) -> (String, String, String) {
    let client = engine.register_oauth_client(Some(name), &[CALLBACK.to_owned()], None).unwrap();
    let (access, refresh) = authorize(engine, &client.id);
    (client.id, access, refresh)
}

/// `client` asks to connect (again), the person approves: (access, refresh) of a new grant.
fn authorize(engine: &Engine, client: &str) -> (String, String) {
    let params = AuthorizeParams {
        response_type: Some("code".into()),
        client_id: Some(client.to_owned()),
        redirect_uri: Some(CALLBACK.into()),
        code_challenge: Some(CHALLENGE.into()),
        code_challenge_method: Some("S256".into()),
        ..AuthorizeParams::default()
    };
    let id = engine.begin_authorization(&params).unwrap().id;
    engine.decide_oauth_request(&id, true).unwrap();
    let AuthorizationState::Redirect(to) = engine.authorization_state(&id) else {
        panic!("an approved request redirects with a code")
    };
    let code = to.split("code=").nth(1).unwrap().split('&').next().unwrap().to_owned();
    let t = engine
        .oauth_token(&TokenParams {
            grant_type: Some("authorization_code".into()),
            code: Some(code),
            redirect_uri: Some(CALLBACK.into()),
            client_id: Some(client.to_owned()),
            code_verifier: Some(VERIFIER.into()),
            ..TokenParams::default()
        })
        .unwrap();
    (t.access_token, t.refresh_token)
}

/// `tools/list` with `token` on a fresh connection; the HTTP status.
async fn list(port: u16, host: &str, token: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: \
         application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8_lossy(&raw);
    raw.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

async fn statuses(port: u16, host: &str, token: &str, n: usize) -> Vec<u16> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(list(port, host, token).await);
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_client_has_one_allowance_whatever_tokens_it_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("demo")).unwrap();
    let engine = Arc::new(
        Engine::open(&EngineConfig::new(root.join("data"), SecretPreference::FileOnly)).unwrap(),
    );
    engine
        .add_project(&root.join("demo"), Some("demo"), AccessMode::ReadOnly, ExecMode::Off)
        .unwrap();
    let (_, local) = engine.create_token("local", None, None).unwrap();
    let reach = engine
        .set_reach(&ReachRequest {
            url: Some(format!("https://{HOST}")),
            port: 1,
            projects: vec!["demo".into()],
            ..ReachRequest::default()
        })
        .unwrap();
    let limits = Limits { rate_per_sec: 0.001, burst: BURST as f64, ..Limits::default() };
    let stop = CancellationToken::new();
    let remote = bind(0).await.unwrap();
    let remote_port = remote.local_addr().unwrap().port();
    tokio::spawn(serve(
        remote,
        remote_router(engine.clone(), &reach, limits, stop.clone()),
        stop.clone(),
    ));
    let local_listener = bind(0).await.unwrap();
    let local_port = local_listener.local_addr().unwrap().port();
    let front = Front::Local { port: local_port };
    let router = build_router(engine.clone(), front, limits, stop.clone(), true);
    tokio::spawn(serve(local_listener, router, stop.clone()));

    let (a, a1, a_refresh) = connect(&engine, "Client A");
    let (_, b1, _) = connect(&engine, "Client B");
    // A spends its burst, then is refused.
    let spent = statuses(remote_port, HOST, &a1, BURST + 1).await;
    assert_eq!(spent, [vec![200; BURST], vec![429]].concat());
    // A refresh rotates A's token; the new one draws on the same, spent allowance.
    let a2 = engine
        .oauth_token(&TokenParams {
            grant_type: Some("refresh_token".into()),
            refresh_token: Some(a_refresh),
            client_id: Some(a.clone()),
            ..TokenParams::default()
        })
        .unwrap()
        .access_token;
    assert_ne!(a2, a1);
    assert_eq!(list(remote_port, HOST, &a2).await, 429, "a refresh is no fresh burst");
    // Nor is asking to connect again: a second grant to A shares A's allowance.
    let (a3, _) = authorize(&engine, &a);
    assert_eq!(list(remote_port, HOST, &a3).await, 429, "a second grant is no fresh burst");
    // Another client, and a local token, are untouched by A's flood.
    assert_eq!(statuses(remote_port, HOST, &b1, BURST).await, vec![200; BURST]);
    let local_host = format!("127.0.0.1:{local_port}");
    assert_eq!(statuses(local_port, &local_host, &local, BURST).await, vec![200; BURST]);
    stop.cancel();
}
