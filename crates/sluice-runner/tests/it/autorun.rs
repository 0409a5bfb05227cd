//! The auto-run list on every change tool: each plan names the auto-run paths it touches
//! (requested and resolved, both ends of a move, the contents of moved and deleted folders, case
//! variants, paths through in-project links, restores), a refused one makes no plan at all, and
//! the fingerprint covers what the approval will say.

use std::fs;
use std::os::unix::fs::symlink;
use std::sync::Arc;

use sluice_core::{AutoRunAction, AutoRunRule, Coded, ErrorCode};
use sluice_guard::{AutoRun, Shield};
use sluice_runner::*;

use crate::rig::{Rig, rig};

struct T {
    rig: Rig,
    m: Mutations,
}

fn setup_list(rules: &[AutoRunRule]) -> T {
    let rig = rig();
    let ws = Workspace::open_with(&rig.proj, &Shield::default_patterns(), rules).unwrap();
    let m =
        Mutations::open(Arc::new(ws), &rig.base.join("data/p"), BackupLimits::default()).unwrap();
    T { rig, m }
}

fn setup() -> T {
    setup_list(&AutoRun::default_rules())
}

impl T {
    fn put(&self, rel: &str, content: &str) {
        let p = self.rig.proj.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
}

/// The paths and programs a plan says run on their own.
fn hits(plan: &Plan) -> Vec<(String, String)> {
    plan.autorun.iter().map(|h| (h.path.clone(), h.program.clone())).collect()
}

fn paths(plan: &Plan) -> Vec<&str> {
    plan.autorun.iter().map(|h| h.path.as_str()).collect()
}

fn write_args(path: &str) -> WriteFileArgs {
    WriteFileArgs {
        path: path.into(),
        content: "{}".into(),
        create_parents: true,
        ..Default::default()
    }
}

fn mv(from: &str, to: &str) -> MovePathArgs {
    MovePathArgs { from: from.into(), to: to.into(), ..Default::default() }
}

fn hash_of(t: &T, rel: &str) -> String {
    format!("blake3:{}", blake3::hash(&fs::read(t.rig.proj.join(rel)).unwrap()).to_hex())
}

#[test]
fn write_edit_and_create_directory_name_the_autorun_path() {
    let t = setup();
    let plan = t.m.plan_write_file(&write_args(".vscode/tasks.json")).unwrap();
    assert_eq!(hits(&plan), [(".vscode/tasks.json".to_owned(), "VS Code".to_owned())]);
    assert!(plan.autorun[0].consequence.contains("folderOpen"), "{:?}", plan.autorun);
    // The plan commits like any other: asking is the policy layer's business.
    t.m.commit(&plan).unwrap();

    t.put(".mcp.json", "{\"mcpServers\": {}}\n");
    let edit = EditFileArgs {
        path: ".mcp.json".into(),
        edits: vec![TextEdit {
            old_text: "{}".into(),
            new_text: "{\"x\":{}}".into(),
            replace_all: false,
        }],
        expected_hash: None,
    };
    assert_eq!(paths(&t.m.plan_edit_file(&edit).unwrap()), [".mcp.json"]);

    // An empty folder runs nothing; a folder the list names is covered itself.
    let dir = |p: &str| CreateDirectoryArgs { path: p.into(), parents: true };
    assert!(t.m.plan_create_directory(&dir(".cursor")).unwrap().autorun.is_empty());
    assert_eq!(paths(&t.m.plan_create_directory(&dir(".husky")).unwrap()), [".husky"]);
    // create_directory, then a write into it: the write names the file.
    t.m.commit(&t.m.plan_create_directory(&dir(".cursor")).unwrap()).unwrap();
    assert_eq!(
        paths(&t.m.plan_write_file(&write_args(".cursor/mcp.json")).unwrap()),
        [".cursor/mcp.json"]
    );
}

#[test]
fn ordinary_changes_name_nothing() {
    let t = setup();
    let h = hash_of(&t, "README.md");
    let args = WriteFileArgs {
        path: "README.md".into(),
        content: "x".into(),
        expected_hash: Some(h),
        create_parents: false,
    };
    assert!(t.m.plan_write_file(&args).unwrap().autorun.is_empty());
    assert!(t.m.plan_write_file(&write_args("docs/mcp.json.md")).unwrap().autorun.is_empty());
    assert!(
        t.m.plan_write_file(&write_args(".vscode/extensions.json")).unwrap().autorun.is_empty()
    );
    let patch = "*** Begin Patch\n*** Add File: src/new.rs\n+fn x() {}\n*** End Patch\n";
    let plan = t.m.plan_apply_patch(&ApplyPatchArgs { patch: patch.into() }).unwrap();
    assert!(plan.autorun.is_empty());
    assert!(t.m.plan_move_path(&mv("src/lib.rs", "src/lib2.rs")).unwrap().autorun.is_empty());
}

#[test]
fn apply_patch_names_added_updated_deleted_and_moved_files() {
    let t = setup();
    let add = "*** Begin Patch\n*** Add File: added.txt\n+ok\n\
               *** Add File: .github/workflows/ci.yml\n+on: push\n*** End Patch\n";
    let plan = t.m.plan_apply_patch(&ApplyPatchArgs { patch: add.into() }).unwrap();
    assert_eq!(hits(&plan), [(".github/workflows/ci.yml".to_owned(), "GitHub Actions".to_owned())]);

    t.put(".pre-commit-config.yaml", "repos: []\n");
    t.put("hook.sh", "echo hi\n");
    let update = "*** Begin Patch\n*** Update File: .pre-commit-config.yaml\n@@\n-repos: []\n+repos: [x]\n*** End Patch\n";
    assert_eq!(
        paths(&t.m.plan_apply_patch(&ApplyPatchArgs { patch: update.into() }).unwrap()),
        [".pre-commit-config.yaml"]
    );
    let delete = "*** Begin Patch\n*** Delete File: .pre-commit-config.yaml\n*** End Patch\n";
    assert_eq!(
        paths(&t.m.plan_apply_patch(&ApplyPatchArgs { patch: delete.into() }).unwrap()),
        [".pre-commit-config.yaml"]
    );
    let moved = "*** Begin Patch\n*** Update File: hook.sh\n*** Move to: .husky/pre-commit\n@@\n-echo hi\n+echo ho\n*** End Patch\n";
    assert_eq!(
        paths(&t.m.plan_apply_patch(&ApplyPatchArgs { patch: moved.into() }).unwrap()),
        [".husky/pre-commit"]
    );
    // A unified diff that creates the file is the same change.
    let diff = "diff --git a/.mcp.json b/.mcp.json\nnew file mode 100644\n--- /dev/null\n+++ b/.mcp.json\n@@ -0,0 +1 @@\n+{}\n";
    assert_eq!(
        paths(&t.m.plan_apply_patch(&ApplyPatchArgs { patch: diff.into() }).unwrap()),
        [".mcp.json"]
    );
}

#[test]
fn move_path_names_both_ends_and_everything_inside_a_folder() {
    let t = setup();
    t.put("draft.json", "{}");
    fs::create_dir_all(t.rig.proj.join(".vscode")).unwrap();
    assert_eq!(
        paths(&t.m.plan_move_path(&mv("draft.json", ".vscode/mcp.json")).unwrap()),
        [".vscode/mcp.json"]
    );
    t.put(".mcp.json", "{}");
    assert_eq!(paths(&t.m.plan_move_path(&mv(".mcp.json", "old.json")).unwrap()), [".mcp.json"]);
    // A folder whose contents land on auto-run paths: `stuff/workflows/ci.yml` becomes
    // `.github/workflows/ci.yml`.
    t.put("stuff/workflows/ci.yml", "on: push\n");
    t.put("stuff/readme.txt", "x");
    assert_eq!(
        paths(&t.m.plan_move_path(&mv("stuff", ".github")).unwrap()),
        [".github/workflows/ci.yml"]
    );
    // A folder that holds one, moved anywhere: both the old and the new place count.
    t.put("pkg/.vscode/tasks.json", "{}");
    t.put("pkg/src/a.rs", "");
    assert_eq!(
        paths(&t.m.plan_move_path(&mv("pkg", "pkg2")).unwrap()),
        ["pkg/.vscode/tasks.json", "pkg2/.vscode/tasks.json"]
    );
}

#[test]
fn delete_path_names_files_and_folders_that_hold_them() {
    let t = setup();
    t.put(".github/workflows/ci.yml", "on: push\n");
    t.put(".github/CODEOWNERS", "* @me\n");
    let del = |p: &str| DeletePathArgs { path: p.into(), recursive: true };
    assert_eq!(
        paths(&t.m.plan_delete_path(&del(".github/workflows/ci.yml")).unwrap()),
        [".github/workflows/ci.yml"]
    );
    assert_eq!(
        paths(&t.m.plan_delete_path(&del(".github")).unwrap()),
        [".github/workflows/ci.yml"]
    );
    assert!(t.m.plan_delete_path(&del(".github/CODEOWNERS")).unwrap().autorun.is_empty());
}

/// A case-insensitive disk serves `.VSCode/Tasks.json` as the editor's file; an in-project
/// link leads a harmless-looking path to one, or one to a harmless-looking folder.
#[test]
fn case_variants_and_links_do_not_get_around_it() {
    let t = setup();
    assert_eq!(
        paths(&t.m.plan_write_file(&write_args(".VSCode/Tasks.json")).unwrap()),
        [".VSCode/Tasks.json"]
    );
    assert_eq!(paths(&t.m.plan_write_file(&write_args(".Mcp.JSON")).unwrap()), [".Mcp.JSON"]);
    fs::create_dir_all(t.rig.proj.join(".vscode")).unwrap();
    symlink(".vscode", t.rig.proj.join("cfg")).unwrap();
    let plan = t.m.plan_write_file(&write_args("cfg/launch.json")).unwrap();
    assert_eq!(paths(&plan), [".vscode/launch.json"], "the resolved path counts");
    fs::create_dir_all(t.rig.proj.join("editor")).unwrap();
    symlink("editor", t.rig.proj.join(".zed")).unwrap();
    let plan = t.m.plan_write_file(&write_args(".zed/settings.json")).unwrap();
    assert_eq!(paths(&plan), [".zed/settings.json"], "the requested path counts");
}

#[test]
fn restore_names_what_it_puts_back() {
    let t = setup();
    t.put(".vscode/tasks.json", "{}");
    // Moved away (asked, since the source is an auto-run path), edited where it lies now (not
    // an auto-run path), then restored: the restore lands the edited file on the editor's path.
    let moved = t.m.commit(&t.m.plan_move_path(&mv(".vscode", "aside")).unwrap()).unwrap();
    let h = hash_of(&t, "aside/tasks.json");
    let args = WriteFileArgs {
        path: "aside/tasks.json".into(),
        content: "{\"evil\":1}".into(),
        expected_hash: Some(h),
        create_parents: false,
    };
    assert!(t.m.plan_write_file(&args).unwrap().autorun.is_empty());
    let restore = RestoreArgs { operation_id: moved.operation_id };
    assert_eq!(paths(&t.m.plan_restore(&restore).unwrap()), [".vscode/tasks.json"]);
}

#[test]
fn refused_paths_make_no_plan() {
    let t = setup();
    let forbidden = |r: Result<Plan, RunnerError>| {
        let err = r.unwrap_err();
        assert_eq!(err.code(), ErrorCode::Forbidden, "{err}");
        err.to_string()
    };
    let msg = forbidden(t.m.plan_write_file(&write_args(".claude/settings.json")));
    assert!(msg.contains(".claude/settings.json") && msg.contains("Claude Code"), "{msg}");
    forbidden(t.m.plan_write_file(&write_args(".CLAUDE/Settings.Local.json")));
    forbidden(t.m.plan_write_file(&write_args("sub/.codex/config.toml")));
    // One refused file in a patch refuses the whole patch.
    let patch = "*** Begin Patch\n*** Add File: ok.txt\n+ok\n\
                 *** Add File: .cursor/hooks.json\n+{}\n*** End Patch\n";
    forbidden(t.m.plan_apply_patch(&ApplyPatchArgs { patch: patch.into() }));
    // A folder moved so that its contents become an agent's settings, and a folder holding
    // them moved or deleted.
    t.put("stuff/settings.json", "{}");
    forbidden(t.m.plan_move_path(&mv("stuff", ".claude")));
    t.put("tools/.gemini/settings.json", "{}");
    forbidden(t.m.plan_move_path(&mv("tools", "tools2")));
    forbidden(t.m.plan_delete_path(&DeletePathArgs { path: "tools".into(), recursive: true }));
    assert!(!t.rig.proj.join("ok.txt").exists());
    assert!(!t.rig.proj.join(".claude").exists());
}

#[test]
fn the_fingerprint_covers_the_list() {
    let with = setup();
    // The same folder under a list without `.mcp.json`: same steps, other verdict.
    let ws = Workspace::open_with(&with.rig.proj, &Shield::default_patterns(), &[]).unwrap();
    let without =
        Mutations::open(Arc::new(ws), &with.rig.base.join("data/q"), BackupLimits::default())
            .unwrap();
    let plan = |m: &Mutations, path: &str| m.plan_write_file(&write_args(path)).unwrap();
    assert!(plan(&without, ".mcp.json").autorun.is_empty());
    assert_ne!(plan(&with.m, ".mcp.json").fingerprint, plan(&without, ".mcp.json").fingerprint);
    assert_eq!(plan(&with.m, ".mcp.json").fingerprint, plan(&with.m, ".mcp.json").fingerprint);
    assert_eq!(plan(&with.m, "a.txt").fingerprint, plan(&without, "a.txt").fingerprint);
    // A project's own entry works like a default one.
    let custom = setup_list(&[AutoRunRule {
        pattern: "/deploy/**".into(),
        action: AutoRunAction::Ask,
        program: "the deploy bot".into(),
        consequence: "the deploy bot runs these scripts every night".into(),
    }]);
    assert_eq!(paths(&plan(&custom.m, "deploy/run.sh")), ["deploy/run.sh"]);
    assert!(plan(&custom.m, ".mcp.json").autorun.is_empty());
}
