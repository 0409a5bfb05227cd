//! The human's commands: projects, tokens, audit, doctor. Output is plain text for people;
//! `--json` where scripts need it.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Result, anyhow};
use clap::{Args, Subcommand};
use serde::Serialize;
use sluice_core::{
    AccessMode, AutoRunAction, AutoRunHit, AutoRunRule, ExecMode, Failure, HostPath, NetworkMode,
    ProjectId, ProjectState, SandboxSettings, TokenId,
};
use sluice_engine::{
    AuditFilter, Engine, NetworkSetting, Project, SandboxView, SecretPreference, SecretSource,
    clients, default_autorun_rules, default_shield_patterns,
};

use crate::{parse_access, parse_exec};

#[derive(Subcommand)]
pub enum ProjectCmd {
    /// Authorize a folder (defaults: read-only, execution off).
    Add {
        path: PathBuf,
        #[arg(long)]
        name: Option<String>,
        #[arg(long, default_value = "read-only", value_parser = parse_access)]
        access: AccessMode,
        #[arg(long, default_value = "off", value_parser = parse_exec)]
        exec: ExecMode,
    },
    /// List authorized projects.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Change a project's access or execution mode, or its jobs' network.
    Set {
        project: String,
        #[arg(long, value_parser = parse_access)]
        access: Option<AccessMode>,
        #[arg(long, value_parser = parse_exec)]
        exec: Option<ExecMode>,
        /// Outbound network for the project's jobs: `off`, `registries` (only HTTPS to the
        /// package registries of `sluice registries list`), `on`, or `default` (registries in
        /// project mode, off otherwise). Applies to jobs started afterwards.
        #[arg(long, value_parser = parse_network)]
        network: Option<NetworkChoice>,
    },
    /// Stop assistants from using a project (it stays authorized).
    Disable {
        project: String,
    },
    /// Allow a disabled project again, or accept a moved/replaced root after checking it.
    Enable {
        project: String,
    },
    Rename {
        project: String,
        name: String,
    },
    /// Choose which changes ask you first (deletes ask by default, writes do not).
    Policy {
        project: String,
        /// `ask` or `allow` for deletes and moves away.
        #[arg(long, value_parser = parse_ask)]
        deletes: Option<bool>,
        /// `ask` or `allow` for creating and changing files.
        #[arg(long, value_parser = parse_ask)]
        writes: Option<bool>,
    },
    /// Remove a project's authorization (its files are untouched).
    Remove {
        project: String,
    },
    /// Show or change the sensitive-file shield patterns of a project.
    Shield {
        project: String,
        /// Add a pattern.
        #[arg(long)]
        add: Vec<String>,
        /// Remove a pattern.
        #[arg(long)]
        remove: Vec<String>,
        /// Restore the default list.
        #[arg(long)]
        reset: bool,
    },
    /// Everything about one project, its commands' sandbox included.
    Show {
        project: String,
        #[arg(long)]
        json: bool,
    },
    /// Show or change what a project's commands see of this machine: the credential stores
    /// hidden from them (the defaults, with your additions and removals), stores granted to
    /// them, host sockets they may reach, and whether they require full confinement. Granting,
    /// un-hiding, allowing a socket and lifting the requirement ask you first.
    Sandbox {
        project: String,
        #[command(flatten)]
        changes: SandboxChanges,
        /// Do not ask (for scripts): the change is made as if you said yes.
        #[arg(long)]
        yes: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show or change a project's auto-run list: paths other programs run on their own (editor
    /// tasks, MCP configs, git hooks, CI, …). Changes to them ask you — whatever the approval
    /// policy — or are refused.
    Autorun {
        project: String,
        /// Ask before any change to paths matching this pattern (adds it, or makes a refused
        /// entry ask).
        #[arg(long, value_name = "PATTERN")]
        ask: Vec<String>,
        /// Refuse every change to paths matching this pattern (adds it, or makes an asking
        /// entry refuse).
        #[arg(long, value_name = "PATTERN")]
        refuse: Vec<String>,
        /// Remove the entry with this pattern.
        #[arg(long, value_name = "PATTERN")]
        remove: Vec<String>,
        /// For entries added here: which program runs these files.
        #[arg(long)]
        program: Option<String>,
        /// For entries added here: what happens when one changes, one line for the approval.
        #[arg(long)]
        consequence: Option<String>,
        /// Restore the default list.
        #[arg(long)]
        reset: bool,
        #[arg(long)]
        json: bool,
    },
}

/// The changes `sluice project sandbox` makes, in the order it applies them.
#[derive(Args)]
pub struct SandboxChanges {
    /// Hide a path (`~/…` or absolute) from the project's commands, or hide an un-hidden
    /// default again.
    #[arg(long, value_name = "PATH")]
    hide: Vec<String>,
    /// Stop hiding a path you added, or un-hide a default store.
    #[arg(long, value_name = "PATH")]
    unhide: Vec<String>,
    /// Let the project's commands read this store, read-only (e.g. ~/.npmrc).
    #[arg(long, value_name = "PATH")]
    grant: Vec<String>,
    /// Take a grant back.
    #[arg(long, value_name = "PATH")]
    revoke: Vec<String>,
    /// Let the project's commands connect to this Unix socket (e.g. /var/run/docker.sock).
    /// Equivalent to full access to this machine.
    #[arg(long, value_name = "PATH")]
    allow_socket: Vec<String>,
    /// Take a socket back.
    #[arg(long, value_name = "PATH")]
    remove_socket: Vec<String>,
    /// `on`: commands refuse to run without every layer of confinement; `off`: they may run
    /// under the fallback.
    #[arg(long, value_parser = parse_on_off)]
    require_full: Option<bool>,
}

#[derive(Subcommand)]
pub enum TokenCmd {
    /// Create a token; it is printed once, with ready-made client configuration.
    Create {
        #[arg(long)]
        label: String,
        /// Limit the token to these projects (ids or names, comma-separated).
        #[arg(long, value_delimiter = ',')]
        projects: Option<Vec<String>>,
        /// Expire after this long, e.g. 30d, 12h.
        #[arg(long, value_parser = humantime::parse_duration)]
        expires: Option<Duration>,
        /// Port to put in the client configuration.
        #[arg(long, default_value_t = sluice_engine::DEFAULT_PORT)]
        port: u16,
        /// Print only this client's configuration (claude-desktop, claude-code, cursor,
        /// vscode, codex, windsurf, zed, goose, http, stdio).
        #[arg(long, value_parser = crate::connect::parse_client)]
        client: Option<clients::Client>,
    },
    /// List tokens (never their values).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token by id or label; takes effect on its next request.
    Revoke { token: String },
    /// Lift the limit an assistant put on its own token (`drop_privileges`: read-only or
    /// paused), by id or label.
    Restore { token: String },
}

/// `--network`: an explicit mode, or back to the execution mode's default.
#[derive(Debug, Clone, Copy)]
pub struct NetworkChoice(Option<NetworkMode>);

fn parse_network(s: &str) -> Result<NetworkChoice, String> {
    match s {
        "default" => Ok(NetworkChoice(None)),
        other => other
            .parse()
            .map(|m| NetworkChoice(Some(m)))
            .map_err(|_| format!("expected `off`, `registries`, `on` or `default`, not {other:?}")),
    }
}

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        other => Err(format!("expected `on` or `off`, not {other:?}")),
    }
}

