//! The test project: ordinary files, secrets the shield must hide, ignore files, and links
//! that point inside and outside the project. Canaries live outside the root.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use sluice_guard::Shield;
use sluice_runner::Workspace;

/// Content of files outside the project. Must never appear in any output.
pub const CANARY: &str = "CANARY-OUTSIDE-5d1e";
/// Content of shielded files inside the project. Must never appear in any output.
pub const SECRET: &str = "SHIELDED-SECRET-9b2c";

pub struct Rig {
    pub _tmp: tempfile::TempDir,
    pub base: PathBuf,
    pub proj: PathBuf,
    pub ws: Workspace,
}

pub use sluice_core::attack_scale as iterations;

pub fn rig() -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().to_path_buf();
    let proj = base.join("proj");
    let w = |rel: &str, content: &str| {
        let p = proj.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    };
    w("README.md", "hello world\nsecond line\nthird needle line\n");
    w("src/main.rs", "fn main() {\n    println!(\"needle\");\n}\n");
    w("src/lib.rs", "pub fn needle() {}\n");
    w(".gitignore", "target/\n*.log\n!keep.log\n");
    w("target/out.txt", "needle in target\n");
    w("debug.log", "needle in log\n");
    w("keep.log", "needle kept\n");
    w("sub/.gitignore", "ignored.txt\n");
    w("sub/ignored.txt", "needle ignored\n");
    w("sub/visible.txt", "needle visible\n");
    w(".hidden/note.txt", "needle hidden\n");
    for secret in [".env", "sub/.env.local", ".git/config", "id_rsa", ".ssh/x", "certs/a.pem"] {
        w(secret, &format!("needle {SECRET}\n"));
    }
    fs::create_dir_all(base.join("proj_evil")).unwrap();
    fs::write(base.join("proj_evil/x"), format!("needle {CANARY}\n")).unwrap();
    fs::write(base.join("canary.txt"), format!("needle {CANARY}\n")).unwrap();
    symlink("/etc", proj.join("l")).unwrap();
    symlink(base.join("canary.txt"), proj.join("k")).unwrap();
    symlink("../proj_evil", proj.join("evil")).unwrap();
    symlink("../nope", proj.join("dangling")).unwrap();
    symlink(".env", proj.join("notes.txt")).unwrap();
    symlink(".git", proj.join("gitdir")).unwrap();
    symlink("src", proj.join("docs")).unwrap();
    symlink("README.md", proj.join("readme_link")).unwrap();
    let ws = Workspace::open(&proj, &Shield::default_patterns()).unwrap();
    Rig { _tmp: tmp, base, proj, ws }
}

/// Asserts no canary, secret or physical path is in `text`.
pub fn assert_clean(rig: &Rig, text: &str) {
    assert!(!text.contains(CANARY), "outside canary leaked: {text}");
    assert!(!text.contains(SECRET), "shielded secret leaked: {text}");
    assert!(!text.contains(rig.base.to_str().unwrap()), "physical path leaked: {text}");
}
