//! Attacks on the HTTP surface, tried for real against `sluice serve` (docs/THREATS.md HS-*,
//! TA-01, TA-03, UI-01) plus pause, revocation, expiry and scope taking effect at once.

use serde_json::{Value, json};

use crate::harness::*;

fn setup() -> (Sandbox, Server, String) {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("tester", &[]);
    let server = sb.serve();
    (sb, server, token)
}

#[test]
fn valid_request_works_and_answers_json() {
    let (_sb, server, token) = setup();
    let r = post(server.port, &bearer(&token), &initialize_body());
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(v["result"]["serverInfo"]["name"], "sluice");
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn hs02_dns_rebinding_hosts_are_refused() {
    let (_sb, server, token) = setup();
    let port = server.port;
    let body = initialize_body();
    for host in [
        format!("rebind.evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "127.0.0.1".to_owned(),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        format!("localhost.evil.com:{port}"),
    ] {
        let r = raw(
            port,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
                 Authorization: Bearer {token}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
        );
        assert!(r.status == 403 || r.status == 421, "Host {host}: {} {}", r.status, r.body);
    }
    // No Host at all, as HTTP/1.0 allows.
    let r = raw(
        port,
        &format!(
            "POST /mcp HTTP/1.0\r\nContent-Type: application/json\r\nAuthorization: Bearer {token}\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(r.status == 403 || r.status == 400, "no Host: {}", r.status);
    // Two Host headers.
    let r = post(port, &format!("Host: evil.example:{port}\r\n{}", bearer(&token)), &body);
    assert!(r.status == 403 || r.status == 400, "two Hosts: {}", r.status);
    // The three loopback spellings are accepted.
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let r = raw(
            port,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\n{}Connection: close\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                bearer(&token),
                body.len()
            ),
        );
        assert_eq!(r.status, 200, "Host {host}: {}", r.body);
    }
}

#[test]
fn hs03_every_browser_origin_is_refused() {
    let (_sb, server, token) = setup();
    let port = server.port;
    for origin in [
        "https://evil.example".to_owned(),
        "null".to_owned(),
        "http://localhost.evil.com".to_owned(),
        "http://127.0.0.1.evil.com".to_owned(),
        format!("http://localhost:{port}@evil.com"),
        "http://app.localhost.evil.com".to_owned(),
        format!("http://localhost:{}", port.wrapping_add(1)),
        format!("https://127.0.0.1:{port}"),
        format!("http://127.0.0.1:{port}/"),
        format!("http://127.0.0.1.evil.com:{port}"),
        "chrome-extension://abcdefghijklmnop".to_owned(),
        "file://".to_owned(),
    ] {
        let r = post(port, &format!("Origin: {origin}\r\n{}", bearer(&token)), &initialize_body());
        assert_eq!(r.status, 403, "Origin {origin}: {}", r.body);
    }
    // Sluice's own origin (which serves no pages) is the only one accepted, exactly.
    let r = post(
        port,
        &format!("Origin: http://127.0.0.1:{port}\r\n{}", bearer(&token)),
        &initialize_body(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    // Two Origin headers are refused even if one is our own.
    let r = post(
        port,
        &format!(
            "Origin: http://127.0.0.1:{port}\r\nOrigin: https://evil.example\r\n{}",
            bearer(&token)
        ),
        &initialize_body(),
    );
    assert_eq!(r.status, 403);
}

#[test]
fn hs05_simple_cross_site_requests_never_dispatch() {
    let (sb, server, token) = setup();
    let port = server.port;
    let body = call_body("list_projects", json!({}));
    // text/plain (a "simple" request a page can send without preflight).
    for ct in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
    {
        let r = raw(
            port,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {ct}\r\n{}\
                 Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
                bearer(&token),
                body.len()
            ),
        );
        assert_eq!(r.status, 415, "{ct}: {}", r.body);
    }
    for site in ["cross-site", "same-site"] {
        let r = post(port, &format!("Sec-Fetch-Site: {site}\r\n{}", bearer(&token)), &body);
        assert_eq!(r.status, 403, "Sec-Fetch-Site {site}");
    }
    let r = post(
        port,
        &format!("Upgrade: websocket\r\nConnection: Upgrade\r\n{}", bearer(&token)),
        &body,
    );
    assert_eq!(r.status, 403, "websocket upgrade");
    // GET (a page's <img> or navigation) gets nothing.
    let r = raw(
        port,
        &format!("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(r.status, 405);
    // None of these reached a tool: the audit log holds no tools/call (once the server has
    // written what it queued).
    server.stop();
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    assert!(!audit.contains("\"list_projects\""), "{audit}");
}

#[test]
fn ta01_missing_or_malformed_credentials_get_401_and_no_listing() {
    let (_sb, server, token) = setup();
    let port = server.port;
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}).to_string();
    let cases = [
        String::new(),
        "Authorization: Bearer\r\n".to_owned(),
        "Authorization: Bearer    \r\n".to_owned(),
        "Authorization: bearer slc_wrongwrongwrongwrongwrongwrongwrongwrongwrongwrongwr\r\n"
            .to_owned(),
        format!("Authorization: Basic {token}\r\n"),
        format!("Authorization: Bearer {token}x\r\n"),
        format!("Authorization: Bearer {token}\r\nAuthorization: Bearer {token}\r\n"),
        format!("Cookie: token={token}\r\n"),
        format!("Mcp-Session-Id: {token}\r\n"),
    ];
    for headers in cases {
        let r = post(port, &format!("{headers}MCP-Protocol-Version: 2025-11-25\r\n"), &list);
        assert_eq!(r.status, 401, "{headers:?}: {}", r.body);
        assert_eq!(r.header("www-authenticate").as_deref(), Some(r#"Bearer realm="sluice""#));
        assert!(!r.body.contains("read_file"), "a tool listing leaked: {}", r.body);
        // The request's own id comes back, with Sluice's code outside the reserved range.
        refusal(&r.json(), json!(1), -31401, "unauthorized");
    }
    // A large body is not buffered for a client without a credential: its id stays unread.
    let big = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "list_projects", "arguments": {"pad": "a".repeat(100_000)}}});
    let r = post(port, "MCP-Protocol-Version: 2025-11-25\r\n", &big.to_string());
    assert_eq!(r.status, 401, "{}", r.body);
    refusal(&r.json(), Value::Null, -31401, "unauthorized");
    // A token in the query string is refused outright, even a valid one.
    let r = raw(
        port,
        &format!(
            "POST /mcp?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Connection: close\r\nContent-Length: {}\r\n\r\n{list}",
            list.len()
        ),
    );
    assert_eq!(r.status, 400);
    // Asked to keep the connection, a refusal whose body went unread still says it closes it,
    // so a client never sends its next request into a connection about to vanish.
    let keep = format!(
        "POST /mcp?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Connection: keep-alive\r\nContent-Length: {}\r\n\r\n{list}",
        list.len()
    );
    let r = raw(port, &keep);
    assert_eq!((r.status, r.header("connection").as_deref()), (400, Some("close")), "{}", r.head);
    let r = raw(port, &keep.replace(&format!("?token={token}"), ""));
    assert_eq!((r.status, r.header("connection").as_deref()), (401, Some("close")), "{}", r.head);
}

#[test]
fn ui01_no_admin_endpoints_exist() {
    let (_sb, server, token) = setup();
    let port = server.port;
    for path in ["/admin", "/approve", "/projects", "/api/pause", "/", "/mcp/../admin"] {
        let r = raw(
            port,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
                 Authorization: Bearer {token}\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{{}}"
            ),
        );
        assert!(r.status == 404 || r.status == 400, "{path}: {}", r.status);
    }
}

#[test]
fn hs01_listens_on_loopback_only() {
    let (_sb, server, _token) = setup();
    // Every non-loopback address of this machine must refuse the connection.
    let out = std::process::Command::new("hostname").arg("-I").output();
    let addrs: Vec<String> = out
        .map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    for addr in addrs.iter().filter(|a| !a.starts_with("127.")) {
        let target = if addr.contains(':') {
            format!("[{addr}]:{}", server.port)
        } else {
            format!("{addr}:{}", server.port)
        };
        if let Ok(sock) = target.parse::<std::net::SocketAddr>() {
            assert!(
                std::net::TcpStream::connect_timeout(&sock, std::time::Duration::from_secs(2))
                    .is_err(),
                "reachable on {target}"
            );
        }
    }
    // The kernel's socket tables: exactly one listener on the port, on 127.0.0.1, and none in
    // the IPv6 table (a `[::]` wildcard would accept IPv4 too).
    let hex_port = format!(":{:04X}", server.port);
    let listeners = |table: &str| -> Vec<String> {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        // The header line's fields never end with a port.
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                // Field 1: local address:port; field 3: state, 0A = LISTEN.
                (f.len() > 3 && f[1].ends_with(&hex_port) && f[3] == "0A").then(|| f[1].to_owned())
            })
            .collect()
    };
    assert_eq!(listeners("/proc/net/tcp"), vec![format!("0100007F{hex_port}")]);
    assert!(listeners("/proc/net/tcp6").is_empty(), "an IPv6 listener on the port");
}

