//! Client configuration, in one place: for every supported MCP client, the exact entry its
//! current documentation expects (see `shared/CLIENTS.md`), ready-made snippets and install
//! links, where its config file lives on each OS ([`paths`]), and a writer that merges Sluice's
//! entry into that file without touching anything else ([`write`]).
//!
//! HTTP clients reach `http://127.0.0.1:PORT/mcp` with a bearer header; stdio clients run
//! `sluice stdio`. Wherever the client allows it the token stays out of its file: a stdio entry
//! carries `--connection NAME` so `sluice stdio` reads the token from the OS keychain (the
//! default for every client added since, and for Codex), VS Code prompts for it (`inputs`), and
//! the HTTP forms of Codex, Gemini CLI, Qwen Code, opencode, Kilo Code, Crush and Kiro name an
//! environment variable the client resolves itself.

pub mod edit;
pub mod health;
pub mod paths;
mod value;
pub mod write;

use std::path::Path;

use base64::Engine as _;

pub use paths::{Dirs, Os};
pub use value::ConfigValue;
pub use write::{Applied, Change, ConnectError, apply, plan_connect, plan_disconnect};

/// The server's key in every client's config.
pub const SERVER_NAME: &str = "sluice";
/// The id of VS Code's password prompt for the token.
pub const VSCODE_INPUT_ID: &str = "sluice-token";
/// Goose's description of the extension.
const GOOSE_DESCRIPTION: &str = "Your authorized projects, through Sluice";
/// The environment variable `sluice stdio` (and Codex's `bearer_token_env_var`) reads.
pub const TOKEN_ENV: &str = "SLUICE_TOKEN";

/// Every client Sluice knows how to configure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
    Codex,
    Windsurf,
    Zed,
    Goose,
    GeminiCli,
    QwenCode,
    OpenCode,
    CopilotCli,
    Cline,
    RooCode,
    KiloCode,
    Crush,
    /// Kiro's IDE and CLI (the CLI was Amazon Q Developer CLI).
    Kiro,
    LmStudio,
    Junie,
    /// Augment's `auggie` CLI (its VS Code extension imports the same servers).
    Augment,
    VsCodeInsiders,
    /// Any Streamable HTTP client: URL and header, no file.
    GenericHttp,
    /// Any stdio client: command, args and environment, no file.
    GenericStdio,
}

/// How a config file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Strict JSON (a comment makes the client reject the file).
    Json,
    /// JSON with comments and trailing commas (VS Code, Zed); comments are kept.
    Jsonc,
    Toml,
    Yaml,
}

/// How the client reaches Sluice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP to the engine, with a bearer header.
    Http,
    /// `sluice stdio`, which forwards to the engine.
    Stdio,
}

/// Where the token ends up once a client is configured this way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenStorage {
    /// Written in plain text into the client's config file.
    PlainInFile,
    /// Not in the file: the client prompts once and keeps it in its own secret storage.
    ClientPrompt,
    /// Not in the file: the client reads the `SLUICE_TOKEN` environment variable, which the
    /// user must set in the environment the client starts from.
    Environment,
    /// Not in the file: `sluice stdio --connection NAME` reads it from Sluice's keychain entry.
    SluiceKeychain,
    /// Shown for the user to paste into the client's settings (no file is written).
    Pasted,
}

impl TokenStorage {
    /// Whether the token lies in plain text in a file the client owns.
    pub fn plain_text(self) -> bool {
        matches!(self, TokenStorage::PlainInFile)
    }

    pub fn describe(self) -> &'static str {
        match self {
            TokenStorage::PlainInFile => "the token is stored in plain text in the client's file",
            TokenStorage::ClientPrompt => {
                "the client asks for the token once and keeps it in its secret storage"
            }
            TokenStorage::Environment => {
                "the client reads the token from the SLUICE_TOKEN environment variable"
            }
            TokenStorage::SluiceKeychain => {
                "no token in the client's file: `sluice stdio` reads it from Sluice's keychain entry"
            }
            TokenStorage::Pasted => "the token is pasted into the client's own settings",
        }
    }
}

impl Client {
    /// Every client, in the order they are shown.
    pub const ALL: [Client; 23] = [
        Client::ClaudeCode,
        Client::ClaudeDesktop,
        Client::Cursor,
        Client::VsCode,
        Client::Codex,
        Client::Windsurf,
        Client::Zed,
        Client::Goose,
        Client::GeminiCli,
        Client::QwenCode,
        Client::OpenCode,
        Client::CopilotCli,
        Client::Cline,
        Client::RooCode,
        Client::KiloCode,
        Client::Crush,
        Client::Kiro,
        Client::LmStudio,
        Client::Junie,
        Client::Augment,
        Client::VsCodeInsiders,
        Client::GenericHttp,
        Client::GenericStdio,
    ];

