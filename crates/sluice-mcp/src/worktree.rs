//! `git_worktree`: a linked worktree of a read-write project, made and authorized as a project
//! of its own (`<project>@<name>`, never more than its parent), or removed again. Creating asks
//! when the project asks before every write; removing asks like a delete, is refused while the
//! worktree has uncommitted changes, keeps the branch and unauthorizes the project (its jobs
//! are stopped). The work is the engine's (`Engine::create_worktree`, `remove_worktree`).

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, RequestMetaObject};
use rmcp::{ErrorData, Peer, RoleServer, tool, tool_router};
use serde::{Deserialize, Serialize};
use sluice_core::Failure;
use sluice_engine::{AskRequest, Caller, NewWorktree, ProjectHandle};
use tokio_util::sync::CancellationToken;

use crate::git_write::writable;
use crate::progress::Progress;
use crate::server::{ProjectCall, SluiceServer, failed, succeeded};

/// What `git_worktree` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorktreeOp {
    #[default]
    Create,
    Remove,
}

/// Arguments of `git_worktree`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GitWorktreeArgs {
    /// `create` a worktree (it becomes the project `<project>@<name>`) or `remove` one (asks
    /// the user; refused while it has uncommitted changes; its branch stays).
    pub action: WorktreeOp,
    /// The worktree's name: 1 to 48 letters, digits, `.`, `_` or `-`, e.g. `try-cache`.
    pub name: String,
    /// `create`: the branch to check out in it (default: the name). An existing branch must not
    /// be checked out anywhere else.
    pub branch: Option<String>,
    /// `create`: make `branch` a new branch at the project's HEAD.
    pub create_branch: bool,
}

/// What `git_worktree` did.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct GitWorktreeOutput {
    /// What was done, in a sentence.
    pub done: String,
    /// The worktree's project (made or removed): use this name as `project` in other tools.
    pub project: String,
    /// The worktree's branch (kept when the worktree is removed).
    pub branch: String,
}

#[tool_router(router = worktree_tools, vis = "pub(crate)")]
impl SluiceServer {
    #[tool(
        description = "Parallel work on one repository: `create` a linked git worktree of a \
        read-write project on a new branch (`create_branch`) or on one checked out nowhere; it \
        becomes the project `<project>@<name>` (same modes and lists as the project, seen by \
        whoever sees the project), where every file, git and command tool works on its own \
        branch. `remove` deletes a clean worktree (asks the user like a delete; the branch \
        stays) and its project.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<GitWorktreeOutput>()
    )]
    async fn git_worktree(
        &self,
        Extension(caller): Extension<Caller>,
        cancel: CancellationToken,
        peer: Peer<RoleServer>,
        meta: RequestMetaObject,
        Parameters(call): Parameters<ProjectCall<GitWorktreeArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let progress = Progress { peer, meta };
        let outcome = self.worktree(&caller, &call.project, call.args, cancel, progress).await;
        Ok(match outcome {
            Ok(output) => succeeded(&output),
            Err(failure) => failed(&failure),
        })
    }
}

impl SluiceServer {
    async fn worktree(
        &self,
        caller: &Caller,
        project: &str,
        args: GitWorktreeArgs,
        cancel: CancellationToken,
        progress: Progress,
    ) -> Result<GitWorktreeOutput, Failure> {
        let engine = self.engine().clone();
        let handle = writable(engine.project(caller, project)?)?;
        match args.action {
            WorktreeOp::Create => {
                let branch = args.branch.clone().unwrap_or_else(|| args.name.clone());
                let new = NewWorktree {
                    name: &args.name,
                    branch: &branch,
                    create_branch: args.create_branch,
                };
                let fingerprint = new.fingerprint(&handle);
                if handle.ask_writes {
                    let summary = format!(
                        "create worktree {:?} of project {:?} on {} branch {:?}",
                        args.name,
                        handle.name,
                        if args.create_branch { "new" } else { "existing" },
                        branch
                    );
                    let because = "the project asks before every write";
                    let asking = (summary, because, fingerprint);
                    ask(self, caller, &handle, asking, cancel, progress).await?;
                }
                engine.check_access()?;
                let made = tokio::task::spawn_blocking(move || {
                    engine.check_auditable()?;
                    let new = NewWorktree {
                        name: &args.name,
                        branch: &branch,
                        create_branch: args.create_branch,
                    };
                    engine.create_worktree(&handle, &new).map(|p| (p, branch))
                })
                .await
                .map_err(|_| Failure::internal())??;
                let (made, branch) = made;
                Ok(GitWorktreeOutput {
                    done: format!("created worktree project {:?} on branch {branch:?}", made.name),
                    project: made.name,
                    branch,
                })
            }
            WorktreeOp::Remove => {
                let child = engine.worktree_project(&handle, &args.name)?;
                let check = (engine.clone(), child.clone());
                let removal =
                    tokio::task::spawn_blocking(move || check.0.worktree_removal(&check.1))
                        .await
                        .map_err(|_| Failure::internal())??;
                let branch = removal.branch;
                if handle.ask_deletes {
                    let summary = format!(
                        "remove worktree project {:?} and its folder (branch {branch:?} stays)",
                        child.name
                    );
                    let because = "the project asks before deletes";
                    let asking = (summary, because, removal.fingerprint);
                    ask(self, caller, &handle, asking, cancel, progress).await?;
                }
                engine.check_access()?;
                let name = child.name.clone();
                tokio::task::spawn_blocking(move || {
                    engine.check_auditable()?;
                    // The same worktree, at the same commit, as the user approved removing.
                    if engine.worktree_removal(&child)?.fingerprint != removal.fingerprint {
                        return Err(Failure::new(
                            sluice_core::ErrorCode::Conflict,
                            "the worktree changed after the user approved removing it, so \
                             nothing was done; look again and retry",
                        ));
                    }
                    engine.remove_worktree(&child, true)
                })
                .await
                .map_err(|_| Failure::internal())??;
                Ok(GitWorktreeOutput {
                    done: format!("removed worktree project {name:?}; branch {branch:?} stays"),
                    project: name,
                    branch,
                })
            }
        }
    }
}

/// Asks the user, and refuses unless they approve.
async fn ask(
    server: &SluiceServer,
    caller: &Caller,
    handle: &ProjectHandle,
    (summary, because, fingerprint): (String, &str, [u8; 32]),
    cancel: CancellationToken,
    progress: Progress,
) -> Result<(), Failure> {
    let request = AskRequest {
        caller,
        project: handle,
        tool: "git_worktree",
        summary,
        tally: None,
        asked_because: because.to_owned(),
        fingerprint,
    };
    let outcome = progress.ask(server.engine(), request, cancel).await?;
    match outcome.refusal() {
        Some(refusal) => Err(refusal),
        None => Ok(()),
    }
}
