//! The planners: one per tool, each turning arguments into resolved, verified [`Step`]s and the
//! [`Effect`]s a person approves. Nothing here changes the disk. This module holds what they
//! share: resolving a target, the protected-path check, folder scans and the plan builder.

mod apply_patch;
mod create_directory;
mod delete_path;
mod edit_file;
mod move_path;
mod restore;
mod restore_checkpoint;
mod write_file;

use std::collections::HashSet;
use std::sync::Arc;

use sluice_guard::{DirHandle, EntryKind, GuardError, RelPath};

use super::action::{observe, parse_expected};
use super::args::*;
use super::step::{Ident, State, Step, hex_hash};
use super::{MAX_TREE_BYTES, MAX_TREE_ENTRIES, MAX_WRITE_BYTES, Mutations, Plan};
use crate::RunnerError;

/// Mode of files Sluice creates. Explicit (not umask-filtered) so the result is predictable.
const NEW_FILE_MODE: u32 = 0o644;
const NEW_DIR_MODE: u32 = 0o755;
const MAX_EDITS: usize = 100;

/// A resolved target: where it is, what is there, and which folders are missing above it.
pub(crate) struct Target {
    pub requested: RelPath,
    pub resolved: RelPath,
    pub dir: Option<DirHandle>,
    pub parent_id: Option<Ident>,
    pub state: State,
    pub content: Option<Vec<u8>>,
    /// Folders to create, outermost first (resolved paths), and the identity of the existing
    /// folder the first of them goes into.
    pub missing_dirs: Vec<RelPath>,
    pub base_id: Option<Ident>,
}

/// Collects steps with their contents and effects, and the paths the plan touches besides its
/// steps' own (for the auto-run list: what the client asked for, and what lands where inside a
/// moved folder).
#[derive(Default)]
struct Builder {
    steps: Vec<Step>,
    contents: Vec<Option<Arc<Vec<u8>>>>,
    effects: Vec<Effect>,
    planned_dirs: HashSet<RelPath>,
    touched: Vec<RelPath>,
}

impl Builder {
    /// Records a target's requested and resolved paths: a program reads a file by the path it
    /// knows, which may go through an in-project link to where the change lands.
    fn saw(&mut self, t: &Target) {
        self.touched.push(t.requested.clone());
        self.touched.push(t.resolved.clone());
    }

    /// Records every entry of a folder's `tree` (resolved paths below `from.resolved`) under
    /// the folder's requested path, and under `to`'s requested and resolved paths when the
    /// folder moves there.
    fn saw_tree(&mut self, from: &Target, tree: &[(RelPath, State, Ident)], to: Option<&Target>) {
        for (path, _, _) in tree {
            let Some(rel) = path.strip_prefix(&from.resolved) else { continue };
            let mut bases = vec![&from.requested, &from.resolved];
            if let Some(to) = to {
                bases.extend([&to.requested, &to.resolved]);
            }
            for base in bases {
                if let Some(p) = under(base, rel) {
                    self.touched.push(p);
                }
            }
        }
    }

    fn plan(self, m: &Mutations, tool: &'static str) -> Result<Plan, RunnerError> {
        Plan::new(m, tool, self.steps, self.contents, self.effects, self.touched)
    }

    fn push(&mut self, step: Step, content: Option<Vec<u8>>) {
        self.steps.push(step);
        self.contents.push(content.map(Arc::new));
    }

    /// Mkdir steps for a target's missing folders (once per folder across the plan).
    fn mkdirs(&mut self, t: &Target) {
        for (idx, dir) in t.missing_dirs.iter().enumerate() {
            if !self.planned_dirs.insert(dir.clone()) {
                continue;
            }
            let parent = if idx == 0 { t.base_id } else { None };
            self.push(
                Step::Mkdir { path: dir.as_str().to_owned(), parent, mode: NEW_DIR_MODE },
                None,
            );
            self.effects.push(effect(dir, EffectKind::Mkdir, None, None, false));
        }
    }

    /// The parent identity for a step on `t`: `None` when this plan creates the folder.
    fn parent(t: &Target) -> Option<Ident> {
        if t.missing_dirs.is_empty() { t.parent_id } else { None }
    }

    fn write(&mut self, t: &Target, bytes: Vec<u8>, mode: u32) {
        self.saw(t);
        self.mkdirs(t);
        let step = Step::Write {
            path: t.resolved.as_str().to_owned(),
            parent: Self::parent(t),
            before: t.state.clone(),
            new_hash: hex_hash(&bytes),
            new_size: bytes.len() as u64,
            mode,
        };
        self.push(step, Some(bytes));
    }
}

