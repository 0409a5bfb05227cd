//! The TypeScript side of the IPC contract, generated from the DTOs: every type, the event
//! channel's name, and a `Commands` map (command → argument object and result) that
//! `ui/src/api.ts` is typed against. The committed copy lives in `ui/src/bindings/ipc.ts`; a
//! test fails when it is stale (`UPDATE_BINDINGS=1 cargo test -p sluice-ipc` rewrites it).

use ts_rs::{Config, TS};

use crate::checkpoints::*;
use crate::confinement::*;
use crate::connect::*;
use crate::dto::*;
use crate::jobs::*;

/// Every command the window may call: name, argument object (TypeScript), result type.
/// The Tauri shell registers exactly these (a test in the shell checks the list).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("app_state", "Record<string, never>", "AppState"),
    ("set_up_sandbox_account", "Record<string, never>", "SandboxAccountSetup"),
    ("set_paused", "{ paused: boolean }", "AppState"),
    ("list_projects", "Record<string, never>", "ProjectDto[]"),
    ("add_project", "{ args: AddProject }", "ProjectDto"),
    ("set_project_modes", "{ args: SetModes }", "ProjectDto"),
    ("set_project_enabled", "{ id: string; enabled: boolean }", "ProjectDto"),
    ("remove_project", "{ id: string }", "ProjectDto"),
    ("set_shield", "{ id: string; patterns: string[] | null }", "ProjectDto"),
    ("default_shield", "Record<string, never>", "string[]"),
    ("set_autorun", "{ id: string; rules: AutoRunRuleDto[] | null }", "ProjectDto"),
    ("default_autorun", "Record<string, never>", "AutoRunRuleDto[]"),
    ("set_sandbox", "{ id: string; settings: SandboxSettingsDto }", "ProjectDto"),
    ("list_tokens", "Record<string, never>", "TokenDto[]"),
    ("create_token", "{ args: CreateToken }", "CreatedToken"),
    ("revoke_token", "{ id: string }", "TokenDto"),
    ("restore_token", "{ id: string }", "TokenDto"),
    ("set_token_profile", "{ id: string; profile: Profile }", "TokenDto"),
    ("audit", "{ query: AuditQuery }", "AuditPage"),
    ("verify_audit", "Record<string, never>", "ChainStatus"),
    ("set_project_policy", "{ args: SetPolicy }", "ProjectDto"),
    ("list_approvals", "Record<string, never>", "ApprovalDto[]"),
    ("decide_approval", "{ id: string; verdict: Verdict; reason: string | null }", "ApprovalDto"),
    ("list_jobs", "Record<string, never>", "JobDto[]"),
    ("job_logs", "{ query: JobLogsQuery }", "JobLogPage"),
    ("cancel_job", "{ id: string }", "JobDto"),
    ("open_job_port", "{ id: string; port: number }", "null"),
    ("emergency_stop", "Record<string, never>", "StopResult"),
    ("set_project_network", "{ args: SetNetwork }", "ProjectDto"),
    ("set_project_git_emails", "{ id: string; show: boolean }", "ProjectDto"),
    ("set_project_git_hooks", "{ id: string; run: boolean }", "ProjectDto"),
    ("list_checkpoints", "{ project: string }", "CheckpointsDto"),
    ("create_checkpoint", "{ project: string; name: string | null }", "CheckpointDto"),
    ("restore_checkpoint", "{ project: string; id: string }", "RestoredDto"),
    ("set_registries", "{ hosts: string[] | null }", "RegistryDto[]"),
    ("list_clients", "Record<string, never>", "ClientDto[]"),
    ("connect_preview", "{ client: string }", "ConfigPreview"),
    ("connect_apply", "{ id: string }", "ConnectResult"),
    ("disconnect_preview", "{ client: string }", "ConfigPreview"),
    ("disconnect_apply", "{ id: string }", "DisconnectResult"),
    ("client_health", "Record<string, never>", "ClientHealthDto[]"),
    ("repair_preview", "{ client: string }", "ConfigPreview"),
    ("repair_apply", "{ id: string }", "RepairResult"),
    ("list_allow_rules", "{ project: string }", "AllowRuleDto[]"),
    ("remove_allow_rule", "{ project: string; id: number }", "AllowRuleDto[]"),
    ("reach_state", "Record<string, never>", "ReachStateDto"),
    ("reach_on", "{ args: ReachOn }", "ReachStateDto"),
    ("reach_off", "Record<string, never>", "number"),
    ("reach_decide", "{ id: string; approve: boolean }", "ReachStateDto"),
    ("copy_secret", "{ text: string }", "null"),
    ("check_port", "{ port: number }", "PortCheck"),
    ("window_shown", "{ view: string }", "null"),
];

