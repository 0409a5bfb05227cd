//! Checkpoints: snapshots of a project's working tree that a later restore puts back whole.
//!
//! A checkpoint holds every file, folder and link the walk of `search_text` sees (tracked and
//! untracked files; never `.git`, never what the project's shield hides, and ignored files only
//! with `include_ignored`), each file's bytes as a content-addressed blob shared by every
//! checkpoint of the project, and one manifest (path, kind, size, SHA-256, permission bits,
//! link target). See `store.rs` for the layout.
//!
//! Speed: a file whose size, mtime, ctime, inode and device equal those in the newest
//! checkpoint is not read again — its hash is taken from there — unless its ctime was too close
//! to that checkpoint's start for the comparison to prove anything (a change within the same
//! clock tick). ctime cannot be set by a process, so an edit that restores the mtime still shows.
//!
//! Restoring is a plan of the mutation layer (`Mutations::plan_restore_checkpoint`): journal,
//! backups, roll-back, re-verification under the lock and `restore` of the restore come from
//! there. Bounds ([`CheckpointLimits`]): checkpoints and stored bytes per project, oldest
//! dropped first (never the newest), unreferenced blobs collected; a tree over the per-checkpoint
//! bounds is refused with `LimitExceeded`, and nothing is kept of it.

pub(crate) mod store;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sluice_core::schema::plain_integers;
use sluice_guard::{EntryKind, RelPath};

use crate::walk::{Flow, Item, Visitor, WalkConfig, walk};
use crate::{Mutations, RunnerError};
use store::SaveError;

/// Bounds on one project's checkpoints.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointLimits {
    /// Checkpoints kept; the oldest are dropped first.
    pub max_checkpoints: usize,
    /// Bytes the stored contents may take; the oldest checkpoints are dropped first.
    pub max_bytes: u64,
    /// Entries (files, folders, links) one checkpoint may hold.
    pub max_entries: usize,
    /// Bytes of files one checkpoint may hold.
    pub max_tree_bytes: u64,
}

impl Default for CheckpointLimits {
    fn default() -> CheckpointLimits {
        CheckpointLimits {
            max_checkpoints: 50,
            max_bytes: 2 << 30,
            max_entries: 100_000,
            max_tree_bytes: 1 << 30,
        }
    }
}

/// What kind of entry a manifest line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    File,
    Dir,
    Link,
}

/// One entry of a checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Entry {
    #[serde(rename = "p")]
    pub path: String,
    #[serde(rename = "k")]
    pub kind: Kind,
    #[serde(rename = "s", default)]
    pub size: u64,
    /// SHA-256 of a file's bytes, hex.
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// A link's target.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Permission bits (`0o777` at most).
    #[serde(rename = "m", default)]
    pub mode: u32,
    /// mtime (ns), ctime (ns), inode, device: the stat cache of the next checkpoint.
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    pub stat: Option<[u64; 4]>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub version: u32,
    pub id: String,
    pub entries: Vec<Entry>,
}

/// What is listed about a checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Meta {
    pub id: String,
    pub name: Option<String>,
    pub created_ms: u64,
    /// When its walk started (ns since the epoch), for the stat cache's racy-file rule.
    pub started_ns: u64,
    pub include_ignored: bool,
    pub files: u64,
    pub bytes: u64,
    /// Bytes this checkpoint added to the store (contents no earlier checkpoint held).
    pub added_bytes: u64,
    /// Taken by Sluice before a command: the command, as shown to the user.
    #[serde(default)]
    pub before_command: Option<String>,
    /// …and the job that ran it, once started.
    #[serde(default)]
    pub job_id: Option<String>,
    /// How long taking it took (walk, reads, stores, manifest), in milliseconds.
    #[serde(default)]
    pub took_ms: u64,
}

/// Arguments of `create_checkpoint`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct CreateCheckpointArgs {
    /// A name to recognise it by (at most 100 characters), e.g. `before refactoring auth`.
    #[serde(default)]
    pub name: Option<String>,
    /// Also keep files `.gitignore` ignores (build output, dependencies); default false.
    #[serde(default)]
    pub include_ignored: bool,
}

/// Arguments of `restore_checkpoint`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct RestoreCheckpointArgs {
    /// The checkpoint's id (`ckpt_…`), from create_checkpoint, list_checkpoints or a command's
    /// result.
    pub checkpoint_id: String,
}

