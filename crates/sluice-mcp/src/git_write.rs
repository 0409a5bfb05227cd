//! The git tools that write (`git_commit`, `git_branch`, `git_tag`, `git_switch`, `git_stash`),
//! `git_refs`, and `restore`, which undoes a file change or a git write by its operation id.
//!
//! A git write goes the way a file change does (`write.rs`): plan (`sluice_git::plan_*`), ask
//! when the project's policy says so — a deletion or a history rewrite like a delete, anything
//! else like a write, and always when the working tree would change a path on the auto-run list
//! or one the sensitive-file shield protects — plan again and refuse unless it is the same
//! action on the same state, check pause, then run under the project's change lock. Only
//! read-write projects accept them; git itself runs no hook, filter or signing program. Where
//! the user allowed a project's git hooks, `git_commit` runs its commit hooks and `git_switch`
//! its `post-checkout`, as jobs in its sandbox ([`crate::git_hooks`]).

use std::sync::Arc;

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, RequestMetaObject};
use rmcp::{ErrorData, Peer, RoleServer, tool, tool_router};
use serde::Serialize;
use sluice_core::{AccessMode, Coded, ErrorCode, Failure, GitHooks};
use sluice_engine::{AskRequest, Caller, ProjectHandle};
use sluice_git::{GitError, GitJournal, GitPlan, GitWriteOutput, Repo};
use sluice_runner::{MutationOutput, RelPath, RestoreArgs};
use tokio_util::sync::CancellationToken;

use crate::progress::Progress;
use crate::server::{ProjectCall, SluiceServer, Work, failed, succeeded};
use crate::write::SELF_LIMITED;

/// What `restore` returns: the file change undone, or the git write undone.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum RestoreOutput {
    Files(MutationOutput),
    Git(GitWriteOutput),
}

type Planner =
    dyn Fn(&Repo, &dyn Fn(&str) -> bool, &GitJournal) -> Result<GitPlan, GitError> + Send + Sync;

fn git_failure(e: GitError) -> Failure {
    Failure::new(e.code(), e.to_string())
}

impl SluiceServer {
    /// Plans, asks when the policy says so, re-checks, and runs one git write.
    pub(crate) async fn git_change(
        &self,
        caller: &Caller,
        project: &str,
        tool: &'static str,
        cancel: CancellationToken,
        progress: Progress,
        plan: Arc<Planner>,
    ) -> Result<GitWriteOutput, Failure> {
        let engine = self.engine();
        let handle = writable(engine.project(caller, project)?)?;
        let mutations = engine.mutations(&handle)?;
        let journal = Arc::new(engine.git_journal(&handle));
        let mut planned = plan_blocking(&handle, &journal, &plan).await?;
        let hooks =
            matches!(tool, "git_commit" | "git_switch") && handle.git_hooks == GitHooks::Sandbox;
        if hooks {
            crate::git_hooks::check_runnable(&handle)?;
            planned.summary.push_str(crate::git_hooks::SUMMARY_LINE);
        }
        // A name the guard cannot parse cannot be checked against the auto-run list: it asks.
        let (paths, odd): (Vec<_>, Vec<_>) =
            planned.touched.iter().map(|p| RelPath::parse(p)).partition(Result::is_ok);
        let autorun = handle
            .workspace
            .autorun_hits(paths.into_iter().flatten())
            .map_err(|e| Failure::new(e.code(), e.to_string()))?;
        let unchecked = !odd.is_empty();
        let planned = if let Some(because) = asks_because(&planned, &handle, &autorun, unchecked) {
            let request = AskRequest {
                caller,
                project: &handle,
                tool,
                summary: planned.summary.clone(),
                tally: None,
                asked_because: because,
                fingerprint: planned.fingerprint,
            };
            let outcome = progress.ask_change(engine, request, autorun, cancel).await?;
            if let Some(refusal) = outcome.refusal() {
                return Err(refusal);
            }
            let mut again = plan_blocking(&handle, &journal, &plan).await?;
            again.summary = planned.summary;
            if again.fingerprint != planned.fingerprint {
                return Err(Failure::new(
                    ErrorCode::Conflict,
                    "the repository changed after the user approved this action, so nothing was \
                     done; look again and retry",
                ));
            }
            again
        } else {
            planned
        };
        engine.check_access()?;
        if hooks {
            // What the hooks change can be undone like what any command changes.
            let of = if tool == "git_commit" { "a commit" } else { "a switch" };
            self.checkpoint_before(&handle, &format!("the git hooks of {of}")).await;
        }
        let runner = hooks
            .then(|| crate::git_hooks::SandboxHooks::new(engine.clone(), handle.clone(), caller));
        let engine = engine.clone();
        tokio::task::spawn_blocking(move || {
            engine.check_auditable()?;
            let repo = handle.repo().map_err(git_failure)?;
            let runner = runner.as_ref().map(|r| r as &dyn sluice_git::HookRunner);
            mutations
                .exclusive(|| sluice_git::execute(&repo, &planned, &journal, tool, runner))
                .map_err(git_failure)
        })
        .await
        .map_err(|_| Failure::internal())?
    }

