//! Checkpoints end to end: a code generator run through `run_command` in a project of
//! execution mode `any` gets a checkpoint first, which restores the tree byte for byte (modes and
//! deletions included), refuses under a concurrent change, is undone by `restore`, names an
//! auto-run file for consent, never stores nor writes the shield's `.env` (even from a tampered
//! manifest), and is listed and restored by the user through `sluice checkpoint`. The official
//! Python MCP SDK drives it (tests/clients/python_checkpoints.py asserts).

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::harness::{BIN, approved, executable, ok, passed, python_client};

const GENERATOR: &str = r#"import os
with open("a.txt", "w") as f:
    f.write("rewritten by the generator\n")
os.remove("doomed.txt")
os.chmod("run.sh", 0o644)
os.chmod("lib.py", 0o755)
os.makedirs("generated/deep", exist_ok=True)
with open("generated/deep/out.rs", "w") as f:
    f.write("// generated\n")
os.remove("sub/x.txt")
os.rmdir("sub")
with open(".vscode/tasks.json", "w") as f:
    f.write('{"tasks": ["generated"]}\n')
with open("build/out.o", "w") as f:
    f.write("rebuilt\n")
"#;

#[test]
fn python_sdk_restores_a_generator_run_from_its_checkpoint() {
    let (sb, token) = executable("any");
    let dir = &sb.project;
    let file = |rel: &str, content: &str, mode: u32| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    file("gen.py", GENERATOR, 0o644);
    file("a.txt", "original a\n", 0o644);
    file("doomed.txt", "deleted by the generator\n", 0o644);
    file("run.sh", "#!/bin/sh\necho run\n", 0o755);
    file("lib.py", "x = 1\n", 0o644);
    file("sub/x.txt", "in a folder the generator removes\n", 0o600);
    file(".vscode/tasks.json", "{}\n", 0o644);
    file(".gitignore", "build/\n", 0o644);
    file("build/out.o", "object\n", 0o644);
    let listed = sb.ok(&["project", "list", "--json"]);
    let projects: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let id = projects.as_array().unwrap()[0]["id"].as_str().unwrap().to_owned();
    let state = sb.data.join("projects").join(&id);
    let server = sb.serve();
    let out = python_client("python_checkpoints.py")
        .args(["--url", &server.url(), "--sluice", BIN, "--dir"])
        .arg(dir)
        .arg("--state")
        .arg(&state)
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .expect("run the Python client");
    passed(&out);
    // The user's restore is in the audit log as the user's act.
    let audit = sb.ok(&["audit", "list", "--json"]);
    assert!(audit.contains("checkpoint.restore"), "{audit}");
}

#[test]
fn a_project_too_large_for_a_checkpoint_still_runs_its_command_and_says_why() {
    let (sb, token) = executable("any");
    let server = sb.serve_env(&[("SLUICE_FAILPOINT_CHECKPOINT_MAX_ENTRIES", "1")]);
    let args = json!({"project": "demo", "program": "touch", "args": ["made.txt"]});
    let out = ok(&approved(&sb, server.port, &token, "run_command", args, &[]));
    assert_eq!(out["state"], "succeeded", "{out}");
    assert!(sb.project.join("made.txt").exists(), "the command ran");
    assert_eq!(out["checkpoint_id"], serde_json::Value::Null, "{out}");
    let why = out["checkpoint_skipped"].as_str().unwrap_or_default();
    assert!(why.contains("no checkpoint was taken") && why.contains("limit"), "{out}");
    assert!(!why.contains(sb.project.to_str().unwrap()), "no physical path: {why}");
    let list = sb.ok(&["checkpoint", "list", "demo"]);
    assert!(list.contains("No checkpoints."), "{list}");
}
