//! The window's commands: one line each over `sluice_ipc`, which holds the logic and the tests.
//! Errors cross as `{code, message}`.

use sluice_core::Failure;
use sluice_ipc::{self as ipc, IpcError};
use tauri::State;

use crate::engine::Shell;
use crate::native;

type R<T> = Result<T, IpcError>;

// Async so they run on the runtime's workers, not the UI thread.

#[tauri::command]
async fn app_state(s: State<'_, Shell>) -> R<ipc::AppState> {
    ipc::app_state(&s.engine, &s.ctx)
}

#[tauri::command]
async fn set_paused(s: State<'_, Shell>, paused: bool) -> R<ipc::AppState> {
    ipc::set_paused(&s.engine, &s.ctx, paused)
}

#[tauri::command]
async fn list_projects(s: State<'_, Shell>) -> R<Vec<ipc::ProjectDto>> {
    ipc::list_projects(&s.engine)
}

/// Authorizing a folder opens it to assistants: confirmed in a native dialog, whether the path
/// came from the picker or was typed (SECURITY-CASES UI-04: a forged `add_project("/")`).
#[tauri::command]
async fn add_project(
    app: tauri::AppHandle,
    s: State<'_, Shell>,
    args: ipc::AddProject,
) -> R<ipc::ProjectDto> {
    let question = ipc::authorize_question(&args)?;
    native::confirm(&app, question, AUTHORIZE_TITLE, "Authorize", "Cancel").await?;
    ipc::add_project(&s.engine, args)
}

/// The title of the native dialog that confirms authorizing a folder (the e2e test answers it
/// by it).
const AUTHORIZE_TITLE: &str = "Sluice — authorize a folder?";

/// Read-write access or a more permissive execution mode widens what assistants can do:
/// confirmed in a native dialog (SECURITY-CASES UI-04).
#[tauri::command]
async fn set_project_modes(
    app: tauri::AppHandle,
    s: State<'_, Shell>,
    args: ipc::SetModes,
) -> R<ipc::ProjectDto> {
    if let Some(question) = ipc::widens_modes(&s.engine, &args)? {
        native::confirm(&app, question, WIDEN_TITLE, "Allow", "Keep as is").await?;
    }
    ipc::set_project_modes(&s.engine, args)
}

/// The title of the native dialogs that confirm widening a project's access (the e2e test
/// answers them by it).
const WIDEN_TITLE: &str = "Sluice — widen access?";

#[tauri::command]
async fn set_project_enabled(s: State<'_, Shell>, id: String, enabled: bool) -> R<ipc::ProjectDto> {
    ipc::set_project_enabled(&s.engine, &id, enabled)
}

#[tauri::command]
async fn list_allow_rules(s: State<'_, Shell>, project: String) -> R<Vec<ipc::AllowRuleDto>> {
    ipc::list_allow_rules(&s.engine, &project)
}

#[tauri::command]
async fn remove_allow_rule(
    s: State<'_, Shell>,
    project: String,
    id: i64,
) -> R<Vec<ipc::AllowRuleDto>> {
    ipc::remove_allow_rule(&s.engine, &project, id)
}

#[tauri::command]
async fn remove_project(s: State<'_, Shell>, id: String) -> R<ipc::ProjectDto> {
    ipc::remove_project(&s.engine, &id)
}

/// Dropping a shield pattern lets assistants see the files it hid: confirmed in a native dialog.
#[tauri::command]
async fn set_shield(
    app: tauri::AppHandle,
    s: State<'_, Shell>,
    id: String,
    patterns: Option<Vec<String>>,
) -> R<ipc::ProjectDto> {
    let exposed = ipc::unshielded(&s.engine, &id, patterns.as_deref())?;
    if !exposed.is_empty() {
        let project = s.engine.find_project(&id).map_err(IpcError::from)?;
        let question = format!(
            "Let assistants see files matching {} in {}?\n\nThese can hold secrets: keys, \
             tokens, credentials.",
            ipc::visible(&exposed.join(", ")),
            ipc::visible(&project.name)
        );
        native::confirm(&app, question, WIDEN_TITLE, "Show them", "Keep hidden").await?;
    }
    ipc::set_shield(&s.engine, &id, patterns)
}

#[tauri::command]
async fn default_shield() -> R<Vec<String>> {
    Ok(ipc::default_shield())
}

#[tauri::command]
async fn list_tokens(s: State<'_, Shell>) -> R<Vec<ipc::TokenDto>> {
    ipc::list_tokens(&s.engine)
}

