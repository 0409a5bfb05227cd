//! `sluice connect CLIENT` / `sluice disconnect CLIENT`: configure an AI client's own config
//! file and prove it works with a real MCP call made with the new token. The forms, paths and
//! writer live in `sluice-connect`, the token and keychain steps in `Engine::connect`, the
//! check in `sluice_mcp::check`; this module asks and prints.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde::Serialize;
use sluice_engine::clients::{
    self, Client, ConnectRequest, Dirs, Os, TOKEN_PLACEHOLDER, TokenChoice, TokenStorage, Transport,
};
use sluice_engine::clients_health::{Checker, ClientHealth, HealthState};
use sluice_engine::{Engine, SecretPreference};
use sluice_mcp::check::CheckError;

pub(crate) fn parse_client(s: &str) -> Result<Client, String> {
    Client::parse(s).ok_or_else(|| {
        let ids: Vec<_> = Client::ALL.iter().map(|c| c.id()).collect();
        format!("unknown client {s:?}; one of {}", ids.join(", "))
    })
}

fn parse_transport(s: &str) -> Result<Transport, String> {
    match s {
        "http" => Ok(Transport::Http),
        "stdio" => Ok(Transport::Stdio),
        other => Err(format!("unknown transport {other:?}; expected http or stdio")),
    }
}

#[derive(Args)]
pub struct ConnectArgs {
    /// claude-code, claude-desktop, cursor, vscode, codex, windsurf, zed, goose, gemini, qwen,
    /// opencode, copilot, cline, roo-code, kilo-code, crush, kiro, lm-studio, junie, augment,
    /// vscode-insiders (http and stdio print a snippet for any other client). Optional with
    /// --status (then every client).
    #[arg(value_parser = parse_client)]
    client: Option<Client>,
    /// Show whether each client's Sluice entry still works (or only CLIENT's): not installed,
    /// not configured, working (a real MCP call with the entry's own token), unverified (the
    /// client keeps the token), broken and why. Writes nothing.
    #[arg(long, conflicts_with_all = ["repair", "dry_run", "yes", "transport", "token_label", "projects", "use_env_token", "name"])]
    status: bool,
    /// With --status: print JSON.
    #[arg(long, requires = "status")]
    json: bool,
    /// Rewrite only Sluice's entry in CLIENT's file, in its current form, with the current
    /// port and binary; keeps the token when it still works, else creates a new one.
    #[arg(long, requires = "client", conflicts_with_all = ["transport", "token_label", "projects", "use_env_token", "name"])]
    repair: bool,
    /// Label of the token created for this client (default: "<client> (sluice connect)").
    #[arg(long, value_name = "LABEL")]
    token_label: Option<String>,
    /// Limit the new token to these projects (ids or names, comma-separated).
    #[arg(long, value_delimiter = ',')]
    projects: Option<Vec<String>>,
    /// Use the token in SLUICE_TOKEN instead of creating one.
    #[arg(long)]
    use_env_token: bool,
    /// Show the change and write nothing (no token is created).
    #[arg(long)]
    dry_run: bool,
    /// The client's config file (default: where the client keeps it on this OS).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Write without asking (needed when not on a terminal).
    #[arg(long, short = 'y')]
    yes: bool,
    /// stdio (`sluice stdio`; the token stays in Sluice's keychain entry, out of the client's
    /// file and environment: the default except for Claude Code, Cursor, VS Code, Windsurf,
    /// Zed and Goose) or http.
    #[arg(long, value_parser = parse_transport)]
    transport: Option<Transport>,
    /// The engine's port (default: the running engine's, else the default port).
    #[arg(long)]
    port: Option<u16>,
    /// Name of this connection (its keychain entry); default: the client's id.
    #[arg(long)]
    name: Option<String>,
}

#[derive(Args)]
pub struct DisconnectArgs {
    #[arg(value_parser = parse_client)]
    client: Client,
    /// The client's config file (default: where the client keeps it on this OS).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Show the change and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Write without asking (needed when not on a terminal).
    #[arg(long, short = 'y')]
    yes: bool,
    /// Name of the connection whose stored token to forget; default: the client's id.
    #[arg(long)]
    name: Option<String>,
}

fn config_path(client: Client, given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p);
    }
    let dirs = Dirs::from_env().context("cannot find your home folder; pass --config PATH")?;
    clients::paths::locate(client, Os::current(), &dirs)
        .ok_or_else(|| anyhow!("{} has no config file; copy its snippet instead", client.title()))
}