fn parse_ask(s: &str) -> Result<bool, String> {
    match s {
        "ask" => Ok(true),
        "allow" => Ok(false),
        other => Err(format!("expected `ask` or `allow`, not {other:?}")),
    }
}

#[derive(Subcommand)]
pub enum ApprovalsCmd {
    /// Pending approvals first, then recent decisions.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Everything about one approval.
    Show { id: String },
    /// Let the waiting action run, exactly as shown.
    Approve {
        id: String,
        /// Also always allow this exact command (argv, folder, environment) in this project.
        #[arg(long)]
        always: bool,
    },
    /// Refuse the waiting action; the reason goes back to the assistant.
    Deny {
        id: String,
        #[arg(long)]
        reason: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum AuditCmd {
    /// Show recent audit entries, newest first.
    List {
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Verify the audit chain: detects edited, deleted, reordered or forged entries.
    Verify,
}

fn fail(f: Failure) -> anyhow::Error {
    anyhow!("{} ({})", f.message, f.code)
}

fn time(ms: Option<i64>) -> String {
    match ms.and_then(|ms| u64::try_from(ms).ok()) {
        None => "never".to_owned(),
        Some(ms) => {
            humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
        }
    }
}

fn state_text(state: &ProjectState) -> String {
    match state {
        ProjectState::Available => "available".to_owned(),
        ProjectState::Disabled => "disabled".to_owned(),
        ProjectState::RootLost(reason) => format!("unavailable: {reason}"),
    }
}

fn print_project(p: &Project) {
    let ask = |yes: bool| if yes { "ask" } else { "allow" };
    println!("{}  {}", p.id, p.name);
    println!("  folder:    {}", p.root.display());
    println!("  access:    {}", p.access);
    println!("  execution: {}", p.exec);
    println!("  network:   {}", NetworkSetting::of_project(p).describe(p.exec));
    println!("  deletes:   {}", ask(p.ask_deletes));
    println!("  writes:    {}", ask(p.ask_writes));
    println!("  status:    {}", state_text(&p.state));
}

/// The sandbox in force for a project's commands, as `show` and `sandbox` print it.
fn print_sandbox(engine: &Engine, p: &Project, all_hidden: bool) {
    let v = engine.sandbox_view(p);
    let layers = if v.namespaces {
        "namespaces (every job in its own view of the machine)"
    } else {
        "fallback: Landlock and seccomp alone — fewer guarantees hold"
    };
    println!("  sandbox:   {layers}");
    for g in &v.guarantees {
        println!("    {} {}", if g.holds { "holds:        " } else { "DOES NOT HOLD:" }, g.what);
    }
    let require = if v.require_full { "on" } else { "off" };
    println!("  require full confinement: {require}");
    if let Some(why) = &v.refusal {
        println!("  REFUSED HERE: {why}");
    }
    let present = v.hidden.iter().filter(|h| h.present).count();
    println!("  hidden:    {} credential stores ({present} on this machine)", v.hidden.len());
    for h in v.hidden.iter().filter(|h| all_hidden || !h.default) {
        let holds = h.holds.map(|w| format!(" — {w}")).unwrap_or_default();
        let own = if h.default { "" } else { " (added by you)" };
        println!("    {}{holds}{own}", h.path);
    }
    if !all_hidden && v.hidden.iter().any(|h| h.default) {
        println!("    (the defaults: `sluice project sandbox {}` lists them all)", p.name);
    }
    for u in &v.unhidden {
        println!("  NOT hidden: {} (a default you un-hid)", u.path);
    }
    for g in &v.grants {
        let holds = g.holds.map(|w| format!(", which holds {w}")).unwrap_or_default();
        let gone = if g.present { "" } else { " (not on this machine now)" };
        println!("  granted:   {}{holds}: commands can read it, read-only{gone}", g.path);
    }
    for s in &v.sockets {
        println!("  socket:    {s}: WARNING, {}", sluice_engine::SOCKET_WARNING);
    }
}

/// Prints a `--json` output. Through a `serde_json::Value`, as these outputs always were: its
/// maps keep keys in alphabetical order (serde_json without `preserve_order`), nested ones
/// included, and scripts may rely on the order they have always seen.
fn print_json(v: &impl Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(&serde_json::to_value(v)?)?);
    Ok(())
}

/// `sluice project list --json`: one project.
#[derive(Serialize)]
struct ProjectJson<'a> {
    id: &'a ProjectId,
    name: &'a str,
    root: &'a Path,
    access: &'static str,
    exec: &'static str,
    /// The network in force.
    network: &'static str,
    /// What the user chose: a mode, or `default`.
    network_setting: &'static str,
    status: String,
}

/// `sluice project show --json`.
#[derive(Serialize)]
struct ProjectShowJson<'a> {
    id: &'a ProjectId,
    name: &'a str,
    root: &'a Path,
    access: &'static str,
    exec: &'static str,
    network: &'static str,
    status: String,
    sandbox: SandboxJson<'a>,
}

