//! Brute force, exhaustion, header/body mismatch, the stdio bridge under pause, root loss while
//! serving, what reaches the logs, and state edited in the database while Sluice is stopped
//! (docs/THREATS.md TA-05, HS-07, AP-02, PE-01, ES-*, PC-02).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::*;

#[test]
fn ta05_brute_force_is_throttled_and_the_real_client_keeps_working() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("real", &[]);
    let server = sb.serve();
    let port = server.port;
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|w| {
                s.spawn(move || {
                    (0..100)
                        .map(|i| {
                            let fake = format!("slc_{:0>52}", format!("{w}x{i}"));
                            post(port, &bearer(&fake), &initialize_body()).status
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    assert!(statuses.iter().all(|s| *s == 401 || *s == 429), "{statuses:?}");
    assert!(statuses.contains(&429), "400 bad tokens in a burst were never throttled");
    // The legitimate token is unaffected, even right now.
    let r = post(port, &bearer(&token), &initialize_body());
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn hs07_idle_and_slow_connections_do_not_starve_clients_and_are_closed() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("real", &[]);
    let server = sb.serve();
    let port = server.port;
    let idle: Vec<TcpStream> =
        (0..300).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
    let mut slow: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").unwrap();
            s
        })
        .collect();
    // A real client is served while all of those hang around.
    let r = post(port, &bearer(&token), &initialize_body());
    assert_eq!(r.status, 200);
    // The pause switch (a local command, not HTTP) works during the flood.
    sb.ok(&["pause"]);
    sb.ok(&["resume"]);
    // The server closes the idle and the slow ones itself (header timeout), without our help.
    let deadline = Instant::now() + Duration::from_secs(40);
    for mut s in idle.into_iter().chain(slow.drain(..)) {
        s.set_read_timeout(Some(
            deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)),
        ))
        .unwrap();
        let mut buf = [0u8; 512];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => panic!("connection still open at the deadline: {e}"),
            }
        }
    }
}

#[test]
fn ap02_header_and_body_mismatch_is_refused_before_dispatch() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    let server = sb.serve();
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": "read_file",
            "arguments": {"project": "demo", "path": "README.md"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
            }
        }
    })
    .to_string();
    let headers = format!(
        "Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/list\r\nMcp-Name: read_file\r\n"
    );
    let r = post(server.port, &headers, &body);
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], -32020);
    // The matching headers work, so the refusal was about the mismatch.
    let headers = headers.replace("Mcp-Method: tools/list", "Mcp-Method: tools/call");
    let r = post(server.port, &headers, &body);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.json()["result"]["structuredContent"]["content"].as_str().unwrap().contains("hello"));
}

#[test]
fn every_result_names_the_server_in_its_meta() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    let server = sb.serve();
    let modern = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let modern_headers = |method: &str, name: Option<&str>| {
        let name = name.map(|n| format!("Mcp-Name: {n}\r\n")).unwrap_or_default();
        format!(
            "Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: {method}\r\n{name}"
        )
    };
    let read = json!({"project": "demo", "path": "README.md"});
    let missing = json!({"project": "demo", "path": "nope.txt"});
    let results = [
        // 2025-11-25: initialize, a listing, a call served by the direct path, a refusal.
        post(server.port, &bearer(&token), &initialize_body()),
        post(
            server.port,
            &bearer(&token),
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string(),
        ),
        post(server.port, &bearer(&token), &call_body("read_file", read.clone())),
        post(server.port, &bearer(&token), &call_body("read_file", missing)),
        // 2026-07-28: discovery and a call through rmcp (per-request `_meta`).
        post(
            server.port,
            &modern_headers("server/discover", None),
            &json!({"jsonrpc": "2.0", "id": 4, "method": "server/discover",
                "params": {"_meta": modern}})
            .to_string(),
        ),
        post(
            server.port,
            &modern_headers("tools/call", Some("read_file")),
            &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "read_file", "arguments": read, "_meta": modern}})
            .to_string(),
        ),
    ];
    for r in results {
        assert_eq!(r.status, 200, "{}", r.body);
        let v = r.json();
        let info = &v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
        assert_eq!(info["name"], "sluice", "{v}");
        assert_eq!(info["version"], env!("CARGO_PKG_VERSION"), "{v}");
    }
}

