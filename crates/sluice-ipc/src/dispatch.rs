//! The window's commands by name: one table from a command's name and JSON arguments (what the
//! page passes to `invoke`) to the function in this crate that runs it.
//!
//! The desktop app's window lives in a process of its own, which forwards every command to the
//! tray process over a pipe; the tray process answers through [`call`]. Commands that widen
//! what assistants may do are confirmed first through [`Desktop::confirm`], a native dialog
//! the page's script cannot answer (docs/THREATS.md UI-04).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sluice_core::{ErrorCode, Failure};
use sluice_engine::Engine;

use crate::*;

mod question;

/// A command's named arguments, out of the page's argument object; unknown names are refused.
macro_rules! arg {
    ($args:expr, $($name:ident: $ty:ty),+ $(,)?) => {{
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Args { $($name: $ty),+ }
        let Args { $($name),+ } = parse::<Args>($args)?;
        ($($name),+)
    }};
}

/// A question for a native confirmation: `yes` widens something, `no` keeps things as they are
/// and is the default answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub title: &'static str,
    pub text: String,
    pub yes: &'static str,
    pub no: &'static str,
}

/// What the commands need from the desktop around them.
pub trait Desktop: Sync {
    /// Asks in a native dialog and waits for the answer: `true` only if the user chose `yes`.
    fn confirm(&self, question: Question) -> bool;
    /// Puts a secret on the clipboard for a short while.
    fn copy_secret(&self, text: String) -> Result<(), IpcError>;
    /// Opens a link in the user's browser (a job's published port on 127.0.0.1, nothing else).
    fn open_link(&self, url: String) -> Result<(), IpcError>;
}

/// The title of the dialog that confirms authorizing a folder (the e2e test answers it by it).
pub const AUTHORIZE_TITLE: &str = "Sluice — authorize a folder?";
/// The title of the dialogs that confirm widening a project's access.
pub const WIDEN_TITLE: &str = "Sluice — widen access?";

/// The title of the dialog that confirms putting a project's files back as a checkpoint holds
/// them.
pub const RESTORE_TITLE: &str = "Sluice — restore a checkpoint?";

/// The title of the dialogs that confirm exposing a store or a socket to a project's commands.
pub const SANDBOX_TITLE: &str = "Sluice — expose to commands?";

/// What a command runs against.
pub struct Api<'a> {
    pub engine: &'a Engine,
    pub ctx: &'a Context,
    pub connector: &'a Connector,
    pub desktop: &'a dyn Desktop,
}

