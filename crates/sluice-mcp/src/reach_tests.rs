//! The remote front's rate limits, over real connections to `remote_router`: every token a
//! hosted client holds counts against one allowance (neither a refresh nor a second grant
//! brings a fresh burst), and one client's flood never slows another client or a local token.

use std::sync::Arc;

use sluice_core::{AccessMode, ExecMode};
use sluice_engine::reach::{
    AuthorizationState, AuthorizeParams, AuthorizeRefusal, ReachRequest, TokenParams,
};
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
    let client =
        engine.register_oauth_client(Some(name), &[CALLBACK.to_owned()], None, None).unwrap();
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
    let id = engine.begin_authorization(&params, None).unwrap().id;
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

fn reach_with(tunnel: Option<sluice_engine::reach::Tunnel>) -> sluice_engine::reach::Reach {
    sluice_engine::reach::Reach {
        public_url: format!("https://{HOST}"),
        learned: false,
        tunnel,
        port: 1,
        projects: Vec::new(),
        write: false,
        redirects: Vec::new(),
    }
}

#[test]
fn a_source_is_the_address_the_tunnel_reports_and_nothing_a_client_can_choose_alone() {
    use axum::http::HeaderMap;
    use sluice_engine::reach::Tunnel;
    let headers = |pairs: &[(&'static str, &str)]| {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    };
    let own = reach_with(None);
    let cloudflare = reach_with(Some(Tunnel::Cloudflared));
    // The last X-Forwarded-For address is the tunnel's; what the client put before it is not.
    let forwarded = headers(&[("x-forwarded-for", "10.0.0.1, 203.0.113.9")]);
    assert_eq!(super::source_of(&own, &forwarded).as_deref(), Some("203.0.113.9"));
    let two = headers(&[("x-forwarded-for", "10.0.0.1"), ("x-forwarded-for", "198.51.100.7")]);
    assert_eq!(super::source_of(&own, &two).as_deref(), Some("198.51.100.7"));
    // One IPv6 host holds a whole /64.
    let v6 = headers(&[("x-forwarded-for", "2001:db8:1:2:aaaa::1")]);
    assert_eq!(super::source_of(&own, &v6).as_deref(), Some("2001:db8:1:2::/64"));
    // Behind cloudflared only Cloudflare's own header counts, and only once.
    let cf = headers(&[("cf-connecting-ip", "192.0.2.4"), ("x-forwarded-for", "203.0.113.9")]);
    assert_eq!(super::source_of(&cloudflare, &cf).as_deref(), Some("192.0.2.4"));
    assert_eq!(super::source_of(&own, &cf).as_deref(), Some("203.0.113.9"));
    let cf_twice = headers(&[("cf-connecting-ip", "192.0.2.4"), ("cf-connecting-ip", "192.0.2.5")]);
    assert_eq!(super::source_of(&cloudflare, &cf_twice), None);
    // Nothing parseable: no source, only the shared budgets.
    for bad in [headers(&[]), headers(&[("x-forwarded-for", "evil")])] {
        assert_eq!(super::source_of(&own, &bad), None);
    }
}

#[test]
fn a_flood_from_one_source_never_evicts_or_locks_out_another_sources_request() {
    use sluice_engine::reach::{MAX_PENDING_PER_SOURCE, MAX_UNPROVEN_PER_SOURCE};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("demo")).unwrap();
    let engine =
        Engine::open(&EngineConfig::new(root.join("data"), SecretPreference::FileOnly)).unwrap();
    engine
        .add_project(&root.join("demo"), Some("demo"), AccessMode::ReadOnly, ExecMode::Off)
        .unwrap();
    engine
        .set_reach(&ReachRequest {
            url: Some(format!("https://{HOST}")),
            port: 1,
            projects: vec!["demo".into()],
            ..ReachRequest::default()
        })
        .unwrap();
    let ask = |client: &str, source: &str| {
        let params = AuthorizeParams {
            response_type: Some("code".into()),
            client_id: Some(client.to_owned()),
            redirect_uri: Some(CALLBACK.into()),
            code_challenge: Some(CHALLENGE.into()),
            code_challenge_method: Some("S256".into()),
            ..AuthorizeParams::default()
        };
        engine.begin_authorization(&params, Some(source))
    };
    let register = |name: &str, source: &str| {
        engine.register_oauth_client(Some(name), &[CALLBACK.to_owned()], None, Some(source))
    };
    let person = "198.51.100.7";
    let stranger = "203.0.113.66";
    let mine = register("Claude", person).unwrap();
    let waiting = ask(&mine.id, person).unwrap();
    // The stranger registers a hundred clients and asks to connect with each, twice.
    let mut theirs = Vec::new();
    for n in 0..100 {
        let client = register(&format!("Claude {n}"), stranger).unwrap();
        for _ in 0..2 {
            ask(&client.id, stranger).unwrap();
        }
        theirs.push(client.id);
    }
    // The person's registration and request are still there, and the stranger holds only
    // its own small share: its oldest registrations went, with their requests.
    let pending = engine.oauth_requests().unwrap();
    assert!(pending.iter().any(|r| r.id == waiting.id), "{pending:?}");
    assert_eq!(pending.len(), 1 + MAX_PENDING_PER_SOURCE);
    assert_eq!(engine.oauth_request(&waiting.id).unwrap().unwrap().client_id, mine.id);
    let dropped = |id: &str| matches!(ask(id, stranger), Err(AuthorizeRefusal::Page(_)));
    assert!(theirs[..100 - MAX_UNPROVEN_PER_SOURCE].iter().all(|id| dropped(id)));
    // The person's assistant can still register (a retry, another tab).
    register("Claude", person).unwrap();
    // Sources holding one request each fill the rest; then the stranger's second gives way
    // to a new source; once everyone holds one, a new source is refused and nobody's
    // waiting request is ended for it.
    for n in 0..6 {
        let source = format!("192.0.2.{n}");
        let c = register("Other", &source).unwrap();
        ask(&c.id, &source).unwrap();
    }
    assert_eq!(engine.oauth_requests().unwrap().len(), sluice_engine::reach::MAX_PENDING);
    let late = register("Late", "192.0.2.99").unwrap();
    assert!(matches!(ask(&late.id, "192.0.2.99"), Err(AuthorizeRefusal::Redirect(_))));
    assert!(engine.oauth_requests().unwrap().iter().any(|r| r.id == waiting.id));
}