    async fn git_write(
        &self,
        caller: &Caller,
        project: &str,
        tool: &'static str,
        cancel: CancellationToken,
        progress: Progress,
        plan: Arc<Planner>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.git_change(caller, project, tool, cancel, progress, plan).await {
            Ok(output) => succeeded(&output),
            Err(failure) => failed(&failure),
        })
    }
}

/// Refuses a project (or a token) that may not change anything.
pub(crate) fn writable(handle: ProjectHandle) -> Result<ProjectHandle, Failure> {
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
    Ok(handle)
}

/// Why a git write must wait for the user; `None` when it may go ahead.
fn asks_because(
    planned: &GitPlan,
    handle: &ProjectHandle,
    autorun: &[sluice_core::AutoRunHit],
    unchecked: bool,
) -> Option<String> {
    let mut why = Vec::new();
    if !autorun.is_empty() {
        why.push("it changes a path on the project's auto-run list");
    }
    if unchecked {
        why.push("it changes files whose names Sluice cannot check against the auto-run list");
    }
    if planned.hidden_touched > 0 {
        why.push("it changes files the sensitive-file shield protects");
    }
    if planned.deletes && handle.ask_deletes {
        why.push("the project asks before deletes (and history rewrites)");
    }
    if planned.writes && handle.ask_writes {
        why.push("the project asks before every write");
    }
    (!why.is_empty()).then(|| why.join(" and "))
}

async fn plan_blocking(
    handle: &ProjectHandle,
    journal: &Arc<GitJournal>,
    plan: &Arc<Planner>,
) -> Result<GitPlan, Failure> {
    let (handle, journal, plan) = (handle.clone(), journal.clone(), plan.clone());
    tokio::task::spawn_blocking(move || {
        let repo = handle.repo()?;
        plan(&repo, &|path| handle.is_hidden(path), &journal)
    })
    .await
    .map_err(|_| Failure::internal())?
    .map_err(git_failure)
}

