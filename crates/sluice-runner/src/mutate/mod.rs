//! The mutation layer: the file-changing tools as a two-phase plan/commit API.
//!
//! `plan_*` parses, resolves and validates everything (paths through the guard, the shield on
//! requested and resolved paths, sizes, hashes, patch hunks) and returns a [`Plan`]: what will
//! change, a fingerprint of the exact action, and the resolved primitive steps. Nothing on disk
//! changes. The engine shows [`Plan::summary`] to the user if its policy asks, then calls
//! [`Mutations::commit`], which re-verifies every target against the plan under locks on the
//! paths it changes (`locks.rs`) and aborts with `Conflict` on any difference (AP-01).
//!
//! Auto-run paths (files another program runs on its own, [`sluice_guard::AutoRun`]): a plan
//! records every one it touches in [`Plan::autorun`] — requested and resolved paths, both ends of
//! a move, every entry of a moved or deleted folder, at both ends — and its fingerprint covers
//! them, so the approval that must follow names exactly those. A plan touching one the project
//! refuses is not made at all (`Forbidden`).
//!
//! Commit protocol (PE-03, PC-01): a journal listing every step is written and fsynced before
//! the project is touched; each step first saves the bytes it will destroy to the backups, then
//! re-checks its target and changes it with temp file + rename; a failure rolls back the steps
//! done so far. The journal rewritten `committed` is the commit point; it then becomes the
//! manifest next to the backups, which is what `restore` and `list_backups` use.
//! [`Mutations::recover`] rolls back any journal left `prepared` by a crash — the policy is
//! always "fully before", never roll forward and never replay — and marks it `rolled_back`.

mod action;
mod args;
mod locks;
pub(crate) mod patch;
mod plan;
mod step;
pub(crate) mod store;
pub(crate) mod summary;
mod text;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use sluice_core::{AutoRunAction, AutoRunHit, AutoRunRule};
use sluice_guard::{FileId, RelPath};

pub use args::*;
pub use store::BackupLimits;

use action::Exec;
use step::Step;
use store::{Record, Status, Store};

use crate::{RunnerError, Workspace};

/// Largest content one write may produce, and largest file edit_file/apply_patch load.
pub const MAX_WRITE_BYTES: u64 = 8 * 1024 * 1024;
/// Largest patch text.
pub const MAX_PATCH_BYTES: usize = 8 * 1024 * 1024;
/// Most files one patch may touch.
pub const MAX_PATCH_FILES: usize = 200;
/// Most entries a recursive delete or a folder move may cover.
pub const MAX_TREE_ENTRIES: usize = 10_000;
/// Most bytes a recursive delete may remove (all of them are backed up first).
pub const MAX_TREE_BYTES: u64 = 256 * 1024 * 1024;
/// Free space that must remain on the project's and the state folder's disks (RX-02).
pub const MIN_FREE_BYTES: u64 = 64 * 1024 * 1024;

/// Faults the test hooks inject into a commit.
#[derive(Clone, Copy)]
enum Fault<'a> {
    CrashAfter(usize),
    FailAt(usize),
    /// Calls the function after the first step, holding the commit's locks.
    PauseAfterFirst(&'a (dyn Fn() + Sync)),
}

/// The mutation tools of one project.
pub struct Mutations {
    ws: Arc<Workspace>,
    store: Store,
    /// Serializes commits, restores and recovery of this project where they touch the same
    /// paths (`locks.rs`); recovery and `exclusive` hold the whole project.
    locks: locks::PathLocks,
    /// Identities of Sluice's state folder and the folder holding it: no target may be below
    /// them (AP-05), even if the engine's no-overlap rule were broken by a mount or link.
    protected: Vec<FileId>,
    /// Ties plans to the instance that made them.
    owner: u64,
    checkpoints: crate::checkpoint::store::Store,
    /// Serializes taking, pruning and reading checkpoints.
    checkpoint_lock: Mutex<()>,
    checkpoint_limits: crate::CheckpointLimits,
}

impl std::fmt::Debug for Mutations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mutations { .. }")
    }
}

