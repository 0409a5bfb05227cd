//! What the Tasks extension keeps in memory ([`crate::tasks`] answers its requests): which tools'
//! calls become tasks, each running call's cancellation token, and the outcomes of recently
//! ended ones (never on disk: they hold command output and file contents).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

/// The tools whose calls become tasks for a client that declared the extension: every one that
/// runs a command, may wait for the user's approval or may take a while (a checkpoint). The rest
/// answer at once anyway.
pub(crate) const TASK_TOOLS: &[&str] = &[
    "run_command",
    "run_tests",
    "run_build",
    "start_job",
    "write_file",
    "edit_file",
    "apply_patch",
    "move_path",
    "create_directory",
    "delete_path",
    "restore",
    "create_checkpoint",
    "restore_checkpoint",
    "git_commit",
    "git_branch",
    "git_tag",
    "git_switch",
    "git_stash",
    "git_worktree",
];

/// How often a client should poll.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Results kept for polling; the oldest is forgotten first.
const RESULTS_KEPT: usize = 64;

/// What an ended task's call gave: a result, or a JSON-RPC error.
#[derive(Clone)]
pub(crate) enum Outcome {
    Result(JsonObject),
    Error(JsonObject),
}

/// The tasks of this engine's calls: each running call's cancellation token, and the outcomes
/// of recently ended ones.
#[derive(Default)]
pub(crate) struct Tasks {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    running: HashMap<String, CancellationToken>,
    ended: VecDeque<(String, Outcome)>,
}

impl Tasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn started(&self, id: &str, cancel: CancellationToken) {
        self.lock().running.insert(id.to_owned(), cancel);
    }

    pub(crate) fn ended(&self, id: &str, outcome: Option<Outcome>) {
        let mut inner = self.lock();
        inner.running.remove(id);
        if let Some(outcome) = outcome {
            if inner.ended.len() == RESULTS_KEPT {
                inner.ended.pop_front();
            }
            inner.ended.push_back((id.to_owned(), outcome));
        }
    }

    pub(crate) fn outcome(&self, id: &str) -> Option<Outcome> {
        self.lock().ended.iter().find(|(t, _)| t == id).map(|(_, o)| o.clone())
    }

    pub(crate) fn cancel(&self, id: &str) {
        if let Some(cancel) = self.lock().running.get(id) {
            cancel.cancel();
        }
    }
}

/// Whether this request's client declared the extension (2026-07-28: in the request's own
/// capabilities).
pub(crate) fn declared(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().is_some_and(|c| c.supports_tasks())
}
