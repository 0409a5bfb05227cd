//! Every tool's arguments, deserialised by tool name exactly as a `tools/call` does (rmcp's
//! `Parameters<T>`: `serde_json::from_value` of the `arguments` object, an empty object when
//! there are none), followed by the conversions the tool itself makes before any engine call
//! (a command's spec and time limit). It exists for the fuzz target `tool_arguments`
//! (`crates/sluice-fuzz`), which feeds it arbitrary JSON: a malformed argument must come back
//! as an error, never a panic. A test checks it knows every tool `tools/list` lists.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use sluice_runner::{
    ApplyPatchArgs, CreateDirectoryArgs, DeletePathArgs, EditFileArgs, FindFilesArgs,
    ListBackupsArgs, ListDirectoryArgs, MovePathArgs, ReadFileArgs, ReadMediaArgs, RestoreArgs,
    SearchTextArgs, StatArgs, WriteFileArgs,
};

use crate::dto::DropPrivilegesArgs;
use crate::exec::{RUN_DEFAULT_TIMEOUT, RUN_MAX_TIMEOUT};
use crate::job_wire::{
    CommandArgs, JobArgs, JobLogsArgs, JobStatusArgs, ListJobsArgs, StartJobArgs, ToolchainArgs,
    WriteJobInputArgs,
};
use crate::server::{NoArgs, ProjectCall};

/// Every tool, by name.
pub const TOOLS: &[&str] = &[
    "apply_patch",
    "cancel_job",
    "code_definition",
    "code_diagnostics",
    "code_hover",
    "code_outline",
    "code_references",
    "code_rename",
    "code_symbols",
    "create_checkpoint",
    "create_directory",
    "delete_path",
    "drop_privileges",
    "edit_file",
    "fetch_from_job",
    "find_files",
    "git_branch",
    "git_commit",
    "git_diff",
    "git_log",
    "git_refs",
    "git_show",
    "git_stash",
    "git_status",
    "git_switch",
    "git_tag",
    "git_worktree",
    "job_logs",
    "job_status",
    "list_backups",
    "list_checkpoints",
    "list_directory",
    "list_jobs",
    "list_projects",
    "move_path",
    "read_file",
    "read_media",
    "restore",
    "restore_checkpoint",
    "run_build",
    "run_command",
    "run_tests",
    "search_text",
    "server_info",
    "start_job",
    "stat",
    "system_info",
    "write_file",
    "write_job_input",
];

/// Deserialises `arguments` as `tool`'s arguments; `None` for an unknown tool, else whether
/// they were accepted (with serde's message when not).
pub fn check(tool: &str, arguments: Map<String, Value>) -> Option<Result<(), String>> {
    let value = Value::Object(arguments);
    fn de<T: DeserializeOwned>(value: Value) -> Result<T, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }
    fn project<T: DeserializeOwned>(value: Value) -> Result<(), String> {
        de::<ProjectCall<T>>(value).map(drop)
    }
    Some(match tool {
        "list_projects" | "server_info" | "system_info" => de::<NoArgs>(value).map(drop),
        "drop_privileges" => de::<DropPrivilegesArgs>(value).map(drop),
        "list_directory" => project::<ListDirectoryArgs>(value),
        "stat" => project::<StatArgs>(value),
        "read_file" => project::<ReadFileArgs>(value),
        "read_media" => project::<ReadMediaArgs>(value),
        "find_files" => project::<FindFilesArgs>(value),
        "search_text" => project::<SearchTextArgs>(value),
        "code_outline" => project::<sluice_code::OutlineArgs>(value),
        "code_symbols" => project::<sluice_code::SymbolsArgs>(value),
        "code_definition" => project::<sluice_code::DefinitionArgs>(value),
        "code_references" => project::<sluice_code::ReferencesArgs>(value),
        "code_hover" => project::<sluice_code::lsp::Spot>(value),
        "code_diagnostics" => project::<crate::code_server::DiagnosticsArgs>(value),
        "code_rename" => project::<crate::code_server::RenameArgs>(value),
        "git_status" => project::<sluice_git::GitStatusArgs>(value),
        "git_diff" => project::<sluice_git::GitDiffArgs>(value),
        "git_log" => project::<sluice_git::GitLogArgs>(value),
        "git_show" => project::<sluice_git::GitShowArgs>(value),
        "git_refs" => project::<sluice_git::GitRefsArgs>(value),
        "git_commit" => project::<sluice_git::GitCommitArgs>(value),
        "git_branch" => project::<sluice_git::GitBranchArgs>(value),
        "git_tag" => project::<sluice_git::GitTagArgs>(value),
        "git_switch" => project::<sluice_git::GitSwitchArgs>(value),
        "git_stash" => project::<sluice_git::GitStashArgs>(value),
        "git_worktree" => project::<crate::worktree::GitWorktreeArgs>(value),
        "write_file" => project::<WriteFileArgs>(value),
        "edit_file" => project::<EditFileArgs>(value),
        "apply_patch" => project::<ApplyPatchArgs>(value),
        "move_path" => project::<MovePathArgs>(value),
        "create_directory" => project::<CreateDirectoryArgs>(value),
        "delete_path" => project::<DeletePathArgs>(value),
        "restore" => project::<RestoreArgs>(value),
        "list_backups" => project::<ListBackupsArgs>(value),
        "create_checkpoint" => project::<sluice_runner::CreateCheckpointArgs>(value),
        "list_checkpoints" => project::<NoArgs>(value),
        "restore_checkpoint" => project::<sluice_runner::RestoreCheckpointArgs>(value),
        "run_command" => de::<ProjectCall<CommandArgs>>(value).map(|call| {
            let spec = call.args.spec(RUN_DEFAULT_TIMEOUT, RUN_MAX_TIMEOUT);
            // What `prepare` checks first: the shape, before any policy.
            let _ = sluice_exec::spec::validate(&spec);
        }),
        "start_job" => de::<ProjectCall<StartJobArgs>>(value).map(|call| {
            let spec = call.args.command.spec(RUN_DEFAULT_TIMEOUT, RUN_MAX_TIMEOUT);
            let _ = sluice_exec::spec::validate(&spec);
        }),
        "run_tests" | "run_build" => project::<ToolchainArgs>(value),
        "cancel_job" => de::<JobArgs>(value).map(drop),
        "fetch_from_job" => de::<crate::job_wire::FetchFromJobArgs>(value).map(drop),
        "job_status" => de::<JobStatusArgs>(value).map(drop),
        "write_job_input" => de::<WriteJobInputArgs>(value).map(drop),
        "job_logs" => de::<JobLogsArgs>(value).map(drop),
        "list_jobs" => de::<ListJobsArgs>(value).map(drop),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_every_listed_tool() {
        let listed: Value =
            serde_json::from_str(include_str!("../tests/tools-list.json")).expect("the golden");
        let names: Vec<&str> = listed
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().expect("a name"))
            .collect();
        let mut known = TOOLS.to_vec();
        known.sort_unstable();
        let mut names_sorted = names.clone();
        names_sorted.sort_unstable();
        assert_eq!(known, names_sorted);
        for name in names {
            assert!(check(name, Map::new()).is_some(), "{name}");
        }
    }
}