/// A validated change, ready to commit. What was shown is exactly what runs: `commit` executes
/// only `steps`, after checking each target still has the identity and content recorded here.
#[derive(Clone)]
pub struct Plan {
    pub tool: &'static str,
    /// BLAKE3 over the canonical encoding of the action (tool, resolved paths, identities,
    /// content hashes or absence of every target, new contents' hashes, modes).
    pub fingerprint: [u8; 32],
    pub effects: Vec<Effect>,
    /// Deletes or moves something away; the engine's "ask before deleting" policy keys on it.
    pub deletes: bool,
    /// Creates or changes something.
    pub writes: bool,
    /// The auto-run paths the change touches, by path: other programs run them on their own, so
    /// the change asks the user whatever the policy. Never a refused one (such a plan is not
    /// made). Already safe to display.
    pub autorun: Vec<AutoRunHit>,
    steps: Vec<Step>,
    /// New content of each `Step::Write`, by step index.
    contents: Vec<Option<Arc<Vec<u8>>>>,
    owner: u64,
}

impl std::fmt::Debug for Plan {
    // Contents are left out: a Debug print may end up in a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("tool", &self.tool)
            .field("fingerprint", &blake3::Hash::from(self.fingerprint).to_hex().as_str())
            .field("effects", &self.effects)
            .field("deletes", &self.deletes)
            .field("writes", &self.writes)
            .field("autorun", &self.autorun)
            .finish_non_exhaustive()
    }
}

impl Plan {
    fn new(
        m: &Mutations,
        tool: &'static str,
        steps: Vec<Step>,
        contents: Vec<Option<Arc<Vec<u8>>>>,
        effects: Vec<Effect>,
        touched: Vec<RelPath>,
    ) -> Result<Plan, RunnerError> {
        if steps.is_empty() {
            return Err(RunnerError::invalid(format!("{tool}: nothing to change")));
        }
        let autorun = autorun_hits(m, &steps, touched)?;
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"sluice-plan-v1\0");
        hasher.update(tool.as_bytes());
        hasher.update(b"\0");
        let encoded = serde_json::to_vec(&steps)
            .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData))?;
        hasher.update(&encoded);
        // What the approval says runs on its own is part of what was approved: a list edited
        // in between, or a tree that gained such a file, makes another plan.
        if !autorun.is_empty() {
            hasher.update(b"\0autorun\0");
            let encoded = serde_json::to_vec(&autorun)
                .map_err(|_| RunnerError::State(std::io::ErrorKind::InvalidData))?;
            hasher.update(&encoded);
        }
        let deletes = steps.iter().any(|s| matches!(s, Step::Remove { .. } | Step::Rename { .. }));
        Ok(Plan {
            tool,
            fingerprint: *hasher.finalize().as_bytes(),
            effects,
            deletes,
            writes: true,
            autorun,
            steps,
            contents,
            owner: m.owner,
        })
    }

    /// One exact line per effect, from project-relative paths only, with invisible and control
    /// characters shown as `⟨U+202E⟩`.
    pub fn summary(&self) -> String {
        summary::render(&self.effects)
    }

    /// What the change does, counted: kept with its approval so every surface classes it alike.
    pub fn tally(&self) -> sluice_core::ChangeTally {
        summary::tally(&self.effects)
    }
}

/// The auto-run rules covering the paths a plan touches (every step's path and `touched`), by
/// path; `Forbidden` if any of them is refused.
fn autorun_hits(
    m: &Mutations,
    steps: &[Step],
    touched: Vec<RelPath>,
) -> Result<Vec<AutoRunHit>, RunnerError> {
    let step_paths = steps.iter().flat_map(|s| s.paths()).filter_map(|p| RelPath::parse(p).ok());
    m.ws.autorun_hits(step_paths.chain(touched))
}

