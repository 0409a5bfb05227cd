//! Ready-made client configuration for a new token: one function per client, all generated
//! here so the CLI and the window show the same text. Formats follow each client's current
//! documentation (see `shared/CLIENTS.md`); HTTP clients reach `http://127.0.0.1:PORT/mcp` with
//! a bearer header, stdio-only clients run `sluice stdio` with the token in `SLUICE_TOKEN`.

use std::path::Path;

use serde_json::json;

/// The server's key in every client's config.
pub const SERVER_NAME: &str = "sluice";

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
}

/// Everything a snippet needs.
pub struct Endpoint<'a> {
    pub port: u16,
    pub token: &'a str,
    /// Absolute path of the `sluice` binary (for stdio clients).
    pub binary: &'a Path,
}

impl Endpoint<'_> {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// Double-quotes `s` for a POSIX shell, so the snippet can be pasted as is.
fn sh_quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-:=".contains(&b)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// TOML basic string (escapes quotes, backslashes and control characters).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

pub fn claude_code(e: &Endpoint<'_>) -> ClientSnippet {
    ClientSnippet {
        client: "claude-code",
        title: "Claude Code",
        target: "run in a terminal",
        text: format!(
            "claude mcp add --transport http --scope user --header {} {SERVER_NAME} {}",
            sh_quote(&format!("Authorization: Bearer {}", e.token)),
            e.url()
        ),
        holds_token: true,
    }
}

pub fn claude_desktop(e: &Endpoint<'_>) -> ClientSnippet {
    let v = json!({ "mcpServers": { SERVER_NAME: {
        "command": e.binary.to_string_lossy(),
        "args": ["stdio"],
        "env": { "SLUICE_TOKEN": e.token },
    }}});
    ClientSnippet {
        client: "claude-desktop",
        title: "Claude Desktop",
        target: "claude_desktop_config.json (Settings → Developer → Edit Config)",
        text: pretty(&v),
        holds_token: true,
    }
}

pub fn cursor(e: &Endpoint<'_>) -> ClientSnippet {
    let v = json!({ "mcpServers": { SERVER_NAME: {
        "url": e.url(),
        "headers": { "Authorization": format!("Bearer {}", e.token) },
    }}});
    ClientSnippet {
        client: "cursor",
        title: "Cursor",
        target: "~/.cursor/mcp.json",
        text: pretty(&v),
        holds_token: true,
    }
}

pub fn vscode(e: &Endpoint<'_>) -> ClientSnippet {
    // The token is not in the file: VS Code prompts for it once and keeps it in its secret store.
    let v = json!({
        "inputs": [{
            "type": "promptString",
            "id": "sluice-token",
            "description": "Sluice access token",
            "password": true,
        }],
        "servers": { SERVER_NAME: {
            "type": "http",
            "url": e.url(),
            "headers": { "Authorization": "Bearer ${input:sluice-token}" },
        }},
    });
    ClientSnippet {
        client: "vscode",
        title: "VS Code",
        target: "mcp.json in your VS Code user folder (MCP: Open User Configuration); paste the token when VS Code asks",
        text: pretty(&v),
        holds_token: false,
    }
}

pub fn codex(e: &Endpoint<'_>) -> ClientSnippet {
    // Codex reads the bearer token from an environment variable it names; the file holds no secret.
    ClientSnippet {
        client: "codex",
        title: "Codex",
        target: "~/.codex/config.toml, with SLUICE_TOKEN set in Codex's environment",
        text: format!(
            "[mcp_servers.{SERVER_NAME}]\nurl = {}\nbearer_token_env_var = \"SLUICE_TOKEN\"\n\n# export SLUICE_TOKEN={}\n",
            toml_str(&e.url()),
            e.token
        ),
        holds_token: true,
    }
}

pub fn generic_http(e: &Endpoint<'_>) -> ClientSnippet {
    ClientSnippet {
        client: "http",
        title: "Any Streamable HTTP client",
        target: "your client's MCP settings",
        text: format!("URL: {}\nHeader: Authorization: Bearer {}\n", e.url(), e.token),
        holds_token: true,
    }
}

pub fn generic_stdio(e: &Endpoint<'_>) -> ClientSnippet {
    ClientSnippet {
        client: "stdio",
        title: "Any stdio client",
        target: "your client's MCP settings",
        text: format!(
            "command: {}\nargs: [\"stdio\"]\nenv: SLUICE_TOKEN={}\n",
            e.binary.display(),
            e.token
        ),
        holds_token: true,
    }
}

/// All snippets, in the order the CLI prints them.
pub fn all(e: &Endpoint<'_>) -> Vec<ClientSnippet> {
    vec![
        claude_code(e),
        claude_desktop(e),
        cursor(e),
        vscode(e),
        codex(e),
        generic_http(e),
        generic_stdio(e),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_valid_in_their_formats() {
        let e = Endpoint { port: 4321, token: "slc_abc", binary: Path::new("/opt/Sluice/sluice") };
        let cursor: serde_json::Value = serde_json::from_str(&cursor(&e).text).unwrap();
        assert_eq!(cursor["mcpServers"]["sluice"]["url"], "http://127.0.0.1:4321/mcp");
        assert_eq!(cursor["mcpServers"]["sluice"]["headers"]["Authorization"], "Bearer slc_abc");
        let vs = vscode(&e);
        assert!(!vs.text.contains("slc_abc"));
        let vs: serde_json::Value = serde_json::from_str(&vs.text).unwrap();
        assert_eq!(vs["servers"]["sluice"]["type"], "http");
        let cd: serde_json::Value = serde_json::from_str(&claude_desktop(&e).text).unwrap();
        assert_eq!(cd["mcpServers"]["sluice"]["command"], "/opt/Sluice/sluice");
        assert_eq!(cd["mcpServers"]["sluice"]["env"]["SLUICE_TOKEN"], "slc_abc");
        assert_eq!(
            claude_code(&e).text,
            "claude mcp add --transport http --scope user --header 'Authorization: Bearer slc_abc' sluice http://127.0.0.1:4321/mcp"
        );
        assert!(codex(&e).text.starts_with(
            "[mcp_servers.sluice]\nurl = \"http://127.0.0.1:4321/mcp\"\nbearer_token_env_var = \"SLUICE_TOKEN\"\n"
        ));
    }
}
