//! Token profiles end to end: chosen with the CLI, shown in `token list`, enforced by the real
//! server on `tools/list` and `tools/call`, changed by another process while it serves.

use serde_json::{Value, json};

use crate::harness::{Sandbox, bearer, call, ok, post, refused};

/// The tool names `tools/list` offers this token.
fn tool_names(port: u16, token: &str) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
    let r = post(port, &bearer(token), &body);
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    let mut names: Vec<String> = v["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {v}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn token_profiles_are_chosen_listed_changed_and_checked_by_the_cli() {
    let sb = Sandbox::new();
    sb.add_project();
    // The default for a new token is review, and it says so.
    let out = sb.ok(&["token", "create", "--label", "plain"]);
    assert!(out.contains("Profile: review"), "{out}");
    sb.token("builder", &["--profile", "agent"]);
    let list = sb.ok(&["token", "list"]);
    assert!(list.contains("profile:   review") && list.contains("profile:   agent"), "{list}");
    let json: Value = serde_json::from_str(&sb.ok(&["token", "list", "--json"])).unwrap();
    let profile_of = |json: &Value, label: &str| {
        json.as_array().unwrap().iter().find(|t| t["label"] == label).unwrap()["profile"].clone()
    };
    assert_eq!(profile_of(&json, "builder"), "agent");
    let out = sb.ok(&["token", "set-profile", "builder", "edit"]);
    assert!(out.contains("edit profile"), "{out}");
    let json: Value = serde_json::from_str(&sb.ok(&["token", "list", "--json"])).unwrap();
    assert_eq!(profile_of(&json, "builder"), "edit");
    // A bad name is a clear error and changes nothing.
    let err = sb.err(&["token", "set-profile", "builder", "root"]);
    assert!(err.contains("review, edit, agent, full"), "{err}");
    let err = sb.err(&["token", "create", "--label", "x", "--profile", "admin"]);
    assert!(err.contains("review, edit, agent, full"), "{err}");
    assert!(!sb.ok(&["token", "list"]).contains("  x  "));
    let json: Value = serde_json::from_str(&sb.ok(&["token", "list", "--json"])).unwrap();
    assert_eq!(profile_of(&json, "builder"), "edit");
    let err = sb.err(&["token", "set-profile", "nobody", "edit"]);
    assert!(err.contains("nobody"), "{err}");
}

#[test]
fn a_review_token_sees_and_calls_only_read_tools_until_the_user_widens_it() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write", "--exec", "any"]);
    let token = sb.token("reviewer", &["--profile", "review"]);
    let server = sb.serve();
    let names = tool_names(server.port, &token);
    for read in ["read_file", "search_text", "git_log", "list_projects", "server_info"] {
        assert!(names.contains(&read.to_owned()), "{read} missing: {names:?}");
    }
    for other in ["write_file", "delete_path", "run_command", "start_job", "list_jobs"] {
        assert!(!names.contains(&other.to_owned()), "{other} offered: {names:?}");
    }
    let write = json!({"project": "demo", "path": "new.txt", "content": "x"});
    let msg = refused(&call(server.port, &token, "write_file", write.clone()), "outside_profile");
    assert!(msg.contains("review") && msg.contains("write_file"), "{msg}");
    assert!(!sb.project.join("new.txt").exists());
    let info = ok(&call(server.port, &token, "server_info", json!({})));
    assert_eq!(info["profile"], "review");
    let listed = ok(&call(server.port, &token, "list_projects", json!({})));
    assert_eq!(listed["projects"][0]["access"], "read-only", "{listed}");
    // Audited like other refusals.
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "100"]);
    assert!(audit.contains("outside_profile"), "{audit}");

    // Changed by another process (the CLI) while the server runs: applied at the next request.
    sb.ok(&["token", "set-profile", "reviewer", "edit"]);
    let names = tool_names(server.port, &token);
    assert!(names.contains(&"write_file".to_owned()) && !names.contains(&"run_command".into()));
    ok(&call(server.port, &token, "write_file", write));
    assert!(sb.project.join("new.txt").exists());
    let run = json!({"project": "demo", "program": "true"});
    refused(&call(server.port, &token, "run_command", run), "outside_profile");
    // And narrowed again, at once.
    sb.ok(&["token", "set-profile", "reviewer", "review"]);
    let edit = json!({"project": "demo", "path": "new.txt", "old": "x", "new": "y"});
    refused(&call(server.port, &token, "edit_file", edit), "outside_profile");
    server.stop();
}