/// A project's sandbox, as `show` and `sandbox` output it: the user's settings and what is in
/// force.
#[derive(Serialize)]
struct SandboxJson<'a> {
    settings: &'a SandboxSettings,
    in_force: SandboxView,
}

impl SandboxJson<'_> {
    fn of<'a>(engine: &Engine, p: &'a Project) -> SandboxJson<'a> {
        SandboxJson { settings: &p.sandbox, in_force: engine.sandbox_view(p) }
    }
}

/// `sluice project autorun --json`: one entry.
#[derive(Serialize)]
struct AutoRunJson<'a> {
    pattern: &'a str,
    action: &'static str,
    program: &'a str,
    consequence: &'a str,
}

/// `sluice token list --json`: one token (never its value).
#[derive(Serialize)]
struct TokenJson<'a> {
    id: &'a TokenId,
    label: &'a str,
    scope: String,
    created_ms: i64,
    last_used_ms: Option<i64>,
    expires_ms: Option<i64>,
    revoked_ms: Option<i64>,
    self_limit: Option<&'static str>,
    self_limited_ms: Option<i64>,
}

/// `sluice audit list --json`: one entry, one line each.
#[derive(Serialize)]
struct AuditJson<'a> {
    seq: u64,
    time_ms: i64,
    actor: String,
    action: String,
    project: Option<&'a ProjectId>,
    outcome: &'static str,
    error_code: Option<&'a str>,
    duration_ms: Option<u64>,
    detail: Option<String>,
}

/// `sluice approvals list --json`: one approval, as shown.
#[derive(Serialize)]
struct ApprovalJson<'a> {
    id: &'a str,
    state: &'static str,
    tool: &'a str,
    project: &'a str,
    client: &'a str,
    summary: &'a str,
    expires_ms: i64,
    autorun: &'a [AutoRunHit],
    risk: Option<String>,
    asked_because: &'a str,
}

/// `sluice rules list --json`: one allow rule.
#[derive(Serialize)]
struct RuleJson<'a> {
    id: i64,
    project: &'a str,
    program: String,
    args: Vec<String>,
    cwd: String,
    env: Vec<(String, String)>,
    created_ms: i64,
    added_from: Option<&'static str>,
    asked_by: Option<String>,
}

/// `sluice jobs --json`: one job.
#[derive(Serialize)]
struct JobJson<'a> {
    id: &'a str,
    project: &'a str,
    token: Option<&'a str>,
    command: String,
    cwd: String,
    state: &'a str,
    error: Option<String>,
    exit_code: Option<i32>,
    signal: Option<i32>,
    created_ms: i64,
    started_ms: Option<i64>,
    ended_ms: Option<i64>,
}

/// Applies `sluice project sandbox`'s flags to the current settings.
fn next_sandbox(now: &SandboxSettings, changes: &SandboxChanges) -> Result<SandboxSettings> {
    let SandboxChanges { hide, unhide, grant, revoke, allow_socket, remove_socket, require_full } =
        changes;
    let parse = |list: &[String]| -> Result<Vec<HostPath>> {
        list.iter()
            .map(|p| HostPath::parse(p).map_err(|e| anyhow!("{e} (invalid_argument)")))
            .collect()
    };
    let defaults: Vec<HostPath> =
        sluice_engine::default_hidden().into_iter().map(|(p, _)| p).collect();
    let mut next = now.clone();
    let add = |list: &mut Vec<HostPath>, p: &HostPath| {
        if !list.contains(p) {
            list.push(p.clone());
        }
    };
    for p in parse(hide)? {
        if next.unhide.contains(&p) {
            next.unhide.retain(|x| x != &p);
        } else if !defaults.contains(&p) {
            add(&mut next.hide, &p);
        }
    }
    for p in parse(unhide)? {
        if next.hide.contains(&p) {
            next.hide.retain(|x| x != &p);
        } else {
            add(&mut next.unhide, &p);
        }
    }
    for p in parse(grant)? {
        add(&mut next.grants, &p);
    }
    let revoke = parse(revoke)?;
    next.grants.retain(|g| !revoke.contains(g));
    for p in parse(allow_socket)? {
        add(&mut next.sockets, &p);
    }
    let remove = parse(remove_socket)?;
    next.sockets.retain(|s| !remove.contains(s));
    if let Some(on) = *require_full {
        next.require_full = on;
    }
    Ok(next)
}

