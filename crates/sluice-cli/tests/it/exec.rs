//! Execution end to end against the real binary, the human side played through the CLI. Over
//! raw HTTP: modes allow and refuse what they should, arguments stay literal (CI-01), jobs
//! outlive their client, cancel and the emergency stop leave no survivors (ES-02, PE-02), the
//! stop survives a restart, and allow rules match only the exact command (AP-03). With the
//! official Python MCP SDK (tests/clients/python_exec.py): every mode, CI-01, CI-02, CI-03,
//! ES-01, Landlock (writes outside the project, network off) and a cancelled tree.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

fn wait_no_survivors(marker: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while !survivors(marker).is_empty() {
        assert!(Instant::now() < deadline, "survivors: {:?}", survivors(marker));
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_running(port: u16, token: &str, job: &str, marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let st = ok(&call(port, token, "job_status", json!({"job_id": job})));
        if st["state"] == "running" && survivors(marker).len() >= 2 {
            return;
        }
        assert!(Instant::now() < deadline, "job did not start: {st}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A unique number, so `sleep N` marks this test's processes in /proc.
fn marker() -> String {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    format!("{}", 900_000 + (t.subsec_nanos() as u64 + std::process::id() as u64 * 31) % 90_000)
}

/// A job that prints, then leaves a `setsid` grandchild and a double-forked one behind.
fn tree_job(m: &str) -> Value {
    json!({
        "project": "demo",
        "program": "sh",
        "args": ["-c", format!("echo started; setsid sleep {m} & (sleep {m} &) ; sleep {m}")],
    })
}

#[test]
fn exec_off_refuses_and_safe_mode_runs_version_checks_without_asking() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("runner", &[]);
    let server = sb.serve();
    let args = json!({"project": "demo", "program": "git", "args": ["--version"]});
    let msg = refused(&call(server.port, &token, "run_command", args.clone()), "forbidden");
    assert!(msg.contains("execution is off"), "{msg}");

    sb.ok(&["project", "set", "demo", "--exec", "safe"]);
    let out = ok(&call(server.port, &token, "run_command", args));
    assert_eq!(out["state"], "succeeded", "{out}");
    assert!(out["stdout"].as_str().unwrap().starts_with("git version"), "{out}");
    assert!(pending(&sb).is_empty());
    // Anything beyond an inspection is refused in safe mode.
    let rm = json!({"project": "demo", "program": "rm", "args": ["-rf", "src"]});
    refused(&call(server.port, &token, "run_command", rm), "forbidden");
    assert!(sb.project.join("src/main.rs").exists());
}

#[test]
fn ci01_any_mode_asks_and_arguments_stay_literal() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let args = json!({"project": "demo", "program": "echo", "args": ["$(id)", ";id", "a\nid"]});
    let out = ok(&approved(&sb, server.port, &token, "run_command", args, &[]));
    assert_eq!(out["stdout"], "$(id) ;id a\nid\n", "{out}");
    assert_eq!(out["exit_code"], 0);
}

#[test]
fn ap03_an_allow_rule_matches_only_the_exact_command() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let exact = json!({"project": "demo", "program": "echo", "args": ["hello"]});
    let out = ok(&approved(&sb, server.port, &token, "run_command", exact.clone(), &["--always"]));
    assert_eq!(out["stdout"], "hello\n");
    let rules = sb.ok(&["rules", "list", "demo"]);
    assert!(rules.contains("echo hello"), "{rules}");
    assert!(rules.contains("added from the CLI, asked by runner"), "{rules}");

    // The same command runs at once now, without asking.
    let out = ok(&call(server.port, &token, "run_command", exact.clone()));
    assert_eq!(out["stdout"], "hello\n");
    assert!(pending(&sb).is_empty());

    // Anything else still asks: a longer argv, another argument.
    for args in [json!(["hello", "world"]), json!(["hello;id"])] {
        let other = json!({"project": "demo", "program": "echo", "args": args});
        let call = call_async(server.port, &token, "run_command", other);
        let a = wait_pending(&sb);
        sb.ok(&["approvals", "deny", a["id"].as_str().unwrap()]);
        refused(&call.join().unwrap(), "denied");
    }

    // Removing the rule makes the exact command ask again.
    let list: Value = serde_json::from_str(&sb.ok(&["rules", "list", "--json"])).unwrap();
    assert_eq!((&list[0]["added_from"], &list[0]["asked_by"]), (&json!("cli"), &json!("runner")));
    let id = list[0]["id"].to_string();
    sb.ok(&["rules", "remove", &id]);
    let call = call_async(server.port, &token, "run_command", exact);
    let a = wait_pending(&sb);
    sb.ok(&["approvals", "deny", a["id"].as_str().unwrap()]);
    refused(&call.join().unwrap(), "denied");
}

/// Every character a terminal could act on, that draws a second line, or that disguises text.
fn hidden_in(out: &str) -> Vec<String> {
    out.chars()
        .filter(|&c| c != '\n' && sluice_core::text::is_hidden(c))
        .map(|c| format!("U+{:04X}", c as u32))
        .collect()
}

/// Approval text a terminal could be made to misrender: an assistant's argument, environment
/// value and working folder carry a newline that draws a fake second "action:" line, an OSC
/// sequence (clipboard write), a C1 CSI, a line separator, a bidi override and a tag character.
/// Every CLI surface shows each as its code point: `approvals list`, `list --json`, `show`, the
/// approve and deny confirmations, `rules list` and its JSON, `jobs` and the audit log.
#[test]
fn ap07_approval_fields_are_escaped_alike_on_every_cli_surface() {
    let (sb, token) = executable("any");
    std::fs::create_dir_all(sb.project.join("w\u{202E}txt.exe")).unwrap();
    let server = sb.serve();
    let args = json!({
        "project": "demo",
        "program": "echo",
        "args": ["\u{1b}]52;c;cGF3bmVk\u{7}", "ok\u{2028}fine"],
        "cwd": "w\u{202E}txt.exe",
        "env": {
            "CI": "1\n  action:   run echo harmless",
            "NODE_ENV": "\u{9b}31mred\u{E0041}",
        },
    });
    let call = call_async(server.port, &token, "run_command", args.clone());
    let a = wait_pending(&sb);
    let id = a["id"].as_str().unwrap().to_owned();
    let list = sb.ok(&["approvals", "list"]);
    let json = sb.ok(&["approvals", "list", "--json"]);
    let show = sb.ok(&["approvals", "show", &id]);
    for out in [&list, &json, &show] {
        assert_eq!(hidden_in(out), Vec::<String>::new(), "{out}");
    }
    let actions = show.lines().filter(|l| l.trim_start().starts_with("action:")).count();
    assert_eq!(actions, 1, "one action line, not a forged second one:\n{show}");
    for shown in ["⟨U+000A⟩  action:", "⟨U+001B⟩]52;c;", "⟨U+009B⟩31m", "⟨U+2028⟩", "w⟨U+202E⟩txt"]
    {
        assert!(show.contains(shown), "{shown} in {show}");
    }
    let denied = sb.ok(&["approvals", "deny", &id, "--reason", "no\u{202E}pe"]);
    assert_eq!(hidden_in(&denied), Vec::<String>::new(), "{denied}");
    refused(&call.join().unwrap(), "denied");
    let decided = sb.ok(&["approvals", "show", &id]);
    assert_eq!(hidden_in(&decided), Vec::<String>::new(), "{decided}");
    // The reason lost its hidden characters when the user gave it.
    assert!(decided.contains("reason:   nope"), "{decided}");

    // Approved always: the confirmation, the rule, the job and the audit entries.
    let call = call_async(server.port, &token, "run_command", args);
    let a = wait_pending(&sb);
    let approved = sb.ok(&["approvals", "approve", a["id"].as_str().unwrap(), "--always"]);
    ok(&call.join().unwrap());
    let surfaces = [
        approved,
        sb.ok(&["rules", "list"]),
        sb.ok(&["rules", "list", "--json"]),
        sb.ok(&["jobs"]),
        sb.ok(&["jobs", "--json"]),
        sb.ok(&["audit", "list"]),
        sb.ok(&["audit", "list", "--json"]),
    ];
    for out in &surfaces {
        assert_eq!(hidden_in(out), Vec::<String>::new(), "{out}");
    }
    assert!(surfaces[1].contains("⟨U+000A⟩  action:"), "{}", surfaces[1]);
}

/// An assistant lowers its own privileges (`drop_privileges`) and cannot raise them again.
/// Read-only keeps reads and refuses changes and commands, denies what it waited for and ends
/// the jobs it started; `paused` refuses every request; asking for read-only again cannot lift
/// `paused`; only `sluice token restore` does. The audit log records it with its reason.
#[test]
fn an_assistant_drops_its_own_privileges_and_only_the_user_restores_them() {
    let (sb, token) = executable("any");
    let other = sb.token("bystander", &[]);
    std::fs::write(sb.project.join("doomed.txt"), "keep me\n").unwrap();
    let server = sb.serve();
    let port = server.port;
    let m = marker();
    let job = json!({"project": "demo", "program": "sleep", "args": [m.clone()]});
    let started = ok(&approved(&sb, port, &token, "start_job", job, &[]));
    let job_id = started["job_id"].as_str().unwrap().to_owned();
    assert!(!survivors(&m).is_empty(), "the job runs");
    let waiting =
        call_async(port, &token, "delete_path", json!({"project": "demo", "path": "doomed.txt"}));
    wait_pending(&sb);

    let why = "I am not sure what I am doing";
    let drop = |to: &str| call(port, &token, "drop_privileges", json!({"to": to, "reason": why}));
    let out = ok(&drop("read-only"));
    assert_eq!(out["limit"], "read-only", "{out}");
    // What it waited for is denied, what it started is gone.
    refused(&waiting.join().unwrap(), "denied");
    assert!(sb.project.join("doomed.txt").exists());
    wait_no_survivors(&m, Duration::from_secs(10));
    let st = ok(&call(port, &token, "job_status", json!({"job_id": job_id})));
    assert_eq!(st["state"], "cancelled", "{st}");

    // Reads work; changes and commands are refused, saying why and who can undo it.
    let read = json!({"project": "demo", "path": "doomed.txt"});
    assert_eq!(ok(&call(port, &token, "read_file", read))["content"], "keep me\n");
    let write = json!({"project": "demo", "path": "new.txt", "content": "x"});
    let msg = refused(&call(port, &token, "write_file", write.clone()), "read_only_project");
    assert!(msg.contains("drop_privileges") && msg.contains("only the user"), "{msg}");
    let run = json!({"project": "demo", "program": "true"});
    refused(&call(port, &token, "run_command", run), "forbidden");
    let listed = ok(&call(port, &token, "list_projects", json!({})));
    assert_eq!(
        (&listed["projects"][0]["access"], &listed["projects"][0]["execution"]),
        (&json!("read-only"), &json!("off"))
    );
    assert_eq!(ok(&call(port, &token, "server_info", json!({})))["self_limit"], "read-only");
    // Nothing the assistant sends raises it: an unknown level is refused, others are unchanged.
    let v = call(port, &token, "drop_privileges", json!({"to": "read-write"}));
    assert!(v["error"].is_object() || v["result"]["isError"] == json!(true), "{v}");
    assert_eq!(ok(&call(port, &token, "server_info", json!({})))["self_limit"], "read-only");
    ok(&call(port, &other, "write_file", write.clone()));

    // Paused: every request refused, as when the user pauses, and read-only cannot lift it.
    assert_eq!(ok(&drop("paused"))["limit"], "paused");
    let r = post(port, &bearer(&token), &call_body("drop_privileges", json!({"to": "read-only"})));
    assert_eq!(r.status, 503, "{}", r.body);
    let v = r.json();
    assert_eq!((&v["id"], &v["error"]["code"]), (&json!(2), &json!(-31503)), "{v}");
    assert_eq!(v["error"]["data"]["code"], "paused");
    let listed: Value = serde_json::from_str(&sb.ok(&["token", "list", "--json"])).unwrap();
    let runner = listed.as_array().unwrap().iter().find(|t| t["label"] == "runner").unwrap();
    assert_eq!(runner["self_limit"], "paused", "{runner}");
    assert!(sb.ok(&["token", "list"]).contains("[paused by its own choice]"));
    let audit = sb.ok(&["audit", "list", "--json"]);
    assert!(
        audit.contains("token.self_limit") && audit.contains(&format!("read-only: {why}")),
        "{audit}"
    );
    // The delete it gave up is recorded as the assistant's doing, never as the user's decision.
    let denied: Vec<Value> = audit
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["action"] == "approval.denied")
        .collect();
    assert_eq!(denied.len(), 1, "{audit}");
    assert_eq!(denied[0]["actor"], "runner", "{audit}");

    // Only the user restores it.
    assert!(sb.err(&["token", "restore", "bystander"]).contains("no limit of its own"));
    sb.ok(&["token", "restore", "runner"]);
    ok(&call(
        port,
        &token,
        "write_file",
        json!({"project": "demo", "path": "new2.txt", "content": "y"}),
    ));
    assert!(sb.ok(&["audit", "list"]).contains("token.lift_limit"));
}