/// Reads one JSON line from the bridge, with a deadline.
fn read_line(rx: &std::sync::mpsc::Receiver<String>) -> serde_json::Value {
    let line = rx.recv_timeout(Duration::from_secs(20)).expect("a reply from sluice stdio");
    serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("stdout is not protocol-only ({e}): {line}"))
}

#[test]
fn pe01_pause_applies_to_stdio_clients_too() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("stdio", &[]);
    let _server = sb.serve();
    let mut child = stdio_bridge(sb.cmd(), &token);
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    writeln!(stdin, "{}", initialize_body()).unwrap();
    assert_eq!(read_line(&rx)["result"]["serverInfo"]["name"], "sluice");
    writeln!(stdin, "{}", call_body("list_projects", json!({}))).unwrap();
    assert!(read_line(&rx)["result"]["structuredContent"]["projects"].is_array());
    sb.ok(&["pause"]);
    writeln!(stdin, "{}", call_body("list_projects", json!({}))).unwrap();
    let v = read_line(&rx);
    assert_eq!(v["id"], 2, "the refusal carries the client's id: {v}");
    assert_eq!(v["error"]["data"]["code"], "paused", "{v}");
    sb.ok(&["resume"]);
    writeln!(stdin, "not json").unwrap();
    assert_eq!(read_line(&rx)["error"]["code"], -32700);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn stdio_without_a_running_engine_says_so() {
    let sb = Sandbox::new();
    let out = sb.cmd().arg("stdio").env("SLUICE_TOKEN", "slc_x").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not running"), "{err}");
    // And the token is never accepted from argv.
    let out = sb.cmd().args(["stdio", "--token", "slc_x"]).output().unwrap();
    assert!(!out.status.success());
}

#[test]
fn a_lost_root_makes_the_project_unavailable_until_the_user_acts() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    let server = sb.serve();
    let moved = sb.root().join("moved-away");
    std::fs::rename(&sb.project, &moved).unwrap();
    // The watcher notices without any request; wait for it on the CLI's view.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let list = sb.ok(&["project", "list"]);
        if list.contains("unavailable") {
            assert!(list.contains("moved or deleted"), "{list}");
            break;
        }
        assert!(Instant::now() < deadline, "root loss never noticed: {list}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let v = call(server.port, &token, "read_file", json!({"project": "demo", "path": "README.md"}));
    assert_eq!(v["result"]["structuredContent"]["code"], "project_unavailable");
    // A different folder put in its place is not silently accepted either.
    std::fs::create_dir(&sb.project).unwrap();
    std::fs::write(sb.project.join("README.md"), "impostor").unwrap();
    let v = call(server.port, &token, "read_file", json!({"project": "demo", "path": "README.md"}));
    assert_eq!(v["result"]["structuredContent"]["code"], "project_unavailable");
    // Only the user's explicit enable accepts what is there now.
    sb.ok(&["project", "enable", "demo"]);
    let v = call(server.port, &token, "read_file", json!({"project": "demo", "path": "README.md"}));
    assert_eq!(v["result"]["structuredContent"]["content"], "impostor");
}

#[test]
fn logs_never_contain_arguments_tokens_or_contents() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    let port = free_port();
    let mut child = sb
        .cmd()
        .args(["serve", "--port", &port.to_string()])
        .env("SLUICE_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.contains("serving"));
    let canary = &sb.canary;
    call(port, &token, "read_file", json!({"project": "demo", "path": format!("{canary}.txt")}));
    call(port, &token, "search_text", json!({"project": "demo", "pattern": canary}));
    call(port, &token, "read_file", json!({"project": "demo", "path": "README.md"}));
    post(
        port,
        &bearer("slc_notatokennotatokennotatokennotatokennotatokennota"),
        &initialize_body(),
    );
    child.kill().unwrap();
    let mut logs = String::new();
    child.stderr.take().unwrap().read_to_string(&mut logs).unwrap();
    let _ = child.wait();
    assert!(logs.contains("ready"), "{logs}");
    for secret in [canary.as_str(), token.as_str(), "hello world", "slc_notatoken"] {
        assert!(!logs.contains(secret), "{secret:?} reached the log:\n{logs}");
    }
}

#[test]
fn engine_start_and_stop_are_clean() {
    let sb = Sandbox::new();
    let server = sb.serve();
    let recorded = std::fs::read_to_string(sb.data.join("engine.json")).unwrap();
    assert!(recorded.contains(&server.port.to_string()), "{recorded}");
    let pid = server.child.id().to_string();
    let st = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(st.success());
    let mut server = server;
    assert!(server.child.wait().unwrap().success());
    assert!(!sb.data.join("engine.json").exists(), "engine.json left behind");
}

