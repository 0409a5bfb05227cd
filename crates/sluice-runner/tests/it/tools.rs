//! The tools doing their ordinary job: listing, stat, reading with ranges and encodings,
//! finding, searching with context, caps and redaction.

use std::fs;

use sluice_core::{Coded, ErrorCode};
use sluice_runner::*;

use crate::rig::{assert_clean, rig};

fn paths_of_list(out: &ListDirectoryOutput) -> Vec<&str> {
    out.entries.iter().map(|e| e.path.as_str()).collect()
}

#[test]
fn list_directory_filters_and_bounds() {
    let rig = rig();
    let out = list_directory(&rig.ws, &ListDirectoryArgs::default()).unwrap();
    let paths = paths_of_list(&out);
    for want in ["README.md", "src", "sub", ".gitignore", ".hidden", "keep.log", "l", "docs"] {
        assert!(paths.contains(&want), "{want} missing from {paths:?}");
    }
    for hidden in [".env", ".git", "id_rsa", ".ssh", "target", "debug.log", "src/main.rs"] {
        assert!(!paths.contains(&hidden), "{hidden} listed: {paths:?}");
    }
    let link = out.entries.iter().find(|e| e.path == "l").unwrap();
    assert_eq!(link.kind, EntryKind::Symlink);
    assert!(!out.truncated);

    let deep = list_directory(
        &rig.ws,
        &ListDirectoryArgs { depth: Some(3), glob: Some("*.txt".into()), ..Default::default() },
    )
    .unwrap();
    // `notes.txt` is a link to `.env`: its name is listed, reading through it is refused.
    assert_eq!(paths_of_list(&deep), [".hidden/note.txt", "notes.txt", "sub/visible.txt"]);

    let no_hidden = list_directory(
        &rig.ws,
        &ListDirectoryArgs { include_hidden: Some(false), ..Default::default() },
    )
    .unwrap();
    assert!(!paths_of_list(&no_hidden).contains(&".hidden"));

    let all = list_directory(
        &rig.ws,
        &ListDirectoryArgs { respect_gitignore: Some(false), depth: Some(2), ..Default::default() },
    )
    .unwrap();
    let paths = paths_of_list(&all);
    assert!(paths.contains(&"target/out.txt") && paths.contains(&"sub/ignored.txt"));
    assert!(!paths.contains(&".env") && !paths.contains(&"sub/.env.local"));

    let capped =
        list_directory(&rig.ws, &ListDirectoryArgs { max_entries: Some(2), ..Default::default() })
            .unwrap();
    assert_eq!(capped.entries.len(), 2);
    assert!(capped.truncated);

    let sub = list_directory(
        &rig.ws,
        &ListDirectoryArgs { path: Some("sub".into()), ..Default::default() },
    )
    .unwrap();
    assert_eq!(paths_of_list(&sub), ["sub/.gitignore", "sub/visible.txt"]);
    let file = list_directory(
        &rig.ws,
        &ListDirectoryArgs { path: Some("README.md".into()), ..Default::default() },
    )
    .unwrap_err();
    assert_eq!(file.code(), ErrorCode::WrongKind);
    assert_clean(&rig, &format!("{out:?}{deep:?}{all:?}"));
}

#[test]
fn stat_reports_files_dirs_and_links() {
    let rig = rig();
    let s = stat(&rig.ws, &StatArgs { path: "README.md".into() }).unwrap();
    assert_eq!((s.kind, s.size, s.is_symlink), (EntryKind::File, 42, false));
    assert!(s.modified.as_deref().is_some_and(|m| m.ends_with('Z')));
    let s = stat(&rig.ws, &StatArgs { path: "readme_link".into() }).unwrap();
    assert!(s.is_symlink);
    assert_eq!(s.target.as_deref(), Some("README.md"));
    assert_eq!(s.target_kind, Some(EntryKind::File));
    let s = stat(&rig.ws, &StatArgs { path: "docs".into() }).unwrap();
    assert_eq!(s.target.as_deref(), Some("src"));
    let s = stat(&rig.ws, &StatArgs { path: ".".into() }).unwrap();
    assert_eq!(s.kind, EntryKind::Dir);
    let err = stat(&rig.ws, &StatArgs { path: "missing".into() }).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(err.to_string().contains("list_directory"));
}

