//! `restore_checkpoint`: the project's tree put back as a checkpoint holds it, all or nothing.
//!
//! The planner compares the checkpoint's manifest with a walk of the tree now (the same walk,
//! with the same ignore setting, so what the checkpoint never covered is never touched) and
//! turns the difference into ordinary steps: entries made since are removed (deepest first; a
//! folder only when everything in it goes), folders re-created, files written back from the
//! store (each blob checked against its hash), links re-created, and permission bits set back.
//! A command that edited a `.gitignore` changes neither side: what the checkpoint holds is
//! compared as it is even where today's rules hide it, and what the checkpoint's own rules
//! ignored is left alone even where today's rules show it.
//! Every path comes from a manifest in Sluice's state folder, which is treated as untrusted: it
//! is parsed as a project-relative path, refused if the shield covers it or if it names `.git`,
//! and resolved through the guard like a path an assistant sent.

use std::collections::{BTreeMap, HashSet};

use sluice_guard::RelPath;

use super::Builder;
use super::restore::generic_effects;
use crate::RunnerError;
use crate::checkpoint::{Entry, Kind, Manifest, RestoreCheckpointArgs, snapshot, valid_id};
use crate::mutate::step::{Ident, State, Step, hex_hash};
use crate::mutate::{MAX_TREE_BYTES, Mutations, Plan};

fn damaged(id: &str, why: &str) -> RunnerError {
    RunnerError::Conflict(format!(
        "checkpoint {id} is damaged ({why}); it cannot be restored, and nothing was changed"
    ))
}

impl Mutations {
    pub fn plan_restore_checkpoint(
        &self,
        args: &RestoreCheckpointArgs,
    ) -> Result<Plan, RunnerError> {
        let id = args.checkpoint_id.trim();
        if !valid_id(id) {
            return Err(RunnerError::invalid(
                "checkpoint_id must look like `ckpt_…`, as list_checkpoints shows",
            ));
        }
        let missing = || {
            RunnerError::Missing(format!(
                "there is no checkpoint {id} (it may have been dropped for newer ones); \
                 list_checkpoints shows what can be restored"
            ))
        };
        let (meta, manifest) = {
            let _guard = self.checkpoint_lock();
            let store = self.checkpoints();
            let meta = store.meta(id).map_err(|_| damaged(id, "unreadable record"))?;
            let meta = meta.ok_or_else(missing)?;
            let manifest = store.manifest(id).map_err(|_| damaged(id, "unreadable manifest"))?;
            (meta, manifest.ok_or_else(|| damaged(id, "manifest missing"))?)
        };
        if manifest.id != id || manifest.version != 1 {
            return Err(damaged(id, "manifest of another checkpoint"));
        }
        let want = self.validated(&manifest, id)?;
        let now = snapshot(
            self,
            meta.include_ignored,
            Some((&meta, manifest.clone())),
            self.checkpoint_limits(),
            false,
        )?;
        let mut have: BTreeMap<String, Entry> =
            now.entries.into_iter().map(|e| (e.path.clone(), e)).collect();
        // What the checkpoint holds but today's ignore rules hide (the command changed a
        // `.gitignore`) is compared as it is, not taken for missing.
        for (path, w) in &want {
            if !have.contains_key(path)
                && let Some(entry) = self.unwalked(path, w.kind)?
            {
                have.insert(path.clone(), entry);
            }
        }
        // …and what the checkpoint's own rules ignored is none of its business, even where
        // today's rules show it.
        let ignored_then = if meta.include_ignored { Vec::new() } else { self.rules(id, &want)? };

        // What goes: everything the checkpoint does not hold as it is now, deepest first.
        let mut gone: HashSet<String> = HashSet::new();
        let mut removals = Vec::new();
        for (path, cur) in have.iter().rev() {
            let keep = want.get(path).is_some_and(|w| match (w.kind, cur.kind) {
                (Kind::Dir, Kind::Dir) | (Kind::File, Kind::File) => true,
                (Kind::Link, Kind::Link) => w.target == cur.target,
                _ => false,
            });
            if keep || !want.contains_key(path) && ignored(&ignored_then, path, cur.kind) {
                continue;
            }
            if cur.kind == Kind::Dir {
                let dir = self.ws.root().open_dir(&RelPath::parse(path)?)?;
                let all_go =
                    dir.entries()?.iter().all(|e| gone.contains(&format!("{path}/{}", e.name)));
                if !all_go {
                    if want.contains_key(path) {
                        return Err(RunnerError::Conflict(format!(
                            "`{path}` is a folder now and holds files the checkpoint does not \
                             cover (ignored or shielded), so it cannot be replaced; nothing was \
                             changed"
                        )));
                    }
                    // Made since, but it holds what the checkpoint never covered: it stays.
                    continue;
                }
            }
            gone.insert(path.clone());
            removals.push(path.clone());
        }

        let mut b = Builder::default();
        for path in &removals {
            let (state, parent) = self.present(path)?;
            b.push(Step::Remove { path: path.clone(), parent: Some(parent), before: state }, None);
        }
        let exists_now = |p: &RelPath| {
            p.is_root()
                || have.get(p.as_str()).is_some_and(|e| e.kind == Kind::Dir)
                    && !gone.contains(p.as_str())
        };
        let mut chmods = Vec::new();
        let mut bytes = 0u64;
        for (path, w) in &want {
            let rel = RelPath::parse(path)?;
            let cur = have.get(path).filter(|_| !gone.contains(path));
            let parent = match rel.parent() {
                Some(p) if exists_now(&p) => Some(self.parent_ident(&p)?),
                None => Some(self.parent_ident(&RelPath::root())?),
                Some(_) => None,
            };
            match (w.kind, cur) {
                (Kind::File, Some(c)) if c.hash != w.hash => {
                    let (state, _) = self.present(path)?;
                    let content = self.blob(id, w)?;
                    bytes += content.len() as u64;
                    let step = Step::Write {
                        path: path.clone(),
                        parent,
                        before: state,
                        new_hash: hex_hash(&content),
                        new_size: content.len() as u64,
                        mode: w.mode,
                    };
                    b.push(step, Some(content));
                }
                (Kind::File | Kind::Dir, Some(c)) if c.mode != w.mode => {
                    let (state, _) = self.present(path)?;
                    let step =
                        Step::Chmod { path: path.clone(), parent, before: state, mode: w.mode };
                    chmods.push(step);
                }
                (_, Some(_)) => {}
                (Kind::Dir, None) => {
                    b.push(Step::Mkdir { path: path.clone(), parent, mode: w.mode }, None);
                }
                (Kind::File, None) => {
                    let content = self.blob(id, w)?;
                    bytes += content.len() as u64;
                    let step = Step::Write {
                        path: path.clone(),
                        parent,
                        before: State::Absent,
                        new_hash: hex_hash(&content),
                        new_size: content.len() as u64,
                        mode: w.mode,
                    };
                    b.push(step, Some(content));
                }
                (Kind::Link, None) => {
                    let target = w.target.clone().unwrap_or_default();
                    b.push(Step::Link { path: path.clone(), parent, target }, None);
                }
            }
            if bytes > MAX_TREE_BYTES {
                return Err(RunnerError::LimitExceeded(format!(
                    "restoring checkpoint {id} would write back more than {} MiB at once; \
                     nothing was changed",
                    MAX_TREE_BYTES >> 20
                )));
            }
        }
        // Folders last, deepest first: a folder made read-only must not stop what goes in it.
        chmods.sort_by(|a, b| b.paths()[0].cmp(a.paths()[0]));
        for step in chmods {
            b.push(step, None);
        }
        if b.steps.is_empty() {
            return Err(RunnerError::invalid(format!(
                "the project already matches checkpoint {id}; there is nothing to restore"
            )));
        }
        b.effects = generic_effects(&b.steps);
        let mut plan = b.plan(self, "restore_checkpoint")?;
        // Putting a whole tree back replaces whatever is there now: it asks like a delete.
        plan.deletes = true;
        Ok(plan)
    }

