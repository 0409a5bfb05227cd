//! What the user pastes or clicks: [`snippet`] and [`snippets`] (one client's text in its
//! default form, with where it goes), `claude mcp add`'s command line, and the one-click install
//! links of Cursor and VS Code, which never carry the token.

use base64::Engine as _;

use crate::entry::vscode_input;
use crate::value::ConfigValue;
use crate::{
    Client, Endpoint, SERVER_NAME, TOKEN_ENV, TokenStorage, Transport, VSCODE_INPUT_ID, document,
    entry,
};

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