#[test]
fn ap05_an_always_allowed_make_asks_again_once_the_assistant_changes_its_recipes() {
    let (sb, token) = executable("any");
    std::fs::write(sb.project.join("Makefile"), "hello:\n\t@echo approved recipe\n").unwrap();
    let server = sb.serve();
    let make = json!({"project": "demo", "program": "make", "args": ["hello"]});
    let out = ok(&approved(&sb, server.port, &token, "run_command", make.clone(), &["--always"]));
    assert_eq!(out["stdout"], "approved recipe\n");
    let rules = sb.ok(&["rules", "list", "demo"]);
    assert!(rules.contains("stay as approved"), "{rules}");
    let out = ok(&call(server.port, &token, "run_command", make.clone()));
    assert_eq!(out["stdout"], "approved recipe\n", "allowed while the recipes are unchanged");
    assert!(pending(&sb).is_empty());

    // The assistant adds a GNUmakefile, which make reads before the approved Makefile.
    let rug = json!({"project": "demo", "path": "GNUmakefile", "content": "hello:\n\t@id\n"});
    ok(&call(server.port, &token, "write_file", rug));
    let asked = call_async(server.port, &token, "run_command", make.clone());
    let a = wait_pending(&sb);
    sb.ok(&["approvals", "deny", a["id"].as_str().unwrap()]);
    refused(&asked.join().unwrap(), "denied");

    // A recipe changed while the prompt is open: the approval does not carry over to it.
    let asked = call_async(server.port, &token, "run_command", make);
    let a = wait_pending(&sb);
    std::fs::write(sb.project.join("GNUmakefile"), "hello:\n\t@echo swapped\n").unwrap();
    sb.ok(&["approvals", "approve", a["id"].as_str().unwrap()]);
    refused(&asked.join().unwrap(), "conflict");
}

