//! Write tools and approvals end to end: the Python MCP SDK over HTTP and stdio with the human
//! side played through the real CLI, and the attacks on approvals tried over raw HTTP
//! (docs/THREATS.md AP-01, AP-02, AP-06, PE-01, PC-01).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// A sandbox whose "demo" project is read-write, plus a read-only "other".
fn writable() -> (Sandbox, String) {
    let (sb, token) = executable("off");
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    sb.ok(&["project", "add", other.to_str().unwrap(), "--name", "other"]);
    (sb, token)
}

fn run_python(transport: &str) {
    let (sb, token) = writable();
    let server = sb.serve();
    let out = python_client("python_writes.py")
        .args(["--transport", transport, "--url", &server.url(), "--sluice", BIN])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .unwrap();
    passed(&out);
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    for action in ["approval.requested", "approval.approved", "approval.denied", "delete_path"] {
        assert!(audit.contains(action), "{action} not audited: {audit}");
    }
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
}

#[test]
fn python_sdk_changes_files_over_http_with_approvals() {
    run_python("http");
}

#[test]
fn python_sdk_changes_files_over_stdio_with_approvals() {
    run_python("stdio");
}

/// Starts a tool call on its own thread (it blocks while waiting for approval).
fn call_async(port: u16, token: &str, tool: &str, args: Value) -> std::thread::JoinHandle<Value> {
    let token = token.to_owned();
    let tool = tool.to_owned();
    std::thread::spawn(move || call(port, &token, &tool, args))
}

/// Polls the CLI until an approval is pending; returns its id.
fn wait_pending(sb: &Sandbox) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let list: Value = serde_json::from_str(&sb.ok(&["approvals", "list", "--json"])).unwrap();
        if let Some(a) = list.as_array().unwrap().iter().find(|a| a["state"] == "pending") {
            return a["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "no approval appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(unix)]
#[test]
fn ap01_a_folder_swapped_for_a_link_after_the_prompt_aborts_the_delete() {
    let (sb, token) = writable();
    let server = sb.serve();
    std::fs::create_dir_all(sb.project.join("tmp")).unwrap();
    std::fs::write(sb.project.join("tmp/a.txt"), "scratch").unwrap();
    let outside = sb.root().join("home-ish");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("precious.txt"), &sb.canary).unwrap();
    let pending = call_async(
        server.port,
        &token,
        "delete_path",
        json!({"project": "demo", "path": "tmp", "recursive": true}),
    );
    let id = wait_pending(&sb);
    // The user looks at "delete tmp/ (1 file)"; meanwhile tmp becomes a link to a folder outside.
    std::fs::rename(sb.project.join("tmp"), sb.root().join("tmp-aside")).unwrap();
    std::os::unix::fs::symlink(&outside, sb.project.join("tmp")).unwrap();
    sb.ok(&["approvals", "approve", &id]);
    let v = pending.join().unwrap();
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(v["result"]["structuredContent"]["code"], "conflict", "{v}");
    assert_eq!(std::fs::read_to_string(outside.join("precious.txt")).unwrap(), sb.canary);
}

#[test]
fn ap02_decisions_are_single_use_and_die_with_expiry() {
    let (sb, token) = writable();
    let server = sb.serve_with(&["--approval-timeout", "2s"]);
    std::fs::write(sb.project.join("old.txt"), "x").unwrap();
    let first = call_async(
        server.port,
        &token,
        "delete_path",
        json!({"project": "demo", "path": "old.txt"}),
    );
    let id = wait_pending(&sb);
    sb.ok(&["approvals", "deny", &id]);
    assert!(sb.err(&["approvals", "approve", &id]).contains("already denied"));
    let v = first.join().unwrap();
    assert_eq!(v["result"]["structuredContent"]["code"], "denied");
    assert!(sb.project.join("old.txt").exists());
    // Unanswered, it expires: the call gets approval_expired and the approval cannot be used.
    let second = call_async(
        server.port,
        &token,
        "delete_path",
        json!({"project": "demo", "path": "old.txt"}),
    );
    let id = wait_pending(&sb);
    let v = second.join().unwrap();
    assert_eq!(v["result"]["structuredContent"]["code"], "approval_expired", "{v}");
    assert!(sb.err(&["approvals", "approve", &id]).contains("already expired"));
    assert!(sb.project.join("old.txt").exists());
    assert!(sb.err(&["approvals", "approve", "apr_nosuchapproval"]).contains("no approval"));
}

