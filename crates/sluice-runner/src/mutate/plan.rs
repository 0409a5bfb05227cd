//! The planners: one per tool, each turning arguments into resolved, verified [`Step`]s and the
//! [`Effect`]s a person approves. Nothing here changes the disk.

use std::collections::HashSet;
use std::sync::Arc;

use sluice_guard::{DirHandle, EntryKind, GuardError, RelPath};

use super::action::{Ident, State, Step, hex_hash, observe, parse_expected, rel};
use super::args::*;
use super::patch::{self, FileOp};
use super::store::Store;
use super::text;
use super::{
    MAX_PATCH_BYTES, MAX_PATCH_FILES, MAX_TREE_BYTES, MAX_TREE_ENTRIES, MAX_WRITE_BYTES, Mutations,
    Plan, valid_operation_id,
};
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

    pub fn plan_write_file(&self, args: &WriteFileArgs) -> Result<Plan, RunnerError> {
        if args.content.len() as u64 > MAX_WRITE_BYTES {
            return Err(RunnerError::TooLarge(format!(
                "content is {} bytes, over the {MAX_WRITE_BYTES}-byte limit of write_file",
                args.content.len()
            )));
        }
        let t = self.target(&args.path, false, args.create_parents).map_err(|e| {
            match (&e, args.create_parents) {
                (RunnerError::Guard(GuardError::NotFound { path }), false) => {
                    RunnerError::Missing(format!(
                        "the folder `{path}` does not exist; set create_parents to create it, \
                         or list_directory to see what exists"
                    ))
                }
                _ => e,
            }
        })?;
        let mut b = Builder::default();
        let bytes = args.content.as_bytes().to_vec();
        let size_after = Some(bytes.len() as u64);
        match &t.state {
            State::Absent => {
                if args.expected_hash.is_some() {
                    return Err(RunnerError::Conflict(format!(
                        "`{}` does not exist but expected_hash was given; omit expected_hash to \
                         create it, or list_directory to find the file",
                        t.requested
                    )));
                }
                b.write(&t, bytes, NEW_FILE_MODE);
                b.effects.push(effect(&t.resolved, EffectKind::Create, None, size_after, true));
            }
            State::File { size, mode, .. } => {
                let Some(expected) = &args.expected_hash else {
                    return Err(RunnerError::Conflict(format!(
                        "`{}` already exists; to replace it pass expected_hash (read_file \
                         returns it), or use edit_file",
                        t.requested
                    )));
                };
                check_expected(&t.requested, expected, &t.state)?;
                b.write(&t, bytes, preserved_mode(*mode));
                b.effects.push(effect(
                    &t.resolved,
                    EffectKind::Overwrite,
                    Some(*size),
                    size_after,
                    true,
                ));
            }
            other => return Err(not_a_file(&t.requested, other)),
        }
        b.plan(self, "write_file")
    }

    pub fn plan_edit_file(&self, args: &EditFileArgs) -> Result<Plan, RunnerError> {
        if args.edits.is_empty() || args.edits.len() > MAX_EDITS {
            return Err(RunnerError::invalid(format!("give 1 to {MAX_EDITS} edits")));
        }
        let t = self.target(&args.path, true, false)?;
        let State::File { size, mode, .. } = &t.state else {
            return Err(not_a_file(&t.requested, &t.state));
        };
        if let Some(expected) = &args.expected_hash {
            check_expected(&t.requested, expected, &t.state)?;
        }
        let raw = t.content.as_deref().unwrap_or_default();
        let shown = t.requested.to_string();
        let (decoded, enc) = text::decode(raw, &shown)?;
        let edited = text::apply_edits(&shown, &decoded, &args.edits)?;
        let bytes = text::encode(&edited, enc);
        if bytes == raw {
            return Err(RunnerError::invalid(format!("the edits leave `{shown}` unchanged")));
        }
        if bytes.len() as u64 > MAX_WRITE_BYTES {
            return Err(RunnerError::TooLarge(format!(
                "the edited `{shown}` would be over the {MAX_WRITE_BYTES}-byte limit"
            )));
        }
        let mut b = Builder::default();
        let size_after = Some(bytes.len() as u64);
        b.write(&t, bytes, preserved_mode(*mode));
        b.effects.push(effect(&t.resolved, EffectKind::Overwrite, Some(*size), size_after, true));
        b.plan(self, "edit_file")
    }

    pub fn plan_create_directory(&self, args: &CreateDirectoryArgs) -> Result<Plan, RunnerError> {
        let t = self.target(&args.path, false, args.parents)?;
        if t.state != State::Absent {
            return Err(RunnerError::Conflict(format!("`{}` already exists", t.requested)));
        }
        let mut b = Builder::default();
        b.saw(&t);
        b.mkdirs(&t);
        b.push(
            Step::Mkdir {
                path: t.resolved.as_str().to_owned(),
                parent: Builder::parent(&t),
                mode: NEW_DIR_MODE,
            },
            None,
        );
        b.effects.push(effect(&t.resolved, EffectKind::Mkdir, None, None, true));
        b.plan(self, "create_directory")
    }

    pub fn plan_delete_path(&self, args: &DeletePathArgs) -> Result<Plan, RunnerError> {
        let t = self.target(&args.path, false, false)?;
        let mut b = Builder::default();
        b.saw(&t);
        match &t.state {
            State::Absent => {
                return Err(RunnerError::Guard(GuardError::NotFound {
                    path: t.requested.to_string(),
                }));
            }
            State::Dir { .. } => {
                let tree = self.scan(&t)?;
                if !tree.is_empty() && !args.recursive {
                    return Err(RunnerError::invalid(format!(
                        "`{}` is a folder with {} entries; set recursive to delete it with \
                         everything in it",
                        t.requested,
                        tree.len()
                    )));
                }
                let bytes: u64 = tree.iter().filter_map(|(_, s, _)| s.size()).sum();
                b.saw_tree(&t, &tree, None);
                for (path, state, parent) in tree.iter().rev() {
                    let step = Step::Remove {
                        path: path.as_str().to_owned(),
                        parent: Some(*parent),
                        before: state.clone(),
                    };
                    b.push(step, None);
                }
                b.push(
                    Step::Remove {
                        path: t.resolved.as_str().to_owned(),
                        parent: t.parent_id,
                        before: t.state.clone(),
                    },
                    None,
                );
                let mut e = effect(&t.resolved, EffectKind::Delete, Some(bytes), None, true);
                e.files_in_dir = Some(tree.len() as u64);
                b.effects.push(e);
            }
            State::File { .. } | State::Link { .. } => {
                b.push(
                    Step::Remove {
                        path: t.resolved.as_str().to_owned(),
                        parent: t.parent_id,
                        before: t.state.clone(),
                    },
                    None,
                );
                b.effects.push(effect(&t.resolved, EffectKind::Delete, t.state.size(), None, true));
            }
        }
        b.plan(self, "delete_path")
    }

    pub fn plan_move_path(&self, args: &MovePathArgs) -> Result<Plan, RunnerError> {
        let from = self.target(&args.from, false, false)?;
        let to = self.target(&args.to, false, false)?;
        if from.state == State::Absent {
            return Err(RunnerError::Guard(GuardError::NotFound {
                path: from.requested.to_string(),
            }));
        }
        if to.resolved.starts_with(&from.resolved) || from.resolved.starts_with(&to.resolved) {
            return Err(RunnerError::invalid(format!(
                "cannot move `{}` to `{}`: one contains the other",
                from.requested, to.requested
            )));
        }
        let same = match (&from.state, &to.state) {
            (State::File { id: a, .. }, State::File { id: b, .. }) => a == b,
            (State::Dir { id: a, .. }, State::Dir { id: b, .. }) => a == b,
            _ => false,
        };
        if same {
            return Err(RunnerError::invalid(format!(
                "`{}` and `{}` are the same file (a hard link, or names differing only in case \
                 on a case-insensitive disk)",
                from.requested, to.requested
            )));
        }
        let mut b = Builder::default();
        b.saw(&from);
        b.saw(&to);
        let mut files_in_dir = None;
        let mut size = from.state.size();
        if let State::Dir { .. } = from.state {
            // Everything inside leaves its path and lands below the destination: both count.
            let tree = self.scan(&from)?;
            b.saw_tree(&from, &tree, Some(&to));
            files_in_dir = Some(tree.len() as u64);
            size = Some(tree.iter().filter_map(|(_, s, _)| s.size()).sum());
        }
        match &to.state {
            State::Absent => {}
            State::File { size: to_size, .. } => {
                let (true, Some(expected)) = (args.overwrite, &args.expected_hash) else {
                    return Err(RunnerError::Conflict(format!(
                        "`{}` already exists; to replace it set overwrite and pass its \
                         expected_hash (read_file returns it)",
                        to.requested
                    )));
                };
                if !matches!(from.state, State::File { .. }) {
                    return Err(RunnerError::Conflict(format!(
                        "`{}` already exists and only a file may replace a file",
                        to.requested
                    )));
                }
                check_expected(&to.requested, expected, &to.state)?;
                b.effects.push(effect(
                    &to.resolved,
                    EffectKind::Overwrite,
                    Some(*to_size),
                    size,
                    true,
                ));
            }
            _ => {
                return Err(RunnerError::Conflict(format!(
                    "`{}` already exists and is not a regular file; Sluice does not replace \
                     folders or links",
                    to.requested
                )));
            }
        }
        b.push(
            Step::Rename {
                from: from.resolved.as_str().to_owned(),
                to: to.resolved.as_str().to_owned(),
                from_parent: from.parent_id,
                to_parent: to.parent_id,
                before_from: from.state.clone(),
                before_to: to.state.clone(),
            },
            None,
        );
        let mut e = effect(
            &from.resolved,
            EffectKind::Move { to: to.resolved.to_string() },
            size,
            size,
            true,
        );
        e.files_in_dir = files_in_dir;
        b.effects.insert(0, e);
        b.plan(self, "move_path")
    }

    pub fn plan_apply_patch(&self, args: &ApplyPatchArgs) -> Result<Plan, RunnerError> {
        if args.patch.len() > MAX_PATCH_BYTES {
            return Err(RunnerError::TooLarge(format!(
                "the patch is {} bytes, over the {MAX_PATCH_BYTES}-byte limit; split it",
                args.patch.len()
            )));
        }
        let files = patch::parse(&args.patch).map_err(RunnerError::InvalidArgument)?;
        if files.is_empty() {
            return Err(RunnerError::invalid("the patch contains no file changes"));
        }
        if files.len() > MAX_PATCH_FILES {
            return Err(RunnerError::LimitExceeded(format!(
                "the patch touches {} files, over the limit of {MAX_PATCH_FILES}; split it",
                files.len()
            )));
        }
        let mut b = Builder::default();
        // Two entries of the patch may not reach the same file: by resolved path (compared
        // case-insensitively, since the disk may be) or by identity (hard links).
        let mut seen_paths: HashSet<String> = HashSet::new();
        let mut seen_ids: HashSet<Ident> = HashSet::new();
        let mut claim = |t: &Target| -> Result<(), RunnerError> {
            let key = t.resolved.as_str().to_lowercase();
            let id = match &t.state {
                State::File { id, .. } | State::Dir { id, .. } | State::Link { id, .. } => {
                    Some(*id)
                }
                State::Absent => None,
            };
            if !seen_paths.insert(key) || id.is_some_and(|id| !seen_ids.insert(id)) {
                return Err(RunnerError::invalid(format!(
                    "the patch changes `{}` twice (directly, through a link, a hard link or a \
                     name differing only in case); combine those changes",
                    t.requested
                )));
            }
            Ok(())
        };
        for (n, file) in files.iter().enumerate() {
            let ctx = |e: RunnerError| prefix_error(e, n + 1, file.op.path());
            match &file.op {
                FileOp::Add { path } => {
                    let t = self.target(path, false, true).map_err(ctx)?;
                    claim(&t).map_err(ctx)?;
                    if t.state != State::Absent {
                        return Err(ctx(RunnerError::Conflict(format!(
                            "`{}` already exists; use an update hunk for it",
                            t.requested
                        ))));
                    }
                    let content = patch::new_file_content(&file.hunks)
                        .map_err(|e| ctx(RunnerError::InvalidArgument(e)))?;
                    let bytes = content.into_bytes();
                    let size = Some(bytes.len() as u64);
                    b.write(&t, bytes, NEW_FILE_MODE);
                    b.effects.push(effect(&t.resolved, EffectKind::Create, None, size, true));
                }
                FileOp::Delete { path } => {
                    let t = self.target(path, true, false).map_err(ctx)?;
                    claim(&t).map_err(ctx)?;
                    let State::File { size, .. } = &t.state else {
                        return Err(ctx(not_a_file(&t.requested, &t.state)));
                    };
                    b.saw(&t);
                    if !file.hunks.is_empty() {
                        let (old, enc) =
                            text::decode(t.content.as_deref().unwrap_or_default(), path)
                                .map_err(ctx)?;
                        let rest = patch::apply(&old, &file.hunks)
                            .map_err(|e| ctx(RunnerError::InvalidArgument(e)))?;
                        let _ = enc;
                        if !rest.is_empty() {
                            return Err(ctx(RunnerError::Conflict(format!(
                                "the deletion of `{}` does not match its current content; \
                                 read_file and regenerate the patch",
                                t.requested
                            ))));
                        }
                    }
                    b.push(
                        Step::Remove {
                            path: t.resolved.as_str().to_owned(),
                            parent: t.parent_id,
                            before: t.state.clone(),
                        },
                        None,
                    );
                    b.effects.push(effect(
                        &t.resolved,
                        EffectKind::Delete,
                        Some(*size),
                        None,
                        true,
                    ));
                }
                FileOp::Update { path, move_to } => {
                    let t = self.target(path, true, false).map_err(ctx)?;
                    claim(&t).map_err(ctx)?;
                    let State::File { size, mode, .. } = &t.state else {
                        return Err(ctx(not_a_file(&t.requested, &t.state)));
                    };
                    let raw = t.content.as_deref().unwrap_or_default();
                    let (old, enc) = text::decode(raw, path).map_err(ctx)?;
                    let new = patch::apply(&old, &file.hunks)
                        .map_err(|e| ctx(RunnerError::InvalidArgument(e)))?;
                    let bytes = text::encode(&new, enc);
                    if bytes.len() as u64 > MAX_WRITE_BYTES {
                        return Err(ctx(RunnerError::TooLarge(format!(
                            "the patched file would be over the {MAX_WRITE_BYTES}-byte limit"
                        ))));
                    }
                    let size_after = Some(bytes.len() as u64);
                    match move_to {
                        None => {
                            b.write(&t, bytes, preserved_mode(*mode));
                            b.effects.push(effect(
                                &t.resolved,
                                EffectKind::Overwrite,
                                Some(*size),
                                size_after,
                                true,
                            ));
                        }
                        Some(dest) => {
                            let d = self.target(dest, false, true).map_err(ctx)?;
                            claim(&d).map_err(ctx)?;
                            if d.state != State::Absent {
                                return Err(ctx(RunnerError::Conflict(format!(
                                    "the move destination `{}` already exists",
                                    d.requested
                                ))));
                            }
                            b.write(&d, bytes, preserved_mode(*mode));
                            b.saw(&t);
                            b.push(
                                Step::Remove {
                                    path: t.resolved.as_str().to_owned(),
                                    parent: t.parent_id,
                                    before: t.state.clone(),
                                },
                                None,
                            );
                            b.effects.push(effect(
                                &t.resolved,
                                EffectKind::Move { to: d.resolved.to_string() },
                                Some(*size),
                                size_after,
                                true,
                            ));
                        }
                    }
                }
            }
        }
        b.plan(self, "apply_patch")
    }

    pub fn plan_restore(&self, args: &RestoreArgs) -> Result<Plan, RunnerError> {
        let op = args.operation_id.trim();
        if !valid_operation_id(op) {
            return Err(RunnerError::invalid(
                "operation_id must look like `op_…`, as returned by a change or list_backups",
            ));
        }
        let Some(record) = self.store.load_manifest(op)? else {
            return Err(RunnerError::Missing(format!(
                "there is no backup for {op} (it may have been pruned); list_backups shows what \
                 can be restored"
            )));
        };
        let blob = |idx: usize, role: &str, state: &State| -> Result<Vec<u8>, RunnerError> {
            let State::File { hash, .. } = state else { return Ok(Vec::new()) };
            self.store.load_blob(op, &Store::blob_name(idx, role), hash).map_err(|_| {
                RunnerError::Conflict(format!(
                    "the backup of {op} is damaged; it cannot be restored"
                ))
            })
        };
        let mut b = Builder::default();
        for (idx, step) in record.steps.iter().enumerate().rev() {
            match step {
                Step::Write { path, before, new_hash, .. } => {
                    let t = self.restore_target(path, op)?;
                    b.saw(&t);
                    match &t.state {
                        State::File { hash, .. } if hash == new_hash => {}
                        _ => return Err(changed_since(&t.resolved, op)),
                    }
                    if let State::File { mode, .. } = before {
                        let bytes = blob(idx, "target", before)?;
                        b.write(&t, bytes, *mode);
                    } else {
                        b.push(remove(&t), None);
                    }
                }
                Step::Mkdir { path, .. } => {
                    let t = self.restore_target(path, op)?;
                    b.saw(&t);
                    if !matches!(t.state, State::Dir { .. }) {
                        return Err(changed_since(&t.resolved, op));
                    }
                    b.push(remove(&t), None);
                }
                Step::Link { path, target, .. } => {
                    let t = self.restore_target(path, op)?;
                    b.saw(&t);
                    if !matches!(&t.state, State::Link { target: now, .. } if now == target) {
                        return Err(changed_since(&t.resolved, op));
                    }
                    b.push(remove(&t), None);
                }
                Step::Remove { path, before, .. } => {
                    let t = self.restore_target(path, op)?;
                    b.saw(&t);
                    if t.state != State::Absent {
                        return Err(changed_since(&t.resolved, op));
                    }
                    let parent = Builder::parent(&t);
                    let path = t.resolved.as_str().to_owned();
                    match before {
                        State::File { mode, .. } => {
                            let bytes = blob(idx, "target", before)?;
                            b.write(&t, bytes, *mode);
                        }
                        State::Dir { mode, .. } => {
                            b.push(Step::Mkdir { path, parent, mode: *mode }, None);
                        }
                        State::Link { target, .. } => {
                            b.push(Step::Link { path, parent, target: target.clone() }, None);
                        }
                        State::Absent => {}
                    }
                }
                Step::Rename { from, to, before_from, before_to, .. } => {
                    let f = self.restore_target(from, op)?;
                    let t = self.restore_target(to, op)?;
                    b.saw(&f);
                    b.saw(&t);
                    if let State::Dir { .. } = t.state {
                        // The folder's contents land back at their old paths.
                        let tree = self.scan(&t)?;
                        b.saw_tree(&t, &tree, Some(&f));
                    }
                    let moved = match (&t.state, before_from) {
                        (State::Dir { id: a, .. }, State::Dir { id: b, .. }) => a == b,
                        (State::File { hash: a, .. }, State::File { hash: b, .. }) => a == b,
                        (State::Link { target: a, .. }, State::Link { target: b, .. }) => a == b,
                        _ => false,
                    };
                    if !moved || f.state != State::Absent {
                        return Err(changed_since(&t.resolved, op));
                    }
                    b.push(
                        Step::Rename {
                            from: t.resolved.as_str().to_owned(),
                            to: f.resolved.as_str().to_owned(),
                            from_parent: t.parent_id,
                            to_parent: Builder::parent(&f),
                            before_from: t.state.clone(),
                            before_to: State::Absent,
                        },
                        None,
                    );
                    if let State::File { mode, .. } = before_to {
                        let bytes = blob(idx, "to", before_to)?;
                        let gone = Target { state: State::Absent, parent_id: None, ..t };
                        b.write(&gone, bytes, *mode);
                    }
                }
            }
        }
        b.effects = generic_effects(&b.steps);
        b.plan(self, "restore")
    }

    /// A path recorded in a manifest, resolved again (and shield-checked again, since the
    /// project's shield list may have changed since).
    fn restore_target(&self, path: &str, op: &str) -> Result<Target, RunnerError> {
        let r = rel(path)?;
        self.ws.shield().check(&r)?;
        match self.target(path, false, false) {
            Ok(t) => Ok(t),
            // The folder is missing: an earlier step of this restore re-creates it.
            Err(RunnerError::Guard(GuardError::NotFound { .. })) => Ok(Target {
                requested: r.clone(),
                resolved: r,
                dir: None,
                parent_id: None,
                state: State::Absent,
                content: None,
                missing_dirs: Vec::new(),
                base_id: None,
            }),
            Err(e) => Err(prefix_error(e, 0, op)),
        }
    }
}