impl Workspace {
    /// The auto-run paths among `paths`, one line per thing that runs, for an approval;
    /// `Forbidden` if any is one the project refuses. Git writes that change working-tree
    /// files (a switch, a stash pop) use it as the file tools' plans do.
    pub fn autorun_hits(
        &self,
        paths: impl IntoIterator<Item = RelPath>,
    ) -> Result<Vec<AutoRunHit>, RunnerError> {
        let list = self.autorun();
        let mut hits: BTreeMap<String, &AutoRunRule> = BTreeMap::new();
        for path in paths {
            if let Some(rule) = list.rule_for(&path) {
                hits.entry(path.to_string()).or_insert(rule);
            }
        }
        let refused: Vec<(&String, &&AutoRunRule)> =
            hits.iter().filter(|(_, r)| r.action == AutoRunAction::Refuse).collect();
        if let Some((path, rule)) = refused.first() {
            let more = match refused.len() {
                1 => String::new(),
                n => format!(" (and {} more such paths)", n - 1),
            };
            return Err(RunnerError::Forbidden(format!(
                "`{}`{more} is on this project's auto-run list: {} — Sluice refuses changes to it \
                 through assistants, approved or not. Nothing was changed; the user can make this \
                 change themselves, or set the entry to ask in Sluice",
                sluice_core::text::visible_owned(path),
                sluice_core::text::visible_owned(&rule.consequence),
            )));
        }
        // A folder the list names (`.github/workflows`) says nothing more than the file below it
        // that the same rule covers: one line per thing that runs.
        // Descendants of `path` sort after `path/` (not necessarily right after: `a/b-x` sorts
        // between `a/b` and `a/b/c`), so a range scan that stops at the first match stays cheap
        // for a folder of thousands of entries.
        let shown: Vec<(&String, &&AutoRunRule)> = hits
            .iter()
            .filter(|(path, rule)| {
                let prefix = format!("{path}/");
                !hits
                    .range(prefix.clone()..)
                    .take_while(|(other, _)| other.starts_with(&prefix))
                    .any(|(_, r)| r.pattern == rule.pattern)
            })
            .collect();
        Ok(shown
            .into_iter()
            .map(|(path, rule)| AutoRunHit {
                path: sluice_core::text::visible_owned(path),
                program: sluice_core::text::visible_owned(&rule.program),
                consequence: sluice_core::text::visible_owned(&rule.consequence),
            })
            .collect())
    }
}

impl Mutations {
    /// `state_dir` is a folder in Sluice's data folder reserved for this project (never inside
    /// the project). It is created owner-only if missing.
    pub fn open(
        ws: Arc<Workspace>,
        state_dir: &Path,
        limits: BackupLimits,
    ) -> Result<Mutations, RunnerError> {
        let store = Store::open(state_dir, limits)?;
        let canonical =
            std::fs::canonicalize(store.dir()).map_err(|e| RunnerError::State(e.kind()))?;
        let root = ws.root().path();
        if canonical.starts_with(root) || root.starts_with(&canonical) {
            return Err(RunnerError::Forbidden(
                "the project and Sluice's state folder overlap; choose another project folder"
                    .into(),
            ));
        }
        let mut protected = Vec::new();
        for dir in [Some(canonical.as_path()), canonical.parent()].into_iter().flatten() {
            if let Ok(meta) = std::fs::metadata(dir) {
                protected.push(file_id_of(&meta));
            }
        }
        let owner = u64::from_le_bytes(sluice_core::random_bytes::<8>());
        let checkpoints = crate::checkpoint::store::Store::open(state_dir)?;
        Ok(Mutations {
            ws,
            store,
            locks: locks::PathLocks::default(),
            protected,
            owner,
            checkpoints,
            checkpoint_lock: Mutex::new(()),
            checkpoint_limits: Default::default(),
        })
    }

    /// Other bounds for this project's checkpoints than the defaults.
    pub fn with_checkpoint_limits(mut self, limits: crate::CheckpointLimits) -> Mutations {
        self.checkpoint_limits = limits;
        self
    }

    pub(crate) fn checkpoints(&self) -> &crate::checkpoint::store::Store {
        &self.checkpoints
    }

    pub(crate) fn checkpoint_limits(&self) -> crate::CheckpointLimits {
        self.checkpoint_limits
    }

