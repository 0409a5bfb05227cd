//! One-click Connect, as the window sees it: which clients have a config file here and whether
//! Sluice is in it, then preview → apply for connecting (a new token, written only after the
//! user saw the exact change, then a real MCP call with it) and for disconnecting.
//!
//! The engine does the work (`Engine::connect_preview`/`connect`/`disconnect`); this module
//! keeps each preview in memory under a random id until the user confirms it, so what is
//! written is exactly the change that was shown. A preview is used once and expires after
//! [`PREVIEW_TTL`]; a file that changed since is refused by the engine (`config_changed`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sluice_core::{ErrorCode, Failure};
use sluice_engine::Engine;
use sluice_engine::clients::{
    Change, Client, ConnectFailure, ConnectRequest, Dirs, Os, TokenStorage, Transport, paths,
};
use sluice_engine::clients_health::{Checker, ClientHealth, RepairPlan};
use sluice_mcp::check::CheckError;
use ts_rs::TS;

use crate::{Context, IpcError, Res, invalid};

/// How long a preview can be confirmed: long enough to read a diff, short enough that a
/// forgotten one is not applied to a file that moved on.
pub const PREVIEW_TTL: Duration = Duration::from_secs(300);

/// One client as the Clients view lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientDto {
    /// Stable id (`cursor`, `claude-desktop`, …).
    pub client: String,
    pub title: String,
    /// Whether Sluice can write this client's config (false for the generic entries, which
    /// only have a snippet to copy).
    pub has_config: bool,
    /// The file Connect writes on this computer, when the client has one.
    pub config_path: Option<String>,
    /// Whether that file exists now (Connect creates it otherwise).
    pub config_found: bool,
    /// Whether the file holds Sluice's entry.
    pub connected: bool,
    /// Why the file cannot be used (e.g. it does not parse); Connect is refused then.
    pub problem: Option<String>,
    /// `http` or `stdio`: how the client will reach Sluice.
    pub transport: String,
    /// Whether connecting leaves the token in plain text in the client's file.
    pub plain_text: bool,
    /// Where the token ends up, one sentence.
    pub storage: String,
    /// What to do after connecting (restart, refresh).
    pub reload_hint: String,
}

/// The exact change Connect or Disconnect would make, waiting for the user's confirmation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigPreview {
    /// Pass to `connect_apply` / `disconnect_apply`; valid once, until `expiresMs`.
    pub id: String,
    pub client: String,
    pub title: String,
    /// The file that would be written.
    pub path: String,
    /// Whether the file exists now (else it is created).
    pub file_exists: bool,
    /// The change as unified-diff text (the token appears as a placeholder).
    pub diff: String,
    /// Nothing would change (e.g. Sluice is not in the file).
    pub noop: bool,
    /// Whether the token would be stored in plain text in that file (connect only).
    pub plain_text: bool,
    /// Where the token ends up, one sentence (connect only).
    pub storage: Option<String>,
    /// What a repair does with the token (kept, or a new one and why); never the token.
    pub note: Option<String>,
    #[ts(type = "number")]
    pub expires_ms: i64,
}

/// Whether a client's Sluice entry still works (`Engine::client_health`). Never holds a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientHealthDto {
    pub client: String,
    pub title: String,
    /// The config file looked at.
    pub config_path: Option<String>,
    /// A `clients_health::HealthState`'s wire form (a checked union in TypeScript).
    #[ts(type = "HealthState")]
    pub state: String,
    /// A `clients_health::HealthCode`'s wire form: the state, or why it is broken.
    #[ts(type = "HealthCode")]
    pub code: String,
    /// What was found, in words.
    pub reason: String,
    /// `http` or `stdio`, when there is an entry.
    pub transport: Option<String>,
    /// Where the entry's token is ("in plain text in the client's file"), when there is one.
    pub token_location: Option<String>,
    /// Whether `repair_preview` can fix it.
    pub repairable: bool,
}

/// What a repair did, and the client's health after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RepairResult {
    pub client: String,
    pub title: String,
    pub path: String,
    pub backup: Option<String>,
    /// The label of the token created by the repair, if one was.
    pub token_label: Option<String>,
    /// What happened to the token, in words.
    pub note: String,
    /// The health check made right after writing.
    pub health: ClientHealthDto,
    pub reload_hint: String,
}