/// One checkpoint, as listed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct CheckpointInfo {
    /// The id `restore_checkpoint` takes (`ckpt_…`).
    pub checkpoint_id: String,
    pub name: Option<String>,
    /// When it was taken (RFC 3339, UTC).
    pub created: String,
    /// Files it holds.
    pub files: u64,
    /// Bytes of those files.
    pub bytes: u64,
    /// Bytes it added to the store (contents no earlier checkpoint held).
    pub added_bytes: u64,
    /// Whether ignored files are in it.
    pub include_ignored: bool,
    /// Whether Sluice took it on its own before running a command.
    pub automatic: bool,
    /// That command, when it was.
    pub before_command: Option<String>,
    /// The job that ran that command, once it started.
    pub job_id: Option<String>,
    /// How long taking it took, in milliseconds.
    pub took_ms: u64,
}

/// The checkpoints of a project.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct ListCheckpointsOutput {
    /// Newest first.
    pub checkpoints: Vec<CheckpointInfo>,
    /// Bytes all of them take in Sluice's data folder (contents stored once).
    pub stored_bytes: u64,
    /// At most this many are kept, and at most `max_bytes`; the oldest go first.
    pub max_checkpoints: u64,
    pub max_bytes: u64,
}

impl From<&Meta> for CheckpointInfo {
    fn from(m: &Meta) -> CheckpointInfo {
        CheckpointInfo {
            checkpoint_id: m.id.clone(),
            name: m.name.as_deref().map(sluice_core::text::visible_owned),
            created: humantime::format_rfc3339_seconds(
                UNIX_EPOCH + std::time::Duration::from_millis(m.created_ms),
            )
            .to_string(),
            files: m.files,
            bytes: m.bytes,
            added_bytes: m.added_bytes,
            include_ignored: m.include_ignored,
            automatic: m.before_command.is_some(),
            before_command: m.before_command.as_deref().map(sluice_core::text::visible_owned),
            job_id: m.job_id.clone(),
            took_ms: m.took_ms,
        }
    }
}

/// `ckpt_` + 48 bits of milliseconds + 40 random bits, base32: sorts by time, names a file.
fn new_id() -> String {
    let mut bytes = [0u8; 11];
    bytes[..6].copy_from_slice(&now_ms().to_be_bytes()[2..]);
    bytes[6..].copy_from_slice(&sluice_core::random_bytes::<5>());
    format!("ckpt_{}", sluice_core::id::base32(&bytes))
}

/// Accepts only ids of the form [`new_id`] makes.
pub(crate) fn valid_id(s: &str) -> bool {
    s.strip_prefix("ckpt_").is_some_and(|rest| {
        !rest.is_empty()
            && rest.len() <= 32
            && rest.bytes().all(|b| b"0123456789abcdefghjkmnpqrstvwxyz".contains(&b))
    })
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

fn ns(t: Option<SystemTime>) -> u64 {
    t.and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// Checkpoints dropped for the count before their contents are collected.
const COLLECT_EVERY: u64 = 8;

/// A stat cache entry is trusted only if the file's ctime is this much older than the start of
/// the checkpoint that recorded it.
const RACY_NS: u64 = 2_000_000_000;

/// Entries found by a walk: the visitor of [`snapshot`].
struct Snap<'a> {
    store: &'a store::Store,
    limits: CheckpointLimits,
    /// Trusted hashes from the previous checkpoint, by path: (size, stat, hash).
    cache: HashMap<String, (u64, [u64; 4], String)>,
    /// When false, files are only stat'ed and hashed from the cache or read (restore's view).
    save: bool,
    out: Mutex<SnapOut>,
}

#[derive(Default)]
pub(crate) struct SnapOut {
    pub entries: Vec<Entry>,
    pub bytes: u64,
    pub added: u64,
    pub error: Option<RunnerError>,
}

impl Snap<'_> {
    fn fail(&self, e: RunnerError) -> Flow {
        if let Ok(mut out) = self.out.lock()
            && out.error.is_none()
        {
            out.error = Some(e);
        }
        Flow::Stop
    }

    fn push(&self, entry: Entry) -> Flow {
        let Ok(mut out) = self.out.lock() else { return Flow::Stop };
        out.bytes += entry.size;
        out.entries.push(entry);
        if out.entries.len() > self.limits.max_entries {
            drop(out);
            return self.fail(RunnerError::LimitExceeded(format!(
                "the project has more than {} files and folders, over the checkpoint limit",
                self.limits.max_entries
            )));
        }
        if out.bytes > self.limits.max_tree_bytes {
            drop(out);
            return self.fail(RunnerError::LimitExceeded(format!(
                "the project's files take more than {} MiB, over the checkpoint limit",
                self.limits.max_tree_bytes >> 20
            )));
        }
        Flow::Continue
    }

    fn file(&self, item: &Item<'_>) -> Result<Option<Entry>, RunnerError> {
        let meta = item.dir.entry_meta(item.name)?;
        if meta.kind != EntryKind::File {
            return Ok(None);
        }
        let stat = [ns(meta.modified), ns(meta.changed), meta.id.ino, meta.id.dev];
        let mut entry = Entry {
            path: item.rel.to_string(),
            kind: Kind::File,
            size: meta.len,
            hash: None,
            target: None,
            mode: meta.mode & 0o777,
            stat: Some(stat),
        };
        if let Some((size, st, hash)) = self.cache.get(item.rel.as_str())
            && *size == meta.len
            && *st == stat
            && stat[1] != 0
            && (!self.save || self.store.has_blob(hash))
        {
            entry.hash = Some(hash.clone());
            return Ok(Some(entry));
        }
        if meta.len > self.limits.max_tree_bytes {
            return Err(RunnerError::LimitExceeded(format!(
                "`{}` is {} bytes, over the checkpoint limit",
                item.rel, meta.len
            )));
        }
        let (mut file, _) = item.dir.open_file(item.name)?;
        let path = item.rel.to_string();
        let io = |e: std::io::Error| RunnerError::Io { path: path.clone(), kind: e.kind() };
        if self.save {
            let (size, hash, added) = self
                .store
                .save_blob(&mut file, self.limits.max_tree_bytes)
                .map_err(|e| match e {
                SaveError::Read(e) => io(e),
                SaveError::TooLarge => RunnerError::LimitExceeded(format!(
                    "`{path}` grew past the checkpoint limit while it was read"
                )),
                SaveError::State(e) => e,
            })?;
            entry.size = size;
            entry.hash = Some(hash);
            if let Ok(mut out) = self.out.lock() {
                out.added += added;
            }
        } else {
            let (size, hash) = sha256(&mut file).map_err(io)?;
            entry.size = size;
            entry.hash = Some(hash);
        }
        Ok(Some(entry))
    }
}

