//! The mutation layer against real folders: the plan/commit API, the temp+rename write path,
//! the shield on writes (AP-05), swaps between plan and commit (AP-01, SL-02/03), backups and
//! restore, crash recovery from the journal (PE-03, PC-01), limits (RX-02), and a parser fuzz.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_core::{Coded, ErrorCode};
use sluice_guard::Shield;
use sluice_runner::*;

use crate::rig::{CANARY, Rig, assert_clean, rig};

struct M {
    rig: Rig,
    m: Mutations,
    state: PathBuf,
}

fn setup() -> M {
    setup_with(BackupLimits::default())
}

fn setup_with(limits: BackupLimits) -> M {
    let rig = rig();
    let state = rig.base.join("data/projects/p1");
    let ws = Arc::new(Workspace::open(&rig.proj, &Shield::default_patterns()).unwrap());
    let m = Mutations::open(ws, &state, limits).unwrap();
    M { rig, m, state }
}

fn hash(path: &Path) -> String {
    format!("blake3:{}", blake3::hash(&fs::read(path).unwrap()).to_hex())
}

fn write(
    m: &Mutations,
    path: &str,
    content: &str,
    expected: Option<String>,
) -> Result<MutationOutput, RunnerError> {
    let args = WriteFileArgs {
        path: path.into(),
        content: content.into(),
        expected_hash: expected,
        create_parents: true,
    };
    m.commit(&m.plan_write_file(&args)?)
}

fn patch(m: &Mutations, text: &str) -> Result<MutationOutput, RunnerError> {
    m.commit(&m.plan_apply_patch(&ApplyPatchArgs { patch: text.into() })?)
}

