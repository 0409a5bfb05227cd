//! Opening, migrations, backups, permissions, concurrent connections and kv state.

use sluice_store::{BACKUPS_KEPT, DB_FILE, Store, StoreError};

use crate::{add_project, data_dir, open};

#[test]
fn open_creates_and_reopens_at_latest_schema() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let latest = store.schema_version().unwrap();
    assert!(latest >= 2);
    let p = add_project(&store, "alpha");
    drop(store);

    let store = open(&dir);
    assert_eq!(store.schema_version().unwrap(), latest);
    assert_eq!(store.project(&p.id).unwrap().unwrap().name, "alpha");
    // Nothing to migrate: no backup was taken.
    assert!(!dir.join("backups").exists());

    let raw = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    let mode: String = raw.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn pending_migration_backs_up_the_old_database_first() {
    let (_tmp, dir) = data_dir();
    let old = Store::open_at_version(&dir, 1).unwrap();
    assert_eq!(old.schema_version().unwrap(), 1);
    let p = add_project(&old, "kept");
    drop(old);

    let store = open(&dir);
    assert!(store.schema_version().unwrap() > 1);
    let backups: Vec<_> = std::fs::read_dir(dir.join("backups"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bak"))
        .collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    let name = backups[0].file_name().unwrap().to_str().unwrap().to_owned();
    assert!(name.starts_with("sluice.db.v1-"), "{name}");
    #[cfg(unix)]
    assert_eq!(crate::mode(&backups[0]), 0o600);

    // The backup is a consistent v1 database holding the old rows.
    let raw = rusqlite::Connection::open(&backups[0]).unwrap();
    let v: i64 = raw.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(v, 1);
    let id: String = raw.query_row("SELECT id FROM projects", [], |r| r.get(0)).unwrap();
    assert_eq!(id, p.id.as_str());
}

#[test]
fn old_backups_are_pruned() {
    let (_tmp, dir) = data_dir();
    drop(Store::open_at_version(&dir, 1).unwrap());
    let backups = dir.join("backups");
    std::fs::create_dir_all(&backups).unwrap();
    for secs in 1..=BACKUPS_KEPT + 2 {
        std::fs::write(backups.join(format!("sluice.db.v1-{secs}.bak")), b"old").unwrap();
    }
    drop(open(&dir));
    let n = std::fs::read_dir(&backups).unwrap().count();
    assert_eq!(n, BACKUPS_KEPT);
    assert!(!backups.join("sluice.db.v1-1.bak").exists());
}

#[test]
fn a_database_from_a_newer_sluice_is_refused() {
    let (_tmp, dir) = data_dir();
    drop(open(&dir));
    let raw = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    raw.pragma_update(None, "user_version", 99).unwrap();
    drop(raw);
    let err = Store::open(&dir).unwrap_err();
    assert!(matches!(err, StoreError::SchemaTooNew { found: 99, .. }), "{err}");
}

#[cfg(unix)]
#[test]
fn data_folder_and_database_are_owner_only() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    add_project(&store, "perm");
    assert_eq!(crate::mode(&dir), 0o700);
    assert_eq!(crate::mode(&dir.join(DB_FILE)), 0o600);
    assert_eq!(crate::mode(&dir.join("sluice.db-wal")), 0o600);
}

#[test]
fn a_second_connection_sees_the_others_commits_through_data_version() {
    let (_tmp, dir) = data_dir();
    let engine = open(&dir);
    let cli = open(&dir);
    let before = engine.data_version().unwrap();

    // The engine's own writes do not move its data_version.
    engine.kv_set_bool("paused", false).unwrap();
    assert_eq!(engine.data_version().unwrap(), before);

    let p = add_project(&cli, "from-cli");
    let after = engine.data_version().unwrap();
    assert_ne!(after, before);
    assert_eq!(engine.project(&p.id).unwrap().unwrap().name, "from-cli");
}

#[test]
fn concurrent_writers_in_two_stores_all_succeed() {
    let (_tmp, dir) = data_dir();
    let a = std::sync::Arc::new(open(&dir));
    let b = std::sync::Arc::new(open(&dir));
    let threads: Vec<_> = [a, b]
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            std::thread::spawn(move || {
                for n in 0..50 {
                    s.kv_set(&format!("k{i}-{n}"), "v").unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = open(&dir);
    assert_eq!(s.kv_get("k1-49").unwrap().as_deref(), Some("v"));
}

#[test]
fn kv_round_trips() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    assert_eq!(s.kv_get_bool("flag").unwrap(), None);
    s.kv_set_bool("flag", true).unwrap();
    assert_eq!(s.kv_get_bool("flag").unwrap(), Some(true));
    s.kv_set("flag", "maybe").unwrap();
    assert!(s.kv_get_bool("flag").is_err());
    assert!(s.kv_delete("flag").unwrap());
    assert!(!s.kv_delete("flag").unwrap());
}