/// The git write tools differ only in their name, arguments, planner and description; one
/// macro writes them all (it must emit the whole `#[tool_router]` impl so the router sees them).
macro_rules! git_tools {
    ($(
        $name:ident($args:ty) => $plan:path, destructive: $destructive:literal, $doc:literal;
    )*) => {
        #[tool_router(router = git_tools, vis = "pub(crate)")]
        impl SluiceServer {
            $(
                #[tool(
                    description = $doc,
                    annotations(
                        read_only_hint = false,
                        destructive_hint = $destructive,
                        idempotent_hint = false,
                        open_world_hint = false
                    ),
                    output_schema = schema_for_output::<GitWriteOutput>()
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
                    let plan: Arc<Planner> =
                        Arc::new(move |repo, hidden, _| $plan(repo, &args, hidden));
                    let progress = Progress { peer, meta };
                    let tool = stringify!($name);
                    self.git_write(&caller, &call.project, tool, cancel, progress, plan).await
                }
            )*
            #[tool(
                description = "A project's git branches (and which is checked out), tags and stash \
                entries, newest first.",
                annotations(read_only_hint = true, open_world_hint = false),
                output_schema = schema_for_output::<sluice_git::GitRefsOutput>()
            )]
            async fn git_refs(
                &self,
                Extension(caller): Extension<Caller>,
                Parameters(call): Parameters<ProjectCall<sluice_git::GitRefsArgs>>,
            ) -> Result<CallToolResult, ErrorData> {
                let args = call.args;
                self.in_project(&caller, &call.project, Work::Walk, move |p| {
                    let repo = p.repo()?;
                    sluice_git::refs_list(&repo, &args)
                })
                .await
            }

            /// Undo one earlier change by its `operation_id` (every change returns one), restoring the
            /// exact previous bytes and modes. Refused if the files changed since.
            #[tool(
                description = "Undo one earlier change by its `operation_id`: a file change (`op_…`, \
                from the file tools; the exact previous bytes and modes come back) or a git write \
                (`git_…`: a commit undone to its parent with its changes kept staged, a deleted branch \
                or tag re-created, a switch switched back). Refused if what it changed has changed \
                since; the undo is itself undoable by the operation id it returns.",
                annotations(
                    read_only_hint = false,
                    destructive_hint = true,
                    idempotent_hint = false,
                    open_world_hint = false
                ),
                output_schema = schema_for_output::<RestoreOutput>()
            )]
            async fn restore(
                &self,
                Extension(caller): Extension<Caller>,
                cancel: CancellationToken,
                peer: Peer<RoleServer>,
                meta: RequestMetaObject,
                Parameters(call): Parameters<ProjectCall<RestoreArgs>>,
            ) -> Result<CallToolResult, ErrorData> {
                let args = call.args;
                let progress = Progress { peer, meta };
                let outcome = if sluice_git::is_git_operation(&args.operation_id) {
                    let id = args.operation_id;
                    let plan: Arc<Planner> =
                        Arc::new(move |repo, hidden, journal| sluice_git::plan_undo(repo, journal, &id, hidden));
                    self.git_change(&caller, &call.project, "restore", cancel, progress, plan)
                        .await
                        .map(RestoreOutput::Git)
                } else {
                    self.change_output(&caller, &call.project, "restore", cancel, progress, move |m| {
                        m.plan_restore(&args)
                    })
                    .await
                    .map(RestoreOutput::Files)
                };
                Ok(match outcome {
                    Ok(output) => succeeded(&output),
                    Err(failure) => failed(&failure),
                })
            }
        }
    };
}

git_tools! {
    git_commit(sluice_git::GitCommitArgs) => sluice_git::plan_commit, destructive: false,
        "Commit in a read-write project: stage `paths` (or `all` changes) and commit them with \
         your `message`, as the user's git identity. Files the sensitive-file shield protects \
         are never staged. No git hook runs, unless the user allowed the project's hooks: then \
         each runs as a job in the project's sandbox, and one that fails (or changes what is \
         staged) stops the commit with `hook_failed`. Returns an operation id that `restore` \
         takes to undo the commit (the branch moves back; the changes stay, staged).";
    git_branch(sluice_git::GitBranchArgs) => sluice_git::plan_branch, destructive: true,
        "Create a branch (without switching to it; see git_switch) or delete one (asks the \
         user like a delete; restore re-creates it). List branches with git_refs.";
    git_tag(sluice_git::GitTagArgs) => sluice_git::plan_tag, destructive: true,
        "Create a tag on a commit (annotated when you give a message) or delete one (asks the \
         user like a delete; restore re-creates it). List tags with git_refs.";
    git_switch(sluice_git::GitSwitchArgs) => sluice_git::plan_switch, destructive: false,
        "Check out another branch (or `create` one and check it out). Refused while tracked \
         files have uncommitted changes (commit or git_stash them first), so nothing is lost. \
         Where the user allowed the project's hooks, post-checkout then runs as a job in its \
         sandbox.";
    git_stash(sluice_git::GitStashArgs) => sluice_git::plan_stash, destructive: false,
        "Stash the uncommitted changes to tracked files (`push`) or apply and drop a stash \
         entry onto a clean working tree (`pop`; all or nothing). List entries with git_refs.";
}