/// Every regular file and link below `dir` with its bytes (links: their target), for
/// byte-for-byte before/after comparisons.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() {
                out.insert(
                    rel,
                    fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes(),
                );
            } else if meta.is_dir() {
                out.insert(format!("{rel}/"), format!("{:o}", meta.mode() & 0o777).into_bytes());
                walk(base, &path, out);
            } else {
                let mut bytes = fs::read(&path).unwrap();
                bytes.extend(format!(" mode={:o}", meta.mode() & 0o777).bytes());
                out.insert(rel, bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn code(r: Result<impl std::fmt::Debug, RunnerError>) -> ErrorCode {
    r.unwrap_err().code()
}

#[test]
fn write_file_creates_and_replaces_only_with_the_current_hash() {
    let t = setup();
    let out = write(&t.m, "new/dir/a.txt", "one\n", None).unwrap();
    assert!(out.operation_id.starts_with("op_"));
    assert_eq!(fs::read_to_string(t.rig.proj.join("new/dir/a.txt")).unwrap(), "one\n");
    assert_eq!(
        out.files.last().unwrap().hash_after.as_deref(),
        Some(hash(&t.rig.proj.join("new/dir/a.txt")).as_str())
    );
    // Exists and no hash: refused; a wrong hash: refused; hint included.
    let err = write(&t.m, "new/dir/a.txt", "two\n", None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    assert!(err.to_string().contains("expected_hash"));
    let wrong = format!("blake3:{}", "0".repeat(64));
    let err = write(&t.m, "new/dir/a.txt", "two\n", Some(wrong)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert!(err.to_string().contains("read_file"), "{err}");
    // Mode is preserved, set-uid dropped; the inode is new.
    let p = t.rig.proj.join("new/dir/a.txt");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o4750)).unwrap();
    let ino = fs::metadata(&p).unwrap().ino();
    let out = write(&t.m, "new/dir/a.txt", "two\n", Some(hash(&p))).unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "two\n");
    assert_eq!(fs::metadata(&p).unwrap().mode() & 0o7777, 0o750);
    assert_ne!(fs::metadata(&p).unwrap().ino(), ino);
    assert_eq!(out.backups.len(), 1);
    // A missing parent without create_parents is a clear NotFound.
    let args = WriteFileArgs { path: "nope/x".into(), content: "x".into(), ..Default::default() };
    let err = t.m.plan_write_file(&args).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(err.to_string().contains("create_parents"), "{err}");
    // No temp files are left behind.
    let names: Vec<_> =
        fs::read_dir(p.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn hard_linked_outside_file_keeps_its_bytes() {
    let t = setup();
    let outside = t.rig.base.join("outside.txt");
    fs::write(&outside, CANARY).unwrap();
    fs::hard_link(&outside, t.rig.proj.join("linked.txt")).unwrap();
    let h = hash(&t.rig.proj.join("linked.txt"));
    write(&t.m, "linked.txt", "replaced", Some(h.clone())).unwrap();
    assert_eq!(fs::read_to_string(&outside).unwrap(), CANARY);
    assert_eq!(fs::read_to_string(t.rig.proj.join("linked.txt")).unwrap(), "replaced");
    // edit_file and apply_patch take the same path.
    fs::hard_link(&outside, t.rig.proj.join("linked2.txt")).unwrap();
    let edit = EditFileArgs {
        path: "linked2.txt".into(),
        edits: vec![TextEdit {
            old_text: "CANARY".into(),
            new_text: "X".into(),
            replace_all: false,
        }],
        expected_hash: None,
    };
    t.m.commit(&t.m.plan_edit_file(&edit).unwrap()).unwrap();
    assert_eq!(fs::read_to_string(&outside).unwrap(), CANARY);
}

#[test]
fn sl02_links_at_or_above_the_destination_are_never_written_through() {
    let t = setup();
    let canary = t.rig.base.join("canary.txt");
    let before = fs::read(&canary).unwrap();
    symlink(&canary, t.rig.proj.join("present")).unwrap();
    symlink(t.rig.base.join("missing-target"), t.rig.proj.join("dangling_new")).unwrap();
    symlink("/", t.rig.proj.join("rootdir")).unwrap();
    for (path, expected) in [
        ("present", ErrorCode::WrongKind),
        ("dangling_new", ErrorCode::WrongKind),
        ("readme_link", ErrorCode::WrongKind),
        ("rootdir/etc/x", ErrorCode::PathOutsideProject),
        ("evil/x", ErrorCode::PathOutsideProject),
        ("l/new", ErrorCode::PathOutsideProject),
    ] {
        let err =
            write(&t.m, path, "pwned", Some(format!("blake3:{}", "1".repeat(64)))).unwrap_err();
        assert_eq!(err.code(), expected, "{path}: {err}");
        let err2 = write(&t.m, path, "pwned", None).unwrap_err();
        assert!(
            matches!(
                err2.code(),
                ErrorCode::WrongKind | ErrorCode::PathOutsideProject | ErrorCode::Conflict
            ),
            "{path}"
        );
        assert_clean(&t.rig, &err.to_string());
    }
    assert_eq!(fs::read(&canary).unwrap(), before);
    assert!(!t.rig.base.join("missing-target").exists());
    // Deleting a link removes the link only.
    t.m.commit(
        &t.m.plan_delete_path(&DeletePathArgs { path: "present".into(), recursive: false })
            .unwrap(),
    )
    .unwrap();
    assert!(!t.rig.proj.join("present").exists());
    assert_eq!(fs::read(&canary).unwrap(), before);
}

#[test]
fn ap05_shielded_paths_and_the_state_folder_are_never_changed() {
    let t = setup();
    let snap = snapshot(&t.rig.proj);
    let m = &t.m;
    for path in [
        ".env",
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.env.local",
        "x/.ssh/id",
        "id_rsa.pub",
    ] {
        let err = write(m, path, "x", None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathShielded, "{path}: {err}");
        let err =
            m.plan_delete_path(&DeletePathArgs { path: path.into(), recursive: true }).unwrap_err();
        assert!(
            matches!(err.code(), ErrorCode::PathShielded | ErrorCode::NotFound),
            "{path}: {err}"
        );
    }
    // `notes.txt -> .env`: a link is never written through, whatever it points to.
    assert_eq!(code(write(m, "notes.txt", "x", None)), ErrorCode::WrongKind);
    let mv = |from: &str, to: &str| {
        m.plan_move_path(&MovePathArgs { from: from.into(), to: to.into(), ..Default::default() })
    };
    assert_eq!(code(mv("README.md", ".env.production")), ErrorCode::PathShielded);
    assert_eq!(code(mv(".env", "env.txt")), ErrorCode::PathShielded);
    assert_eq!(code(mv("README.md", "gitdir/hooks/post-checkout")), ErrorCode::PathShielded);
    // A folder holding a shielded file can be neither deleted nor moved.
    assert_eq!(
        code(m.plan_delete_path(&DeletePathArgs { path: "certs".into(), recursive: true })),
        ErrorCode::PathShielded
    );
    assert_eq!(code(mv("certs", "certs2")), ErrorCode::PathShielded);
    assert_eq!(
        code(
            m.plan_create_directory(&CreateDirectoryArgs { path: ".git/x".into(), parents: true })
        ),
        ErrorCode::PathShielded
    );
    let p = "*** Begin Patch\n*** Add File: ok.txt\n+fine\n*** Add File: .git/hooks/post-merge\n+#!/bin/sh\n*** End Patch\n";
    assert_eq!(
        code(m.plan_apply_patch(&ApplyPatchArgs { patch: p.into() })),
        ErrorCode::PathShielded
    );
    assert_eq!(snapshot(&t.rig.proj), snap);
    // A state folder inside the project (or holding it) is refused outright.
    let ws = Arc::new(Workspace::open(&t.rig.proj, &Shield::default_patterns()).unwrap());
    let err = Mutations::open(ws.clone(), &t.rig.proj.join("sluice-data"), BackupLimits::default())
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Forbidden);
    assert_eq!(
        code(Mutations::open(ws, &t.rig.base, BackupLimits::default())),
        ErrorCode::Forbidden
    );
    assert_clean(&t.rig, &err.to_string());
    assert!(t.state.join("backups").is_dir());
}

#[test]
fn ap01_swapping_a_planned_folder_for_a_link_aborts_the_commit() {
    let t = setup();
    let outside = t.rig.base.join("victim");
    fs::create_dir_all(outside.join("inner")).unwrap();
    fs::write(outside.join("inner/canary"), CANARY).unwrap();
    fs::create_dir_all(t.rig.proj.join("tmp/inner")).unwrap();
    fs::write(t.rig.proj.join("tmp/inner/canary"), "mine").unwrap();
    let plan =
        t.m.plan_delete_path(&DeletePathArgs { path: "tmp".into(), recursive: true }).unwrap();
    assert!(plan.deletes);
    assert_eq!(plan.effects[0].files_in_dir, Some(2));
    fs::rename(t.rig.proj.join("tmp"), t.rig.base.join("tmp-moved")).unwrap();
    symlink(&outside, t.rig.proj.join("tmp")).unwrap();
    let err = t.m.commit(&plan).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    assert_clean(&t.rig, &err.to_string());
    assert_eq!(fs::read_to_string(outside.join("inner/canary")).unwrap(), CANARY);
    assert!(t.rig.proj.join("tmp").is_symlink());

    // A swap of a folder deeper down is caught too.
    fs::remove_file(t.rig.proj.join("tmp")).unwrap();
    fs::rename(t.rig.base.join("tmp-moved"), t.rig.proj.join("tmp")).unwrap();
    let plan =
        t.m.plan_delete_path(&DeletePathArgs { path: "tmp".into(), recursive: true }).unwrap();
    fs::rename(t.rig.proj.join("tmp/inner"), t.rig.base.join("inner-moved")).unwrap();
    symlink(outside.join("inner"), t.rig.proj.join("tmp/inner")).unwrap();
    assert_eq!(code(t.m.commit(&plan)), ErrorCode::Conflict);
    assert_eq!(fs::read_to_string(outside.join("inner/canary")).unwrap(), CANARY);

    // A planned write whose file changes before commit: Conflict, the change stays.
    let p = t.rig.proj.join("README.md");
    let plan =
        t.m.plan_write_file(&WriteFileArgs {
            path: "README.md".into(),
            content: "model".into(),
            expected_hash: Some(hash(&p)),
            create_parents: false,
        })
        .unwrap();
    fs::write(&p, "user edit").unwrap();
    assert_eq!(code(t.m.commit(&plan)), ErrorCode::Conflict);
    assert_eq!(fs::read_to_string(&p).unwrap(), "user edit");
    // A planned create whose target appears before commit: Conflict, nothing overwritten.
    let plan =
        t.m.plan_write_file(&WriteFileArgs {
            path: "fresh.txt".into(),
            content: "model".into(),
            ..Default::default()
        })
        .unwrap();
    fs::write(t.rig.proj.join("fresh.txt"), "user").unwrap();
    assert_eq!(code(t.m.commit(&plan)), ErrorCode::Conflict);
    assert_eq!(fs::read_to_string(t.rig.proj.join("fresh.txt")).unwrap(), "user");
    // Committing the same plan twice (a retried request) does not apply it twice.
    let plan =
        t.m.plan_write_file(&WriteFileArgs {
            path: "once.txt".into(),
            content: "1".into(),
            ..Default::default()
        })
        .unwrap();
    t.m.commit(&plan).unwrap();
    assert_eq!(code(t.m.commit(&plan)), ErrorCode::Conflict);
}

#[test]
fn edit_file_keeps_encoding_and_line_endings() {
    let t = setup();
    let m = &t.m;
    let edit = |path: &str, old: &str, new: &str, all: bool| {
        m.plan_edit_file(&EditFileArgs {
            path: path.into(),
            edits: vec![TextEdit { old_text: old.into(), new_text: new.into(), replace_all: all }],
            expected_hash: None,
        })
        .and_then(|p| m.commit(&p))
    };
    fs::write(t.rig.proj.join("crlf.txt"), "a\r\nb\r\nc\r\n").unwrap();
    edit("crlf.txt", "a\nb\n", "A\nB\nB2\n", false).unwrap();
    assert_eq!(fs::read(t.rig.proj.join("crlf.txt")).unwrap(), b"A\r\nB\r\nB2\r\nc\r\n");
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("héllo\r\nwörld\r\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    fs::write(t.rig.proj.join("u16.txt"), &utf16).unwrap();
    edit("u16.txt", "wörld", "welt", false).unwrap();
    let want: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("héllo\r\nwelt\r\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    assert_eq!(fs::read(t.rig.proj.join("u16.txt")).unwrap(), want);
    fs::write(t.rig.proj.join("bom.txt"), b"\xEF\xBB\xBFx = 1\n").unwrap();
    edit("bom.txt", "1", "2", false).unwrap();
    assert_eq!(fs::read(t.rig.proj.join("bom.txt")).unwrap(), b"\xEF\xBB\xBFx = 2\n");
    // Errors: not found (quoted, with invisible characters shown), ambiguous (count + lines).
    fs::write(t.rig.proj.join("dup.txt"), "x\ny\nx\n").unwrap();
    let err = edit("dup.txt", "zz\u{202E}", "q", false).unwrap_err();
    assert!(err.to_string().contains("zz⟨U+202E⟩"), "{err}");
    let err = edit("dup.txt", "x", "q", false).unwrap_err();
    assert!(err.to_string().contains("2 times") && err.to_string().contains("lines 1, 3"), "{err}");
    edit("dup.txt", "x", "q", true).unwrap();
    assert_eq!(fs::read_to_string(t.rig.proj.join("dup.txt")).unwrap(), "q\ny\nq\n");
    // All or nothing: the second edit fails, the first is not written.
    let plan = m.plan_edit_file(&EditFileArgs {
        path: "dup.txt".into(),
        edits: vec![
            TextEdit { old_text: "y".into(), new_text: "Y".into(), replace_all: false },
            TextEdit { old_text: "missing".into(), new_text: "M".into(), replace_all: false },
        ],
        expected_hash: None,
    });
    assert_eq!(code(plan), ErrorCode::InvalidArgument);
    assert_eq!(fs::read_to_string(t.rig.proj.join("dup.txt")).unwrap(), "q\ny\nq\n");
    // Binary files are refused.
    fs::write(t.rig.proj.join("bin"), b"a\0b").unwrap();
    assert_eq!(code(edit("bin", "a", "b", false)), ErrorCode::InvalidArgument);
}

const GIT_PATCH: &str = "diff --git a/README.md b/README.md
index 1111111..2222222 100644
--- a/README.md
+++ b/README.md
@@ -1,3 +1,3 @@
 hello world
-second line
+second LINE
 third needle line
diff --git a/src/lib.rs b/src/library.rs
similarity index 80%
rename from src/lib.rs
rename to src/library.rs
--- a/src/lib.rs
+++ b/src/library.rs
@@ -1 +1,2 @@
 pub fn needle() {}
+pub fn more() {}
diff --git a/keep.log b/keep.log
deleted file mode 100644
--- a/keep.log
+++ /dev/null
@@ -1 +0,0 @@
-needle kept
diff --git a/docs2/new.txt b/docs2/new.txt
new file mode 100644
--- /dev/null
+++ b/docs2/new.txt
@@ -0,0 +1,2 @@
+first
+no newline
\\ No newline at end of file
";

#[test]
fn apply_patch_git_form_updates_renames_deletes_and_adds() {
    let t = setup();
    let plan = t.m.plan_apply_patch(&ApplyPatchArgs { patch: GIT_PATCH.into() }).unwrap();
    assert!(plan.deletes);
    let summary = plan.summary();
    assert!(summary.contains("overwrite README.md"), "{summary}");
    assert!(summary.contains("move src/lib.rs → src/library.rs"), "{summary}");
    assert!(summary.contains("delete keep.log (12 B, restorable)"), "{summary}");
    assert!(summary.contains("create docs2/new.txt"), "{summary}");
    let out = t.m.commit(&plan).unwrap();
    let p = &t.rig.proj;
    assert_eq!(
        fs::read_to_string(p.join("README.md")).unwrap(),
        "hello world\nsecond LINE\nthird needle line\n"
    );
    assert_eq!(
        fs::read_to_string(p.join("src/library.rs")).unwrap(),
        "pub fn needle() {}\npub fn more() {}\n"
    );
    assert!(!p.join("src/lib.rs").exists() && !p.join("keep.log").exists());
    assert_eq!(fs::read_to_string(p.join("docs2/new.txt")).unwrap(), "first\nno newline");
    assert_eq!(out.files.len(), 5, "{:?}", out.files);
    // Undo brings everything back byte for byte.
    let before_restore = snapshot(p);
    let restore =
        t.m.plan_restore(&RestoreArgs { operation_id: out.operation_id.clone() }).unwrap();
    t.m.commit(&restore).unwrap();
    assert_eq!(fs::read_to_string(p.join("src/lib.rs")).unwrap(), "pub fn needle() {}\n");
    assert_eq!(fs::read_to_string(p.join("keep.log")).unwrap(), "needle kept\n");
    assert!(!p.join("docs2").exists() && !p.join("src/library.rs").exists());
    assert_ne!(snapshot(p), before_restore);
}

#[test]
fn apply_patch_envelope_form() {
    let t = setup();
    let text = "*** Begin Patch
*** Update File: src/main.rs
*** Move to: src/bin/app.rs
@@ fn main() {
-    println!(\"needle\");
+    println!(\"moved\");
*** Add File: notes/todo.md
+- one
+- two
*** Delete File: debug.log
*** End Patch";
    patch(&t.m, text).unwrap();
    let p = &t.rig.proj;
    assert_eq!(
        fs::read_to_string(p.join("src/bin/app.rs")).unwrap(),
        "fn main() {\n    println!(\"moved\");\n}\n"
    );
    assert!(!p.join("src/main.rs").exists() && !p.join("debug.log").exists());
    assert_eq!(fs::read_to_string(p.join("notes/todo.md")).unwrap(), "- one\n- two\n");
}

#[test]
fn apply_patch_validates_everything_before_the_first_byte() {
    let t = setup();
    let snap = snapshot(&t.rig.proj);
    // The third file does not match: the first two stay untouched.
    let text = "*** Begin Patch
*** Update File: README.md
@@
-hello world
+HELLO
*** Add File: added.txt
+x
*** Update File: src/lib.rs
@@
-pub fn not_there() {}
+pub fn x() {}
*** End Patch";
    let err = patch(&t.m, text).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert!(err.to_string().contains("patch file 3 (src/lib.rs)"), "{err}");
    assert_eq!(snapshot(&t.rig.proj), snap);
    // The same file twice, through an in-project link (`docs -> src`) or in another case.
    for (a, b) in [("src/lib.rs", "docs/lib.rs"), ("README.md", "readme.MD")] {
        let text = format!(
            "*** Begin Patch\n*** Update File: {a}\n@@\n+x\n*** Update File: {b}\n@@\n+y\n*** End Patch"
        );
        let err = patch(&t.m, &text).unwrap_err();
        assert!(err.to_string().contains("twice"), "{err}");
    }
    // A failure injected during the commit rolls back the files already changed.
    let text = "*** Begin Patch\n*** Update File: README.md\n@@\n-hello world\n+HELLO\n*** Add File: a/new.txt\n+x\n*** Delete File: keep.log\n*** Update File: src/lib.rs\n@@\n-pub fn needle() {}\n+pub fn y() {}\n*** End Patch";
    for fail_at in 1..5 {
        // Re-planned each time: a rolled-back file has its old bytes and mode, but a new
        // inode, and plans are bound to identities.
        let plan = t.m.plan_apply_patch(&ApplyPatchArgs { patch: text.into() }).unwrap();
        let err = t.m.commit_failing_at(&plan, fail_at).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Internal);
        assert_eq!(snapshot(&t.rig.proj), snap, "fail at step {fail_at}");
    }
    let plan = t.m.plan_apply_patch(&ApplyPatchArgs { patch: text.into() }).unwrap();
    t.m.commit(&plan).unwrap();
    assert_ne!(snapshot(&t.rig.proj), snap);
}

#[test]
fn pe03_a_crash_mid_commit_is_rolled_back_by_recover() {
    let text = "*** Begin Patch\n*** Update File: README.md\n@@\n-hello world\n+HELLO\n*** Add File: deep/er/new.txt\n+x\n*** Delete File: keep.log\n*** Update File: src/main.rs\n*** Move to: src/app.rs\n@@\n-fn main() {\n+fn app() {\n*** End Patch";
    for crash_after in 0..7 {
        let t = setup();
        fs::write(t.rig.proj.join("sub/big.txt"), "b".repeat(1000)).unwrap();
        let snap = snapshot(&t.rig.proj);
        let plan = t.m.plan_apply_patch(&ApplyPatchArgs { patch: text.into() }).unwrap();
        let _ = t.m.commit_with_crash_after(&plan, crash_after);
        // A start opens the project for this (an engine skips projects without a journal).
        assert!(Mutations::needs_recovery(&t.state), "crash after {crash_after}");
        // A restarted process: a new instance over the same state folder.
        let ws = Arc::new(Workspace::open(&t.rig.proj, &Shield::default_patterns()).unwrap());
        let fresh = Mutations::open(ws, &t.state, BackupLimits::default()).unwrap();
        let report = fresh.recover().unwrap();
        assert_eq!(report.rolled_back.len(), 1, "crash after {crash_after}");
        assert!(report.conflicts.is_empty(), "{report:?}");
        assert_eq!(snapshot(&t.rig.proj), snap, "crash after {crash_after}");
        // Recovery is not repeated, and nothing was replayed.
        assert!(fresh.recover().unwrap().rolled_back.is_empty());
        assert!(fresh.list_backups(&ListBackupsArgs::default()).unwrap().operations.is_empty());
    }
}

/// A start skips opening a project whose change manager has no journal: none after changes
/// that committed, one after a crash (above), and an unreadable journal folder counts as one,
/// so the open that follows says what is wrong.
#[test]
fn only_a_journal_left_behind_needs_recovery() {
    let t = setup();
    assert!(!Mutations::needs_recovery(&t.state), "a fresh state folder");
    assert!(!Mutations::needs_recovery(&t.state.join("never-made")), "no state folder yet");
    let plan =
        t.m.plan_apply_patch(&ApplyPatchArgs {
            patch: "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch".into(),
        })
        .unwrap();
    t.m.commit(&plan).unwrap();
    assert!(!Mutations::needs_recovery(&t.state), "a committed change leaves no journal");
    fs::remove_dir_all(t.state.join("journal")).unwrap();
    fs::write(t.state.join("journal"), "not a folder").unwrap();
    assert!(Mutations::needs_recovery(&t.state), "an unreadable journal folder");
}

/// A crash while the first journal write was still a temp file (before its rename) left a
/// complete `prepared` record under another name. The commit never touched the project; the
/// same change committed later must survive every restart, though its result is exactly what
/// that record's steps would produce (found by the kill -9 fault test, PC-01).
#[test]
fn pc01_a_journal_the_crash_left_unrenamed_is_never_rolled_back() {
    let text = "*** Begin Patch\n*** Update File: README.md\n@@\n-hello world\n+HELLO\n*** Add File: added.txt\n+new\n*** End Patch";
    let t = setup();
    let plan = t.m.plan_apply_patch(&ApplyPatchArgs { patch: text.into() }).unwrap();
    let _ = t.m.commit_with_crash_after(&plan, 0);
    let journals = t.state.join("journal");
    let journal = fs::read_dir(&journals).unwrap().next().unwrap().unwrap().path();
    let name = journal.file_name().unwrap().to_str().unwrap().replace(".json", ".tmp-k1l2m3");
    fs::rename(&journal, journals.join(name)).unwrap();
    // The same change, planned and committed by the next process.
    let reopen = || {
        let ws = Arc::new(Workspace::open(&t.rig.proj, &Shield::default_patterns()).unwrap());
        Mutations::open(ws, &t.state, BackupLimits::default()).unwrap()
    };
    let next = reopen();
    let plan = next.plan_apply_patch(&ApplyPatchArgs { patch: text.into() }).unwrap();
    next.commit(&plan).unwrap();
    let after = snapshot(&t.rig.proj);
    for _ in 0..2 {
        let report = reopen().recover().unwrap();
        assert!(report.rolled_back.is_empty() && report.conflicts.is_empty(), "{report:?}");
        assert_eq!(snapshot(&t.rig.proj), after);
    }
    assert_eq!(fs::read_dir(&journals).unwrap().count(), 0, "the temp journal is removed");
}

#[test]
fn recursive_delete_unlinks_links_and_restore_brings_the_tree_back() {
    let t = setup();
    let p = &t.rig.proj;
    fs::create_dir_all(p.join("build/a/b")).unwrap();
    fs::write(p.join("build/a/b/f.txt"), "f").unwrap();
    fs::write(p.join("build/top.txt"), "top").unwrap();
    fs::set_permissions(p.join("build/top.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    symlink(t.rig.base.join("proj_evil"), p.join("build/out")).unwrap();
    let snap = snapshot(p);
    let args = DeletePathArgs { path: "build".into(), recursive: false };
    let err = t.m.plan_delete_path(&args).unwrap_err();
    assert!(err.to_string().contains("recursive"), "{err}");
    let plan = t.m.plan_delete_path(&DeletePathArgs { recursive: true, ..args }).unwrap();
    assert!(
        plan.summary().starts_with("delete folder build/ (5 entries, 4 B, restorable)"),
        "{}",
        plan.summary()
    );
    let out = t.m.commit(&plan).unwrap();
    assert!(!p.join("build").exists());
    assert_eq!(
        fs::read_to_string(t.rig.base.join("proj_evil/x")).unwrap(),
        format!("needle {CANARY}\n")
    );
    let restore = t.m.plan_restore(&RestoreArgs { operation_id: out.operation_id }).unwrap();
    t.m.commit(&restore).unwrap();
    assert_eq!(snapshot(p), snap);
}

#[test]
fn recursive_delete_is_bounded() {
    let t = setup();
    let dir = t.rig.proj.join("many");
    fs::create_dir(&dir).unwrap();
    for i in 0..=MAX_TREE_ENTRIES {
        fs::write(dir.join(i.to_string()), "").unwrap();
    }
    let err =
        t.m.plan_delete_path(&DeletePathArgs { path: "many".into(), recursive: true }).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LimitExceeded, "{err}");
    let big = "x".repeat(MAX_WRITE_BYTES as usize + 1);
    assert_eq!(code(write(&t.m, "big.txt", &big, None)), ErrorCode::TooLarge);
    let many: String = (0..=MAX_PATCH_FILES).map(|i| format!("*** Add File: f{i}\n+x\n")).collect();
    let text = format!("*** Begin Patch\n{many}*** End Patch");
    assert_eq!(
        code(t.m.plan_apply_patch(&ApplyPatchArgs { patch: text })),
        ErrorCode::LimitExceeded
    );
}

#[test]
fn restore_refuses_when_the_file_changed_since() {
    let t = setup();
    let p = t.rig.proj.join("README.md");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
    let original = fs::read(&p).unwrap();
    let out = write(&t.m, "README.md", "v2", Some(hash(&p))).unwrap();
    let op = out.operation_id.clone();
    fs::write(&p, "user").unwrap();
    let err = t.m.plan_restore(&RestoreArgs { operation_id: op.clone() }).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    fs::write(&p, "v2").unwrap();
    t.m.commit(&t.m.plan_restore(&RestoreArgs { operation_id: op }).unwrap()).unwrap();
    assert_eq!(fs::read(&p).unwrap(), original);
    assert_eq!(fs::metadata(&p).unwrap().mode() & 0o777, 0o640);
    for bad in ["op_../../x", "nope", "op_"] {
        assert_eq!(
            code(t.m.plan_restore(&RestoreArgs { operation_id: bad.into() })),
            ErrorCode::InvalidArgument
        );
    }
    let missing = t.m.plan_restore(&RestoreArgs { operation_id: "op_zzzzzzzz".into() });
    assert_eq!(code(missing), ErrorCode::NotFound);
    // Moves and creations are undone too.
    let mv =
        t.m.plan_move_path(&MovePathArgs {
            from: "src".into(),
            to: "source".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(mv.deletes);
    let out = t.m.commit(&mv).unwrap();
    assert!(t.rig.proj.join("source/main.rs").exists());
    t.m.commit(&t.m.plan_restore(&RestoreArgs { operation_id: out.operation_id }).unwrap())
        .unwrap();
    assert!(t.rig.proj.join("src/main.rs").exists() && !t.rig.proj.join("source").exists());
}

#[test]
fn move_path_overwrite_needs_the_hash() {
    let t = setup();
    let mv = |overwrite, expected_hash| {
        t.m.plan_move_path(&MovePathArgs {
            from: "keep.log".into(),
            to: "debug.log".into(),
            overwrite,
            expected_hash,
        })
    };
    assert_eq!(code(mv(false, None)), ErrorCode::Conflict);
    assert_eq!(code(mv(true, None)), ErrorCode::Conflict);
    let plan = mv(true, Some(hash(&t.rig.proj.join("debug.log")))).unwrap();
    assert!(plan.summary().contains("overwrite debug.log"), "{}", plan.summary());
    let out = t.m.commit(&plan).unwrap();
    assert_eq!(out.backups.len(), 2);
    assert_eq!(fs::read_to_string(t.rig.proj.join("debug.log")).unwrap(), "needle kept\n");
    assert_eq!(
        code(t.m.plan_move_path(&MovePathArgs {
            from: "src".into(),
            to: "src/inner".into(),
            ..Default::default()
        })),
        ErrorCode::InvalidArgument
    );
    let mk =
        t.m.plan_create_directory(&CreateDirectoryArgs { path: "a/b/c".into(), parents: true })
            .unwrap();
    assert!(!mk.deletes);
    t.m.commit(&mk).unwrap();
    assert!(t.rig.proj.join("a/b/c").is_dir());
    assert_eq!(
        code(
            t.m.plan_create_directory(&CreateDirectoryArgs { path: "a/b/c".into(), parents: true })
        ),
        ErrorCode::Conflict
    );
}

#[test]
fn backups_are_listed_paged_filtered_and_bounded() {
    let t = setup_with(BackupLimits { max_operations: 3, max_bytes: 1 << 20 });
    let mut ops = Vec::new();
    for i in 0..5 {
        ops.push(write(&t.m, &format!("f{i}.txt"), "x", None).unwrap().operation_id);
    }
    let all = t.m.list_backups(&ListBackupsArgs::default()).unwrap();
    let ids: Vec<_> = all.operations.iter().map(|o| o.operation_id.clone()).collect();
    assert_eq!(ids, [ops[4].clone(), ops[3].clone(), ops[2].clone()]);
    let page = t.m.list_backups(&ListBackupsArgs { limit: Some(2), ..Default::default() }).unwrap();
    assert_eq!(page.operations.len(), 2);
    let next =
        t.m.list_backups(&ListBackupsArgs {
            cursor: page.next_cursor,
            limit: Some(2),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(next.operations[0].operation_id, ops[2]);
    assert!(next.next_cursor.is_none());
    let filtered =
        t.m.list_backups(&ListBackupsArgs { path: Some("f3.txt".into()), ..Default::default() })
            .unwrap();
    assert_eq!(filtered.operations.len(), 1);
    assert_eq!(
        code(t.m.plan_restore(&RestoreArgs { operation_id: ops[0].clone() })),
        ErrorCode::NotFound
    );
    // The backups live in the state folder, never in the project.
    assert!(snapshot(&t.rig.proj).keys().all(|k| !k.contains("sluice")));
}

#[test]
fn summary_shows_invisible_characters_and_the_fingerprint_binds_content() {
    let t = setup();
    let name = "evil\u{202E}txt.exe\u{200B}";
    let plan =
        t.m.plan_write_file(&WriteFileArgs {
            path: name.into(),
            content: "x".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(plan.summary(), "create evil⟨U+202E⟩txt.exe⟨U+200B⟩ (1 B)");
    assert!(!plan.deletes && plan.writes);
    let other =
        t.m.plan_write_file(&WriteFileArgs {
            path: name.into(),
            content: "y".into(),
            ..Default::default()
        })
        .unwrap();
    assert_ne!(plan.fingerprint, other.fingerprint);
    let same =
        t.m.plan_write_file(&WriteFileArgs {
            path: name.into(),
            content: "x".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(plan.fingerprint, same.fingerprint);
    // Plans are bound to the project that made them.
    let t2 = setup();
    assert_eq!(code(t2.m.commit(&plan)), ErrorCode::InvalidArgument);
}

/// A small deterministic PRNG so the fuzz is reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn malformed_patches_never_panic() {
    let t = setup();
    let seeds = [
        GIT_PATCH,
        "*** Begin Patch\n*** Update File: README.md\n*** Move to: r2.md\n@@ hello world\n-second line\n+x\n*** End of File\n*** Delete File: keep.log\n*** End Patch",
        "--- a/README.md\t2024-01-01\n+++ b/README.md\n@@ -2 +2 @@\n-second line\n+2nd\n",
        "diff --git \"a/q\\303\\251\" \"b/q\\303\\251\"\nnew file mode 100755\n--- /dev/null\n+++ \"b/q\\303\\251\"\n@@ -0,0 +1 @@\n+x\n",
    ];
    let tokens = [
        "@@",
        "@@ -",
        " +",
        ",",
        "\n",
        "-",
        "+",
        " ",
        "\\",
        "*** ",
        "diff --git ",
        "/dev/null",
        "\"",
        "\\377",
        "999999999999",
        "\r\n",
        "é",
        "\u{202E}",
        "*** End Patch",
    ];
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    for round in 0..600 {
        let mut text: Vec<char> = seeds[round % seeds.len()].chars().collect();
        for _ in 0..=rng.below(6) {
            let at = rng.below(text.len() + 1);
            match rng.below(4) {
                0 => {
                    let end = (at + rng.below(20)).min(text.len());
                    text.drain(at..end);
                }
                1 => text.splice(at..at, tokens[rng.below(tokens.len())].chars()).for_each(drop),
                2 => {
                    let len = text.len();
                    if len > 0 {
                        text.swap(at.min(len - 1), rng.below(len));
                    }
                }
                _ => text.truncate(at),
            }
        }
        let text: String = text.into_iter().collect();
        if let Ok(plan) = t.m.plan_apply_patch(&ApplyPatchArgs { patch: text }) {
            let _ = plan.summary();
        }
    }
}

// Linux: it reaches the real folder through `/proc/self/fd`.
#[cfg(target_os = "linux")]
#[test]
fn sl03_writes_and_deletes_under_a_folder_link_swap_never_touch_the_outside() {
    // `swap` is exchanged atomically (renameat2 RENAME_EXCHANGE) with `swap_link`, a link to an
    // outside folder holding the same names, while writes, replacements and recursive deletes
    // go to `swap/...`. Whatever each call lands on, the outside folder keeps every byte.
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use rustix::fs::{CWD, RenameFlags, renameat_with};

    let t = setup();
    let outside = t.rig.base.join("victim");
    for dir in [outside.clone(), t.rig.proj.join("swap")] {
        fs::create_dir_all(dir.join("tree/deep")).unwrap();
        fs::write(dir.join("f.txt"), "same name\n").unwrap();
        fs::write(dir.join("tree/deep/x.txt"), "same name\n").unwrap();
    }
    fs::write(outside.join("canary.txt"), CANARY).unwrap();
    let before = snapshot(&outside);
    symlink(&outside, t.rig.proj.join("swap_link")).unwrap();
    // The real folder by its inode, whatever name the swap gives it: the test puts back what a
    // delete removed through this, so it can never write to the outside itself (or mask an
    // escape by restoring what one deleted there).
    let real_dir = fs::File::open(t.rig.proj.join("swap")).unwrap();
    let real = PathBuf::from(format!("/proc/self/fd/{}", real_dir.as_raw_fd()));

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (a, b) = (t.rig.proj.join("swap"), t.rig.proj.join("swap_link"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
                // Paced so calls land on both sides and swaps still fall inside them.
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        })
    };
    let same = format!("blake3:{}", blake3::hash(b"same name\n").to_hex());
    let mut landed = 0;
    for i in 0..10_000 {
        let outcome = match i % 4 {
            0 => write(&t.m, &format!("swap/new-{i}.txt"), "model\n", None),
            1 => write(&t.m, "swap/f.txt", "same name\n", Some(same.clone())),
            2 => write(&t.m, "swap/tree/deep/x.txt", "same name\n", Some(same.clone())),
            _ => {
                t.m.plan_delete_path(&DeletePathArgs { path: "swap/tree".into(), recursive: true })
                    .and_then(|plan| t.m.commit(&plan))
            }
        };
        match outcome {
            Ok(out) => {
                landed += 1;
                assert_clean(&t.rig, &format!("{out:?}"));
            }
            Err(err) => assert_clean(&t.rig, &err.to_string()),
        }
        // Put back what a delete removed from the real folder.
        if i % 4 == 3 && !real.join("tree").exists() {
            fs::create_dir_all(real.join("tree/deep")).unwrap();
            fs::write(real.join("tree/deep/x.txt"), "same name\n").unwrap();
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swapper never ran");
    assert!(landed > 0, "no call ever went through: the race was never run both ways");
    assert_eq!(snapshot(&outside), before, "a write or delete reached the outside folder");
}