#[test]
fn ta03_revoking_a_token_denies_what_it_waits_for_and_refuses_it_from_then_on() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let touch = json!({"project": "demo", "program": "touch", "args": ["ran.txt"]});
    let waiting = call_async(server.port, &token, "run_command", touch);
    let a = wait_pending(&sb);
    sb.ok(&["token", "revoke", "runner"]);
    let message = refused(&waiting.join().unwrap(), "denied");
    assert!(message.contains("token was revoked"), "{message}");
    assert!(!sb.project.join("ran.txt").exists(), "nothing ran");
    let shown = sb.ok(&["approvals", "show", a["id"].as_str().unwrap()]);
    assert!(shown.contains("denied") && shown.contains("token revoked"), "{shown}");
    // The next request with it gets 401.
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let r = post(server.port, &format!("Authorization: Bearer {token}\r\n"), ping);
    assert_eq!(r.status, 401, "{}", r.body);
}

#[test]
fn a_job_outlives_its_client_and_cancel_leaves_no_survivors() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let m = marker();
    let job = ok(&approved(&sb, server.port, &token, "start_job", tree_job(&m), &[]));
    let id = job["job_id"].as_str().unwrap().to_owned();
    // Every raw call is its own connection: the starting client is long gone.
    wait_running(server.port, &token, &id, &m);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let page = ok(&call(server.port, &token, "job_logs", json!({"job_id": id, "cursor": 0})));
        if page["text"] == "started\n" {
            assert_eq!(page["next_cursor"], 8);
            let next =
                ok(&call(server.port, &token, "job_logs", json!({"job_id": id, "cursor": 8})));
            assert_eq!(next["text"], "");
            break;
        }
        assert!(Instant::now() < deadline, "no output: {page}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let listed = ok(&call(server.port, &token, "list_jobs", json!({})));
    assert!(listed["jobs"].as_array().unwrap().iter().any(|j| j["job_id"] == id.as_str()));

    // Another token scoped elsewhere does not see the job.
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    sb.ok(&["project", "add", other.to_str().unwrap(), "--name", "other"]);
    let scoped = sb.token("scoped", &["--projects", "other"]);
    refused(&call(server.port, &scoped, "job_status", json!({"job_id": id})), "not_found");
    let listed = ok(&call(server.port, &scoped, "list_jobs", json!({})));
    assert!(listed["jobs"].as_array().unwrap().is_empty());

    let done = ok(&call(server.port, &token, "cancel_job", json!({"job_id": id})));
    assert_eq!(done["state"], "cancelled", "{done}");
    wait_no_survivors(&m, Duration::from_secs(5));
}

