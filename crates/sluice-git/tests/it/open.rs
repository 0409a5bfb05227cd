//! `Repo::open`: exactly the project's own `.git` directory, never a parent's, never a
//! redirect.

use sluice_core::{Coded, ErrorCode};
use sluice_git::{GitEmails, GitStatusArgs, Repo};

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

/// A repository elsewhere on the machine, with one commit whose message is a canary, and that
/// commit's id.
fn foreign_commit() -> (TestRepo, String) {
    let foreign = TestRepo::new();
    foreign.write("secret.txt", "foreign-canary-content");
    let id = foreign.commit_all("foreign-canary-commit");
    (foreign, id)
}

/// Asserts git refuses to open `project`, or that showing `id` through it reveals nothing.
fn foreign_object_unreachable(project: &TestRepo, id: &str) {
    match Repo::open(&project.root()) {
        Err(err) => assert_eq!(err.code(), ErrorCode::NotAGitRepository, "{err}"),
        Ok(repo) => {
            let args: sluice_git::GitShowArgs =
                serde_json::from_value(serde_json::json!({"rev": id})).unwrap();
            let shown = sluice_git::show(&repo, &args, &nothing_hidden, GitEmails::Hide);
            let text = format!("{shown:?}");
            assert!(!text.contains("foreign-canary"), "a foreign object was read: {text}");
        }
    }
}

/// `objects/info/alternates` makes git read another repository's objects: a project (or a job
/// inside it, which may write `.git`) could borrow any repository on the machine and read it
/// through git_show by id or by a short prefix.
#[test]
fn borrowed_objects_through_alternates_are_refused() {
    let (foreign, id) = foreign_commit();
    let project = TestRepo::new();
    project.write("a.txt", "a");
    project.commit_all("own");
    let alternates = project.root().join(".git/objects/info/alternates");
    std::fs::create_dir_all(alternates.parent().unwrap()).unwrap();
    std::fs::write(&alternates, format!("{}\n", foreign.root().join(".git/objects").display()))
        .unwrap();
    foreign_object_unreachable(&project, &id);
    let err = Repo::open(&project.root()).unwrap_err();
    assert!(err.to_string().contains("alternates"), "{err}");
}

/// The same through links inside `.git/objects`: the whole folder, the fan-out folders of a
/// repository whose objects are loose, or a pack file and its index. Each link does bring the
/// foreign commit in: plain git reads it through the project.
#[cfg(unix)]
#[test]
fn objects_reached_through_links_are_refused() {
    use std::os::unix::fs::symlink;
    let (foreign, id) = foreign_commit();
    foreign.git(&["repack", "-a", "-d", "-q"]);
    let foreign_objects = foreign.root().join(".git/objects");
    let pack = std::fs::read_dir(foreign_objects.join("pack"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "pack"))
        .expect("a pack");
    // A second foreign repository left unpacked: its commit, tree and blob are loose objects,
    // each in a fan-out folder named by its id's first two digits.
    let (loose, loose_id) = foreign_commit();
    let loose_objects = loose.root().join(".git/objects");
    let fanouts: Vec<_> = std::fs::read_dir(&loose_objects)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().len() == 2)
        .map(|e| e.path())
        .collect();
    assert!(fanouts.iter().any(|f| f.ends_with(&loose_id[..2])), "{fanouts:?}");
    for how in ["objects", "fanout", "pack"] {
        let project = TestRepo::new();
        project.write("a.txt", "a");
        project.commit_all("own");
        let objects = project.root().join(".git/objects");
        let id = match how {
            "objects" => {
                std::fs::remove_dir_all(&objects).unwrap();
                symlink(&foreign_objects, &objects).unwrap();
                &id
            }
            "fanout" => {
                // The project's own objects into a pack, so no fan-out folder of its own is in
                // the way; then every foreign fan-out folder linked in.
                project.git(&["repack", "-a", "-d", "-q"]);
                for fanout in &fanouts {
                    let name = fanout.file_name().unwrap();
                    let _ = std::fs::remove_dir(objects.join(name));
                    symlink(fanout, objects.join(name)).unwrap();
                }
                &loose_id
            }
            _ => {
                let name = pack.file_name().unwrap();
                symlink(&pack, objects.join("pack").join(name)).unwrap();
                let idx = pack.with_extension("idx");
                symlink(&idx, objects.join("pack").join(idx.file_name().unwrap())).unwrap();
                &id
            }
        };
        let plain = project.git(&["show", "--stat", id]);
        assert!(plain.contains("foreign-canary-commit"), "{how}: the link brings nothing in");
        foreign_object_unreachable(&project, id);
    }
}