    /// Stable id, used on the command line and by the window.
    pub fn id(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::VsCode => "vscode",
            Client::Codex => "codex",
            Client::Windsurf => "windsurf",
            Client::Zed => "zed",
            Client::Goose => "goose",
            Client::GeminiCli => "gemini",
            Client::QwenCode => "qwen",
            Client::OpenCode => "opencode",
            Client::CopilotCli => "copilot",
            Client::Cline => "cline",
            Client::RooCode => "roo-code",
            Client::KiloCode => "kilo-code",
            Client::Crush => "crush",
            Client::Kiro => "kiro",
            Client::LmStudio => "lm-studio",
            Client::Junie => "junie",
            Client::Augment => "augment",
            Client::VsCodeInsiders => "vscode-insiders",
            Client::GenericHttp => "http",
            Client::GenericStdio => "stdio",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::VsCode => "VS Code",
            Client::Codex => "Codex",
            Client::Windsurf => "Windsurf",
            Client::Zed => "Zed",
            Client::Goose => "Goose",
            Client::GeminiCli => "Gemini CLI",
            Client::QwenCode => "Qwen Code",
            Client::OpenCode => "opencode",
            Client::CopilotCli => "GitHub Copilot CLI",
            Client::Cline => "Cline",
            Client::RooCode => "Roo Code",
            Client::KiloCode => "Kilo Code",
            Client::Crush => "Crush",
            Client::Kiro => "Kiro (Amazon Q Developer CLI)",
            Client::LmStudio => "LM Studio",
            Client::Junie => "JetBrains Junie",
            Client::Augment => "Augment (auggie)",
            Client::VsCodeInsiders => "VS Code Insiders",
            Client::GenericHttp => "Any Streamable HTTP client",
            Client::GenericStdio => "Any stdio client",
        }
    }

    /// Parses an id (`claude-desktop`) or a few obvious spellings (`vs-code`, `code`).
    pub fn parse(s: &str) -> Option<Client> {
        let s = s.trim().to_ascii_lowercase();
        let found = Client::ALL.into_iter().find(|c| c.id() == s);
        found.or(match s.as_str() {
            "claudedesktop" => Some(Client::ClaudeDesktop),
            "claudecode" => Some(Client::ClaudeCode),
            "vs-code" | "code" | "vs" => Some(Client::VsCode),
            "openai-codex" => Some(Client::Codex),
            "gemini-cli" => Some(Client::GeminiCli),
            "qwen-code" => Some(Client::QwenCode),
            "open-code" => Some(Client::OpenCode),
            "copilot-cli" | "github-copilot" | "github-copilot-cli" => Some(Client::CopilotCli),
            "roo" | "roocode" => Some(Client::RooCode),
            "kilo" | "kilocode" => Some(Client::KiloCode),
            "amazon-q" | "amazonq" | "q" | "kiro-cli" => Some(Client::Kiro),
            "lmstudio" => Some(Client::LmStudio),
            "auggie" => Some(Client::Augment),
            "code-insiders" | "vs-code-insiders" => Some(Client::VsCodeInsiders),
            "generic-http" | "streamable-http" => Some(Client::GenericHttp),
            "generic-stdio" => Some(Client::GenericStdio),
            _ => None,
        })
    }

    /// The format of the client's config file; `None` for the generic entries (no file).
    pub fn format(self) -> Option<Format> {
        match self {
            Client::ClaudeDesktop
            | Client::ClaudeCode
            | Client::Cursor
            | Client::Windsurf
            | Client::CopilotCli
            | Client::Cline
            | Client::RooCode
            | Client::Crush
            | Client::Kiro
            | Client::LmStudio
            | Client::Junie
            | Client::Augment => Some(Format::Json),
            // Gemini CLI and Qwen Code strip comments before parsing; opencode and Kilo Code
            // read JSONC.
            Client::VsCode
            | Client::VsCodeInsiders
            | Client::Zed
            | Client::GeminiCli
            | Client::QwenCode
            | Client::OpenCode
            | Client::KiloCode => Some(Format::Jsonc),
            Client::Codex => Some(Format::Toml),
            Client::Goose => Some(Format::Yaml),
            Client::GenericHttp | Client::GenericStdio => None,
        }
    }

    /// The key path of the servers map inside the config file.
    pub fn servers_key(self) -> &'static str {
        match self {
            Client::VsCode | Client::VsCodeInsiders => "servers",
            Client::Zed => "context_servers",
            Client::OpenCode | Client::KiloCode | Client::Crush => "mcp",
            Client::Codex => "mcp_servers",
            Client::Goose => "extensions",
            _ => "mcpServers",
        }
    }

    /// The transport used unless the caller asks otherwise: `sluice stdio` with the token in
    /// Sluice's keychain entry — nothing secret in the client's file or environment, and
    /// nothing for the user to do — for Claude Desktop (whose file accepts stdio only), Codex
    /// (whose HTTP form needs `SLUICE_TOKEN` exported) and every client added since. The
    /// older HTTP defaults stay HTTP.
    pub fn default_transport(self) -> Transport {
        match self {
            Client::ClaudeCode
            | Client::Cursor
            | Client::VsCode
            | Client::Windsurf
            | Client::Zed
            | Client::Goose
            | Client::VsCodeInsiders
            | Client::GenericHttp => Transport::Http,
            _ => Transport::Stdio,
        }
    }

    /// Whether the client can use `transport`. Junie's documentation knows stdio servers only.
    pub fn supports(self, transport: Transport) -> bool {
        match self {
            Client::ClaudeDesktop | Client::Junie | Client::GenericStdio => {
                transport == Transport::Stdio
            }
            Client::GenericHttp => transport == Transport::Http,
            _ => true,
        }
    }

    /// What to do after the file changed, in words.
    pub fn reload_hint(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => {
                "Quit Claude Desktop completely (tray/menu bar) and start it again."
            }
            Client::ClaudeCode => {
                "Start a new Claude Code session; check with `claude mcp get sluice`."
            }
            Client::Cursor | Client::Windsurf => {
                "Refresh the MCP list in the client's settings, or restart it."
            }
            Client::VsCode => {
                "Start the server from mcp.json (VS Code asks for the token the first time)."
            }
            Client::Codex => "Restart Codex (`codex mcp list` shows the entry).",
            Client::Zed => "Zed reloads its settings on save.",
            Client::Goose => "Restart Goose.",
            Client::GeminiCli => "Start a new Gemini CLI session; check with `gemini mcp list`.",
            Client::QwenCode => "Start a new Qwen Code session; check with `qwen mcp list`.",
            Client::OpenCode => "Start opencode again; check with `opencode mcp list`.",
            Client::CopilotCli => {
                "Start a new Copilot CLI session (`copilot mcp get sluice` shows the entry)."
            }
            Client::Cline | Client::RooCode | Client::KiloCode => {
                "The extension reloads its MCP settings on save; check its MCP Servers view."
            }
            Client::Crush => "Start Crush again.",
            Client::Kiro => "Kiro reconnects on save; in the CLI, `/mcp` shows the server.",
            Client::LmStudio => "Restart LM Studio, or reload its MCP servers (Program tab).",
            Client::Junie => "Restart the IDE, or reload Junie's MCP settings.",
            Client::Augment => "Start auggie again (`auggie mcp list` shows the entry).",
            Client::VsCodeInsiders => {
                "Start the server from mcp.json (VS Code Insiders asks for the token the first time)."
            }
            Client::GenericHttp | Client::GenericStdio => "Reload your client's MCP settings.",
        }
    }
}

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

    fn command(&self) -> String {
        self.binary.to_string_lossy().into_owned()
    }

    fn stdio_args(&self) -> ConfigValue {
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

    fn stdio_storage(&self) -> TokenStorage {
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
fn vscode_input() -> ConfigValue {
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

/// One client's snippet: where it goes and what to paste (or run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSnippet {
    /// Stable id, e.g. `claude-code`.
    pub client: &'static str,
    /// Display name, e.g. "Claude Code".
    pub title: &'static str,
    /// Where the text goes, in words ("run in a terminal", "~/.cursor/mcp.json").
    pub target: &'static str,
    /// The exact text.
    pub text: String,
    /// Whether the text contains the token in plain text.
    pub holds_token: bool,
    /// Where the token ends up when the text is used as told.
    pub storage: TokenStorage,
    /// A one-click install link, where the client has one (never with a literal token).
    pub link: Option<InstallLink>,
    /// Something the user must do besides pasting (set a variable, answer a prompt).
    pub note: Option<&'static str>,
}

fn target(client: Client) -> &'static str {
    match client {
        Client::ClaudeDesktop => "claude_desktop_config.json (Settings → Developer → Edit Config)",
        Client::ClaudeCode => "run in a terminal",
        Client::Cursor => "~/.cursor/mcp.json",
        Client::VsCode => {
            "mcp.json in your VS Code user folder (MCP: Open User Configuration); paste the token when VS Code asks"
        }
        Client::Codex => "~/.codex/config.toml, with SLUICE_TOKEN set in Codex's environment",
        Client::Windsurf => "~/.codeium/windsurf/mcp_config.json",
        Client::Zed => "Zed's settings.json (~/.config/zed/settings.json)",
        Client::Goose => "~/.config/goose/config.yaml",
        Client::GeminiCli => "~/.gemini/settings.json, with SLUICE_TOKEN set in its environment",
        Client::QwenCode => "~/.qwen/settings.json, with SLUICE_TOKEN set in its environment",
        Client::OpenCode => {
            "~/.config/opencode/opencode.json, with SLUICE_TOKEN set in its environment"
        }
        Client::CopilotCli => "~/.copilot/mcp-config.json",
        Client::Cline => "~/.cline/data/settings/cline_mcp_settings.json",
        Client::RooCode => "Roo Code's mcp_settings.json (MCP Servers → Edit Global MCP)",
        Client::KiloCode => "~/.config/kilo/kilo.jsonc, with SLUICE_TOKEN set in its environment",
        Client::Crush => "~/.config/crush/crush.json, with SLUICE_TOKEN set in its environment",
        Client::Kiro => "~/.kiro/settings/mcp.json, with SLUICE_TOKEN set in its environment",
        Client::LmStudio => "~/.lmstudio/mcp.json",
        Client::Junie => "~/.junie/mcp/mcp.json",
        Client::Augment => "~/.augment/settings.json",
        Client::VsCodeInsiders => {
            "mcp.json in your VS Code Insiders user folder; paste the token when it asks"
        }
        Client::GenericHttp | Client::GenericStdio => "your client's MCP settings",
    }
}

/// Double-quotes `s` for a POSIX shell, so the snippet can be pasted as is.
fn sh_quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-:=".contains(&b)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `claude mcp add` for the user scope (all options before the name, as its docs require).
pub fn claude_code_command(e: &Endpoint<'_>) -> String {
    format!(
        "claude mcp add --transport http --scope user --header {} {SERVER_NAME} {}",
        sh_quote(&format!("Authorization: Bearer {}", e.token)),
        e.url()
    )
}

/// `encodeURIComponent`: everything but ASCII letters, digits and `-_.!~*'()`.
const URI_COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

fn uri_component(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, URI_COMPONENT).to_string()
}

