//! Client configuration, for the CLI and the window alike. The forms, paths and the file
//! writer live in `sluice-connect` (the one place client configuration is defined); this
//! module adds what needs the engine: ready-made snippets for a new token, and connecting a
//! client — create its token, keep it in the keychain for stdio forms, write the client's
//! config after the user saw the exact change — or disconnecting it.

use std::path::{Path, PathBuf};

pub use sluice_connect::{
    Applied, Change, Client, ClientSnippet, ConfigValue, ConnectError, Dirs, Entry, Os,
    SERVER_NAME, TokenStorage, Transport, paths,
};
use sluice_core::{ErrorCode, Failure, TokenId};
use sluice_store::connections;
pub use sluice_store::connections::Stored;

use crate::{Engine, Keychain, SecretPreference, SecretSource};

/// Everything a snippet needs.
pub struct Endpoint<'a> {
    pub port: u16,
    pub token: &'a str,
    /// Absolute path of the `sluice` binary (for stdio clients).
    pub binary: &'a Path,
}

impl<'a> Endpoint<'a> {
    fn connect(&self) -> sluice_connect::Endpoint<'a> {
        sluice_connect::Endpoint {
            port: self.port,
            token: self.token,
            binary: self.binary,
            connection: None,
            data_dir: None,
        }
    }
}

/// All snippets, in the order the CLI prints them.
pub fn all(e: &Endpoint<'_>) -> Vec<ClientSnippet> {
    sluice_connect::snippets(&e.connect())
}

/// The snippet of one client.
pub fn one(client: Client, e: &Endpoint<'_>) -> ClientSnippet {
    sluice_connect::snippet(client, &e.connect())
}

/// Shown in previews where the token created on confirmation will go.
pub const TOKEN_PLACEHOLDER: &str = "<token created when you confirm>";

/// Which token a connection uses.
#[derive(Debug, Clone)]
pub enum TokenChoice {
    /// A new token, labelled `label` (default: "<client> (sluice connect)", made unique).
    Create { label: Option<String>, projects: Option<Vec<String>> },
    /// A token the user already has (its plaintext).
    Existing(String),
    /// None to create or store: the client keeps the token itself (VS Code's prompt, an
    /// environment variable it reads). Only for HTTP forms that carry no token.
    Unchanged,
}

/// What connecting a client means: which client, how, and which file.
#[derive(Debug, Clone)]
pub struct ConnectRequest {
    pub client: Client,
    pub transport: Transport,
    /// The client's config file (`paths::locate` finds the usual one).
    pub config: PathBuf,
    /// The connection's name: its keychain entry for stdio forms (default: the client's id).
    pub name: String,
    pub port: u16,
    /// Absolute path of the `sluice` binary (stdio forms).
    pub binary: PathBuf,
    pub token: TokenChoice,
}

impl ConnectRequest {
    /// A request with the defaults: the client's own transport and id as the name.
    pub fn new(client: Client, config: PathBuf, port: u16, binary: PathBuf) -> ConnectRequest {
        ConnectRequest {
            client,
            transport: client.default_transport(),
            config,
            name: client.id().to_owned(),
            port,
            binary,
            token: TokenChoice::Create { label: None, projects: None },
        }
    }
}

/// A connection made.
#[derive(Debug)]
pub struct Connected {
    pub applied: Applied,
    pub entry: Entry,
    /// The token's plaintext (for the connection check; VS Code and Codex users need it once).
    pub token: String,
    /// The token created for this connection, if one was.
    pub token_id: Option<TokenId>,
    pub token_label: Option<String>,
    /// Where the token was stored for `sluice stdio --connection` (stdio forms only).
    pub stored: Option<Stored>,
}

/// Why connecting or disconnecting failed; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectFailure {
    #[error(transparent)]
    Config(#[from] ConnectError),
    #[error("{}", .0.message)]
    Engine(Failure),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot store the connection's token: {0}")]
    Secret(String),
    /// Repair found no Sluice entry to repair.
    #[error("{0}")]
    NotConfigured(String),
}