#[tauri::command]
async fn create_token(s: State<'_, Shell>, args: ipc::CreateToken) -> R<ipc::CreatedToken> {
    ipc::create_token(&s.engine, &s.ctx, args)
}

#[tauri::command]
async fn revoke_token(s: State<'_, Shell>, id: String) -> R<ipc::TokenDto> {
    ipc::revoke_token(&s.engine, &id)
}

#[tauri::command]
async fn audit(s: State<'_, Shell>, query: ipc::AuditQuery) -> R<ipc::AuditPage> {
    ipc::audit(&s.engine, query)
}

#[tauri::command]
async fn verify_audit(s: State<'_, Shell>) -> R<ipc::ChainStatus> {
    ipc::verify_audit(&s.engine)
}

/// Letting changes run without asking widens what assistants can do: the user confirms that in
/// a native dialog, which the window's script cannot click (SECURITY-CASES UI-04).
#[tauri::command]
async fn set_project_policy(
    app: tauri::AppHandle,
    s: State<'_, Shell>,
    args: ipc::SetPolicy,
) -> R<ipc::ProjectDto> {
    if ipc::widens_policy(&s.engine, &args)? {
        let what = match (args.ask_deletes, args.ask_writes) {
            (Some(false), Some(false)) => "delete, move, create and change files",
            (Some(false), _) => "delete and move files",
            _ => "create and change files",
        };
        let project = s.engine.find_project(&args.id).map_err(IpcError::from)?;
        let question = format!(
            "Let assistants {what} in {} without asking you first?\n\nEvery change is still \
             backed up and recorded in the activity log.",
            ipc::visible(&project.name)
        );
        native::confirm(&app, question, "Sluice — stop asking?", "Stop asking", "Keep asking")
            .await?;
    }
    ipc::set_project_policy(&s.engine, args)
}

#[tauri::command]
async fn list_approvals(s: State<'_, Shell>) -> R<Vec<ipc::ApprovalDto>> {
    ipc::list_approvals(&s.engine)
}

#[tauri::command]
async fn decide_approval(
    s: State<'_, Shell>,
    id: String,
    verdict: ipc::Verdict,
    reason: Option<String>,
) -> R<ipc::ApprovalDto> {
    ipc::decide_approval(&s.engine, &id, verdict, reason, ipc::DecidedFrom::Window)
}

#[tauri::command]
async fn list_jobs(s: State<'_, Shell>) -> R<Vec<ipc::JobDto>> {
    ipc::list_jobs(&s.engine)
}

#[tauri::command]
async fn job_logs(s: State<'_, Shell>, query: ipc::JobLogsQuery) -> R<ipc::JobLogPage> {
    ipc::job_logs(&s.engine, query)
}

/// Killing a job tree waits for it to die: off the async workers.
#[tauri::command]
async fn cancel_job(s: State<'_, Shell>, id: String) -> R<ipc::JobDto> {
    let engine = s.engine.clone();
    blocking(move || ipc::cancel_job(&engine, &id)).await
}

/// Kills every job, denies every waiting approval, refuses AI requests until resumed.
#[tauri::command]
async fn emergency_stop(s: State<'_, Shell>) -> R<ipc::StopResult> {
    let (engine, ctx) = (s.engine.clone(), s.ctx.clone());
    blocking(move || ipc::emergency_stop(&engine, &ctx)).await
}

/// Letting a project's commands reach the network widens what they can do: confirmed in a
/// native dialog, like the approval policy.
#[tauri::command]
async fn set_project_network(
    app: tauri::AppHandle,
    s: State<'_, Shell>,
    args: ipc::SetNetwork,
) -> R<ipc::ProjectDto> {
    if ipc::widens_network(&s.engine, &args)? {
        let project = s.engine.find_project(&args.id).map_err(IpcError::from)?;
        let question = format!(
            "Let commands in {} open network connections?\n\nA command could then download \
             code or send the project's files elsewhere. Commands that run later get the new \
             setting; running ones keep theirs.",
            ipc::visible(&project.name)
        );
        native::confirm(&app, question, "Sluice — allow network?", "Allow network", "Keep off")
            .await?;
    }
    ipc::set_project_network(&s.engine, args)
}

/// Puts a secret (a token just created, a snippet holding one) on the clipboard and takes it
/// off after a minute, unless something else was copied since ([`native::copy_secret`]).
#[tauri::command]
async fn copy_secret(app: tauri::AppHandle, text: String) -> R<()> {
    native::copy_secret(&app, text)
}