/// A one-click install link, and exactly what it installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallLink {
    pub url: String,
    /// The server entry the link carries, as JSON: shown beside the link, so the user sees
    /// the whole command or address before the client installs it (the MCP spec asks one-click
    /// installs to show the full command).
    pub installs: String,
}

impl InstallLink {
    fn new(server: &ConfigValue, url: String) -> InstallLink {
        InstallLink { url, installs: server.to_json_compact() }
    }
}

/// Cursor's server object for a link. A link passes through the OS URL handler and browser
/// history, so it never carries the token: the stdio form with `--connection` when the
/// keychain holds it, else a header that reads `SLUICE_TOKEN`.
fn cursor_server(e: &Endpoint<'_>) -> ConfigValue {
    match e.connection {
        Some(_) => ConfigValue::map([
            ("type", ConfigValue::s("stdio")),
            ("command", ConfigValue::s(e.command())),
            ("args", e.stdio_args()),
        ]),
        None => ConfigValue::map([
            ("url", ConfigValue::s(e.url())),
            (
                "headers",
                ConfigValue::map([(
                    "Authorization",
                    ConfigValue::s(format!("Bearer ${{env:{TOKEN_ENV}}}")),
                )]),
            ),
        ]),
    }
}

/// Cursor's install link: the inner server object, base64, URL-encoded.
pub fn cursor_link(e: &Endpoint<'_>) -> String {
    cursor_install(e).url
}