pub fn project(engine: Engine, cmd: ProjectCmd) -> Result<()> {
    match cmd {
        ProjectCmd::Add { path, name, access, exec } => {
            let p = engine.add_project(&path, name.as_deref(), access, exec).map_err(fail)?;
            println!("Authorized:");
            print_project(&p);
        }
        ProjectCmd::List { json } => {
            let projects = engine.projects().map_err(fail)?;
            if json {
                let list: Vec<_> = projects
                    .iter()
                    .map(|p| ProjectJson {
                        id: &p.id,
                        name: &p.name,
                        root: &p.root,
                        access: p.access.as_str(),
                        exec: p.exec.as_str(),
                        network: NetworkSetting::of_project(p).mode.as_str(),
                        network_setting: p.network.map_or("default", NetworkMode::as_str),
                        status: state_text(&p.state),
                    })
                    .collect();
                print_json(&list)?;
            } else if projects.is_empty() {
                println!("No projects yet. Authorize one with `sluice project add PATH`.");
            } else {
                for p in &projects {
                    print_project(p);
                }
            }
        }
        ProjectCmd::Set { project, access, exec, network } => {
            if access.is_none() && exec.is_none() && network.is_none() {
                return Err(anyhow!("nothing to change; pass --access, --exec and/or --network"));
            }
            let before = engine.find_project(&project).map_err(fail)?;
            let mut p = before.clone();
            if access.is_some() || exec.is_some() {
                p = engine.set_modes(&project, access, exec).map_err(fail)?;
            }
            if let Some(NetworkChoice(network)) = network {
                p = engine.set_network(&project, network).map_err(fail)?;
            }
            if before.exec != ExecMode::Off && p.exec == ExecMode::Off && exec.is_none() {
                println!("Read-only projects cannot execute: execution was turned off.");
            }
            print_project(&p);
        }
        ProjectCmd::Disable { project } => {
            print_project(&engine.disable_project(&project).map_err(fail)?)
        }
        ProjectCmd::Enable { project } => {
            print_project(&engine.enable_project(&project).map_err(fail)?)
        }
        ProjectCmd::Policy { project, deletes, writes } => {
            if deletes.is_none() && writes.is_none() {
                return Err(anyhow!("nothing to change; pass --deletes and/or --writes"));
            }
            print_project(&engine.set_policy(&project, deletes, writes).map_err(fail)?)
        }
        ProjectCmd::Rename { project, name } => {
            print_project(&engine.rename_project(&project, &name).map_err(fail)?)
        }
        ProjectCmd::Remove { project } => {
            let p = engine.remove_project(&project).map_err(fail)?;
            println!("Removed {} ({}); its files are untouched.", p.name, p.id);
        }
        ProjectCmd::Shield { project, add, remove, reset } => {
            let p = engine.find_project(&project).map_err(fail)?;
            let p = if reset {
                engine.set_shield(&project, None).map_err(fail)?
            } else if !add.is_empty() || !remove.is_empty() {
                let mut list = p.shield_patterns.clone().unwrap_or_else(default_shield_patterns);
                list.retain(|x| !remove.contains(x));
                for a in add {
                    if !list.contains(&a) {
                        list.push(a);
                    }
                }
                engine.set_shield(&project, Some(list)).map_err(fail)?
            } else {
                p
            };
            let custom = p.shield_patterns.is_some();
            println!(
                "Sensitive-file shield of {} ({}):",
                p.name,
                if custom { "customized" } else { "defaults" }
            );
            for pat in p.shield_patterns.unwrap_or_else(default_shield_patterns) {
                println!("  {pat}");
            }
        }
        ProjectCmd::Show { project, json } => {
            let p = engine.find_project(&project).map_err(fail)?;
            if json {
                print_json(&ProjectShowJson {
                    id: &p.id,
                    name: &p.name,
                    root: &p.root,
                    access: p.access.as_str(),
                    exec: p.exec.as_str(),
                    network: NetworkSetting::of_project(&p).mode.as_str(),
                    status: state_text(&p.state),
                    sandbox: SandboxJson::of(&engine, &p),
                })?;
            } else {
                print_project(&p);
                print_sandbox(&engine, &p, false);
            }
        }
        ProjectCmd::Sandbox { project, changes, yes, json } => {
            let p = engine.find_project(&project).map_err(fail)?;
            let next = next_sandbox(&p.sandbox, &changes)?;
            let p = if next == p.sandbox {
                p
            } else {
                let exposed = engine.sandbox_widening(&project, &next).map_err(fail)?;
                if !exposed.is_empty() {
                    for line in &exposed {
                        println!("{line}");
                    }
                    if !crate::connect::confirm("Allow this?", yes)? {
                        return Err(anyhow!("nothing changed: you did not allow it (denied)"));
                    }
                }
                engine.set_sandbox(&project, next).map_err(fail)?
            };
            if json {
                print_json(&SandboxJson::of(&engine, &p))?;
            } else {
                println!("Sandbox of {} ({}):", p.name, p.id);
                print_sandbox(&engine, &p, true);
            }
        }
        ProjectCmd::Autorun { project, ask, refuse, remove, program, consequence, reset, json } => {
            let p = engine.find_project(&project).map_err(fail)?;
            let p = if reset {
                engine.set_autorun(&project, None).map_err(fail)?
            } else if !ask.is_empty() || !refuse.is_empty() || !remove.is_empty() {
                let mut list = p.autorun_rules.clone().unwrap_or_else(default_autorun_rules);
                list.retain(|r| !remove.contains(&r.pattern));
                let program = program.unwrap_or_else(|| "set by you".to_owned());
                let consequence = consequence
                    .unwrap_or_else(|| format!("{program} runs or reads this file on its own"));
                let added = ask
                    .iter()
                    .map(|p| (p, AutoRunAction::Ask))
                    .chain(refuse.iter().map(|p| (p, AutoRunAction::Refuse)));
                for (pattern, action) in added {
                    match list.iter_mut().find(|r| &r.pattern == pattern) {
                        Some(existing) => existing.action = action,
                        None => list.push(AutoRunRule {
                            pattern: pattern.clone(),
                            action,
                            program: program.clone(),
                            consequence: consequence.clone(),
                        }),
                    }
                }
                engine.set_autorun(&project, Some(list)).map_err(fail)?
            } else {
                p
            };
            let custom = p.autorun_rules.is_some();
            let rules = p.autorun_rules.unwrap_or_else(default_autorun_rules);
            if json {
                let v: Vec<_> = rules
                    .iter()
                    .map(|r| AutoRunJson {
                        pattern: &r.pattern,
                        action: r.action.as_str(),
                        program: &r.program,
                        consequence: &r.consequence,
                    })
                    .collect();
                return print_json(&v);
            }
            println!(
                "Auto-run list of {} ({}): changes to these ask you, or are refused, whatever \
                 the approval policy.",
                p.name,
                if custom { "customized" } else { "defaults" }
            );
            for r in &rules {
                println!("  {:<6}  {}", r.action.as_str(), r.pattern);
                println!("          {}: {}", r.program, r.consequence);
            }
        }
    }
    Ok(())
}

