//! Checkpoints over real folders: a tree changed every way a command can (rewritten, deleted,
//! chmod'ed, created, folders made and removed) comes back byte for byte with its modes; the
//! restore is undone by `restore`; a change between plan and commit refuses and changes
//! nothing; the shield's files are never stored nor touched; a manifest tampered with in the
//! state folder cannot lead a restore anywhere; bounds drop the oldest and collect blobs.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_core::{Coded, ErrorCode};
use sluice_guard::Shield;
use sluice_runner::*;

struct P {
    _tmp: tempfile::TempDir,
    proj: PathBuf,
    state: PathBuf,
    m: Mutations,
}

fn project(limits: CheckpointLimits) -> P {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    let state = tmp.path().join("data/projects/p1");
    let w = |rel: &str, content: &str, mode: u32| {
        let p = proj.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, content).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
    };
    w("README.md", "hello\n", 0o644);
    w("gen/a.txt", "generated a\n", 0o644);
    w("gen/b.txt", "generated b\n", 0o644);
    w("bin/tool.sh", "#!/bin/sh\necho hi\n", 0o755);
    w("src/lib.rs", "pub fn f() {}\n", 0o644);
    w(".env", "API_KEY=sk-live-canary-0123456789\n", 0o600);
    w(".gitignore", "build/\n", 0o644);
    w("build/out.o", "object\n", 0o644);
    w(".git/HEAD", "ref: refs/heads/main\n", 0o644);
    fs::create_dir_all(proj.join("empty")).unwrap();
    symlink("src/lib.rs", proj.join("lib-link")).unwrap();
    let ws = Arc::new(Workspace::open(&proj, &Shield::default_patterns()).unwrap());
    let m = Mutations::open(ws, &state, BackupLimits::default())
        .unwrap()
        .with_checkpoint_limits(limits);
    P { _tmp: tmp, proj, state, m }
}

/// Every entry below `dir` with its bytes and mode (links: their target).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
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

/// What a code generator does: rewrites, deletes, chmods, creates files and folders.
fn generator(proj: &Path) {
    fs::write(proj.join("README.md"), "rewritten by the generator\n").unwrap();
    fs::remove_file(proj.join("gen/a.txt")).unwrap();
    fs::remove_file(proj.join("gen/b.txt")).unwrap();
    fs::remove_dir(proj.join("gen")).unwrap();
    fs::set_permissions(proj.join("bin/tool.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(proj.join("src/lib.rs"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(proj.join("out/deep")).unwrap();
    fs::write(proj.join("out/deep/new.rs"), "new\n").unwrap();
    fs::write(proj.join("created.txt"), "new file\n").unwrap();
    fs::remove_dir(proj.join("empty")).unwrap();
    fs::write(proj.join("empty"), "now a file\n").unwrap();
    fs::remove_file(proj.join("lib-link")).unwrap();
    symlink("README.md", proj.join("lib-link")).unwrap();
    fs::write(proj.join("build/out.o"), "rebuilt\n").unwrap();
}

fn restore_checkpoint(m: &Mutations, id: &str) -> Result<MutationOutput, RunnerError> {
    let plan = m.plan_restore_checkpoint(&RestoreCheckpointArgs { checkpoint_id: id.into() })?;
    assert!(plan.deletes, "a checkpoint restore asks like a delete");
    m.commit(&plan)
}

/// Every byte Sluice stored for the project's checkpoints.
fn stored(state: &Path) -> Vec<u8> {
    fn walk(dir: &Path, out: &mut Vec<u8>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                let mut bytes = fs::read(&path).unwrap();
                if path.to_string_lossy().ends_with(".gz") {
                    let mut plain = Vec::new();
                    flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut plain).unwrap();
                    bytes = plain;
                }
                out.extend(bytes);
            }
        }
    }
    let mut out = Vec::new();
    walk(&state.join("checkpoints"), &mut out);
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn checkpoint_restores_a_generator_run_byte_for_byte_and_the_restore_is_undoable() {
    let p = project(CheckpointLimits::default());
    let before = tree(&p.proj);
    let info = p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    assert_eq!(info.files, 6, "README, gen/a, gen/b, bin/tool.sh, src/lib.rs, .gitignore");
    assert!(!info.automatic);
    let env = fs::read(p.proj.join(".env")).unwrap();
    assert!(!contains(&stored(&p.state), "sk-live-canary"), "the shield's file is never stored");
    assert!(!contains(&stored(&p.state), "ref: refs/heads"), ".git is never stored");
    assert!(!contains(&stored(&p.state), "object"), "ignored files are not stored");

    generator(&p.proj);
    let changed = tree(&p.proj);
    let out = restore_checkpoint(&p.m, &info.checkpoint_id).unwrap();
    let mut after = tree(&p.proj);
    // The ignored file is none of the checkpoint's business: it keeps what the command wrote.
    assert_eq!(after.remove("build/out.o"), Some(b"rebuilt\n mode=644".to_vec()));
    let mut expected = before.clone();
    expected.remove("build/out.o");
    assert_eq!(after, expected);
    assert_eq!(fs::read(p.proj.join(".env")).unwrap(), env);

    // The restore is an operation like any other: `restore` puts the generator's tree back.
    let undo = p.m.plan_restore(&RestoreArgs { operation_id: out.operation_id.clone() }).unwrap();
    p.m.commit(&undo).unwrap();
    assert_eq!(tree(&p.proj), changed);
    let list = p.m.list_backups(&ListBackupsArgs::default()).unwrap();
    assert!(list.operations.iter().any(|o| o.operation_id == out.operation_id));
}