#[test]
fn pe01_approvals_cannot_be_granted_while_paused_and_pause_stops_approved_changes() {
    let (sb, token) = writable();
    let server = sb.serve();
    std::fs::write(sb.project.join("old.txt"), "x").unwrap();
    let call = call_async(
        server.port,
        &token,
        "delete_path",
        json!({"project": "demo", "path": "old.txt"}),
    );
    let id = wait_pending(&sb);
    sb.ok(&["pause"]);
    assert!(sb.err(&["approvals", "approve", &id]).contains("paused"));
    sb.ok(&["approvals", "deny", &id, "--reason", "paused for now"]);
    let v = call.join().unwrap();
    assert!(
        v["result"]["structuredContent"]["message"].as_str().unwrap().contains("paused for now")
    );
    sb.ok(&["resume"]);
    assert!(sb.project.join("old.txt").exists());
}

#[test]
fn writes_ask_when_the_policy_says_so_and_stale_hashes_conflict() {
    let (sb, token) = writable();
    sb.ok(&["project", "policy", "demo", "--writes", "ask"]);
    let server = sb.serve();
    let call = call_async(
        server.port,
        &token,
        "write_file",
        json!({"project": "demo", "path": "new.txt", "content": "hello"}),
    );
    let id = wait_pending(&sb);
    let shown = sb.ok(&["approvals", "show", &id]);
    assert!(shown.contains("new.txt") && shown.contains("write_file"), "{shown}");
    sb.ok(&["approvals", "approve", &id]);
    let v = call.join().unwrap();
    assert_eq!(v["result"]["isError"], false, "{v}");
    assert_eq!(std::fs::read_to_string(sb.project.join("new.txt")).unwrap(), "hello");
}

#[test]
fn pc01_an_interrupted_change_is_rolled_back_at_the_next_start_never_replayed() {
    // The crash itself is simulated at the runner level (crates/sluice-runner tests kill a
    // commit after every step); here the serving engine must run recovery when it starts, and a
    // pending approval left by the dead process must be aborted, never executed.
    let (sb, token) = writable();
    std::fs::write(sb.project.join("old.txt"), "x").unwrap();
    let server = sb.serve();
    let call = call_async(
        server.port,
        &token,
        "delete_path",
        json!({"project": "demo", "path": "old.txt"}),
    );
    let id = wait_pending(&sb);
    drop(server); // kill -9 while the approval is pending
    let _ = call.join();
    let server = sb.serve();
    let shown = sb.ok(&["approvals", "show", &id]);
    assert!(shown.contains("[aborted]"), "{shown}");
    assert!(sb.err(&["approvals", "approve", &id]).contains("already aborted"));
    assert!(sb.project.join("old.txt").exists());
    drop(server);
}

#[test]
fn a_second_engine_cannot_serve_the_same_data_folder() {
    let (sb, _token) = writable();
    let _server = sb.serve();
    let port = free_port().to_string();
    assert!(sb.err(&["serve", "--port", &port]).contains("already serving"));
}

