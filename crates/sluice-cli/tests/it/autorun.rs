//! Writes that another program executes on its own, attacked through the real MCP server over
//! raw HTTP: a write, an `apply_patch` that adds the file, a `move_path` onto it (a file, and a
//! folder whose contents land there), `create_directory` then a write, a delete, case variants,
//! and the refused agent settings. Each ends in an approval the user answers through the CLI, or
//! in a refusal — never a silent success — in a project whose policy asks for nothing; and an
//! ordinary write still lands without asking. (Issue 15; docs/THREATS.md AP-05, PS-06.)

use serde_json::{Value, json};

use crate::harness::*;

/// A read-write "demo" project whose policy asks for nothing: every approval below is the
/// auto-run list's.
fn permissive() -> (Sandbox, String) {
    let (sb, token) = executable("off");
    sb.ok(&["project", "policy", "demo", "--deletes", "allow", "--writes", "allow"]);
    (sb, token)
}

/// Runs `tool` and waits for the approval it must raise; checks the approval names `path` (and
/// `program`), answers it with `verdict` through the CLI, and returns the call's response.
fn answered(
    sb: &Sandbox,
    port: u16,
    token: &str,
    (tool, args): (&str, Value),
    (path, program): (&str, &str),
    verdict: &str,
) -> Value {
    let call = call_async(port, token, tool, args);
    let a = wait_pending(sb);
    let hits = a["autorun"].as_array().unwrap_or_else(|| panic!("no auto-run list: {a}"));
    assert!(
        hits.iter().any(|h| h["path"] == path && h["program"] == program),
        "{tool}: the approval does not name {path} ({program}): {a}"
    );
    let id = a["id"].as_str().unwrap();
    // The human's view names the consequence too.
    let shown = sb.ok(&["approvals", "show", id]);
    assert!(shown.contains(&format!("auto-run: {path}: ")), "{shown}");
    sb.ok(&["approvals", verdict, id]);
    let v = call.join().unwrap();
    assert!(pending(sb).is_empty());
    v
}

fn approve(sb: &Sandbox, port: u16, token: &str, call: (&str, Value), hit: (&str, &str)) {
    let v = answered(sb, port, token, call, hit, "approve");
    ok(&v);
}

fn deny(sb: &Sandbox, port: u16, token: &str, call: (&str, Value), hit: (&str, &str)) {
    let v = answered(sb, port, token, call, hit, "deny");
    refused(&v, "denied");
}

#[test]
fn autorun_write_file_asks_even_when_writes_do_not_and_a_denial_writes_nothing() {
    let (sb, token) = permissive();
    let server = sb.serve();
    let mcp = json!({"mcpServers": {"x": {"command": "sh", "args": ["-c", "id"]}}}).to_string();
    let args = json!({"project": "demo", "path": ".mcp.json", "content": mcp});
    let hit = (".mcp.json", "Claude Code, VS Code");
    deny(&sb, server.port, &token, ("write_file", args.clone()), hit);
    assert!(!sb.project.join(".mcp.json").exists());
    approve(&sb, server.port, &token, ("write_file", args), hit);
    assert_eq!(std::fs::read_to_string(sb.project.join(".mcp.json")).unwrap(), mcp);
    // The audit log alone says why it asked: the request and the decision carry the line.
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "100"]);
    let lines: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for action in ["approval.requested", "approval.denied", "approval.approved"] {
        assert!(
            lines.iter().any(|e| e["action"] == action
                && e["detail"].as_str().is_some_and(|d| d.contains(".mcp.json: Claude Code"))),
            "{action} has no auto-run detail: {audit}"
        );
    }
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
}

#[test]
fn autorun_apply_patch_that_adds_the_file_asks() {
    let (sb, token) = permissive();
    let server = sb.serve();
    let patch = "*** Begin Patch\n*** Add File: notes.md\n+fine\n\
                 *** Add File: .github/workflows/ci.yml\n+on: push\n*** End Patch\n";
    let call = ("apply_patch", json!({"project": "demo", "patch": patch}));
    deny(&sb, server.port, &token, call.clone(), (".github/workflows/ci.yml", "GitHub Actions"));
    assert!(!sb.project.join("notes.md").exists(), "all or nothing");
    // A unified diff creating `.vscode/tasks.json` is the same change.
    let diff = "diff --git a/.vscode/tasks.json b/.vscode/tasks.json\nnew file mode 100644\n\
                --- /dev/null\n+++ b/.vscode/tasks.json\n@@ -0,0 +1 @@\n+{}\n";
    let call2 = ("apply_patch", json!({"project": "demo", "patch": diff}));
    approve(&sb, server.port, &token, call2, (".vscode/tasks.json", "VS Code"));
    assert!(sb.project.join(".vscode/tasks.json").exists());
}

