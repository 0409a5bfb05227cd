//! Sluice's entry for each client: [`Endpoint`] (what a configuration needs), [`entry`] (the
//! value that goes under the client's servers key, in the shape its documentation expects) and
//! [`document`] (the whole file, for a client with no config yet).

use std::path::Path;

use crate::edit;
use crate::value::ConfigValue;
use crate::{
    Client, Format, GOOSE_DESCRIPTION, SERVER_NAME, TOKEN_ENV, TokenStorage, Transport,
    VSCODE_INPUT_ID,
};

/// Everything a configuration needs.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint<'a> {
    pub port: u16,
    /// The token's plaintext, for the forms that must carry it.
    pub token: &'a str,
    /// Absolute path of the `sluice` binary (stdio forms).
    pub binary: &'a Path,
    /// When set, the token is in Sluice's keychain entry of this name: stdio forms carry
    /// `--connection NAME` and no token.
    pub connection: Option<&'a str>,
    /// Sluice's data folder, when it is not the default one: stdio forms pass `--data-dir`.
    pub data_dir: Option<&'a Path>,
}

impl Endpoint<'_> {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    pub(crate) fn command(&self) -> String {
        self.binary.to_string_lossy().into_owned()
    }

    pub(crate) fn stdio_args(&self) -> ConfigValue {
        ConfigValue::List(self.stdio_arg_list())
    }

    /// `sluice stdio`'s arguments: the connection and the data folder when they are not the
    /// defaults.
    fn stdio_arg_list(&self) -> Vec<ConfigValue> {
        let mut args = vec![ConfigValue::s("stdio")];
        if let Some(name) = self.connection {
            args.extend([ConfigValue::s("--connection"), ConfigValue::s(name)]);
        }
        if let Some(dir) = self.data_dir {
            args.extend([ConfigValue::s("--data-dir"), ConfigValue::s(dir.to_string_lossy())]);
        }
        args
    }

    /// The whole command line as one list (opencode and Kilo Code: `command: [bin, args…]`).
    fn command_line(&self) -> ConfigValue {
        let mut line = vec![ConfigValue::s(self.command())];
        line.extend(self.stdio_arg_list());
        ConfigValue::List(line)
    }

    /// The `env` map of a stdio entry: empty when the keychain holds the token.
    fn stdio_env(&self) -> Option<ConfigValue> {
        match self.connection {
            Some(_) => None,
            None => Some(ConfigValue::map([(TOKEN_ENV, ConfigValue::s(self.token))])),
        }
    }

    pub(crate) fn stdio_storage(&self) -> TokenStorage {
        match self.connection {
            Some(_) => TokenStorage::SluiceKeychain,
            None => TokenStorage::PlainInFile,
        }
    }
}

/// Sluice's entry for one client: what goes under `servers_key()["sluice"]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub client: Client,
    pub transport: Transport,
    pub value: ConfigValue,
    /// VS Code's `inputs` element the entry refers to, if any.
    pub input: Option<ConfigValue>,
    pub storage: TokenStorage,
}