impl Visitor for Snap<'_> {
    type State = ();
    const WANTS_FILES: bool = true;

    fn state(&self) {}

    fn entry(&self, _: &mut (), item: &Item<'_>) -> Flow {
        let entry = match item.kind {
            EntryKind::Dir => match item.dir.entry_meta(item.name) {
                Ok(meta) => Entry {
                    path: item.rel.to_string(),
                    kind: Kind::Dir,
                    size: 0,
                    hash: None,
                    target: None,
                    mode: meta.mode & 0o777,
                    stat: None,
                },
                Err(e) => return self.fail(e.into()),
            },
            EntryKind::Symlink => match item.dir.read_link(item.name) {
                Ok(target) => Entry {
                    path: item.rel.to_string(),
                    kind: Kind::Link,
                    size: 0,
                    hash: None,
                    target: Some(target),
                    mode: 0,
                    stat: None,
                },
                Err(e) => return self.fail(e.into()),
            },
            EntryKind::File | EntryKind::Other => return Flow::Continue,
        };
        self.push(entry)
    }

    fn file(&self, _: &mut (), item: &Item<'_>) -> Flow {
        match self.file(item) {
            Ok(Some(entry)) => self.push(entry),
            Ok(None) => Flow::Continue,
            Err(e) => self.fail(e),
        }
    }
}

/// The size and SHA-256 (hex) of what `src` reads.
pub(crate) fn sha256(src: &mut impl std::io::Read) -> std::io::Result<(u64, String)> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((size, hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()))
}

