//! A property, over random trees of folders, files and links (relative and absolute, inside and
//! out, chained, dangling, looping): whatever path a client asks for, `Root` either refuses it or
//! hands back something inside the project — a file whose real path is under the root, a folder
//! whose listing is one of the project's. Checked with Linux's `openat2` and with the fallback
//! walk.

use std::fs;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sluice_guard::{RelPath, Root};

const CANARY: &str = "CANARY-outside-9d2c";
/// A name only the folder outside the project holds.
const MARKER: &str = "zz-outside-marker";

/// Names the trees are built from (links may reuse them).
const NAMES: &[&str] = &["a", "b", "c", "l", "m"];

#[derive(Debug, Clone)]
enum Node {
    Dir(Vec<&'static str>),
    File(Vec<&'static str>),
    Link(Vec<&'static str>, Target),
}

/// Where a link points: relative (possibly climbing out), or absolute (in, out, or the system).
#[derive(Debug, Clone)]
enum Target {
    Relative(&'static str),
    Outside,
    OutsideFile,
    ProjectItself,
    System(&'static str),
}

fn name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(NAMES)
}

fn at() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(name(), 1..4)
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        prop::sample::select(
            &[
                "..",
                "../..",
                "../outside",
                "../outside/canary.txt",
                "a/../..",
                "./b",
                "a",
                "b/c",
                "l",
                "m/..",
                ".",
                "../proj/a",
                "../proj_evil",
                "c/../../outside",
            ][..]
        )
        .prop_map(Target::Relative),
        Just(Target::Outside),
        Just(Target::OutsideFile),
        Just(Target::ProjectItself),
        prop::sample::select(&["/", "/etc", "/proc/self/root", "/tmp"][..])
            .prop_map(Target::System),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        at().prop_map(Node::Dir),
        at().prop_map(Node::File),
        (at(), target()).prop_map(|(p, t)| Node::Link(p, t)),
    ]
}

/// Builds the tree (what cannot be created — a parent that is a file — is skipped, as it would
/// be on disk) and returns the root folder.
fn build(base: &Path, nodes: &[Node]) -> PathBuf {
    let proj = base.join("proj");
    fs::create_dir_all(&proj).unwrap();
    fs::create_dir_all(base.join("outside")).unwrap();
    fs::write(base.join("outside/canary.txt"), CANARY).unwrap();
    fs::write(base.join("outside").join(MARKER), CANARY).unwrap();
    fs::create_dir_all(base.join("proj_evil")).unwrap();
    fs::write(base.join("proj_evil").join(MARKER), CANARY).unwrap();
    for node in nodes {
        let parts = match node {
            Node::Dir(p) | Node::File(p) | Node::Link(p, _) => p,
        };
        let at = parts.iter().fold(proj.clone(), |p, n| p.join(n));
        if let Some(parent) = at.parent() {
            let _ = fs::create_dir_all(parent);
        }
        if fs::symlink_metadata(&at).is_ok() {
            continue;
        }
        let _ = match node {
            Node::Dir(_) => fs::create_dir_all(&at),
            Node::File(_) => fs::write(&at, "inside"),
            Node::Link(_, t) => {
                let target: PathBuf = match t {
                    Target::Relative(r) => PathBuf::from(r),
                    Target::Outside => base.join("outside"),
                    Target::OutsideFile => base.join("outside/canary.txt"),
                    Target::ProjectItself => proj.clone(),
                    Target::System(s) => PathBuf::from(s),
                };
                symlink(&target, &at)
            }
        };
    }
    fs::canonicalize(&proj).unwrap()
}

fn inside(root: &Path, real: &Path) -> bool {
    real.starts_with(root)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn whatever_is_asked_root_answers_from_inside_or_refuses(
        nodes in prop::collection::vec(node(), 1..14),
        asks in prop::collection::vec(prop::collection::vec(name(), 1..5), 1..24),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let proj = build(&base, &nodes);
        let root = Root::open(&proj).unwrap();
        for openat2 in [true, false] {
            root.set_openat2(openat2);
            for ask in &asks {
                let rel = RelPath::parse(&ask.join("/")).unwrap();
                if let Ok((mut file, _)) = root.open_file(&rel) {
                    let real = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).unwrap();
                    prop_assert!(inside(&proj, &real), "{rel:?} opened {real:?} (openat2 {openat2})");
                    let mut text = String::new();
                    let _ = file.read_to_string(&mut text);
                    prop_assert!(!text.contains(CANARY), "{rel:?} read the canary");
                }
                if let Ok(dir) = root.open_dir(&rel) {
                    let names: Vec<String> =
                        dir.entries().unwrap_or_default().into_iter().map(|e| e.name).collect();
                    prop_assert!(
                        !names.iter().any(|n| n == MARKER || n == "proc" || n == "passwd"),
                        "{rel:?} listed a folder outside the project: {names:?} (openat2 {openat2})"
                    );
                }
                if let Ok(resolved) = root.resolve(&rel) {
                    prop_assert!(!resolved.as_str().starts_with(".."), "{rel:?} -> {resolved:?}");
                }
            }
        }
    }
}
