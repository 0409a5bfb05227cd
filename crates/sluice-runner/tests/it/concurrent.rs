//! Commits side by side in one project: unrelated files do not wait for each other, one file
//! never takes two changes planned against the same content (no lost update), pruning keeps its
//! bounds, and a commit a crash caught past its commit point is kept (PC-01).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::PathBuf;
use std::sync::mpsc::channel;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use sluice_core::{Coded, ErrorCode};
use sluice_guard::Shield;
use sluice_runner::*;

struct T {
    _dir: tempfile::TempDir,
    proj: PathBuf,
    state: PathBuf,
    m: Arc<Mutations>,
}

fn setup(limits: BackupLimits) -> T {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    let state = dir.path().join("data/projects/p1");
    fs::create_dir_all(proj.join("out")).unwrap();
    let m = open(&proj, &state, limits);
    T { _dir: dir, proj, state, m: Arc::new(m) }
}

fn open(proj: &std::path::Path, state: &std::path::Path, limits: BackupLimits) -> Mutations {
    let ws = Arc::new(Workspace::open(proj, &Shield::default_patterns()).unwrap());
    Mutations::open(ws, state, limits).unwrap()
}

fn plan(m: &Mutations, path: &str, content: &str, expected: Option<String>) -> Plan {
    let args = WriteFileArgs {
        path: path.into(),
        content: content.into(),
        expected_hash: expected,
        create_parents: true,
    };
    m.plan_write_file(&args).unwrap()
}

fn hash_of(bytes: &[u8]) -> Option<String> {
    Some(format!("blake3:{}", blake3::hash(bytes)))
}

fn hash_after(out: &MutationOutput) -> String {
    out.files[0].hash_after.clone().unwrap()
}

#[test]
fn a_commit_on_another_file_lands_while_one_is_held_and_the_same_file_waits_its_turn() {
    let t = setup(BackupLimits::default());
    fs::write(t.proj.join("out/a.txt"), "a0").unwrap();
    let first = plan(&t.m, "out/a.txt", "a1", hash_of(b"a0"));
    // Planned against the same content as `first`: it must not land after it.
    let stale = plan(&t.m, "out/a.txt", "a2", hash_of(b"a0"));
    let (held_tx, held_rx) = channel();
    let (go_tx, go_rx) = channel::<()>();
    let go_rx = std::sync::Mutex::new(go_rx);
    let holder = {
        let m = t.m.clone();
        std::thread::spawn(move || {
            let pause = || {
                held_tx.send(()).unwrap();
                go_rx.lock().unwrap().recv().unwrap();
            };
            m.commit_pausing(&first, &pause)
        })
    };
    held_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // `first` holds out/a.txt mid-commit. Another file of the project commits meanwhile.
    let other = {
        let (m, (tx, rx)) = (t.m.clone(), channel());
        std::thread::spawn(move || tx.send(m.commit(&plan(&m, "out/b.txt", "b1", None))));
        rx.recv_timeout(Duration::from_secs(10))
    };
    if other.is_err() {
        go_tx.send(()).unwrap();
        panic!("a commit into another file waited for the held one");
    }
    other.unwrap().unwrap();
    assert_eq!(fs::read_to_string(t.proj.join("out/b.txt")).unwrap(), "b1");
    // The same file waits until `first` is done, then finds its plan stale.
    let (done_tx, done_rx) = channel();
    let waiter = {
        let m = t.m.clone();
        std::thread::spawn(move || done_tx.send(m.commit(&stale)).unwrap())
    };
    assert!(done_rx.recv_timeout(Duration::from_millis(300)).is_err(), "it did not wait");
    go_tx.send(()).unwrap();
    holder.join().unwrap().unwrap();
    let err = done_rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    waiter.join().unwrap();
    assert_eq!(fs::read_to_string(t.proj.join("out/a.txt")).unwrap(), "a1");
    // Holding the folder waits for a commit inside it the same way.
    let inside = plan(&t.m, "out/c.txt", "c1", None);
    let (held_tx, held_rx) = channel();
    let m = t.m.clone();
    let holder = std::thread::spawn(move || {
        m.commit_pausing(&inside, &|| {
            held_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(300));
        })
    });
    held_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let seen = t.m.exclusive(|| fs::read_to_string(t.proj.join("out/c.txt")).ok());
    assert_eq!(seen.as_deref(), Some("c1"), "exclusive ran inside a commit");
    holder.join().unwrap().unwrap();
}