// Unix: a planted executable, links, Unix sockets.
#[cfg(unix)]
#[test]
fn pc02_a_root_rewritten_in_the_database_is_refused_at_the_next_start() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    // Roots `project add` refuses, written straight into the database while Sluice is stopped:
    // the filesystem root, Sluice's own data folder and its parent, a system folder, and a
    // link to the filesystem root (not its own canonical path).
    let link = sb.root().join("to-root");
    std::os::unix::fs::symlink("/", &link).unwrap();
    let roots = [
        std::path::PathBuf::from("/"),
        sb.data.clone(),
        sb.data.parent().unwrap().to_owned(),
        std::path::PathBuf::from("/etc"),
        link,
    ];
    for root in roots {
        let db = rusqlite::Connection::open(sb.data.join("sluice.db")).unwrap();
        let changed = db
            .execute("UPDATE projects SET root = ?1 WHERE name = 'demo'", [root.to_str().unwrap()])
            .unwrap();
        assert_eq!(changed, 1);
        drop(db);
        let server = sb.serve();
        let v = call(server.port, &token, "list_projects", json!({}));
        let demo = &v["result"]["structuredContent"]["projects"][0];
        assert_eq!(demo["status"], "root-lost", "{root:?}: {v}");
        // The reason names no physical path (it reaches the assistant).
        // The rewrite breaks the project's seal (the root checks stand behind it).
        let reason = demo["reason"].as_str().unwrap();
        assert!(reason.contains("outside Sluice") && !reason.contains('/'), "{reason}");
        for (path, tool) in
            [("sluice.db", "read_file"), (".", "list_directory"), ("passwd", "stat")]
        {
            let v = call(server.port, &token, tool, json!({"project": "demo", "path": path}));
            assert_eq!(v["result"]["structuredContent"]["code"], "project_unavailable", "{v}");
        }
        let listed = sb.ok(&["project", "list"]);
        assert!(listed.contains("changed outside Sluice"), "{root:?}: {listed}");
        assert!(sb.ok(&["doctor"]).contains("[project-seal] project \"demo\""));
        drop(server);
    }
}

/// The attacker of PC-02: no install secret, only the database file, edited while Sluice is
/// stopped. Runs each statement as given.
pub(crate) fn tamper(sb: &Sandbox, statements: &str) {
    let db = rusqlite::Connection::open(sb.data.join("sluice.db")).unwrap();
    db.execute_batch(statements).unwrap();
}

/// `sluice doctor`'s integrity findings, one per line.
pub(crate) fn findings(sb: &Sandbox) -> String {
    let out = sb.ok(&["doctor"]);
    out.lines().filter(|l| l.trim_start().starts_with('[')).collect::<Vec<_>>().join("\n")
}

#[test]
fn pc02_a_deleted_emergency_stop_stays_in_force() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    sb.ok(&["stop"]);
    tamper(&sb, "DELETE FROM kv WHERE key = 'stopped'");
    let server = sb.serve();
    let r = post(server.port, &bearer(&token), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.json()["error"]["data"]["code"], "stopped", "{}", r.body);
    assert!(findings(&sb).contains("[stop-seal]"), "{}", findings(&sb));
    assert!(sb.ok(&["doctor"]).contains("AI access:     STOPPED"));
    // Forging it "off" is no better than deleting it.
    drop(server);
    tamper(&sb, "INSERT INTO kv (key, value) VALUES ('stopped', 'false')");
    let server = sb.serve();
    let r = post(server.port, &bearer(&token), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 503, "{}", r.body);
    // Only the user's resume lifts it, and that clears the finding.
    sb.ok(&["resume"]);
    ok(&call(server.port, &token, "list_projects", json!({})));
    assert!(sb.ok(&["doctor"]).contains("every sealed record verifies"));
}