    pub(crate) fn checkpoint_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.checkpoint_lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.ws
    }

    /// Runs `f` holding the project's change lock, so no change made through Sluice lands in
    /// the project meanwhile (a git write changes the working tree outside this layer).
    pub fn exclusive<T>(&self, f: impl FnOnce() -> T) -> T {
        let _guard = self.locks.lock(locks::Footprint::whole());
        f()
    }

    /// Whether the change manager kept in `state_dir` has journals for [`Mutations::recover`]
    /// to look at: without any, no change was under way when the last engine stopped, and a
    /// start need not open the project at all. A folder it cannot read counts, so that opening
    /// it says why.
    pub fn needs_recovery(state_dir: &Path) -> bool {
        match std::fs::read_dir(state_dir.join("journal")) {
            Ok(mut entries) => entries.next().is_some(),
            Err(err) => err.kind() != std::io::ErrorKind::NotFound,
        }
    }

    /// Rolls back every commit a crash interrupted (its journal is still `prepared`) to the
    /// state before it, and marks the journal `rolled_back`. Never replays anything. Call once
    /// at startup, before serving tools ([`Mutations::needs_recovery`] says when it has nothing
    /// to do).
    pub fn recover(&self) -> Result<RecoveryReport, RunnerError> {
        let _guard = self.locks.lock(locks::Footprint::whole());
        let mut report = RecoveryReport::default();
        for mut record in self.store.open_journals()? {
            let conflicts = self.roll_back(&record, record.steps.len());
            record.status = Status::RolledBack;
            self.store.write_journal(&record)?;
            if conflicts.is_empty() {
                self.store.discard(&record.operation_id);
            }
            report.rolled_back.push(record.operation_id.clone());
            report.conflicts.extend(conflicts);
        }
        Ok(report)
    }

    /// Executes a plan made by this instance. Every target is re-resolved and compared with the
    /// plan first; any difference aborts with `Conflict` before anything changes.
    pub fn commit(&self, plan: &Plan) -> Result<MutationOutput, RunnerError> {
        self.commit_inner(plan, None)
    }

    /// Test hook for crash safety: runs the commit like [`Mutations::commit`] but stops dead
    /// after `steps` steps, leaving the journal `prepared` as a killed process would.
    #[doc(hidden)]
    pub fn commit_with_crash_after(
        &self,
        plan: &Plan,
        steps: usize,
    ) -> Result<MutationOutput, RunnerError> {
        self.commit_inner(plan, Some(Fault::CrashAfter(steps)))
    }

    /// Test hook for roll-back: step `step` fails as if the disk had refused it.
    #[doc(hidden)]
    pub fn commit_failing_at(
        &self,
        plan: &Plan,
        step: usize,
    ) -> Result<MutationOutput, RunnerError> {
        self.commit_inner(plan, Some(Fault::FailAt(step)))
    }

    /// Test hook for concurrency: runs the commit like [`Mutations::commit`], calling `pause`
    /// after the first step while the commit holds its locks.
    #[doc(hidden)]
    pub fn commit_pausing(
        &self,
        plan: &Plan,
        pause: &(dyn Fn() + Sync),
    ) -> Result<MutationOutput, RunnerError> {
        self.commit_inner(plan, Some(Fault::PauseAfterFirst(pause)))
    }

    fn commit_inner(
        &self,
        plan: &Plan,
        fault: Option<Fault<'_>>,
    ) -> Result<MutationOutput, RunnerError> {
        if plan.owner != self.owner {
            return Err(RunnerError::invalid("this plan was made for another project"));
        }
        // Every path a step changes; a folder's path covers what is inside it.
        let _guard =
            self.locks.lock(locks::Footprint::paths(plan.steps.iter().flat_map(Step::paths)));
        let op = new_operation_id();
        let exec = Exec { ws: &self.ws, store: &self.store, op: &op, max_file: MAX_TREE_BYTES };

        // Verify up front every step whose target is not produced by an earlier step, so a
        // stale plan changes nothing at all.
        let mut touched: HashSet<String> = HashSet::new();
        for step in &plan.steps {
            let paths = step.paths();
            let fresh = paths.iter().all(|p| {
                let r = RelPath::parse(p).ok();
                !touched.contains(*p)
                    && r.and_then(|r| r.parent()).is_none_or(|par| {
                        !touched
                            .iter()
                            .any(|t| RelPath::parse(t).is_ok_and(|t| par.starts_with(&t)))
                    })
            });
            if fresh {
                verify(&exec, step)?;
            }
            touched.extend(paths.into_iter().map(str::to_owned));
        }
        self.check_free_space(plan)?;

        let mut record = Record {
            version: 1,
            operation_id: op.clone(),
            tool: plan.tool.to_owned(),
            created_ms: now_ms(),
            status: Status::Prepared,
            steps: plan.steps.clone(),
            effects: plan.effects.clone(),
            blobs: Vec::new(),
        };
        self.store.begin(&record)?;
        for (idx, step) in plan.steps.iter().enumerate() {
            match fault {
                Some(Fault::CrashAfter(n)) if n == idx => {
                    return Err(RunnerError::State(std::io::ErrorKind::Interrupted));
                }
                Some(Fault::PauseAfterFirst(pause)) if idx == 1 => pause(),
                _ => {}
            }
            #[cfg(debug_assertions)]
            stall_point(idx);
            let content = plan.contents.get(idx).and_then(|c| c.as_deref()).map(Vec::as_slice);
            let result = match fault {
                Some(Fault::FailAt(n)) if n == idx => Err(RunnerError::WriteFailed {
                    path: step.paths()[0].to_owned(),
                    kind: std::io::ErrorKind::StorageFull,
                }),
                _ => exec.run(&mut record, idx, step, content),
            };
            if let Err(err) = result {
                let conflicts = self.roll_back(&record, idx + 1);
                record.status = Status::RolledBack;
                let _ = self.store.write_journal(&record);
                if conflicts.is_empty() {
                    self.store.discard(&op);
                }
                return Err(err);
            }
        }
        if let (Some(Fault::PauseAfterFirst(pause)), 1) = (fault, plan.steps.len()) {
            pause();
        }
        record.status = Status::Committed;
        self.store.finish(&record)?;
        self.store.prune()?;
        Ok(output(&record, &plan.steps))
    }
}