/// Asks on a terminal; elsewhere only `--yes` may write.
pub(crate) fn confirm(question: &str, yes: bool) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        bail!("not on a terminal: pass --yes to write the change (or --dry-run to only see it)");
    }
    out!("{question} [y/N] ");
    crate::output::flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

/// Health checks with the real MCP call, starting no program but this `sluice`.
fn checker(binary: &Path) -> Checker<'_> {
    Checker { probe: &sluice_mcp::check::probe, sluice: binary }
}

fn binary() -> PathBuf {
    std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .unwrap_or_else(|_| PathBuf::from("sluice"))
}

fn engine(dir: PathBuf, pref: SecretPreference) -> Result<Engine> {
    crate::open_engine(dir, pref)
}

fn token_choice(args: &ConnectArgs) -> Result<TokenChoice> {
    if args.use_env_token {
        let token = std::env::var("SLUICE_TOKEN").unwrap_or_default();
        if token.trim().is_empty() {
            bail!("--use-env-token: SLUICE_TOKEN is not set");
        }
        return Ok(TokenChoice::Existing(token.trim().to_owned()));
    }
    Ok(TokenChoice::Create { label: args.token_label.clone(), projects: args.projects.clone() })
}

pub fn connect(dir: PathBuf, pref: SecretPreference, args: ConnectArgs) -> Result<()> {
    if args.status {
        return status(dir, pref, &args);
    }
    let Some(client) = args.client else {
        bail!("name a client (or pass --status to see every client)");
    };
    let port = args
        .port
        .or_else(|| sluice_engine::read_engine_file(&dir))
        .unwrap_or(sluice_engine::DEFAULT_PORT);
    let engine = engine(dir, pref)?;
    if args.repair {
        return repair(&engine, client, port, &args);
    }
    if client.format().is_none() {
        return generic_snippet(&engine, client, port, &args);
    }
    let mut req =
        ConnectRequest::new(client, config_path(client, args.config.clone())?, port, binary());
    if let Some(t) = args.transport {
        req.transport = t;
    }
    if let Some(n) = &args.name {
        req.name = n.clone();
    }
    req.token = token_choice(&args)?;

    let (entry, preview) = engine.connect_preview(&req).map_err(|e| anyhow!(e))?;
    outln!("{} — {}", client.title(), preview.path.display());
    outln!("{}.", capitalized(entry.storage.describe()));
    out!("{}", preview.diff());
    if args.dry_run {
        outln!("(dry run: nothing written, no token created)");
        return Ok(());
    }
    if !confirm("Write this change?", args.yes)? {
        outln!("Nothing written.");
        return Ok(());
    }
    let done = engine.connect(&req, &preview).map_err(|e| anyhow!(e))?;
    if let (Some(id), Some(label)) = (&done.token_id, &done.token_label) {
        outln!("Created token {label} ({id}).");
        profile_note(client, label);
    }
    match &done.stored {
        Some(clients::Stored::Keychain(backend)) => {
            outln!("Token kept in the OS keychain ({backend}) as connection {:?}.", req.name)
        }
        Some(clients::Stored::File(p)) => {
            outln!("No usable OS keychain: token kept in the owner-only file {}.", p.display())
        }
        None => {}
    }
    outln!("Wrote {}.", done.applied.path.display());
    if let Some(b) = &done.applied.backup {
        outln!("Backup of the previous file: {}", b.display());
    }
    match done.entry.storage {
        TokenStorage::ClientPrompt => outln!(
            "{} asks for the token once; paste this (it is not shown again):\n\n  {}\n",
            client.title(),
            done.token
        ),
        TokenStorage::Environment => outln!(
            "Set SLUICE_TOKEN in the environment {} starts from (not shown again):\n\n  export SLUICE_TOKEN={}\n",
            client.title(),
            done.token
        ),
        _ => {}
    }
    outln!("{}", client.reload_hint());
    match sluice_mcp::check::entry(&done.entry, port, &done.token) {
        Ok(summary) => {
            outln!("Connection check: OK — {summary}.");
            Ok(())
        }
        Err(CheckError::NotRunning) => {
            outln!(
                "Connection check skipped: Sluice is not running on port {port}. Start it (the \
                 app or `sluice serve`) and the client will connect."
            );
            Ok(())
        }
        Err(e) => Err(anyhow!("connection check failed: {e}")),
    }
}

