//! SL-01/SL-02/PS-01/ES-02 through the tools: links out of the project, dangling links, the
//! prefix-confusion sibling, FIFOs, and shielded files reached directly or through links.

use sluice_core::{Coded, ErrorCode};
use sluice_runner::*;

use crate::rig::{assert_clean, rig};

fn read(ws: &Workspace, path: &str) -> Result<ReadFileOutput, RunnerError> {
    read_file(ws, &ReadFileArgs { path: path.into(), ..Default::default() })
}

#[test]
fn links_out_of_the_project_are_refused_by_every_tool() {
    let rig = rig();
    for path in ["l/passwd", "l/nonexistent", "k", "evil/x", "evil/nope", "dangling"] {
        let err = read(&rig.ws, path).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathOutsideProject, "read {path}: {err}");
        assert_clean(&rig, &err.to_string());
        let err = read_media(&rig.ws, &ReadMediaArgs { path: path.into(), ..Default::default() })
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathOutsideProject, "read_media {path}: {err}");
        assert_clean(&rig, &err.to_string());
        let err = search_text(
            &rig.ws,
            &SearchTextArgs {
                pattern: "needle".into(),
                path: Some(path.into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathOutsideProject, "search {path}");
    }
    for path in ["l", "evil", "l/x", "evil/x"] {
        let args = ListDirectoryArgs { path: Some(path.into()), ..Default::default() };
        let err = list_directory(&rig.ws, &args).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathOutsideProject, "list {path}");
        let args = FindFilesArgs { path: Some(path.into()), ..Default::default() };
        let err = find_files(&rig.ws, &args).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathOutsideProject, "find {path}");
    }
    for path in ["l", "k", "evil", "evil/x", "l/passwd"] {
        let err = stat(&rig.ws, &StatArgs { path: path.into() }).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathOutsideProject, "stat {path}");
    }
    // A dangling link inside the project is reported, not an error.
    std::os::unix::fs::symlink("missing.txt", rig.proj.join("dangling_in")).unwrap();
    let s = stat(&rig.ws, &StatArgs { path: "dangling_in".into() }).unwrap();
    assert!(s.is_symlink && s.target.is_none());
    assert_eq!(read(&rig.ws, "dangling_in").unwrap_err().code(), ErrorCode::NotFound);
}

#[test]
fn recursive_tools_never_follow_links_out() {
    let rig = rig();
    let out = search_text(
        &rig.ws,
        &SearchTextArgs {
            pattern: "CANARY|needle|root".into(),
            respect_gitignore: Some(false),
            max_results: Some(2000),
            ..Default::default()
        },
    )
    .unwrap();
    assert_clean(&rig, &format!("{out:?}"));
    assert!(out.matches.iter().all(|m| !m.path.starts_with("l/") && !m.path.starts_with("evil/")));
    let list = list_directory(
        &rig.ws,
        &ListDirectoryArgs {
            depth: Some(10),
            respect_gitignore: Some(false),
            ..Default::default()
        },
    )
    .unwrap();
    assert_clean(&rig, &format!("{list:?}"));
    assert!(list.entries.iter().all(|e| !e.path.starts_with("l/") && !e.path.starts_with("evil/")));
    let found = find_files(
        &rig.ws,
        &FindFilesArgs {
            include_dirs: Some(true),
            respect_gitignore: Some(false),
            ..Default::default()
        },
    )
    .unwrap();
    assert_clean(&rig, &format!("{found:?}"));
    assert!(
        found.matches.iter().all(|e| !e.path.contains("passwd") && !e.path.starts_with("evil/"))
    );
}

#[test]
fn absolute_traversal_and_prefix_sibling_are_invalid() {
    let rig = rig();
    let sibling = rig.base.join("proj_evil/x");
    for path in [
        sibling.to_str().unwrap(),
        "../proj_evil/x",
        "sub/../../proj_evil/x",
        "..\\proj_evil\\x",
        "/etc/passwd",
        "C:\\proj-old\\x",
        "\\\\evil\\share\\x",
        "file:///etc/passwd",
        "README.md:hidden",
    ] {
        let err = read(&rig.ws, path).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathInvalid, "{path}");
        assert_clean(&rig, &err.to_string());
    }
}

#[test]
fn fifo_is_refused_without_hanging() {
    let rig = rig();
    mkfifo(&rig.proj.join("pipe"));
    assert_eq!(read(&rig.ws, "pipe").unwrap_err().code(), ErrorCode::WrongKind);
    let s = stat(&rig.ws, &StatArgs { path: "pipe".into() }).unwrap();
    assert_eq!(s.kind, EntryKind::Other);
    // Walks list it but never open it.
    let out = search_text(&rig.ws, &SearchTextArgs { pattern: "x".into(), ..Default::default() })
        .unwrap();
    assert!(out.matches.iter().all(|m| m.path != "pipe"));
}

#[test]
fn shield_refuses_direct_and_linked_access() {
    let rig = rig();
    for path in [
        ".env",
        "sub/.env.local",
        ".git/config",
        ".GIT/config",
        "id_rsa",
        ".ssh/x",
        ".ssh",
        "certs/a.pem",
        "notes.txt",
        "gitdir/config",
    ] {
        let err = read(&rig.ws, path).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathShielded, "read {path}: {err}");
        assert_clean(&rig, &err.to_string());
        let err = stat(&rig.ws, &StatArgs { path: path.into() }).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathShielded, "stat {path}");
        let err = search_text(
            &rig.ws,
            &SearchTextArgs {
                pattern: "needle".into(),
                path: Some(path.into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathShielded, "search {path}");
    }
    for dir in [".git", ".ssh", "gitdir"] {
        let err = list_directory(
            &rig.ws,
            &ListDirectoryArgs { path: Some(dir.into()), ..Default::default() },
        )
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathShielded, "list {dir}");
    }
    // The link itself may be listed, but reading through it is refused (above).
    let out = search_text(
        &rig.ws,
        &SearchTextArgs {
            pattern: "SHIELDED".into(),
            respect_gitignore: Some(false),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(out.matches.is_empty(), "{out:?}");
}

#[test]
fn shielded_root_of_walk_through_link_is_refused() {
    let rig = rig();
    // `docs -> src` is fine; a walk starting at a link to `.git` is not.
    let ok = list_directory(
        &rig.ws,
        &ListDirectoryArgs { path: Some("docs".into()), ..Default::default() },
    )
    .unwrap();
    assert!(ok.entries.iter().any(|e| e.path == "src/main.rs"));
    let err =
        find_files(&rig.ws, &FindFilesArgs { path: Some("gitdir".into()), ..Default::default() })
            .unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathShielded);
}

/// A FIFO at `path`, by `mkfifo(1)`, which every Unix has (rustix has no `mknodat` on Apple).
fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo").args(["-m", "600"]).arg(path).status();
    assert!(status.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}
