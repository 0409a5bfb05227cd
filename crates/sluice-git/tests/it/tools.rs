//! Happy paths of the four tools on real repositories: renames, staged vs unstaged, odd file
//! names, binary files, ranges, merges, root commits, the shield and redaction.

use sluice_git::{FileStatus, GitDiffArgs, GitEmails, GitLogArgs, GitShowArgs, GitStatusArgs};

use crate::support::{TestRepo, nothing_hidden, shield};

const ODD_NAMES: [&str; 4] = ["sp ace.txt", "new\nline.txt", "ünï cødé.txt", "q\"uote\\d.txt"];

#[test]
fn status_reports_branch_staged_unstaged_untracked_and_renames() {
    let t = TestRepo::new();
    t.write("keep.txt", "keep\n");
    t.write("old.txt", "a fairly long line so rename detection is confident\n");
    t.commit_all("init");
    t.git(&["mv", "old.txt", "renamed.txt"]);
    t.write("keep.txt", "keep\nchanged\n");
    for name in ODD_NAMES {
        t.write(name, "odd\n");
    }
    let st = sluice_git::status(&t.open(), &GitStatusArgs::default(), &nothing_hidden).unwrap();
    assert_eq!(st.branch.as_deref(), Some("main"));
    assert_eq!(st.head.as_ref().map(String::len), Some(40));
    let find = |p: &str| st.entries.iter().find(|e| e.path == p).unwrap_or_else(|| panic!("{p}"));
    let renamed = find("renamed.txt");
    assert_eq!(renamed.orig_path.as_deref(), Some("old.txt"));
    assert_eq!((renamed.index_status.as_str(), renamed.worktree_status.as_str()), ("R", "."));
    let keep = find("keep.txt");
    assert_eq!((keep.index_status.as_str(), keep.worktree_status.as_str()), (".", "M"));
    for name in ODD_NAMES {
        assert_eq!(find(name).index_status, "?");
    }
    assert_eq!(st.entries.len(), 2 + ODD_NAMES.len());
    assert!(!st.truncated);

    let only = GitStatusArgs { paths: vec!["keep.txt".into()] };
    let st = sluice_git::status(&t.open(), &only, &nothing_hidden).unwrap();
    assert_eq!(st.entries.len(), 1);
}

#[test]
fn status_of_an_empty_repository_and_log_of_no_history() {
    let t = TestRepo::new();
    t.write("first.txt", "1");
    let st = sluice_git::status(&t.open(), &GitStatusArgs::default(), &nothing_hidden).unwrap();
    assert_eq!(st.head, None);
    assert_eq!(st.branch.as_deref(), Some("main"));
    let log = sluice_git::log(&t.open(), &GitLogArgs::default(), &nothing_hidden, GitEmails::Hide)
        .unwrap();
    assert!(log.commits.is_empty());
}

#[test]
fn diff_unstaged_and_staged_with_odd_names_binary_and_renames() {
    let t = TestRepo::new();
    t.write("old.txt", "a fairly long line so rename detection is confident\n");
    t.write("edit.txt", "one\ntwo\n");
    for name in ODD_NAMES {
        t.write(name, "odd\n");
    }
    t.write("bin.dat", b"\x00\x01\x02binary");
    t.commit_all("init");
    t.git(&["mv", "old.txt", "new.txt"]);
    t.write("staged.txt", "staged\n");
    t.git(&["add", "staged.txt"]);
    t.write("edit.txt", "one\nTWO\n");
    for name in ODD_NAMES {
        t.write(name, "odd\nmore\n");
    }
    t.write("bin.dat", b"\x00\x01\x03binary!");
    let repo = t.open();

    let unstaged = sluice_git::diff(&repo, &GitDiffArgs::default(), &nothing_hidden).unwrap();
    let paths: Vec<&str> = unstaged.files.iter().map(|f| f.path.as_str()).collect();
    assert!(!paths.contains(&"staged.txt") && !paths.contains(&"new.txt"), "{paths:?}");
    let edit = unstaged.files.iter().find(|f| f.path == "edit.txt").unwrap();
    assert_eq!(
        (edit.status, edit.additions, edit.deletions),
        (FileStatus::Modified, Some(1), Some(1))
    );
    assert!(edit.patch.as_deref().unwrap().contains("+TWO\n"));
    for name in ODD_NAMES {
        let f = unstaged.files.iter().find(|f| f.path == name).unwrap_or_else(|| panic!("{name}"));
        assert!(f.patch.as_deref().is_some_and(|p| p.contains("+more")), "{name}: {f:?}");
    }
    let bin = unstaged.files.iter().find(|f| f.path == "bin.dat").unwrap();
    assert!(bin.binary && bin.patch.is_none() && bin.additions.is_none());

    let staged_args = GitDiffArgs { staged: true, ..Default::default() };
    let staged = sluice_git::diff(&repo, &staged_args, &nothing_hidden).unwrap();
    let rename = staged.files.iter().find(|f| f.path == "new.txt").unwrap();
    assert_eq!(rename.status, FileStatus::Renamed);
    assert_eq!(rename.old_path.as_deref(), Some("old.txt"));
    let added = staged.files.iter().find(|f| f.path == "staged.txt").unwrap();
    assert_eq!(added.status, FileStatus::Added);
    assert!(added.patch.as_deref().unwrap().contains("+staged"));
    assert!(!staged.files.iter().any(|f| f.path == "edit.txt"));

    let one =
        GitDiffArgs { path: Some("edit.txt".into()), context_lines: Some(0), ..Default::default() };
    let one = sluice_git::diff(&repo, &one, &nothing_hidden).unwrap();
    assert_eq!(one.files.len(), 1);
    let patch = one.files[0].patch.as_deref().unwrap();
    assert!(!patch.lines().any(|l| l.starts_with(' ')), "no context lines: {patch}");
}

