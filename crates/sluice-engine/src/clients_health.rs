//! Whether each client's Sluice entry still works, and repairing it. For every client with a
//! config file on this OS: not installed, not configured, working (a real MCP call made with
//! the entry's own credential), broken with a stable code and the reason (the port changed,
//! the token is refused, the stdio command's binary is gone, the connection's stored token is
//! missing, the file cannot be read), unverified (the client keeps the token itself: only the
//! port is checked), or Sluice not running (nothing guessed).
//!
//! The MCP call itself belongs to `sluice-mcp` (the only crate that speaks MCP): callers pass
//! it in as a [`Checker`] (`sluice_mcp::check::probe`, and the only binary a check may start). A repair rewrites only Sluice's
//! entry, in the form the client has now (same transport), with the current port and binary,
//! through `Engine::connect` — the same preview, backup and re-parse proof.

use std::path::{Path, PathBuf};

use sluice_connect::health::{self, Credential, Found, ReadError};
use sluice_store::connections;

use crate::Engine;
use crate::clients::{
    Change, Client, ConnectError, ConnectFailure, ConnectRequest, Connected, Dirs, Os,
    TOKEN_PLACEHOLDER, TokenChoice, TokenStorage, Transport, paths,
};
pub use crate::health_codes::{HealthCode, HealthState};
use crate::roots::canonical_or_self;

/// The code of a config file that cannot be read.
fn read_code(e: &ReadError) -> HealthCode {
    match e {
        ReadError::Invalid(_) => HealthCode::ConfigInvalid,
        ReadError::Unreadable(_) => HealthCode::ConfigUnreadable,
    }
}

/// One client's health. Never holds a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientHealth {
    pub client: Client,
    /// The config file looked at.
    pub path: Option<PathBuf>,
    pub state: HealthState,
    /// The state's own code, or why it is broken.
    pub code: HealthCode,
    /// What was found, in one or two sentences.
    pub reason: String,
    /// How the entry reaches Sluice, when there is one.
    pub transport: Option<Transport>,
    /// Where the entry's token is, when there is an entry.
    pub storage: Option<TokenStorage>,
    /// The keychain connection a stdio entry uses.
    pub connection: Option<String>,
}

impl ClientHealth {
    fn new(
        client: Client,
        path: Option<PathBuf>,
        state: HealthState,
        code: HealthCode,
        reason: String,
    ) -> ClientHealth {
        ClientHealth {
            client,
            path,
            state,
            code,
            reason,
            transport: None,
            storage: None,
            connection: None,
        }
    }

    /// Whether a repair (rewriting only Sluice's entry) can fix what is wrong.
    pub fn repairable(&self) -> bool {
        match self.state {
            HealthState::Broken => matches!(
                self.code,
                HealthCode::PortChanged
                    | HealthCode::TokenRejected
                    | HealthCode::BinaryMissing
                    | HealthCode::OtherBinary
                    | HealthCode::ConnectionTokenMissing
                    | HealthCode::NoToken
                    | HealthCode::CheckFailed
            ),
            _ => false,
        }
    }

    /// Where the token lives, a phrase ("in plain text in the client's file").
    pub fn token_location(&self) -> Option<String> {
        Some(match (self.storage?, &self.connection) {
            (TokenStorage::SluiceKeychain, Some(name)) => {
                format!("in Sluice's keychain entry for the connection \"{name}\"")
            }
            (TokenStorage::SluiceKeychain, None) => "in Sluice's keychain".into(),
            (TokenStorage::PlainInFile, _) => "in plain text in the client's file".into(),
            (TokenStorage::ClientPrompt, _) => "in the client's own secret storage".into(),
            (TokenStorage::Environment, _) => "in an environment variable the client reads".into(),
            (TokenStorage::Pasted, _) => "in the client's own settings".into(),
        })
    }
}

/// The MCP call a health check needs made.
#[derive(Debug, Clone, Copy)]
pub enum Probe<'a> {
    /// `initialize` + `list_projects` over HTTP with this token.
    Http { port: u16, token: &'a str },
    /// The same through the entry's stdio command, run as the client runs it.
    Stdio { program: &'a Path, args: &'a [String] },
}

/// Why a probe did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeError {
    /// Nothing answers on the port.
    NotRunning,
    /// The engine refused the call: `code` is the refusal's `data.code` (`unauthorized`, …).
    Refused { code: String, message: String },
    /// Anything else.
    Failed(String),
}

