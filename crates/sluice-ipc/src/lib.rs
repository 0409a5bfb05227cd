//! The desktop window's API: serializable DTOs and the commands over [`Engine`] that the Tauri
//! shell exposes one-to-one. No `tauri` here, so every command is tested headless; the
//! TypeScript types in `ui/src/bindings/` are generated from these structs (see [`bindings`]).
//!
//! DTOs are the wire format, not the engine's domain types: they carry what the window shows,
//! with physical paths (the window is the local user's own) and never a token's hash.

mod checkpoints;
mod confinement;
mod connect;
pub mod dispatch;
mod dto;
mod jobs;
pub mod reach;
pub mod wire;

use std::path::{Path, PathBuf};
use std::time::Duration;

use sluice_core::{ErrorCode, Failure, GitEmails, GitHooks, NetworkMode, Profile};
use sluice_engine::{AuditFilter, Decision, Engine, EngineEvent, clients};

pub use checkpoints::*;
pub use confinement::{SandboxAccountSetup, SandboxAccountState, set_up_sandbox_account};
pub use connect::*;
pub use dto::*;
pub use jobs::*;

/// What the commands need beyond the engine: facts about this process.
#[derive(Debug, Clone)]
pub struct Context {
    /// The port the MCP server listens on (127.0.0.1).
    pub port: u16,
    /// The `sluice` binary stdio-only clients run (`sluice stdio`).
    pub sluice_binary: PathBuf,
    /// The app's version.
    pub version: String,
}

type Res<T> = Result<T, IpcError>;

impl From<Failure> for IpcError {
    fn from(f: Failure) -> IpcError {
        IpcError { code: f.code.as_str().to_owned(), message: f.message }
    }
}

fn invalid(message: impl Into<String>) -> IpcError {
    Failure::new(ErrorCode::InvalidArgument, message).into()
}

/// The state the top bar, the tray and Settings show.
pub fn app_state(engine: &Engine, ctx: &Context) -> Res<AppState> {
    let (source, reason) = engine.secret_source();
    let keychain = match source {
        sluice_engine::SecretSource::Keychain(name) => {
            SecretInfo { in_keychain: true, location: name.clone(), reason: None }
        }
        sluice_engine::SecretSource::File(path) => SecretInfo {
            in_keychain: false,
            location: path.display().to_string(),
            reason: reason.map(str::to_owned),
        },
    };
    let report = sluice_engine::job_confinement();
    Ok(AppState {
        paused: engine.is_paused()?,
        stopped: engine.is_stopped()?,
        port: ctx.port,
        mcp_url: format!("http://127.0.0.1:{}/mcp", ctx.port),
        data_dir: engine.data_dir().display().to_string(),
        secret: keychain,
        version: ctx.version.clone(),
        confinement: report.summary.clone(),
        namespaces: report.namespaces,
        guarantees: confinement::guarantee_dtos(&report),
        hidden_from_jobs: confinement::hidden_from_jobs(),
        sandbox_account: confinement::sandbox_account(engine),
        registries: registries(engine)?,
        registries_available: report.serves_registries(),
        integrity: engine.integrity()?.iter().map(IntegrityFindingDto::from).collect(),
    })
}

/// The window's views, in the sidebar's order (Ctrl+1…7); the page takes them from the
/// bindings.
pub const VIEWS: &[&str] =
    &["projects", "tokens", "approvals", "jobs", "activity", "settings", "clients"];

/// The page reports that it has rendered `view` with the app's state loaded. Logged, so a check
/// outside the page (the package test, `bench app`) can tell a window showing Sluice from one
/// showing an error page: the message comes only from the page's own script, after it drew.
pub fn window_shown(view: &str) -> Res<()> {
    if !VIEWS.contains(&view) {
        return Err(invalid("the window has no such view"));
    }
    tracing::info!(view, "window shows the view");
    Ok(())
}

