//! Linked worktrees: the ones Sluice adds are opened with `Repo::open_worktree` against their
//! parent, and nothing else is: not a `.git` file rewritten to point at another repository, not
//! a worktree of another repository, not one whose records in the parent were changed.

use std::path::{Path, PathBuf};

use sluice_core::{Coded, ErrorCode};
use sluice_git::{GitStatusArgs, Repo};

use crate::support::{TestRepo, nothing_hidden};

fn project() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.write("README.md", "hello\n");
    repo.commit_all("first");
    let parent = std::fs::canonicalize(repo.root()).unwrap();
    (repo, parent)
}

fn add(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.parent().unwrap().join("repo.worktrees");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let repo = Repo::open(parent).unwrap();
    sluice_git::add_worktree(&repo, &path, name, true).unwrap();
    path
}

fn refused(root: &Path, parent: &Path) {
    let err = Repo::open_worktree(root, parent).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotAGitRepository, "{err}");
    assert!(!err.to_string().contains(&root.display().to_string()), "{err}");
}

#[test]
fn a_worktree_sluice_added_opens_against_its_parent_only() {
    let (repo, parent) = project();
    let wt = add(&parent, "try");
    let opened = Repo::open_worktree(&wt, &parent).unwrap();
    let st = sluice_git::status(&opened, &GitStatusArgs::default(), &nothing_hidden).unwrap();
    assert_eq!(st.branch.as_deref(), Some("try"));
    assert!(st.entries.is_empty());
    // The parent's own checkout is untouched.
    assert_eq!(repo.git(&["branch", "--show-current"]).trim(), "main");
    // Still refused by the ordinary open, and against any other parent.
    assert_eq!(Repo::open(&wt).unwrap_err().code(), ErrorCode::NotAGitRepository);
    let (_other, other_parent) = project();
    refused(&wt, &other_parent);
    // An existing branch checked out somewhere, or a new one that exists, is refused.
    let r = Repo::open(&parent).unwrap();
    let dir = parent.parent().unwrap().join("repo.worktrees");
    for (branch, create) in [("main", false), ("try", false), ("try", true), ("nope", false)] {
        let err = sluice_git::add_worktree(&r, &dir.join("x"), branch, create).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Conflict, "{branch}: {err}");
    }
    assert!(!dir.join("x").exists());
}

// One of the rewrites is a symbolic link: Unix.
#[cfg(unix)]
#[test]
fn a_rewritten_dot_git_file_or_changed_records_are_refused() {
    let (_repo, parent) = project();
    let wt = add(&parent, "a");
    // Pointed at another repository's worktree record, or straight at its .git.
    let (_evil, evil) = project();
    let evil_wt = add(&evil, "b");
    let evil_gitdir = std::fs::read_to_string(evil_wt.join(".git")).unwrap();
    let original = std::fs::read_to_string(wt.join(".git")).unwrap();
    std::fs::write(wt.join(".git"), &evil_gitdir).unwrap();
    refused(&wt, &parent);
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", evil.join(".git").display())).unwrap();
    refused(&wt, &parent);
    // A relative path that climbs into the other repository.
    std::fs::write(wt.join(".git"), "gitdir: ../../evil/.git\n").unwrap();
    refused(&wt, &parent);
    // A link in place of the .git file.
    std::fs::remove_file(wt.join(".git")).unwrap();
    std::os::unix::fs::symlink(evil_wt.join(".git"), wt.join(".git")).unwrap();
    refused(&wt, &parent);
    std::fs::remove_file(wt.join(".git")).unwrap();
    std::fs::write(wt.join(".git"), &original).unwrap();
    Repo::open_worktree(&wt, &parent).unwrap();
    // The record's commondir or gitdir changed in the parent.
    let record = PathBuf::from(original.trim().strip_prefix("gitdir: ").unwrap());
    std::fs::write(record.join("commondir"), format!("{}\n", evil.join(".git").display())).unwrap();
    refused(&wt, &parent);
    std::fs::write(record.join("commondir"), "../..\n").unwrap();
    Repo::open_worktree(&wt, &parent).unwrap();
    std::fs::write(record.join("gitdir"), format!("{}\n", evil_wt.join(".git").display())).unwrap();
    refused(&wt, &parent);
}

#[test]
fn removing_refuses_a_dirty_worktree_and_keeps_the_branch() {
    let (repo, parent) = project();
    let wt = add(&parent, "work");
    let r = Repo::open(&parent).unwrap();
    let opened = Repo::open_worktree(&wt, &parent).unwrap();
    std::fs::write(wt.join("new.txt"), "x").unwrap();
    let err = sluice_git::remove_worktree(&r, &opened).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    assert!(err.to_string().contains("uncommitted"), "{err}");
    std::fs::remove_file(wt.join("new.txt")).unwrap();
    sluice_git::remove_worktree(&r, &opened).unwrap();
    assert!(!wt.exists());
    assert!(repo.git(&["branch", "--list", "work"]).contains("work"));
}

#[test]
fn worktree_names_are_single_plain_folder_names() {
    for good in ["a", "fix-1", "v1.2_x"] {
        sluice_git::worktree_name(good).unwrap();
    }
    for bad in ["", ".", "..", "-x", ".hidden", "a/b", "a b", "ü", &"x".repeat(49)] {
        assert!(sluice_git::worktree_name(bad).is_err(), "{bad}");
    }
}
