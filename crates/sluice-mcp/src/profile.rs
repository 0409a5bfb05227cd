//! Which tool needs which profile: the one table of it. The ladder itself is
//! `sluice_core::Profile`; the tool names are this crate's. A profile only narrows what the
//! project's modes allow (the engine's checks stay); this is the extra check, made in
//! `SluiceServer::call_now` for every call and in `list_tools` for what a token is shown.

use sluice_core::{ErrorCode, Failure, Profile};
use sluice_engine::Caller;

/// The least profile that offers `tool`; `None` for a name that is no tool (rmcp refuses it).
/// Exhaustive over the tool list: a test fails when a tool has no entry.
pub(crate) fn minimum(tool: &str) -> Option<Profile> {
    Some(match tool {
        // Meta tools: in every profile. `drop_privileges` only takes away.
        "server_info" | "system_info" | "list_projects" | "drop_privileges" => Profile::Review,
        // Reading.
        "list_directory" | "stat" | "read_file" | "read_media" | "find_files" | "search_text"
        | "git_status" | "git_diff" | "git_log" | "git_show" | "git_refs" => Profile::Review,
        // Code intelligence from the syntax index: reading.
        "code_outline" | "code_symbols" | "code_definition" | "code_references" => Profile::Review,
        // Code intelligence from the project's language server: starting one runs the
        // project's code in its sandbox, as a build does.
        "code_hover" | "code_diagnostics" | "code_rename" => Profile::Agent,
        // Changing files.
        "write_file" | "edit_file" | "apply_patch" | "move_path" | "create_directory"
        | "delete_path" | "restore" | "list_backups" => Profile::Edit,
        // Git writes: local to the repository (no push, no fetch), undoable like file changes.
        "git_commit" | "git_branch" | "git_tag" | "git_switch" | "git_stash" => Profile::Edit,
        // Checkpoints: taking and restoring one changes what the project can go back to.
        "create_checkpoint" | "list_checkpoints" | "restore_checkpoint" => Profile::Edit,
        // A worktree is a new project made of the same repository, with its parent's modes.
        "git_worktree" => Profile::Edit,
        // Commands and jobs.
        "run_command" | "run_tests" | "run_build" | "start_job" | "job_status" | "job_logs"
        | "cancel_job" | "list_jobs" => Profile::Agent,
        // Typing into a job changes it (`Engine::job_to_write`): never below agent.
        "write_job_input" => Profile::Agent,
        // A request to a job's server may change what it serves (POST): as commands.
        "fetch_from_job" => Profile::Agent,
        _ => return None,
    })
}

/// Whether `caller`'s profile offers `tool` (a name that is no tool passes: rmcp refuses it).
pub(crate) fn offers(caller: &Caller, tool: &str) -> bool {
    minimum(tool).is_none_or(|needed| caller.profile >= needed)
}

/// The refusal of a call outside the caller's profile, naming both.
pub(crate) fn check(caller: &Caller, tool: &str) -> Result<(), Failure> {
    match minimum(tool) {
        Some(needed) if caller.profile < needed => Err(Failure::new(
            ErrorCode::OutsideProfile,
            format!(
                "{tool} is not in this token's profile ({profile}: {what}); it needs the {needed} \
                 profile, which only the user can give this token in Sluice",
                profile = caller.profile,
                what = caller.profile.describe(),
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::SluiceServer;

    #[test]
    fn every_tool_has_a_profile_and_the_ladder_only_adds() {
        let router = SluiceServer::all_tools();
        let tools = router.list_all();
        assert!(!tools.is_empty());
        for tool in &tools {
            assert!(minimum(&tool.name).is_some(), "{} has no profile in profile.rs", tool.name);
        }
        // Review is read-only tools only, by their own annotation.
        for tool in tools.iter().filter(|t| minimum(&t.name) == Some(Profile::Review)) {
            let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
            assert!(read_only == Some(true) || tool.name == "drop_privileges", "{}", tool.name);
        }
        assert_eq!(minimum("write_file"), Some(Profile::Edit));
        assert_eq!(minimum("run_command"), Some(Profile::Agent));
        assert_eq!(minimum("write_job_input"), Some(Profile::Agent));
        assert_eq!(minimum("no_such_tool"), None);
    }
}