/// Whether `port` on 127.0.0.1 is free for Sluice's MCP server, taken by another program, or
/// the one this Sluice serves on (the window cannot change the port: it is chosen before
/// Sluice starts, with `SLUICE_PORT`). Binds the port for an instant to find out, the way the
/// server binds it; nothing listens or accepts meanwhile.
pub fn check_port(ctx: &Context, port: u16) -> Res<PortCheck> {
    if port == 0 {
        return Err(invalid("choose a port between 1 and 65535"));
    }
    let ours = port == ctx.port;
    let (status, message) = match std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
    {
        Ok(listener) => {
            drop(listener);
            if ours {
                (
                    PortStatus::Free,
                    format!(
                        "Port {port} is free: Sluice's MCP server is not listening on it any \
                         more. Quit and restart Sluice."
                    ),
                )
            } else {
                (PortStatus::Free, format!("Port {port} is free."))
            }
        }
        // This process bound its port when it started and serves MCP there until it quits.
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && ours => (
            PortStatus::ThisSluice,
            format!("Port {port} is served by this Sluice: its MCP endpoint listens there."),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            (PortStatus::InUse, format!("Port {port} is in use by another program."))
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => (
            PortStatus::Unavailable,
            format!(
                "Port {port} needs administrator rights on this system; choose one above 1023."
            ),
        ),
        Err(e) => (PortStatus::Unavailable, format!("Port {port} cannot be used here: {e}.")),
    };
    Ok(PortCheck { port, status, message })
}

/// Pauses AI access, or resumes it — which lifts an emergency stop too.
pub fn set_paused(engine: &Engine, ctx: &Context, paused: bool) -> Res<AppState> {
    engine.set_paused(paused)?;
    app_state(engine, ctx)
}

pub fn list_projects(engine: &Engine) -> Res<Vec<ProjectDto>> {
    Ok(engine.projects()?.iter().map(ProjectDto::from).collect())
}

pub fn add_project(engine: &Engine, args: AddProject) -> Res<ProjectDto> {
    let path = checked_folder(&args.path)?;
    let name = args.name.as_deref().map(str::trim).filter(|n| !n.is_empty());
    let p = engine.add_project(Path::new(path), name, args.access.into(), args.exec.into())?;
    Ok(ProjectDto::from(&p))
}

pub fn set_project_modes(engine: &Engine, args: SetModes) -> Res<ProjectDto> {
    let p = engine.set_modes(&args.id, args.access.map(Into::into), args.exec.map(Into::into))?;
    Ok(ProjectDto::from(&p))
}

pub fn set_project_enabled(engine: &Engine, id: &str, enabled: bool) -> Res<ProjectDto> {
    let p = if enabled { engine.enable_project(id)? } else { engine.disable_project(id)? };
    Ok(ProjectDto::from(&p))
}

pub fn remove_project(engine: &Engine, id: &str) -> Res<ProjectDto> {
    Ok(ProjectDto::from(&engine.remove_project(id)?))
}

/// Replaces the shield list; `None` restores the defaults.
pub fn set_shield(engine: &Engine, id: &str, patterns: Option<Vec<String>>) -> Res<ProjectDto> {
    let patterns = patterns.as_deref().map(clean_patterns);
    Ok(ProjectDto::from(&engine.set_shield(id, patterns)?))
}

/// Replaces a project's sandbox settings (the shell confirms what widens first:
/// [`sandbox_widening`]).
pub fn set_sandbox(engine: &Engine, id: &str, settings: &SandboxSettingsDto) -> Res<ProjectDto> {
    Ok(ProjectDto::from(&engine.set_sandbox(id, settings.parse()?)?))
}

/// What `settings` would expose that project `id`'s current ones do not, one sentence each;
/// empty when nothing widens. Bad paths are refused here, before anyone is asked.
pub fn sandbox_widening(
    engine: &Engine,
    id: &str,
    settings: &SandboxSettingsDto,
) -> Res<Vec<String>> {
    Ok(engine.sandbox_widening(id, &settings.parse()?)?)
}

/// Replaces the auto-run list; `None` restores the defaults.
pub fn set_autorun(
    engine: &Engine,
    id: &str,
    rules: Option<Vec<AutoRunRuleDto>>,
) -> Res<ProjectDto> {
    let rules = rules.map(|r| r.into_iter().map(sluice_core::AutoRunRule::from).collect());
    Ok(ProjectDto::from(&engine.set_autorun(id, rules)?))
}

/// The default auto-run list, shown beside a project's own list.
pub fn default_autorun() -> Vec<AutoRunRuleDto> {
    sluice_engine::default_autorun_rules().iter().map(AutoRunRuleDto::from).collect()
}

/// The auto-run patterns `rules` (`None`: the defaults) would guard less than now: dropped
/// from the list, or turned from refuse to ask. Changes to matching files would then land
/// without the user's approval, or with only their approval.
pub fn relaxed_autorun(
    engine: &Engine,
    id: &str,
    rules: Option<&[AutoRunRuleDto]>,
) -> Res<Vec<String>> {
    let p = engine.find_project(id)?;
    let now: Vec<AutoRunRuleDto> = match &p.autorun_rules {
        Some(r) => r.iter().map(AutoRunRuleDto::from).collect(),
        None => default_autorun(),
    };
    let next: Vec<AutoRunRuleDto> = rules.map_or_else(default_autorun, <[_]>::to_vec);
    let action_of = |list: &[AutoRunRuleDto], pattern: &str| {
        let trimmed = pattern.trim();
        let mut found = list.iter().filter(|r| r.pattern.trim() == trimmed).map(|r| r.action);
        let first = found.next();
        // Several entries with one pattern: the strictest applies.
        if first == Some(AutoRunActionDto::Refuse) || found.any(|a| a == AutoRunActionDto::Refuse) {
            Some(AutoRunActionDto::Refuse)
        } else {
            first
        }
    };
    let mut relaxed: Vec<String> = Vec::new();
    for r in &now {
        let was = action_of(&now, &r.pattern);
        let will = action_of(&next, &r.pattern);
        let weaker = matches!(
            (was, will),
            (Some(_), None) | (Some(AutoRunActionDto::Refuse), Some(AutoRunActionDto::Ask))
        );
        if weaker && !relaxed.contains(&r.pattern) {
            relaxed.push(r.pattern.clone());
        }
    }
    Ok(relaxed)
}

/// Shield patterns as stored: trimmed, blanks dropped.
fn clean_patterns(patterns: &[String]) -> Vec<String> {
    patterns.iter().map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect()
}

pub fn list_tokens(engine: &Engine) -> Res<Vec<TokenDto>> {
    let names = project_names(engine)?;
    Ok(engine.tokens()?.iter().map(|t| TokenDto::new(t, &names)).collect())
}

/// Longest expiry the window offers, to keep the arithmetic and the promise sane.
const MAX_EXPIRY_DAYS: u32 = 3650;

pub fn create_token(engine: &Engine, ctx: &Context, args: CreateToken) -> Res<CreatedToken> {
    let expires_in = match args.expires_in_days {
        None => None,
        Some(0) => return Err(invalid("an expiry must be at least one day")),
        Some(d) if d > MAX_EXPIRY_DAYS => {
            return Err(invalid("an expiry can be at most ten years; choose \"never\" instead"));
        }
        Some(d) => Some(Duration::from_secs(u64::from(d) * 86_400)),
    };
    if args.scope.as_ref().is_some_and(Vec::is_empty) {
        return Err(invalid("choose at least one project, or all projects"));
    }
    let profile = args.profile.as_deref().map_or(Ok(Profile::Review), parse_profile)?;
    let (record, secret) =
        engine.create_token_with_profile(&args.label, args.scope, expires_in, profile)?;
    let names = project_names(engine)?;
    let endpoint = clients::Endpoint { port: ctx.port, token: &secret, binary: &ctx.sluice_binary };
    let snippets = clients::all(&endpoint)
        .into_iter()
        .map(|s| ClientSnippetDto {
            client: s.client.to_owned(),
            title: s.title.to_owned(),
            target: s.target.to_owned(),
            text: s.text,
            holds_token: s.holds_token,
            link_installs: s.link.as_ref().map(|l| l.installs.clone()),
            link: s.link.map(|l| l.url),
            plain_text: s.storage.plain_text(),
            note: s.note.map(str::to_owned),
        })
        .collect();
    Ok(CreatedToken { token: TokenDto::new(&record, &names), secret, snippets })
}

pub fn revoke_token(engine: &Engine, id: &str) -> Res<TokenDto> {
    let names = project_names(engine)?;
    Ok(TokenDto::new(&engine.revoke_token(id)?, &names))
}

/// The native question before lifting the limit an assistant put on its own token: restoring
/// widens what it may do. Refused (nothing asked) for a token with no such limit.
pub fn restore_token_question(engine: &Engine, id: &str) -> Res<String> {
    let t =
        engine.tokens()?.into_iter().find(|t| t.id.as_str() == id).ok_or_else(|| {
            Failure::new(ErrorCode::NotFound, format!("no token {:?}", visible(id)))
        })?;
    let Some((limit, _)) = t.self_limit else {
        return Err(IpcError::from(Failure::invalid(format!(
            "token {} has no limit of its own to lift",
            visible(&t.label)
        ))));
    };
    let had = match limit {
        sluice_core::SelfLimit::ReadOnly => "limited itself to read-only",
        sluice_core::SelfLimit::Paused => "paused itself",
    };
    Ok(format!(
        "The assistant using {} {had}. Restore it? It gets back everything its projects allow.",
        visible(&t.label)
    ))
}

/// Lifts the limit an assistant put on its own token (after [`restore_token_question`]).
/// A profile's name, or `invalid_argument` naming the profiles.
pub(crate) fn parse_profile(s: &str) -> Res<Profile> {
    s.parse().map_err(|e: String| invalid(e))
}

pub fn set_token_profile(engine: &Engine, id: &str, profile: Profile) -> Res<TokenDto> {
    let names = project_names(engine)?;
    Ok(TokenDto::new(&engine.set_token_profile(id, profile)?, &names))
}

pub fn restore_token(engine: &Engine, id: &str) -> Res<TokenDto> {
    let names = project_names(engine)?;
    Ok(TokenDto::new(&engine.lift_token_limit(id)?, &names))
}

/// At most this many audit entries per page.
const MAX_AUDIT_PAGE: u32 = 500;

pub fn audit(engine: &Engine, query: AuditQuery) -> Res<AuditPage> {
    let mut filter = AuditFilter::default();
    if let Some(p) = query.project.as_deref().filter(|s| !s.is_empty()) {
        filter.project_id = Some(engine.find_project(p)?.id);
    }
    if let Some(t) = query.token.as_deref().filter(|s| !s.is_empty()) {
        filter.token_id =
            Some(sluice_core::TokenId::parse(t).ok_or_else(|| invalid(format!("no token {t:?}")))?);
    }
    filter.outcome = query.outcome.map(Into::into);
    let limit = query.limit.clamp(1, MAX_AUDIT_PAGE) as usize;
    let names = project_names(engine)?;
    let action = query.action.as_deref().filter(|s| !s.is_empty());
    let entries = engine
        .audit_list(&filter, limit, query.before_seq)?
        .iter()
        .map(|e| AuditEntryDto::new(e, &names))
        .filter(|e| action.is_none_or(|a| e.action == a))
        .collect();
    Ok(AuditPage { entries })
}

pub fn verify_audit(engine: &Engine) -> Res<ChainStatus> {
    let r = engine.audit_verify()?;
    Ok(ChainStatus {
        entries: r.entries,
        intact: r.intact,
        break_at: r.first_break.as_ref().map(|b| b.seq),
        break_reason: r.first_break.map(|b| b.reason),
    })
}

/// Sets which changes in a project ask first; `null` keeps a setting.
pub fn set_project_policy(engine: &Engine, args: SetPolicy) -> Res<ProjectDto> {
    let p = engine.set_policy(&args.id, args.ask_deletes, args.ask_writes)?;
    Ok(ProjectDto::from(&p))
}

/// Whether `args` would let changes run without asking that asked before (the shell confirms
/// that natively before calling [`set_project_policy`]).
/// What `args` would newly let assistants do in the project, as a question for the native
/// confirmation; `None` when nothing widens (the same or a narrower mode).
pub fn widens_modes(engine: &Engine, args: &SetModes) -> Res<Option<String>> {
    use sluice_core::{AccessMode, ExecMode};
    let p = engine.find_project(&args.id)?;
    let mut more = Vec::new();
    if p.access == AccessMode::ReadOnly
        && args.access.map(AccessMode::from) == Some(AccessMode::ReadWrite)
    {
        more.push(WRITE_PHRASE);
    }
    if let Some(exec) = args.exec.map(ExecMode::from)
        && exec > p.exec
    {
        more.push(exec_phrase(exec));
    }
    Ok((!more.is_empty())
        .then(|| format!("Let assistants {} in {}?", more.join("; and "), visible(&p.name))))
}

/// The question the native confirmation asks before a folder is authorized (adding a project
/// is the widest change there is: docs/THREATS.md UI-04). Checks what can be checked without
/// the engine first, so a mistyped path is an error, not a dialog.
pub fn authorize_question(args: &AddProject) -> Res<String> {
    use sluice_core::{AccessMode, ExecMode};
    let path = checked_folder(&args.path)?;
    let mut what = vec!["read its files"];
    if AccessMode::from(args.access) == AccessMode::ReadWrite {
        what.push(WRITE_PHRASE);
    }
    let exec = ExecMode::from(args.exec);
    if exec > ExecMode::Off {
        what.push(exec_phrase(exec));
    }
    Ok(format!(
        "Let AI assistants {} in the folder {}? You can pause them or remove the folder at any time.",
        what.join("; and "),
        visible(path)
    ))
}

const WRITE_PHRASE: &str = "create, change and move its files, and delete them with your approval";

fn exec_phrase(exec: sluice_core::ExecMode) -> &'static str {
    use sluice_core::ExecMode;
    match exec {
        ExecMode::Off => "run nothing",
        ExecMode::Safe => "run version checks and read-only inspections in it",
        ExecMode::Project => "build, test and run it through its own toolchain",
        ExecMode::Any => "run any program in it, asking you each time unless you always allowed it",
    }
}

