//! `apply_patch`: a unified diff over several files, applied all or nothing.

use std::collections::HashSet;

use super::{
    Builder, NEW_FILE_MODE, Target, effect, not_a_file, prefix_error, preserved_mode, remove,
};
use crate::RunnerError;
use crate::mutate::args::*;
use crate::mutate::patch::{self, FileOp, Hunk};
use crate::mutate::step::{Ident, State};
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
        let mut claims = Claims::default();
        for (n, file) in files.iter().enumerate() {
            let planned = match &file.op {
                FileOp::Add { path } => self.patch_add(&mut b, &mut claims, path, &file.hunks),
                FileOp::Delete { path } => {
                    self.patch_delete(&mut b, &mut claims, path, &file.hunks)
                }
                FileOp::Update { path, move_to } => {
                    self.patch_update(&mut b, &mut claims, path, move_to.as_deref(), &file.hunks)
                }
            };
            planned.map_err(|e| prefix_error(e, n + 1, file.op.path()))?;
        }
        b.plan(self, "apply_patch")
    }

    /// A file the patch creates: it must not exist yet.
    fn patch_add(
        &self,
        b: &mut Builder,
        claims: &mut Claims,
        path: &str,
        hunks: &[Hunk],
    ) -> Result<(), RunnerError> {
        let t = self.target(path, false, true)?;
        claims.claim(&t)?;
        if t.state != State::Absent {
            return Err(RunnerError::Conflict(format!(
                "`{}` already exists; use an update hunk for it",
                t.requested
            )));
        }
        let content = patch::new_file_content(hunks).map_err(RunnerError::InvalidArgument)?;
        let bytes = content.into_bytes();
        let size = Some(bytes.len() as u64);
        b.write(&t, bytes, NEW_FILE_MODE);
        b.effects.push(effect(&t.resolved, EffectKind::Create, None, size, true));
        Ok(())
    }

    /// A file the patch deletes: a file, whose content matches the deletion's hunks if it has
    /// any.
    fn patch_delete(
        &self,
        b: &mut Builder,
        claims: &mut Claims,
        path: &str,
        hunks: &[Hunk],
    ) -> Result<(), RunnerError> {
        let t = self.target(path, true, false)?;
        claims.claim(&t)?;
        let State::File { size, .. } = &t.state else {
            return Err(not_a_file(&t.requested, &t.state));
        };
        b.saw(&t);
        if !hunks.is_empty() {
            let (old, _) = text::decode(t.content.as_deref().unwrap_or_default(), path)?;
            let rest = patch::apply(&old, hunks).map_err(RunnerError::InvalidArgument)?;
            if !rest.is_empty() {
                return Err(RunnerError::Conflict(format!(
                    "the deletion of `{}` does not match its current content; read_file and \
                     regenerate the patch",
                    t.requested
                )));
            }
        }
        b.push(remove(&t), None);
        b.effects.push(effect(&t.resolved, EffectKind::Delete, Some(*size), None, true));
        Ok(())
    }

    /// A file the patch changes in place, or changes and moves to `move_to`.
    fn patch_update(
        &self,
        b: &mut Builder,
        claims: &mut Claims,
        path: &str,
        move_to: Option<&str>,
        hunks: &[Hunk],
    ) -> Result<(), RunnerError> {
        let t = self.target(path, true, false)?;
        claims.claim(&t)?;
        let State::File { size, mode, .. } = &t.state else {
            return Err(not_a_file(&t.requested, &t.state));
        };
        let raw = t.content.as_deref().unwrap_or_default();
        let (old, enc) = text::decode(raw, path)?;
        let new = patch::apply(&old, hunks).map_err(RunnerError::InvalidArgument)?;
        let bytes = text::encode(&new, enc);
        if bytes.len() as u64 > MAX_WRITE_BYTES {
            return Err(RunnerError::TooLarge(format!(
                "the patched file would be over the {MAX_WRITE_BYTES}-byte limit"
            )));
        }
        let size_after = Some(bytes.len() as u64);
        let Some(dest) = move_to else {
            b.write(&t, bytes, preserved_mode(*mode));
            b.effects.push(effect(
                &t.resolved,
                EffectKind::Overwrite,
                Some(*size),
                size_after,
                true,
            ));
            return Ok(());
        };
        let d = self.target(dest, false, true)?;
        claims.claim(&d)?;
        if d.state != State::Absent {
            return Err(RunnerError::Conflict(format!(
                "the move destination `{}` already exists",
                d.requested
            )));
        }
        b.write(&d, bytes, preserved_mode(*mode));
        b.saw(&t);
        b.push(remove(&t), None);
        b.effects.push(effect(
            &t.resolved,
            EffectKind::Move { to: d.resolved.to_string() },
            Some(*size),
            size_after,
            true,
        ));
        Ok(())
    }
}

/// The files a patch already reaches. Two entries of the patch may not reach the same file: by
/// resolved path (compared case-insensitively, since the disk may be) or by identity (hard
/// links).
#[derive(Default)]
struct Claims {
    paths: HashSet<String>,
    ids: HashSet<Ident>,
}

impl Claims {
    fn claim(&mut self, t: &Target) -> Result<(), RunnerError> {
        let key = t.resolved.as_str().to_lowercase();
        let id = match &t.state {
            State::File { id, .. } | State::Dir { id, .. } | State::Link { id, .. } => Some(*id),
            State::Absent => None,
        };
        if !self.paths.insert(key) || id.is_some_and(|id| !self.ids.insert(id)) {
            return Err(RunnerError::invalid(format!(
                "the patch changes `{}` twice (directly, through a link, a hard link or a name \
                 differing only in case); combine those changes",
                t.requested
            )));
        }
        Ok(())
    }
}