#[test]
fn pc02_an_allow_rule_inserted_in_the_database_allows_nothing() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let genuine = json!({"project": "demo", "program": "echo", "args": ["hello"]});
    ok(&approved(&sb, server.port, &token, "run_command", genuine.clone(), &["--always"]));
    drop(server);
    // A rule just like the genuine one (same program, folder, environment) for another command.
    tamper(
        &sb,
        "INSERT INTO allow_rules (project_id, argv, cwd, env, created_ms)
         SELECT project_id, json_set(argv, '$[1]', 'forged'), cwd, env, created_ms FROM allow_rules",
    );
    let server = sb.serve();
    // The genuine rule still runs at once; the forged one asks.
    assert_eq!(ok(&call(server.port, &token, "run_command", genuine))["stdout"], "hello\n");
    let forged = json!({"project": "demo", "program": "echo", "args": ["forged"]});
    let asked = call_async(server.port, &token, "run_command", forged);
    let a = wait_pending(&sb);
    sb.ok(&["approvals", "deny", a["id"].as_str().unwrap()]);
    refused(&asked.join().unwrap(), "denied");
    let found = findings(&sb);
    assert!(found.contains("[allow-rule-seal]") && found.contains("forged"), "{found}");
    assert!(!sb.ok(&["rules", "list", "demo"]).contains("forged"), "ignored rules are not listed");
}

#[test]
fn pc02_a_project_widened_in_the_database_is_unavailable() {
    let sb = Sandbox::new();
    sb.add_project(); // read-only, execution off
    let token = sb.token("t", &[]);
    tamper(&sb, "UPDATE projects SET access = 'read-write', exec = 'any' WHERE name = 'demo'");
    let server = sb.serve();
    let v = call(
        server.port,
        &token,
        "write_file",
        json!({"project": "demo", "path": "pwned.txt", "content": "x"}),
    );
    refused(&v, "project_unavailable");
    let v = call(server.port, &token, "run_command", json!({"project": "demo", "program": "id"}));
    refused(&v, "project_unavailable");
    assert!(!sb.project.join("pwned.txt").exists());
    let found = findings(&sb);
    assert!(found.contains("[project-seal] project \"demo\""), "{found}");
    // An ordinary change does not bless the edit; the user's explicit acceptance does.
    assert!(sb.err(&["project", "set", "demo", "--network", "off"]).contains("outside Sluice"));
    let accepted = sb.ok(&["doctor", "--reseal"]);
    assert!(accepted.contains("[project-seal]"), "{accepted}");
    assert!(sb.ok(&["doctor"]).contains("every sealed record verifies"));
    let audit = sb.ok(&["audit", "list"]);
    assert!(audit.contains("integrity.reseal"), "{audit}");
}

#[test]
fn pc02_a_token_widened_in_the_database_is_refused() {
    let sb = Sandbox::new();
    sb.add_project();
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    sb.ok(&["project", "add", other.to_str().unwrap(), "--name", "other"]);
    let token = sb.token("scoped", &["--projects", "demo"]);
    let server = sb.serve();
    ok(&call(server.port, &token, "list_projects", json!({})));
    drop(server);
    tamper(&sb, "UPDATE tokens SET all_projects = 1 WHERE label = 'scoped'");
    let server = sb.serve();
    let r = post(server.port, &bearer(&token), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 401, "{}", r.body);
    let found = findings(&sb);
    assert!(found.contains("[token-seal] token \"scoped\""), "{found}");
    // Revoking it clears the finding (revoked, it is sealed as such).
    sb.ok(&["token", "revoke", "scoped"]);
    assert!(sb.ok(&["doctor"]).contains("every sealed record verifies"));
}

#[test]
fn pc02_a_cut_audit_log_with_its_head_rewound_fails_verification() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    let server = sb.serve();
    for _ in 0..3 {
        ok(&call(server.port, &token, "list_projects", json!({})));
    }
    drop(server);
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
    // Cut the newest entry and rewind the head record to the one before, as `audit verify`
    // without seals could not notice.
    tamper(
        &sb,
        "DROP TRIGGER audit_no_delete;
         DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit);
         UPDATE kv SET value = (SELECT seq || ':' || lower(hex(mac)) FROM audit
                                ORDER BY seq DESC LIMIT 1)
         WHERE key = 'sluice.audit.head';",
    );
    let out = sb.cmd().args(["audit", "verify"]).output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("rewritten outside Sluice") && said.contains("may have been cut"),
        "{said}"
    );
    assert!(findings(&sb).contains("[audit-head-seal]"));
}

