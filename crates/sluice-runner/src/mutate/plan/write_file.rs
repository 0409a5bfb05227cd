//! `write_file`: a whole file's new contents, created or overwritten.

use sluice_guard::GuardError;

use super::{Builder, NEW_FILE_MODE, check_expected, effect, not_a_file, preserved_mode};
use crate::RunnerError;
use crate::mutate::args::*;
use crate::mutate::step::State;
use crate::mutate::{MAX_WRITE_BYTES, Mutations, Plan};

impl Mutations {
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
}
