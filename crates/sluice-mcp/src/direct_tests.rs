//! The direct path against rmcp: two servers over one engine, one with the direct path and
//! one without, must answer every request byte for byte alike — results, tool errors,
//! JSON-RPC errors and HTTP refusals — and the direct path must take exactly the requests
//! it is meant to.

use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue};
use serde_json::json;
use sluice_core::{AccessMode, ExecMode};
use sluice_engine::{AuditFilter, Engine, EngineConfig, SecretPreference};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::http::{Front, bind, build_router, serve};

/// Request headers; `{port}` and `{token}` in values are filled in when sent.
type Headers = Vec<(&'static str, String)>;

struct Answer {
    status: u16,
    content_type: Option<String>,
    body: String,
}

/// Sends one request over a fresh connection.
async fn post(port: u16, token: &str, headers: &Headers, body: &str) -> Answer {
    let mut req = String::from("POST /mcp HTTP/1.1\r\n");
    for (name, value) in headers {
        let value = value.replace("{port}", &port.to_string()).replace("{token}", token);
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()));
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| value.trim().to_owned());
    Answer { status, content_type, body: body.to_owned() }
}

fn standard_headers() -> Headers {
    vec![
        ("Host", "127.0.0.1:{port}".into()),
        ("Authorization", "Bearer {token}".into()),
        ("Content-Type", "application/json".into()),
        ("Accept", "application/json, text/event-stream".into()),
        ("MCP-Protocol-Version", "2025-11-25".into()),
    ]
}

fn with(header: &'static str, value: &str) -> Headers {
    let mut headers = standard_headers();
    headers.retain(|(name, _)| !name.eq_ignore_ascii_case(header));
    headers.push((header, value.to_owned()));
    headers
}

fn without(header: &str) -> Headers {
    let mut headers = standard_headers();
    headers.retain(|(name, _)| !name.eq_ignore_ascii_case(header));
    headers
}

fn call(id: &str, tool: &str, arguments: &str) -> String {
    let params = format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
}

/// The headers of a 2026-07-28 `tools/call` of `tool`: the version and the standard headers.
fn headers_2026(tool: &str) -> Headers {
    let mut headers = with("MCP-Protocol-Version", "2026-07-28");
    headers.push(("Mcp-Method", "tools/call".into()));
    headers.push(("Mcp-Name", tool.to_owned()));
    headers
}

/// A 2026-07-28 `tools/call` whose request `_meta` is `meta`.
fn call_2026(id: u32, tool: &str, arguments: serde_json::Value, meta: serde_json::Value) -> String {
    jsonrpc(json!({"id": id, "params": {"name": tool, "arguments": arguments, "_meta": meta}}))
}

/// The `_meta` every 2026-07-28 request carries, and `extra` over it.
fn meta_2026(extra: serde_json::Value) -> serde_json::Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    for (key, value) in extra.as_object().unwrap() {
        if value.is_null() {
            meta.as_object_mut().unwrap().remove(key);
        } else {
            meta[key] = value.clone();
        }
    }
    meta
}

