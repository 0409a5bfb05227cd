//! Opening the database: folder and file permissions, connection settings, versioned
//! migrations with a backup taken before any of them touches an existing database.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::fsperm::{create_new_private, ensure_private_dir, ensure_private_file};
use crate::seal::{SEALED_SCHEMA, SealKey};
use crate::tokens::GRANTS_SCHEMA;
use crate::{StoreError, schema};

/// The database file's name inside the data folder.
pub const DB_FILE: &str = "sluice.db";
/// SQLite's own automatic checkpoint threshold, in WAL pages.
const WAL_CHECKPOINT_PAGES: u64 = 1000;

/// How long a checkpoint apart waits, holding new writers off, for the log to be free to
/// start over: short, because every writer waits with it; the next call tries again.
const RESTART_WAIT: Duration = Duration::from_millis(200);

/// How many pre-migration backups are kept in `<data_dir>/backups`.
pub const BACKUPS_KEPT: usize = 5;

/// How long a statement waits for another process's write lock before failing. The CLI and the
/// engine write the same file; their transactions are sub-millisecond, so this is generous.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The open database. Cheap to share in an `Arc`: one connection behind a mutex, because every
/// operation is sub-millisecond and a pool would only add lock contention inside SQLite.
pub struct Store {
    conn: Mutex<Connection>,
    /// The connection WAL checkpoints run on, once [`Store::checkpoint_apart`] moved them off
    /// `conn`.
    checkpointer: OnceLock<Mutex<Connection>>,
    data_dir: PathBuf,
    /// The seal key, once [`Store::attach_secret`] gave the install secret.
    pub(crate) seal_key: OnceLock<SealKey>,
    /// The schema version it was opened at: the latest, but a test may open an older one.
    pub(crate) schema: usize,
    /// Whether the install secret's own storage records that sealing began ([`crate::seal`]).
    pub(crate) secret_says_sealed: AtomicBool,
    /// Whether the install secret's storage says the audit log has begun.
    pub(crate) secret_says_audit: AtomicBool,
}

// The engine shares one `Store` between its async tasks and threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Store>();
};

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("data_dir", &self.data_dir).finish_non_exhaustive()
    }
}

impl Store {
    /// Whether the schema has seal columns.
    pub(crate) fn sealed_schema(&self) -> bool {
        self.schema >= SEALED_SCHEMA
    }

    /// Whether the schema has tokens' profiles.
    pub(crate) fn profile_schema(&self) -> bool {
        self.schema >= crate::schema::PROFILE_SCHEMA
    }

    /// Whether the schema has the grants of remote tokens.
    pub(crate) fn grants_schema(&self) -> bool {
        self.schema >= GRANTS_SCHEMA
    }

    /// Opens (creating if needed) `<data_dir>/sluice.db` and brings its schema up to date.
    ///
    /// `data_dir` is created owner-only (0700 on unix) and the database file 0600. Before a
    /// pending migration touches an existing database, a copy is written to
    /// `<data_dir>/backups/sluice.db.v<N>-<unix secs>.bak` (the last [`BACKUPS_KEPT`] are kept).
    pub fn open(data_dir: &Path) -> Result<Store, StoreError> {
        Store::open_at_version(data_dir, schema::LATEST)
    }