/// Ending a job is a change: a token that limited itself to read-only cannot cancel another
/// client's job (found or finished), which keeps running; the client that may run commands
/// still can.
#[test]
fn a_read_only_token_cannot_cancel_a_job() {
    let (sb, token) = executable("any");
    let limited = sb.token("limited", &[]);
    let server = sb.serve();
    let port = server.port;
    let m = marker();
    let job = json!({"project": "demo", "program": "sleep", "args": [m.clone()]});
    let started = ok(&approved(&sb, port, &token, "start_job", job, &[]));
    let id = started["job_id"].as_str().unwrap().to_owned();
    let drop = json!({"to": "read-only", "reason": "only looking"});
    ok(&call(port, &limited, "drop_privileges", drop));
    let msg = refused(&call(port, &limited, "cancel_job", json!({"job_id": id})), "forbidden");
    assert!(msg.contains("read-only"), "{msg}");
    assert!(!survivors(&m).is_empty(), "the job still runs");
    let st = ok(&call(port, &limited, "job_status", json!({"job_id": id})));
    assert_eq!(st["state"], "running", "reading its state is still allowed: {st}");
    let done = ok(&call(port, &token, "cancel_job", json!({"job_id": id})));
    assert_eq!(done["state"], "cancelled", "{done}");
    wait_no_survivors(&m, Duration::from_secs(5));
    // A finished job is not the read-only token's to touch either.
    refused(&call(port, &limited, "cancel_job", json!({"job_id": id})), "forbidden");
}

