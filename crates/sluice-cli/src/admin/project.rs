//! `sluice project`: authorizing folders and everything about one project — modes, network,
//! git e-mails, approval policy, shield, auto-run list and its commands' sandbox.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use clap::{Args, Subcommand};
use serde::Serialize;
use sluice_core::{
    AccessMode, AutoRunAction, AutoRunRule, ExecMode, GitEmails, GitHooks, HostPath, NetworkMode,
    ProjectId, ProjectState, SandboxSettings,
};
use sluice_engine::{
    Engine, NetworkSetting, Project, SandboxView, default_autorun_rules, default_shield_patterns,
};

use super::{fail, print_json};
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
    /// Change a project's access or execution mode, its jobs' network, or whether assistants
    /// see e-mail addresses in its git history.
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
        /// `show` or `hide` (the default) the author e-mail addresses in what git_log and
        /// git_show return. Names are always shown; messages keep their own text.
        #[arg(long, value_parser = parse_git_emails)]
        git_emails: Option<GitEmails>,
        /// `sandbox`: git_commit runs the repository's commit hooks (git_switch its
        /// post-checkout), each as a job in the
        /// project's sandbox (needs execution mode `project` or `any`), and a failing one stops
        /// the commit; `off` (the default): no hook runs.
        #[arg(long, value_parser = parse_git_hooks)]
        git_hooks: Option<GitHooks>,
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
    /// Remove a project's authorization (its files are untouched; a worktree project made by
    /// git_worktree goes with its clean worktree, keeping the branch).
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

fn parse_git_emails(s: &str) -> Result<GitEmails, String> {
    s.parse().map_err(|_| format!("expected `show` or `hide`, not {s:?}"))
}

fn parse_git_hooks(s: &str) -> Result<GitHooks, String> {
    s.parse().map_err(|_| format!("expected `sandbox` or `off`, not {s:?}"))
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
    /// Whether the git tools show e-mail addresses: `show` or `hide`.
    git_emails: &'static str,
    /// Whether commits run the repository's hooks: `sandbox` or `off`.
    git_hooks: &'static str,
    status: String,
    /// The project this one is a worktree of (its name), if it is one.
    worktree_of: Option<String>,
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
    git_emails: &'static str,
    git_hooks: &'static str,
    status: String,
    worktree_of: Option<String>,
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

fn state_text(state: &ProjectState) -> String {
    match state {
        ProjectState::Available => "available".to_owned(),
        ProjectState::Disabled => "disabled".to_owned(),
        ProjectState::RootLost(reason) => format!("unavailable: {reason}"),
    }
}

fn print_project(p: &Project) {
    let ask = |yes: bool| if yes { "ask" } else { "allow" };
    outln!("{}  {}", p.id, p.name);
    outln!("  folder:    {}", p.root.display());
    outln!("  access:    {}", p.access);
    outln!("  execution: {}", p.exec);
    outln!("  network:   {}", NetworkSetting::of_project(p).describe(p.exec));
    outln!("  deletes:   {}", ask(p.ask_deletes));
    outln!("  writes:    {}", ask(p.ask_writes));
    outln!("  git e-mails: {}", git_emails_text(p.git_emails));
    outln!("  git hooks: {}", git_hooks_text(p.git_hooks));
    outln!("  status:    {}", state_text(&p.state));
}

/// The name of the project `p` is a worktree of, if it is one.
fn parent_name(projects: &[Project], p: &Project) -> Option<String> {
    let parent = p.worktree_of.as_ref()?;
    Some(
        projects
            .iter()
            .find(|q| &q.id == parent)
            .map_or_else(|| parent.to_string(), |q| q.name.clone()),
    )
}

fn print_parent(parent: Option<String>) {
    if let Some(parent) = parent {
        outln!("  worktree of {parent}");
    }
}

fn git_emails_text(emails: GitEmails) -> &'static str {
    match emails {
        GitEmails::Hide => "hidden from assistants (git_log and git_show give names only)",
        GitEmails::Show => "shown to assistants (git_log and git_show give author addresses)",
    }
}

fn git_hooks_text(hooks: GitHooks) -> &'static str {
    match hooks {
        GitHooks::Off => "off (git_commit runs no hook)",
        GitHooks::Sandbox => "run on commit, each as a job in the project's sandbox",
    }
}