fn cursor_install(e: &Endpoint<'_>) -> InstallLink {
    let server = cursor_server(e);
    let b64 = base64::engine::general_purpose::STANDARD.encode(server.to_json_compact());
    let url = format!(
        "cursor://anysphere.cursor-deeplink/mcp/install?name={SERVER_NAME}&config={}",
        uri_component(&b64)
    );
    InstallLink::new(&server, url)
}

/// VS Code's server object for a link: with its `name` and the password `inputs`, so VS Code
/// prompts for the token instead of the link carrying it.
fn vscode_server(e: &Endpoint<'_>) -> ConfigValue {
    ConfigValue::map([
        ("name", ConfigValue::s(SERVER_NAME)),
        ("type", ConfigValue::s("http")),
        ("url", ConfigValue::s(e.url())),
        (
            "headers",
            ConfigValue::map([(
                "Authorization",
                ConfigValue::s(format!("Bearer ${{input:{VSCODE_INPUT_ID}}}")),
            )]),
        ),
        ("inputs", ConfigValue::List(vec![vscode_input()])),
    ])
}

/// VS Code's install link (`scheme` `vscode` or `vscode-insiders`).
fn vscode_install(e: &Endpoint<'_>, scheme: &str) -> InstallLink {
    let server = vscode_server(e);
    let url = format!("{scheme}:mcp/install?{}", uri_component(&server.to_json_compact()));
    InstallLink::new(&server, url)
}