pub fn token(engine: Engine, cmd: TokenCmd) -> Result<()> {
    match cmd {
        TokenCmd::Create { label, projects, expires, port, client } => {
            let (record, plaintext) =
                engine.create_token(&label, projects, expires).map_err(fail)?;
            let binary = std::env::current_exe()
                .and_then(std::fs::canonicalize)
                .unwrap_or_else(|_| PathBuf::from("sluice"));
            println!("Created token {} ({}).", record.label, record.id);
            println!("This is the only time it is shown; copy it now:\n");
            println!("  {plaintext}\n");
            let endpoint = clients::Endpoint { port, token: &plaintext, binary: &binary };
            let snippets = match client {
                Some(c) => vec![clients::one(c, &endpoint)],
                None => clients::all(&endpoint),
            };
            for snippet in snippets {
                println!("── {} — {}", snippet.title, snippet.target);
                println!("{}\n", snippet.text.trim_end());
                if let Some(link) = &snippet.link {
                    println!("Install link: {}\nIt installs: {}\n", link.url, link.installs);
                }
                if let Some(note) = snippet.note {
                    println!("{note}\n");
                }
            }
        }
        TokenCmd::List { json } => {
            let tokens = engine.tokens().map_err(fail)?;
            let scope = |s: &Option<Vec<sluice_core::ProjectId>>| match s {
                None => "all projects".to_owned(),
                Some(ids) if ids.is_empty() => "no projects".to_owned(),
                Some(ids) => ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(","),
            };
            if json {
                let list: Vec<_> = tokens
                    .iter()
                    .map(|t| TokenJson {
                        id: &t.id,
                        label: &t.label,
                        scope: scope(&t.scope),
                        created_ms: t.created_ms,
                        last_used_ms: t.last_used_ms,
                        expires_ms: t.expires_ms,
                        revoked_ms: t.revoked_ms,
                        self_limit: t.self_limit.map(|(l, _)| l.as_str()),
                        self_limited_ms: t.self_limit.map(|(_, at)| at),
                    })
                    .collect();
                print_json(&list)?;
            } else if tokens.is_empty() {
                println!("No tokens yet. Create one with `sluice token create --label NAME`.");
            } else {
                for t in &tokens {
                    let status = if t.revoked_ms.is_some() {
                        "revoked"
                    } else if t.expires_ms.is_some_and(|e| e <= sluice_engine::now_ms()) {
                        "expired"
                    } else {
                        match t.self_limit {
                            Some((sluice_core::SelfLimit::ReadOnly, _)) => {
                                "read-only by its own choice"
                            }
                            Some((sluice_core::SelfLimit::Paused, _)) => "paused by its own choice",
                            None => "active",
                        }
                    };
                    println!("{}  {}  [{status}]", t.id, shown(&t.label));
                    println!("  scope:     {}", scope(&t.scope));
                    println!("  created:   {}", time(Some(t.created_ms)));
                    println!("  last used: {}", time(t.last_used_ms));
                    println!("  expires:   {}", time(t.expires_ms));
                    if let Some((_, at)) = t.self_limit {
                        println!(
                            "  limited:   {} (`sluice token restore` lifts it)",
                            time(Some(at))
                        );
                    }
                }
            }
        }
        TokenCmd::Revoke { token } => {
            let t = engine.revoke_token(&token).map_err(fail)?;
            println!("Revoked {} ({}); its next request is refused.", shown(&t.label), t.id);
        }
        TokenCmd::Restore { token } => {
            let t = engine.lift_token_limit(&token).map_err(fail)?;
            println!(
                "Restored {} ({}): it has the access its projects give again.",
                shown(&t.label),
                t.id
            );
        }
    }
    Ok(())
}