impl ConnectFailure {
    /// A stable code for scripts and the window.
    pub fn code(&self) -> ErrorCode {
        match self {
            ConnectFailure::Config(e) => sluice_core::Coded::code(e),
            ConnectFailure::Engine(f) => f.code,
            ConnectFailure::Invalid(_) => ErrorCode::InvalidArgument,
            ConnectFailure::Secret(_) => ErrorCode::SecretStore,
            ConnectFailure::NotConfigured(_) => ErrorCode::NotConfigured,
        }
    }
}

impl Engine {
    /// Where connection tokens live: where the install secret lives (the keychain, or the
    /// owner-only file fallback when this install has no usable keychain).
    pub(crate) fn connection_store(&self) -> (SecretPreference, &'static Keychain) {
        static UNUSED: std::sync::OnceLock<Keychain> = std::sync::OnceLock::new();
        match self.secret_source().0 {
            SecretSource::File(_) => (
                SecretPreference::FileOnly,
                UNUSED.get_or_init(|| Keychain::unavailable("not used")),
            ),
            SecretSource::Keychain(_) => (SecretPreference::Auto, Keychain::platform()),
        }
    }

    /// The data folder to name in stdio entries: only when it is not the default one.
    pub(crate) fn explicit_data_dir(&self) -> Option<PathBuf> {
        let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
        let dir = canon(self.data_dir());
        (crate::default_data_dir().map(|d| canon(&d)).as_ref() != Some(&dir)).then_some(dir)
    }

    pub(crate) fn connection_entry(
        &self,
        req: &ConnectRequest,
        token: &str,
    ) -> Result<Entry, ConnectFailure> {
        if !connections::valid_name(&req.name) {
            return Err(ConnectFailure::Invalid(format!(
                "{:?} is not a connection name (1-64 letters, digits, '-', '_' or '.')",
                req.name
            )));
        }
        let data_dir = self.explicit_data_dir();
        let stdio = req.transport == Transport::Stdio;
        let e = sluice_connect::Endpoint {
            port: req.port,
            token,
            binary: &req.binary,
            connection: stdio.then_some(req.name.as_str()),
            data_dir: data_dir.as_deref(),
        };
        sluice_connect::entry(req.client, req.transport, &e).ok_or_else(|| {
            ConnectFailure::Invalid(format!(
                "{} cannot be connected over {}",
                req.client.title(),
                if stdio { "stdio" } else { "HTTP" }
            ))
        })
    }

    /// The exact change connecting would make, with a placeholder where the token goes.
    /// Changes nothing.
    pub fn connect_preview(&self, req: &ConnectRequest) -> Result<(Entry, Change), ConnectFailure> {
        let entry = self.connection_entry(req, TOKEN_PLACEHOLDER)?;
        let change = sluice_connect::plan_connect(&entry, &req.config)?;
        Ok((entry, change))
    }

    /// Connects: creates the token (unless given one), stores it for stdio forms, and writes
    /// the change the user saw in `preview` (refused if the file changed since). On failure
    /// the created token is revoked and its stored copy forgotten: nothing is left behind.
    pub fn connect(
        &self,
        req: &ConnectRequest,
        preview: &Change,
    ) -> Result<Connected, ConnectFailure> {
        // Check everything that can fail cheaply before a token exists.
        self.connection_entry(req, TOKEN_PLACEHOLDER)?;
        let (token, token_id, token_label) = match &req.token {
            TokenChoice::Existing(t) => (t.trim().to_owned(), None, None),
            TokenChoice::Unchanged if req.transport == Transport::Http => {
                (String::new(), None, None)
            }
            TokenChoice::Unchanged => {
                return Err(ConnectFailure::Invalid(
                    "a stdio form needs a token to store; create one".into(),
                ));
            }
            TokenChoice::Create { label, projects } => {
                let label = match label {
                    Some(l) => l.clone(),
                    None => self.free_label(req.client)?,
                };
                let (profile, _) = req.client.default_profile();
                let (record, plaintext) = self
                    .create_token_with_profile(&label, projects.clone(), None, profile)
                    .map_err(ConnectFailure::Engine)?;
                (plaintext, Some(record.id), Some(record.label))
            }
        };
        match self.finish_connect(req, preview, &token) {
            Ok((applied, entry, stored)) => {
                Ok(Connected { applied, entry, token, token_id, token_label, stored })
            }
            Err(e) => {
                if let Some(id) = &token_id {
                    let _ = self.revoke_token(&id.to_string());
                }
                Err(e)
            }
        }
    }