/// The previews Connect waits on: one set for the app's lifetime (the window is one).
fn connector() -> &'static ipc::Connector {
    static CONNECTOR: std::sync::OnceLock<ipc::Connector> = std::sync::OnceLock::new();
    CONNECTOR.get_or_init(ipc::Connector::new)
}

#[tauri::command]
async fn list_clients(s: State<'_, Shell>) -> R<Vec<ipc::ClientDto>> {
    connector().list(&s.engine, &s.ctx)
}

#[tauri::command]
async fn connect_preview(s: State<'_, Shell>, client: String) -> R<ipc::ConfigPreview> {
    connector().connect_preview(&s.engine, &s.ctx, &client)
}

/// Writes the previewed change, then checks it with a real MCP call: off the async workers.
#[tauri::command]
async fn connect_apply(s: State<'_, Shell>, id: String) -> R<ipc::ConnectResult> {
    let engine = s.engine.clone();
    blocking(move || connector().connect_apply(&engine, &id)).await
}

#[tauri::command]
async fn disconnect_preview(s: State<'_, Shell>, client: String) -> R<ipc::ConfigPreview> {
    connector().disconnect_preview(&s.engine, &client)
}

#[tauri::command]
async fn disconnect_apply(s: State<'_, Shell>, id: String) -> R<ipc::DisconnectResult> {
    connector().disconnect_apply(&s.engine, &id)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> R<T> + Send + 'static) -> R<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .unwrap_or_else(|_| Err(Failure::internal().into()))
}

pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
    tauri::generate_handler![
        app_state,
        set_paused,
        list_projects,
        add_project,
        set_project_modes,
        set_project_enabled,
        remove_project,
        set_shield,
        default_shield,
        list_tokens,
        create_token,
        revoke_token,
        audit,
        verify_audit,
        set_project_policy,
        list_approvals,
        decide_approval,
        list_jobs,
        job_logs,
        cancel_job,
        emergency_stop,
        set_project_network,
        list_clients,
        connect_preview,
        connect_apply,
        disconnect_preview,
        disconnect_apply,
        list_allow_rules,
        remove_allow_rule,
        copy_secret,
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_acl_names_every_command_the_bindings_declare() {
        let declared: Vec<&str> = ipc::bindings::COMMANDS.iter().map(|c| c.0).collect();
        assert_eq!(crate::command_names::COMMAND_NAMES, declared.as_slice());
        let caps = include_str!("../capabilities/main.json");
        for name in declared {
            let permission = format!("\"allow-{}\"", name.replace('_', "-"));
            assert!(caps.contains(&permission), "capabilities/main.json lacks {permission}");
        }
    }

    use sluice_ipc as ipc;
}

#[cfg(test)]
mod security_config {
    //! SECURITY-CASES UI-02..04 as configuration checks: a strict CSP, a frozen prototype,
    //! capabilities for the main window only, no shell or fs plugin, no remote URLs.

    fn json(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn csp_is_strict_and_the_prototype_frozen() {
        let conf = json(include_str!("../../tauri.conf.json"));
        let security = &conf["app"]["security"];
        assert_eq!(security["csp"]["script-src"], "'self'");
        assert_eq!(security["freezePrototype"], true);
        let csp = security["csp"].to_string();
        for bad in ["unsafe-inline", "unsafe-eval", "http://", "https://"] {
            let allowed_ipc = csp.replace("http://ipc.localhost", "");
            assert!(!allowed_ipc.contains(bad), "CSP allows {bad}: {csp}");
        }
        assert!(security.get("dangerousDisableAssetCspModification").is_none());
    }

    #[test]
    fn capabilities_grant_only_what_the_window_needs() {
        let caps = json(include_str!("../capabilities/main.json"));
        assert_eq!(caps["windows"], serde_json::json!(["main"]));
        assert!(caps.get("remote").is_none(), "no remote URLs may reach IPC");
        for p in caps["permissions"].as_array().unwrap() {
            let p = p.as_str().unwrap();
            let ok = p == "core:default"
                || p == "dialog:allow-open"
                || p == "notification:default"
                || matches!(
                    p,
                    "autostart:allow-enable"
                        | "autostart:allow-disable"
                        | "autostart:allow-is-enabled"
                )
                || p.starts_with("allow-");
            assert!(ok, "unexpected permission {p}");
        }
    }
}
