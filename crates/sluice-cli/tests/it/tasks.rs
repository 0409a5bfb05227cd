//! The MCP Tasks extension over raw HTTP against the real binary, the human side played through
//! the CLI: a declaring client's command becomes a task that waits for the approval, runs, and
//! hands over its result; `tasks/cancel` withdraws an approval or kills a command; a task
//! survives a restart as a failure, never a replay; another token cannot see it; a client that
//! did not declare the extension is answered as before.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A 2026-07-28 request (per-request `_meta`, routing headers); `tasks` declares the extension.
fn modern(port: u16, token: &str, method: &str, name: &str, params: Value, tasks: bool) -> Value {
    let mut params = params;
    let extensions = if tasks { json!({ TASKS: {} }) } else { json!({}) };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "extensions": extensions },
        "io.modelcontextprotocol/clientInfo": { "name": "raw-tasks", "version": "0" },
    });
    let body = json!({"jsonrpc": "2.0", "id": 11, "method": method, "params": params});
    let headers = format!(
        "Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\nMcp-Name: {name}\r\n"
    );
    let r = post(port, &headers, &body.to_string());
    let v = r.json();
    assert!(v.get("result").is_some() || v.get("error").is_some(), "{}: {}", r.status, r.body);
    v
}

fn start(port: u16, token: &str, tool: &str, args: Value) -> String {
    let v = modern(port, token, "tools/call", tool, json!({"name": tool, "arguments": args}), true);
    let r = &v["result"];
    assert_eq!(r["resultType"], "task", "{v}");
    assert_eq!(r["status"], "working", "{v}");
    assert!(r["ttlMs"].as_u64().unwrap() > 0 && r["pollIntervalMs"].as_u64().is_some(), "{v}");
    let id = r["taskId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("tsk_") && id.len() > 25, "{id}");
    id
}

fn get(port: u16, token: &str, id: &str) -> Value {
    modern(port, token, "tasks/get", id, json!({"taskId": id}), true)
}

/// Polls `tasks/get` until the task leaves `working`.
fn ended(port: u16, token: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = get(port, token, id);
        let status = v["result"]["status"].as_str().unwrap_or_default().to_owned();
        if status != "working" {
            return v["result"].clone();
        }
        assert!(Instant::now() < deadline, "task never ended: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sh(script: &str) -> Value {
    json!({"project": "demo", "program": "sh", "args": ["-c", script], "timeout_seconds": 120})
}

#[test]
fn a_command_runs_as_a_task_through_its_approval_and_hands_over_its_result() {
    let (sb, token) = executable("any");
    let other = sb.token("other", &[]);
    let server = sb.serve();
    let port = server.port;

    // The server says it offers the extension.
    let v = modern(port, &token, "server/discover", "", json!({}), false);
    assert!(v["result"]["capabilities"]["extensions"][TASKS].is_object(), "{v}");

    let id = start(port, &token, "run_command", sh("echo from-a-task"));
    // The call waits for the user as any call does; the task says it is working meanwhile.
    let approval = wait_pending(&sb);
    assert_eq!(get(port, &token, &id)["result"]["status"], "working");
    // Another token cannot see it: the same answer as a task that does not exist.
    for (who, task) in [(&other, id.as_str()), (&token, "tsk_0000000000000000000000000")] {
        let v = get(port, who, task);
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert_eq!(v["error"]["data"]["code"], "not_found", "{v}");
    }
    sb.ok(&["approvals", "approve", approval["id"].as_str().unwrap()]);
    let done = ended(port, &token, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(done["result"]["structuredContent"]["stdout"], "from-a-task\n", "{done}");
    // The call is audited like any other, when it ends.
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "100"]);
    assert!(
        audit.lines().any(|l| l.contains("\"action\":\"run_command\"") && l.contains("\"ok\"")),
        "{audit}"
    );
    // A refusal that needs no waiting is answered at once, as without tasks.
    let v = modern(
        port,
        &token,
        "tools/call",
        "run_command",
        json!({"name": "run_command", "arguments": {"project": "nope", "program": "true"}}),
        true,
    );
    assert_eq!(v["result"]["structuredContent"]["code"], "project_not_found", "{v}");
    // A client that did not declare the extension is answered as before: the call itself.
    let args = json!({"name": "run_command", "arguments": sh("echo plain")});
    let call =
        std::thread::spawn(move || modern(port, &token, "tools/call", "run_command", args, false));
    let approval = wait_pending(&sb);
    sb.ok(&["approvals", "approve", approval["id"].as_str().unwrap()]);
    let v = call.join().unwrap();
    assert_eq!(v["result"]["structuredContent"]["stdout"], "plain\n", "{v}");
    assert!(v["result"].get("taskId").is_none(), "{v}");
}

/// A git write that asks (deleting a branch) is a task too: the client is not held while the
/// user decides.
#[test]
fn a_git_write_that_asks_runs_as_a_task_through_its_approval() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let port = server.port;
    let branch = |action: &str| json!({"project": "demo", "action": action, "name": "feature"});
    let made = modern(
        port,
        &token,
        "tools/call",
        "git_branch",
        json!({"name": "git_branch", "arguments": branch("create")}),
        true,
    );
    // Creating a branch asks nothing here, but it still comes back as a task.
    let id = made["result"]["taskId"].as_str().expect("a task").to_owned();
    assert_eq!(ended(port, &token, &id)["status"], "completed");
    let id = start(port, &token, "git_branch", branch("delete"));
    let approval = wait_pending(&sb);
    assert_eq!(approval["tool"], "git_branch", "{approval}");
    assert_eq!(get(port, &token, &id)["result"]["status"], "working");
    sb.ok(&["approvals", "approve", approval["id"].as_str().unwrap()]);
    let done = ended(port, &token, &id);
    assert_eq!(done["result"]["isError"], false, "{done}");
    let op = done["result"]["structuredContent"]["operation_id"].as_str().unwrap_or_default();
    assert!(op.starts_with("git_"), "{done}");
    let branches = std::process::Command::new("git")
        .current_dir(&sb.project)
        .args(["branch", "--list", "feature"])
        .output()
        .unwrap();
    assert!(branches.stdout.is_empty(), "the branch is deleted");
}