/// The connection check: a real `initialize` + `list_projects` with the new token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckResult {
    pub ok: bool,
    /// "list_projects answered, 1 project(s) visible", or why it failed.
    pub message: String,
}

/// What Connect did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectResult {
    pub client: String,
    pub title: String,
    pub path: String,
    /// The copy of the previous file, next to it (`null` when there was none).
    pub backup: Option<String>,
    /// The label of the token created for the client.
    pub token_label: Option<String>,
    /// The token, only for clients that need it pasted or set once (VS Code asks for it,
    /// Codex reads an environment variable); shown once, never stored by the window.
    pub secret: Option<String>,
    /// What to do with `secret`, when there is one.
    pub secret_hint: Option<String>,
    pub plain_text: bool,
    pub check: CheckResult,
    pub reload_hint: String,
}

/// What Disconnect did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DisconnectResult {
    pub client: String,
    pub title: String,
    pub path: String,
    /// Whether Sluice's entry was removed (false: it was not there).
    pub removed: bool,
    pub backup: Option<String>,
    /// Whether a token kept for `sluice stdio` was forgotten.
    pub forgot_stored_token: bool,
}

enum Kind {
    Connect(Box<ConnectRequest>),
    Disconnect,
    Repair(Box<RepairPlan>),
}

impl Kind {
    fn tag(&self) -> u8 {
        match self {
            Kind::Connect(_) => 0,
            Kind::Disconnect => 1,
            Kind::Repair(_) => 2,
        }
    }
}

struct Pending {
    client: Client,
    kind: Kind,
    change: Change,
    expires: SystemTime,
}

/// The previews waiting for confirmation, and where client configs live. One per window
/// process; the shell keeps it for the app's lifetime.
pub struct Connector {
    pending: Mutex<HashMap<String, Pending>>,
    /// `None`: this process's folders, read from the environment at each call.
    dirs: Option<Dirs>,
}

impl Default for Connector {
    fn default() -> Connector {
        Connector::new()
    }
}

fn failure(e: ConnectFailure) -> IpcError {
    Failure::new(e.code(), e.to_string()).into()
}

fn ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn parse_client(id: &str) -> Res<Client> {
    Client::ALL
        .into_iter()
        .find(|c| c.id() == id)
        .ok_or_else(|| invalid(format!("unknown client {id:?}")))
}

/// The engine's own entry for a client, built with a placeholder: tells where its token ends
/// up without reading any file.
fn storage_of(client: Client, ctx: &Context) -> Option<TokenStorage> {
    let transport = client.default_transport();
    let e = sluice_connect::Endpoint {
        port: ctx.port,
        token: sluice_engine::clients::TOKEN_PLACEHOLDER,
        binary: &ctx.sluice_binary,
        connection: (transport == Transport::Stdio).then_some(client.id()),
        data_dir: None,
    };
    sluice_connect::entry(client, transport, &e).map(|e| e.storage)
}