#[test]
fn a_client_that_disconnects_withdraws_its_approval() {
    let (sb, token) = writable();
    let server = sb.serve();
    std::fs::write(sb.project.join("old.txt"), "x").unwrap();
    let body = call_body("delete_path", json!({"project": "demo", "path": "old.txt"}));
    let s = open_call(server.port, &token, &body);
    let id = wait_pending(&sb);
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let shown = sb.ok(&["approvals", "show", &id]);
        if shown.contains("[withdrawn]") {
            break;
        }
        assert!(Instant::now() < deadline, "never withdrawn: {shown}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(sb.err(&["approvals", "approve", &id]).contains("already withdrawn"));
    assert!(sb.project.join("old.txt").exists());
}

#[test]
fn a_waiting_call_answers_its_headers_before_the_user_decides() {
    use std::io::{BufRead, BufReader, Read};
    let (sb, token) = writable();
    let server = sb.serve();
    std::fs::write(sb.project.join("old.txt"), "x").unwrap();
    let body = call_body("delete_path", json!({"project": "demo", "path": "old.txt"}));
    let s = open_call(server.port, &token, &body);
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let id = wait_pending(&sb);
    // Nobody has decided yet, and the response has already begun: a status line and an event
    // stream, so a client with a short header timeout keeps waiting.
    let mut reader = BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "closed before any header: {head}");
        if line == "\r\n" {
            break;
        }
        head.push_str(&line.to_ascii_lowercase());
    }
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(pending(&sb).iter().any(|a| a["id"] == id), "decided before the headers came");
    sb.ok(&["approvals", "approve", &id]);
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("\"isError\":false"), "{rest}");
    assert!(!sb.project.join("old.txt").exists());
}

#[test]
fn a_waiting_call_sends_progress_when_the_client_asked_for_it() {
    use std::io::{BufRead, BufReader};
    let (sb, token) = writable();
    let server = sb.serve();
    std::fs::write(sb.project.join("old.txt"), "x").unwrap();
    let body = json!({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {
            "name": "delete_path",
            "arguments": {"project": "demo", "path": "old.txt"},
            "_meta": {"progressToken": "p-1"}
        }
    })
    .to_string();
    let s = open_call(server.port, &token, &body);
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let id = wait_pending(&sb);
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    // The progress notification arrives on the response stream while the call waits.
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "stream ended before any progress");
        if line.contains("notifications/progress") {
            assert!(line.contains("p-1") && line.contains("waiting for the user"), "{line}");
            break;
        }
    }
    sb.ok(&["approvals", "approve", &id]);
    let mut rest = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        rest.push_str(&line);
        if line.contains("\"id\":9") {
            break;
        }
    }
    assert!(rest.contains("\"isError\":false"), "{rest}");
    assert!(!sb.project.join("old.txt").exists());
}

#[cfg(debug_assertions)]
#[test]
fn pc01_kill_9_in_the_middle_of_a_patch_leaves_the_project_fully_before() {
    use std::io::Write;
    let (sb, token) = writable();
    for i in 0..4 {
        std::fs::write(sb.project.join(format!("f{i}.txt")), format!("one\ntwo {i}\n")).unwrap();
    }
    let before = snapshot(&sb.project);
    // The serving process stops for good after two of the patch's five steps.
    let server = sb.serve_env(&[("SLUICE_FAILPOINT_STALL_COMMIT_AFTER", "2")]);
    let patch: String = (0..4)
        .map(|i| format!("*** Update File: f{i}.txt\n@@\n one\n-two {i}\n+TWO {i}\n"))
        .chain(std::iter::once("*** Add File: added.txt\n+new\n".to_owned()))
        .collect();
    let body = call_body(
        "apply_patch",
        json!({"project": "demo", "patch": format!("*** Begin Patch\n{patch}*** End Patch\n")}),
    );
    let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{}Content-Length: {}\r\n\r\n{body}",
        server.port,
        bearer(&token),
        body.len()
    )
    .unwrap();
    // Wait until the change is half done on disk: two files rewritten.
    let deadline = Instant::now() + Duration::from_secs(20);
    while snapshot(&sb.project).iter().filter(|(_, b)| b.starts_with(b"one\nTWO")).count() < 2 {
        assert!(Instant::now() < deadline, "the patch never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(server); // SIGKILL, mid-change
    drop(s);
    assert_ne!(snapshot(&sb.project), before, "the kill really landed mid-change");
    // The next start rolls the change back; nothing is replayed.
    let server = sb.serve();
    assert_eq!(snapshot(&sb.project), before);
    let audit = sb.ok(&["audit", "list"]);
    assert!(audit.contains("recover"), "{audit}");
    // And the project works normally afterwards.
    let v = call(server.port, &token, "read_file", json!({"project": "demo", "path": "f0.txt"}));
    assert_eq!(v["result"]["structuredContent"]["content"], "one\ntwo 0\n");
}