    /// The manifest's entries by path, each checked like a path from an assistant.
    fn validated(
        &self,
        manifest: &Manifest,
        id: &str,
    ) -> Result<BTreeMap<String, Entry>, RunnerError> {
        let mut out: BTreeMap<String, Entry> = BTreeMap::new();
        for e in &manifest.entries {
            let rel = RelPath::parse(&e.path)
                .map_err(|_| damaged(id, "a path is not project-relative"))?;
            if rel.is_root() || rel.as_str() != e.path || rel.components().any(|c| c == ".git") {
                return Err(damaged(id, "a path is not one a checkpoint holds"));
            }
            self.ws.shield().check(&rel)?;
            let ok = match e.kind {
                Kind::File => e.hash.as_deref().is_some_and(crate::checkpoint::store::valid_hash),
                Kind::Link => {
                    e.target.as_deref().is_some_and(|t| !t.is_empty() && !t.contains('\0'))
                }
                Kind::Dir => true,
            };
            if !ok {
                return Err(damaged(id, "an entry is incomplete"));
            }
            let mut entry = e.clone();
            entry.mode &= 0o777;
            if out.insert(e.path.clone(), entry).is_some() {
                return Err(damaged(id, "a path is listed twice"));
            }
        }
        for path in out.keys() {
            let rel = RelPath::parse(path)?;
            if let Some(parent) = rel.parent().filter(|p| !p.is_root())
                && out.get(parent.as_str()).is_none_or(|p| p.kind != Kind::Dir)
            {
                return Err(damaged(id, "an entry's folder is missing"));
            }
        }
        Ok(out)
    }