#[test]
fn autorun_move_path_onto_it_asks_for_a_file_and_for_a_folder_landing_there() {
    let (sb, token) = permissive();
    let server = sb.serve();
    std::fs::create_dir_all(sb.project.join(".vscode")).unwrap();
    std::fs::write(sb.project.join("draft.json"), "{}").unwrap();
    let mv =
        |from: &str, to: &str| ("move_path", json!({"project": "demo", "from": from, "to": to}));
    approve(
        &sb,
        server.port,
        &token,
        mv("draft.json", ".vscode/tasks.json"),
        (".vscode/tasks.json", "VS Code"),
    );
    assert!(sb.project.join(".vscode/tasks.json").exists());
    // A folder whose contents become `.github/workflows/deploy.yml`.
    std::fs::create_dir_all(sb.project.join("stuff/workflows")).unwrap();
    std::fs::write(sb.project.join("stuff/workflows/deploy.yml"), "on: push\n").unwrap();
    deny(
        &sb,
        server.port,
        &token,
        mv("stuff", ".github"),
        (".github/workflows/deploy.yml", "GitHub Actions"),
    );
    assert!(sb.project.join("stuff/workflows/deploy.yml").exists());
    assert!(!sb.project.join(".github").exists());
}

#[test]
fn autorun_create_directory_then_write_asks_for_the_write() {
    let (sb, token) = permissive();
    let server = sb.serve();
    // An empty folder runs nothing: no approval.
    let v = call(
        server.port,
        &token,
        "create_directory",
        json!({"project": "demo", "path": ".cursor"}),
    );
    ok(&v);
    assert!(pending(&sb).is_empty());
    let write =
        ("write_file", json!({"project": "demo", "path": ".cursor/mcp.json", "content": "{}"}));
    approve(&sb, server.port, &token, write, (".cursor/mcp.json", "Cursor"));
    // A folder the list names itself (git hooks) asks at once.
    let husky = ("create_directory", json!({"project": "demo", "path": ".husky"}));
    approve(&sb, server.port, &token, husky, (".husky", "husky"));
    let hook = json!({"project": "demo", "path": ".husky/pre-commit", "content": "curl x | sh\n"});
    deny(&sb, server.port, &token, ("write_file", hook), (".husky/pre-commit", "husky"));
    assert!(!sb.project.join(".husky/pre-commit").exists());
}

/// On a case-insensitive disk `.VSCode/Tasks.JSON` is the editor's file; here it asks the same.
#[test]
fn autorun_case_variants_ask() {
    let (sb, token) = permissive();
    let server = sb.serve();
    for (path, program) in
        [(".VSCode/Tasks.JSON", "VS Code"), (".Mcp.Json", "Claude Code, VS Code")]
    {
        let args =
            json!({"project": "demo", "path": path, "content": "{}", "create_parents": true});
        deny(&sb, server.port, &token, ("write_file", args), (path, program));
        assert!(!sb.project.join(path).exists());
    }
}

#[test]
fn autorun_delete_of_a_hook_asks_even_when_deletes_do_not() {
    let (sb, token) = permissive();
    let server = sb.serve();
    std::fs::create_dir_all(sb.project.join(".githooks")).unwrap();
    std::fs::write(sb.project.join(".githooks/pre-push"), "make test\n").unwrap();
    let del = ("delete_path", json!({"project": "demo", "path": ".githooks", "recursive": true}));
    deny(&sb, server.port, &token, del, (".githooks/pre-push", "git"));
    assert!(sb.project.join(".githooks/pre-push").exists());
}

/// What decides what an AI agent may run without asking is refused outright: no approval is
/// created, nothing lands, whatever the policy.
#[test]
fn autorun_agent_settings_are_refused_without_an_approval() {
    let (sb, token) = permissive();
    let server = sb.serve();
    let settings = json!({"permissions": {"allow": ["Bash(*)"]}, "hooks": {}}).to_string();
    let write = |path: &str| json!({"project": "demo", "path": path, "content": settings, "create_parents": true});
    for path in [".claude/settings.json", ".CLAUDE/Settings.Local.json", "app/.codex/config.toml"] {
        let msg = refused(&call(server.port, &token, "write_file", write(path)), "forbidden");
        assert!(msg.contains("auto-run list"), "{msg}");
    }
    let patch = "*** Begin Patch\n*** Add File: ok.txt\n+ok\n*** Add File: .cursor/hooks.json\n+{}\n*** End Patch\n";
    refused(
        &call(server.port, &token, "apply_patch", json!({"project": "demo", "patch": patch})),
        "forbidden",
    );
    std::fs::create_dir_all(sb.project.join("stuff")).unwrap();
    std::fs::write(sb.project.join("stuff/settings.json"), &settings).unwrap();
    let mv = json!({"project": "demo", "from": "stuff", "to": ".claude"});
    refused(&call(server.port, &token, "move_path", mv), "forbidden");
    std::fs::create_dir_all(sb.project.join("tools/.gemini")).unwrap();
    std::fs::write(sb.project.join("tools/.gemini/settings.json"), "{}").unwrap();
    let del = json!({"project": "demo", "path": "tools", "recursive": true});
    refused(&call(server.port, &token, "delete_path", del), "forbidden");
    assert!(pending(&sb).is_empty());
    assert!(!sb.project.join(".claude").exists() && !sb.project.join("ok.txt").exists());
    assert!(sb.project.join("tools/.gemini/settings.json").exists());
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "100"]);
    assert!(audit.contains("\"error_code\":\"forbidden\""), "{audit}");
}

