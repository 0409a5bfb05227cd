//! Worktrees end to end (`git_worktree`): two made from one project and edited in parallel by
//! two tokens through the official Python MCP SDK (tests/clients/python_worktrees.py asserts),
//! and the attacks over raw HTTP: a worktree Sluice did not make, or one whose `.git` file was
//! rewritten to lead to another repository, is refused by every git tool; a token that does
//! not see the parent does not see its worktrees; a read-only project makes none; a worktree
//! never allows more than its parent.

use serde_json::{Value, json};

use crate::harness::{Sandbox, Server, call, git, ok, passed, python_client, refused};

/// The user's identity in a HOME of the sandbox, as `git_commit` needs it.
fn home(sb: &Sandbox) -> String {
    sb.user_home("home", "[user]\n\tname = Grace\n\temail = g@example.org\n")
}

fn names(port: u16, token: &str) -> Vec<String> {
    let listed = ok(&call(port, token, "list_projects", json!({})));
    listed["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

fn create(port: u16, token: &str, name: &str) -> Value {
    call(
        port,
        token,
        "git_worktree",
        json!({"project": "demo", "name": name, "create_branch": true}),
    )
}

#[test]
fn python_sdk_two_worktrees_edited_in_parallel_by_two_tokens_then_removed() {
    let sb = Sandbox::new();
    let id = sb.add_project_with(&["--access", "read-write"]);
    let token = sb.token("one", &[]);
    let scoped = sb.token("two", &["--projects", &id]);
    let home = home(&sb);
    let server = Server::start_env(&sb, &[], &[("HOME", &home)]);
    let out = python_client("python_worktrees.py")
        .args(["--url", &server.url(), "--project", "demo", "--sluice", crate::harness::BIN])
        .args(["--repo", sb.project.to_str().unwrap()])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_SCOPED_TOKEN", &scoped)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_DATA_DIR", &sb.data)
        .output()
        .expect("run the Python client");
    passed(&out);
    server.stop();
    let listed = sb.ok(&["project", "list"]);
    assert!(!listed.contains("demo@"), "{listed}");
}

#[test]
fn a_foreign_worktree_authorized_by_hand_is_refused_by_git_tools() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write"]);
    let foreign = sb.root().join("foreign");
    git(&sb.project, &["worktree", "add", "-q", "-b", "f", foreign.to_str().unwrap()]);
    sb.ok(&[
        "project",
        "add",
        foreign.to_str().unwrap(),
        "--name",
        "foreign",
        "--access",
        "read-write",
    ]);
    let token = sb.token("raw", &[]);
    let server = sb.serve();
    for (tool, args) in [
        ("git_status", json!({"project": "foreign"})),
        ("git_log", json!({"project": "foreign"})),
        ("git_refs", json!({"project": "foreign"})),
        ("git_commit", json!({"project": "foreign", "message": "m", "all": true})),
        ("git_worktree", json!({"project": "foreign", "name": "x", "create_branch": true})),
    ] {
        let why = refused(&call(server.port, &token, tool, args), "not_a_git_repository");
        assert!(!why.contains(sb.root().to_str().unwrap()), "{why}");
    }
    // Nor can it be passed off as one of demo's worktrees by name.
    let v = call(
        server.port,
        &token,
        "git_worktree",
        json!({"project": "demo", "action": "remove", "name": "foreign"}),
    );
    refused(&v, "project_not_found");
    server.stop();
    assert!(foreign.join(".git").is_file(), "nothing was removed");
}