#[test]
fn emergency_stop_kills_jobs_denies_approvals_refuses_requests_and_survives_restart() {
    let (sb, token) = executable("any");
    let mut server = sb.serve();
    let m = marker();
    let job = ok(&approved(&sb, server.port, &token, "start_job", tree_job(&m), &[]));
    let id = job["job_id"].as_str().unwrap().to_owned();
    wait_running(server.port, &token, &id, &m);

    // A call waiting for approval when the stop lands is denied by it.
    let waiting = call_async(
        server.port,
        &token,
        "run_command",
        json!({"project": "demo", "program": "echo", "args": ["never"]}),
    );
    let a = wait_pending(&sb);
    sb.ok(&["stop"]);
    let msg = refused(&waiting.join().unwrap(), "denied");
    assert!(msg.contains("emergency stop"), "{msg}");
    let shown = sb.ok(&["approvals", "show", a["id"].as_str().unwrap()]);
    assert!(shown.contains("emergency stop"), "{shown}");

    // The serving engine notices the stop made by another process and kills every tree.
    wait_no_survivors(&m, Duration::from_secs(6));

    // Every request is refused while stopped, and the stop survives a restart.
    let refused_while_stopped = |port: u16| {
        let r = post(port, &bearer(&token), &call_body("list_projects", json!({})));
        assert_eq!(r.status, 503, "{}", r.body);
        let v = r.json();
        assert_eq!((&v["id"], &v["error"]["code"]), (&json!(2), &json!(-31503)), "{v}");
        assert_eq!(v["error"]["data"]["code"], "stopped", "{v}");
    };
    refused_while_stopped(server.port);
    drop(server);
    server = sb.serve();
    refused_while_stopped(server.port);
    assert!(sb.err(&["approvals", "approve", "apr_x"]).contains("no approval"));

    sb.ok(&["resume"]);
    let out = ok(&approved(
        &sb,
        server.port,
        &token,
        "run_command",
        json!({"project": "demo", "program": "echo", "args": ["back"]}),
        &[],
    ));
    assert_eq!(out["stdout"], "back\n");
}

