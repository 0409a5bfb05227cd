//! `Root` against real folders and real links: in-project links work, every way out is refused
//! the same way whether or not the target exists, and specials are refused by kind. Each test
//! runs with the Linux `openat2` fast path and with the fallback walk.

use std::fs;
use std::io::Read;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use sluice_core::{Coded, ErrorCode};
use sluice_guard::{EntryKind, GuardError, RelPath, Root};

const CANARY: &str = "CANARY-guard-7f3a";

/// `base/proj` (the root), `base/proj_evil/x` and `base/canary.txt` outside it.
struct Rig {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    proj: PathBuf,
}

fn rig() -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().to_path_buf();
    let proj = base.join("proj");
    fs::create_dir_all(proj.join("sub/deep")).unwrap();
    fs::create_dir_all(base.join("proj_evil")).unwrap();
    fs::write(base.join("proj_evil/x"), CANARY).unwrap();
    fs::write(base.join("canary.txt"), CANARY).unwrap();
    fs::write(proj.join("README.md"), "hello").unwrap();
    fs::write(proj.join(".env"), "SECRET=1").unwrap();
    fs::write(proj.join("sub/deep/f.txt"), "deep").unwrap();
    symlink("/etc", proj.join("l")).unwrap();
    symlink(base.join("canary.txt"), proj.join("k")).unwrap();
    symlink("../proj_evil", proj.join("evil")).unwrap();
    symlink("sub/../../proj_evil/x", proj.join("sneaky")).unwrap();
    symlink("../nonexistent", proj.join("dangling_out")).unwrap();
    symlink("missing.txt", proj.join("dangling_in")).unwrap();
    symlink(".env", proj.join("notes.txt")).unwrap();
    symlink("sub", proj.join("docs")).unwrap();
    symlink("../README.md", proj.join("sub/up")).unwrap();
    symlink("deep/..", proj.join("sub/dotdot")).unwrap();
    symlink("loop2", proj.join("loop1")).unwrap();
    symlink("loop1", proj.join("loop2")).unwrap();
    symlink(proj.join("README.md"), proj.join("abs_inside")).unwrap();
    Rig { _tmp: tmp, base, proj }
}

fn rel(s: &str) -> RelPath {
    RelPath::parse(s).unwrap()
}

fn roots(path: &Path) -> Vec<Root> {
    [true, false]
        .into_iter()
        .map(|fast| {
            let root = Root::open(path).unwrap();
            root.set_openat2(fast);
            root
        })
        .collect()
}

fn read(root: &Root, p: &str) -> Result<String, GuardError> {
    let (mut file, _) = root.open_file(&rel(p))?;
    let mut s = String::new();
    file.read_to_string(&mut s).unwrap();
    Ok(s)
}

#[test]
fn in_project_links_resolve() {
    let rig = rig();
    for root in roots(&rig.proj) {
        assert_eq!(read(&root, "README.md").unwrap(), "hello");
        assert_eq!(read(&root, "docs/deep/f.txt").unwrap(), "deep");
        assert_eq!(read(&root, "sub/up").unwrap(), "hello");
        assert_eq!(read(&root, "notes.txt").unwrap(), "SECRET=1");
        let (_, _, resolved) = root.open_file_resolved(&rel("notes.txt")).unwrap();
        assert_eq!(resolved.as_str(), ".env", "the shield needs the resolved name");
        let (_, _, resolved) = root.open_file_resolved(&rel("docs/deep/f.txt")).unwrap();
        assert_eq!(resolved.as_str(), "sub/deep/f.txt");
        assert_eq!(root.resolve(&rel("sub/up")).unwrap().as_str(), "README.md");
        assert_eq!(root.resolve(&rel("sub/dotdot")).unwrap().as_str(), "sub");
        assert_eq!(root.resolve(&rel("docs")).unwrap().as_str(), "sub");
        assert_eq!(root.resolve(&rel(".")).unwrap().as_str(), "");
        let dir = root.open_dir(&rel("docs/deep")).unwrap();
        assert_eq!(dir.rel_path().as_str(), "sub/deep");
        let names: Vec<_> = dir.entries().unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["f.txt"]);
    }
}

#[test]
fn links_leaving_the_project_are_refused_uniformly() {
    let rig = rig();
    for root in roots(&rig.proj) {
        for p in [
            "l",
            "l/passwd",
            "l/does-not-exist",
            "k",
            "evil",
            "evil/x",
            "evil/missing",
            "sneaky",
            "dangling_out",
            "abs_inside",
        ] {
            let want = GuardError::OutsideProject { path: p.to_owned() };
            assert_eq!(root.open_file(&rel(p)).err(), Some(want.clone()), "open_file {p}");
            let got = root.open_file_resolved(&rel(p)).err();
            assert_eq!(got, Some(want.clone()), "open_file_resolved {p}");
            assert_eq!(root.resolve(&rel(p)).err(), Some(want.clone()), "resolve {p}");
            if p.contains('/') {
                assert_eq!(root.open_dir(&rel(p)).err(), Some(want.clone()), "open_dir {p}");
                assert_eq!(root.metadata(&rel(p)).err(), Some(want.clone()), "metadata {p}");
            }
            assert_eq!(want.code(), ErrorCode::PathOutsideProject);
            assert!(!want.to_string().contains(rig.base.to_str().unwrap()));
        }
        // The link itself can be inspected: it is a link, not its target.
        assert_eq!(root.metadata(&rel("l")).unwrap().kind, EntryKind::Symlink);
        assert_eq!(root.metadata(&rel("k")).unwrap().kind, EntryKind::Symlink);
    }
}