/// `base/rel` (`base` itself for an empty `rel`).
fn under(base: &RelPath, rel: &str) -> Option<RelPath> {
    if rel.is_empty() {
        return Some(base.clone());
    }
    RelPath::parse(&format!("{}/{rel}", base.as_str())).ok()
}

fn effect(
    path: &RelPath,
    kind: EffectKind,
    size_before: Option<u64>,
    size_after: Option<u64>,
    restorable: bool,
) -> Effect {
    Effect { path: path.to_string(), kind, size_before, size_after, files_in_dir: None, restorable }
}

fn is_link_error(path: &RelPath) -> RunnerError {
    RunnerError::Guard(GuardError::WrongKind {
        path: path.to_string(),
        expected: "a regular file (Sluice never writes through symbolic links; change the file \
                   the link points to)",
        found: EntryKind::Symlink.describe(),
    })
}

fn not_a_file(path: &RelPath, state: &State) -> RunnerError {
    match state {
        State::Link { .. } => is_link_error(path),
        State::Absent => RunnerError::Guard(GuardError::NotFound { path: path.to_string() }),
        _ => RunnerError::Guard(GuardError::WrongKind {
            path: path.to_string(),
            expected: "a regular file",
            found: EntryKind::Dir.describe(),
        }),
    }
}

/// Compares a client's expected hash with the file's.
fn check_expected(path: &RelPath, expected: &str, state: &State) -> Result<(), RunnerError> {
    let want = parse_expected(expected)?;
    match state {
        State::File { hash, .. } if *hash == want => Ok(()),
        State::File { hash, .. } => Err(RunnerError::Conflict(format!(
            "`{path}` changed since you read it (expected_hash blake3:{}…, now blake3:{}…); \
             read_file to get the current content and hash, then retry",
            &want[..12],
            &hash[..12]
        ))),
        other => Err(not_a_file(path, other)),
    }
}

impl Mutations {
    /// Resolves a client path for a mutation: lexical checks, the shield on the requested and
    /// the resolved path, Sluice's own state folder, then the current state of the target.
    pub(crate) fn target(
        &self,
        input: &str,
        keep_content: bool,
        allow_missing_parent: bool,
    ) -> Result<Target, RunnerError> {
        let requested = self.ws.request(Some(input))?;
        if requested.is_root() {
            return Err(RunnerError::invalid("the project root itself cannot be changed"));
        }
        let root = self.ws.root();
        let (resolved, dir, missing_dirs, base_id) = match root.open_parent(&requested) {
            Ok((dir, name)) => (dir.rel_path().join(&name)?, Some(dir), Vec::new(), None),
            Err(GuardError::NotFound { .. }) => {
                let missing = self.resolve_missing(&requested)?;
                // The shield goes first, so a refusal does not depend on whether folders exist
                // (a link into `.git/` must not probe which of its folders are there).
                self.ws.check_resolved(&requested, &missing.0)?;
                if !allow_missing_parent {
                    let parent = requested.parent().unwrap_or_else(RelPath::root);
                    return Err(RunnerError::Guard(GuardError::NotFound {
                        path: parent.to_string(),
                    }));
                }
                missing
            }
            Err(e) => return Err(e.into()),
        };
        self.ws.check_resolved(&requested, &resolved)?;
        for dir in &missing_dirs {
            self.ws.check_resolved(&requested, dir)?;
        }
        self.check_protected(&requested, &resolved)?;
        let max = if keep_content { MAX_WRITE_BYTES } else { MAX_TREE_BYTES };
        let (state, content, parent_id) = match &dir {
            Some(d) => {
                let name = resolved.file_name().unwrap_or_default();
                let (state, content) = observe(d, name, keep_content, max)?;
                (state, content, Some(Ident::from(d.id()?)))
            }
            None => (State::Absent, None, None),
        };
        Ok(Target { requested, resolved, dir, parent_id, state, content, missing_dirs, base_id })
    }

    /// For `create_parents`: the deepest existing ancestor (links inside the project followed),
    /// and the folders below it that would have to be created.
    #[allow(clippy::type_complexity)]
    fn resolve_missing(
        &self,
        requested: &RelPath,
    ) -> Result<(RelPath, Option<DirHandle>, Vec<RelPath>, Option<Ident>), RunnerError> {
        let comps: Vec<&str> = requested.components().collect();
        for keep in (0..comps.len().saturating_sub(1)).rev() {
            let ancestor = RelPath::parse(&comps[..keep].join("/"))?;
            match self.ws.root().open_dir(&ancestor) {
                Ok(base) => {
                    let mut cur = base.rel_path().clone();
                    let mut missing = Vec::new();
                    for comp in &comps[keep..comps.len() - 1] {
                        cur = cur.join(comp)?;
                        missing.push(cur.clone());
                    }
                    let resolved = cur.join(comps[comps.len() - 1])?;
                    return Ok((resolved, None, missing, Some(Ident::from(base.id()?))));
                }
                Err(GuardError::NotFound { .. }) => continue,
                Err(e) => return Err(RunnerError::Guard(e)),
            }
        }
        Err(RunnerError::Guard(GuardError::NotFound { path: requested.to_string() }))
    }

