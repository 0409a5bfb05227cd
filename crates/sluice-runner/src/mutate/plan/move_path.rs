//! `move_path`: a file or folder moved or renamed inside the project.

use sluice_guard::GuardError;

use super::{Builder, check_expected, effect};
use crate::RunnerError;
use crate::mutate::args::*;
use crate::mutate::step::{State, Step};
use crate::mutate::{Mutations, Plan};

impl Mutations {
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
}