#[test]
fn racing_writers_of_one_file_never_lose_an_update() {
    let t = setup(BackupLimits::default());
    fs::write(t.proj.join("shared.txt"), "start").unwrap();
    let threads = 8;
    let start = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|w| {
            let (m, start, file) = (t.m.clone(), start.clone(), t.proj.join("shared.txt"));
            std::thread::spawn(move || {
                start.wait();
                let mut landed = Vec::new();
                for i in 0..15 {
                    let before = hash_of(&fs::read(&file).unwrap()).unwrap();
                    let plan = plan(&m, "shared.txt", &format!("w{w} i{i}"), Some(before.clone()));
                    match m.commit(&plan) {
                        Ok(out) => landed.push((before, hash_after(&out))),
                        Err(e) => assert_eq!(e.code(), ErrorCode::Conflict, "{e}"),
                    }
                }
                landed
            })
        })
        .collect();
    let edges: Vec<(String, String)> =
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    // Every landed change was planned against the content the one before it left: the changes
    // form one chain from the first content to the last, none planned against the same one.
    let from: BTreeMap<&str, &str> = edges.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(from.len(), edges.len(), "two changes landed on the same content");
    let mut at = hash_of(b"start").unwrap();
    let mut seen = HashSet::new();
    while let Some(next) = from.get(at.as_str()) {
        assert!(seen.insert(at.clone()), "a cycle");
        at = (*next).to_owned();
    }
    assert_eq!(seen.len(), edges.len(), "the landed changes are not one chain");
    assert_eq!(
        at,
        format!("blake3:{}", blake3::hash(&fs::read(t.proj.join("shared.txt")).unwrap()))
    );
}

#[test]
fn writers_of_their_own_files_all_land_and_pruning_keeps_its_bounds() {
    let t = setup(BackupLimits { max_operations: 10, max_bytes: 1 << 30 });
    let threads = 12;
    let start = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|w| {
            let (m, start) = (t.m.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let path = format!("out/w{w}.txt");
                let mut hash = None;
                for i in 0..10 {
                    let out = m.commit(&plan(&m, &path, &format!("w{w} i{i}"), hash)).unwrap();
                    hash = Some(hash_after(&out));
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    for w in 0..threads {
        assert_eq!(
            fs::read_to_string(t.proj.join(format!("out/w{w}.txt"))).unwrap(),
            format!("w{w} i9")
        );
    }
    let kept =
        t.m.list_backups(&ListBackupsArgs { limit: Some(100), ..Default::default() }).unwrap();
    assert_eq!(kept.operations.len(), 10);
    assert_eq!(fs::read_dir(t.state.join("backups")).unwrap().count(), 10);
    assert_eq!(fs::read_dir(t.state.join("journal")).unwrap().count(), 0);
    // The newest change is among those kept, and restores.
    let newest = &kept.operations[0].operation_id;
    let restore = t.m.plan_restore(&RestoreArgs { operation_id: newest.clone() }).unwrap();
    t.m.commit(&restore).unwrap();
}

/// A crash after a commit's record was rewritten `committed` (its commit point) but before the
/// record moved to its manifest: the next start keeps the change and lists it, rolls nothing
/// back, and leaves no journal.
#[test]
fn pc01_a_commit_caught_past_its_commit_point_is_kept_and_listed() {
    let t = setup(BackupLimits::default());
    fs::write(t.proj.join("out/a.txt"), "before").unwrap();
    let out = t.m.commit(&plan(&t.m, "out/a.txt", "after", hash_of(b"before"))).unwrap();
    let op = &out.operation_id;
    let manifest = t.state.join("backups").join(op).join("manifest.json");
    let journal = t.state.join("journal").join(format!("{op}.json"));
    fs::rename(&manifest, &journal).unwrap();
    let text = fs::read_to_string(&journal).unwrap();
    assert!(text.contains("\"committed\""), "{text}");
    for _ in 0..2 {
        let fresh = open(&t.proj, &t.state, BackupLimits::default());
        let report = fresh.recover().unwrap();
        assert!(report.rolled_back.is_empty() && report.conflicts.is_empty(), "{report:?}");
        assert_eq!(fs::read_to_string(t.proj.join("out/a.txt")).unwrap(), "after");
        let listed = fresh.list_backups(&ListBackupsArgs::default()).unwrap();
        assert_eq!(listed.operations.len(), 1);
        assert_eq!(&listed.operations[0].operation_id, op);
        assert!(manifest.exists() && !journal.exists());
    }
}
