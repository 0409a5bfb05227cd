//! `delete_path`: a file, a link or a whole folder, backed up first.

use sluice_guard::GuardError;

use super::{Builder, effect, remove};
use crate::RunnerError;
use crate::mutate::args::*;
use crate::mutate::step::{State, Step};
use crate::mutate::{Mutations, Plan};

impl Mutations {
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
                b.push(remove(&t), None);
                let mut e = effect(&t.resolved, EffectKind::Delete, Some(bytes), None, true);
                e.files_in_dir = Some(tree.len() as u64);
                b.effects.push(e);
            }
            State::File { .. } | State::Link { .. } => {
                b.push(remove(&t), None);
                b.effects.push(effect(&t.resolved, EffectKind::Delete, t.state.size(), None, true));
            }
        }
        b.plan(self, "delete_path")
    }
}