pub fn audit(engine: Engine, cmd: AuditCmd) -> Result<()> {
    match cmd {
        AuditCmd::List { limit, json } => {
            let entries = engine.audit_list(&AuditFilter::default(), limit, None).map_err(fail)?;
            for e in entries {
                let r = &e.record;
                if json {
                    // One line per entry, keys in the order `print_json` gives them.
                    let line = serde_json::to_value(AuditJson {
                        seq: e.seq,
                        time_ms: r.time_ms,
                        actor: shown(&r.actor),
                        action: shown(&r.action),
                        project: r.project_id.as_ref(),
                        outcome: r.outcome.as_str(),
                        error_code: r.error_code.as_deref(),
                        duration_ms: r.duration_ms,
                        detail: r.detail.as_deref().map(shown),
                    })?;
                    println!("{line}");
                } else {
                    println!(
                        "#{} {} {} {} {}{}{}",
                        e.seq,
                        time(Some(r.time_ms)),
                        shown(&r.actor),
                        shown(&r.action),
                        r.outcome.as_str(),
                        r.project_id.as_ref().map(|p| format!(" {p}")).unwrap_or_default(),
                        r.error_code.as_ref().map(|c| format!(" [{c}]")).unwrap_or_default(),
                    );
                    if let Some(detail) = &r.detail {
                        println!("    {}", shown(detail));
                    }
                }
            }
        }
        AuditCmd::Verify => {
            let report = engine.audit_verify().map_err(fail)?;
            match report.first_break {
                None => println!("Audit chain intact — {} entries verified.", report.entries),
                Some(b) => {
                    println!("Audit chain BROKEN at entry #{}: {}", b.seq, b.reason);
                    std::process::exit(2);
                }
            }
        }
    }
    Ok(())
}

fn describe_secret((source, reason): (&SecretSource, Option<&str>)) -> String {
    match source {
        SecretSource::Keychain(backend) => format!("OS keychain ({backend})"),
        SecretSource::File(path) => format!(
            "owner-only file {}{}",
            path.display(),
            reason.map(|r| format!(" — {r}")).unwrap_or_default()
        ),
    }
}

pub fn doctor(dir: &Path, pref: SecretPreference) -> Result<()> {
    println!("Sluice {}", env!("CARGO_PKG_VERSION"));
    println!("data folder:   {}", dir.display());
    let engine = crate::open_engine(dir.to_path_buf(), pref)?;
    println!("install secret: {}", describe_secret(engine.secret_source()));
    let projects = engine.projects().map_err(fail)?;
    let available = projects.iter().filter(|p| p.state.is_available()).count();
    println!("projects:      {} ({available} available)", projects.len());
    let tokens = engine.tokens().map_err(fail)?;
    println!(
        "tokens:        {} ({} active)",
        tokens.len(),
        tokens.iter().filter(|t| t.revoked_ms.is_none()).count()
    );
    let report = engine.audit_verify().map_err(fail)?;
    match report.first_break {
        None => println!("audit chain:   intact ({} entries)", report.entries),
        Some(b) => println!("audit chain:   BROKEN at #{}: {}", b.seq, b.reason),
    }
    let access = if engine.is_stopped().map_err(fail)? {
        "STOPPED (emergency stop; `sluice resume` lifts it)"
    } else if engine.is_paused().map_err(fail)? {
        "paused"
    } else {
        "on"
    };
    println!("AI access:     {access}");
    let findings = engine.integrity().map_err(fail)?;
    if findings.is_empty() {
        println!("integrity:     every sealed record verifies");
    } else {
        println!(
            "integrity:     {} CHANGED OUTSIDE SLUICE (edited without the install secret; each \
             is held to less privilege until you act):",
            findings.len()
        );
        for f in &findings {
            println!("  [{}] {}", f.kind.code(), shown(&f.message));
        }
        println!(
            "  To accept the database as it is now, review the list, then run `sluice doctor \
             --reseal`."
        );
    }
    let landlock = sluice_engine::job_confinement();
    println!("confinement:   {}", landlock.summary);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let present = |paths: Vec<PathBuf>| -> Vec<String> {
        paths.into_iter().filter(|p| p.exists()).map(|p| p.display().to_string()).collect()
    };
    #[cfg(target_os = "linux")]
    if landlock.namespaces {
        let toolchains = home.as_ref().map_or(Vec::new(), |h| {
            present(sluice_engine::job_view::TOOLCHAINS.iter().map(|t| h.join(t)).collect())
        });
        println!(
            "jobs see:      their project, their private folders, the system folders and the \
             toolchains here: {}",
            toolchains.join(", ")
        );
    }
    let hidden = present(sluice_engine::job_view::credential_stores(home.as_deref()));
    println!(
        "hidden:        {} credential stores present here, never readable by a job: {}",
        hidden.len(),
        hidden.join(", ")
    );
    if !landlock.namespaces && !landlock.network_rules {
        println!(
            "network rules: this system cannot block a job's network: jobs of projects whose \
             network is off refuse to run"
        );
    }
    for g in sluice_engine::guarantees(&landlock) {
        println!("  {} {}", if g.holds { "holds:        " } else { "DOES NOT HOLD:" }, g.what);
    }
    let registries = engine.registries().map_err(fail)?;
    if landlock.namespaces {
        println!(
            "registries:    {} hosts, over HTTPS through Sluice's proxy, for projects on the \
             registries network (`sluice registries list`)",
            registries.hosts().len()
        );
    } else {
        println!(
            "registries:    cannot be enforced here (jobs do not run in namespaces): jobs of \
             projects on the registries network refuse to run"
        );
    }
    for p in &projects {
        let net = NetworkSetting::of_project(p);
        println!("  {:<20} exec {:<7} network {}", p.name, p.exec.as_str(), net.describe(p.exec));
        let v = engine.sandbox_view(p);
        let mut extra = vec![format!("{} stores hidden", v.hidden.len())];
        extra.extend(v.grants.iter().map(|g| format!("granted {}", g.path)));
        extra.extend(v.sockets.iter().map(|s| format!("socket {s} (full access to this machine)")));
        if v.require_full {
            extra.push("requires full confinement".into());
        }
        println!("  {:<20} sandbox: {}", "", extra.join(", "));
        if let Some(why) = &v.refusal {
            println!("  {:<20} REFUSED HERE: {why}", "");
        }
    }
    match sluice_engine::read_engine_file(dir) {
        Some(port) if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() => {
            println!("engine:        running on http://127.0.0.1:{port}/mcp")
        }
        _ => println!("engine:        not running"),
    }
    Ok(())
}