    fn finish_connect(
        &self,
        req: &ConnectRequest,
        preview: &Change,
        token: &str,
    ) -> Result<(Applied, Entry, Option<Stored>), ConnectFailure> {
        let entry = self.connection_entry(req, token)?;
        let change = sluice_connect::plan_connect(&entry, &req.config)?;
        if change.before != preview.before {
            return Err(ConnectError::Changed { path: change.path }.into());
        }
        let (pref, keychain) = self.connection_store();
        let stored = if req.transport == Transport::Stdio {
            Some(
                connections::save(self.data_dir(), pref, keychain, &req.name, token)
                    .map_err(|e| ConnectFailure::Secret(e.to_string()))?,
            )
        } else {
            None
        };
        match sluice_connect::apply(&change) {
            Ok(applied) => Ok((applied, entry, stored)),
            Err(e) => {
                if stored.is_some() {
                    let _ = connections::delete(self.data_dir(), pref, keychain, &req.name);
                }
                Err(e.into())
            }
        }
    }

    /// "<Client> (sluice connect)", or "… #2", "… #3" when taken (labels are unique).
    pub(crate) fn free_label(&self, client: Client) -> Result<String, ConnectFailure> {
        let taken: std::collections::HashSet<String> =
            self.tokens().map_err(ConnectFailure::Engine)?.into_iter().map(|t| t.label).collect();
        let base = format!("{} (sluice connect)", client.title());
        Ok((1..1000)
            .map(|n| if n == 1 { base.clone() } else { format!("{base} #{n}") })
            .find(|l| !taken.contains(l))
            .unwrap_or(base))
    }

    /// The change that removes Sluice's entry (only it) from a client's config file.
    pub fn disconnect_preview(
        &self,
        client: Client,
        config: &Path,
    ) -> Result<Change, ConnectFailure> {
        Ok(sluice_connect::plan_disconnect(client, config)?)
    }