#[test]
fn a_registered_worktree_whose_git_file_points_elsewhere_is_refused() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write"]);
    let token = sb.token("raw", &[]);
    // The sandbox's `evil` folder made a repository of its own, with a worktree record too.
    git(&sb.evil, &["init", "-q", "-b", "main"]);
    git(&sb.evil, &["add", "x.txt"]);
    git(&sb.evil, &["commit", "-q", "-m", "evil"]);
    let evil_wt = sb.root().join("evil-wt");
    git(&sb.evil, &["worktree", "add", "-q", "-b", "w", evil_wt.to_str().unwrap()]);
    let server = sb.serve();
    let port = server.port;
    let made = ok(&create(port, &token, "a"));
    assert_eq!(made["project"], "demo@a");
    let wp = json!({"project": "demo@a"});
    ok(&call(port, &token, "git_status", wp.clone()));
    let dot_git = sb.root().join("proj.worktrees/a/.git");
    let original = std::fs::read_to_string(&dot_git).unwrap();
    let evil_record = std::fs::read_to_string(evil_wt.join(".git")).unwrap();
    for pointer in [
        format!("gitdir: {}\n", sb.evil.join(".git").display()),
        evil_record,
        "gitdir: ../../proj_evil/.git\n".to_owned(),
    ] {
        std::fs::write(&dot_git, &pointer).unwrap();
        for (tool, args) in [
            ("git_status", wp.clone()),
            ("git_log", wp.clone()),
            ("git_refs", wp.clone()),
            ("git_show", json!({"project": "demo@a", "rev": "HEAD"})),
        ] {
            let v = call(port, &token, tool, args);
            let why = refused(&v, "not_a_git_repository");
            assert!(!why.contains(sb.root().to_str().unwrap()), "{why}");
        }
        let v = call(
            port,
            &token,
            "git_commit",
            json!({"project": "demo@a", "message": "m", "all": true}),
        );
        refused(&v, "not_a_git_repository");
        // Nor removed through it: the folder is not what Sluice made any more.
        let v = call(
            port,
            &token,
            "git_worktree",
            json!({"project": "demo", "action": "remove", "name": "a"}),
        );
        refused(&v, "not_a_git_repository");
    }
    std::fs::write(&dot_git, original).unwrap();
    let status = ok(&call(port, &token, "git_status", wp));
    assert_eq!(status["branch"], "a");
    server.stop();
    assert!(
        !String::from_utf8_lossy(
            &std::process::Command::new("git")
                .arg("-C")
                .arg(&sb.evil)
                .args(["log", "--oneline"])
                .output()
                .unwrap()
                .stdout
        )
        .contains("m\n")
    );
}

#[test]
fn a_scoped_token_that_does_not_see_the_parent_sees_none_of_its_worktrees() {
    let sb = Sandbox::new();
    let demo = sb.add_project_with(&["--access", "read-write"]);
    let other = sb.ok(&["project", "add", sb.evil.to_str().unwrap(), "--name", "other"]);
    let other = other.split_whitespace().find(|w| w.starts_with("proj_")).unwrap().to_owned();
    let token = sb.token("all", &[]);
    let elsewhere = sb.token("elsewhere", &["--projects", &other]);
    let inherits = sb.token("inherits", &["--projects", &demo]);
    let server = sb.serve();
    let port = server.port;
    ok(&create(port, &token, "a"));
    assert!(names(port, &token).contains(&"demo@a".to_owned()));
    assert_eq!(names(port, &elsewhere), ["other"]);
    let mut seen = names(port, &inherits);
    seen.sort();
    assert_eq!(seen, ["demo", "demo@a"]);
    for (tool, args) in [
        ("read_file", json!({"project": "demo@a", "path": "README.md"})),
        ("git_status", json!({"project": "demo@a"})),
        ("git_worktree", json!({"project": "demo", "name": "b", "create_branch": true})),
        ("git_worktree", json!({"project": "demo", "action": "remove", "name": "a"})),
    ] {
        refused(&call(port, &elsewhere, tool, args), "project_not_found");
    }
    ok(&call(port, &inherits, "read_file", json!({"project": "demo@a", "path": "README.md"})));
    server.stop();
    // The CLI names the parent.
    let shown = sb.ok(&["project", "show", "demo@a"]);
    assert!(shown.contains("worktree of demo"), "{shown}");
    let listed: Value = serde_json::from_str(&sb.ok(&["project", "list", "--json"])).unwrap();
    let wt = listed.as_array().unwrap().iter().find(|p| p["name"] == "demo@a").unwrap();
    assert_eq!(wt["worktree_of"], "demo");
}

