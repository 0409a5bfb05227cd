// The app's own commands, shared by build.rs (which turns each into an `allow-…` permission
// that capabilities/main.json grants to the main window only) and the shell. Keep in the order
// of `sluice_ipc::bindings::COMMANDS`; a test checks they match.
pub const COMMAND_NAMES: &[&str] = &[
    "app_state",
    "set_paused",
    "list_projects",
    "add_project",
    "set_project_modes",
    "set_project_enabled",
    "remove_project",
    "set_shield",
    "default_shield",
    "list_tokens",
    "create_token",
    "revoke_token",
    "audit",
    "verify_audit",
    "set_project_policy",
    "list_approvals",
    "decide_approval",
];