#[test]
fn diff_patch_text_respects_max_bytes() {
    let t = TestRepo::new();
    t.write("big.txt", "");
    t.write("small.txt", "");
    t.commit_all("init");
    t.write("big.txt", "line\n".repeat(2000));
    t.write("small.txt", "x\n");
    let args = GitDiffArgs { max_bytes: Some(1000), ..Default::default() };
    let d = sluice_git::diff(&t.open(), &args, &nothing_hidden).unwrap();
    assert!(d.truncated);
    let total: usize = d.files.iter().filter_map(|f| f.patch.as_ref()).map(String::len).sum();
    assert!(total <= 1000, "{total}");
    let big = d.files.iter().find(|f| f.path == "big.txt").unwrap();
    assert_eq!(big.additions, Some(2000), "counts stay complete past the byte limit");
}

#[test]
fn log_lists_history_ranges_paging_and_changed_files() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    let first = t.commit_all("first");
    t.git(&["checkout", "-q", "-b", "feature"]);
    t.write("f.txt", "f\n");
    t.commit_all("feature work\n\nwith a body\nof two lines");
    t.git(&["checkout", "-q", "main"]);
    t.write("a.txt", "a2\n");
    t.commit_all("main work");
    let repo = t.open();

    let range = GitLogArgs { rev: Some("main..feature".into()), ..Default::default() };
    let log = sluice_git::log(&repo, &range, &nothing_hidden, GitEmails::Hide).unwrap();
    assert_eq!(log.commits.len(), 1);
    let c = &log.commits[0];
    assert_eq!(c.subject, "feature work");
    assert_eq!(c.body.as_deref(), Some("with a body\nof two lines"));
    assert_eq!((c.author_name.as_str(), c.author_email.as_deref()), ("Ada", None));
    assert!(c.time.contains('T'), "{}", c.time);
    assert_eq!(c.parents, std::slice::from_ref(&first));
    // The abbreviated id is git's: a unique prefix of at least 7 digits, never the whole id.
    assert!(
        (7..c.id.len()).contains(&c.short_id.len()) && c.id.starts_with(&c.short_id),
        "{} is not an abbreviation of {}",
        c.short_id,
        c.id
    );
    let files = c.files.as_ref().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!((files[0].path.as_str(), files[0].status), ("f.txt", FileStatus::Added));

    let page = GitLogArgs { max_count: Some(1), ..Default::default() };
    let log = sluice_git::log(&repo, &page, &nothing_hidden, GitEmails::Hide).unwrap();
    assert_eq!(log.commits.len(), 1);
    assert!(log.has_more);
    assert_eq!(log.commits[0].subject, "main work");
    let next = GitLogArgs { max_count: Some(1), skip: Some(1), ..Default::default() };
    let log = sluice_git::log(&repo, &next, &nothing_hidden, GitEmails::Hide).unwrap();
    assert_eq!(log.commits[0].id, first);
    assert!(!log.has_more);
    assert!(log.commits[0].parents.is_empty());

    let by_path =
        GitLogArgs { path: Some("a.txt".into()), rev: Some("main".into()), ..Default::default() };
    let log = sluice_git::log(&repo, &by_path, &nothing_hidden, GitEmails::Hide).unwrap();
    assert_eq!(log.commits.len(), 2);
}

