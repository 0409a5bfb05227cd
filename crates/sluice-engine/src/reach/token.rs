//! The token endpoint (RFC 6749 §3.2): the code grant, which turns a person's approval into a
//! remote token and its grant, and the refresh grant, which rotates both secrets and revokes
//! the grant when a spent refresh token comes back.

use serde::{Deserialize, Serialize};
use sluice_store::{CodeRedemption, NewToken, OAuthGrant, RefreshRotation};

use super::{
    ACCESS_TTL, ClientIdentity, OAuthError, REFRESH_TOKEN_PREFIX, REFRESH_TTL, REMOTE_TOKEN_PREFIX,
    Reach, millis, pkce_matches, secret,
};
use crate::{AuditOutcome, Engine, EngineEvent, store_failure};

/// What a token request carries (RFC 6749 §4.1.3 and §6).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TokenParams {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub client_id: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub resource: Option<String>,
    pub scope: Option<String>,
}

/// A successful token response (RFC 6749 §5.1).
#[derive(Debug, Clone, Serialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: u64,
    pub refresh_token: String,
}

impl Engine {
    /// The token endpoint: the code grant and the refresh grant.
    pub fn oauth_token(&self, params: &TokenParams) -> Result<TokenResponse, OAuthError> {
        let reach = self.reach_on()?;
        if let Some(resource) = params.resource.as_deref()
            && resource != reach.resource()
        {
            return Err(OAuthError::new("invalid_target", "resource must be this server's /mcp"));
        }
        match params.grant_type.as_deref() {
            Some("authorization_code") => self.exchange_code(&reach, params),
            Some("refresh_token") => self.refresh_grant(params),
            _ => Err(OAuthError::new(
                "unsupported_grant_type",
                "grant_type must be authorization_code or refresh_token",
            )),
        }
    }

    fn exchange_code(
        &self,
        reach: &Reach,
        params: &TokenParams,
    ) -> Result<TokenResponse, OAuthError> {
        let invalid = |why: &str| OAuthError::new("invalid_grant", why);
        let code = params.code.as_deref().ok_or_else(|| invalid("code is missing"))?;
        let hash = sluice_store::token_hash(&self.secret, code);
        let request = match self
            .store
            .redeem_oauth_code(&hash)
            .map_err(|e| OAuthError::internal(store_failure(e)))?
        {
            CodeRedemption::Fresh(request) => request,
            CodeRedemption::Replayed(token) => {
                // A code used twice: whoever holds the token it bought may be the thief.
                if let Some(token) = token {
                    let _ = self.revoke_token(token.as_str());
                }
                return Err(invalid("this code was already used; the access it gave is revoked"));
            }
            CodeRedemption::Expired => return Err(invalid("this code has expired")),
            CodeRedemption::Unknown => return Err(invalid("unknown code")),
        };
        if params.client_id.as_deref() != Some(request.client_id.as_str()) {
            return Err(invalid("the code was issued to another client"));
        }
        if params.redirect_uri.as_deref() != Some(request.redirect_uri.as_str()) {
            return Err(invalid("redirect_uri does not match the authorization request"));
        }
        let verifier = params.code_verifier.as_deref().unwrap_or_default();
        if !pkce_matches(verifier, &request.code_challenge) {
            return Err(invalid("code_verifier does not match the code_challenge"));
        }
        if request.resource != reach.resource() {
            return Err(OAuthError::new(
                "invalid_target",
                "the code was issued for another resource",
            ));
        }
        let access = secret(REMOTE_TOKEN_PREFIX);
        let refresh = secret(REFRESH_TOKEN_PREFIX);
        let now = sluice_store::now_ms();
        let shown = ClientIdentity::of(&request.client_id, &request.client_name).label();
        let label =
            format!("remote: {shown} {}", &request.id[request.id.len().saturating_sub(6)..]);
        let token = self
            .store
            .insert_token(&NewToken {
                label,
                hash: sluice_store::token_hash(&self.secret, &access),
                scope: Some(reach.projects.clone()),
                expires_ms: Some(now.saturating_add(millis(ACCESS_TTL))),
                // What the person consented to: writes only if reach allowed them then. Reach's
                // setting at each request narrows it further (`authenticate_remote`).
                profile: if reach.write {
                    sluice_core::Profile::Full
                } else {
                    sluice_core::Profile::Review
                },
            })
            .map_err(|e| OAuthError::internal(store_failure(e)))?;
        let grant = OAuthGrant {
            token_id: token.id.clone(),
            client_id: request.client_id.clone(),
            client_name: request.client_name.clone(),
            resource: request.resource.clone(),
        };
        let refresh_hash = sluice_store::token_hash(&self.secret, &refresh);
        self.store
            .insert_oauth_grant(&grant, &refresh_hash, now.saturating_add(millis(REFRESH_TTL)))
            .map_err(|e| OAuthError::internal(store_failure(e)))?;
        let _ = self.store.set_oauth_request_token(&request.id, &token.id);
        self.record_human_detail(
            "reach.token",
            None,
            AuditOutcome::Ok,
            None,
            Some(format!("{shown} ({})", token.id)),
        );
        self.invalidate();
        self.emit(EngineEvent::TokensChanged);
        Ok(TokenResponse {
            access_token: access,
            token_type: "Bearer",
            expires_in: ACCESS_TTL.as_secs(),
            refresh_token: refresh,
        })
    }

    fn refresh_grant(&self, params: &TokenParams) -> Result<TokenResponse, OAuthError> {
        let invalid = |why: &str| OAuthError::new("invalid_grant", why);
        let presented =
            params.refresh_token.as_deref().ok_or_else(|| invalid("refresh_token is missing"))?;
        let presented_hash = sluice_store::token_hash(&self.secret, presented);
        let access = secret(REMOTE_TOKEN_PREFIX);
        let refresh = secret(REFRESH_TOKEN_PREFIX);
        let now = sluice_store::now_ms();
        let rotation = self
            .store
            .rotate_oauth_refresh(
                &presented_hash,
                &sluice_store::token_hash(&self.secret, &refresh),
                now.saturating_add(millis(REFRESH_TTL)),
                &sluice_store::token_hash(&self.secret, &access),
                now.saturating_add(millis(ACCESS_TTL)),
            )
            .map_err(|e| OAuthError::internal(store_failure(e)))?;
        let token = match rotation {
            RefreshRotation::Rotated(token) => token,
            RefreshRotation::Spent(token) => {
                let _ = self.revoke_token(token.as_str());
                return Err(invalid(
                    "this refresh token was already used; the access it gave is revoked",
                ));
            }
            RefreshRotation::Expired => return Err(invalid("this refresh token has expired")),
            RefreshRotation::Unknown => return Err(invalid("unknown refresh token")),
        };
        let record = self
            .store
            .find_token(token.as_str())
            .map_err(|e| OAuthError::internal(store_failure(e)))?;
        let grant =
            self.store.oauth_grant(&token).map_err(|e| OAuthError::internal(store_failure(e)))?;
        let owner_ok =
            grant.is_some_and(|g| params.client_id.as_deref().is_none_or(|c| c == g.client_id));
        if !record.is_some_and(|t| t.revoked_ms.is_none() && !t.tampered) || !owner_ok {
            return Err(invalid("the grant behind this refresh token is revoked"));
        }
        self.invalidate();
        Ok(TokenResponse {
            access_token: access,
            token_type: "Bearer",
            expires_in: ACCESS_TTL.as_secs(),
            refresh_token: refresh,
        })
    }
}