/// The full text of `ui/src/bindings/ipc.ts`.
pub fn typescript() -> String {
    let cfg = Config::default().with_large_int("number");
    let decls = [
        IpcError::decl(&cfg),
        Access::decl(&cfg),
        Exec::decl(&cfg),
        Net::decl(&cfg),
        RegistryDto::decl(&cfg),
        SecretInfo::decl(&cfg),
        IntegrityFindingDto::decl(&cfg),
        SandboxAccountState::decl(&cfg),
        AppState::decl(&cfg),
        SandboxAccountSetup::decl(&cfg),
        ProjectStatus::decl(&cfg),
        ApprovalPolicy::decl(&cfg),
        AutoRunActionDto::decl(&cfg),
        AutoRunRuleDto::decl(&cfg),
        AutoRunHitDto::decl(&cfg),
        SandboxSettingsDto::decl(&cfg),
        GuaranteeDto::decl(&cfg),
        SandboxPathDto::decl(&cfg),
        SandboxDto::decl(&cfg),
        ProjectDto::decl(&cfg),
        CheckpointDto::decl(&cfg),
        CheckpointsDto::decl(&cfg),
        RestoredDto::decl(&cfg),
        SetPolicy::decl(&cfg),
        SetNetwork::decl(&cfg),
        AddProject::decl(&cfg),
        SetModes::decl(&cfg),
        ScopeEntry::decl(&cfg),
        TokenDto::decl(&cfg),
        CreateToken::decl(&cfg),
        ClientSnippetDto::decl(&cfg),
        CreatedToken::decl(&cfg),
        Outcome::decl(&cfg),
        AuditQuery::decl(&cfg),
        AuditEntryDto::decl(&cfg),
        AuditPage::decl(&cfg),
        ChainStatus::decl(&cfg),
        ApprovalStatus::decl(&cfg),
        CommandDto::decl(&cfg),
        RiskLevel::decl(&cfg),
        RiskDto::decl(&cfg),
        ApprovalDto::decl(&cfg),
        Verdict::decl(&cfg),
        Channel::decl(&cfg),
        AllowRuleDto::decl(&cfg),
        PortStatus::decl(&cfg),
        PortCheck::decl(&cfg),
        JobStateDto::decl(&cfg),
        JobDto::decl(&cfg),
        JobPortDto::decl(&cfg),
        LogStream::decl(&cfg),
        JobLogsQuery::decl(&cfg),
        JobLogPage::decl(&cfg),
        StopResult::decl(&cfg),
        ClientDto::decl(&cfg),
        ConfigPreview::decl(&cfg),
        CheckResult::decl(&cfg),
        ConnectResult::decl(&cfg),
        DisconnectResult::decl(&cfg),
        ClientHealthDto::decl(&cfg),
        RepairResult::decl(&cfg),
        TunnelChoiceDto::decl(&cfg),
        TunnelDto::decl(&cfg),
        ReachSettingDto::decl(&cfg),
        ConnectionRequestDto::decl(&cfg),
        ReachStateDto::decl(&cfg),
        ReachOn::decl(&cfg),
        UiEvent::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from crates/sluice-ipc by `UPDATE_BINDINGS=1 cargo test -p sluice-ipc`.\n\
         // Do not edit by hand: a test fails when this file is stale.\n\n",
    );
    // The codes of every refusal (sluice_core::ErrorCode), so `IpcError.code` is a union the
    // compiler checks.
    let codes: Vec<String> =
        sluice_core::ErrorCode::ALL.iter().map(|c| format!("{:?}", c.as_str())).collect();
    out.push_str(&format!("export type ErrorCode = {};\n\n", codes.join(" | ")));
    // Client health (sluice_engine::HealthState, HealthCode) and integrity findings
    // (sluice_store::FindingKind): what the window branches on is a union too.
    let union = |name: &str, all: Vec<&str>| {
        let quoted: Vec<String> = all.iter().map(|s| format!("{s:?}")).collect();
        format!("export type {name} = {};\n\n", quoted.join(" | "))
    };
    out.push_str(&union(
        "HealthState",
        sluice_engine::clients_health::HealthState::ALL.iter().map(|s| s.as_str()).collect(),
    ));
    out.push_str(&union(
        "HealthCode",
        sluice_engine::clients_health::HealthCode::ALL.iter().map(|c| c.as_str()).collect(),
    ));
    out.push_str(&union(
        "FindingCode",
        sluice_engine::FindingKind::ALL.iter().map(|k| k.code()).collect(),
    ));
    // The token profiles (sluice_core::Profile), from the least to the most they offer, with
    // what each lets a token do.
    let profiles: Vec<String> =
        sluice_core::Profile::ALL.iter().map(|p| format!("{:?}", p.as_str())).collect();
    out.push_str(&format!("export type Profile = {};\n\n", profiles.join(" | ")));
    let described: Vec<String> = (sluice_core::Profile::ALL.iter())
        .map(|p| format!("{{ profile: {:?}, describe: {:?} }}", p.as_str(), p.describe()))
        .collect();
    out.push_str(&format!(
        "export const PROFILES: {{ profile: Profile; describe: string }}[] = [{}];\n\n",
        described.join(", ")
    ));
    for d in decls {
        out.push_str("export ");
        out.push_str(d.trim());
        out.push_str("\n\n");
    }
    out.push_str(&format!("export const EVENT_CHANNEL = {EVENT_CHANNEL:?};\n\n"));
    let views: Vec<String> = crate::VIEWS.iter().map(|v| format!("{v:?}")).collect();
    out.push_str(&format!("export const VIEWS = [{}] as const;\n\n", views.join(", ")));
    out.push_str(&format!(
        "export const DEFAULT_REACH_PORT = {};\n\n",
        crate::reach::DEFAULT_REACH_PORT
    ));
    out.push_str("export type Commands = {\n");
    for (name, args, result) in COMMANDS {
        out.push_str(&format!("  {name}: {{ args: {args}; result: {result} }};\n"));
    }
    out.push_str("};\n");
    out
}
