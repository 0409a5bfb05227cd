//! The tools that change files. Each goes through one path, [`SluiceServer::change`]: plan the
//! exact action (resolved targets, identities, hashes), ask the user when the project's policy
//! says so — and always when the change touches a path another program runs on its own (the
//! project's auto-run list; a refused one never gets a plan) — re-plan after the decision and
//! refuse if anything differs from what was approved, check pause once more, then commit. Only
//! read-write projects accept any of them.

use std::sync::Arc;

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, RequestMetaObject};
use rmcp::{ErrorData, Peer, RoleServer, tool, tool_router};
use sluice_core::{AccessMode, ErrorCode, Failure};
use sluice_engine::{AskRequest, Caller, ProjectHandle};
use sluice_runner::{
    ApplyPatchArgs, CreateDirectoryArgs, DeletePathArgs, EditFileArgs, ListBackupsArgs,
    ListBackupsOutput, MovePathArgs, MutationOutput, Mutations, Plan, RunnerError, WriteFileArgs,
};
use tokio_util::sync::CancellationToken;

use crate::progress::Progress;
use crate::server::{ProjectCall, SluiceServer, Work, failed, succeeded};

/// Where a waiting call reports progress, when the client asked for it.
fn runner_failure(e: RunnerError) -> Failure {
    use sluice_core::Coded;
    Failure::new(e.code(), e.to_string())
}

impl SluiceServer {
    /// Plans, asks when the policy says so, re-checks, and commits one change.
    pub(crate) async fn change<F>(
        &self,
        caller: &Caller,
        project: &str,
        tool: &'static str,
        cancel: CancellationToken,
        progress: Progress,
        plan: F,
    ) -> Result<CallToolResult, ErrorData>
    where
        F: Fn(&Mutations) -> Result<Plan, RunnerError> + Send + Sync + 'static,
    {
        match self.change_inner(caller, project, tool, cancel, progress, Arc::new(plan)).await {
            Ok(output) => Ok(succeeded(&output)),
            Err(failure) => Ok(failed(&failure)),
        }
    }

    /// [`SluiceServer::change`], giving the output itself (`restore` wraps it).
    pub(crate) async fn change_output<F>(
        &self,
        caller: &Caller,
        project: &str,
        tool: &'static str,
        cancel: CancellationToken,
        progress: Progress,
        plan: F,
    ) -> Result<MutationOutput, Failure>
    where
        F: Fn(&Mutations) -> Result<Plan, RunnerError> + Send + Sync + 'static,
    {
        self.change_inner(caller, project, tool, cancel, progress, Arc::new(plan)).await
    }

    async fn change_inner<F>(
        &self,
        caller: &Caller,
        project: &str,
        tool: &'static str,
        cancel: CancellationToken,
        progress: Progress,
        plan: Arc<F>,
    ) -> Result<MutationOutput, Failure>
    where
        F: Fn(&Mutations) -> Result<Plan, RunnerError> + Send + Sync + 'static,
    {
        let engine = self.engine();
        let handle = engine.project(caller, project)?;
        if handle.self_limited {
            return Err(Failure::new(ErrorCode::ReadOnlyProject, SELF_LIMITED));
        }
        if handle.access != AccessMode::ReadWrite {
            return Err(Failure::new(
                ErrorCode::ReadOnlyProject,
                format!(
                    "project {:?} is read-only; only the user can make it read-write in Sluice",
                    handle.name
                ),
            ));
        }
        let mutations = engine.mutations(&handle)?;
        let planned = blocking(&mutations, &plan).await?;
        let planned = if let Some(because) = asks_because(&planned, &handle) {
            let request = AskRequest {
                caller,
                project: &handle,
                tool,
                summary: planned.summary(),
                tally: Some(planned.tally()),
                asked_because: because,
                fingerprint: planned.fingerprint,
            };
            let autorun = planned.autorun.clone();
            let outcome = progress.ask_change(engine, request, autorun, cancel).await?;
            if let Some(refusal) = outcome.refusal() {
                return Err(refusal);
            }
            // What runs must be exactly what was approved: plan again and compare.
            let again = blocking(&mutations, &plan).await?;
            if again.fingerprint != planned.fingerprint {
                return Err(Failure::new(
                    ErrorCode::Conflict,
                    "the files changed after the user approved this action, so nothing was done; \
                     look again and retry",
                ));
            }
            again
        } else {
            planned
        };
        // A pause that landed while planning or waiting stops the change here.
        engine.check_access()?;
        let m = mutations.clone();
        let engine = engine.clone();
        tokio::task::spawn_blocking(move || {
            // Its audit entry must land before the result goes back: refuse now if it could
            // not (this may wait for the database's busy timeout, hence off the async threads).
            engine.check_auditable()?;
            m.commit(&planned).map_err(runner_failure)
        })
        .await
        .map_err(|_| Failure::internal())?
    }
}

/// The refusal of every change and command once a token limited itself (`drop_privileges`).
pub(crate) const SELF_LIMITED: &str = "this token limited itself to read-only (drop_privileges); \
                                       only the user can restore it in Sluice";

