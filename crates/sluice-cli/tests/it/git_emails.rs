//! The e-mail addresses of a project's git history, end to end: hidden from every git tool by
//! default (names only), shown when the user says so with `sluice project set --git-emails`,
//! hidden again at once, and never something an assistant can turn on. Through raw HTTP here,
//! and through the official Python MCP SDK (tests/clients/python_git_emails.py asserts).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::{Sandbox, call, ok, passed, python_client, refused};

const AUTHOR: &str = "ada.author-7f3e@authors.example.org";
const COMMITTER: &str = "cy.committer-91b2@committers.example.net";
const TAGGER: &str = "tess.tagger-c05d@taggers.example.com";
const IN_NAME: &str = "name.holds-4a1d@names.example.org";
/// In a `Signed-off-by:` trailer: the message's content, which stays.
const TRAILER: &str = "sam.signoff-e88a@trailers.example.org";
/// The harness's first commit.
const FIRST: &str = "test@example.com";

/// Every address that must not leave a git tool while they are hidden.
const PRIVATE: [&str; 5] = [AUTHOR, COMMITTER, TAGGER, IN_NAME, FIRST];

/// Plain git in `dir` as Ada Author, committed by Cy Committer, `env` overriding either.
fn git(dir: &Path, args: &[&str], env: &[(&str, &str)]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada Author")
        .env("GIT_AUTHOR_EMAIL", AUTHOR)
        .env("GIT_COMMITTER_NAME", "Cy Committer")
        .env("GIT_COMMITTER_EMAIL", COMMITTER)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The sandbox's project with a history of distinctive addresses: a tag by a tagger of its
/// own, a side branch merged back (with a signed-off commit), an author whose name holds an
/// address, and a staged and an unstaged change.
fn history(sb: &Sandbox) {
    let dir = &sb.project;
    std::fs::write(dir.join("notes.txt"), "one\n").unwrap();
    git(dir, &["add", "src", "notes.txt", "README.md"], &[]);
    git(dir, &["commit", "-q", "-m", "notes"], &[]);
    git(dir, &["tag", "-a", "v1", "-m", "release"], &[("GIT_COMMITTER_EMAIL", TAGGER)]);
    git(dir, &["checkout", "-q", "-b", "side"], &[]);
    std::fs::write(dir.join("side.txt"), "side\n").unwrap();
    git(dir, &["add", "side.txt"], &[]);
    let signed = format!("side work\n\nSigned-off-by: Sam <{TRAILER}>");
    git(dir, &["commit", "-q", "-m", &signed], &[]);
    git(dir, &["checkout", "-q", "main"], &[]);
    std::fs::write(dir.join("notes.txt"), "two\n").unwrap();
    let nick = format!("Nick <{IN_NAME}>");
    git(dir, &["commit", "-q", "-am", "main work"], &[("GIT_AUTHOR_NAME", &nick)]);
    git(dir, &["merge", "-q", "--no-edit", "side"], &[]);
    std::fs::write(dir.join("notes.txt"), "three\n").unwrap();
    git(dir, &["add", "notes.txt"], &[]);
    std::fs::write(dir.join("side.txt"), "side, unstaged\n").unwrap();
}

/// Everything the git tools answer about the project, as one text.
fn every_git_answer(port: u16, token: &str) -> String {
    let mut all = Vec::new();
    let mut take = |tool: &str, args: Value| {
        let mut full = json!({"project": "demo"});
        full.as_object_mut().unwrap().extend(args.as_object().unwrap().clone());
        let v = call(port, token, tool, full);
        all.push(ok(&v).to_string());
        all.push(v["result"]["content"].to_string());
    };
    for args in [json!({}), json!({"rev": "v1"}), json!({"rev": "HEAD@{0}"})] {
        take("git_log", args);
    }
    for rev in ["HEAD", "HEAD~1", "HEAD^2", "v1", "HEAD@{2}"] {
        take("git_show", json!({"rev": rev}));
    }
    take("git_status", json!({}));
    take("git_diff", json!({}));
    take("git_diff", json!({"staged": true}));
    all.join("\n")
}

fn assert_hidden(all: &str) {
    for address in PRIVATE {
        assert!(!all.contains(address), "{address} leaked:\n{all}");
        // The distinctive ones, not even in part.
        if let Some((local, domain)) = address.split_once('@').filter(|_| address != FIRST) {
            assert!(!all.contains(local) && !all.contains(domain), "{address} leaked:\n{all}");
        }
    }
    assert!(!all.contains("author_email"), "no field pretends to hold one:\n{all}");
    assert!(all.contains(TRAILER), "a message keeps its trailer:\n{all}");
}

#[test]
fn git_emails_are_hidden_until_the_user_shows_them_and_hidden_again_at_once() {
    let sb = Sandbox::new();
    history(&sb);
    sb.add_project();
    let shown = sb.ok(&["project", "show", "demo"]);
    assert!(shown.contains("git e-mails: hidden from assistants"), "{shown}");
    let json: Value = serde_json::from_str(&sb.ok(&["project", "show", "demo", "--json"])).unwrap();
    assert_eq!(json["git_emails"], "hide");
    let token = sb.token("reader", &[]);
    let server = sb.serve();
    let port = server.port;
    assert_hidden(&every_git_answer(port, &token));
    // Asking for them is no way around it: extra arguments are not settings, and format
    // options are not revisions.
    let args = json!({"project": "demo", "emails": "show", "show_emails": true, "format": "%ae"});
    let v = ok(&call(port, &token, "git_log", args));
    assert!(v["commits"][0].get("author_email").is_none(), "{v}");
    for rev in ["--pretty=raw", "--format=%ae", "HEAD --format=%ce", "HEAD:.git/config"] {
        refused(
            &call(port, &token, "git_show", json!({"project": "demo", "rev": rev})),
            "invalid_argument",
        );
    }
    refused(
        &call(port, &token, "read_file", json!({"project": "demo", "path": ".git/logs/HEAD"})),
        "path_shielded",
    );

    // The user shows them, from another process while the server runs: the next call has them.
    let out = sb.ok(&["project", "set", "demo", "--git-emails", "show"]);
    assert!(out.contains("git e-mails: shown to assistants"), "{out}");
    let log = ok(&call(port, &token, "git_log", json!({"project": "demo"})));
    let commits = log["commits"].as_array().unwrap();
    assert!(commits.iter().any(|c| c["author_email"] == AUTHOR), "{log}");
    assert!(commits.iter().any(|c| c["author_email"] == FIRST), "{log}");
    assert!(commits.iter().any(|c| c["author_name"] == format!("Nick {IN_NAME}")), "{log}");
    let head = ok(&call(port, &token, "git_show", json!({"project": "demo", "rev": "HEAD"})));
    assert_eq!(head["commit"]["author_email"], AUTHOR, "{head}");
    let all = every_git_answer(port, &token);
    assert!(!all.contains(COMMITTER) && !all.contains(TAGGER), "only authors' addresses:\n{all}");

    // A value that is no setting changes nothing; hiding them again applies at once.
    let err = sb.err(&["project", "set", "demo", "--git-emails", "maybe"]);
    assert!(err.contains("expected `show` or `hide`"), "{err}");
    let json: Value = serde_json::from_str(&sb.ok(&["project", "show", "demo", "--json"])).unwrap();
    assert_eq!(json["git_emails"], "show");
    sb.ok(&["project", "set", "demo", "--git-emails", "hide"]);
    assert_hidden(&every_git_answer(port, &token));
    server.stop();
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    assert_eq!(audit.matches("project.git-emails").count(), 2, "{audit}");
}

/// The official Python MCP SDK: hidden by default from every git tool and every side door it
/// tries, no tool that turns them on, shown once the user (the CLI) allows it, hidden again.
#[test]
fn python_sdk_sees_no_git_emails_until_the_user_allows_them() {
    let sb = Sandbox::new();
    history(&sb);
    sb.add_project_with(&["--access", "read-write"]);
    let token = sb.token("python", &[]);
    let server = sb.serve();
    let out = python_client("python_git_emails.py")
        .args(["--url", &server.url(), "--project", "demo", "--sluice", crate::harness::BIN])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_GIT_PRIVATE", PRIVATE.join(","))
        .env("SLUICE_GIT_NEVER", [COMMITTER, TAGGER].join(","))
        .env("SLUICE_GIT_AUTHOR", AUTHOR)
        .env("SLUICE_GIT_TRAILER", TRAILER)
        .output()
        .expect("run the Python client");
    passed(&out);
    server.stop();
    let json: Value = serde_json::from_str(&sb.ok(&["project", "show", "demo", "--json"])).unwrap();
    assert_eq!(json["git_emails"], "hide", "the script hid them again");
}