/// How entries are checked: the probe that makes the MCP call (`sluice_mcp::check::probe`), and
/// the one program a stdio entry's check may start — this Sluice's own `sluice`. An entry that
/// runs any other program (another copy, or something named like it) is reported, never run:
/// whoever can write a client's config file must not get Sluice to execute what they put
/// there just because the user opened the Clients view.
pub struct Checker<'a> {
    pub probe: &'a (dyn Fn(Probe<'_>) -> Result<String, ProbeError> + Sync),
    pub sluice: &'a Path,
}

/// A [`Checker`], as the health functions take it.
pub type Verify<'a> = &'a Checker<'a>;

/// `program` as the client would find it: itself when absolute, else the first match on PATH.
fn resolve(program: &Path) -> Option<PathBuf> {
    if program.is_absolute() {
        return program.is_file().then(|| canonical_or_self(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .map(|p| canonical_or_self(&p))
}

/// Whether a client is there at all: its config file, or the folder it would be in (not the
/// home folder itself: Claude Code's `~/.claude.json` counts with its `~/.claude` folder).
fn installed(client: Client, candidates: &[PathBuf], dirs: &Dirs) -> bool {
    candidates.iter().any(|p| {
        p.is_file()
            || p.parent().is_some_and(|d| d != dirs.home && d.is_dir())
            || (client == Client::ClaudeCode && dirs.home.join(".claude").is_dir())
    })
}

impl Engine {
    /// The health of `clients` (those without a config file are skipped), checked at once.
    /// `running`: the port the running Sluice listens on, `None` when it is not running.
    pub fn client_health(
        &self,
        clients: &[Client],
        dirs: &Dirs,
        os: Os,
        running: Option<u16>,
        verify: Verify<'_>,
    ) -> Vec<ClientHealth> {
        let clients: Vec<Client> =
            clients.iter().copied().filter(|c| c.format().is_some()).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = clients
                .iter()
                .map(|&c| s.spawn(move || self.one_client_health(c, dirs, os, running, verify)))
                .collect();
            handles
                .into_iter()
                .zip(&clients)
                .map(|(h, &c)| {
                    h.join().unwrap_or_else(|_| {
                        let why = "the check stopped unexpectedly".to_owned();
                        ClientHealth::new(
                            c,
                            None,
                            HealthState::Broken,
                            HealthCode::CheckFailed,
                            why,
                        )
                    })
                })
                .collect()
        })
    }

    fn one_client_health(
        &self,
        client: Client,
        dirs: &Dirs,
        os: Os,
        running: Option<u16>,
        verify: Verify<'_>,
    ) -> ClientHealth {
        let candidates = paths::candidates(client, os, dirs);
        let Some(path) = paths::locate(client, os, dirs) else {
            return ClientHealth::new(
                client,
                None,
                HealthState::NotInstalled,
                HealthCode::NotInstalled,
                "no config file on this system".into(),
            );
        };
        if !path.exists() && !installed(client, &candidates, dirs) {
            return ClientHealth::new(
                client,
                Some(path),
                HealthState::NotInstalled,
                HealthCode::NotInstalled,
                "neither its config file nor its folder exists".into(),
            );
        }
        self.config_health(client, &path, running, verify)
    }

    /// The health of `client`'s entry in the config file at `path` (a missing file is "not
    /// configured").
    pub fn config_health(
        &self,
        client: Client,
        path: &Path,
        running: Option<u16>,
        verify: Verify<'_>,
    ) -> ClientHealth {
        let mut h = ClientHealth::new(
            client,
            Some(path.to_owned()),
            HealthState::NotConfigured,
            HealthCode::NotConfigured,
            String::new(),
        );
        let broken = |mut h: ClientHealth, code: HealthCode, reason: String| {
            h.state = HealthState::Broken;
            h.code = code;
            h.reason = reason;
            h
        };
        let text = match health::read_file(path) {
            Ok(Some(text)) => text,
            Ok(None) => {
                h.reason = "no config file yet; Connect creates it".into();
                return h;
            }
            Err(e) => return broken(h, read_code(&e), format!("the file cannot be read: {e}")),
        };
        let found = match health::read_entry(client, &text) {
            Ok(Some(found)) => found,
            Ok(None) => {
                h.reason = "its config file has no Sluice entry".into();
                return h;
            }
            Err(ReadError::Invalid(e)) => {
                return broken(
                    h,
                    HealthCode::ConfigInvalid,
                    format!("the file cannot be used: {e}"),
                );
            }
            Err(e) => return broken(h, read_code(&e), e.to_string()),
        };
        h.transport = Some(found.transport);
        h.storage = found.credential.storage();
        h.connection = found.connection().map(str::to_owned);
        self.classify(h, &found, running, verify)
    }

    fn classify(
        &self,
        h: ClientHealth,
        found: &Found,
        running: Option<u16>,
        verify: Verify<'_>,
    ) -> ClientHealth {
        let set = |mut h: ClientHealth, state: HealthState, code: HealthCode, reason: String| {
            h.state = state;
            h.code = code;
            h.reason = reason;
            h
        };
        let not_running = |h: ClientHealth| {
            set(
                h,
                HealthState::NotRunning,
                HealthCode::NotRunning,
                "Sluice is not running, so the entry was not checked; start the app or `sluice \
                 serve`"
                    .into(),
            )
        };
        let outcome = |h: ClientHealth, result: Result<String, ProbeError>| match result {
            Ok(summary) => set(h, HealthState::Working, HealthCode::Working, summary),
            Err(ProbeError::NotRunning) => not_running(h),
            Err(ProbeError::Refused { code, message }) if code == "unauthorized" => set(
                h,
                HealthState::Broken,
                HealthCode::TokenRejected,
                format!("Sluice refuses the entry's token: {message}"),
            ),
            Err(ProbeError::Refused { message, .. }) => set(
                h,
                HealthState::Broken,
                HealthCode::CheckFailed,
                format!("Sluice refused: {message}"),
            ),
            Err(ProbeError::Failed(why)) => {
                set(h, HealthState::Broken, HealthCode::CheckFailed, why)
            }
        };
        let kept_by_client = |h: ClientHealth, port_note: &str| {
            let whose = match &found.credential {
                Credential::Environment(var) => format!("the client reads it from ${var}"),
                _ => "the client asked for it once and keeps it".to_owned(),
            };
            set(
                h,
                HealthState::Unverified,
                HealthCode::TokenKeptByClient,
                format!(
                    "{port_note}the token is not in the file ({whose}), so Sluice cannot check it"
                ),
            )
        };
        match found.transport {
            Transport::Http => {
                let Some(port) = running else { return not_running(h) };
                if found.port != Some(port) {
                    let was = found.port.map_or("no port".to_owned(), |p| format!("port {p}"));
                    return set(
                        h,
                        HealthState::Broken,
                        HealthCode::PortChanged,
                        format!("the entry points at {was}; Sluice now listens on port {port}"),
                    );
                }
                match &found.credential {
                    Credential::InFile(token) => {
                        outcome(h, (verify.probe)(Probe::Http { port, token: token.expose() }))
                    }
                    Credential::ClientPrompt | Credential::Environment(_) => {
                        kept_by_client(h, &format!("The port ({port}) is right; "))
                    }
                    Credential::Keychain(_) | Credential::None => set(
                        h,
                        HealthState::Broken,
                        HealthCode::NoToken,
                        "the entry sends no token".into(),
                    ),
                }
            }
            Transport::Stdio => {
                let Some((program, args)) = &found.command else {
                    return set(
                        h,
                        HealthState::Broken,
                        HealthCode::CheckFailed,
                        "no command".into(),
                    );
                };
                let name = Path::new(program)
                    .file_name()
                    .map(|n| n.to_string_lossy().to_ascii_lowercase())
                    .unwrap_or_default();
                // Only Sluice's own bridge is run: whatever else sits under "sluice" is not
                // Sluice's to start.
                if !name.starts_with("sluice") || args.first().map(String::as_str) != Some("stdio")
                {
                    return set(
                        h,
                        HealthState::Broken,
                        HealthCode::NotSluice,
                        format!(
                            "the entry runs {}, not `sluice stdio`",
                            sluice_core::text::visible(program)
                        ),
                    );
                }
                let program = Path::new(program);
                let Some(resolved) = resolve(program) else {
                    return set(
                        h,
                        HealthState::Broken,
                        HealthCode::BinaryMissing,
                        format!(
                            "{} no longer exists (moved or removed, e.g. by an upgrade)",
                            sluice_core::text::visible(&program.display().to_string())
                        ),
                    );
                };
                if resolved != canonical_or_self(verify.sluice) {
                    return set(
                        h,
                        HealthState::Broken,
                        HealthCode::OtherBinary,
                        format!(
                            "the entry runs {}, not this Sluice's `sluice` ({}); it was not \
                             started to check it. Repair points it at this one",
                            sluice_core::text::visible(&program.display().to_string()),
                            verify.sluice.display()
                        ),
                    );
                }
                let ours = found.data_dir.as_deref().is_none_or(|d| {
                    canonical_or_self(Path::new(d)) == canonical_or_self(self.data_dir())
                });
                match &found.credential {
                    Credential::Keychain(name) if ours => {
                        let (pref, keychain) = self.connection_store();
                        let stored = connections::valid_name(name)
                            .then(|| connections::load(self.data_dir(), pref, keychain, name))
                            .and_then(Result::ok)
                            .flatten();
                        if stored.is_none() {
                            return set(
                                h,
                                HealthState::Broken,
                                HealthCode::ConnectionTokenMissing,
                                format!(
                                    "Sluice has no stored token for the connection \"{name}\" \
                                     (its keychain entry is gone)"
                                ),
                            );
                        }
                        if running.is_none() {
                            return not_running(h);
                        }
                        outcome(h, (verify.probe)(Probe::Stdio { program, args }))
                    }
                    Credential::Keychain(_) => {
                        if running.is_none() {
                            return not_running(h);
                        }
                        outcome(h, (verify.probe)(Probe::Stdio { program, args }))
                    }
                    // `sluice stdio` reads SLUICE_TOKEN: the same call over HTTP with it.
                    Credential::InFile(token) => match running {
                        Some(port) => {
                            outcome(h, (verify.probe)(Probe::Http { port, token: token.expose() }))
                        }
                        None => not_running(h),
                    },
                    Credential::ClientPrompt | Credential::Environment(_) => {
                        if running.is_none() {
                            return not_running(h);
                        }
                        kept_by_client(h, "")
                    }
                    Credential::None => set(
                        h,
                        HealthState::Broken,
                        HealthCode::NoToken,
                        "the entry gives `sluice stdio` no token (no --connection, no \
                         SLUICE_TOKEN)"
                            .into(),
                    ),
                }
            }
        }
    }
}

/// What a repair does with the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepairToken {
    /// The token the entry has still works: it is kept.
    Keep,
    /// The client keeps the token itself; the entry's reference to it is kept.
    KeptByClient,
    /// A new token is created (and stored in the keychain for stdio forms).
    Create,
}

