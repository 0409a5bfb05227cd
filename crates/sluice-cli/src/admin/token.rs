//! `sluice token`: creating (with ready-made client configuration), listing, revoking and
//! restoring the tokens assistants connect with.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Subcommand;
use serde::Serialize;
use sluice_core::{Profile, TokenId};
use sluice_engine::{Engine, clients};

use super::{fail, print_json, shown, time};

#[derive(Subcommand)]
pub enum TokenCmd {
    /// Create a token; it is printed once, with ready-made client configuration.
    Create {
        #[arg(long)]
        label: String,
        /// Limit the token to these projects (ids or names, comma-separated).
        #[arg(long, value_delimiter = ',')]
        projects: Option<Vec<String>>,
        /// Expire after this long, e.g. 30d, 12h.
        #[arg(long, value_parser = humantime::parse_duration)]
        expires: Option<Duration>,
        /// The tools it offers: review (list, read, search, git), edit (and change files),
        /// agent (and run commands and jobs) or full (everything the projects' modes allow).
        /// Default: review, the safe start — a token does no more than read until you choose
        /// more (`sluice connect` picks per client). Only ever narrows the projects' modes.
        #[arg(long, default_value = "review", value_parser = parse_profile)]
        profile: Profile,
        /// Port to put in the client configuration.
        #[arg(long, default_value_t = sluice_engine::DEFAULT_PORT)]
        port: u16,
        /// Print only this client's configuration (claude-desktop, claude-code, cursor,
        /// vscode, codex, windsurf, zed, goose, http, stdio).
        #[arg(long, value_parser = crate::connect::parse_client)]
        client: Option<clients::Client>,
    },
    /// List tokens (never their values).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Set a token's profile (review, edit, agent, full), by id or label; a running Sluice
    /// applies it at the token's next request.
    SetProfile {
        token: String,
        #[arg(value_parser = parse_profile)]
        profile: Profile,
    },
    /// Revoke a token by id or label; takes effect on its next request.
    Revoke { token: String },
    /// Lift the limit an assistant put on its own token (`drop_privileges`: read-only or
    /// paused), by id or label.
    Restore { token: String },
}

/// `sluice token list --json`: one token (never its value).
#[derive(Serialize)]
struct TokenJson<'a> {
    id: &'a TokenId,
    label: &'a str,
    scope: String,
    created_ms: i64,
    last_used_ms: Option<i64>,
    expires_ms: Option<i64>,
    revoked_ms: Option<i64>,
    self_limit: Option<&'static str>,
    self_limited_ms: Option<i64>,
    profile: &'static str,
}

/// A profile's name, or an error listing the names.
fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

pub fn token(engine: Engine, cmd: TokenCmd) -> Result<()> {
    match cmd {
        TokenCmd::Create { label, projects, expires, profile, port, client } => {
            let (record, plaintext) = engine
                .create_token_with_profile(&label, projects, expires, profile)
                .map_err(fail)?;
            let binary = std::env::current_exe()
                .and_then(std::fs::canonicalize)
                .unwrap_or_else(|_| PathBuf::from("sluice"));
            outln!("Created token {} ({}).", record.label, record.id);
            outln!("Profile: {profile} ({}).", profile.describe());
            outln!("This is the only time it is shown; copy it now:\n");
            outln!("  {plaintext}\n");
            let endpoint = clients::Endpoint { port, token: &plaintext, binary: &binary };
            let snippets = match client {
                Some(c) => vec![clients::one(c, &endpoint)],
                None => clients::all(&endpoint),
            };
            for snippet in snippets {
                outln!("── {} — {}", snippet.title, snippet.target);
                outln!("{}\n", snippet.text.trim_end());
                if let Some(link) = &snippet.link {
                    outln!("Install link: {}\nIt installs: {}\n", link.url, link.installs);
                }
                if let Some(note) = snippet.note {
                    outln!("{note}\n");
                }
            }
        }
        TokenCmd::List { json } => {
            let tokens = engine.tokens().map_err(fail)?;
            let scope = |s: &Option<Vec<sluice_core::ProjectId>>| match s {
                None => "all projects".to_owned(),
                Some(ids) if ids.is_empty() => "no projects".to_owned(),
                Some(ids) => ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(","),
            };
            if json {
                let list: Vec<_> = tokens
                    .iter()
                    .map(|t| TokenJson {
                        id: &t.id,
                        label: &t.label,
                        scope: scope(&t.scope),
                        created_ms: t.created_ms,
                        last_used_ms: t.last_used_ms,
                        expires_ms: t.expires_ms,
                        revoked_ms: t.revoked_ms,
                        self_limit: t.self_limit.map(|(l, _)| l.as_str()),
                        self_limited_ms: t.self_limit.map(|(_, at)| at),
                        profile: t.profile.as_str(),
                    })
                    .collect();
                print_json(&list)?;
            } else if tokens.is_empty() {
                outln!("No tokens yet. Create one with `sluice token create --label NAME`.");
            } else {
                for t in &tokens {
                    let status = if t.revoked_ms.is_some() {
                        "revoked"
                    } else if t.expires_ms.is_some_and(|e| e <= sluice_engine::now_ms()) {
                        "expired"
                    } else {
                        match t.self_limit {
                            Some((sluice_core::SelfLimit::ReadOnly, _)) => {
                                "read-only by its own choice"
                            }
                            Some((sluice_core::SelfLimit::Paused, _)) => "paused by its own choice",
                            None => "active",
                        }
                    };
                    outln!("{}  {}  [{status}]", t.id, shown(&t.label));
                    outln!("  profile:   {} ({})", t.profile, t.profile.describe());
                    outln!("  scope:     {}", scope(&t.scope));
                    outln!("  created:   {}", time(Some(t.created_ms)));
                    outln!("  last used: {}", time(t.last_used_ms));
                    outln!("  expires:   {}", time(t.expires_ms));
                    if let Some((_, at)) = t.self_limit {
                        outln!("  limited:   {} (`sluice token restore` lifts it)", time(Some(at)));
                    }
                }
            }
        }
        TokenCmd::SetProfile { token, profile } => {
            let t = engine.set_token_profile(&token, profile).map_err(fail)?;
            outln!(
                "Set {} ({}) to the {profile} profile: {}.",
                shown(&t.label),
                t.id,
                profile.describe()
            );
        }
        TokenCmd::Revoke { token } => {
            let t = engine.revoke_token(&token).map_err(fail)?;
            outln!("Revoked {} ({}); its next request is refused.", shown(&t.label), t.id);
        }
        TokenCmd::Restore { token } => {
            let t = engine.lift_token_limit(&token).map_err(fail)?;
            outln!(
                "Restored {} ({}): it has the access its projects give again.",
                shown(&t.label),
                t.id
            );
        }
    }
    Ok(())
}