/// The port of the Sluice that is running (answering on loopback), if one is.
fn running_port(dir: &std::path::Path, given: Option<u16>) -> Option<u16> {
    given
        .or_else(|| sluice_engine::read_engine_file(dir))
        .filter(|&p| std::net::TcpStream::connect(("127.0.0.1", p)).is_ok())
}

/// `sluice connect --status [CLIENT]`: each client's health, as a table or JSON.
fn status(dir: PathBuf, pref: SecretPreference, args: &ConnectArgs) -> Result<()> {
    let running = running_port(&dir, args.port);
    let engine = engine(dir, pref)?;
    let binary = binary();
    let list = match (args.client, &args.config) {
        (Some(client), Some(path)) => {
            vec![engine.config_health(client, path, running, &checker(&binary))]
        }
        (client, _) => {
            let dirs = Dirs::from_env().context("cannot find your home folder")?;
            let clients: Vec<Client> = match client {
                Some(c) => vec![c],
                None => Client::ALL.to_vec(),
            };
            engine.client_health(&clients, &dirs, Os::current(), running, &checker(&binary))
        }
    };
    if args.json {
        let rows: Vec<HealthRow> = list.iter().map(HealthRow::of).collect();
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if running.is_none() {
        outln!("Sluice is not running: entries that need it were not checked.");
    }
    let file = |h: &ClientHealth| h.path.as_ref().map_or("-".into(), |p| p.display().to_string());
    let w_client = list.iter().map(|h| h.client.id().len()).max().unwrap_or(6).max(6);
    let w_file = list.iter().map(|h| file(h).chars().count()).max().unwrap_or(11).max(11);
    let w_state = list.iter().map(|h| h.state.as_str().len()).max().unwrap_or(5).max(5);
    outln!("{:<w_client$}  {:<w_file$}  {:<w_state$}  REASON", "CLIENT", "CONFIG FILE", "STATE");
    for h in &list {
        let mut reason = match h.state {
            HealthState::Broken => format!("{}: {}", h.code.as_str(), h.reason),
            _ => h.reason.clone(),
        };
        if let Some(token) = h.token_location() {
            reason.push_str(&format!(" [token {token}]"));
        }
        if h.repairable() {
            reason.push_str(&format!(" — `sluice connect {} --repair`", h.client.id()));
        }
        outln!(
            "{:<w_client$}  {:<w_file$}  {:<w_state$}  {}",
            h.client.id(),
            file(h),
            h.state.as_str(),
            reason
        );
    }
    Ok(())
}

/// One client of `sluice connect --status --json`. Fields in alphabetical order: the output
/// keeps the key order it always had.
#[derive(Serialize)]
struct HealthRow<'a> {
    client: &'a str,
    code: &'a str,
    config: Option<String>,
    connection: Option<&'a str>,
    reason: &'a str,
    repairable: bool,
    state: &'a str,
    title: &'a str,
    token: Option<String>,
    transport: Option<&'static str>,
}

impl<'a> HealthRow<'a> {
    fn of(h: &'a ClientHealth) -> HealthRow<'a> {
        HealthRow {
            client: h.client.id(),
            code: h.code.as_str(),
            config: h.path.as_ref().map(|p| p.display().to_string()),
            connection: h.connection.as_deref(),
            reason: &h.reason,
            repairable: h.repairable(),
            state: h.state.as_str(),
            title: h.client.title(),
            token: h.token_location(),
            transport: h.transport.map(transport_name),
        }
    }
}

fn transport_name(t: Transport) -> &'static str {
    match t {
        Transport::Http => "http",
        Transport::Stdio => "stdio",
    }
}