    /// What is at `path` now and the identity of its folder, through the guard (the shield,
    /// Sluice's own folders, no link on the way).
    fn present(&self, path: &str) -> Result<(State, Ident), RunnerError> {
        let t = self.target(path, false, false)?;
        match t.parent_id {
            Some(parent) if t.resolved == t.requested => Ok((t.state, parent)),
            _ => Err(RunnerError::Conflict(format!(
                "`{path}` changed while the restore was being planned; nothing was changed, retry"
            ))),
        }
    }

    fn parent_ident(&self, dir: &RelPath) -> Result<Ident, RunnerError> {
        let handle = self.ws.root().open_dir(dir)?;
        if handle.rel_path() != dir {
            return Err(RunnerError::Conflict(format!(
                "`{dir}` changed while the restore was being planned; nothing was changed, retry"
            )));
        }
        Ok(Ident::from(handle.id()?))
    }

    fn blob(&self, id: &str, e: &Entry) -> Result<Vec<u8>, RunnerError> {
        let hash = e.hash.as_deref().unwrap_or_default();
        let bytes = self
            .checkpoints()
            .load_blob(hash)
            .map_err(|_| damaged(id, "stored content is missing or altered"))?;
        if bytes.len() as u64 != e.size {
            return Err(damaged(id, "stored content has another size"));
        }
        Ok(bytes)
    }
}

impl Mutations {
    /// An entry of the checkpoint the walk did not see, as it is now (`None`: not there). Its
    /// folders must be real ones: nothing is looked up through a link.
    fn unwalked(&self, path: &str, kind: Kind) -> Result<Option<Entry>, RunnerError> {
        let rel = RelPath::parse(path)?;
        let (dir, name) = match self.ws.root().open_parent(&rel) {
            Ok(found) => found,
            Err(sluice_guard::GuardError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if Some(dir.rel_path().clone()) != rel.parent() {
            return Ok(None);
        }
        let meta = match dir.entry_meta(&name) {
            Ok(meta) => meta,
            Err(sluice_guard::GuardError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let mut entry = Entry {
            path: path.to_owned(),
            kind,
            size: meta.len,
            hash: None,
            target: None,
            mode: meta.mode & 0o777,
            stat: None,
        };
        match meta.kind {
            sluice_guard::EntryKind::File => {
                entry.kind = Kind::File;
                let (mut file, _) = dir.open_file(&name)?;
                let (size, hash) = crate::checkpoint::sha256(&mut file)
                    .map_err(|e| RunnerError::Io { path: path.to_owned(), kind: e.kind() })?;
                (entry.size, entry.hash) = (size, Some(hash));
            }
            sluice_guard::EntryKind::Dir => entry.kind = Kind::Dir,
            sluice_guard::EntryKind::Symlink => {
                entry.kind = Kind::Link;
                entry.target = Some(dir.read_link(&name)?);
            }
            sluice_guard::EntryKind::Other => {
                return Err(RunnerError::Conflict(format!(
                    "`{path}` is a special file now; nothing was changed"
                )));
            }
        }
        Ok(Some(entry))
    }

    /// The checkpoint's own `.gitignore` and `.ignore` rules, deepest folder first, `.ignore`
    /// before `.gitignore` (the walk's precedence).
    fn rules(
        &self,
        id: &str,
        want: &BTreeMap<String, Entry>,
    ) -> Result<Vec<(RelPath, ignore::gitignore::Gitignore)>, RunnerError> {
        let mut out = Vec::new();
        for (path, e) in want {
            let rel = RelPath::parse(path)?;
            let name = rel.file_name().unwrap_or_default();
            if e.kind != Kind::File || !matches!(name, ".gitignore" | ".ignore") {
                continue;
            }
            let bytes = self.blob(id, e)?;
            let mut builder = ignore::gitignore::GitignoreBuilder::new(".");
            for line in String::from_utf8_lossy(&bytes).lines() {
                // A bad line is skipped, as git (and the walk) do.
                let _ = builder.add_line(None, line);
            }
            if let Ok(gi) = builder.build() {
                out.push((rel.parent().unwrap_or_else(RelPath::root), name == ".ignore", gi));
            }
        }
        out.sort_by(|a, b| b.0.depth().cmp(&a.0.depth()).then(b.1.cmp(&a.1)));
        Ok(out.into_iter().map(|(dir, _, gi)| (dir, gi)).collect())
    }
}

/// Whether the checkpoint's rules ignore `path` (or a folder above it).
fn ignored(rules: &[(RelPath, ignore::gitignore::Gitignore)], path: &str, kind: Kind) -> bool {
    let Ok(rel) = RelPath::parse(path) else { return false };
    for (dir, gi) in rules {
        let Some(sub) = rel.strip_prefix(dir).filter(|s| !s.is_empty()) else { continue };
        match gi.matched_path_or_any_parents(sub, kind == Kind::Dir) {
            ignore::Match::Ignore(_) => return true,
            ignore::Match::Whitelist(_) => return false,
            ignore::Match::None => {}
        }
    }
    false
}