    /// Like [`Store::open`], but migrates only up to `version` (at least 1). For tests that need
    /// a database as an older Sluice left it; a running Sluice always uses [`Store::open`].
    #[doc(hidden)]
    pub fn open_at_version(data_dir: &Path, version: usize) -> Result<Store, StoreError> {
        if version == 0 || version > schema::LATEST {
            return Err(StoreError::Invalid(format!(
                "schema version must be between 1 and {}",
                schema::LATEST
            )));
        }
        ensure_private_dir(data_dir)?;
        // Canonical, so the keychain account derived from it is stable across spellings.
        let data_dir = data_dir
            .canonicalize()
            .map_err(|e| StoreError::io(format!("cannot resolve {}", data_dir.display()), e))?;
        let db_path = data_dir.join(DB_FILE);
        // Created by us with 0600 before SQLite sees it: SQLite would use 0644 & ~umask, and it
        // gives the -wal and -shm files the database file's mode.
        ensure_private_file(&db_path)?;
        let mut conn = Connection::open_with_flags(
            &db_path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        configure(&mut conn)?;
        migrate(&mut conn, &data_dir, version)?;
        Ok(Store {
            conn: Mutex::new(conn),
            checkpointer: OnceLock::new(),
            data_dir,
            seal_key: OnceLock::new(),
            schema: version,
            secret_says_sealed: AtomicBool::new(false),
            secret_says_audit: AtomicBool::new(false),
        })
    }

    /// The canonical data folder this store lives in.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<usize, StoreError> {
        user_version(&self.conn())
    }

    /// SQLite's `PRAGMA data_version`: it changes whenever *another* connection (the CLI, a
    /// second engine) commits to the file, and not for this store's own writes. The engine
    /// polls it and reloads its caches only when it moved.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        // Asked several times per MCP request: a cached statement, not a fresh parse each time.
        Ok(self.conn().prepare_cached("PRAGMA data_version")?.query_row([], |r| r.get(0))?)
    }

    /// Waits (up to the busy timeout) for the database's write lock and lets it go again:
    /// `Ok` when a write could be made now. Asked before a change, so an audit entry that could
    /// not be written is found out before the project is touched, not after.
    pub fn check_writable(&self) -> Result<(), StoreError> {
        let mut conn = self.conn();
        // Immediate (see `configure`): taking the write lock is the whole point.
        let tx = conn.transaction()?;
        tx.rollback()?;
        Ok(())
    }

    /// Moves the WAL's checkpoints off this store's connection, for the serving engine. SQLite
    /// checkpoints on the commit that takes the WAL past 1000 pages, inside that commit, with
    /// `fsync`s, and every request of the engine shares this connection (its access check reads
    /// through it): one slow disk flush then stalls them all. After this call this connection
    /// never checkpoints; [`Store::checkpoint_if_due`] does, on a connection of its own, which a
    /// passive checkpoint never blocks. Other processes (the CLI) keep SQLite's default.
    pub fn checkpoint_apart(&self) -> Result<(), StoreError> {
        if self.checkpointer.get().is_some() {
            return Ok(());
        }
        let conn = Connection::open_with_flags(
            self.data_dir.join(DB_FILE),
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(RESTART_WAIT)?;
        let _ = self.checkpointer.set(Mutex::new(conn));
        self.conn().pragma_update(None, "wal_autocheckpoint", 0)?;
        Ok(())
    }

    /// After [`Store::checkpoint_apart`]: a checkpoint when the WAL has grown past SQLite's own
    /// threshold (1000 pages). A passive one first copies the log while writers go on; but
    /// writers that never pause keep adding frames behind it, and the log starts over only
    /// once every frame is copied, so it would grow without end. A truncating one then copies
    /// the rest with this process's writers held off, and empties the log; it waits at most
    /// [`RESTART_WAIT`] for another process's readers and writers, then gives up until the
    /// next call.
    /// Returns whether one ran. Blocking (disk flushes): call it off async threads.
    pub fn checkpoint_if_due(&self) -> Result<bool, StoreError> {
        let Some(conn) = self.checkpointer.get() else { return Ok(false) };
        let conn = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let wal = self.data_dir.join(format!("{DB_FILE}-wal"));
        let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
        let due = WAL_CHECKPOINT_PAGES.saturating_mul(page_size.max(512) as u64);
        if std::fs::metadata(&wal).map_or(0, |m| m.len()) < due {
            return Ok(false);
        }
        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        // This process's writers all go through the main connection: holding it, they wait
        // here for the rest (frames since the passive copy, a flush, the truncation) instead of
        // racing the checkpoint for SQLite's lock, which a writer that never pauses would win.
        let _writers = self.conn();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(true)
    }

    /// The connection. A poisoned mutex is recovered: SQLite's own transactions keep the data
    /// consistent even if a holder panicked, and refusing every later call would be worse.
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn configure(conn: &mut Connection) -> Result<(), StoreError> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Corrupt(format!("cannot switch the database to WAL (got {mode})")));
    }
    // NORMAL is durable across application crashes in WAL mode; only an OS crash may lose the
    // last transactions, which is acceptable for this data and much faster than FULL.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // The schema contains no functions that need to run with elevated trust.
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    // Every write transaction takes the write lock up front, so two processes never deadlock
    // upgrading read locks, and the busy timeout (not an immediate SQLITE_BUSY) applies.
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    Ok(())
}