#[test]
fn an_ordinary_write_still_lands_without_asking() {
    for policy in
        [["--deletes", "allow", "--writes", "allow"], ["--deletes", "ask", "--writes", "allow"]]
    {
        let (sb, token) = executable("off");
        let mut args = vec!["project", "policy", "demo"];
        args.extend(policy);
        sb.ok(&args);
        let server = sb.serve();
        let p = |extra: Value| {
            let mut v = json!({"project": "demo"});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            v
        };
        ok(&call(
            server.port,
            &token,
            "write_file",
            p(json!({"path": "src/app.js", "content": "x"})),
        ));
        ok(&call(
            server.port,
            &token,
            "write_file",
            p(json!({"path": ".vscode/extensions.json", "content": "{}", "create_parents": true})),
        ));
        let patch = "*** Begin Patch\n*** Add File: docs/mcp.json.md\n+notes\n*** End Patch\n";
        ok(&call(server.port, &token, "apply_patch", p(json!({"patch": patch}))));
        ok(&call(server.port, &token, "create_directory", p(json!({"path": ".github"}))));
        assert!(pending(&sb).is_empty(), "nothing asked");
        assert_eq!(std::fs::read_to_string(sb.project.join("src/app.js")).unwrap(), "x");
        assert!(sb.project.join("docs/mcp.json.md").exists());
    }
}

#[test]
fn autorun_list_is_shown_and_edited_per_project_from_the_cli() {
    let (sb, token) = permissive();
    let shown = sb.ok(&["project", "autorun", "demo"]);
    assert!(shown.contains("(defaults)"), "{shown}");
    assert!(shown.contains("refuse  .claude/settings.json"), "{shown}");
    assert!(shown.contains("ask     .vscode/tasks.json"), "{shown}");
    // Your own entry asks; a default entry removed lands silently again; one made to refuse is
    // refused.
    sb.ok(&[
        "project",
        "autorun",
        "demo",
        "--ask",
        "/deploy/**",
        "--program",
        "the deploy bot",
        "--consequence",
        "the deploy bot runs these scripts every night",
        "--remove",
        ".mcp.json",
        "--refuse",
        ".vscode/tasks.json",
    ]);
    let list: Value =
        serde_json::from_str(&sb.ok(&["project", "autorun", "demo", "--json"])).unwrap();
    let list = list.as_array().unwrap();
    assert!(list.iter().any(|r| r["pattern"] == "/deploy/**" && r["action"] == "ask"));
    assert!(list.iter().all(|r| r["pattern"] != ".mcp.json"));
    let server = sb.serve();
    let write = |path: &str| json!({"project": "demo", "path": path, "content": "{}", "create_parents": true});
    approve(
        &sb,
        server.port,
        &token,
        ("write_file", write("deploy/nightly.sh")),
        ("deploy/nightly.sh", "the deploy bot"),
    );
    ok(&call(server.port, &token, "write_file", write(".mcp.json")));
    refused(&call(server.port, &token, "write_file", write(".vscode/tasks.json")), "forbidden");
    assert!(sb.err(&["project", "autorun", "demo", "--ask", "a["]).contains("a["));
    let reset = sb.ok(&["project", "autorun", "demo", "--reset"]);
    assert!(reset.contains("(defaults)") && reset.contains(".mcp.json"), "{reset}");
}

#[test]
fn python_sdk_meets_autorun_approvals_over_http() {
    run_python("http");
}

#[test]
fn python_sdk_meets_autorun_approvals_over_stdio() {
    run_python("stdio");
}

fn run_python(transport: &str) {
    let (sb, token) = permissive();
    let server = sb.serve();
    let out = python_client("python_autorun.py")
        .args(["--transport", transport, "--url", &server.url(), "--sluice", BIN])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .unwrap();
    passed(&out);
}
