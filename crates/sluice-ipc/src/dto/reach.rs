//! Reach from the web (hosted assistants through the user's tunnel): the setting as the
//! Settings view shows it, the connection requests waiting for the user, and what turning it on
//! takes.

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
}

/// A hosted assistant asking to connect. Its name comes from the network: shown as text, with
/// control and deceptive characters made visible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionRequestDto {
    pub id: String,
    pub client_name: String,
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

/// What turning reach on (or changing it) takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReachOn {
    /// `https://host[:port]`, without a path, query or fragment.
    pub url: String,
    /// Project ids or names; at least one.
    pub projects: Vec<String>,
    /// Let remote tokens change files and run what each project allows (never `any` mode).
    pub write: bool,
    /// The loopback port the tunnel forwards to; `null`: 7879.
    pub port: Option<u16>,
    /// Extra redirect URIs to accept, exactly; `null`: none.
    pub redirects: Option<Vec<String>>,
}
