//! A project's commands' sandbox, end to end through the real binary: `sluice project sandbox`
//! shows and edits it and asks before exposing anything (no terminal: only `--yes`), bad paths
//! are refused with a code and change nothing, `show` and `doctor` say what is in force, a store
//! granted through the CLI is readable by a job an assistant runs over MCP and nothing beside
//! it, and no MCP tool can change any of it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::*;

/// A fake home with a store to grant and canaries beside it; every `sluice` and the server get
/// it as `HOME`.
fn home(sb: &Sandbox) -> PathBuf {
    let home = sb.root().join("home");
    for (rel, text) in [
        (".npmrc", "registry=https://npm.example/ NPMRC-VISIBLE".to_owned()),
        (".ssh/id_rsa", sb.canary.clone()),
        (".sibling", sb.canary.clone()),
    ] {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    home
}

fn run(sb: &Sandbox, home: &Path, args: &[&str]) -> std::process::Output {
    sb.cmd().env("HOME", home).args(args).output().expect("run sluice")
}

fn sandbox_json(sb: &Sandbox, home: &Path) -> Value {
    let out = run(sb, home, &["project", "sandbox", "demo", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn project_sandbox_shows_the_list_and_asks_before_exposing_a_store_or_a_socket() {
    let (sb, _token) = executable("any");
    let home = home(&sb);
    let out = run(&sb, &home, &["project", "sandbox", "demo"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("~/.ssh — SSH keys") && text.contains("~/.npmrc — npm registry tokens"));
    assert!(text.contains("require full confinement: off"), "{text}");

    // Not on a terminal and no --yes: the sentence is shown, nothing changes.
    let out = run(&sb, &home, &["project", "sandbox", "demo", "--grant", "~/.npmrc"]);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success());
    assert!(
        stdout.contains(
            "Jobs of project demo will be able to read ~/.npmrc, which holds npm registry tokens."
        ),
        "{stdout}"
    );
    assert!(stderr.contains("pass --yes"), "{stderr}");
    assert_eq!(sandbox_json(&sb, &home)["settings"]["grants"], json!([]));

    // Bad input: a stable code, nothing changed.
    let sock_file = home.join(".sibling").display().to_string();
    for (args, code) in [
        (vec!["--grant", "relative/.npmrc"], "invalid_argument"),
        (vec!["--grant", "~/../etc/passwd"], "invalid_argument"),
        (vec!["--grant", "~/.missing"], "not_found"),
        (vec!["--grant", "~"], "forbidden"),
        (vec!["--allow-socket", &sock_file], "wrong_kind"),
        (vec!["--unhide", "~/.config/sluice"], "forbidden"),
    ] {
        let mut argv = vec!["project", "sandbox", "demo", "--yes"];
        argv.extend(args.iter().copied());
        let out = run(&sb, &home, &argv);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(code), "{args:?}: {err}");
    }
    assert_eq!(sandbox_json(&sb, &home)["settings"], sandbox_json(&sb, &home)["settings"]);
    assert_eq!(sandbox_json(&sb, &home)["settings"]["grants"], json!([]));

    // Hiding more asks nothing; granting with --yes is done, and shown everywhere.
    let mine = "~/.config/tool";
    let out = run(&sb, &home, &["project", "sandbox", "demo", "--hide", mine]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(
        &sb,
        &home,
        &["project", "sandbox", "demo", "--grant", "~/.npmrc", "--require-full", "on", "--yes"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = sandbox_json(&sb, &home);
    assert_eq!(v["settings"]["grants"], json!(["~/.npmrc"]));
    assert_eq!(v["settings"]["hide"], json!([mine]));
    assert_eq!(v["settings"]["require_full"], json!(true));
    let show = String::from_utf8(run(&sb, &home, &["project", "show", "demo"]).stdout).unwrap();
    assert!(
        show.contains("granted:   ~/.npmrc, which holds npm registry tokens: commands can read it"),
        "{show}"
    );
    assert!(show.contains(&format!("{mine} (added by you)")), "{show}");
    let doctor = String::from_utf8(run(&sb, &home, &["doctor"]).stdout).unwrap();
    assert!(doctor.contains("granted ~/.npmrc") && doctor.contains("requires full confinement"));
    assert!(doctor.contains("holds:"), "{doctor}");

    // Lifting the requirement widens: asked like a grant.
    let out = run(&sb, &home, &["project", "sandbox", "demo", "--require-full", "off"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("fallback sandbox"));
    // Revoking narrows: no question.
    let out = run(&sb, &home, &["project", "sandbox", "demo", "--revoke", "~/.npmrc"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(sandbox_json(&sb, &home)["settings"]["grants"], json!([]));
}

/// The attack at the engine's level: an assistant's command (MCP `run_command`, approved)
/// reads the store the human granted, at `$HOME/.npmrc` and its real path, and nothing beside
/// it; the canaries never reach the output.
#[test]
fn sb_grant_a_store_granted_through_the_cli_reaches_a_job_and_nothing_beside_it() {
    let (sb, token) = executable("any");
    let home = home(&sb);
    let out = run(&sb, &home, &["project", "sandbox", "demo", "--grant", "~/.npmrc", "--yes"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let server = sb.serve_env(&[("HOME", home.to_str().unwrap())]);
    let h = home.display();
    let script = format!(
        "cat \"$HOME/.npmrc\"; echo; cat '{h}/.npmrc'; echo; cat '{h}/.ssh/id_rsa' '{h}/.sibling' \
         2>/dev/null; ls -a '{h}' 2>&1; echo end"
    );
    let args = json!({ "project": "demo", "program": "sh", "args": ["-c", script] });
    let v = approved(&sb, server.port, &token, "run_command", args, &[]);
    let out = ok(&v);
    let text = out["stdout"].as_str().unwrap();
    assert_eq!(text.matches("NPMRC-VISIBLE").count(), 2, "{text}");
    assert!(text.contains("end") && !text.contains(&sb.canary), "{text}");
    // The home holds the granted store and nothing else: no `.ssh`, no `.sibling`.
    assert!(!text.contains(".ssh") && !text.contains(".sibling"), "{text}");
    assert!(!out.to_string().contains(&sb.canary));
}

/// No MCP tool reaches a project's sandbox settings: none is listed, and a call to the
/// window's command by name is an unknown tool that changes nothing.
#[test]
fn sb_mcp_no_tool_changes_a_projects_sandbox() {
    let (sb, token) = executable("any");
    let home = home(&sb);
    let server = sb.serve_env(&[("HOME", home.to_str().unwrap())]);
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}).to_string();
    let r = post(server.port, &bearer(&token), &list);
    let v = r.json();
    let names: Vec<&str> = v["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"run_command"), "{names:?}");
    for name in &names {
        for word in ["sandbox", "grant", "socket", "hide", "confine", "expose", "project_set"] {
            assert!(!name.contains(word), "MCP tool {name} looks like it changes the sandbox");
        }
    }
    for tool in ["set_sandbox", "project_sandbox", "grant_store"] {
        let args = json!({ "id": "demo", "settings": { "grants": ["~/.npmrc"] } });
        let r = post(server.port, &bearer(&token), &call_body(tool, args));
        let body: Value = r.json();
        let refused = body.get("error").is_some() || body["result"]["isError"] == json!(true);
        assert!(refused, "{tool}: {body}");
    }
    assert_eq!(sandbox_json(&sb, &home)["settings"]["grants"], json!([]));
}