#[test]
fn prefix_sibling_is_not_inside() {
    let rig = rig();
    // A root whose sibling shares its name as a string prefix.
    let root = Root::open(&rig.proj).unwrap();
    assert!(RelPath::parse("../proj_evil/x").is_err());
    assert_eq!(root.open_file(&rel("evil/x")).unwrap_err().code(), ErrorCode::PathOutsideProject);
    let evil_root = Root::open(&rig.base.join("proj_evil")).unwrap();
    assert_eq!(read(&evil_root, "x").unwrap(), CANARY);
}

#[test]
fn missing_dangling_loops_and_kinds() {
    let rig = rig();
    mkfifo(&rig.proj.join("fifo"));
    for root in roots(&rig.proj) {
        for p in ["nope", "sub/nope", "dangling_in", "README.md/x"] {
            let err = root.open_file(&rel(p)).unwrap_err();
            assert_eq!(err.code(), ErrorCode::NotFound, "{p}: {err}");
        }
        assert_eq!(root.metadata(&rel("dangling_in")).unwrap().kind, EntryKind::Symlink);
        assert_eq!(root.open_file(&rel("loop1")).unwrap_err().code(), ErrorCode::PathInvalid);
        let err = root.open_file(&rel("fifo")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::WrongKind, "{err}");
        assert_eq!(root.metadata(&rel("fifo")).unwrap().kind, EntryKind::Other);
        let err = root.open_file(&rel("sub")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::WrongKind);
        let err = root.open_dir(&rel("README.md")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::WrongKind, "{err}");
        let meta = root.metadata(&rel("README.md")).unwrap();
        assert_eq!((meta.kind, meta.len), (EntryKind::File, 5));
        assert_eq!(root.metadata(&rel(".")).unwrap().kind, EntryKind::Dir);
    }
}

#[test]
fn dir_handles_never_follow_links() {
    let rig = rig();
    let root = Root::open(&rig.proj).unwrap();
    let dir = root.open_dir(&RelPath::root()).unwrap();
    for name in ["l", "evil", "docs"] {
        let err = dir.open_subdir(name).unwrap_err();
        assert_eq!(err.code(), ErrorCode::WrongKind, "{name}");
    }
    for name in ["k", "notes.txt", "sneaky"] {
        let err = dir.open_file(name).unwrap_err();
        assert_eq!(err.code(), ErrorCode::WrongKind, "{name}");
    }
    assert!(dir.open_file("..").is_err());
    assert!(dir.open_subdir("../proj_evil").is_err());
    let sub = dir.open_subdir("sub").unwrap();
    assert_eq!(sub.rel_path().as_str(), "sub");
    assert_ne!(sub.id().unwrap(), dir.id().unwrap());
    let kinds: std::collections::BTreeMap<_, _> =
        dir.entries().unwrap().into_iter().map(|e| (e.name, e.kind)).collect();
    assert_eq!(kinds["l"], Some(EntryKind::Symlink));
    assert_eq!(kinds["sub"], Some(EntryKind::Dir));
}

#[test]
fn entries_read_again_and_at_once_list_the_same_names() {
    let rig = rig();
    // Enough names to need several `getdents64` calls into one 8 KiB buffer.
    for i in 0..400 {
        fs::write(rig.proj.join(format!("many-{i:03}-{}.txt", "n".repeat(40))), "x").unwrap();
    }
    let root = Root::open(&rig.proj).unwrap();
    let dir = root.open_dir(&RelPath::root()).unwrap();
    let sorted = |dir: &sluice_guard::DirHandle| {
        let mut names: Vec<_> = dir.entries().unwrap().into_iter().map(|e| e.name).collect();
        names.sort();
        names
    };
    let first = sorted(&dir);
    assert_eq!(first.iter().filter(|n| n.starts_with("many-")).count(), 400);
    assert!(first.contains(&"sub".to_owned()) && !first.contains(&".".to_owned()));
    // The first reading moved the handle's own position; later ones must still see everything.
    assert_eq!(sorted(&dir), first);
    let fresh = root.open_dir(&RelPath::root()).unwrap();
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| sorted(&fresh));
        let b = s.spawn(|| sorted(&fresh));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!((a, b), (first.clone(), first));
}

#[test]
fn root_open_refuses_files_and_missing_without_paths() {
    let rig = rig();
    let err = Root::open(&rig.proj.join("README.md")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ProjectUnavailable);
    let err = Root::open(&rig.base.join("missing")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ProjectUnavailable);
    assert!(!err.to_string().contains(rig.base.to_str().unwrap()));
    let root = Root::open(&rig.proj).unwrap();
    assert_eq!(format!("{root:?}"), "Root { .. }");
}

/// A FIFO at `path`, by `mkfifo(1)`, which every Unix has (rustix has no `mknodat` on Apple).
fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo").args(["-m", "600"]).arg(path).status();
    assert!(status.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}