#[test]
fn cancelling_a_task_withdraws_its_approval_or_stops_its_command() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let port = server.port;

    // Waiting for the user: the approval is withdrawn and nothing runs.
    let id = start(port, &token, "run_command", sh("echo ran > ran.txt"));
    let approval = wait_pending(&sb);
    let v = modern(port, &token, "tasks/cancel", &id, json!({"taskId": id}), true);
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    assert_eq!(ended(port, &token, &id)["status"], "cancelled");
    let shown = sb.ok(&["approvals", "show", approval["id"].as_str().unwrap()]);
    assert!(shown.contains("[withdrawn]"), "{shown}");
    assert!(!sb.project.join("ran.txt").exists());

    // Running: the command's tree is killed, and the job says so.
    let id =
        start(port, &token, "run_command", sh("echo up > up.txt; sleep 30; echo late > late.txt"));
    let approval = wait_pending(&sb);
    sb.ok(&["approvals", "approve", approval["id"].as_str().unwrap()]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !sb.project.join("up.txt").exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    modern(port, &token, "tasks/cancel", &id, json!({"taskId": id}), true);
    assert_eq!(ended(port, &token, &id)["status"], "cancelled");
    // The store hears of the job's end from a writer thread.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let jobs: Value = serde_json::from_str(&sb.ok(&["jobs", "--json"])).unwrap();
        if jobs.as_array().unwrap().last().is_some_and(|j| j["state"] == "cancelled") {
            break;
        }
        assert!(Instant::now() < deadline, "the job was never stored as cancelled: {jobs}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!sb.project.join("late.txt").exists());
    // Cancelling an ended task changes nothing and is still acknowledged.
    let v = modern(port, &token, "tasks/cancel", &id, json!({"taskId": id}), true);
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    assert_eq!(get(port, &token, &id)["result"]["status"], "cancelled");
}

#[test]
fn a_task_outlives_a_restart_as_a_failure_never_a_replay() {
    let (sb, token) = executable("any");
    let mut server = sb.serve();
    let id = start(server.port, &token, "run_command", sh("echo ran > ran.txt"));
    let approval = wait_pending(&sb);
    drop(server); // the engine dies while the task waits
    server = sb.serve();
    let done = get(server.port, &token, &id)["result"].clone();
    assert_eq!(done["status"], "failed", "{done}");
    assert!(done["error"]["message"].as_str().unwrap().contains("Sluice stopped"), "{done}");
    let shown = sb.ok(&["approvals", "show", approval["id"].as_str().unwrap()]);
    assert!(shown.contains("[aborted]"), "{shown}");
    assert!(!sb.project.join("ran.txt").exists());
}
