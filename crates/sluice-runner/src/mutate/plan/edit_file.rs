//! `edit_file`: exact text replacements in one file.

use super::{Builder, MAX_EDITS, check_expected, effect, not_a_file, preserved_mode};
use crate::RunnerError;
use crate::mutate::args::*;
use crate::mutate::step::State;
use crate::mutate::text;
use crate::mutate::{MAX_WRITE_BYTES, Mutations, Plan};

impl Mutations {
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
}