#[test]
fn dropping_a_project_to_read_only_kills_its_jobs() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let m = marker();
    let job = ok(&approved(&sb, server.port, &token, "start_job", tree_job(&m), &[]));
    let id = job["job_id"].as_str().unwrap().to_owned();
    wait_running(server.port, &token, &id, &m);
    sb.ok(&["project", "set", "demo", "--access", "read-only"]);
    wait_no_survivors(&m, Duration::from_secs(6));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let st = ok(&call(server.port, &token, "job_status", json!({"job_id": id})));
        if st["state"] == "cancelled" {
            break;
        }
        assert!(Instant::now() < deadline, "{st}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A project folder holding a small cargo crate with no dependencies (builds offline).
fn cargo_crate(dir: &std::path::Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() {\n    println!(\"hello from a sluice job\");\n}\n",
    )
    .unwrap();
}

#[test]
fn python_sdk_runs_commands_in_every_mode_over_http() {
    let (sb, token) = executable("any");
    let root = sb.root();
    for (name, exec) in [("off", "off"), ("safe", "safe"), ("build", "project")] {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        if name == "build" {
            cargo_crate(&dir);
        }
        let path = dir.to_str().unwrap();
        sb.ok(&["project", "add", path, "--name", name, "--access", "read-write", "--exec", exec]);
    }
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let m = marker();
    // ES-01: secrets in the server's own environment, in shapes the redactor would not catch,
    // so only the environment isolation can keep them out of a job.
    let canaries: Vec<(&str, String)> =
        ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "SLUICE_TOKEN", "RT_CANARY", "NPM_CONFIG_AUTH"]
            .iter()
            .map(|n| (*n, format!("es01{}{m}", n.to_ascii_lowercase().replace('_', ""))))
            .collect();
    let env: Vec<(&str, &str)> = canaries.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let server = sb.serve_env(&env);
    let pairs: Vec<String> = canaries.iter().map(|(n, v)| format!("{n}={v}")).collect();
    // A shielded file the script grants to the project's commands, with a canary of its own.
    let granted = sb.project.join("config/.env.local");
    std::fs::create_dir_all(granted.parent().unwrap()).unwrap();
    std::fs::write(&granted, format!("TOKEN=es36granted{m}\n")).unwrap();
    let out = python_client("python_exec.py")
        .args(["--url", &server.url(), "--sluice", BIN, "--marker", &m, "--outside"])
        .arg(&outside)
        .arg("--granted")
        .arg(&granted)
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_ENV_CANARIES", pairs.join(","))
        .output()
        .expect("run the Python client");
    passed(&out);
    // The script saw cancel_job return; not one process of the tree is left.
    assert_eq!(survivors(&m), Vec::<u32>::new());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "something was written outside");
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    for action in ["run_command", "start_job", "cancel_job", "approval.denied"] {
        assert!(audit.contains(action), "{action} not audited");
    }
    for (_, v) in &canaries {
        assert!(!audit.contains(v.as_str()));
    }
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
}
