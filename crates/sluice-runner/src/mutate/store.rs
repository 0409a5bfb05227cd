//! Sluice's per-project state folder: backups of changed files and the commit journal.
//!
//! Layout under `state_dir` (a folder in Sluice's data folder, never inside a project):
//! - `backups/<op>/blob-<step>-<role>`: the previous bytes of a changed file, written and
//!   fsynced before the step that changes it; `backups/<op>/manifest.json`: the committed
//!   operation (its steps, effects and blobs), what `restore` and `list_backups` read.
//! - `journal/<op>.json`: written and fsynced before the first change to the project. A
//!   successful commit rewrites it `committed` (temp file, fsync, rename, fsync of the folder:
//!   that rename is the commit point, as durable as the project's own changes) and then moves it
//!   to its manifest; a roll-back marks it `rolled_back`. A `committed` journal a crash left
//!   before its move is moved by the next [`Store::open_journals`].
//!
//! Commits run side by side (see `locks.rs`); everything here is per operation except the
//! bookkeeping of what [`Store::prune`] keeps, which is read from disk once and then kept in
//! memory, so a commit never rereads every manifest.
//!
//! Physical paths here are Sluice's own and never appear in messages.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use super::args::Effect;
use super::step::{Step, hex_hash};
use crate::RunnerError;

/// Bounds on the backups kept per project; the oldest operations are dropped first, the newest
/// is always kept.
#[derive(Debug, Clone, Copy)]
pub struct BackupLimits {
    /// Operations kept.
    pub max_operations: usize,
    /// Bytes of saved contents kept.
    pub max_bytes: u64,
}

impl Default for BackupLimits {
    fn default() -> BackupLimits {
        BackupLimits { max_operations: 500, max_bytes: 1 << 30 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// Changes may be under way; `recover` rolls it back.
    Prepared,
    Committed,
    RolledBack,
}

/// One saved previous content.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Blob {
    pub step: usize,
    /// `from` or `to` for moves, `target` otherwise.
    pub role: String,
    pub path: String,
    pub size: u64,
    pub hash: String,
    pub mode: u32,
}

/// An operation as journaled and, once committed, as kept in its manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    pub version: u32,
    pub operation_id: String,
    pub tool: String,
    pub created_ms: u64,
    pub status: Status,
    pub steps: Vec<Step>,
    pub effects: Vec<Effect>,
    pub blobs: Vec<Blob>,
}

pub(crate) struct Store {
    dir: PathBuf,
    pub limits: BackupLimits,
    /// The committed operations kept, once read: `None` until the first prune.
    kept: Mutex<Option<Vec<Kept>>>,
}

/// What pruning needs to know of one committed operation.
#[derive(Debug, Clone)]
struct Kept {
    created_ms: u64,
    op: String,
    bytes: u64,
}

impl Kept {
    fn of(record: &Record) -> Kept {
        Kept {
            created_ms: record.created_ms,
            op: record.operation_id.clone(),
            bytes: record.blobs.iter().map(|b| b.size).sum(),
        }
    }
}

fn state_err(e: std::io::Error) -> RunnerError {
    RunnerError::State(e.kind())
}

impl Store {
    pub fn open(dir: &Path, limits: BackupLimits) -> Result<Store, RunnerError> {
        for sub in ["backups", "journal"] {
            create_private_dir_all(&dir.join(sub)).map_err(state_err)?;
        }
        Ok(Store { dir: dir.to_path_buf(), limits, kept: Mutex::new(None) })
    }

