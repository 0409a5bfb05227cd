//! Reach from the web (hosted assistants through a tunnel, the user's own or one Sluice runs):
//! the setting as the Settings view shows it, the connection requests waiting for the user, and
//! what turning it on (or changing it) takes.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::ScopeEntry;

/// Whether reach is on, with what it exposes, and who asks to connect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReachStateDto {
    /// `null` while reach is off (the default).
    pub setting: Option<ReachSettingDto>,
    /// Connection requests waiting for the user, oldest first; empty while reach is off.
    pub requests: Vec<ConnectionRequestDto>,
    /// Tokens issued to hosted assistants that are not revoked (turning reach off revokes
    /// them all).
    pub remote_tokens: u32,
}

/// The reach setting while it is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReachSettingDto {
    /// `https://host[:port]`: the tunnel's public address; `null` until the tunnel Sluice runs
    /// announced it.
    pub public_url: Option<String>,
    /// The address to give the hosted assistant: `<publicUrl>/mcp`; `null` with `publicUrl`.
    pub connector_url: Option<String>,
    /// The tunnel Sluice runs; `null` when the user runs their own.
    pub tunnel: Option<TunnelDto>,
    /// The public URL as the user gave it, to fill in a change; `null` when the tunnel
    /// announces its own.
    pub given_url: Option<String>,
    /// The port on 127.0.0.1 the tunnel forwards to.
    pub port: u16,
    /// The projects a remote token sees, by id and name (`null`: removed since).
    pub projects: Vec<ScopeEntry>,
    /// Remote tokens may change files (else they only read).
    pub write: bool,
    /// Redirect URIs allowed beside ChatGPT's and Claude's published callbacks.
    pub redirects: Vec<String>,
}

/// The tunnel Sluice runs, as its supervisor last recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TunnelDto {
    /// What it is, for a sentence: `a Cloudflare quick tunnel`, `Tailscale Funnel`…
    pub name: String,
    /// `starting`, `running`, `restarting` or `failed`; `null` until the tray or `sluice serve`
    /// starts it.
    pub state: Option<String>,
    pub restarts: u32,
    /// Its last line of output, or why it could not start (redacted, made visible).
    pub message: Option<String>,
    /// What the user picked, to fill in a change (`command` is `null` when it holds
    /// characters that would show as something else: the user types it again).
    pub choice: TunnelChoiceDto,
}

/// A tunnel for Sluice to run, as the user picks it (`sluice reach on --tunnel …`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TunnelChoiceDto {
    /// Checked by the engine, which names the kinds in its refusal of any other.
    #[ts(
        type = "\"cloudflared\" | \"cloudflared-named\" | \"tailscale\" | \"ngrok\" | \"command\" | \"openai\""
    )]
    pub kind: String,
    /// A named Cloudflare tunnel's name (`cloudflared tunnel run NAME`), or the ID of OpenAI's
    /// Secure MCP Tunnel (`tunnel_…`); only with those kinds.
    pub name: Option<String>,
    /// The program and its arguments, split like a shell would (no shell runs it); `{port}`
    /// stands for the tunnel port. Only with `command`.
    pub command: Option<String>,
}

/// A hosted assistant asking to connect. Its name comes from the network: shown as text, with
/// control and deceptive characters made visible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionRequestDto {
    pub id: String,
    /// The name the client's metadata document gives when `verified_host` is set; otherwise
    /// only what the client registered itself as, which nothing checked (show it as unverified).
    pub client_name: String,
    /// The host of the metadata document Sluice fetched for this client: the one thing about
    /// its identity that is verified. `None` for a client that registered itself.
    pub verified_host: Option<String>,
    /// Where the browser returns after the decision (`claude.ai`).
    pub redirect_host: String,
    /// The code the consent page shows (`ABCD-EFGH`): approve only the request whose code the
    /// user's own browser shows.
    pub code: String,
    #[ts(type = "number")]
    pub created_ms: i64,
    #[ts(type = "number")]
    pub expires_ms: i64,
    /// Changed in the database outside Sluice: it cannot be approved.
    pub tampered: bool,
}

/// What turning reach on (or changing it) takes. Its `Debug` never shows the API key.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReachOn {
    /// `https://host[:port]`, without a path, query or fragment. Required for a tunnel the user
    /// runs and a named Cloudflare tunnel; `null` when the tunnel announces its own (a quick
    /// tunnel, Tailscale, ngrok without a reserved domain, a command that prints it).
    pub url: Option<String>,
    /// A tunnel for Sluice to start, watch and stop with reach; `null`: the user runs their own.
    pub tunnel: Option<TunnelChoiceDto>,
    /// Project ids or names; at least one.
    pub projects: Vec<String>,
    /// Let remote tokens change files and run what each project allows (never `any` mode).
    pub write: bool,
    /// The loopback port the tunnel forwards to; `null`: 7879.
    pub port: Option<u16>,
    /// Extra redirect URIs to accept, exactly; `null`: none.
    pub redirects: Option<Vec<String>>,
    /// The API key of OpenAI's Secure MCP Tunnel; `null` keeps the one Sluice has for it.
    #[serde(default)]
    #[ts(optional)]
    pub api_key: Option<String>,
}

impl std::fmt::Debug for ReachOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReachOn")
            .field("url", &self.url)
            .field("tunnel", &self.tunnel)
            .field("projects", &self.projects)
            .field("write", &self.write)
            .field("port", &self.port)
            .field("redirects", &self.redirects)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}