/// Runs the command `cmd` with the page's arguments `args` (a JSON object) and returns its
/// result as JSON. An unknown command or malformed arguments are an error that changes
/// nothing. Blocking: confirmations wait for the user, some commands for processes to die.
pub fn call(api: &Api<'_>, cmd: &str, args: Value) -> Result<Value, IpcError> {
    let (e, ctx) = (api.engine, api.ctx);
    match cmd {
        "app_state" => out(app_state(e, ctx)),
        "set_up_sandbox_account" => out(set_up_sandbox_account(e, ctx)),
        "set_paused" => {
            let paused = arg!(args, paused: bool);
            out(set_paused(e, ctx, paused))
        }
        "list_projects" => out(list_projects(e)),
        "add_project" => {
            let args = arg!(args, args: AddProject);
            api.ask(question::authorize(&args)?)?;
            out(add_project(e, args))
        }
        "set_project_modes" => {
            let args = arg!(args, args: SetModes);
            api.ask(question::modes(e, &args)?)?;
            out(set_project_modes(e, args))
        }
        "set_project_enabled" => {
            let (id, enabled) = arg!(args, id: String, enabled: bool);
            out(set_project_enabled(e, &id, enabled))
        }
        "remove_project" => out(remove_project(e, &arg!(args, id: String))),
        "set_shield" => {
            let (id, patterns) = arg!(args, id: String, patterns: Option<Vec<String>>);
            api.ask(question::shield(e, &id, patterns.as_deref())?)?;
            out(set_shield(e, &id, patterns))
        }
        "default_shield" => out(Ok(default_shield())),
        "set_autorun" => {
            let (id, rules) = arg!(args, id: String, rules: Option<Vec<AutoRunRuleDto>>);
            api.ask(question::autorun(e, &id, rules.as_deref())?)?;
            out(set_autorun(e, &id, rules))
        }
        "default_autorun" => out(Ok(default_autorun())),
        "set_sandbox" => {
            let (id, settings) = arg!(args, id: String, settings: SandboxSettingsDto);
            api.ask(question::sandbox(e, &id, &settings)?)?;
            out(set_sandbox(e, &id, &settings))
        }
        "list_tokens" => out(list_tokens(e)),
        "create_token" => out(create_token(e, ctx, arg!(args, args: CreateToken))),
        "revoke_token" => out(revoke_token(e, &arg!(args, id: String))),
        "restore_token" => {
            let id = arg!(args, id: String);
            api.ask(question::restore_token(e, &id)?)?;
            out(restore_token(e, &id))
        }
        "set_token_profile" => {
            let (id, profile) = arg!(args, id: String, profile: String);
            let profile = crate::parse_profile(&profile)?;
            api.ask(question::token_profile(e, &id, profile)?)?;
            out(set_token_profile(e, &id, profile))
        }
        "audit" => out(audit(e, arg!(args, query: AuditQuery))),
        "verify_audit" => out(verify_audit(e)),
        "set_project_policy" => {
            let args = arg!(args, args: SetPolicy);
            api.ask(question::policy(e, &args)?)?;
            out(set_project_policy(e, args))
        }
        "list_approvals" => out(list_approvals(e)),
        "decide_approval" => {
            let (id, verdict, reason) =
                arg!(args, id: String, verdict: Verdict, reason: Option<String>);
            out(decide_approval(e, &id, verdict, reason, DecidedFrom::Window))
        }
        "list_jobs" => out(list_jobs(e)),
        "job_logs" => out(job_logs(e, arg!(args, query: JobLogsQuery))),
        "cancel_job" => out(cancel_job(e, &arg!(args, id: String))),
        "open_job_port" => {
            let (id, port) = arg!(args, id: String, port: u16);
            let url = job_port_link(e, &id, port)?;
            out(api.desktop.open_link(url))
        }
        "emergency_stop" => out(emergency_stop(e, ctx)),
        "set_project_network" => {
            let args = arg!(args, args: SetNetwork);
            api.ask(question::network(e, &args)?)?;
            out(set_project_network(e, args))
        }
        "set_project_git_emails" => {
            let (id, show) = arg!(args, id: String, show: bool);
            api.ask(question::git_emails(e, &id, show)?)?;
            out(set_project_git_emails(e, &id, show))
        }
        "set_project_git_hooks" => {
            let (id, run) = arg!(args, id: String, run: bool);
            api.ask(question::git_hooks(e, &id, run)?)?;
            out(set_project_git_hooks(e, &id, run))
        }
        "list_checkpoints" => out(list_checkpoints(e, &arg!(args, project: String))),
        "create_checkpoint" => {
            let (project, name) = arg!(args, project: String, name: Option<String>);
            out(create_checkpoint(e, &project, name))
        }
        "restore_checkpoint" => {
            let (project, id) = arg!(args, project: String, id: String);
            api.ask(Some(question::restore_checkpoint(e, &project, &id)?))?;
            out(restore_checkpoint(e, &project, &id))
        }
        "set_registries" => {
            let hosts = arg!(args, hosts: Option<Vec<String>>);
            api.ask(question::registries(e, hosts.as_deref())?)?;
            out(set_registries(e, hosts))
        }
        "list_clients" => out(api.connector.list(e, ctx)),
        "connect_preview" => {
            out(api.connector.connect_preview(e, ctx, &arg!(args, client: String)))
        }
        "connect_apply" => out(api.connector.connect_apply(e, &arg!(args, id: String))),
        "disconnect_preview" => {
            out(api.connector.disconnect_preview(e, &arg!(args, client: String)))
        }
        "disconnect_apply" => out(api.connector.disconnect_apply(e, &arg!(args, id: String))),
        "client_health" => out(api.connector.health(e, ctx)),
        "repair_preview" => out(api.connector.repair_preview(e, ctx, &arg!(args, client: String))),
        "repair_apply" => out(api.connector.repair_apply(e, ctx, &arg!(args, id: String))),
        "list_allow_rules" => out(list_allow_rules(e, &arg!(args, project: String))),
        "remove_allow_rule" => {
            let (project, id) = arg!(args, project: String, id: i64);
            out(remove_allow_rule(e, &project, id))
        }
        "reach_state" => out(reach::reach_state(e)),
        "reach_on" => {
            let args = arg!(args, args: ReachOn);
            let (req, next) = reach::check_reach_on(e, &args)?;
            api.ask(reach::reach_question(e, e.reach()?.as_ref(), &next)?)?;
            out(reach::reach_on(e, &req))
        }
        "reach_off" => out(reach::reach_off(e)),
        "reach_decide" => {
            let (id, approve) = arg!(args, id: String, approve: bool);
            let request = reach::decidable_request(e, &id)?;
            if approve {
                api.ask(reach::connect_question(e, &request)?)?;
            }
            out(reach::reach_decide(e, &id, approve))
        }
        "copy_secret" => out(api.desktop.copy_secret(arg!(args, text: String))),
        "check_port" => out(check_port(ctx, arg!(args, port: u16))),
        "window_shown" => out(window_shown(&arg!(args, view: String))),
        _ => Err(Failure::new(ErrorCode::InvalidArgument, "the window has no such command").into()),
    }
}

impl Api<'_> {
    /// Confirms natively when there is a question; `denied` unless the user chose `yes`.
    fn ask(&self, question: impl Into<Option<Question>>) -> Res<()> {
        let Some(question) = question.into() else { return Ok(()) };
        let no = question.no;
        if self.desktop.confirm(question) {
            Ok(())
        } else {
            Err(Failure::new(ErrorCode::Denied, format!("nothing changed: you chose \"{no}\""))
                .into())
        }
    }
}

fn parse<T: DeserializeOwned>(args: Value) -> Res<T> {
    // Arguments are named: serde would also take a struct from an array, in field order.
    if !args.is_object() {
        return Err(invalid("the window sent arguments this command cannot take: not an object"));
    }
    serde_json::from_value(args).map_err(|err| {
        invalid(format!("the window sent arguments this command cannot take: {err}"))
    })
}

fn out<T: Serialize>(result: Res<T>) -> Result<Value, IpcError> {
    let value = result?;
    serde_json::to_value(value).map_err(|_| Failure::internal().into())
}