/// A folder path as typed or picked: absolute, trimmed.
fn checked_folder(path: &str) -> Res<&str> {
    let path = path.trim();
    if path.is_empty() {
        return Err(invalid("choose a folder or type its full path"));
    }
    if !Path::new(path).is_absolute() {
        return Err(invalid("type the folder's full path (for example /home/you/code/my-app)"));
    }
    Ok(path)
}

/// The shield patterns `patterns` (`None`: the defaults) would stop applying to the project:
/// files matching them become visible to assistants.
pub fn unshielded(engine: &Engine, id: &str, patterns: Option<&[String]>) -> Res<Vec<String>> {
    let p = engine.find_project(id)?;
    let now = p.shield_patterns.unwrap_or_else(default_shield);
    let next = patterns.map_or_else(default_shield, clean_patterns);
    Ok(now.into_iter().filter(|p| !next.contains(p)).collect())
}

pub fn widens_policy(engine: &Engine, args: &SetPolicy) -> Res<bool> {
    let p = engine.find_project(&args.id)?;
    Ok((p.ask_deletes && args.ask_deletes == Some(false))
        || (p.ask_writes && args.ask_writes == Some(false)))
}

/// Sets what a project's commands may reach, or `None` for the execution mode's default.
/// Running jobs keep the setting they started with.
pub fn set_project_network(engine: &Engine, args: SetNetwork) -> Res<ProjectDto> {
    Ok(ProjectDto::from(&engine.set_network(&args.id, args.network.map(NetworkMode::from))?))
}