/// A repair, planned: the exact change and what happens to the token. Holds a token only
/// inside `request` and `change` (never shown: [`RepairPlan::diff`] hides it).
#[derive(Debug, Clone)]
pub struct RepairPlan {
    pub request: ConnectRequest,
    /// The change to the file (a new token's place holds [`TOKEN_PLACEHOLDER`]).
    pub change: Change,
    pub token: RepairToken,
    /// What happens to the token, in words (never the token).
    pub token_note: String,
    /// A token kept in the file, to hide from the diff.
    kept: Option<String>,
}

/// Shown in a repair's diff where a kept token stands.
pub const TOKEN_KEPT: &str = "<current token, unchanged>";

impl RepairPlan {
    /// The change as diff text, with a kept token replaced by [`TOKEN_KEPT`].
    pub fn diff(&self) -> String {
        let diff = self.change.diff();
        match &self.kept {
            Some(t) if !t.is_empty() => diff.replace(t.as_str(), TOKEN_KEPT),
            _ => diff,
        }
    }
}

/// A repair made.
#[derive(Debug)]
pub struct Repaired {
    pub connected: Connected,
    pub token: RepairToken,
    pub token_note: String,
}

impl Engine {
    /// Plans the repair of `client`'s entry in `config`: same transport, the current `port`
    /// and `binary`, the token kept when it still works. Changes nothing.
    pub fn repair_preview(
        &self,
        client: Client,
        config: &Path,
        port: u16,
        binary: &Path,
    ) -> Result<RepairPlan, ConnectFailure> {
        let unparseable =
            |message: String| ConnectError::Unparseable { path: config.to_owned(), message };
        let text = health::read_file(config).map_err(|e| unparseable(e.to_string()))?;
        let not_configured = || {
            ConnectFailure::NotConfigured(format!(
                "{} has no Sluice entry in {} to repair; connect it instead",
                client.title(),
                config.display()
            ))
        };
        let text = text.ok_or_else(not_configured)?;
        let found = health::read_entry(client, &text)
            .map_err(|e| unparseable(e.to_string()))?
            .ok_or_else(not_configured)?;
        let transport = if client.supports(found.transport) {
            found.transport
        } else {
            client.default_transport()
        };
        let name = found
            .connection()
            .filter(|n| connections::valid_name(n))
            .unwrap_or(client.id())
            .to_owned();
        let refused = |t: &str| self.authenticate(t).err().map(|f| f.message);
        let (choice, token, note, kept) = match &found.credential {
            Credential::InFile(t) => match refused(t.expose()) {
                None => (
                    TokenChoice::Existing(t.expose().to_owned()),
                    RepairToken::Keep,
                    "The token already in the entry still works and is kept.".to_owned(),
                    Some(t.expose().to_owned()),
                ),
                Some(why) => (
                    TokenChoice::Create { label: None, projects: None },
                    RepairToken::Create,
                    format!("The entry's token is refused ({why}); a new token replaces it."),
                    None,
                ),
            },
            Credential::Keychain(conn) => {
                let (pref, keychain) = self.connection_store();
                let stored = connections::valid_name(conn)
                    .then(|| connections::load(self.data_dir(), pref, keychain, conn))
                    .and_then(Result::ok)
                    .flatten();
                match stored.as_deref().map(|t| (t, refused(t))) {
                    Some((t, None)) => (
                        TokenChoice::Existing(t.to_owned()),
                        RepairToken::Keep,
                        format!(
                            "The connection's stored token (\"{conn}\") still works and is kept."
                        ),
                        None,
                    ),
                    Some((_, Some(why))) => (
                        TokenChoice::Create { label: None, projects: None },
                        RepairToken::Create,
                        format!(
                            "The connection's stored token is refused ({why}); a new token \
                             replaces it in the keychain."
                        ),
                        None,
                    ),
                    None => (
                        TokenChoice::Create { label: None, projects: None },
                        RepairToken::Create,
                        self.orphan_note(client, conn)?,
                        None,
                    ),
                }
            }
            Credential::ClientPrompt | Credential::Environment(_)
                if transport == Transport::Http =>
            {
                (
                    TokenChoice::Unchanged,
                    RepairToken::KeptByClient,
                    "The client keeps the token itself; the entry keeps referring to it. If that \
                     token was revoked, create a new one and give it to the client."
                        .to_owned(),
                    None,
                )
            }
            _ => (
                TokenChoice::Create { label: None, projects: None },
                RepairToken::Create,
                "A new token is created for the entry.".to_owned(),
                None,
            ),
        };
        let request = ConnectRequest {
            client,
            transport,
            config: config.to_owned(),
            name,
            port,
            binary: binary.to_owned(),
            token: choice,
        };
        let shown = match &request.token {
            TokenChoice::Existing(t) => t.clone(),
            TokenChoice::Create { .. } => TOKEN_PLACEHOLDER.to_owned(),
            TokenChoice::Unchanged => String::new(),
        };
        let entry = self.connection_entry(&request, &shown)?;
        let change = sluice_connect::plan_connect(&entry, config)?;
        let kept = kept.or(match (&request.token, transport) {
            (TokenChoice::Existing(t), _) => Some(t.clone()),
            _ => None,
        });
        Ok(RepairPlan { request, change, token, token_note: note, kept })
    }