/// Debug builds only: `SLUICE_FAILPOINT_STALL_COMMIT_AFTER=N` makes every commit stop for good
/// after N steps, so an end-to-end test can kill the real process in the middle of a multi-file
/// change and check what the next start makes of it (PC-01, PE-03). Release builds do not
/// contain it.
#[cfg(debug_assertions)]
fn stall_point(idx: usize) {
    let stall_at = std::env::var("SLUICE_FAILPOINT_STALL_COMMIT_AFTER").ok();
    if stall_at.and_then(|v| v.parse::<usize>().ok()) == Some(idx) {
        loop {
            std::thread::park();
        }
    }
}

impl Mutations {
    /// Undoes steps `0..done` in reverse; returns the paths it had to leave alone.
    fn roll_back(&self, record: &Record, done: usize) -> Vec<String> {
        let exec = Exec {
            ws: &self.ws,
            store: &self.store,
            op: &record.operation_id,
            max_file: MAX_TREE_BYTES,
        };
        let mut conflicts = Vec::new();
        for idx in (0..done.min(record.steps.len())).rev() {
            conflicts.extend(exec.undo(record, idx, &record.steps[idx]));
        }
        conflicts
    }

    fn check_free_space(&self, plan: &Plan) -> Result<(), RunnerError> {
        let new_bytes: u64 = plan.contents.iter().flatten().map(|c| c.len() as u64).sum();
        let backup_bytes: u64 = plan.effects.iter().filter_map(|e| e.size_before).sum();
        let root = self.ws.root().open_dir(&RelPath::root())?;
        if let Some(free) = root.free_space()
            && free < new_bytes.saturating_add(MIN_FREE_BYTES)
        {
            return Err(RunnerError::LimitExceeded(format!(
                "the disk holding the project has less than {} MiB free after this write; \
                 nothing was changed",
                MIN_FREE_BYTES >> 20
            )));
        }
        if let Some(free) = fs_free(self.store.dir())
            && free < backup_bytes.saturating_add(MIN_FREE_BYTES)
        {
            return Err(RunnerError::LimitExceeded(format!(
                "the disk holding Sluice's backups has less than {} MiB free; nothing was changed",
                MIN_FREE_BYTES >> 20
            )));
        }
        Ok(())
    }

    /// Committed operations with their effects, newest first.
    pub fn list_backups(&self, args: &ListBackupsArgs) -> Result<ListBackupsOutput, RunnerError> {
        let filter = match &args.path {
            Some(p) => Some(self.ws.request(Some(p))?),
            None => None,
        };
        let limit = args.limit.unwrap_or(20).clamp(1, 100) as usize;
        let mut all = self.store.manifests()?.into_iter();
        if let Some(cursor) = &args.cursor {
            if all.clone().all(|r| &r.operation_id != cursor) {
                return Err(RunnerError::invalid("unknown cursor; start again without one"));
            }
            all.by_ref().find(|r| &r.operation_id == cursor);
        }
        let mut operations = Vec::new();
        let mut next_cursor = None;
        for rec in all {
            let matches = filter.as_ref().is_none_or(|f| {
                rec.steps
                    .iter()
                    .flat_map(|s| s.paths())
                    .any(|p| RelPath::parse(p).is_ok_and(|p| p.starts_with(f)))
            });
            if !matches {
                continue;
            }
            if operations.len() == limit {
                next_cursor = operations.last().map(|e: &BackupEntry| e.operation_id.clone());
                break;
            }
            operations.push(BackupEntry {
                operation_id: rec.operation_id.clone(),
                tool: rec.tool.clone(),
                created: humantime::format_rfc3339_seconds(
                    UNIX_EPOCH + std::time::Duration::from_millis(rec.created_ms),
                )
                .to_string(),
                effects: rec.effects.clone(),
                backup_bytes: rec.blobs.iter().map(|b| b.size).sum(),
            });
        }
        Ok(ListBackupsOutput { operations, next_cursor })
    }
}