/// A `tools/call` message: `jsonrpc` and `method` as usual, and `fields` over them.
fn jsonrpc(fields: serde_json::Value) -> String {
    let mut message = json!({"jsonrpc": "2.0", "method": "tools/call"});
    for (key, value) in fields.as_object().unwrap() {
        message[key] = value.clone();
    }
    message.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn direct_path_answers_exactly_as_rmcp_does() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let project = root.join("proj");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("hello.txt"), "hello\nworld\n").unwrap();
    std::fs::write(project.join("src/lib.rs"), "pub fn needle() {}\n").unwrap();
    let token_like = format!("ghp_{}", "a1B2".repeat(9));
    std::fs::write(project.join("creds.txt"), format!("token = {token_like}\n")).unwrap();
    std::fs::write(project.join(".env"), "SECRET=1\n").unwrap();
    let engine = Arc::new(
        Engine::open(&EngineConfig::new(root.join("data"), SecretPreference::FileOnly)).unwrap(),
    );
    engine.add_project(&project, Some("demo"), AccessMode::ReadOnly, ExecMode::Off).unwrap();
    let (record, token) = engine.create_token("tester", None, None).unwrap();

    let stop = CancellationToken::new();
    let mut ports = Vec::new();
    for direct in [true, false] {
        let listener = bind(0).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let limits = crate::Limits::default();
        let router =
            build_router(engine.clone(), Front::Local { port }, limits, stop.clone(), direct);
        tokio::spawn(serve(listener, router, stop.clone()));
        ports.push(port);
    }
    let (direct_port, rmcp_port) = (ports[0], ports[1]);
    let direct = Direct::new(SluiceServer::new(engine.clone()));

    let read = |path: &str| format!(r#"{{"project":"demo","path":"{path}"}}"#);

    // A call on the direct path is audited once, with its tool and project, as on rmcp's.
    let mine = AuditFilter { token_id: Some(record.id.clone()), ..AuditFilter::default() };
    let before = engine.audit_list(&mine, 1000, None).unwrap().len();
    let a = post(direct_port, &token, &standard_headers(), &call("0", "stat", &read("x"))).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let entries = engine.audit_list(&mine, 1000, None).unwrap();
    assert_eq!(entries.len(), before + 1);
    let last = &entries.iter().max_by_key(|e| e.seq).unwrap().record;
    assert_eq!((last.action.as_str(), last.error_code.as_deref()), ("stat", Some("not_found")));
    assert!(last.project_id.is_some());

    let usual = standard_headers;
    let projects = |id: u32| call(&id.to_string(), "list_projects", "{}");
    // What the direct path serves.
    let direct_cases: Vec<(&str, Headers, String)> = vec![
        ("read_file", usual(), call("1", "read_file", &read("hello.txt"))),
        ("string id", usual(), call(r#""a-1""#, "read_file", &read("hello.txt"))),
        ("negative id", usual(), call("-7", "read_file", &read("hello.txt"))),
        ("redacted", usual(), call("2", "read_file", &read("creds.txt"))),
        ("shielded", usual(), call("3", "read_file", &read(".env"))),
        ("missing", usual(), call("4", "read_file", &read("nope.txt"))),
        ("traversal", usual(), call("5", "read_file", &read("../data/x"))),
        ("unknown project", usual(), call("6", "read_file", r#"{"project":"x","path":"a"}"#)),
        ("missing argument", usual(), call("7", "read_file", r#"{"project":"demo"}"#)),
        ("wrong type", usual(), call("8", "read_file", r#"{"project":"demo","path":5}"#)),
        ("arguments null", usual(), call("9", "list_projects", "null")),
        ("no arguments", usual(), jsonrpc(json!({"id": 10, "params": {"name": "server_info"}}))),
        ("stat", usual(), call("11", "stat", &read("src/lib.rs"))),
        ("on a blocking thread", usual(), call("12", "list_directory", &read("src"))),
        ("find_files", usual(), call("13", "find_files", r#"{"project":"demo","globs":["*.rs"]}"#)),
        ("search", usual(), call("14", "search_text", r#"{"project":"demo","pattern":"needle"}"#)),
        ("bad regex", usual(), call("15", "search_text", r#"{"project":"demo","pattern":"("}"#)),
        ("no version", without("MCP-Protocol-Version"), projects(16)),
        ("older version", with("MCP-Protocol-Version", "2025-06-18"), projects(17)),
        ("SSE first", with("Accept", "text/event-stream, application/json"), projects(18)),
        (
            "2026-07-28",
            headers_2026("read_file"),
            call_2026(
                40,
                "read_file",
                json!({"project": "demo", "path": "hello.txt"}),
                meta_2026(json!({})),
            ),
        ),
        (
            "2026-07-28 with clientInfo",
            headers_2026("read_file"),
            call_2026(
                41,
                "read_file",
                json!({"project": "demo", "path": "creds.txt"}),
                meta_2026(
                    json!({"io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}),
                ),
            ),
        ),
        (
            "2026-07-28, a tool error",
            headers_2026("stat"),
            call_2026(42, "stat", json!({"project": "demo", "path": "nope"}), meta_2026(json!({}))),
        ),
        (
            "own origin, host in capitals",
            {
                let mut h = with("Host", "LOCALHOST:{port}");
                h.push(("Origin", "http://localhost:{port}".into()));
                h
            },
            call("19", "read_file", &read("hello.txt")),
        ),
    ];
    // What goes to rmcp, whether the direct path is built in or not.
    let two_versions = {
        let mut h = usual();
        h.push(("MCP-Protocol-Version", "2025-06-18".into()));
        h
    };
    let list_projects = json!({"name": "list_projects"});
    let rmcp_cases: Vec<(&str, Headers, String)> = vec![
        ("unknown tool", usual(), call("20", "no_such_tool", "{}")),
        ("not read-only", usual(), call("21", "write_file", r#"{"project":"demo","path":"x"}"#)),
        (
            "_meta",
            usual(),
            jsonrpc(json!({"id": 22, "params": {
                "name": "list_projects", "arguments": {}, "_meta": {"progressToken": 1}
            }})),
        ),
        ("extra field", usual(), jsonrpc(json!({"id": 23, "params": list_projects, "x": 1}))),
        (
            "wrong jsonrpc",
            usual(),
            jsonrpc(json!({"jsonrpc": "1.0", "id": 24, "params": list_projects})),
        ),
        ("notification", usual(), jsonrpc(json!({"params": list_projects}))),
        ("no params", usual(), jsonrpc(json!({"id": 25}))),
        ("truncated body", usual(), projects(26)[..40].to_owned()),
        ("batch", usual(), format!("[{}]", projects(27))),
        ("JSON only", with("Accept", "application/json"), projects(28)),
        ("no Accept", without("Accept"), projects(29)),
        ("weighted", with("Accept", "application/json;q=0.9, text/event-stream"), projects(30)),
        ("refused", with("Accept", "application/json, text/event-stream;q=0"), projects(31)),
        ("unknown version", with("MCP-Protocol-Version", "1999-01-01"), projects(32)),
        ("per-request version", with("MCP-Protocol-Version", "2026-07-28"), projects(33)),
        ("two versions", two_versions, projects(34)),
        ("large body", usual(), call("35", "read_file", &read(&"a/".repeat(40_000)))),
        ("2026-07-28 without _meta", headers_2026("list_projects"), projects(50)),
        (
            "2026-07-28 _meta, no version header",
            {
                let mut h = headers_2026("list_projects");
                h.retain(|(name, _)| *name != "MCP-Protocol-Version");
                h
            },
            call_2026(51, "list_projects", json!({}), meta_2026(json!({}))),
        ),
        (
            "2026-07-28 without capabilities",
            headers_2026("list_projects"),
            call_2026(
                52,
                "list_projects",
                json!({}),
                meta_2026(json!({"io.modelcontextprotocol/clientCapabilities": null})),
            ),
        ),
        (
            "2026-07-28 with malformed capabilities",
            headers_2026("list_projects"),
            call_2026(
                53,
                "list_projects",
                json!({}),
                meta_2026(json!({"io.modelcontextprotocol/clientCapabilities": "all"})),
            ),
        ),
        (
            "2026-07-28, _meta names another version",
            headers_2026("list_projects"),
            call_2026(
                54,
                "list_projects",
                json!({}),
                meta_2026(json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25"})),
            ),
        ),
        (
            "2026-07-28 with a progress token",
            headers_2026("list_projects"),
            call_2026(55, "list_projects", json!({}), meta_2026(json!({"progressToken": 7}))),
        ),
        (
            "2026-07-28 without Mcp-Method",
            {
                let mut h = headers_2026("list_projects");
                h.retain(|(name, _)| *name != "Mcp-Method");
                h
            },
            call_2026(56, "list_projects", json!({}), meta_2026(json!({}))),
        ),
        (
            "2026-07-28, Mcp-Method twice",
            {
                let mut h = headers_2026("list_projects");
                h.push(("Mcp-Method", "tools/call".into()));
                h
            },
            call_2026(57, "list_projects", json!({}), meta_2026(json!({}))),
        ),
        (
            "2026-07-28, Mcp-Name of another tool",
            headers_2026("server_info"),
            call_2026(58, "list_projects", json!({}), meta_2026(json!({}))),
        ),
        (
            "2026-07-28, Mcp-Name in Base64",
            headers_2026("=?base64?bGlzdF9wcm9qZWN0cw==?="),
            call_2026(59, "list_projects", json!({}), meta_2026(json!({}))),
        ),
        (
            "2026-07-28 with an Mcp-Param header",
            {
                let mut h = headers_2026("read_file");
                h.push(("Mcp-Param-Path", "hello.txt".into()));
                h
            },
            call_2026(
                60,
                "read_file",
                json!({"project": "demo", "path": "hello.txt"}),
                meta_2026(json!({})),
            ),
        ),
    ];
    let cases = direct_cases
        .into_iter()
        .map(|(what, headers, body)| (what, headers, body, true))
        .chain(rmcp_cases.into_iter().map(|(what, headers, body)| (what, headers, body, false)));
    for (what, headers, body, direct_expected) in cases {
        let mut map = HeaderMap::new();
        for (name, value) in &headers {
            let value =
                value.replace("{port}", &direct_port.to_string()).replace("{token}", &token);
            map.append(HeaderName::try_from(*name).unwrap(), HeaderValue::try_from(value).unwrap());
        }
        let taken = direct.accepts(&map, body.as_bytes());
        assert_eq!(taken.is_some(), direct_expected, "{what}: taken by the direct path");
        if let Some(call) = taken {
            // The gate reads a direct call's method, id and tool from the call itself.
            let (ours, read) = (call.peek(), crate::peek::Peek::of(body.as_bytes()).ok().unwrap());
            assert_eq!(
                (ours.method, ours.id, ours.tool),
                (read.method, read.id, read.tool),
                "{what}"
            );
        }
        let a = post(direct_port, &token, &headers, &body).await;
        let b = post(rmcp_port, &token, &headers, &body).await;
        assert_eq!((a.status, &a.content_type), (b.status, &b.content_type), "{what}: {}", a.body);
        assert_eq!(a.body, b.body, "{what}");
        if what == "redacted" {
            assert!(!a.body.contains(&token_like) && a.body.contains("[redacted:"), "{}", a.body);
        }
        if what == "read_file" || what == "2026-07-28" {
            assert_eq!(a.status, 200);
            assert!(a.body.contains(r#"\"content\":\"hello\\nworld\\n\""#), "{}", a.body);
        }
    }
    stop.cancel();
}