/// The sandbox in force for a project's commands, as `show` and `sandbox` print it.
fn print_sandbox(engine: &Engine, p: &Project, all_hidden: bool) {
    let v = engine.sandbox_view(p);
    let layers = if v.namespaces {
        "namespaces (every job in its own view of the machine)"
    } else {
        "fallback: Landlock and seccomp alone — fewer guarantees hold"
    };
    outln!("  sandbox:   {layers}");
    for g in &v.guarantees {
        outln!("    {} {}", if g.holds { "holds:        " } else { "DOES NOT HOLD:" }, g.what);
    }
    let require = if v.require_full { "on" } else { "off" };
    outln!("  require full confinement: {require}");
    if let Some(why) = &v.refusal {
        outln!("  REFUSED HERE: {why}");
    }
    let present = v.hidden.iter().filter(|h| h.present).count();
    outln!("  hidden:    {} credential stores ({present} on this machine)", v.hidden.len());
    for h in v.hidden.iter().filter(|h| all_hidden || !h.default) {
        let holds = h.holds.map(|w| format!(" — {w}")).unwrap_or_default();
        let own = if h.default { "" } else { " (added by you)" };
        outln!("    {}{holds}{own}", h.path);
    }
    if !all_hidden && v.hidden.iter().any(|h| h.default) {
        outln!("    (the defaults: `sluice project sandbox {}` lists them all)", p.name);
    }
    for u in &v.unhidden {
        outln!("  NOT hidden: {} (a default you un-hid)", u.path);
    }
    for g in &v.grants {
        let holds = g.holds.map(|w| format!(", which holds {w}")).unwrap_or_default();
        let gone = if g.present { "" } else { " (not on this machine now)" };
        outln!("  granted:   {}{holds}: commands can read it, read-only{gone}", g.path);
    }
    for s in &v.sockets {
        outln!("  socket:    {s}: WARNING, {}", sluice_engine::SOCKET_WARNING);
    }
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
            outln!("Authorized:");
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
                        git_emails: p.git_emails.as_str(),
                        git_hooks: p.git_hooks.as_str(),
                        status: state_text(&p.state),
                        worktree_of: parent_name(&projects, p),
                    })
                    .collect();
                print_json(&list)?;
            } else if projects.is_empty() {
                outln!("No projects yet. Authorize one with `sluice project add PATH`.");
            } else {
                for p in &projects {
                    print_project(p);
                    print_parent(parent_name(&projects, p));
                }
            }
        }
        ProjectCmd::Set { project, access, exec, network, git_emails, git_hooks } => {
            if access.is_none()
                && exec.is_none()
                && network.is_none()
                && git_emails.is_none()
                && git_hooks.is_none()
            {
                return Err(anyhow!(
                    "nothing to change; pass --access, --exec, --network, --git-emails and/or \
                     --git-hooks"
                ));
            }
            let before = engine.find_project(&project).map_err(fail)?;
            let mut p = before.clone();
            if access.is_some() || exec.is_some() {
                p = engine.set_modes(&project, access, exec).map_err(fail)?;
            }
            if let Some(NetworkChoice(network)) = network {
                p = engine.set_network(&project, network).map_err(fail)?;
            }
            if let Some(emails) = git_emails {
                p = engine.set_git_emails(&project, emails).map_err(fail)?;
            }
            if let Some(hooks) = git_hooks {
                p = engine.set_git_hooks(&project, hooks).map_err(fail)?;
            }
            if before.exec != ExecMode::Off && p.exec == ExecMode::Off && exec.is_none() {
                outln!("Read-only projects cannot execute: execution was turned off.");
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
            if p.worktree_of.is_some() {
                outln!("Removed worktree project {} ({}); its branch stays.", p.name, p.id);
            } else {
                outln!("Removed {} ({}); its files are untouched.", p.name, p.id);
            }
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
            outln!(
                "Sensitive-file shield of {} ({}):",
                p.name,
                if custom { "customized" } else { "defaults" }
            );
            for pat in p.shield_patterns.unwrap_or_else(default_shield_patterns) {
                outln!("  {pat}");
            }
        }
        ProjectCmd::Show { project, json } => {
            let p = engine.find_project(&project).map_err(fail)?;
            let parent = parent_name(&engine.projects().map_err(fail)?, &p);
            if json {
                print_json(&ProjectShowJson {
                    id: &p.id,
                    name: &p.name,
                    root: &p.root,
                    access: p.access.as_str(),
                    exec: p.exec.as_str(),
                    network: NetworkSetting::of_project(&p).mode.as_str(),
                    git_emails: p.git_emails.as_str(),
                    git_hooks: p.git_hooks.as_str(),
                    status: state_text(&p.state),
                    worktree_of: parent,
                    sandbox: SandboxJson::of(&engine, &p),
                })?;
            } else {
                print_project(&p);
                print_parent(parent);
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
                        outln!("{line}");
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
                outln!("Sandbox of {} ({}):", p.name, p.id);
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
            outln!(
                "Auto-run list of {} ({}): changes to these ask you, or are refused, whatever \
                 the approval policy.",
                p.name,
                if custom { "customized" } else { "defaults" }
            );
            for r in &rules {
                outln!("  {:<6}  {}", r.action.as_str(), r.pattern);
                outln!("          {}: {}", r.program, r.consequence);
            }
        }
    }
    Ok(())
}