/// Sets whether a project's git tools show the e-mail addresses of its history (the shell
/// confirms showing them natively first).
pub fn set_project_git_emails(engine: &Engine, id: &str, show: bool) -> Res<ProjectDto> {
    let emails = if show { GitEmails::Show } else { GitEmails::Hide };
    Ok(ProjectDto::from(&engine.set_git_emails(id, emails)?))
}

/// Sets whether a project's commits run its git hooks, each as a job in its sandbox (the shell
/// confirms turning them on natively first).
pub fn set_project_git_hooks(engine: &Engine, id: &str, run: bool) -> Res<ProjectDto> {
    let hooks = if run { GitHooks::Sandbox } else { GitHooks::Off };
    Ok(ProjectDto::from(&engine.set_git_hooks(id, hooks)?))
}

/// The network `args` would give the project's commands when it reaches more than now (the
/// shell confirms that natively before calling [`set_project_network`]); `None` otherwise.
pub fn widens_network(engine: &Engine, args: &SetNetwork) -> Res<Option<NetworkMode>> {
    let p = engine.find_project(&args.id)?;
    let now = sluice_engine::NetworkSetting::of_project(&p).mode;
    let next = sluice_engine::NetworkSetting::of(p.exec, args.network.map(NetworkMode::from)).mode;
    Ok((next > now).then_some(next))
}

