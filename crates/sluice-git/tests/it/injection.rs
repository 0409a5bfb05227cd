//! CI-02 / CI-06: option injection and pathspec magic are refused before git runs.

use sluice_core::{Coded, ErrorCode};
use sluice_git::{GitDiffArgs, GitEmails, GitLogArgs, GitShowArgs, GitStatusArgs};

use crate::support::{TestRepo, nothing_hidden, shield};

fn repo_with_commit() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.write(".env", "SECRET=1\n");
    repo.commit_all("one");
    repo
}

#[test]
fn option_like_revisions_are_refused() {
    let t = repo_with_commit();
    let repo = t.open();
    let out = t.outside().join("owned");
    let evil = [
        format!("--output={}", out.display()),
        "-p".to_owned(),
        format!("--exec=touch {}", out.display()),
        "--upload-pack=sh".to_owned(),
        "-cfoo=bar".to_owned(),
        "--format=%H".to_owned(),
        format!("HEAD..--output={}", out.display()),
        "HEAD:.env".to_owned(),
        "HEAD:a.txt".to_owned(),
        "HEAD a.txt".to_owned(),
    ];
    for rev in &evil {
        let args = GitLogArgs { rev: Some(rev.clone()), ..Default::default() };
        let err = sluice_git::log(&repo, &args, &nothing_hidden, GitEmails::Hide).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "log {rev:?}");
        let args = GitShowArgs { rev: rev.clone(), ..Default::default() };
        let err = sluice_git::show(&repo, &args, &nothing_hidden, GitEmails::Hide).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "show {rev:?}");
    }
    assert!(!out.exists());
}

#[test]
fn option_like_and_magic_paths_are_refused() {
    let t = repo_with_commit();
    let repo = t.open();
    for path in [
        "--foo",
        "-p",
        ":(top)a.txt",
        ":/a.txt",
        ":!a.txt",
        "../outside",
        "/etc/passwd",
        "a/../.env",
    ] {
        let p = Some(path.to_owned());
        let errs = [
            sluice_git::status(
                &repo,
                &GitStatusArgs { paths: vec![path.to_owned()] },
                &nothing_hidden,
            )
            .unwrap_err(),
            sluice_git::diff(
                &repo,
                &GitDiffArgs { path: p.clone(), ..Default::default() },
                &nothing_hidden,
            )
            .unwrap_err(),
            sluice_git::log(
                &repo,
                &GitLogArgs { path: p.clone(), ..Default::default() },
                &nothing_hidden,
                GitEmails::Hide,
            )
            .unwrap_err(),
            sluice_git::show(
                &repo,
                &GitShowArgs { rev: "HEAD".into(), path: p, ..Default::default() },
                &nothing_hidden,
                GitEmails::Hide,
            )
            .unwrap_err(),
        ];
        for err in errs {
            assert_eq!(err.code(), ErrorCode::InvalidArgument, "{path:?}: {err}");
        }
    }
}

#[test]
fn shielded_paths_in_requests_are_refused() {
    let t = repo_with_commit();
    let repo = t.open();
    let args = GitDiffArgs { path: Some(".env".into()), ..Default::default() };
    let err = sluice_git::diff(&repo, &args, &shield).unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathShielded);
    let args = GitLogArgs { path: Some(".env".into()), ..Default::default() };
    assert_eq!(
        sluice_git::log(&repo, &args, &shield, GitEmails::Hide).unwrap_err().code(),
        ErrorCode::PathShielded
    );
}

#[test]
fn range_is_refused_by_show_but_accepted_by_log() {
    let t = repo_with_commit();
    t.write("a.txt", "b\n");
    t.commit_all("two");
    let repo = t.open();
    let args = GitShowArgs { rev: "HEAD~1..HEAD".into(), ..Default::default() };
    assert_eq!(
        sluice_git::show(&repo, &args, &nothing_hidden, GitEmails::Hide).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    let args = GitLogArgs { rev: Some("HEAD~1..HEAD".into()), ..Default::default() };
    let log = sluice_git::log(&repo, &args, &nothing_hidden, GitEmails::Hide).unwrap();
    assert_eq!(log.commits.len(), 1);
    assert_eq!(log.commits[0].subject, "two");
}

#[test]
fn unknown_revision_is_a_git_failure_without_paths() {
    let t = repo_with_commit();
    let args = GitShowArgs { rev: "no-such-branch".into(), ..Default::default() };
    let err = sluice_git::show(&t.open(), &args, &nothing_hidden, GitEmails::Hide).unwrap_err();
    assert_eq!(err.code(), ErrorCode::GitFailed);
    assert!(!err.to_string().contains(&t.root().display().to_string()), "{err}");
}