fn health_dto(h: &ClientHealth) -> ClientHealthDto {
    ClientHealthDto {
        client: h.client.id().to_owned(),
        title: h.client.title().to_owned(),
        config_path: h.path.as_ref().map(|p| p.display().to_string()),
        state: h.state.as_str().to_owned(),
        code: h.code.as_str().to_owned(),
        reason: h.reason.clone(),
        transport: h.transport.map(|t| {
            match t {
                Transport::Http => "http",
                Transport::Stdio => "stdio",
            }
            .to_owned()
        }),
        token_location: h.token_location(),
        repairable: h.repairable(),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

impl Connector {
    /// Client configs under this process's home folder.
    pub fn new() -> Connector {
        Connector { pending: Mutex::new(HashMap::new()), dirs: None }
    }

    /// Client configs under `dirs` (tests, and a shell that knows better than the environment).
    pub fn with_dirs(dirs: Dirs) -> Connector {
        Connector { pending: Mutex::new(HashMap::new()), dirs: Some(dirs) }
    }

    fn dirs(&self) -> Res<Dirs> {
        match &self.dirs {
            Some(d) => Ok(d.clone()),
            None => Dirs::from_env().ok_or_else(|| {
                Failure::new(
                    ErrorCode::Internal,
                    "cannot find your home folder (HOME is not set), so Sluice cannot find \
                     client configs; copy a client's setup from Tokens instead",
                )
                .into()
            }),
        }
    }

    fn config_path(&self, client: Client) -> Res<PathBuf> {
        paths::locate(client, Os::current(), &self.dirs()?).ok_or_else(|| {
            IpcError::from(Failure::new(
                ErrorCode::NoConfigFile,
                format!(
                    "{} has no config file Sluice can write; copy its setup from Tokens instead",
                    client.title()
                ),
            ))
        })
    }

    /// Every client, in the order the window shows them.
    pub fn list(&self, engine: &Engine, ctx: &Context) -> Res<Vec<ClientDto>> {
        let dirs = self.dirs()?;
        Ok(Client::ALL.into_iter().map(|c| self.describe(engine, ctx, &dirs, c)).collect())
    }

    fn describe(&self, engine: &Engine, ctx: &Context, dirs: &Dirs, client: Client) -> ClientDto {
        let storage = storage_of(client, ctx);
        let path = paths::locate(client, Os::current(), dirs);
        let found = path.as_deref().is_some_and(Path::is_file);
        let (connected, problem) = match (&path, found) {
            (Some(p), true) => match engine.disconnect_preview(client, p) {
                Ok(change) => (!change.is_noop(), None),
                Err(e) => (false, Some(e.to_string())),
            },
            _ => (false, None),
        };
        ClientDto {
            client: client.id().to_owned(),
            title: client.title().to_owned(),
            has_config: client.format().is_some(),
            config_path: path.map(|p| p.display().to_string()),
            config_found: found,
            connected,
            problem,
            transport: match client.default_transport() {
                Transport::Http => "http",
                Transport::Stdio => "stdio",
            }
            .to_owned(),
            plain_text: storage.is_some_and(TokenStorage::plain_text),
            storage: capitalized(storage.unwrap_or(TokenStorage::Pasted).describe()),
            reload_hint: client.reload_hint().to_owned(),
        }
    }

    /// Keeps `change` for confirmation and describes it.
    fn remember(&self, client: Client, kind: Kind, change: Change) -> ConfigPreview {
        let diff = change.diff();
        self.remember_shown(client, kind, change, diff, None)
    }

    fn remember_shown(
        &self,
        client: Client,
        kind: Kind,
        change: Change,
        diff: String,
        note: Option<String>,
    ) -> ConfigPreview {
        let now = SystemTime::now();
        let expires = now + PREVIEW_TTL;
        let id = format!("cfg_{}", sluice_core::id::base32(&sluice_core::random_bytes::<10>()));
        let storage = change.storage;
        let preview = ConfigPreview {
            id: id.clone(),
            client: client.id().to_owned(),
            title: client.title().to_owned(),
            path: change.path.display().to_string(),
            file_exists: change.before.is_some(),
            diff,
            noop: change.is_noop(),
            plain_text: storage.is_some_and(TokenStorage::plain_text),
            storage: storage.map(|s| capitalized(s.describe())),
            note,
            expires_ms: ms(expires),
        };
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.retain(|_, p| p.expires > now);
        pending.insert(id, Pending { client, kind, change, expires });
        preview
    }

    /// Takes a preview out (it is used once), if it is of the wanted kind and not expired.
    fn take(&self, id: &str, kind: u8) -> Res<Pending> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let fits = pending.get(id).is_some_and(|p| p.kind.tag() == kind);
        let found = if fits { pending.remove(id) } else { None };
        let Some(p) = found else {
            return Err(IpcError::from(Failure::new(
                ErrorCode::PreviewNotFound,
                "this preview was already used or does not exist; preview again",
            )));
        };
        if p.expires <= SystemTime::now() {
            return Err(IpcError::from(Failure::new(
                ErrorCode::PreviewExpired,
                format!(
                    "this preview is older than {} minutes; preview again to see the file as \
                     it is now",
                    PREVIEW_TTL.as_secs() / 60
                ),
            )));
        }
        Ok(p)
    }

    fn request(&self, ctx: &Context, client: Client) -> Res<ConnectRequest> {
        if client.format().is_none() {
            return Err(IpcError::from(Failure::new(
                ErrorCode::NoConfigFile,
                format!(
                    "{} has no config file Sluice can write; copy its setup from Tokens instead",
                    client.title()
                ),
            )));
        }
        let req = ConnectRequest::new(
            client,
            self.config_path(client)?,
            ctx.port,
            ctx.sluice_binary.clone(),
        );
        // A client started from the desktop has no login PATH: a stdio entry needs the
        // binary's absolute path.
        if req.transport == Transport::Stdio && !ctx.sluice_binary.is_absolute() {
            return Err(IpcError::from(Failure::new(
                ErrorCode::SluiceBinaryMissing,
                format!(
                    "the `sluice` command was not found beside the app, and {} needs its full \
                     path; reinstall Sluice or connect with `sluice connect {}`",
                    client.title(),
                    client.id()
                ),
            )));
        }
        Ok(req)
    }

    /// The exact change connecting `client` would make (a new token replaces the placeholder
    /// on confirmation). Changes nothing.
    pub fn connect_preview(
        &self,
        engine: &Engine,
        ctx: &Context,
        client: &str,
    ) -> Res<ConfigPreview> {
        let client = parse_client(client)?;
        let req = self.request(ctx, client)?;
        let (_, change) = engine.connect_preview(&req).map_err(failure)?;
        Ok(self.remember(client, Kind::Connect(Box::new(req)), change))
    }

    /// Writes exactly the previewed change (refused if the file changed since), then checks
    /// the connection with a real MCP call. Blocking: the check waits for the engine (and,
    /// for stdio clients, runs `sluice stdio`); the shell calls it off the async workers.
    pub fn connect_apply(&self, engine: &Engine, id: &str) -> Res<ConnectResult> {
        let p = self.take(id, 0)?;
        let Kind::Connect(req) = p.kind else { return Err(Failure::internal().into()) };
        let done = engine.connect(&req, &p.change).map_err(failure)?;
        let check = match sluice_mcp::check::entry(&done.entry, req.port, &done.token) {
            Ok(summary) => CheckResult { ok: true, message: summary },
            Err(CheckError::NotRunning) => CheckResult {
                ok: false,
                message: format!("Sluice is not answering on port {}", req.port),
            },
            Err(e) => CheckResult { ok: false, message: e.to_string() },
        };
        let (secret, secret_hint) = match done.entry.storage {
            TokenStorage::ClientPrompt => (
                Some(done.token.clone()),
                Some(format!(
                    "{} asks for the token once: paste this token then. It is not shown again.",
                    p.client.title()
                )),
            ),
            TokenStorage::Environment => (
                Some(done.token.clone()),
                Some(format!(
                    "Set SLUICE_TOKEN to this token in the environment {} starts from. It is \
                     not shown again.",
                    p.client.title()
                )),
            ),
            _ => (None, None),
        };
        Ok(ConnectResult {
            client: p.client.id().to_owned(),
            title: p.client.title().to_owned(),
            path: done.applied.path.display().to_string(),
            backup: done.applied.backup.map(|b| b.display().to_string()),
            token_label: done.token_label,
            secret,
            secret_hint,
            plain_text: done.entry.storage.plain_text(),
            check,
            reload_hint: p.client.reload_hint().to_owned(),
        })
    }

    /// The change that removes Sluice's entry (only it) from the client's file.
    pub fn disconnect_preview(&self, engine: &Engine, client: &str) -> Res<ConfigPreview> {
        let client = parse_client(client)?;
        let path = self.config_path(client)?;
        let change = engine.disconnect_preview(client, &path).map_err(failure)?;
        Ok(self.remember(client, Kind::Disconnect, change))
    }

    /// Removes Sluice's entry as previewed (refused if the file changed since) and forgets
    /// the token kept for `sluice stdio`. The client's token stays valid until revoked.
    pub fn disconnect_apply(&self, engine: &Engine, id: &str) -> Res<DisconnectResult> {
        let p = self.take(id, 1)?;
        let (applied, forgot) = engine.disconnect(&p.change, p.client.id()).map_err(failure)?;
        Ok(DisconnectResult {
            client: p.client.id().to_owned(),
            title: p.client.title().to_owned(),
            path: p.change.path.display().to_string(),
            removed: applied.is_some(),
            backup: applied.and_then(|a| a.backup).map(|b| b.display().to_string()),
            forgot_stored_token: forgot,
        })
    }

    /// Every client's health: a real MCP call with each entry's own credential (blocking:
    /// the shell calls it off the async workers).
    pub fn health(&self, engine: &Engine, ctx: &Context) -> Res<Vec<ClientHealthDto>> {
        let dirs = self.dirs()?;
        let list = engine.client_health(
            &Client::ALL,
            &dirs,
            Os::current(),
            Some(ctx.port),
            &Checker { probe: &sluice_mcp::check::probe, sluice: &ctx.sluice_binary },
        );
        Ok(list.iter().map(health_dto).collect())
    }

    /// The exact change repairing `client`'s entry makes (only Sluice's entry, its current
    /// form, the current port and binary). Changes nothing.
    pub fn repair_preview(
        &self,
        engine: &Engine,
        ctx: &Context,
        client: &str,
    ) -> Res<ConfigPreview> {
        let client = parse_client(client)?;
        let path = self.config_path(client)?;
        let plan =
            engine.repair_preview(client, &path, ctx.port, &ctx.sluice_binary).map_err(failure)?;
        if plan.request.transport == Transport::Stdio && !ctx.sluice_binary.is_absolute() {
            return Err(IpcError::from(Failure::new(
                ErrorCode::SluiceBinaryMissing,
                format!(
                    "the `sluice` command was not found beside the app, and {} needs its full \
                     path; reinstall Sluice or repair with `sluice connect {} --repair`",
                    client.title(),
                    client.id()
                ),
            )));
        }
        let diff = plan.diff();
        let note = Some(plan.token_note.clone());
        let change = plan.change.clone();
        Ok(self.remember_shown(client, Kind::Repair(Box::new(plan)), change, diff, note))
    }

    /// Writes exactly the previewed repair (refused if the file changed since), then checks
    /// the client's health again. Blocking, like `connect_apply`.
    pub fn repair_apply(&self, engine: &Engine, ctx: &Context, id: &str) -> Res<RepairResult> {
        let p = self.take(id, 2)?;
        let Kind::Repair(plan) = p.kind else { return Err(Failure::internal().into()) };
        let done = engine.repair(&plan).map_err(failure)?;
        let after = engine.config_health(
            p.client,
            &plan.request.config,
            Some(ctx.port),
            &Checker { probe: &sluice_mcp::check::probe, sluice: &ctx.sluice_binary },
        );
        let applied = &done.connected.applied;
        Ok(RepairResult {
            client: p.client.id().to_owned(),
            title: p.client.title().to_owned(),
            path: applied.path.display().to_string(),
            backup: applied.backup.as_ref().map(|b| b.display().to_string()),
            token_label: done.connected.token_label.clone(),
            note: done.token_note,
            health: health_dto(&after),
            reload_hint: p.client.reload_hint().to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expired_preview_is_refused_and_gone() {
        let tmp = tempfile::tempdir().unwrap();
        let connector = Connector::with_dirs(Dirs::home(tmp.path()));
        let change =
            sluice_connect::plan_disconnect(Client::Cursor, &tmp.path().join("mcp.json")).unwrap();
        let preview = connector.remember(Client::Cursor, Kind::Disconnect, change);
        assert!(preview.noop);
        connector.pending.lock().unwrap().get_mut(&preview.id).unwrap().expires =
            SystemTime::now() - Duration::from_secs(1);
        assert_eq!(connector.take(&preview.id, 1).err().unwrap().code, "preview_expired");
        assert_eq!(connector.take(&preview.id, 1).err().unwrap().code, "preview_not_found");
    }
}