    /// The note for a connection whose stored token is gone: a token made for this client
    /// earlier that is still valid is left alone, and said so.
    fn orphan_note(&self, client: Client, conn: &str) -> Result<String, ConnectFailure> {
        let base = format!("{} (sluice connect)", client.title());
        let now = crate::now_ms();
        let live: Vec<String> = self
            .tokens()
            .map_err(ConnectFailure::Engine)?
            .into_iter()
            .filter(|t| t.label.starts_with(&base))
            .filter(|t| t.revoked_ms.is_none() && t.expires_ms.is_none_or(|e| e > now))
            .map(|t| format!("\"{}\" ({})", t.label, t.id))
            .collect();
        let mut note = format!(
            "Sluice has no stored token for the connection \"{conn}\"; a new token is created \
             and stored."
        );
        if !live.is_empty() {
            note.push_str(&format!(
                " The token {} made for this client earlier is left as it is (not revoked); \
                 revoke it in Tokens if nothing else uses it.",
                live.join(", ")
            ));
        }
        Ok(note)
    }

    /// Writes a repair planned by [`Engine::repair_preview`] (refused if the file changed
    /// since), creating and storing a new token when the plan says so.
    pub fn repair(&self, plan: &RepairPlan) -> Result<Repaired, ConnectFailure> {
        let connected = self.connect(&plan.request, &plan.change)?;
        Ok(Repaired { connected, token: plan.token.clone(), token_note: plan.token_note.clone() })
    }
}