#[test]
fn an_unchanged_tree_adds_no_content_and_the_stat_cache_sees_an_edit_that_keeps_mtime() {
    let p = project(CheckpointLimits::default());
    let first = p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    assert!(first.added_bytes > 0);
    let second = p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    assert_eq!(second.added_bytes, 0);
    // Same size, mtime put back: ctime still gives the edit away.
    let path = p.proj.join("src/lib.rs");
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    fs::write(&path, "pub fn g() {}\n").unwrap();
    fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    let third = p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    assert_eq!(third.added_bytes, "pub fn g() {}\n".len() as u64);
    restore_checkpoint(&p.m, &first.checkpoint_id).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "pub fn f() {}\n");
}

#[test]
fn a_change_between_plan_and_commit_refuses_and_changes_nothing() {
    let p = project(CheckpointLimits::default());
    let info = p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    generator(&p.proj);
    let plan =
        p.m.plan_restore_checkpoint(&RestoreCheckpointArgs { checkpoint_id: info.checkpoint_id })
            .unwrap();
    fs::write(p.proj.join("created.txt"), "the user typed here meanwhile\n").unwrap();
    let now = tree(&p.proj);
    let err = p.m.commit(&plan).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    assert_eq!(tree(&p.proj), now, "nothing changed");
}

#[test]
fn pc02_a_checkpoint_manifest_tampered_in_the_data_folder_restores_nothing() {
    let p = project(CheckpointLimits::default());
    let info = p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    let id = info.checkpoint_id.clone();
    let manifest = p.state.join(format!("checkpoints/manifests/{id}.json.gz"));
    let read = || {
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(&fs::read(&manifest).unwrap()[..])
            .read_to_end(&mut json)
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&json).unwrap()
    };
    let write = |value: &serde_json::Value| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&serde_json::to_vec(value).unwrap()).unwrap();
        fs::write(&manifest, gz.finish().unwrap()).unwrap();
    };
    let original = read();
    let readme = original["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["p"] == "README.md")
        .unwrap()
        .clone();
    generator(&p.proj);
    let now = tree(&p.proj);
    let outside = p.proj.parent().unwrap().join("escaped.txt");
    for (path, code) in [
        (".env", ErrorCode::PathShielded),
        ("../escaped.txt", ErrorCode::Conflict),
        ("/tmp/escaped.txt", ErrorCode::Conflict),
        (".git/hooks/pre-commit", ErrorCode::Conflict),
        ("nowhere/x.txt", ErrorCode::Conflict),
    ] {
        let mut tampered = original.clone();
        let mut entry = readme.clone();
        entry["p"] = path.into();
        tampered["entries"].as_array_mut().unwrap().push(entry);
        write(&tampered);
        let err =
            p.m.plan_restore_checkpoint(&RestoreCheckpointArgs { checkpoint_id: id.clone() })
                .unwrap_err();
        assert_eq!(err.code(), code, "{path}: {err}");
        assert!(!err.to_string().contains(p.proj.to_str().unwrap()), "no physical path");
        assert_eq!(tree(&p.proj), now, "{path}: nothing changed");
        assert!(!outside.exists());
    }
    // A blob swapped for other bytes is refused, not written.
    write(&original);
    let hash = readme["h"].as_str().unwrap();
    fs::write(p.state.join(format!("checkpoints/blobs/{}/{hash}", &hash[..2])), "evil\n").unwrap();
    let err =
        p.m.plan_restore_checkpoint(&RestoreCheckpointArgs { checkpoint_id: id }).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    assert!(err.to_string().contains("damaged"), "{err}");
    assert_eq!(tree(&p.proj), now);
}