#[test]
fn a_profile_never_widens_the_project_modes() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("agent", &["--profile", "agent"]);
    let server = sb.serve();
    assert!(tool_names(server.port, &token).contains(&"write_file".to_owned()));
    let write = json!({"project": "demo", "path": "new.txt", "content": "x"});
    refused(&call(server.port, &token, "write_file", write), "read_only_project");
    let run = json!({"project": "demo", "program": "true"});
    refused(&call(server.port, &token, "run_command", run), "forbidden");
    assert!(!sb.project.join("new.txt").exists());
    // The assistant can lower itself to the review rung (the read-only limit), never up.
    let dropped = ok(&call(server.port, &token, "drop_privileges", json!({"to": "review"})));
    assert_eq!(dropped["limit"], "read-only", "{dropped}");
    let v = call(server.port, &token, "drop_privileges", json!({"to": "full"}));
    assert!(v["error"].is_object() || v["result"]["isError"] == json!(true), "{v}");
    assert_eq!(ok(&call(server.port, &token, "server_info", json!({})))["self_limit"], "read-only");
    server.stop();
}

/// The official Python MCP SDK: a review token's `tools/list` and refusals, an agent token in a
/// read-only project (tests/clients/python_profiles.py asserts).
#[test]
fn python_sdk_sees_a_review_token_read_only_and_an_agent_token_held_by_the_project_mode() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write", "--exec", "any"]);
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    sb.ok(&["project", "add", other.to_str().unwrap(), "--name", "locked"]);
    let review = sb.token("review", &["--profile", "review"]);
    let agent = sb.token("agent", &["--profile", "agent"]);
    let server = sb.serve();
    let out = crate::harness::python_client("python_profiles.py")
        .args(["--url", &server.url(), "--writable", "demo", "--read-only", "locked"])
        .env("SLUICE_REVIEW_TOKEN", &review)
        .env("SLUICE_AGENT_TOKEN", &agent)
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .expect("run the Python client");
    crate::harness::passed(&out);
    assert!(!sb.project.join("from-review.txt").exists());
    assert!(!other.join("from-agent.txt").exists());
    assert!(sb.project.join("from-agent.txt").exists());
    server.stop();
}

/// `drop_privileges` moves a token down the profile ladder, never up, audited with its reason;
/// only the user moves it back up.
#[test]
fn an_assistant_lowers_its_own_profile_down_the_ladder_and_never_up() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write", "--exec", "any"]);
    let token = sb.token("helper", &["--profile", "full"]);
    let server = sb.serve();
    let drop = |to: &str| ok(&call(server.port, &token, "drop_privileges", json!({"to": to})));
    let dropped = drop("agent");
    assert_eq!((&dropped["limit"], &dropped["profile"]), (&json!("none"), &json!("agent")));
    let args = json!({"to": "edit", "reason": "only edits from here"});
    let dropped = ok(&call(server.port, &token, "drop_privileges", args));
    assert_eq!(dropped["profile"], "edit", "{dropped}");
    assert!(dropped["message"].as_str().unwrap().contains("runs nothing"), "{dropped}");
    let names = tool_names(server.port, &token);
    assert!(names.contains(&"write_file".to_owned()), "{names:?}");
    assert!(!names.contains(&"run_command".to_owned()), "{names:?}");
    let run = json!({"project": "demo", "program": "true"});
    refused(&call(server.port, &token, "run_command", run), "outside_profile");
    // Up the ladder: the lower rung is kept.
    assert_eq!(drop("agent")["profile"], "edit");
    assert_eq!(drop("edit")["profile"], "edit");
    let list = sb.ok(&["token", "list"]);
    assert!(list.contains("profile:   edit"), "{list}");
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "100"]);
    assert!(audit.contains("profile edit: only edits from here"), "{audit}");
    // The user restores it.
    sb.ok(&["token", "set-profile", "helper", "agent"]);
    assert!(tool_names(server.port, &token).contains(&"run_command".to_owned()));
    // A bad rung is a clear refusal that changes nothing.
    let v = call(server.port, &token, "drop_privileges", json!({"to": "root"}));
    assert!(v["error"].is_object() || v["result"]["isError"] == json!(true), "{v}");
    assert!(sb.ok(&["token", "list"]).contains("profile:   agent"));
    server.stop();
}
