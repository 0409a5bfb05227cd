//! `Repo::open`: exactly the project's own `.git` directory, never a parent's, never a
//! redirect.

use sluice_core::{Coded, ErrorCode};
use sluice_git::{GitStatusArgs, Repo};

use crate::support::{TestRepo, nothing_hidden};

#[test]
fn project_inside_a_parent_repository_is_not_a_repository() {
    let parent = TestRepo::new();
    parent.write("child/file.txt", "x");
    parent.commit_all("parent commit");
    let err = Repo::open(&parent.root().join("child")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotAGitRepository);
    assert!(err.to_string().contains("no .git directory"), "{err}");
}

#[test]
fn project_nested_in_parent_sees_only_its_own_repository() {
    let parent = TestRepo::new();
    parent.write("parent-only.txt", "p");
    parent.commit_all("parent commit");
    let child = parent.root().join("child");
    std::fs::create_dir(&child).unwrap();
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(&child)
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::write(child.join("mine.txt"), "m").unwrap();
    let repo = Repo::open(&child).unwrap();
    let st = sluice_git::status(&repo, &GitStatusArgs::default(), &nothing_hidden).unwrap();
    let paths: Vec<&str> = st.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["mine.txt"]);
    assert_eq!(st.head, None);
}

#[test]
fn dot_git_file_is_refused() {
    let real = TestRepo::new();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join(".git"),
        format!("gitdir: {}\n", real.root().join(".git").display()),
    )
    .unwrap();
    let err = Repo::open(project.path()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotAGitRepository);
    assert!(err.to_string().contains(".git is a file"), "{err}");
    assert!(!err.to_string().contains(&project.path().display().to_string()));
}

#[cfg(unix)]
#[test]
fn dot_git_symlink_is_refused() {
    let real = TestRepo::new();
    let project = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(real.root().join(".git"), project.path().join(".git")).unwrap();
    let err = Repo::open(project.path()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotAGitRepository);
    assert!(err.to_string().contains("symbolic link"), "{err}");
}

#[test]
fn commondir_redirect_is_refused() {
    let repo = TestRepo::new();
    std::fs::write(repo.root().join(".git/commondir"), "/elsewhere/.git\n").unwrap();
    let err = Repo::open(&repo.root()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotAGitRepository);
}

#[test]
fn relative_root_is_refused() {
    let err = Repo::open(std::path::Path::new("relative/dir")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
}

#[test]
fn git_errors_never_show_the_physical_root() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a");
    repo.commit_all("one");
    // Break the repository so git's own error names the git dir.
    std::fs::write(repo.root().join(".git/HEAD"), "garbage\n").unwrap();
    let err =
        sluice_git::status(&repo.open(), &GitStatusArgs::default(), &nothing_hidden).unwrap_err();
    let msg = err.to_string();
    assert_eq!(err.code(), ErrorCode::GitFailed);
    assert!(!msg.contains(&repo.root().display().to_string()), "{msg}");
    assert!(!msg.contains("/tmp"), "{msg}");
}

#[test]
fn git_version_is_reported() {
    let v = sluice_git::git_version().unwrap();
    assert!(v.starts_with("2."), "{v}");
}