#[test]
fn a_read_only_project_makes_no_worktree_and_a_worktree_never_exceeds_its_parent() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("raw", &[]);
    let server = sb.serve();
    let port = server.port;
    refused(&create(port, &token, "a"), "read_only_project");
    assert!(!sb.root().join("proj.worktrees/a").exists());
    sb.ok(&["project", "set", "demo", "--access", "read-write", "--exec", "safe"]);
    ok(&create(port, &token, "a"));
    let modes = |name: &str| {
        let listed = ok(&call(port, &token, "list_projects", json!({})));
        let p = listed["projects"].as_array().unwrap().iter().find(|p| p["name"] == name).cloned();
        let p = p.unwrap_or_else(|| panic!("{name} not listed: {listed}"));
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        (text(&p["access"]), text(&p["execution"]))
    };
    assert_eq!(modes("demo@a"), ("read-write".to_owned(), "safe".to_owned()));
    // Raised on its own by the user, it still allows no more than its parent.
    sb.ok(&["project", "set", "demo@a", "--exec", "any"]);
    assert_eq!(modes("demo@a"), ("read-write".to_owned(), "safe".to_owned()));
    // The parent made read-only: the worktree follows at once, and writes nothing.
    sb.ok(&["project", "set", "demo", "--access", "read-only"]);
    assert_eq!(modes("demo@a"), ("read-only".to_owned(), "off".to_owned()));
    let v = call(
        port,
        &token,
        "write_file",
        json!({"project": "demo@a", "path": "x.txt", "content": "x"}),
    );
    refused(&v, "read_only_project");
    let v = call(
        port,
        &token,
        "git_worktree",
        json!({"project": "demo@a", "name": "deeper", "create_branch": true}),
    );
    refused(&v, "read_only_project");
    sb.ok(&["project", "set", "demo", "--access", "read-write"]);
    // Not from a worktree either.
    let v = call(
        port,
        &token,
        "git_worktree",
        json!({"project": "demo@a", "name": "deeper", "create_branch": true}),
    );
    refused(&v, "invalid_argument");
    server.stop();
    // Removing the parent unauthorizes its worktrees.
    sb.ok(&["project", "remove", "demo"]);
    assert!(!sb.ok(&["project", "list"]).contains("demo@a"));
}

// The failure is planted with a symbolic link: Unix.
#[cfg(unix)]
#[test]
fn a_worktree_that_fails_verification_once_added_is_removed_again_with_its_branch() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write"]);
    // A job could have planted this: git's worktree records kept through a link, elsewhere.
    let records = sb.root().join("records");
    std::fs::create_dir_all(&records).unwrap();
    std::os::unix::fs::symlink(&records, sb.project.join(".git/worktrees")).unwrap();
    let token = sb.token("raw", &[]);
    let server = sb.serve();
    // git itself may balk at the link, or Sluice's check after it: refused either way.
    let v = create(server.port, &token, "a");
    let (out, failed) = crate::harness::result(&v);
    assert!(failed, "{v}");
    assert!(["git_failed", "not_a_git_repository"].contains(&out["code"].as_str().unwrap()), "{v}");
    assert!(!v.to_string().contains(sb.root().to_str().unwrap()), "{v}");
    server.stop();
    // Nothing half done: no folder, no record, no branch, no project.
    assert!(!sb.root().join("proj.worktrees/a").exists());
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    let branches = std::process::Command::new("git")
        .current_dir(&sb.project)
        .args(["branch", "--list", "a"])
        .output()
        .unwrap();
    assert!(branches.stdout.is_empty(), "{}", String::from_utf8_lossy(&branches.stdout));
    assert!(!sb.ok(&["project", "list"]).contains("demo@a"));
}
