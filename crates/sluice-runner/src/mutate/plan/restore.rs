//! `restore`: an earlier operation undone from its backups, refusing to overwrite newer changes.

use sluice_guard::{GuardError, RelPath};

use super::{Builder, Target, effect, prefix_error, remove};
use crate::RunnerError;
use crate::mutate::action::rel;
use crate::mutate::args::*;
use crate::mutate::step::{State, Step};
use crate::mutate::store::Store;
use crate::mutate::{Mutations, Plan, valid_operation_id};

impl Mutations {
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
        // Paths an earlier step of this plan empties: a checkpoint restore replaces an entry of
        // another kind in two steps (remove, then create), undone here in reverse, so the
        // removal's undo finds the path as the creation's undo will have left it.
        let mut vacated: std::collections::HashSet<String> = std::collections::HashSet::new();
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
                        vacated.insert(t.resolved.to_string());
                    }
                }
                Step::Mkdir { path, .. } => {
                    let t = self.restore_target(path, op)?;
                    b.saw(&t);
                    if !matches!(t.state, State::Dir { .. }) {
                        return Err(changed_since(&t.resolved, op));
                    }
                    b.push(remove(&t), None);
                    vacated.insert(t.resolved.to_string());
                }
                Step::Link { path, target, .. } => {
                    let t = self.restore_target(path, op)?;
                    b.saw(&t);
                    if !matches!(&t.state, State::Link { target: now, .. } if now == target) {
                        return Err(changed_since(&t.resolved, op));
                    }
                    b.push(remove(&t), None);
                    vacated.insert(t.resolved.to_string());
                }
                Step::Remove { path, before, .. } => {
                    let mut t = self.restore_target(path, op)?;
                    if vacated.contains(t.resolved.as_str()) {
                        t.state = State::Absent;
                    }
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
                Step::Chmod { path, before, mode, .. } => {
                    let t = self.restore_target(path, op)?;
                    b.saw(&t);
                    let old = match (&t.state, before) {
                        (State::File { mode: now, .. }, State::File { mode: old, .. })
                        | (State::Dir { mode: now, .. }, State::Dir { mode: old, .. })
                            if now == mode && t.state.same_content(before) =>
                        {
                            *old
                        }
                        _ => return Err(changed_since(&t.resolved, op)),
                    };
                    let step = Step::Chmod {
                        path: t.resolved.as_str().to_owned(),
                        parent: t.parent_id,
                        before: t.state.clone(),
                        mode: old,
                    };
                    b.push(step, None);
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

fn changed_since(path: &RelPath, op: &str) -> RunnerError {
    RunnerError::Conflict(format!(
        "`{path}` changed after {op}; restore refuses to overwrite newer changes — read_file \
         it, and use write_file or edit_file to change it by hand"
    ))
}

/// Effects for plans made from steps (restore).
pub(super) fn generic_effects(steps: &[Step]) -> Vec<Effect> {
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
            Step::Chmod { path, mode, .. } => {
                effect(&p(path), EffectKind::Chmod { mode: *mode }, None, None, true)
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
