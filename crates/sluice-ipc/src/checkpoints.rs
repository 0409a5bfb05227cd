//! A project's checkpoints as the window shows them: list them, take one, and put the project's
//! files back as one holds them. The user's restore needs no approval, but the shell confirms
//! it in a native dialog first (it overwrites and deletes files), and it goes through the same
//! all-or-nothing plan an assistant's does, undoable with `restore` (`Engine::restore_checkpoint`).

use serde::Serialize;
use sluice_engine::Engine;
use sluice_runner::{CheckpointInfo, CreateCheckpointArgs};
use ts_rs::TS;

use crate::Res;

/// One checkpoint of a project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointDto {
    pub id: String,
    pub name: Option<String>,
    /// When it was taken (RFC 3339, UTC).
    pub created: String,
    #[ts(type = "number")]
    pub files: u64,
    #[ts(type = "number")]
    pub bytes: u64,
    /// What it added to the store (contents no earlier checkpoint held).
    #[ts(type = "number")]
    pub added_bytes: u64,
    /// Taken by Sluice before a command ran; that command.
    pub before_command: Option<String>,
    pub job_id: Option<String>,
}

impl From<CheckpointInfo> for CheckpointDto {
    fn from(c: CheckpointInfo) -> CheckpointDto {
        CheckpointDto {
            id: c.checkpoint_id,
            name: c.name,
            created: c.created,
            files: c.files,
            bytes: c.bytes,
            added_bytes: c.added_bytes,
            before_command: c.before_command,
            job_id: c.job_id,
        }
    }
}

/// A project's checkpoints, newest first, and what they take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointsDto {
    pub checkpoints: Vec<CheckpointDto>,
    /// Bytes all of them take in Sluice's data folder (each content stored once).
    #[ts(type = "number")]
    pub stored_bytes: u64,
    #[ts(type = "number")]
    pub max_checkpoints: u64,
    #[ts(type = "number")]
    pub max_bytes: u64,
}

/// What a restore changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RestoredDto {
    /// `restore` undoes the restore by this id.
    pub operation_id: String,
    /// Files written back, deleted or given their mode again.
    pub files: u32,
}

pub fn list_checkpoints(engine: &Engine, project: &str) -> Res<CheckpointsDto> {
    let list = engine.checkpoints(project)?;
    Ok(CheckpointsDto {
        checkpoints: list.checkpoints.into_iter().map(CheckpointDto::from).collect(),
        stored_bytes: list.stored_bytes,
        max_checkpoints: list.max_checkpoints,
        max_bytes: list.max_bytes,
    })
}

/// A checkpoint Sluice took before a command, with its project: what the tray offers to undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandCheckpoint {
    pub project_id: String,
    pub project_name: String,
    pub id: String,
    /// The command it was taken before.
    pub command: String,
    /// When it was taken (RFC 3339, UTC).
    pub created: String,
}

/// The newest `max` checkpoints taken before commands, across the available read-write
/// projects, newest first. A project whose checkpoints cannot be read is left out.
pub fn recent_command_checkpoints(engine: &Engine, max: usize) -> Vec<CommandCheckpoint> {
    let projects = engine.projects().unwrap_or_default();
    let mut all: Vec<CommandCheckpoint> = projects
        .iter()
        .filter(|p| p.state.is_available() && p.access == sluice_core::AccessMode::ReadWrite)
        .flat_map(|p| {
            let list = engine.checkpoint_infos(p.id.as_str());
            list.unwrap_or_default().into_iter().filter_map(|c| {
                Some(CommandCheckpoint {
                    project_id: p.id.as_str().to_owned(),
                    project_name: p.name.clone(),
                    command: c.before_command?,
                    id: c.checkpoint_id,
                    created: c.created,
                })
            })
        })
        .collect();
    // RFC 3339 in UTC, one format: the text orders as the time does.
    all.sort_by(|a, b| b.created.cmp(&a.created));
    all.truncate(max);
    all
}

pub fn create_checkpoint(
    engine: &Engine,
    project: &str,
    name: Option<String>,
) -> Res<CheckpointDto> {
    let args = CreateCheckpointArgs { name, ..CreateCheckpointArgs::default() };
    Ok(engine.create_checkpoint(project, &args)?.into())
}

pub fn restore_checkpoint(engine: &Engine, project: &str, id: &str) -> Res<RestoredDto> {
    let out = engine.restore_checkpoint(project, id)?;
    Ok(RestoredDto {
        operation_id: out.operation_id,
        files: u32::try_from(out.files.len()).unwrap_or(u32::MAX),
    })
}