#[test]
fn show_root_commit_merge_and_tag() {
    let t = TestRepo::new();
    t.write("root.txt", "root\n");
    let root = t.commit_all("root");
    t.git(&["tag", "-a", "v1", "-m", "tag message"]);
    t.git(&["checkout", "-q", "-b", "side"]);
    t.write("side.txt", "side\n");
    t.commit_all("side");
    t.git(&["checkout", "-q", "main"]);
    t.write("main.txt", "main\n");
    t.commit_all("main");
    t.git(&["merge", "-q", "--no-edit", "side"]);
    let repo = t.open();

    let s = sluice_git::show(
        &repo,
        &GitShowArgs { rev: root.clone(), ..Default::default() },
        &nothing_hidden,
        GitEmails::Hide,
    )
    .unwrap();
    assert_eq!(s.commit.subject, "root");
    assert_eq!(s.files.len(), 1);
    assert_eq!(s.files[0].status, FileStatus::Added);
    assert!(s.files[0].patch.as_deref().unwrap().contains("+root"));

    let tag = sluice_git::show(
        &repo,
        &GitShowArgs { rev: "v1".into(), ..Default::default() },
        &nothing_hidden,
        GitEmails::Hide,
    )
    .unwrap();
    assert_eq!(tag.commit.id, root);

    let merge = sluice_git::show(
        &repo,
        &GitShowArgs { rev: "HEAD".into(), ..Default::default() },
        &nothing_hidden,
        GitEmails::Hide,
    )
    .unwrap();
    assert_eq!(merge.commit.parents.len(), 2);
    let paths: Vec<&str> = merge.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["side.txt"], "a merge shows what it brought into the first parent");
}

#[test]
fn shielded_files_never_appear_in_any_output() {
    let t = TestRepo::new();
    t.write(".env", "API_SECRET=hunter2-committed\n");
    t.write("keys/server.pem", "PEM-CONTENT-committed\n");
    t.write("plain.txt", "plain\n");
    t.write("to-hide.txt", "will be renamed to a shielded name, long enough to be a rename\n");
    t.commit_all("with secrets");
    t.write(".env", "API_SECRET=hunter2-unstaged\n");
    t.write("keys/server.pem", "PEM-CONTENT-staged\n");
    t.git(&["add", "keys/server.pem"]);
    t.git(&["mv", "to-hide.txt", ".env.local"]);
    t.write(".env.example", "untracked-secret\n");
    t.write("plain.txt", "plain2\n");
    let repo = t.open();

    let st = sluice_git::status(&repo, &GitStatusArgs::default(), &shield).unwrap();
    let d1 = sluice_git::diff(&repo, &GitDiffArgs::default(), &shield).unwrap();
    let d2 = sluice_git::diff(&repo, &GitDiffArgs { staged: true, ..Default::default() }, &shield)
        .unwrap();
    let lg = sluice_git::log(&repo, &GitLogArgs::default(), &shield, GitEmails::Hide).unwrap();
    let sh = sluice_git::show(
        &repo,
        &GitShowArgs { rev: "HEAD".into(), ..Default::default() },
        &shield,
        GitEmails::Hide,
    )
    .unwrap();
    assert_eq!(st.entries.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(), ["plain.txt"]);
    assert_eq!(st.hidden_files, 4);
    assert_eq!(d1.files.len(), 1);
    assert_eq!(d1.hidden_files, 1);
    assert!(d2.files.is_empty());
    assert_eq!(d2.hidden_files, 2);
    assert_eq!(lg.hidden_files, 2);
    assert_eq!(sh.hidden_files, 2);
    let all = [
        format!("{st:?}"),
        format!("{d1:?}"),
        format!("{d2:?}"),
        format!("{lg:?}"),
        format!("{sh:?}"),
    ]
    .join("\n");
    for needle in [".env", ".pem", "hunter2", "PEM-CONTENT", "untracked-secret"] {
        assert!(!all.contains(needle), "{needle} leaked:\n{all}");
    }
}

#[test]
fn secrets_in_messages_and_patches_are_redacted() {
    let t = TestRepo::new();
    t.write("config.txt", "nothing\n");
    t.commit_all("init");
    let key = "AKIAABCDEFGHIJKLMNOP";
    t.write("config.txt", format!("aws = {key}\n"));
    t.commit_all(&format!("add key {key}\n\nbody has {key} too"));
    let repo = t.open();
    let lg =
        sluice_git::log(&repo, &GitLogArgs::default(), &nothing_hidden, GitEmails::Hide).unwrap();
    let sh = sluice_git::show(
        &repo,
        &GitShowArgs { rev: "HEAD".into(), ..Default::default() },
        &nothing_hidden,
        GitEmails::Hide,
    )
    .unwrap();
    let text = format!("{lg:?}{sh:?}");
    assert!(!text.contains(key), "{text}");
    assert!(sh.commit.subject.contains("[redacted:aws-access-key]"));
    assert!(sh.files[0].patch.as_deref().unwrap().contains("[redacted:aws-access-key]"));
}