/// The hosts of the `registries` network, with what each known one serves.
pub fn registries(engine: &Engine) -> Res<Vec<RegistryDto>> {
    Ok(registry_dtos(&engine.registries()?))
}

fn registry_dtos(list: &sluice_exec::HostList) -> Vec<RegistryDto> {
    list.hosts()
        .iter()
        .map(|host| RegistryDto {
            host: host.clone(),
            serves: sluice_exec::DEFAULT_REGISTRIES
                .iter()
                .find(|(h, _)| h == host)
                .map(|(_, what)| (*what).to_owned()),
        })
        .collect()
}

/// Sets the list (`None`: the default one). A bad entry changes nothing.
pub fn set_registries(engine: &Engine, hosts: Option<Vec<String>>) -> Res<Vec<RegistryDto>> {
    Ok(registry_dtos(&engine.set_registries(hosts)?))
}

/// The hosts `hosts` would add to the list (the shell confirms them natively first).
pub fn added_registries(engine: &Engine, hosts: Option<&[String]>) -> Res<Vec<String>> {
    let now = engine.registries()?;
    let next = match hosts {
        Some(hosts) => sluice_exec::HostList::parse(hosts).map_err(invalid)?,
        None => sluice_exec::HostList::registries(),
    };
    Ok(next.hosts().iter().filter(|h| !now.hosts().contains(h)).cloned().collect())
}