fn verify(exec: &Exec<'_>, step: &Step) -> Result<(), RunnerError> {
    match step {
        Step::Write { path, parent, before, .. } | Step::Remove { path, parent, before } => {
            let (dir, name) = exec.reopen(path, *parent)?;
            exec.check(&dir, &name, before)
        }
        Step::Chmod { path, parent, before, .. } => {
            let (dir, name) = exec.reopen(path, *parent)?;
            exec.check(&dir, &name, before)
        }
        Step::Mkdir { path, parent, .. } | Step::Link { path, parent, .. } => {
            let (dir, name) = exec.reopen(path, *parent)?;
            exec.check(&dir, &name, &step::State::Absent)
        }
        Step::Rename { from, to, from_parent, to_parent, before_from, before_to } => {
            let (dir, name) = exec.reopen(from, *from_parent)?;
            exec.check(&dir, &name, before_from)?;
            let (dir, name) = exec.reopen(to, *to_parent)?;
            exec.check(&dir, &name, before_to)
        }
    }
}

fn output(record: &Record, steps: &[Step]) -> MutationOutput {
    let hash_of = |path: &str| {
        steps.iter().rev().find_map(|s| match s {
            Step::Write { path: p, new_hash, .. } if p == path => {
                Some(format!("blake3:{new_hash}"))
            }
            _ => None,
        })
    };
    let files = record
        .effects
        .iter()
        .map(|e| {
            let (action, moved_to) = match &e.kind {
                EffectKind::Create => ("created", None),
                EffectKind::Overwrite => ("overwritten", None),
                EffectKind::Delete => ("deleted", None),
                EffectKind::Move { to } => ("moved", Some(to.clone())),
                EffectKind::Mkdir => ("created_directory", None),
                EffectKind::Chmod { .. } => ("mode_changed", None),
            };
            let hash_after = match &e.kind {
                EffectKind::Create | EffectKind::Overwrite => hash_of(&e.path),
                EffectKind::Move { to } => hash_of(to),
                _ => None,
            };
            FileResult {
                path: e.path.clone(),
                action: action.to_owned(),
                moved_to,
                bytes_before: e.size_before,
                bytes_after: e.size_after,
                hash_after,
            }
        })
        .collect();
    let backups = record
        .blobs
        .iter()
        .map(|b| BackupRef {
            path: b.path.clone(),
            bytes: b.size,
            hash: format!("blake3:{}", b.hash),
        })
        .collect();
    MutationOutput {
        operation_id: record.operation_id.clone(),
        tool: record.tool.clone(),
        files,
        backups,
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// `op_` + 48 bits of milliseconds + 40 random bits, base32: unguessable and sorting by time.
fn new_operation_id() -> String {
    let mut bytes = [0u8; 11];
    bytes[..6].copy_from_slice(&now_ms().to_be_bytes()[2..]);
    bytes[6..].copy_from_slice(&sluice_core::random_bytes::<5>());
    format!("op_{}", sluice_core::id::base32(&bytes))
}

/// Accepts only ids of the form [`new_operation_id`] makes, so one can name a folder safely.
fn valid_operation_id(s: &str) -> bool {
    s.strip_prefix("op_").is_some_and(|rest| {
        !rest.is_empty()
            && rest.len() <= 32
            && rest.bytes().all(|b| b"0123456789abcdefghjkmnpqrstvwxyz".contains(&b))
    })
}

#[cfg(unix)]
fn file_id_of(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    FileId { dev: meta.dev(), ino: meta.ino() }
}

#[cfg(not(unix))]
fn file_id_of(_meta: &std::fs::Metadata) -> FileId {
    // No stable file index through `std`; the path-overlap check in `open` is what applies.
    FileId { dev: u64::MAX, ino: u64::MAX }
}

#[cfg(unix)]
fn fs_free(path: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(path).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

#[cfg(not(unix))]
fn fs_free(_path: &Path) -> Option<u64> {
    None
}
