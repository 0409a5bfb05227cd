//! Git writes end to end through the official Python MCP SDK (tests/clients/python_git_writes.py
//! asserts): commit, branch, tag, switch, stash and their undo through `restore`, in a
//! repository planted with every program git could be made to run — hooks in `.git/hooks` and
//! in a `core.hooksPath` folder, an fsmonitor, a signing program, clean and smudge filters
//! selected by `.gitattributes`, an editor — none of which ever runs.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{Sandbox, Server, call, git, ok, passed, python_client, refused};

/// A program that leaves a mark when anything runs it.
fn trap(path: &Path, marks: &Path) {
    std::fs::write(path, format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\n", marks.display())).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Plants a trap in every place git looks for a program to run.
fn plant(sb: &Sandbox, marks: &Path) {
    let dir = &sb.project;
    let hooks = dir.join(".git/hooks");
    for hook in [
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "reference-transaction",
        "pre-auto-gc",
        "post-index-change",
    ] {
        trap(&hooks.join(hook), marks);
    }
    let elsewhere = sb.root().join("hooks-elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    trap(&elsewhere.join("pre-commit"), marks);
    trap(&elsewhere.join("reference-transaction"), marks);
    let program = sb.root().join("program");
    trap(&program, marks);
    let p = program.display().to_string();
    for (key, value) in [
        ("core.hooksPath", elsewhere.display().to_string()),
        ("core.fsmonitor", p.clone()),
        ("core.editor", p.clone()),
        ("sequence.editor", p.clone()),
        ("gpg.program", p.clone()),
        ("gpg.ssh.program", p.clone()),
        ("filter.evil.clean", p.clone()),
        ("filter.evil.smudge", p.clone()),
        ("filter.evil.process", p.clone()),
        ("filter.evil.required", "true".into()),
        ("trailer.sign.command", p.clone()),
        ("core.pager", p),
    ] {
        git(dir, &["config", key, &value]);
    }
    std::fs::write(dir.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
}

#[test]
fn python_sdk_commits_branches_switches_stashes_tags_and_undoes_with_no_program_run() {
    let sb = Sandbox::new();
    let marks = sb.root().join("marks.log");
    // A branch of someone else's that brings an editor task (an auto-run file) with it.
    git(&sb.project, &["checkout", "-q", "-b", "theirs"]);
    std::fs::create_dir_all(sb.project.join(".vscode")).unwrap();
    std::fs::write(sb.project.join(".vscode/tasks.json"), "{\"version\": \"2.0.0\"}\n").unwrap();
    git(&sb.project, &["add", ".vscode/tasks.json"]);
    git(&sb.project, &["commit", "-q", "-m", "tasks"]);
    git(&sb.project, &["checkout", "-q", "main"]);
    plant(&sb, &marks);
    // The user's own identity, in their global git config: what a commit is by.
    let home_env = sb
        .user_home("home", "[user]\n\tname = Grace User\n\temail = grace.user@users.example.org\n");
    sb.add_project_with(&["--access", "read-write"]);
    sb.ok(&["project", "policy", "demo", "--deletes", "ask", "--writes", "allow"]);
    let token = sb.token("python", &[]);
    let reviewer = sb.token("reviewer", &["--profile", "review"]);
    let server = Server::start_env(&sb, &[], &[("HOME", &home_env)]);
    let out = python_client("python_git_writes.py")
        .args(["--url", &server.url(), "--project", "demo", "--sluice", crate::harness::BIN])
        .args(["--repo", sb.project.to_str().unwrap()])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_REVIEW_TOKEN", &reviewer)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_DATA_DIR", &sb.data)
        .output()
        .expect("run the Python client");
    passed(&out);
    server.stop();
    let marked = std::fs::read_to_string(&marks).unwrap_or_default();
    assert!(marked.is_empty(), "a repository program ran:\n{marked}");
    // The control: the same repository's traps go off under a plain git commit.
    let st = std::process::Command::new("git")
        .current_dir(&sb.project)
        .args(["-c", "user.name=U", "-c", "user.email=u@example.com"])
        .args(["commit", "-q", "--allow-empty", "-m", "control"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    let marked = std::fs::read_to_string(&marks).unwrap_or_default();
    assert!(!marked.is_empty(), "the traps are live ({st}): a plain git commit runs them");
}

/// The refusals, through raw HTTP: no identity is invented; a read-only project and a token that
/// limited itself write nothing; a stash that does not apply cleanly leaves the clean tree it
/// found and keeps the entry.
#[test]
fn git_writes_refuse_cleanly_and_a_failed_pop_changes_nothing() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write"]);
    let token = sb.token("raw", &[]);
    let nobody = sb.user_home("nobody", "");
    let home = sb.user_home("home", "[user]\n\tname = U\n\temail = u@example.org\n");
    let args = |extra: Value| {
        let mut v = json!({"project": "demo"});
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    let head = || std::fs::read_to_string(sb.project.join(".git/refs/heads/main")).unwrap();
    let before = head();

    let server = Server::start_env(&sb, &[], &[("HOME", &nobody)]);
    let commit = args(json!({"message": "m", "all": true}));
    let why = refused(&call(server.port, &token, "git_commit", commit.clone()), "conflict");
    assert!(why.contains("will not invent") && why.contains("user.name"), "{why}");
    server.stop();
    assert_eq!(head(), before, "nothing was committed");

    let server = Server::start_env(&sb, &[], &[("HOME", &home)]);
    let port = server.port;
    // A stash that conflicts with what was committed since: the pop is refused and undone.
    ok(&call(port, &token, "git_stash", args(json!({"message": "wip"}))));
    std::fs::write(sb.project.join("README.md"), "# Demo\nsomething else\n").unwrap();
    ok(&call(
        port,
        &token,
        "git_commit",
        args(json!({"message": "other", "paths": ["README.md"]})),
    ));
    let committed = std::fs::read_to_string(sb.project.join("README.md")).unwrap();
    let why = refused(&call(port, &token, "git_stash", args(json!({"action": "pop"}))), "conflict");
    assert!(why.contains("does not apply cleanly"), "{why}");
    assert_eq!(std::fs::read_to_string(sb.project.join("README.md")).unwrap(), committed);
    let refs = ok(&call(port, &token, "git_refs", args(json!({}))));
    assert_eq!(refs["stashes"].as_array().unwrap().len(), 1, "the entry is kept: {refs}");
    let status = ok(&call(port, &token, "git_status", args(json!({}))));
    assert_eq!(status["entries"], json!([]), "the tree is as clean as it was: {status}");

    // A token that limited itself, and a read-only project, write nothing.
    let limited = sb.token("limited", &[]);
    ok(&call(port, &limited, "drop_privileges", json!({"to": "read-only"})));
    let branch = args(json!({"name": "b"}));
    refused(&call(port, &limited, "git_branch", branch.clone()), "read_only_project");
    sb.ok(&["project", "set", "demo", "--access", "read-only"]);
    let after = head();
    for (tool, a) in [
        ("git_commit", commit),
        ("git_branch", branch),
        ("git_tag", args(json!({"name": "t"}))),
        ("git_switch", args(json!({"branch": "main"}))),
        ("git_stash", args(json!({}))),
        ("restore", args(json!({"operation_id": format!("git_{}", "a".repeat(32))}))),
    ] {
        refused(&call(port, &token, tool, a), "read_only_project");
    }
    server.stop();
    assert_eq!(head(), after);
}