/// The exact commands project `project` runs without asking, oldest first.
pub fn list_allow_rules(engine: &Engine, project: &str) -> Res<Vec<AllowRuleDto>> {
    let p = engine.find_project(project)?;
    Ok(engine.allow_rules(Some(&p.id))?.iter().map(AllowRuleDto::from).collect())
}

/// Removes one of project `project`'s allow rules (that command asks again); returns the rest.
pub fn remove_allow_rule(engine: &Engine, project: &str, id: i64) -> Res<Vec<AllowRuleDto>> {
    let p = engine.find_project(project)?;
    if !engine.allow_rules(Some(&p.id))?.iter().any(|r| r.id == id) {
        return Err(IpcError::from(Failure::new(
            ErrorCode::NotFound,
            format!("project {} has no allow rule {id}", p.name),
        )));
    }
    engine.remove_allow_rule(id)?;
    list_allow_rules(engine, project)
}

/// Pending approvals (oldest first), then recent decisions.
pub fn list_approvals(engine: &Engine) -> Res<Vec<ApprovalDto>> {
    Ok(engine.approvals()?.iter().map(|a| approval_dto(engine, a)).collect())
}

fn approval_dto(engine: &Engine, record: &sluice_engine::ApprovalRecord) -> ApprovalDto {
    let mut dto = ApprovalDto::from(record);
    dto.risk = engine.approval_risk(record).as_ref().map(RiskDto::from);
    // What another program runs on its own is the weightiest part of a change: the class says
    // so first, and why names the program and what it does.
    if let Some(first) = dto.autorun.first() {
        const CLASS: &str = "another program runs it on its own";
        let why = match dto.autorun.len() {
            1 => first.consequence.clone(),
            n => format!("{} (and {} more such paths)", first.consequence, n - 1),
        };
        dto.risk = Some(match dto.risk.take() {
            Some(r) => RiskDto {
                level: r.level,
                class: format!("{CLASS}; {}", r.class),
                why: format!("{why}; {}", r.why),
            },
            None => RiskDto { level: None, class: CLASS.to_owned(), why },
        });
    }
    if dto.status == ApprovalStatus::Pending
        && let Some(rule) = engine.approval_command(record)
    {
        dto.always_allowable = true;
        let project = engine.find_project(record.project_id.as_str()).ok();
        let network = project
            .as_ref()
            .map_or(Net::Off, |p| sluice_engine::NetworkSetting::of_project(p).mode.into());
        let confinement = sluice_engine::job_confinement().summary;
        let mut command = CommandDto::new(&rule, network, confinement);
        command.sandbox = project.as_ref().map(SandboxDto::from);
        dto.command = Some(command);
    }
    dto
}