/// VS Code's install link.
pub fn vscode_link(e: &Endpoint<'_>) -> String {
    vscode_install(e, "vscode").url
}

/// The one-click install link of `client`, where it has one that can leave the token out:
/// Cursor, VS Code and VS Code Insiders. (LM Studio's and Goose's links would have to carry
/// the token itself unless a keychain connection exists, which a link cannot create.)
pub fn install_link(client: Client, e: &Endpoint<'_>) -> Option<InstallLink> {
    match client {
        Client::Cursor => Some(cursor_install(e)),
        Client::VsCode => Some(vscode_install(e, "vscode")),
        Client::VsCodeInsiders => Some(vscode_install(e, "vscode-insiders")),
        _ => None,
    }
}

/// The form a snippet shows: the client's default, except that a snippet made without a
/// keychain entry (`token create --client`) prefers an HTTP form that keeps the token out of
/// the file (an environment reference or a prompt) over a stdio form that would write it.
fn snippet_transport(client: Client, e: &Endpoint<'_>) -> Transport {
    let default = client.default_transport();
    if default == Transport::Stdio
        && e.connection.is_none()
        && entry(client, Transport::Http, e).is_some_and(|en| !en.storage.plain_text())
    {
        Transport::Http
    } else {
        default
    }
}

/// The snippet of one client in its default form.
pub fn snippet(client: Client, e: &Endpoint<'_>) -> ClientSnippet {
    let (text, storage, link, note) = match client {
        Client::ClaudeCode => (claude_code_command(e), TokenStorage::PlainInFile, None, None),
        Client::GenericHttp => (
            format!("URL: {}\nHeader: Authorization: Bearer {}\n", e.url(), e.token),
            TokenStorage::Pasted,
            None,
            None,
        ),
        Client::GenericStdio => {
            let args = e.stdio_args().to_json_compact();
            let env = match e.connection {
                Some(_) => String::new(),
                None => format!("env: {TOKEN_ENV}={}\n", e.token),
            };
            (
                format!("command: {}\nargs: {args}\n{env}", e.binary.display()),
                e.stdio_storage(),
                None,
                None,
            )
        }
        _ => {
            let Some(entry) = entry(client, snippet_transport(client, e), e) else {
                // Every client with a file has a default form (tested); never panic here.
                return snippet(Client::GenericHttp, e);
            };
            let link = install_link(client, e);
            let note = match (client, entry.storage) {
                (_, TokenStorage::Environment) => {
                    Some("Set SLUICE_TOKEN to the token in the environment the client starts from.")
                }
                (Client::VsCode | Client::VsCodeInsiders, _) => {
                    Some("VS Code asks for the token the first time the server starts.")
                }
                (Client::Zed, _) => {
                    Some("Zed's settings file is often synced or shared: the token is in it.")
                }
                _ => None,
            };
            (document(&entry), entry.storage, link, note)
        }
    };
    ClientSnippet {
        client: client.id(),
        title: client.title(),
        target: target(client),
        holds_token: !e.token.is_empty() && text.contains(e.token),
        text,
        storage,
        link,
        note,
    }
}

/// All snippets, in the order they are shown.
pub fn snippets(e: &Endpoint<'_>) -> Vec<ClientSnippet> {
    Client::ALL.into_iter().map(|c| snippet(c, e)).collect()
}
