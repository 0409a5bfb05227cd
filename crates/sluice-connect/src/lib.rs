//! Client configuration, in one place: for every supported MCP client, the exact entry its
//! current documentation expects (see `docs/CLIENTS.md`), ready-made snippets and install
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
mod entry;
pub mod health;
pub mod paths;
mod project;
mod snippet;
mod value;
pub mod write;

use sluice_core::Profile;

pub use entry::{Endpoint, Entry, document, entry};
pub use paths::{Dirs, Os};
pub use snippet::{
    ClientSnippet, InstallLink, claude_code_command, cursor_link, install_link, snippet, snippets,
    vscode_link,
};
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

    /// The profile `sluice connect` gives a new token for this client, and why (the user can
    /// pick another with `--profile`, or change it later). Coding agents work in a loop of
    /// edits and commands, so `agent`; a chat app changes files at the user's request but has
    /// no terminal of its own, so `edit`; a local-model chat app or an unknown client gets
    /// `review`, the safe start. `full` is never a default.
    pub fn default_profile(self) -> (Profile, &'static str) {
        match self {
            Client::ClaudeCode
            | Client::Cursor
            | Client::VsCode
            | Client::VsCodeInsiders
            | Client::Codex
            | Client::Windsurf
            | Client::Zed
            | Client::Goose
            | Client::GeminiCli
            | Client::QwenCode
            | Client::OpenCode
            | Client::CopilotCli
            | Client::Cline
            | Client::RooCode
            | Client::KiloCode
            | Client::Crush
            | Client::Kiro
            | Client::Junie
            | Client::Augment => {
                (Profile::Agent, "a coding agent: it edits files and runs tests and builds")
            }
            Client::ClaudeDesktop => {
                (Profile::Edit, "a chat app: it changes files when asked and runs no commands")
            }
            Client::LmStudio => {
                (Profile::Review, "a chat app for local models: it reads and searches to start")
            }
            Client::GenericHttp | Client::GenericStdio => {
                (Profile::Review, "an unknown client: it reads and searches to start")
            }
        }
    }

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