fn user_version(conn: &Connection) -> Result<usize, StoreError> {
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    usize::try_from(v).map_err(|_| StoreError::Corrupt(format!("negative user_version {v}")))
}

fn migrate(conn: &mut Connection, data_dir: &Path, target: usize) -> Result<(), StoreError> {
    let current = user_version(conn)?;
    if current > schema::LATEST {
        return Err(StoreError::SchemaTooNew { found: current, known: schema::LATEST });
    }
    if current >= target {
        return Ok(());
    }
    if current > 0 {
        let path = backup_before_migration(conn, data_dir, current)?;
        tracing::info!(from = current, to = target, backup = %path.display(), "migrating");
    }
    match schema::migrations().to_version(conn, target) {
        Ok(()) => Ok(()),
        // Another process (the CLI and the engine starting together) may have migrated between
        // our read of user_version and our transaction: its result is as good as ours.
        Err(e) if user_version(conn)? >= target => {
            tracing::debug!(error = %e, "migration raced with another process; already done");
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// Copies the live database (consistently, through SQLite's online backup API) into a new
/// owner-only file, then prunes old backups. Returns the backup's path.
fn backup_before_migration(
    conn: &Connection,
    data_dir: &Path,
    version: usize,
) -> Result<PathBuf, StoreError> {
    let dir = data_dir.join("backups");
    ensure_private_dir(&dir)?;
    let secs = crate::now_ms() / 1000;
    let mut path = None;
    for n in 0..1000u32 {
        let name = if n == 0 {
            format!("{DB_FILE}.v{version}-{secs}.bak")
        } else {
            format!("{DB_FILE}.v{version}-{secs}-{n}.bak")
        };
        let candidate = dir.join(name);
        match create_new_private(&candidate) {
            Ok(_) => {
                path = Some(candidate);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(StoreError::io("cannot create a database backup", e)),
        }
    }
    let path = path.ok_or_else(|| {
        StoreError::io("cannot name a database backup", std::io::ErrorKind::AlreadyExists.into())
    })?;
    conn.backup(rusqlite::MAIN_DB, &path, None)?;
    prune_backups(&dir);
    Ok(path)
}

/// Keeps the newest [`BACKUPS_KEPT`] backups. Best effort: a failure to delete an old backup
/// must not block an upgrade, so it is only logged.
fn prune_backups(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut backups: Vec<((i64, u32), PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some((backup_order(&name)?, e.path()))
        })
        .collect();
    backups.sort();
    let excess = backups.len().saturating_sub(BACKUPS_KEPT);
    for (_, path) in backups.into_iter().take(excess) {
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::warn!(error = %e, path = %path.display(), "cannot remove an old backup");
        }
    }
}

/// The sort key of a backup file name `sluice.db.v<N>-<secs>[-<n>].bak`: (secs, n).
fn backup_order(name: &str) -> Option<(i64, u32)> {
    let rest = name.strip_prefix(DB_FILE)?.strip_prefix(".v")?.strip_suffix(".bak")?;
    let mut parts = rest.split('-');
    parts.next()?.parse::<usize>().ok()?;
    let secs = parts.next()?.parse().ok()?;
    let n = match parts.next() {
        Some(n) => n.parse().ok()?,
        None => 0,
    };
    parts.next().is_none().then_some((secs, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Grows the WAL through the store's own connection: `count` commits of 500 kB each.
    fn fill(store: &Store, count: usize) {
        let conn = store.conn();
        conn.execute_batch("CREATE TABLE IF NOT EXISTS filler (b BLOB)").unwrap();
        for _ in 0..count {
            conn.execute("INSERT INTO filler VALUES (zeroblob(500000))", []).unwrap();
        }
    }

    fn wal_len(store: &Store) -> u64 {
        std::fs::metadata(store.data_dir().join(format!("{DB_FILE}-wal"))).unwrap().len()
    }

    #[test]
    fn checkpoints_leave_the_main_connection_and_run_apart_when_due() {
        let dir = tempfile::tempdir().unwrap();
        // SQLite's default: the commit that takes the log past 1000 pages checkpoints, and the
        // next one starts the log over, so it never grows much past that.
        let plain = Store::open(&dir.path().join("plain")).unwrap();
        fill(&plain, 16);
        assert!(wal_len(&plain) < 6_000_000, "{}", wal_len(&plain));
        assert!(!plain.checkpoint_if_due().unwrap(), "nothing runs apart unless asked");

        let store = Store::open(&dir.path().join("apart")).unwrap();
        store.checkpoint_apart().unwrap();
        assert!(!store.checkpoint_if_due().unwrap(), "a short log is left alone");
        fill(&store, 16);
        assert!(
            wal_len(&store) > 8_000_000,
            "the main connection checkpointed: {}",
            wal_len(&store)
        );
        assert!(store.checkpoint_if_due().unwrap());
        // Everything in the log reached the database, and the log starts over, empty.
        let (log, copied): (i64, i64) = store
            .conn()
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| Ok((r.get(1)?, r.get(2)?)))
            .unwrap();
        assert_eq!((log, copied), (0, 0));
        assert_eq!(wal_len(&store), 0);
        fill(&store, 1);
        assert!(wal_len(&store) < 1_000_000, "the log grew on: {}", wal_len(&store));
        assert_eq!(
            store
                .conn()
                .query_row("SELECT count(*) FROM filler", [], |r| r.get::<_, i64>(0))
                .unwrap(),
            17
        );
    }

    /// Under writes that never pause, a checkpoint apart still ends with the log started over:
    /// copied while the writers go on, frames keep arriving behind it, so only one that holds
    /// them off for its last part lets the log restart. Without it the log grew to 933 MB in
    /// 90 s of `cargo xtask load`.
    #[test]
    fn the_log_stays_bounded_under_writes_that_never_pause() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(Store::open(dir.path()).unwrap());
        store.checkpoint_apart().unwrap();
        store.conn().execute_batch("CREATE TABLE filler (b BLOB)").unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let writer = {
            let (store, stop) = (store.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut commits = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    store
                        .conn()
                        .execute("INSERT INTO filler VALUES (zeroblob(50000))", [])
                        .unwrap();
                    commits += 1;
                }
                commits
            })
        };
        let due = WAL_CHECKPOINT_PAGES * 4096;
        let mut checkpoints = 0;
        let mut largest = 0;
        while checkpoints < 20 {
            std::thread::sleep(Duration::from_millis(20));
            checkpoints += u32::from(store.checkpoint_if_due().unwrap());
            largest = largest.max(wal_len(&store));
        }
        stop.store(true, Ordering::Relaxed);
        let commits = writer.join().unwrap();
        assert!(commits > 200, "only {commits} commits ran beside the checkpoints");
        assert!(largest < 4 * due, "the log reached {largest} bytes (due at {due})");
    }
}
