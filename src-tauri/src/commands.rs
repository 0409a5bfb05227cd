//! The window's commands: one line each over `sluice_ipc`, which holds the logic and the tests.
//! Errors cross as `{code, message}`.

use sluice_core::{ErrorCode, Failure};
use sluice_ipc::{self as ipc, IpcError};
use tauri::State;
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

use crate::engine::Shell;

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

#[tauri::command]
async fn add_project(s: State<'_, Shell>, args: ipc::AddProject) -> R<ipc::ProjectDto> {
    ipc::add_project(&s.engine, args)
}

#[tauri::command]
async fn set_project_modes(s: State<'_, Shell>, args: ipc::SetModes) -> R<ipc::ProjectDto> {
    ipc::set_project_modes(&s.engine, args)
}

#[tauri::command]
async fn set_project_enabled(s: State<'_, Shell>, id: String, enabled: bool) -> R<ipc::ProjectDto> {
    ipc::set_project_enabled(&s.engine, &id, enabled)
}

#[tauri::command]
async fn remove_project(s: State<'_, Shell>, id: String) -> R<ipc::ProjectDto> {
    ipc::remove_project(&s.engine, &id)
}

#[tauri::command]
async fn set_shield(
    s: State<'_, Shell>,
    id: String,
    patterns: Option<Vec<String>>,
) -> R<ipc::ProjectDto> {
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
        let (tx, rx) = tokio::sync::oneshot::channel();
        app.dialog()
            .message(question)
            .title("Sluice — stop asking?")
            .kind(MessageDialogKind::Warning)
            .buttons(MessageDialogButtons::OkCancelCustom(
                "Stop asking".into(),
                "Keep asking".into(),
            ))
            .show(move |ok| {
                let _ = tx.send(ok);
            });
        if !rx.await.unwrap_or(false) {
            let kept = Failure::new(ErrorCode::Denied, "nothing changed: you chose to keep asking");
            return Err(kept.into());
        }
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
                || p.starts_with("allow-");
            assert!(ok, "unexpected permission {p}");
        }
    }
}