    /// Refuses a target inside Sluice's own state folder, by identity of every folder above it.
    fn check_protected(&self, requested: &RelPath, resolved: &RelPath) -> Result<(), RunnerError> {
        let root = self.ws.root();
        let mut prefixes = vec![RelPath::root()];
        prefixes.extend(resolved.ancestors().filter_map(|a| RelPath::parse(a).ok()));
        prefixes.push(resolved.clone());
        for prefix in prefixes {
            match root.metadata(&prefix) {
                Ok(meta) if self.protected.contains(&meta.id) => {
                    return Err(RunnerError::Forbidden(format!(
                        "`{requested}` is inside Sluice's own data folder; Sluice never changes \
                         its settings, state or backups through its tools"
                    )));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Lists a folder's tree without following links (handle to handle), bounded, refusing
    /// shielded entries, special files and Sluice's own folders. Pre-order, with each entry's
    /// folder identity.
    fn scan(&self, t: &Target) -> Result<Vec<(RelPath, State, Ident)>, RunnerError> {
        let (Some(parent), State::Dir { id, .. }) = (&t.dir, &t.state) else {
            return Ok(Vec::new());
        };
        let name = t.resolved.file_name().unwrap_or_default();
        let top = parent.open_subdir(name)?;
        if Ident::from(top.id()?) != *id {
            return Err(RunnerError::Conflict(format!(
                "`{}` was replaced while it was being read; retry",
                t.requested
            )));
        }
        let mut out = Vec::new();
        let mut bytes = 0u64;
        let mut stack = vec![top];
        while let Some(dir) = stack.pop() {
            let dir_id = Ident::from(dir.id()?);
            if self.protected.contains(&dir.id()?) {
                return Err(RunnerError::Forbidden(format!(
                    "`{}` contains Sluice's own data folder",
                    t.requested
                )));
            }
            let mut entries = dir.entries()?;
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            for entry in entries {
                let path = dir.rel_path().join(&entry.name)?;
                if self.ws.shield().is_shielded(&path) {
                    return Err(RunnerError::Guard(GuardError::Shielded {
                        path: path.to_string(),
                    }));
                }
                if out.len() >= MAX_TREE_ENTRIES {
                    return Err(RunnerError::LimitExceeded(format!(
                        "`{}` has more than {MAX_TREE_ENTRIES} entries; delete or move smaller \
                         parts of it",
                        t.requested
                    )));
                }
                let (state, _) = observe(&dir, &entry.name, false, MAX_TREE_BYTES - bytes)?;
                bytes += state.size().unwrap_or(0);
                if let State::Dir { .. } = state {
                    stack.push(dir.open_subdir(&entry.name)?);
                }
                out.push((path, state, dir_id));
            }
        }
        // The stack walk is depth-first but not pre-order across siblings; sorting by path
        // makes every folder precede its contents.
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

/// The step that removes `t`, as it was seen.
fn remove(t: &Target) -> Step {
    Step::Remove {
        path: t.resolved.as_str().to_owned(),
        parent: t.parent_id,
        before: t.state.clone(),
    }
}

/// Permission bits kept from a replaced file. Set-uid, set-gid and sticky bits are dropped:
/// content written by an assistant must never inherit elevated execution rights.
fn preserved_mode(mode: u32) -> u32 {
    mode & 0o777
}

/// Names the file of a multi-file patch in its error (`file 3 (src/x.rs): …`).
fn prefix_error(e: RunnerError, n: usize, path: &str) -> RunnerError {
    let shown = sluice_core::text::visible_owned(path);
    let pre = if n == 0 { format!("{shown}: ") } else { format!("patch file {n} ({shown}): ") };
    match e {
        RunnerError::InvalidArgument(m) => RunnerError::InvalidArgument(format!("{pre}{m}")),
        RunnerError::Conflict(m) => RunnerError::Conflict(format!("{pre}{m}")),
        RunnerError::TooLarge(m) => RunnerError::TooLarge(format!("{pre}{m}")),
        other => other,
    }
}