impl Entry {
    /// What a stdio entry makes the client run: the program and its arguments, whichever of
    /// the clients' shapes the entry has (`command` + `args`, Goose's `cmd`, or opencode's one
    /// `command` list). `None` for an HTTP entry.
    pub fn command_line(&self) -> Option<(String, Vec<String>)> {
        if self.transport != Transport::Stdio {
            return None;
        }
        let strings = |v: &ConfigValue| match v {
            ConfigValue::List(items) => items
                .iter()
                .filter_map(|i| match i {
                    ConfigValue::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect::<Vec<_>>(),
            _ => vec![],
        };
        match self.value.get("command").or_else(|| self.value.get("cmd"))? {
            ConfigValue::Str(program) => {
                let args = self.value.get("args").map(strings).unwrap_or_default();
                Some((program.clone(), args))
            }
            line @ ConfigValue::List(_) => {
                let mut line = strings(line).into_iter();
                Some((line.next()?, line.collect()))
            }
            _ => None,
        }
    }
}

/// VS Code's password prompt: the token is asked once and kept in VS Code's secret storage.
pub(crate) fn vscode_input() -> ConfigValue {
    ConfigValue::map([
        ("type", ConfigValue::s("promptString")),
        ("id", ConfigValue::s(VSCODE_INPUT_ID)),
        ("description", ConfigValue::s("Sluice access token")),
        ("password", ConfigValue::Bool(true)),
    ])
}

/// `{"Authorization": "Bearer <reference>"}`, where the client replaces `reference` (its own
/// syntax for the `SLUICE_TOKEN` variable) when it loads the file.
fn env_header(reference: &str) -> ConfigValue {
    ConfigValue::map([("Authorization", ConfigValue::s(format!("Bearer {reference}")))])
}

/// Builds Sluice's entry for `client` over `transport`, or `None` when the client cannot use
/// that transport or has no config file.
pub fn entry(client: Client, transport: Transport, e: &Endpoint<'_>) -> Option<Entry> {
    if !client.supports(transport) || client.format().is_none() {
        return None;
    }
    let http = transport == Transport::Http;
    let header = || ConfigValue::map([("Authorization", ConfigValue::s(e.bearer()))]);
    let mut input = None;
    let mut storage = if http { TokenStorage::PlainInFile } else { e.stdio_storage() };
    // A stdio entry: `command` + `args` (+ `env` unless the keychain holds the token).
    let stdio = |kind: Option<&str>, cmd_key: &str, env_key: &str| {
        let mut pairs: Vec<(String, ConfigValue)> = Vec::new();
        if let Some(kind) = kind {
            pairs.push(("type".into(), ConfigValue::s(kind)));
        }
        pairs.push((cmd_key.into(), ConfigValue::s(e.command())));
        pairs.push(("args".into(), e.stdio_args()));
        if let Some(env) = e.stdio_env() {
            pairs.push((env_key.into(), env));
        }
        ConfigValue::Map(pairs)
    };
    let value = match (client, http) {
        (Client::ClaudeDesktop, _) => stdio(None, "command", "env"),
        (Client::ClaudeCode, true) => ConfigValue::map([
            ("type", ConfigValue::s("http")),
            ("url", ConfigValue::s(e.url())),
            ("headers", header()),
        ]),
        (Client::ClaudeCode | Client::Cursor, false) => stdio(Some("stdio"), "command", "env"),
        (Client::Cursor | Client::Zed, true) => {
            ConfigValue::map([("url", ConfigValue::s(e.url())), ("headers", header())])
        }
        (Client::VsCode, true) => {
            input = Some(vscode_input());
            storage = TokenStorage::ClientPrompt;
            ConfigValue::map([
                ("type", ConfigValue::s("http")),
                ("url", ConfigValue::s(e.url())),
                (
                    "headers",
                    ConfigValue::map([(
                        "Authorization",
                        ConfigValue::s(format!("Bearer ${{input:{VSCODE_INPUT_ID}}}")),
                    )]),
                ),
            ])
        }
        (Client::VsCode, false) => {
            let mut pairs = vec![
                ("type", ConfigValue::s("stdio")),
                ("command", ConfigValue::s(e.command())),
                ("args", e.stdio_args()),
            ];
            if e.connection.is_none() {
                input = Some(vscode_input());
                storage = TokenStorage::ClientPrompt;
                let prompt = ConfigValue::s(format!("${{input:{VSCODE_INPUT_ID}}}"));
                pairs.push(("env", ConfigValue::map([(TOKEN_ENV, prompt)])));
            }
            ConfigValue::map(pairs)
        }
        (Client::Codex, true) => {
            // Codex rejects an inline bearer_token; it names the variable holding it.
            storage = TokenStorage::Environment;
            ConfigValue::map([
                ("url", ConfigValue::s(e.url())),
                ("bearer_token_env_var", ConfigValue::s(TOKEN_ENV)),
            ])
        }
        (
            Client::Codex
            | Client::Windsurf
            | Client::Zed
            | Client::GeminiCli
            | Client::QwenCode
            | Client::RooCode
            | Client::Kiro
            | Client::LmStudio
            | Client::Junie,
            false,
        ) => stdio(None, "command", "env"),
        // Gemini CLI and Qwen Code: `httpUrl` is Streamable HTTP (`url` would mean SSE), and
        // they expand `${VAR}` in every string themselves.
        (Client::GeminiCli | Client::QwenCode, true) => {
            storage = TokenStorage::Environment;
            ConfigValue::map([
                ("httpUrl", ConfigValue::s(e.url())),
                ("headers", env_header("${SLUICE_TOKEN}")),
            ])
        }
        // opencode and Kilo Code (built on it): the command line is one list, the environment
        // is `environment`, and `{env:VAR}` is resolved when the config loads.
        (Client::OpenCode | Client::KiloCode, false) => {
            let mut pairs = vec![("type", ConfigValue::s("local")), ("command", e.command_line())];
            if let Some(env) = e.stdio_env() {
                pairs.push(("environment", env));
            }
            pairs.push(("enabled", ConfigValue::Bool(true)));
            ConfigValue::map(pairs)
        }
        (Client::OpenCode | Client::KiloCode, true) => {
            storage = TokenStorage::Environment;
            ConfigValue::map([
                ("type", ConfigValue::s("remote")),
                ("url", ConfigValue::s(e.url())),
                ("headers", env_header("{env:SLUICE_TOKEN}")),
                ("enabled", ConfigValue::Bool(true)),
            ])
        }
        // Copilot CLI needs `tools` (`*`: every tool), as `copilot mcp add` writes it.
        (Client::CopilotCli, false) => {
            let mut pairs = vec![
                ("type", ConfigValue::s("local")),
                ("command", ConfigValue::s(e.command())),
                ("args", e.stdio_args()),
            ];
            if let Some(env) = e.stdio_env() {
                pairs.push(("env", env));
            }
            pairs.push(("tools", ConfigValue::strs(&["*"])));
            ConfigValue::map(pairs)
        }
        (Client::CopilotCli, true) => ConfigValue::map([
            ("type", ConfigValue::s("http")),
            ("url", ConfigValue::s(e.url())),
            ("headers", header()),
            ("tools", ConfigValue::strs(&["*"])),
        ]),
        // Cline: without `type`, an entry with a `url` is taken for SSE.
        (Client::Cline, false) => stdio(Some("stdio"), "command", "env"),
        (Client::Cline, true) => ConfigValue::map([
            ("type", ConfigValue::s("streamableHttp")),
            ("url", ConfigValue::s(e.url())),
            ("headers", header()),
        ]),
        (Client::RooCode, true) => ConfigValue::map([
            ("type", ConfigValue::s("streamable-http")),
            ("url", ConfigValue::s(e.url())),
            ("headers", header()),
        ]),
        // Crush requires `type`, and expands `$VAR` in header values.
        (Client::Crush, false) => stdio(Some("stdio"), "command", "env"),
        (Client::Crush, true) => {
            storage = TokenStorage::Environment;
            ConfigValue::map([
                ("type", ConfigValue::s("http")),
                ("url", ConfigValue::s(e.url())),
                ("headers", env_header("$SLUICE_TOKEN")),
            ])
        }
        (Client::Kiro, true) => {
            storage = TokenStorage::Environment;
            ConfigValue::map([
                ("url", ConfigValue::s(e.url())),
                ("headers", env_header("${SLUICE_TOKEN}")),
            ])
        }
        (Client::LmStudio, true) => {
            ConfigValue::map([("url", ConfigValue::s(e.url())), ("headers", header())])
        }
        (Client::Augment, false) => stdio(Some("stdio"), "command", "env"),
        (Client::Augment, true) => ConfigValue::map([
            ("type", ConfigValue::s("http")),
            ("url", ConfigValue::s(e.url())),
            ("headers", header()),
        ]),
        (Client::Junie, true) => return None,
        (Client::VsCodeInsiders, _) => {
            let mut en = entry(Client::VsCode, transport, e)?;
            en.client = Client::VsCodeInsiders;
            return Some(en);
        }
        (Client::Windsurf, true) => {
            // The docs accept `serverUrl` or `url`; vendors report `serverUrl` as the one
            // that works.
            ConfigValue::map([("serverUrl", ConfigValue::s(e.url())), ("headers", header())])
        }
        // Goose requires `description` on remote extensions (its serde has no default there).
        (Client::Goose, true) => ConfigValue::map([
            ("enabled", ConfigValue::Bool(true)),
            ("name", ConfigValue::s(SERVER_NAME)),
            ("description", ConfigValue::s(GOOSE_DESCRIPTION)),
            ("type", ConfigValue::s("streamable_http")),
            ("uri", ConfigValue::s(e.url())),
            ("headers", header()),
            ("timeout", ConfigValue::Int(300)),
        ]),
        (Client::Goose, false) => {
            let mut pairs = vec![
                ("enabled", ConfigValue::Bool(true)),
                ("name", ConfigValue::s(SERVER_NAME)),
                ("description", ConfigValue::s(GOOSE_DESCRIPTION)),
                ("type", ConfigValue::s("stdio")),
                ("cmd", ConfigValue::s(e.command())),
                ("args", e.stdio_args()),
            ];
            pairs.push(("envs", e.stdio_env().unwrap_or_else(|| ConfigValue::map::<&str>([]))));
            pairs.push(("timeout", ConfigValue::Int(300)));
            ConfigValue::map(pairs)
        }
        (Client::GenericHttp | Client::GenericStdio, _) => return None,
    };
    Some(Entry { client, transport, value, input, storage })
}

/// The whole file a client would need if it had no config yet (the snippet to paste).
pub fn document(entry: &Entry) -> String {
    let servers = ConfigValue::map([(SERVER_NAME, entry.value.clone())]);
    match entry.client.format() {
        Some(Format::Toml) => edit::render_toml_new(&entry.value),
        Some(Format::Yaml) => edit::render_yaml_new(entry.client.servers_key(), &entry.value),
        _ => {
            let mut pairs = Vec::new();
            if let Some(input) = &entry.input {
                pairs.push(("inputs".to_owned(), ConfigValue::List(vec![input.clone()])));
            }
            pairs.push((entry.client.servers_key().to_owned(), servers));
            let mut text = ConfigValue::Map(pairs).to_json_pretty();
            text.push('\n');
            text
        }
    }
}