#[test]
fn pause_revocation_and_scope_apply_on_the_next_request() {
    let (sb, server, token) = setup();
    let port = server.port;
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    sb.ok(&["project", "add", other.to_str().unwrap(), "--name", "other"]);
    let scoped = sb.token("scoped", &["--projects", "other"]);

    let names = |tok: &str| -> Vec<String> {
        let v = call(port, tok, "list_projects", json!({}));
        v["result"]["structuredContent"]["projects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&token), ["demo", "other"]);
    assert_eq!(names(&scoped), ["other"]);
    // The scoped token cannot reach the other project, and hears "not found", not "forbidden".
    let v = call(port, &scoped, "read_file", json!({"project": "demo", "path": "README.md"}));
    assert_eq!(v["result"]["isError"], true);
    assert_eq!(v["result"]["structuredContent"]["code"], "project_not_found");

    // Pause from the CLI while the server runs: the next request gets 503.
    sb.ok(&["pause"]);
    let r = post(port, &bearer(&token), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 503, "{}", r.body);
    let v = r.json();
    refusal(&v, json!(2), -31503, "paused");
    assert!(v["error"]["message"].as_str().unwrap().contains("paused"));
    sb.ok(&["resume"]);
    assert_eq!(names(&token).len(), 2);

    // Revocation from the CLI takes effect on the very next request.
    sb.ok(&["token", "revoke", "tester"]);
    let r = post(port, &bearer(&token), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 401);
    assert!(r.body.contains("revoked"), "{}", r.body);
    refusal(&r.json(), json!(2), -31401, "unauthorized");
}

/// A gate refusal: the request's id echoed, Sluice's JSON-RPC code — never one MCP 2026-07-28
/// reserves (−32020…−32099), forbids (−32002) or calls legacy (−32000…−32019) — and the
/// stable reason in `data.code`.
fn refusal(v: &Value, id: Value, rpc_code: i64, code: &str) {
    assert_eq!(v["id"], id, "{v}");
    let got = v["error"]["code"].as_i64().unwrap();
    assert!(!(-32099..=-32000).contains(&got), "a reserved JSON-RPC code: {v}");
    assert_eq!(got, rpc_code, "{v}");
    assert_eq!(v["error"]["data"]["code"], code, "{v}");
}

#[test]
fn expired_tokens_are_refused() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("short", &["--expires", "1s"]);
    let server = sb.serve();
    // Wait for the expiry by polling the server itself (no sleeps on a guess).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let r = post(server.port, &bearer(&token), &initialize_body());
        if r.status == 401 {
            assert!(r.body.contains("expired"), "{}", r.body);
            break;
        }
        assert_eq!(r.status, 200);
        assert!(std::time::Instant::now() < deadline, "token never expired");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn oversized_bodies_are_refused() {
    let (_sb, server, token) = setup();
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"list_projects","arguments":{{"pad":"{}"}}}}}}"#,
        "a".repeat(9 * 1024 * 1024)
    );
    let r = post(server.port, &bearer(&token), &big);
    assert_eq!(r.status, 413, "{}", &r.body[..r.body.len().min(200)]);
}