/// `sluice connect CLIENT --repair`: rewrite only Sluice's entry, shown first.
fn repair(engine: &Engine, client: Client, port: u16, args: &ConnectArgs) -> Result<()> {
    let path = config_path(client, args.config.clone())?;
    let plan = engine.repair_preview(client, &path, port, &binary()).map_err(|e| anyhow!(e))?;
    outln!("{} — {} (repair)", client.title(), plan.change.path.display());
    outln!("{}", plan.token_note);
    if plan.change.is_noop() {
        outln!("The entry is already as a repair would write it.");
    } else {
        out!("{}", plan.diff());
    }
    if args.dry_run {
        outln!("(dry run: nothing written, no token created)");
        return Ok(());
    }
    if !plan.change.is_noop() && !confirm("Write this repair?", args.yes)? {
        outln!("Nothing written.");
        return Ok(());
    }
    let done = engine.repair(&plan).map_err(|e| anyhow!(e))?;
    let c = &done.connected;
    if let (Some(id), Some(label)) = (&c.token_id, &c.token_label) {
        outln!("Created token {label} ({id}).");
        profile_note(client, label);
    }
    if let Some(clients::Stored::Keychain(_) | clients::Stored::File(_)) = &c.stored {
        outln!("Token kept for the connection {:?}.", plan.request.name);
    }
    if !plan.change.is_noop() {
        outln!("Wrote {}.", c.applied.path.display());
    }
    if let Some(b) = &c.applied.backup {
        outln!("Backup of the previous file: {}", b.display());
    }
    outln!("{}", client.reload_hint());
    let running = running_port(engine.data_dir(), Some(port));
    let after = engine.config_health(client, &path, running, &checker(&binary()));
    match after.state {
        HealthState::Working => {
            outln!("Status: working — {}.", after.reason);
            Ok(())
        }
        HealthState::Unverified | HealthState::NotRunning => {
            outln!("Status: {} — {}.", after.state.as_str(), after.reason);
            Ok(())
        }
        _ => Err(anyhow!("after the repair: {} — {}", after.code.as_str(), after.reason)),
    }
}

/// Says which profile a token made for `client` has, why, and how to change it.
fn profile_note(client: Client, label: &str) {
    let (profile, why) = client.default_profile();
    outln!(
        "Profile: {profile} ({}) — {} is {why}. Change it with `sluice token set-profile {:?} \
         review|edit|agent|full`.",
        profile.describe(),
        client.title(),
        sluice_core::text::visible(label),
    );
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// The clients without a file: create (or take) the token and print the snippet.
fn generic_snippet(engine: &Engine, client: Client, port: u16, args: &ConnectArgs) -> Result<()> {
    let binary = binary();
    let token = match (args.dry_run, token_choice(args)?) {
        (true, _) | (false, TokenChoice::Unchanged) => TOKEN_PLACEHOLDER.to_owned(),
        (false, TokenChoice::Existing(t)) => t,
        (false, TokenChoice::Create { label, projects }) => {
            let label = label.unwrap_or_else(|| format!("{} (sluice connect)", client.title()));
            let (profile, _) = client.default_profile();
            let (record, plaintext) = engine
                .create_token_with_profile(&label, projects, None, profile)
                .map_err(|f| anyhow!("{}", f.message))?;
            outln!("Created token {} ({}).", record.label, record.id);
            profile_note(client, &record.label);
            plaintext
        }
    };
    let endpoint = clients::Endpoint { port, token: &token, binary: &binary };
    outln!("{} has no config file Sluice writes; use this:\n", client.title());
    outln!("{}", clients::one(client, &endpoint).text.trim_end());
    Ok(())
}

pub fn disconnect(dir: PathBuf, pref: SecretPreference, args: DisconnectArgs) -> Result<()> {
    let client = args.client;
    let engine = engine(dir, pref)?;
    let path = config_path(client, args.config)?;
    let change = engine.disconnect_preview(client, &path).map_err(|e| anyhow!(e))?;
    let name = args.name.unwrap_or_else(|| client.id().to_owned());
    if change.is_noop() {
        outln!("{} has no Sluice entry in {}.", client.title(), change.path.display());
    } else {
        outln!("{} — {}", client.title(), change.path.display());
        out!("{}", change.diff());
    }
    if args.dry_run {
        outln!("(dry run: nothing written)");
        return Ok(());
    }
    if !change.is_noop() && !confirm("Remove Sluice's entry?", args.yes)? {
        outln!("Nothing written.");
        return Ok(());
    }
    let (applied, forgot) = engine.disconnect(&change, &name).map_err(|e| anyhow!(e))?;
    if let Some(applied) = applied {
        outln!("Removed Sluice's entry from {}.", applied.path.display());
        if let Some(b) = &applied.backup {
            outln!("Backup of the previous file: {}", b.display());
        }
    }
    if forgot {
        outln!("Forgot the stored token of connection {name:?}.");
    }
    outln!("Its token works until you revoke it: `sluice token list`, `sluice token revoke`.");
    Ok(())
}