/// Walks the project like `search_text` does and records every entry; with `save`, stores the
/// contents not in the store yet. Entries come back sorted by path.
pub(crate) fn snapshot(
    m: &Mutations,
    include_ignored: bool,
    previous: Option<(&Meta, Manifest)>,
    limits: CheckpointLimits,
    save: bool,
) -> Result<SnapOut, RunnerError> {
    let mut cache = HashMap::new();
    if let Some((meta, manifest)) = previous {
        for e in manifest.entries {
            if let (Kind::File, Some(hash), Some(stat)) = (e.kind, e.hash, e.stat)
                && stat[1].saturating_add(RACY_NS) <= meta.started_ns
            {
                cache.insert(e.path, (e.size, stat, hash));
            }
        }
    }
    let snap = Snap { store: m.checkpoints(), limits, cache, save, out: Mutex::default() };
    let ws = m.workspace();
    let start = ws.root().open_dir(&RelPath::root())?;
    let ignores = if include_ignored {
        None
    } else {
        crate::walk::ancestor_ignores(ws.root(), &RelPath::root())
    };
    let config = WalkConfig {
        shield: ws.shield(),
        include_hidden: true,
        respect_gitignore: !include_ignored,
        max_depth: usize::MAX,
        exclude: None,
        threads: 2,
        breadth_first: false,
        deadline: None,
    };
    walk(start, ignores, &config, &snap);
    let mut out =
        snap.out.into_inner().map_err(|_| RunnerError::State(std::io::ErrorKind::Other))?;
    if let Some(e) = out.error.take() {
        return Err(e);
    }
    out.entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

impl Mutations {
    /// Takes a checkpoint of the project's working tree. `before_command` marks one Sluice
    /// takes on its own before running that command.
    pub fn create_checkpoint(
        &self,
        args: &CreateCheckpointArgs,
        before_command: Option<String>,
    ) -> Result<CheckpointInfo, RunnerError> {
        let name = match args.name.as_deref().map(str::trim) {
            Some(n) if n.chars().count() > 100 => {
                return Err(RunnerError::invalid("a checkpoint name has at most 100 characters"));
            }
            Some("") | None => None,
            Some(n) => Some(n.to_owned()),
        };
        let _guard = self.checkpoint_lock();
        let store = self.checkpoints();
        let limits = self.checkpoint_limits();
        let started_ns = ns(Some(SystemTime::now()));
        let started = std::time::Instant::now();
        let previous = match store.list()?.into_iter().next() {
            Some(meta) => store.manifest(&meta.id).ok().flatten().map(|m| (meta, m)),
            None => None,
        };
        let snap = snapshot(
            self,
            args.include_ignored,
            previous.as_ref().map(|(meta, m)| (meta, m.clone())),
            limits,
            true,
        );
        let snap = match snap {
            Ok(s) => s,
            Err(e) => {
                // Contents saved before the refusal belong to no checkpoint.
                let _ = store.collect();
                return Err(e);
            }
        };
        let id = new_id();
        let meta = Meta {
            id: id.clone(),
            name,
            created_ms: now_ms(),
            started_ns,
            include_ignored: args.include_ignored,
            files: snap.entries.iter().filter(|e| e.kind == Kind::File).count() as u64,
            bytes: snap.bytes,
            added_bytes: snap.added,
            before_command,
            job_id: None,
            took_ms: started.elapsed().as_millis() as u64,
        };
        let manifest = Manifest { version: 1, id, entries: snap.entries };
        store.write(&manifest, &meta)?;
        self.prune_checkpoints()?;
        Ok(CheckpointInfo::from(&meta))
    }

    /// Records the job that ran the command an automatic checkpoint was taken before.
    pub fn set_checkpoint_job(&self, checkpoint_id: &str, job_id: &str) -> Result<(), RunnerError> {
        let _guard = self.checkpoint_lock();
        let store = self.checkpoints();
        if !valid_id(checkpoint_id) {
            return Err(RunnerError::invalid("not a checkpoint id"));
        }
        if let Some(mut meta) = store.meta(checkpoint_id)? {
            meta.job_id = Some(job_id.to_owned());
            store.write_meta(&meta)?;
        }
        Ok(())
    }

    /// The project's checkpoints, newest first, with the space they take.
    pub fn list_checkpoints(&self) -> Result<ListCheckpointsOutput, RunnerError> {
        let store = self.checkpoints();
        let limits = self.checkpoint_limits();
        Ok(ListCheckpointsOutput {
            checkpoints: self.checkpoint_infos()?,
            stored_bytes: store.blob_bytes() + store.index_bytes(),
            max_checkpoints: limits.max_checkpoints as u64,
            max_bytes: limits.max_bytes,
        })
    }

    /// The project's checkpoints, newest first, without the space they take (which stats every
    /// manifest): for a menu that only names them.
    pub fn checkpoint_infos(&self) -> Result<Vec<CheckpointInfo>, RunnerError> {
        Ok(self.checkpoints().list()?.iter().map(CheckpointInfo::from).collect())
    }

    /// Drops the oldest checkpoints beyond the bounds (never the newest) and collects the
    /// contents no checkpoint holds any more. Collecting reads every manifest, so a checkpoint
    /// dropped for the count alone is collected with the next few (at most
    /// [`COLLECT_EVERY`] drops late); one over the byte bound is collected at once.
    fn prune_checkpoints(&self) -> Result<(), RunnerError> {
        let store = self.checkpoints();
        let limits = self.checkpoint_limits();
        let mut metas = store.list()?;
        while metas.len() > 1 && metas.len() > limits.max_checkpoints {
            if let Some(oldest) = metas.pop() {
                store.remove(&oldest.id);
                if store.note_drop() >= COLLECT_EVERY {
                    store.collect()?;
                }
            }
        }
        while store.blob_bytes() > limits.max_bytes {
            if metas.len() <= 1 {
                break;
            }
            if let Some(oldest) = metas.pop() {
                store.remove(&oldest.id);
            }
            store.collect()?;
        }
        Ok(())
    }
}