#[test]
fn port_in_use_is_reported_clearly() {
    let sb = Sandbox::new();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    let err = sb.err(&["serve", "--port", &port]);
    assert!(err.contains("already in use"), "{err}");
}

#[test]
fn protocol_versions_are_negotiated() {
    let (_sb, server, token) = setup();
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let body = initialize_body().replace("2025-11-25", version);
        let r = post(server.port, &format!("Authorization: Bearer {token}\r\n"), &body);
        assert_eq!(r.status, 200, "{version}: {}", r.body);
        assert_eq!(r.json()["result"]["protocolVersion"], version);
    }
    // An unknown future version gets the newest handshake version the server speaks.
    let body = initialize_body().replace("2025-11-25", "2099-01-01");
    let r = post(server.port, &format!("Authorization: Bearer {token}\r\n"), &body);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn per_token_rate_limit_answers_429_with_retry_after() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("fast", &[]);
    let other = sb.token("calm", &[]);
    let server = sb.serve_with(&["--rate-limit", "0.5", "--burst", "3"]);
    let statuses: Vec<u16> =
        (0..6).map(|_| post(server.port, &bearer(&token), &initialize_body()).status).collect();
    assert_eq!(&statuses[..3], &[200, 200, 200], "{statuses:?}");
    let r = post(server.port, &bearer(&token), &initialize_body());
    assert_eq!(r.status, 429);
    let wait: u64 = r.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!((1..=3).contains(&wait), "{wait}");
    refusal(&r.json(), json!(1), -31429, "rate_limited");
    // Another token has its own budget.
    assert_eq!(post(server.port, &bearer(&other), &initialize_body()).status, 200);
}