/// An audit log emptied wholesale while Sluice was stopped (every entry and its head record
/// removed) is not "intact, 0 entries": the install secret records that the log began.
#[test]
fn pc02_an_emptied_audit_log_is_a_finding_not_an_empty_log() {
    let sb = Sandbox::new();
    sb.add_project();
    // A folder whose log never had an entry verifies: its head is the genesis record.
    let fresh = sb.ok(&["audit", "verify"]);
    assert!(fresh.contains("intact"), "{fresh}");
    let token = sb.token("t", &[]);
    let server = sb.serve();
    for _ in 0..3 {
        ok(&call(server.port, &token, "list_projects", json!({})));
    }
    drop(server);
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
    let secret = std::fs::read_to_string(sb.data.join("install-secret")).unwrap();
    assert!(secret.trim_end().ends_with(":sealed:audit"), "the secret records the log");
    tamper(
        &sb,
        "DROP TRIGGER audit_no_delete;
         DELETE FROM audit;
         DELETE FROM kv WHERE key LIKE '%sluice.audit.head%';",
    );
    let out = sb.cmd().args(["audit", "verify"]).output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("emptied or replaced outside Sluice"), "{said}");
    assert!(findings(&sb).contains("[audit-reset]"), "{}", findings(&sb));
    // Starting again and logging more does not begin a new log over the gap.
    let server = sb.serve();
    ok(&call(server.port, &token, "list_projects", json!({})));
    drop(server);
    assert!(findings(&sb).contains("[audit-reset]"), "{}", findings(&sb));
    assert!(!sb.cmd().args(["audit", "verify"]).status().unwrap().success());
    // Only the user accepts it; then the log verifies again from where it stands.
    let out = sb.cmd().args(["doctor", "--reseal"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!findings(&sb).contains("[audit-reset]"), "{}", findings(&sb));
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
}

#[test]
fn pc02_changes_made_with_the_cli_while_serving_are_not_findings() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    let server = sb.serve();
    // Another process (the CLI) changes sealed state under the running engine.
    sb.ok(&["project", "set", "demo", "--access", "read-write", "--exec", "project"]);
    sb.ok(&["project", "disable", "demo"]);
    sb.ok(&["project", "enable", "demo"]);
    let second = sb.token("second", &["--projects", "demo"]);
    sb.ok(&["pause"]);
    sb.ok(&["resume"]);
    sb.ok(&["token", "revoke", "second"]);
    let v = call(
        server.port,
        &token,
        "write_file",
        json!({"project": "demo", "path": "ok.txt", "content": "fine"}),
    );
    ok(&v);
    let r = post(server.port, &bearer(&second), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 401);
    let doctor = sb.ok(&["doctor"]);
    assert!(doctor.contains("every sealed record verifies"), "{doctor}");
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
    // And after a restart, nothing is held back.
    drop(server);
    let server = sb.serve();
    ok(&call(server.port, &token, "list_projects", json!({})));
    assert!(sb.ok(&["doctor"]).contains("every sealed record verifies"));
}