    /// Writes a disconnect previewed with [`Engine::disconnect_preview`] and forgets the
    /// stored token of connection `name`. Returns what was written (if anything) and whether
    /// a stored token was forgotten. The token itself stays valid until revoked.
    pub fn disconnect(
        &self,
        change: &Change,
        name: &str,
    ) -> Result<(Option<Applied>, bool), ConnectFailure> {
        let applied = if change.is_noop() { None } else { Some(sluice_connect::apply(change)?) };
        let (pref, keychain) = self.connection_store();
        let forgot = connections::valid_name(name)
            && connections::delete(self.data_dir(), pref, keychain, name).unwrap_or(false);
        Ok((applied, forgot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_valid_in_their_formats() {
        let e = Endpoint { port: 4321, token: "slc_abc", binary: Path::new("/opt/Sluice/sluice") };
        let all = all(&e);
        let get = |id: &str| all.iter().find(|s| s.client == id).unwrap().text.clone();
        let cursor: serde_json::Value = serde_json::from_str(&get("cursor")).unwrap();
        assert_eq!(cursor["mcpServers"]["sluice"]["url"], "http://127.0.0.1:4321/mcp");
        assert_eq!(cursor["mcpServers"]["sluice"]["headers"]["Authorization"], "Bearer slc_abc");
        let vs = get("vscode");
        assert!(!vs.contains("slc_abc"));
        let vs: serde_json::Value = serde_json::from_str(&vs).unwrap();
        assert_eq!(vs["servers"]["sluice"]["type"], "http");
        let cd: serde_json::Value = serde_json::from_str(&get("claude-desktop")).unwrap();
        assert_eq!(cd["mcpServers"]["sluice"]["command"], "/opt/Sluice/sluice");
        assert_eq!(cd["mcpServers"]["sluice"]["env"]["SLUICE_TOKEN"], "slc_abc");
        assert_eq!(
            get("claude-code"),
            "claude mcp add --transport http --scope user --header 'Authorization: Bearer slc_abc' sluice http://127.0.0.1:4321/mcp"
        );
        assert_eq!(
            get("codex"),
            "[mcp_servers.sluice]\nurl = \"http://127.0.0.1:4321/mcp\"\nbearer_token_env_var = \"SLUICE_TOKEN\"\n"
        );
        assert_eq!(one(Client::Zed, &e).client, "zed");
    }

    fn engine(dir: &Path) -> Engine {
        Engine::open(&crate::EngineConfig::new(dir.join("data"), SecretPreference::FileOnly))
            .unwrap()
    }

    #[test]
    fn a_failed_connect_leaves_no_token_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let engine = engine(tmp.path());
        let config = tmp.path().join("mcp.json");
        std::fs::write(&config, "{}\n").unwrap();
        let req = ConnectRequest::new(Client::Cursor, config.clone(), 4321, "/opt/sluice".into());
        let (_, preview) = engine.connect_preview(&req).unwrap();
        assert!(preview.after.contains(TOKEN_PLACEHOLDER));
        assert!(engine.tokens().unwrap().is_empty(), "a preview creates nothing");
        // The file changes between the preview and the confirmation: refused, token revoked.
        std::fs::write(&config, "{\"mcpServers\": {}}\n").unwrap();
        let err = engine.connect(&req, &preview).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ConfigChanged);
        let tokens = engine.tokens().unwrap();
        assert_eq!(tokens.len(), 1);
        assert!(tokens[0].revoked_ms.is_some(), "the token made for it is revoked");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "{\"mcpServers\": {}}\n");
        // Done again from a fresh preview, it works, under the next free label.
        let (_, preview) = engine.connect_preview(&req).unwrap();
        let done = engine.connect(&req, &preview).unwrap();
        assert_eq!(done.token_label.as_deref(), Some("Cursor (sluice connect) #2"));
        assert!(std::fs::read_to_string(&config).unwrap().contains(&done.token));
        assert!(engine.authenticate(&done.token).is_ok());
    }

    #[test]
    fn a_stdio_connection_keeps_its_token_for_sluice_stdio() {
        let tmp = tempfile::tempdir().unwrap();
        let engine = engine(tmp.path());
        let config = tmp.path().join("claude_desktop_config.json");
        let req =
            ConnectRequest::new(Client::ClaudeDesktop, config.clone(), 1, "/opt/sluice".into());
        assert_eq!(req.transport, Transport::Stdio);
        let (entry, preview) = engine.connect_preview(&req).unwrap();
        assert_eq!(entry.storage, TokenStorage::SluiceKeychain);
        let done = engine.connect(&req, &preview).unwrap();
        assert!(matches!(done.stored, Some(Stored::File(_))), "file-only install: owner-only file");
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(!text.contains(&done.token) && text.contains("--connection"), "{text}");
        let (pref, kc) = engine.connection_store();
        let kept = connections::load(engine.data_dir(), pref, kc, "claude-desktop").unwrap();
        assert_eq!(kept.as_deref().map(String::as_str), Some(done.token.as_str()));

        let change = engine.disconnect_preview(Client::ClaudeDesktop, &config).unwrap();
        let (applied, forgot) = engine.disconnect(&change, "claude-desktop").unwrap();
        assert!(applied.unwrap().backup.is_some());
        assert!(forgot);
        assert_eq!(connections::load(engine.data_dir(), pref, kc, "claude-desktop").unwrap(), None);
        let bad = ConnectRequest { name: "../x".into(), ..req };
        assert_eq!(engine.connect_preview(&bad).unwrap_err().code(), ErrorCode::InvalidArgument);
    }
}
