//! `apply_patch`: a unified diff over several files, applied all or nothing.

use std::collections::HashSet;

use super::{Builder, NEW_FILE_MODE, Target, effect, not_a_file, prefix_error, preserved_mode};
use crate::RunnerError;
use crate::mutate::action::{Ident, State, Step};
use crate::mutate::args::*;
use crate::mutate::patch::{self, FileOp};
use crate::mutate::text;
use crate::mutate::{MAX_PATCH_BYTES, MAX_PATCH_FILES, MAX_WRITE_BYTES, Mutations, Plan};

impl Mutations {
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
}