/// Two clients sending at once with the same JSON-RPC id never get each other's answers: each
/// token sees only its own project, whichever request finishes first.
#[test]
fn concurrent_requests_with_identical_ids_keep_their_own_answers() {
    let sb = Sandbox::new();
    sb.add_project();
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    sb.ok(&["project", "add", other.to_str().unwrap(), "--name", "other"]);
    let a = sb.token("a", &["--projects", "demo"]);
    let b = sb.token("b", &["--projects", "other"]);
    let server = sb.serve_with(&["--rate-limit", "1000", "--burst", "1000"]);
    let port = server.port;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_projects", "arguments": {}}})
    .to_string();
    let threads: Vec<_> = (0..40)
        .map(|i| {
            let (token, expect) =
                if i % 2 == 0 { (a.clone(), "demo") } else { (b.clone(), "other") };
            let body = body.clone();
            std::thread::spawn(move || {
                let v = post(port, &bearer(&token), &body).json();
                let names: Vec<String> = v["result"]["structuredContent"]["projects"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{v}"))
                    .iter()
                    .map(|p| p["name"].as_str().unwrap().to_owned())
                    .collect();
                assert_eq!(v["id"], 1);
                assert_eq!(names, [expect], "a token got another's answer: {v}");
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// Duplicate and case-variant keys: what is checked is what runs. A duplicated argument is read
/// once, the same way by the guard and the tool (the last one), so a harmless first copy cannot
/// carry a second past the check; a misspelled member is not a member.
#[test]
fn duplicate_and_case_variant_keys_cannot_smuggle_a_second_meaning() {
    let (sb, server, token) = setup();
    std::fs::write(sb.root().join("outside.txt"), "secret-outside").unwrap();
    let port = server.port;
    let send = |body: &str| post(port, &bearer(&token), body);
    // Two `path`s: the allowed one first, an escape second.
    let r = send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file",
           "arguments":{"project":"demo","path":"README.md","path":"../outside.txt"}}}"#,
    );
    assert!(!r.body.contains("secret-outside"), "{}", r.body);
    assert_eq!(r.json()["result"]["structuredContent"]["code"], "path_invalid", "{}", r.body);
    // Two `project`s: one in scope, then one that is not: refused as not found.
    let scoped = sb.token("scoped", &["--projects", "demo"]);
    let other = sb.root().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("x.txt"), "elsewhere-content").unwrap();
    sb.ok(&["project", "add", other.to_str().unwrap(), "--name", "elsewhere"]);
    let r = post(
        port,
        &bearer(&scoped),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file",
           "arguments":{"project":"demo","project":"elsewhere","path":"x.txt"}}}"#,
    );
    assert!(!r.body.contains("elsewhere-content"), "{}", r.body);
    assert_eq!(r.json()["result"]["structuredContent"]["code"], "project_not_found", "{}", r.body);
    // Two `method`s, `id`s or `name`s: refused as an invalid request before anything reads it
    // one way or the other.
    for body in [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","method":"tools/call","params":{"name":"read_file","arguments":{"project":"demo","path":"../outside.txt"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"read_file","arguments":{"project":"demo","path":"README.md"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_projects","name":"read_file","arguments":{"project":"demo","path":"../outside.txt"}}}"#,
    ] {
        let r = send(body);
        assert!(!r.body.contains("secret-outside"), "{body}: {}", r.body);
        let v = r.json();
        assert_eq!(r.status, 400, "{body}: {v}");
        assert_eq!(v["error"]["code"], -32600, "{body}: {v}");
    }
    // A `Method` is not a `method`: not dispatched as a call.
    let r = send(
        r#"{"jsonrpc":"2.0","id":7,"Method":"tools/call","params":{"name":"read_file","arguments":{"project":"demo","path":"../outside.txt"}}}"#,
    );
    assert!(!r.body.contains("secret-outside") && r.status >= 400, "{}: {}", r.status, r.body);
    // Not JSON at all: a parse error, in JSON.
    let r = send("{\"jsonrpc\": \"2.0\", \"id\": ");
    assert_eq!((r.status, r.json()["error"]["code"].as_i64()), (400, Some(-32700)), "{}", r.body);
}