#[test]
fn pc02_a_database_from_before_the_seals_keeps_working_after_the_upgrade() {
    let sb = Sandbox::new();
    sb.add_project();
    sb.ok(&["project", "set", "demo", "--access", "read-write", "--exec", "any"]);
    let token = sb.token("t", &[]);
    let server = sb.serve();
    ok(&call(server.port, &token, "list_projects", json!({})));
    drop(server);
    back_to_schema_13(&sb);
    let path = sb.data.join("install-secret");
    let doctor = sb.ok(&["doctor"]);
    assert!(doctor.contains("every sealed record verifies"), "{doctor}");
    let server = sb.serve();
    let v = call(
        server.port,
        &token,
        "write_file",
        json!({"project": "demo", "path": "after-upgrade.txt", "content": "ok"}),
    );
    ok(&v);
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
    let backups: Vec<String> = std::fs::read_dir(sb.data.join("backups"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(backups.iter().any(|n| n.starts_with("sluice.db.v13-")), "{backups:?}");
    assert!(std::fs::read_to_string(&path).unwrap().trim_end().contains(":sealed"));
}

/// The attacker of PC-02 who knows the seals exist: every seal removed and the database put
/// back to before sealing (`statements`), plus the edits it wanted sealed as genuine — the
/// project widened, a rule inserted, the stop deleted. The install secret's storage (here the
/// owner-only file) recorded that sealing began, so none of it is granted; `sluice doctor`
/// names `seal-reset` and only `sluice doctor --reseal` accepts it.
fn pc02_reset(widen_and_strip: &str) {
    let sb = Sandbox::new();
    sb.add_project(); // read-only, execution off
    let token = sb.token("t", &[]);
    let server = sb.serve();
    ok(&call(server.port, &token, "list_projects", json!({})));
    drop(server);
    sb.ok(&["stop"]);
    let secret = std::fs::read_to_string(sb.data.join("install-secret")).unwrap();
    assert!(secret.trim_end().contains(":sealed"), "sealing is recorded with the secret");
    tamper(&sb, widen_and_strip);

    let server = sb.serve();
    let found = findings(&sb);
    assert!(found.contains("[seal-reset]") && found.contains("reset outside Sluice"), "{found}");
    for code in ["[project-seal]", "[allow-rule-seal]", "[token-seal]", "[stop-seal]"] {
        assert!(found.contains(code), "{code}: {found}");
    }
    // The token, stripped of its seal, is refused.
    let r = post(server.port, &bearer(&token), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 401, "{}", r.body);
    // A token made now is Sluice's own, but the deleted stop stays in force.
    let fresh = sb.token("fresh", &[]);
    let r = post(server.port, &bearer(&fresh), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(sb.ok(&["doctor"]).contains("AI access:     STOPPED"));
    // Lifted by the user, the widened project is still unavailable and the rule allows nothing.
    sb.ok(&["resume"]);
    let v = call(
        server.port,
        &fresh,
        "write_file",
        json!({"project": "demo", "path": "pwned.txt", "content": "x"}),
    );
    refused(&v, "project_unavailable");
    let v = call(server.port, &fresh, "run_command", json!({"project": "demo", "program": "id"}));
    refused(&v, "project_unavailable");
    assert!(!sb.project.join("pwned.txt").exists());
    assert!(!sb.ok(&["rules", "list", "demo"]).contains("\"id\""), "the rule is not listed");
    assert!(sb.ok(&["project", "list"]).contains("changed outside Sluice"));
    // A restart seals nothing either.
    drop(server);
    let server = sb.serve();
    assert!(findings(&sb).contains("[seal-reset]"));
    let r = post(server.port, &bearer(&token), &call_body("list_projects", json!({})));
    assert_eq!(r.status, 401, "{}", r.body);

    // The user accepts the database as it is now: it works as before, with the record kept.
    let accepted = sb.ok(&["doctor", "--reseal"]);
    assert!(accepted.contains("[seal-reset]"), "{accepted}");
    assert!(sb.ok(&["doctor"]).contains("every sealed record verifies"));
    ok(&call(server.port, &token, "list_projects", json!({})));
    let v = call(
        server.port,
        &token,
        "write_file",
        json!({"project": "demo", "path": "accepted.txt", "content": "ok"}),
    );
    ok(&v);
    assert!(sb.ok(&["audit", "list"]).contains("integrity.reseal"));
    drop(server);
    let secret = std::fs::read_to_string(sb.data.join("install-secret")).unwrap();
    assert!(secret.trim_end().contains(":sealed"));
    let server = sb.serve();
    ok(&call(server.port, &token, "list_projects", json!({})));
    assert!(sb.ok(&["doctor"]).contains("every sealed record verifies"));
}

/// The edits the attacker wants sealed as genuine.
const WIDEN: &str = "UPDATE projects SET access = 'read-write', exec = 'any';
     INSERT INTO allow_rules (project_id, argv, cwd, env, created_ms)
         SELECT id, '[\"id\"]', '', '[]', 1 FROM projects;
     DELETE FROM kv WHERE key = 'stopped';";

#[test]
fn pc02_a_database_stripped_of_its_seals_and_put_back_to_pending_grants_nothing() {
    pc02_reset(&format!(
        "{WIDEN}
         UPDATE projects SET seal = NULL;
         UPDATE allow_rules SET seal = NULL;
         UPDATE tokens SET seal = NULL;
         DELETE FROM kv WHERE key LIKE 'seal:%';
         UPDATE kv SET value = 'pending' WHERE key = 'sluice.seal';"
    ));
}

#[test]
fn pc02_a_database_put_back_to_schema_13_grants_nothing() {
    pc02_reset(&format!(
        "{WIDEN}
         ALTER TABLE projects DROP COLUMN seal;
         ALTER TABLE allow_rules DROP COLUMN seal;
         ALTER TABLE tokens DROP COLUMN seal;
         DELETE FROM kv WHERE key LIKE 'seal:%' OR key = 'sluice.seal';
         PRAGMA user_version = 13;"
    ));
}