/// `sluice doctor --reseal`: the user's acceptance of state changed outside Sluice.
pub fn reseal(dir: &Path, pref: SecretPreference) -> Result<()> {
    let engine = crate::open_engine(dir.to_path_buf(), pref)?;
    let accepted = engine.reseal().map_err(fail)?;
    if accepted.is_empty() {
        println!("Nothing to accept: every sealed record already verifies.");
        return Ok(());
    }
    println!("Accepted as Sluice's own ({} findings):", accepted.len());
    for f in &accepted {
        println!("  [{}] {}", f.kind.code(), shown(&f.message));
    }
    println!(
        "Projects, allow rules and tokens are sealed as they stand; a stop or pause whose record \
         was removed stays on (`sluice resume` lifts it). Recorded in the audit log."
    );
    Ok(())
}

/// What an assistant, a project or a person chose, as every surface shows it.
fn shown(s: &str) -> String {
    sluice_core::text::visible(s).into_owned()
}

fn print_approval(a: &sluice_engine::ApprovalRecord) {
    let a = &a.shown();
    println!(
        "{}  [{}]  {} · {} · {}",
        a.id,
        a.state.as_str(),
        a.token_label,
        a.tool,
        a.project_name
    );
    println!("  action:   {}", a.summary);
    if let Some(tally) = &a.tally {
        println!("  risk:     {}", tally.class().class);
    }
    for hit in &a.autorun {
        println!("  auto-run: {}", hit.line());
    }
    if !a.asked_because.is_empty() {
        println!("  asks:     because {}", a.asked_because);
    }
    println!("  created:  {}", time(Some(a.created_ms)));
    if a.state == sluice_engine::ApprovalState::Pending {
        println!("  expires:  {}", time(Some(a.expires_ms)));
    } else {
        println!(
            "  decided:  {} by {}",
            time(a.decided_ms),
            a.decided_by.as_deref().unwrap_or("?")
        );
    }
    if let sluice_engine::ApprovalState::Denied(Some(reason)) = &a.state {
        println!("  reason:   {reason}");
    }
}

pub fn approvals(engine: Engine, cmd: ApprovalsCmd) -> Result<()> {
    match cmd {
        ApprovalsCmd::List { json } => {
            let list = engine.approvals().map_err(fail)?;
            if json {
                let shown: Vec<_> = list.iter().map(|a| a.shown()).collect();
                let v: Vec<_> = shown
                    .iter()
                    .map(|a| ApprovalJson {
                        id: &a.id,
                        state: a.state.as_str(),
                        tool: &a.tool,
                        project: &a.project_name,
                        client: &a.token_label,
                        summary: &a.summary,
                        expires_ms: a.expires_ms,
                        autorun: &a.autorun,
                        risk: a.tally.as_ref().map(|t| t.class().class),
                        asked_because: &a.asked_because,
                    })
                    .collect();
                print_json(&v)?;
            } else if list.is_empty() {
                println!("Nothing is waiting for your approval.");
            } else {
                list.iter().for_each(print_approval);
            }
        }
        ApprovalsCmd::Show { id } => print_approval(&engine.approval(&id).map_err(fail)?),
        ApprovalsCmd::Approve { id, always } => {
            let decision = if always {
                sluice_engine::Decision::ApproveAlways { from: sluice_engine::Channel::Cli }
            } else {
                sluice_engine::Decision::Approve
            };
            let a = engine.decide(&id, decision, sluice_engine::LOCAL_USER).map_err(fail)?.shown();
            println!("Approved {}: {}", a.id, a.summary);
            for hit in &a.autorun {
                println!("  auto-run: {}", hit.line());
            }
            if always {
                println!("This exact command is now always allowed in {}.", a.project_name);
            }
        }
        ApprovalsCmd::Deny { id, reason } => {
            let a = engine
                .decide(&id, sluice_engine::Decision::Deny { reason }, sluice_engine::LOCAL_USER)
                .map_err(fail)?
                .shown();
            println!("Denied {}: {}", a.id, a.summary);
        }
    }
    Ok(())
}

