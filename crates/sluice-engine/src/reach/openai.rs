//! OpenAI's Secure MCP Tunnel, the engine's side: the tunnel's API key and the grant its calls
//! run under.
//!
//! With this tunnel nothing listens: Sluice polls OpenAI for what the connector sent
//! (`sluice_mcp::openai`), with the tunnel's API key. The connector is set up without
//! authentication, because the tunnel is the authentication: only this organisation's
//! connectors that may use the tunnel reach it, and only the holder of its API key receives
//! their requests. So the person's decision is made once, natively, when they turn reach on with
//! the tunnel; each run of the poller then mints a remote token for it, held in memory only,
//! listed in Tokens (`remote: OpenAI Secure MCP Tunnel …`) where revoking it cuts the tunnel
//! until reach is set again. Anything the connector forwards as its own `Authorization` is
//! never used (no token passthrough).

use sluice_core::{ErrorCode, Failure};
use sluice_store::{NewToken, OAuthGrant};
use zeroize::Zeroizing;

use super::{REMOTE_TOKEN_PREFIX, Reach, Tunnel, secret};
use crate::{AuditOutcome, Engine, EngineEvent, store_failure};

/// Where OpenAI's tunnel service is; the setting's public URL for this tunnel.
pub const OPENAI_ORIGIN: &str = "https://api.openai.com";
/// The kept credential: `<tunnel id> <api key>`, encrypted (`sluice_store::credential`).
const CREDENTIAL: &str = "openai-tunnel";
/// The grant's client, for the audit and the per-client limits: this prefix and the tunnel ID.
const CLIENT_PREFIX: &str = "openai-tunnel:";
/// The longest API key taken.
const MAX_KEY_BYTES: usize = 512;

/// A tunnel API key as the user gave it: zeroed when dropped, never shown by `Debug`.
#[derive(Clone)]
pub struct ApiKey(Zeroizing<String>);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(Zeroizing::new(key.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

fn check_key(key: &str) -> Result<&str, Failure> {
    let key = key.trim();
    if key.is_empty() || key.len() > MAX_KEY_BYTES || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Failure::new(
            ErrorCode::InvalidArgument,
            "the tunnel's API key is 1–512 visible characters with no spaces (sk-…)",
        ));
    }
    Ok(key)
}

impl Engine {
    /// Checks there is an API key for `tunnel_id`: `given`, or the one kept for it.
    pub(super) fn openai_key_for(
        &self,
        tunnel_id: &str,
        given: Option<&str>,
    ) -> Result<(), Failure> {
        match given {
            Some(key) => check_key(key).map(drop),
            None => self.openai_api_key(tunnel_id).map(drop),
        }
    }

    /// Keeps `given` as the key of `reach`'s OpenAI tunnel (the kept one stays when none is
    /// given); with any other setting, or none, no key is kept.
    pub(super) fn keep_openai_key(
        &self,
        reach: Option<&Reach>,
        given: Option<&str>,
    ) -> Result<(), Failure> {
        let value = match reach.and_then(|r| r.tunnel.as_ref()) {
            Some(Tunnel::OpenAi { tunnel_id }) => match given {
                Some(key) => Some(Zeroizing::new(format!("{tunnel_id} {}", check_key(key)?))),
                None => return Ok(()),
            },
            _ => None,
        };
        self.store
            .set_credential(&self.secret, CREDENTIAL, value.as_deref().map(String::as_str))
            .map_err(store_failure)
    }

    /// The API key kept for `tunnel_id`.
    pub fn openai_api_key(&self, tunnel_id: &str) -> Result<Zeroizing<String>, Failure> {
        let kept = self.store.credential(&self.secret, CREDENTIAL).map_err(store_failure)?;
        kept.and_then(|text| {
            let (id, key) = text.split_once(' ')?;
            (id == tunnel_id).then(|| Zeroizing::new(key.to_owned()))
        })
        .ok_or_else(|| {
            Failure::new(
                ErrorCode::InvalidArgument,
                "give the tunnel's API key (from platform.openai.com, Settings → API keys)",
            )
        })
    }

    /// A fresh remote token for the calls `reach`'s OpenAI tunnel brings, for the poller to hold
    /// in memory; the earlier ones of this tunnel are revoked (no one holds them any more).
    pub fn openai_tunnel_grant(&self, reach: &Reach) -> Result<Zeroizing<String>, Failure> {
        let Some(Tunnel::OpenAi { tunnel_id }) = &reach.tunnel else {
            return Err(Failure::new(ErrorCode::InvalidArgument, "reach runs no OpenAI tunnel"));
        };
        let client_id = format!("{CLIENT_PREFIX}{tunnel_id}");
        for token in self.tokens()? {
            if token.remote && token.revoked_ms.is_none() {
                let grant = self.store.oauth_grant(&token.id).map_err(store_failure)?;
                if grant.is_some_and(|g| g.client_id == client_id) {
                    self.store.revoke_token(&token.id).map_err(store_failure)?;
                }
            }
        }
        let access = Zeroizing::new(secret(REMOTE_TOKEN_PREFIX));
        let name = format!("OpenAI Secure MCP Tunnel {tunnel_id}");
        let token = self
            .store
            .insert_token(&NewToken {
                // Labels are unique, revoked tokens included: each run's gets its own tail.
                label: format!("remote: {name} {}", &secret("")[..6]),
                hash: sluice_store::token_hash(&self.secret, &access),
                scope: Some(reach.projects.clone()),
                expires_ms: None,
                // Reach's own setting (read-only or write) narrows a remote caller instead.
                profile: sluice_core::Profile::Full,
            })
            .map_err(store_failure)?;
        let grant = OAuthGrant {
            token_id: token.id.clone(),
            client_id,
            client_name: name.clone(),
            resource: reach.resource(),
        };
        // No refresh token: the hash of one nobody was given, expired from the start.
        let unusable = sluice_store::token_hash(&self.secret, &secret("slf_"));
        self.store
            .insert_oauth_grant(&grant, &unusable, sluice_store::now_ms())
            .map_err(store_failure)?;
        self.record_human_detail(
            "reach.token",
            None,
            AuditOutcome::Ok,
            None,
            Some(format!("{name} ({})", token.id)),
        );
        self.invalidate();
        self.emit(EngineEvent::TokensChanged);
        Ok(access)
    }
}