#[test]
fn restoring_an_autorun_path_names_it_for_the_approval() {
    let p = project(CheckpointLimits::default());
    fs::create_dir_all(p.proj.join(".vscode")).unwrap();
    fs::write(p.proj.join(".vscode/tasks.json"), "{}\n").unwrap();
    let info = p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    fs::write(p.proj.join(".vscode/tasks.json"), "{\"tasks\": []}\n").unwrap();
    let plan =
        p.m.plan_restore_checkpoint(&RestoreCheckpointArgs { checkpoint_id: info.checkpoint_id })
            .unwrap();
    assert!(plan.autorun.iter().any(|h| h.path == ".vscode/tasks.json"), "{:?}", plan.autorun);
}

#[test]
fn bounds_drop_the_oldest_collect_blobs_and_refuse_a_tree_too_large() {
    let limits = CheckpointLimits { max_checkpoints: 2, ..CheckpointLimits::default() };
    let p = project(limits);
    let first =
        p.m.create_checkpoint(
            &CreateCheckpointArgs { name: Some("one".into()), include_ignored: false },
            None,
        )
        .unwrap();
    fs::write(p.proj.join("README.md"), "only in the first is gone\n").unwrap();
    p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    fs::write(p.proj.join("README.md"), "third\n").unwrap();
    p.m.create_checkpoint(&CreateCheckpointArgs::default(), Some("cargo fmt".into())).unwrap();
    let list = p.m.list_checkpoints().unwrap();
    assert_eq!(list.checkpoints.len(), 2);
    assert!(list.checkpoints.iter().all(|c| c.checkpoint_id != first.checkpoint_id));
    assert!(list.checkpoints[0].automatic);
    assert_eq!(list.checkpoints[0].before_command.as_deref(), Some("cargo fmt"));
    assert!(list.stored_bytes > 0);
    let before_drops = list.stored_bytes;
    // Dropped for the count, its contents are collected within a few more drops.
    for n in 0..8 {
        fs::write(p.proj.join("README.md"), format!("round {n}\n")).unwrap();
        p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    }
    assert!(!contains(&stored(&p.state), "hello\n"), "the first README's blob was collected");
    let after = p.m.list_checkpoints().unwrap();
    assert_eq!(after.checkpoints.len(), 2);
    assert!(after.stored_bytes < before_drops + 4096, "{} vs {before_drops}", after.stored_bytes);
    // Over the byte bound, the oldest go at once (never the newest).
    let tight = project(CheckpointLimits { max_bytes: 1, ..CheckpointLimits::default() });
    tight.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    fs::write(tight.proj.join("README.md"), "changed\n").unwrap();
    let newest = tight.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    let kept = tight.m.list_checkpoints().unwrap().checkpoints;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].checkpoint_id, newest.checkpoint_id);
    let err =
        p.m.plan_restore_checkpoint(&RestoreCheckpointArgs { checkpoint_id: first.checkpoint_id })
            .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);

    let small = project(CheckpointLimits { max_entries: 3, ..CheckpointLimits::default() });
    let err = small.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LimitExceeded, "{err}");
    assert!(small.m.list_checkpoints().unwrap().checkpoints.is_empty());
    assert!(!contains(&stored(&small.state), "generated"), "nothing kept of a refused one");
}

#[test]
fn ignored_files_are_kept_only_when_asked() {
    let p = project(CheckpointLimits::default());
    let args = CreateCheckpointArgs { name: None, include_ignored: true };
    let info = p.m.create_checkpoint(&args, None).unwrap();
    assert!(info.include_ignored);
    fs::write(p.proj.join("build/out.o"), "rebuilt\n").unwrap();
    fs::write(p.proj.join("build/more.o"), "more\n").unwrap();
    restore_checkpoint(&p.m, &info.checkpoint_id).unwrap();
    assert_eq!(fs::read_to_string(p.proj.join("build/out.o")).unwrap(), "object\n");
    assert!(!p.proj.join("build/more.o").exists());
}

#[test]
fn a_command_that_edits_gitignore_neither_hides_a_file_from_the_restore_nor_exposes_one() {
    let p = project(CheckpointLimits::default());
    let info = p.m.create_checkpoint(&CreateCheckpointArgs::default(), None).unwrap();
    // The command ignores README.md (and changes it), and un-ignores build/.
    fs::write(p.proj.join(".gitignore"), "README.md\n").unwrap();
    fs::write(p.proj.join("README.md"), "changed while ignored\n").unwrap();
    restore_checkpoint(&p.m, &info.checkpoint_id).unwrap();
    assert_eq!(fs::read_to_string(p.proj.join("README.md")).unwrap(), "hello\n");
    assert_eq!(fs::read_to_string(p.proj.join(".gitignore")).unwrap(), "build/\n");
    assert_eq!(
        fs::read_to_string(p.proj.join("build/out.o")).unwrap(),
        "object\n",
        "what the checkpoint ignored stays, though today's rules showed it"
    );
}