    fn kept(&self) -> MutexGuard<'_, Option<Vec<Kept>>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn op_dir(&self, op: &str) -> PathBuf {
        self.dir.join("backups").join(op)
    }

    fn journal_path(&self, op: &str) -> PathBuf {
        self.dir.join("journal").join(format!("{op}.json"))
    }

    pub fn blob_name(step: usize, role: &str) -> String {
        format!("blob-{step}-{role}")
    }

    pub fn begin(&self, record: &Record) -> Result<(), RunnerError> {
        create_private_dir_all(&self.op_dir(&record.operation_id)).map_err(state_err)?;
        self.write_journal(record)
    }

    pub fn write_journal(&self, record: &Record) -> Result<(), RunnerError> {
        write_json(&self.journal_path(&record.operation_id), record)
    }

    /// Commits `record` (status `committed`): once this returns, a crash keeps the operation.
    pub fn finish(&self, record: &Record) -> Result<(), RunnerError> {
        self.write_journal(record)?;
        // Past the commit point: a move a crash interrupts is redone at the next start. Under
        // the lock of the kept list, so a first prune reading the manifests meanwhile counts
        // this operation once.
        let mut kept = self.kept();
        self.to_manifest(&record.operation_id);
        if let Some(kept) = kept.as_mut() {
            kept.push(Kept::of(record));
        }
        Ok(())
    }

    /// Moves a committed journal to its manifest. No fsync: until the move is durable the
    /// journal is, and [`Store::open_journals`] finishes it.
    fn to_manifest(&self, op: &str) {
        let _ = fs::rename(self.journal_path(op), self.op_dir(op).join("manifest.json"));
    }

    /// Drops an operation's backups (it was rolled back without conflicts, or pruned).
    pub fn discard(&self, op: &str) {
        let _ = fs::remove_dir_all(self.op_dir(op));
    }

    /// Copies `src` into a new blob while hashing; returns the blob's size and hash.
    pub fn save_blob(
        &self,
        op: &str,
        name: &str,
        src: &mut impl Read,
        max: u64,
    ) -> Result<(u64, blake3::Hash), RunnerError> {
        let path = self.op_dir(op).join(name);
        let mut out = private_file(&path).map_err(state_err)?;
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            let n = src.read(&mut buf).map_err(state_err)?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > max {
                return Err(RunnerError::TooLarge(
                    "a file grew past the backup limit while it was being saved".into(),
                ));
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n]).map_err(state_err)?;
        }
        out.sync_all().map_err(state_err)?;
        Ok((total, hasher.finalize()))
    }

    /// A blob's bytes, only if they still have the expected hash.
    pub fn load_blob(&self, op: &str, name: &str, hash: &str) -> Result<Vec<u8>, RunnerError> {
        let bytes = fs::read(self.op_dir(op).join(name)).map_err(state_err)?;
        if hex_hash(&bytes) != hash {
            return Err(RunnerError::State(std::io::ErrorKind::InvalidData));
        }
        Ok(bytes)
    }

    pub fn load_manifest(&self, op: &str) -> Result<Option<Record>, RunnerError> {
        read_json(&self.op_dir(op).join("manifest.json"))
    }

    /// Committed operations, newest first.
    pub fn manifests(&self) -> Result<Vec<Record>, RunnerError> {
        let mut out = Vec::new();
        for entry in fs::read_dir(self.dir.join("backups")).map_err(state_err)? {
            let entry = entry.map_err(state_err)?;
            if let Ok(Some(rec)) = read_json::<Record>(&entry.path().join("manifest.json"))
                && rec.status == Status::Committed
            {
                out.push(rec);
            }
        }
        out.sort_by(|a, b| (b.created_ms, &b.operation_id).cmp(&(a.created_ms, &a.operation_id)));
        Ok(out)
    }

    /// Journals still `prepared`: interrupted commits. A `committed` one is moved to its
    /// manifest on the way.
    ///
    /// Only `<op>.json` files are journals. A `<op>.tmp-…` file is a journal write a crash
    /// interrupted before its rename: for the first write that means the commit never touched
    /// the project, and for a later one the real journal still holds the earlier state. Reading
    /// one as a journal would roll back an operation that never ran — against whatever a later
    /// commit left, which can look exactly like that operation's result — so they are removed.
    pub fn open_journals(&self) -> Result<Vec<Record>, RunnerError> {
        let mut out = Vec::new();
        let dir = self.dir.join("journal");
        for entry in fs::read_dir(&dir).map_err(state_err)? {
            let entry = entry.map_err(state_err)?;
            let name = entry.file_name();
            let Some(op) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                if name.to_str().is_some_and(|n| n.contains(".tmp-")) {
                    let _ = fs::remove_file(entry.path());
                }
                continue;
            };
            match read_json::<Record>(&entry.path()) {
                Ok(Some(rec)) if rec.operation_id == op => match rec.status {
                    Status::Prepared => out.push(rec),
                    Status::Committed => self.to_manifest(op),
                    Status::RolledBack => {}
                },
                _ => {}
            }
        }
        sync_dir(&dir);
        out.sort_by(|a, b| (b.created_ms, &b.operation_id).cmp(&(a.created_ms, &a.operation_id)));
        Ok(out)
    }

    /// Enforces [`BackupLimits`], oldest first, never dropping the newest operation.
    pub fn prune(&self) -> Result<(), RunnerError> {
        let victims = {
            let mut kept = self.kept();
            let kept = match kept.as_mut() {
                Some(kept) => kept,
                None => kept.insert(self.manifests()?.iter().map(Kept::of).collect()),
            };
            // Newest first, as `manifests` orders them.
            kept.sort_by(|a, b| (b.created_ms, &b.op).cmp(&(a.created_ms, &a.op)));
            let mut bytes = 0u64;
            let mut keep = kept.len();
            for (idx, k) in kept.iter().enumerate() {
                bytes += k.bytes;
                if idx > 0 && (idx >= self.limits.max_operations || bytes > self.limits.max_bytes) {
                    keep = idx;
                    break;
                }
            }
            kept.split_off(keep)
        };
        for victim in victims {
            self.discard(&victim.op);
        }
        Ok(())
    }
}

// Owner-only like `sluice_store::fsperm`'s helpers, but kept here: the runner sits below the
// store (no SQL, no install secret) and takes no dependency on it for four lines. The
// checkpoints' store uses them too.
pub(crate) fn create_private_dir_all(path: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

pub(crate) fn private_file(path: &Path) -> std::io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)
}

fn sync_dir(path: &Path) {
    // Directory fsync is how a rename becomes durable on Unix; elsewhere it is not possible
    // through `std` and the metadata journal of the filesystem has to do.
    #[cfg(unix)]
    if let Ok(dir) = File::open(path) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Writes JSON atomically: a new temp file, fsync, rename, fsync of the folder.
fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), RunnerError> {
    let bytes = serde_json::to_vec_pretty(value)
        .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData))?;
    let tmp = path.with_extension(format!(
        "tmp-{}",
        sluice_core::id::base32(&sluice_core::random_bytes::<6>())
    ));
    let mut file = private_file(&tmp).map_err(state_err)?;
    file.write_all(&bytes).map_err(state_err)?;
    file.sync_all().map_err(state_err)?;
    fs::rename(&tmp, path).map_err(state_err)?;
    if let Some(parent) = path.parent() {
        sync_dir(parent);
    }
    Ok(())
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, RunnerError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(state_err(e)),
    }
}