/// The approvals waiting for the user, oldest first (the tray's submenu).
pub fn pending_approvals(engine: &Engine) -> Res<Vec<ApprovalDto>> {
    let mut all = list_approvals(engine)?;
    all.retain(|a| a.status == ApprovalStatus::Pending);
    Ok(all)
}

pub fn approval(engine: &Engine, id: &str) -> Res<ApprovalDto> {
    Ok(approval_dto(engine, &engine.approval(id)?))
}

/// Where a decision was taken, recorded as who decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecidedFrom {
    Window,
    Tray,
}

impl DecidedFrom {
    pub fn actor(self) -> &'static str {
        match self {
            DecidedFrom::Window => "local user (window)",
            DecidedFrom::Tray => "local user (tray)",
        }
    }

    /// Where an "always allow" rule decided here says it was added.
    pub fn channel(self) -> sluice_engine::Channel {
        match self {
            DecidedFrom::Window => sluice_engine::Channel::Window,
            DecidedFrom::Tray => sluice_engine::Channel::Tray,
        }
    }
}

/// Longest reason the window sends back to the assistant.
const MAX_REASON_CHARS: usize = 500;

/// The user approves or denies a pending approval. Each approval is decided once: a second
/// decision (or one after expiry) is refused with `conflict`; approving while paused with
/// `paused`. A reason only accompanies a denial.
pub fn decide_approval(
    engine: &Engine,
    id: &str,
    verdict: Verdict,
    reason: Option<String>,
    from: DecidedFrom,
) -> Res<ApprovalDto> {
    let decision = match verdict {
        Verdict::Approve => Decision::Approve,
        Verdict::ApproveAlways => Decision::ApproveAlways { from: from.channel() },
        Verdict::Deny => {
            let reason = reason.map(|r| r.trim().to_owned()).filter(|r| !r.is_empty());
            if reason.as_ref().is_some_and(|r| r.chars().count() > MAX_REASON_CHARS) {
                return Err(invalid(format!(
                    "a reason can be at most {MAX_REASON_CHARS} characters"
                )));
            }
            Decision::Deny { reason }
        }
    };
    Ok(ApprovalDto::from(&engine.decide(id, decision, from.actor())?))
}

/// [`sluice_core::text::visible`], owned, for the DTOs' fields.
pub use sluice_core::text::visible_owned as visible;

/// The default sensitive-file patterns, shown beside a project's own list.
pub fn default_shield() -> Vec<String> {
    sluice_engine::default_shield_patterns()
}

/// An engine event as the window receives it.
pub fn event(e: &EngineEvent) -> UiEvent {
    match e {
        EngineEvent::ProjectsChanged => UiEvent::ProjectsChanged,
        EngineEvent::TokensChanged => UiEvent::TokensChanged,
        EngineEvent::AccessChanged { paused } => UiEvent::AccessChanged { paused: *paused },
        EngineEvent::ProjectRootLost { id, reason } => {
            UiEvent::ProjectRootLost { id: id.as_str().to_owned(), reason: reason.clone() }
        }
        EngineEvent::ApprovalRequested { id } => UiEvent::ApprovalRequested { id: id.clone() },
        EngineEvent::ApprovalDecided { id, state } => {
            UiEvent::ApprovalDecided { id: id.clone(), state: (*state).to_owned() }
        }
    }
}

fn project_names(engine: &Engine) -> Res<Vec<(String, String)>> {
    Ok(engine.projects()?.into_iter().map(|p| (p.id.as_str().to_owned(), p.name)).collect())
}

pub mod bindings;