/// Why a planned change must wait for the user; `None` when it may go ahead. A file another
/// program runs on its own asks whatever the policy: allowing writes without asking must not
/// mean an editor task or an MCP server lands silently.
fn asks_because(planned: &Plan, handle: &ProjectHandle) -> Option<String> {
    let mut why = Vec::new();
    if !planned.autorun.is_empty() {
        why.push("it touches a path on the project's auto-run list");
    }
    if planned.deletes && handle.ask_deletes {
        why.push("the project asks before deletes");
    }
    if planned.writes && handle.ask_writes {
        why.push("the project asks before every write");
    }
    (!why.is_empty()).then(|| why.join(" and "))
}

async fn blocking<F>(mutations: &Arc<Mutations>, plan: &Arc<F>) -> Result<Plan, Failure>
where
    F: Fn(&Mutations) -> Result<Plan, RunnerError> + Send + Sync + 'static,
{
    let (m, f) = (mutations.clone(), plan.clone());
    tokio::task::spawn_blocking(move || f(&m))
        .await
        .map_err(|_| Failure::internal())?
        .map_err(runner_failure)
}

/// The change tools differ only in their name, description, arguments and plan function; one
/// macro writes them all (it must emit the whole `#[tool_router]` impl so the router sees them).
macro_rules! change_tools {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident($args:ty) => $plan:ident, destructive: $destructive:literal, idempotent: $idempotent:literal;
    )*) => {
        #[tool_router(router = write_tools, vis = "pub(crate)")]
        impl SluiceServer {
            $(
                #[tool(
                    description = concat!($($doc, " "),*),
                    annotations(
                        read_only_hint = false,
                        destructive_hint = $destructive,
                        idempotent_hint = $idempotent,
                        open_world_hint = false
                    ),
                    output_schema = schema_for_output::<MutationOutput>()
                )]
                async fn $name(
                    &self,
                    Extension(caller): Extension<Caller>,
                    cancel: CancellationToken,
                    peer: Peer<RoleServer>,
                    meta: RequestMetaObject,
                    Parameters(call): Parameters<ProjectCall<$args>>,
                ) -> Result<CallToolResult, ErrorData> {
                    let args = call.args;
                    let progress = Progress { peer, meta };
                    self.change(&caller, &call.project, stringify!($name), cancel, progress, move |m| {
                        m.$plan(&args)
                    })
                    .await
                }
            )*
            #[tool(
                description = "List the backups of earlier changes in a project (newest first), with \
                the operation ids that `restore` takes.",
                annotations(read_only_hint = true, open_world_hint = false),
                output_schema = schema_for_output::<ListBackupsOutput>()
            )]
            async fn list_backups(
                &self,
                Extension(caller): Extension<Caller>,
                Parameters(call): Parameters<ProjectCall<ListBackupsArgs>>,
            ) -> Result<CallToolResult, ErrorData> {
                let engine = self.engine().clone();
                let args = call.args;
                self.in_project(&caller, &call.project, Work::Walk, move |p| {
                    let m = engine.mutations(p)?;
                    m.list_backups(&args).map_err(runner_failure)
                })
                .await
            }
        }
    };
}

change_tools! {
    /// Create a file, or replace one: replacing needs `expected_hash`, the hash read_file
    /// returned, so you never overwrite changes you have not seen. Read-write projects only; the
    /// previous content is backed up and can be restored. Any change (by any tool) to a file
    /// another program runs on its own — editor tasks, MCP configs, git hooks, CI workflows —
    /// waits for the user's approval; AI agents' own settings and hooks are refused.
    write_file(WriteFileArgs) => plan_write_file, destructive: true, idempotent: false;
    /// Edit a text file by exact replacements: each `old_text` must occur exactly once (or set
    /// `replace_all`). All edits apply or none. Encoding and line endings are kept.
    edit_file(EditFileArgs) => plan_edit_file, destructive: true, idempotent: false;
    /// Apply a multi-file patch, all or nothing: a unified diff as `git diff` prints it, or a
    /// `*** Begin Patch` … `*** End Patch` envelope (Add/Update/Delete File, Move to). Everything
    /// is checked before the first byte changes.
    apply_patch(ApplyPatchArgs) => plan_apply_patch, destructive: true, idempotent: false;
    /// Move or rename a file or folder inside the project. Overwriting an existing file needs
    /// its `expected_hash`. Moving a file away from its path asks the user like a delete.
    move_path(MovePathArgs) => plan_move_path, destructive: true, idempotent: false;
    /// Create a folder (and its parents with `parents`).
    create_directory(CreateDirectoryArgs) => plan_create_directory, destructive: false, idempotent: true;
    /// Delete a file, or a folder with `recursive`. Usually asks the user first (the call waits
    /// for the decision); everything deleted is backed up and can be restored.
    delete_path(DeletePathArgs) => plan_delete_path, destructive: true, idempotent: false;
}