#[derive(Subcommand)]
pub enum RulesCmd {
    /// The allow rules of one project, or of all.
    List {
        /// A project id or name.
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a rule: that command asks again.
    Remove { id: i64 },
}

#[derive(Subcommand)]
pub enum RegistriesCmd {
    /// The hosts, and what each known one serves.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Let projects on the `registries` network reach these hosts too (`pypi.corp.example`,
    /// or `*.corp.example` for its subdomains).
    Add {
        #[arg(required = true)]
        hosts: Vec<String>,
    },
    Remove {
        #[arg(required = true)]
        hosts: Vec<String>,
    },
    /// Back to the default list.
    Reset,
}

pub fn registries(engine: Engine, cmd: RegistriesCmd) -> Result<()> {
    let now = engine.registries().map_err(fail)?;
    let list = match cmd {
        RegistriesCmd::List { json } => {
            if json {
                println!("{}", serde_json::to_string_pretty(now.hosts())?);
                return Ok(());
            }
            now
        }
        RegistriesCmd::Add { hosts } => {
            let mut next = now.hosts().to_vec();
            next.extend(hosts);
            engine.set_registries(Some(next)).map_err(fail)?
        }
        RegistriesCmd::Remove { hosts } => {
            let hosts: Vec<String> = hosts.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
            if let Some(missing) = hosts.iter().find(|h| !now.hosts().contains(h)) {
                return Err(anyhow!("{missing} is not on the list; nothing changed"));
            }
            let next = now.hosts().iter().filter(|h| !hosts.contains(h)).cloned().collect();
            engine.set_registries(Some(next)).map_err(fail)?
        }
        RegistriesCmd::Reset => engine.set_registries(None).map_err(fail)?,
    };
    println!("Projects on the `registries` network reach, over HTTPS only:");
    for host in list.hosts() {
        let serves = sluice_engine::job_view::DEFAULT_REGISTRIES.iter().find(|(h, _)| h == host);
        match serves {
            Some((_, what)) => println!("  {host:<24} {what}"),
            None => println!("  {host}"),
        }
    }
    Ok(())
}

pub fn rules(engine: Engine, cmd: RulesCmd) -> Result<()> {
    match cmd {
        RulesCmd::List { project, json } => {
            let only = match project {
                Some(p) => Some(engine.find_project(&p).map_err(fail)?.id),
                None => None,
            };
            let names: std::collections::HashMap<String, String> = engine
                .projects()
                .map_err(fail)?
                .into_iter()
                .map(|p| (p.id.as_str().to_owned(), p.name))
                .collect();
            let list = engine.allow_rules(only.as_ref()).map_err(fail)?;
            if json {
                let v: Vec<_> = list
                    .iter()
                    .map(|r| RuleJson {
                        id: r.id,
                        project: r.project_id.as_str(),
                        program: shown(&r.rule.program.to_string_lossy()),
                        args: r.rule.args.iter().map(|a| shown(a)).collect(),
                        cwd: shown(&r.rule.cwd),
                        env: r.rule.env.iter().map(|(k, v)| (shown(k), shown(v))).collect(),
                        created_ms: r.created_ms,
                        added_from: r.origin.from.map(sluice_engine::Channel::as_str),
                        asked_by: r.origin.asked_by.as_deref().map(shown),
                    })
                    .collect();
                print_json(&v)?;
            } else if list.is_empty() {
                println!("No allow rules.");
            } else {
                for r in &list {
                    let project =
                        shown(names.get(r.project_id.as_str()).map_or("?", String::as_str));
                    let mut origin = Vec::new();
                    if let Some(from) = r.origin.from {
                        origin.push(format!("added from the {}", channel_name(from)));
                    }
                    if let Some(who) = &r.origin.asked_by {
                        origin.push(format!("asked by {}", shown(who)));
                    }
                    let origin = if origin.is_empty() {
                        String::new()
                    } else {
                        format!("  ({})", origin.join(", "))
                    };
                    println!("{:>4}  {project}  {}{origin}", r.id, r.display());
                }
            }
        }
        RulesCmd::Remove { id } => {
            engine.remove_allow_rule(id).map_err(fail)?;
            println!("Removed allow rule {id}; that command asks again.");
        }
    }
    Ok(())
}

/// How a rule's channel reads in a sentence: "added from the tray".
fn channel_name(from: sluice_engine::Channel) -> &'static str {
    match from {
        sluice_engine::Channel::Window => "window",
        sluice_engine::Channel::Tray => "tray",
        sluice_engine::Channel::Cli => "CLI",
    }
}

/// `sluice jobs`: the stored job history, oldest first.
pub fn jobs(engine: Engine, project: Option<&str>, limit: usize, json: bool) -> Result<()> {
    let only = match project {
        Some(p) => Some(engine.find_project(p).map_err(fail)?.id),
        None => None,
    };
    let names: std::collections::HashMap<String, String> = engine
        .projects()
        .map_err(fail)?
        .into_iter()
        .map(|p| (p.id.as_str().to_owned(), p.name))
        .collect();
    let list = engine.job_history(only.as_ref(), limit).map_err(fail)?;
    if json {
        let v: Vec<_> = list
            .iter()
            .map(|j| JobJson {
                id: &j.id,
                project: &j.project_id,
                token: j.token_id.as_deref(),
                command: shown(&j.command),
                cwd: shown(&j.cwd),
                state: &j.state,
                error: j.error.as_deref().map(shown),
                exit_code: j.exit_code,
                signal: j.signal,
                created_ms: j.created_ms,
                started_ms: j.started_ms,
                ended_ms: j.ended_ms,
            })
            .collect();
        print_json(&v)?;
    } else if list.is_empty() {
        println!("No jobs yet.");
    } else {
        for j in &list {
            let project = names.get(&j.project_id).map_or(j.project_id.as_str(), String::as_str);
            let ended = match (j.exit_code, j.signal) {
                (Some(code), _) => format!(" (exit {code})"),
                (None, Some(sig)) => format!(" (signal {sig})"),
                _ => String::new(),
            };
            println!("{}  [{}{ended}]  {project}", j.id, j.state);
            println!("  command:  {}", shown(&j.command));
            if !j.cwd.is_empty() {
                println!("  folder:   {}", shown(&j.cwd));
            }
            println!("  started:  {}", time(j.started_ms.or(Some(j.created_ms))));
            if j.ended_ms.is_some() {
                println!("  ended:    {}", time(j.ended_ms));
            }
            if let Some(error) = &j.error {
                println!("  note:     {}", shown(error));
            }
        }
    }
    Ok(())
}