fn remove(t: &Target) -> Step {
    Step::Remove {
        path: t.resolved.as_str().to_owned(),
        parent: t.parent_id,
        before: t.state.clone(),
    }
}

fn changed_since(path: &RelPath, op: &str) -> RunnerError {
    RunnerError::Conflict(format!(
        "`{path}` changed after {op}; restore refuses to overwrite newer changes — read_file \
         it, and use write_file or edit_file to change it by hand"
    ))
}

/// Effects for plans made from steps (restore).
fn generic_effects(steps: &[Step]) -> Vec<Effect> {
    let p = |s: &str| RelPath::parse(s).unwrap_or_else(|_| RelPath::root());
    steps
        .iter()
        .map(|s| match s {
            Step::Write { path, before: State::Absent, new_size, .. } => {
                effect(&p(path), EffectKind::Create, None, Some(*new_size), true)
            }
            Step::Write { path, before, new_size, .. } => {
                effect(&p(path), EffectKind::Overwrite, before.size(), Some(*new_size), true)
            }
            Step::Mkdir { path, .. } => effect(&p(path), EffectKind::Mkdir, None, None, true),
            Step::Link { path, .. } => effect(&p(path), EffectKind::Create, None, None, true),
            Step::Remove { path, before, .. } => {
                effect(&p(path), EffectKind::Delete, before.size(), None, true)
            }
            Step::Rename { from, to, before_from, .. } => effect(
                &p(from),
                EffectKind::Move { to: p(to).to_string() },
                before_from.size(),
                before_from.size(),
                true,
            ),
        })
        .collect()
}

/// Permission bits kept from a replaced file. Set-uid, set-gid and sticky bits are dropped:
/// content written by an assistant must never inherit elevated execution rights.
fn preserved_mode(mode: u32) -> u32 {
    mode & 0o777
}

/// Names the file of a multi-file patch in its error (`file 3 (src/x.rs): …`).
fn prefix_error(e: RunnerError, n: usize, path: &str) -> RunnerError {
    let shown = super::summary::visible(path);
    let pre = if n == 0 { format!("{shown}: ") } else { format!("patch file {n} ({shown}): ") };
    match e {
        RunnerError::InvalidArgument(m) => RunnerError::InvalidArgument(format!("{pre}{m}")),
        RunnerError::Conflict(m) => RunnerError::Conflict(format!("{pre}{m}")),
        RunnerError::TooLarge(m) => RunnerError::TooLarge(format!("{pre}{m}")),
        other => other,
    }
}
