//! The path sandbox: `RelPath::parse` (every path argument of every MCP tool) and `Root`'s
//! fd-relative resolution inside a project.
//!
//! `path_parse`: whatever the text, parsing refuses it or yields a normalized relative path
//! (no empty, `.` or `..` component, no separator or control character inside a component, no
//! `:`, within the length and depth limits) that parses again to itself.
//!
//! `path_resolve`: the same text asked of a real project (a temp folder built once per
//! process, with links inside it, out of it, to the system, to itself, and a loop): every
//! answer — an opened file, an opened folder, a resolved or `lstat`ed path — is inside the
//! project, or the request is refused. Checked with `openat2` and with the fallback walk.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sluice_guard::{RelPath, Root};

/// Text only the files outside the project hold.
const CANARY: &str = "CANARY-outside-5e1f";
/// A name only the folder outside the project holds.
const MARKER: &str = "zz-outside-marker";

pub fn path_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(rel) = RelPath::parse(text) else { return };
    check_normal(&rel);
    let again = RelPath::parse(rel.as_str()).expect("a parsed path parses again");
    assert_eq!(again, rel, "parsing is not idempotent");
    if let Some(name) = rel.file_name() {
        let parent = rel.parent().expect("a named path has a parent");
        assert_eq!(parent.join(name).expect("rejoining a parsed path"), rel);
    }
}

fn check_normal(rel: &RelPath) {
    let s = rel.as_str();
    assert!(s.len() <= RelPath::MAX_LEN, "{rel:?} is too long");
    assert!(rel.depth() <= RelPath::MAX_DEPTH, "{rel:?} is too deep");
    assert!(!s.starts_with('/') && !s.contains('\\') && !s.contains(':'), "{rel:?}");
    for c in rel.components() {
        assert!(!matches!(c, "" | "." | ".."), "{rel:?} has the component {c:?}");
        assert!(c.len() <= RelPath::MAX_COMPONENT_LEN, "{rel:?}: {c:?} is too long");
        assert!(!c.chars().any(char::is_control), "{rel:?}: {c:?} has a control character");
        assert!(!c.ends_with(['.', ' ']), "{rel:?}: {c:?} ends with a dot or a space");
    }
}

/// The project and its surroundings, built once per process.
struct Tree {
    /// Holds the folders alive for as long as the process runs.
    _tmp: tempfile::TempDir,
    proj: PathBuf,
    root: Root,
}

fn tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("temp folder");
        let base = std::fs::canonicalize(tmp.path()).expect("canonical temp folder");
        let proj = base.join("proj");
        build(&base, &proj).expect("the fuzz project tree");
        let root = Root::open(&proj).expect("open the fuzz project");
        Tree { _tmp: tmp, proj, root }
    })
}

fn build(base: &Path, proj: &Path) -> std::io::Result<()> {
    use std::fs::{create_dir_all, write};
    create_dir_all(base.join("outside/sub"))?;
    write(base.join("outside/canary.txt"), CANARY)?;
    write(base.join("outside").join(MARKER), CANARY)?;
    create_dir_all(base.join("proj_evil"))?;
    write(base.join("proj_evil").join(MARKER), CANARY)?;
    create_dir_all(proj.join("a/b/c"))?;
    create_dir_all(proj.join("dir"))?;
    write(proj.join("file.txt"), "inside")?;
    write(proj.join("a/b/file.txt"), "inside")?;
    write(proj.join("a/b/c/deep.rs"), "inside")?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        let links: &[(&str, PathBuf)] = &[
            ("link_in", "a/b".into()),
            ("link_file", "file.txt".into()),
            ("link_out", "../outside".into()),
            ("link_out_file", "../outside/canary.txt".into()),
            ("link_evil", "../proj_evil".into()),
            ("link_abs", base.join("outside")),
            ("link_etc", "/etc".into()),
            ("link_root", "/".into()),
            ("link_proc", "/proc/self/root".into()),
            ("link_self", proj.to_path_buf()),
            ("link_loop", "link_loop".into()),
            ("link_dangling", "nowhere".into()),
            ("a/up", "..".into()),
            ("a/upup", "../..".into()),
            ("a/b/chain", "../../link_out".into()),
            ("a/b/c/back", "../../../a".into()),
            ("dir/sneak", "../a/../../outside/sub".into()),
        ];
        for (at, target) in links {
            symlink(target, proj.join(at))?;
        }
    }
    Ok(())
}

pub fn path_resolve(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(rel) = RelPath::parse(text) else { return };
    let tree = tree();
    for openat2 in [true, false] {
        tree.root.set_openat2(openat2);
        resolve_inside(tree, &rel, openat2);
    }
    tree.root.set_openat2(true);
}

fn resolve_inside(tree: &Tree, rel: &RelPath, openat2: bool) {
    let root = &tree.root;
    // `follow_last`: whether the answer's last component was followed (an `lstat` answer may
    // name a link, which then points wherever it points).
    let inside = |what: &str, got: &RelPath, follow_last: bool| {
        check_normal(got);
        let followed = if follow_last { Some(got.clone()) } else { got.parent() };
        let real = tree.proj.join(followed.unwrap_or_else(RelPath::root).as_str());
        // What the returned path names, its links followed, is in the project too.
        if let Ok(real) = std::fs::canonicalize(&real) {
            assert!(
                real.starts_with(&tree.proj),
                "{what}({rel:?}) answered {got:?}, which leads out (openat2 {openat2})"
            );
        }
    };
    if let Ok((file, _)) = root.open_file(rel) {
        check_fd(tree, &file, rel, openat2);
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut &file, &mut text);
        assert!(!text.contains(CANARY), "open_file({rel:?}) read outside (openat2 {openat2})");
    }
    if let Ok((file, _, resolved)) = root.open_file_resolved(rel) {
        check_fd(tree, &file, rel, openat2);
        inside("open_file_resolved", &resolved, true);
    }
    if let Ok(dir) = root.open_dir(rel) {
        inside("open_dir", dir.rel_path(), true);
        let names: Vec<String> =
            dir.entries().unwrap_or_default().into_iter().map(|e| e.name).collect();
        assert!(
            !names.iter().any(|n| n == MARKER || n == "passwd" || n == "proc"),
            "open_dir({rel:?}) listed a folder outside the project: {names:?} (openat2 {openat2})"
        );
    }
    if let Ok(resolved) = root.resolve(rel) {
        inside("resolve", &resolved, true);
        // The resolved path has no links left to follow: it resolves to itself.
        if let Ok(again) = root.resolve(&resolved) {
            assert_eq!(again, resolved, "resolve({rel:?}) is not a fixed point");
        }
    }
    if let Ok((_, resolved)) = root.lstat_resolved(rel) {
        inside("lstat_resolved", &resolved, false);
    }
    if let Ok((dir, name)) = root.open_parent(rel) {
        inside("open_parent", dir.rel_path(), true);
        assert_eq!(Some(name.as_str()), rel.file_name());
    }
}

/// The file behind an open descriptor is inside the project.
#[cfg(target_os = "linux")]
fn check_fd(tree: &Tree, file: &std::fs::File, rel: &RelPath, openat2: bool) {
    use std::os::fd::AsRawFd;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .expect("the path of an open file");
    assert!(real.starts_with(&tree.proj), "{rel:?} opened {real:?} (openat2 {openat2})");
}

#[cfg(not(target_os = "linux"))]
fn check_fd(_: &Tree, _: &std::fs::File, _: &RelPath, _: bool) {}