/// A client's globs and filters only ever narrow what the token may see: no pattern reaches
/// outside the project, into the shield, or into another project.
#[test]
fn client_globs_and_filters_only_narrow_the_scope() {
    let (sb, server, token) = setup();
    std::fs::write(sb.root().join("outside-canary.txt"), "outside-canary").unwrap();
    std::fs::write(sb.project.join(".env"), "SHIELDED=env-canary").unwrap();
    std::fs::write(sb.project.join("inside.txt"), "inside-canary").unwrap();
    let port = server.port;
    // The control: what is in scope is found, so the refusals below are not vacuous.
    let v = call(
        port,
        &token,
        "search_text",
        json!({"project": "demo", "pattern": "canary", "literal": true, "globs": ["**"]}),
    );
    assert!(v.to_string().contains("inside-canary"), "{v}");
    let globs = [
        "../**",
        "../*",
        "/**",
        "/etc/*",
        "**/../*",
        "**/../../**",
        "./../**",
        "**/.env",
        ".env",
        "{.env,README.md}",
        "[.]env",
        "**",
        "*/../../*",
    ];
    for glob in globs {
        for (tool, args) in [
            ("find_files", json!({"project": "demo", "globs": [glob]})),
            (
                "search_text",
                json!({"project": "demo", "pattern": "canary", "literal": true,
                                   "globs": [glob]}),
            ),
            ("list_directory", json!({"project": "demo", "path": ".", "depth": 5})),
        ] {
            let v = call(port, &token, tool, args);
            let text = v.to_string();
            assert!(
                !text.contains("outside-canary") && !text.contains("env-canary"),
                "{tool} with {glob:?} reached past the scope: {text}"
            );
            if let Some(matches) = v["result"]["structuredContent"]["matches"].as_array() {
                for m in matches {
                    let path = m["path"].as_str().unwrap_or_default();
                    assert!(
                        !path.starts_with('/') && !path.contains("..") && path != ".env",
                        "{tool} {glob:?}: {m}"
                    );
                }
            }
        }
    }
}
