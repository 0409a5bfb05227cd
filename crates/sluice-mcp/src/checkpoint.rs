//! Checkpoints as tools: `create_checkpoint` and `list_checkpoints`, with `restore_checkpoint`
//! going through the one change path ([`SluiceServer::change`]: plan, ask — it always counts as
//! a delete —, re-plan, commit). Only read-write projects take or restore one.
//!
//! Before every command Sluice runs in `project` or `any` execution mode it takes a checkpoint
//! on its own ([`SluiceServer::checkpoint_before`]); the command's result and its job carry the
//! id, or say why none was taken (the command runs either way).

use std::sync::Arc;

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, RequestMetaObject};
use rmcp::{ErrorData, Peer, RoleServer, tool, tool_router};
use sluice_core::{AccessMode, Coded, ErrorCode, ExecMode, Failure};
use sluice_engine::{Caller, ProjectHandle};
use sluice_runner::{
    CheckpointInfo, CreateCheckpointArgs, ListCheckpointsOutput, MutationOutput, Mutations,
    RestoreCheckpointArgs,
};
use tokio_util::sync::CancellationToken;

use crate::progress::Progress;
use crate::server::{NoArgs, ProjectCall, SluiceServer, Work};

/// The checkpoint taken before a command, or why there is none.
#[derive(Default)]
pub(crate) struct Checkpointed {
    pub id: Option<String>,
    pub skipped: Option<String>,
    mutations: Option<Arc<Mutations>>,
}

impl Checkpointed {
    /// Records on the checkpoint which job ran the command it was taken before.
    pub(crate) fn started(&self, job_id: &str) {
        if let (Some(id), Some(m)) = (self.id.clone(), self.mutations.clone()) {
            let job_id = job_id.to_owned();
            tokio::task::spawn_blocking(move || {
                if let Err(err) = m.set_checkpoint_job(&id, &job_id) {
                    tracing::warn!(%err, "could not record a checkpoint's job");
                }
            });
        }
    }
}

fn read_write(handle: &ProjectHandle) -> Result<(), Failure> {
    if handle.self_limited {
        return Err(Failure::new(ErrorCode::ReadOnlyProject, crate::write::SELF_LIMITED));
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
    Ok(())
}

impl SluiceServer {
    /// Takes the checkpoint a command in `project` or `any` mode gets before it runs. Never
    /// fails the command: a project over the bounds runs without one, and the result says why.
    pub(crate) async fn checkpoint_before(
        &self,
        handle: &ProjectHandle,
        command: &str,
    ) -> Checkpointed {
        let wanted = matches!(handle.exec, ExecMode::Project | ExecMode::Any)
            && handle.access == AccessMode::ReadWrite;
        if !wanted {
            return Checkpointed::default();
        }
        let m = match self.engine().mutations(handle) {
            Ok(m) => m,
            Err(f) => {
                return Checkpointed {
                    skipped: Some(format!("no checkpoint was taken: {}", f.message)),
                    ..Checkpointed::default()
                };
            }
        };
        let (mm, command) = (m.clone(), command.to_owned());
        let taken = tokio::task::spawn_blocking(move || {
            mm.create_checkpoint(&CreateCheckpointArgs::default(), Some(command))
        })
        .await;
        match taken {
            Ok(Ok(info)) => {
                Checkpointed { id: Some(info.checkpoint_id), skipped: None, mutations: Some(m) }
            }
            Ok(Err(e)) => Checkpointed {
                skipped: Some(format!(
                    "no checkpoint was taken before this command ({}: {e}); it ran anyway, and \
                     what it changes cannot be undone with restore_checkpoint",
                    e.code()
                )),
                ..Checkpointed::default()
            },
            Err(_) => Checkpointed {
                skipped: Some("no checkpoint was taken before this command".into()),
                ..Checkpointed::default()
            },
        }
    }
}

#[tool_router(router = checkpoint_tools, vis = "pub(crate)")]
impl SluiceServer {
    #[tool(
        description = "Take a checkpoint of a project's working tree: every file and folder \
        (tracked and untracked; not `.git`, not what the user's shield hides, and ignored files \
        only with `include_ignored`), so restore_checkpoint can put the whole tree back later. \
        Sluice also takes one on its own before every command it runs in project or any mode. \
        Read-write projects only.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<CheckpointInfo>()
    )]
    async fn create_checkpoint(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<CreateCheckpointArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.engine().clone();
        let args = call.args;
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            read_write(p)?;
            let m = engine.mutations(p)?;
            m.create_checkpoint(&args, None).map_err(|e| Failure::new(e.code(), e.to_string()))
        })
        .await
    }

    #[tool(
        description = "List a project's checkpoints, newest first: id, name, when, how many \
        files and bytes, whether Sluice took it before a command (and which), and the space \
        they take together.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ListCheckpointsOutput>()
    )]
    async fn list_checkpoints(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<NoArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.engine().clone();
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            let m = engine.mutations(p)?;
            m.list_checkpoints().map_err(|e| Failure::new(e.code(), e.to_string()))
        })
        .await
    }

    #[tool(
        description = "Put a project's whole working tree back as a checkpoint holds it: files \
        changed since are written back, files made since deleted, modes reset — all or nothing, \
        refused if the tree changes meanwhile. Asks the user like a delete. The result's \
        `operation_id` undoes the restore with `restore`.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<MutationOutput>()
    )]
    async fn restore_checkpoint(
        &self,
        Extension(caller): Extension<Caller>,
        cancel: CancellationToken,
        peer: Peer<RoleServer>,
        meta: RequestMetaObject,
        Parameters(call): Parameters<ProjectCall<RestoreCheckpointArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        let progress = Progress { peer, meta };
        let tool = "restore_checkpoint";
        self.change(&caller, &call.project, tool, cancel, progress, move |m| {
            m.plan_restore_checkpoint(&args)
        })
        .await
    }
}
