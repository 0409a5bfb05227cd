//! `create_directory`: a folder and any missing parents.

use super::{Builder, NEW_DIR_MODE, effect};
use crate::RunnerError;
use crate::mutate::args::*;
use crate::mutate::step::{State, Step};
use crate::mutate::{Mutations, Plan};

impl Mutations {
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
}