#[test]
fn read_file_ranges_hash_and_caps() {
    let rig = rig();
    let out = read_file(&rig.ws, &ReadFileArgs { path: "README.md".into(), ..Default::default() })
        .unwrap();
    assert_eq!(out.content, "hello world\nsecond line\nthird needle line\n");
    assert_eq!((out.total_lines, out.start_line, out.end_line), (3, 1, 3));
    assert_eq!(out.next_start_line, None);
    let raw = fs::read(rig.proj.join("README.md")).unwrap();
    assert_eq!(out.hash, format!("blake3:{}", blake3::hash(&raw).to_hex()));
    assert_eq!(out.encoding, "utf-8");

    let part = read_file(
        &rig.ws,
        &ReadFileArgs {
            path: "README.md".into(),
            start_line: Some(2),
            max_lines: Some(1),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(part.content, "second line\n");
    assert_eq!((part.start_line, part.end_line, part.next_start_line), (2, 2, Some(3)));
    assert!(!part.truncated);

    let past = read_file(
        &rig.ws,
        &ReadFileArgs { path: "README.md".into(), start_line: Some(9), ..Default::default() },
    )
    .unwrap_err();
    assert_eq!(past.code(), ErrorCode::InvalidArgument);

    let big: String = (0..40_000).map(|i| format!("line {i}\n")).collect();
    fs::write(rig.proj.join("big.txt"), &big).unwrap();
    let big_args = ReadFileArgs { path: "big.txt".into(), ..Default::default() };
    let Err(err) = read_file(&rig.ws, &big_args) else { panic!("a file over the cap is refused") };
    assert_eq!(err.code(), ErrorCode::TooLarge);
    assert!(err.to_string().contains("start_line") && err.to_string().contains("max_lines"));
    let capped = read_file(
        &rig.ws,
        &ReadFileArgs {
            path: "big.txt".into(),
            start_line: Some(1),
            max_bytes: Some(100),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(capped.truncated && capped.content.len() <= 100 && capped.content.ends_with('\n'));
    assert_eq!(capped.total_lines, 40_000);

    let dir =
        read_file(&rig.ws, &ReadFileArgs { path: "src".into(), ..Default::default() }).unwrap_err();
    assert_eq!(dir.code(), ErrorCode::WrongKind);
}

#[test]
fn read_file_encodings_binary_and_redaction() {
    let rig = rig();
    let read =
        |name: &str| read_file(&rig.ws, &ReadFileArgs { path: name.into(), ..Default::default() });
    fs::write(rig.proj.join("bom.txt"), b"\xEF\xBB\xBFhi\n").unwrap();
    let out = read("bom.txt").unwrap();
    assert_eq!((out.content.as_str(), out.encoding.as_str()), ("hi\n", "utf-8-bom"));

    let mut le = vec![0xFF, 0xFE];
    le.extend("héllo\nx\n".encode_utf16().flat_map(|u| u.to_le_bytes()));
    fs::write(rig.proj.join("le.txt"), le).unwrap();
    let out = read("le.txt").unwrap();
    assert_eq!(
        (out.content.as_str(), out.encoding.as_str(), out.total_lines),
        ("héllo\nx\n", "utf-16le", 2)
    );

    let mut be = vec![0xFE, 0xFF];
    be.extend("ok\n".encode_utf16().flat_map(|u| u.to_be_bytes()));
    fs::write(rig.proj.join("be.txt"), be).unwrap();
    assert_eq!(read("be.txt").unwrap().encoding, "utf-16be");

    fs::write(rig.proj.join("latin1.txt"), b"caf\xE9\n").unwrap();
    let out = read("latin1.txt").unwrap();
    assert!(out.lossy && out.content.contains('\u{FFFD}'));

    fs::write(rig.proj.join("blob.bin"), b"\x7fELF\x00\x00\x01").unwrap();
    assert_eq!(read("blob.bin").unwrap_err().code(), ErrorCode::BinaryFile);

    fs::write(rig.proj.join("cfg.py"), "KEY = 'AKIAABCDEFGHIJKLMNOP'\n").unwrap();
    let out = read("cfg.py").unwrap();
    assert!(out.redacted && out.content.contains("[redacted:aws-access-key]"));
    assert!(!out.content.contains("AKIAABCDEFGHIJKLMNOP"));

    fs::write(rig.proj.join("empty.txt"), b"").unwrap();
    let out = read("empty.txt").unwrap();
    assert_eq!((out.total_lines, out.end_line, out.content.as_str()), (0, 0, ""));
}

#[test]
fn find_files_globs_and_caps() {
    let rig = rig();
    let find = |globs: &[&str]| {
        find_files(
            &rig.ws,
            &FindFilesArgs {
                globs: globs.iter().map(|g| g.to_string()).collect(),
                ..Default::default()
            },
        )
        .unwrap()
    };
    let paths =
        |out: &FindFilesOutput| out.matches.iter().map(|m| m.path.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&find(&["*.rs"])), ["src/lib.rs", "src/main.rs"]);
    assert_eq!(paths(&find(&["src/*.rs"])), ["src/lib.rs", "src/main.rs"]);
    assert_eq!(paths(&find(&["*.log"])), ["keep.log"]);
    let all = find(&[]);
    let all_paths = paths(&all);
    for hidden in [".env", "sub/.env.local", ".git/config", "id_rsa", ".ssh/x", "certs/a.pem"] {
        assert!(!all_paths.iter().any(|p| p == hidden), "{hidden} found");
    }
    assert!(all_paths.contains(&".hidden/note.txt".to_owned()));
    let capped =
        find_files(&rig.ws, &FindFilesArgs { max_results: Some(1), ..Default::default() }).unwrap();
    assert!(capped.truncated && capped.matches.len() == 1);
    let bad =
        find_files(&rig.ws, &FindFilesArgs { globs: vec!["a[".into()], ..Default::default() })
            .unwrap_err();
    assert_eq!(bad.code(), ErrorCode::InvalidArgument);
}

fn search(rig: &crate::rig::Rig, args: SearchTextArgs) -> SearchTextOutput {
    let out = search_text(&rig.ws, &args).unwrap();
    assert_clean(rig, &format!("{out:?}"));
    out
}

#[test]
fn search_text_finds_respects_ignores_and_context() {
    let rig = rig();
    let out = search(&rig, SearchTextArgs { pattern: "needle".into(), ..Default::default() });
    let files: Vec<&str> = out.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(
        files,
        [
            ".hidden/note.txt",
            "README.md",
            "keep.log",
            "src/lib.rs",
            "src/main.rs",
            "sub/visible.txt"
        ]
    );
    let readme = &out.matches[1];
    assert_eq!((readme.line, readme.column, readme.text.as_str()), (3, 7, "third needle line"));
    assert!(!out.truncated);

    let ctx = search(
        &rig,
        SearchTextArgs {
            pattern: "NEEDLE".into(),
            case: Some(CaseMode::Insensitive),
            include: vec!["*.md".into()],
            context_before: Some(1),
            context_after: Some(5),
            ..Default::default()
        },
    );
    assert_eq!(ctx.matches.len(), 1);
    assert_eq!(ctx.matches[0].context_before, ["second line"]);
    assert!(ctx.matches[0].context_after.is_empty());

    let smart = search(&rig, SearchTextArgs { pattern: "NEEDLE".into(), ..Default::default() });
    assert!(smart.matches.is_empty(), "smart case: upper-case pattern is case-sensitive");

    let literal = search(
        &rig,
        SearchTextArgs { pattern: "println!(\"".into(), literal: Some(true), ..Default::default() },
    );
    assert_eq!(literal.matches.len(), 1);

    let excluded = search(
        &rig,
        SearchTextArgs {
            pattern: "needle".into(),
            exclude: vec!["src".into()],
            ..Default::default()
        },
    );
    assert!(excluded.matches.iter().all(|m| !m.path.starts_with("src/")));

    let one_file = search(
        &rig,
        SearchTextArgs {
            pattern: "needle".into(),
            path: Some("src/lib.rs".into()),
            ..Default::default()
        },
    );
    assert_eq!(one_file.matches.len(), 1);

    let capped = search(
        &rig,
        SearchTextArgs { pattern: "needle".into(), max_results: Some(2), ..Default::default() },
    );
    assert_eq!(capped.matches.len(), 2);
    assert_eq!(capped.truncated_reason.as_deref(), Some("max_results"));

    let bad = search_text(&rig.ws, &SearchTextArgs { pattern: "(".into(), ..Default::default() })
        .unwrap_err();
    assert_eq!(bad.code(), ErrorCode::InvalidArgument);
    assert!(bad.to_string().contains("literal"));
}

#[test]
fn search_text_long_lines_binary_and_redaction() {
    let rig = rig();
    let long = format!("{}needle{}\n", "x".repeat(5000), "y".repeat(5000));
    fs::write(rig.proj.join("min.js"), long).unwrap();
    fs::write(rig.proj.join("bin.dat"), b"needle\x00\x01").unwrap();
    fs::write(rig.proj.join("tok.txt"), "needle ghp_abcdefghijklmnopqrstuvwxyz0123456789AB\n")
        .unwrap();
    let out = search(&rig, SearchTextArgs { pattern: "needle".into(), ..Default::default() });
    let min = out.matches.iter().find(|m| m.path == "min.js").unwrap();
    assert!(min.text.len() < 600 && min.text.contains("needle"));
    assert!(min.text.starts_with("[... ") && min.text.ends_with("bytes cut]"));
    assert_eq!(min.column, 5001);
    assert!(out.matches.iter().all(|m| m.path != "bin.dat"));
    assert_eq!(out.files_skipped_binary, 1);
    let tok = out.matches.iter().find(|m| m.path == "tok.txt").unwrap();
    assert_eq!(tok.text, "needle [redacted:github-token]");
}

#[test]
fn catastrophic_regex_is_linear() {
    let rig = rig();
    // 4 MiB of `a` with a `b` at the end of each line: a backtracking engine would never
    // finish `(a+)+$` on lines that almost match.
    let line = format!("{}b\n", "a".repeat(4096));
    fs::write(rig.proj.join("bomb.txt"), line.repeat(1024)).unwrap();
    fs::write(rig.proj.join("hit.txt"), "aaaa\n").unwrap();
    let out = search(&rig, SearchTextArgs { pattern: "(a+)+$".into(), ..Default::default() });
    let files: Vec<&str> = out.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(files, ["hit.txt"]);
}
