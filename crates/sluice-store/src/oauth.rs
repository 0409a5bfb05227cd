//! Reach from hosted assistants: the authorization server's state (schema 15).
//!
//! - `oauth_clients`: what a hosted assistant registered (dynamic client registration): its name
//!   and redirect URIs, already checked against the allow-list by the engine.
//! - `oauth_requests`: one authorization request each, waiting for the user's decision, then
//!   carrying the one-time code minted from it (as a keyed hash) and the token it was exchanged
//!   for. The request and its decision are sealed: an edit of the database cannot approve one.
//! - `oauth_grants`: beside each remote token (a row of `tokens`), the client and resource it was
//!   issued for, sealed.
//! - `oauth_refresh`: refresh tokens as keyed hashes. A rotated one is kept, spent, so that
//!   presenting it again is recognised as a replay and the grant revoked.

use rusqlite::{Connection, OptionalExtension, Row, params};
use sluice_core::TokenId;

use crate::seal::{Before, FindingKind, IntegrityFinding, SealedTable, TOKENS, kv_get_sealed};
use crate::{Store, StoreError, now_ms};

/// The kv key of the sealed reach setting (the engine's `Reach`, as JSON).
pub const REACH_KEY: &str = "reach";

/// The authorization requests of hosted assistants: what was asked and the user's decision,
/// so an edit of the database cannot approve one.
const OAUTH_REQUESTS: SealedTable = SealedTable {
    table: "oauth_requests",
    id: "id",
    columns: "id, client_id, redirect_uri, code_challenge, resource, user_code, created_ms, \
              expires_ms, decision, decided_ms",
    n_columns: 10,
    scope: false,
    tails: &[],
};

/// The grant behind a remote token: which client it was issued to and for which resource.
const OAUTH_GRANTS: SealedTable = SealedTable {
    table: "oauth_grants",
    id: "token_id",
    columns: "token_id, client_id, client_name, resource",
    n_columns: 4,
    scope: false,
    tails: &[],
};

/// Registered clients kept; registering more drops the oldest that holds no grant.
pub const MAX_OAUTH_CLIENTS: usize = 64;

/// A client a hosted assistant registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    pub id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub created_ms: i64,
}

/// Where an authorization request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OAuthDecision {
    Pending,
    Approved,
    Denied,
}

impl OAuthDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthDecision::Pending => "pending",
            OAuthDecision::Approved => "approved",
            OAuthDecision::Denied => "denied",
        }
    }

    fn parse(s: &str) -> Option<OAuthDecision> {
        match s {
            "pending" => Some(OAuthDecision::Pending),
            "approved" => Some(OAuthDecision::Approved),
            "denied" => Some(OAuthDecision::Denied),
            _ => None,
        }
    }
}

/// An authorization request, with its client's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthRequest {
    pub id: String,
    pub client_id: String,
    pub client_name: String,
    pub redirect_uri: String,
    /// The client's `state`, echoed in the redirect.
    pub state: Option<String>,
    pub code_challenge: String,
    pub resource: String,
    /// Shown on the consent page and beside the approval, so the user approves the request
    /// they started and not one someone else started at the same time.
    pub user_code: String,
    pub created_ms: i64,
    pub expires_ms: i64,
    pub decision: OAuthDecision,
    pub decided_ms: Option<i64>,
    /// A code was minted from it (it can be minted once).
    pub code_minted: bool,
    /// Its seal does not match: it is treated as denied.
    pub tampered: bool,
}

impl OAuthRequest {
    /// Where the browser returns: the redirect URI's authority (`claude.ai`), for the person
    /// deciding. The URI was checked against the allow-list when the client registered.
    pub fn redirect_host(&self) -> &str {
        let rest = self.redirect_uri.split_once("://").map_or("", |(_, rest)| rest);
        rest.split(['/', '?', '#']).next().unwrap_or_default()
    }
}

/// What [`Store::insert_oauth_request`] needs.
#[derive(Debug, Clone)]
pub struct NewOAuthRequest {
    pub id: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
    pub resource: String,
    pub user_code: String,
    pub expires_ms: i64,
}

/// The client and resource a remote token was issued for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthGrant {
    pub token_id: TokenId,
    pub client_id: String,
    pub client_name: String,
    pub resource: String,
}

/// What presenting an authorization code found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRedemption {
    /// First use, within its lifetime: the request it was minted from, now marked used.
    Fresh(Box<OAuthRequest>),
    /// Used before: the token issued from it, if any, should be revoked (RFC 6749 §4.1.2).
    Replayed(Option<TokenId>),
    Expired,
    Unknown,
}

/// What presenting a refresh token found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshRotation {
    /// Rotated: the token now answers to the new access hash, and the new refresh hash replaces
    /// the one presented.
    Rotated(TokenId),
    /// Already rotated out: a replay. The grant should be revoked.
    Spent(TokenId),
    Expired,
    Unknown,
}

const REQUEST_COLUMNS: &str = "r.id, r.client_id, c.name, r.redirect_uri, r.code_challenge, \
                               r.resource, r.user_code, r.created_ms, r.expires_ms, r.decision, \
                               r.decided_ms, r.code_hash IS NOT NULL, r.state";

fn request_from_row(row: &Row<'_>) -> rusqlite::Result<OAuthRequest> {
    let decision: String = row.get(9)?;
    Ok(OAuthRequest {
        id: row.get(0)?,
        client_id: row.get(1)?,
        client_name: row.get(2)?,
        redirect_uri: row.get(3)?,
        code_challenge: row.get(4)?,
        resource: row.get(5)?,
        user_code: row.get(6)?,
        created_ms: row.get(7)?,
        expires_ms: row.get(8)?,
        // An unknown word counts as denied: never more than the user said.
        decision: OAuthDecision::parse(&decision).unwrap_or(OAuthDecision::Denied),
        decided_ms: row.get(10)?,
        code_minted: row.get(11)?,
        state: row.get(12)?,
        tampered: false,
    })
}

impl Store {
    /// Registers a client, or records it again (a metadata document fetched anew), dropping the
    /// oldest registrations without a grant beyond [`MAX_OAUTH_CLIENTS`].
    pub fn put_oauth_client(&self, client: &OAuthClient) -> Result<(), StoreError> {
        let uris = serde_json::to_string(&client.redirect_uris)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO oauth_clients (id, name, redirect_uris, created_ms) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name,
                 redirect_uris = excluded.redirect_uris, created_ms = excluded.created_ms",
            params![client.id, client.name, uris, client.created_ms],
        )?;
        // A registration a request still waits on is never the one dropped: the person may be
        // about to approve it.
        tx.execute(
            "DELETE FROM oauth_clients WHERE id IN (
                 SELECT id FROM oauth_clients
                 WHERE id NOT IN (SELECT client_id FROM oauth_grants)
                   AND id NOT IN (SELECT client_id FROM oauth_requests
                                  WHERE decision != 'denied' AND token_id IS NULL
                                    AND expires_ms > ?2)
                 ORDER BY created_ms DESC, id LIMIT -1 OFFSET ?1)",
            params![MAX_OAUTH_CLIENTS as i64, now_ms()],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn oauth_client(&self, id: &str) -> Result<Option<OAuthClient>, StoreError> {
        let conn = self.conn();
        let row = conn
            .query_row(
                "SELECT id, name, redirect_uris, created_ms FROM oauth_clients WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                },
            )
            .optional()?;
        let Some((id, name, uris, created_ms)) = row else { return Ok(None) };
        let redirect_uris = serde_json::from_str(&uris)
            .map_err(|_| StoreError::Corrupt(format!("oauth client {id:?}: redirect_uris")))?;
        Ok(Some(OAuthClient { id, name, redirect_uris, created_ms }))
    }

    /// The registrations that hold no grant, oldest first: their ids and when they were made.
    pub fn unproven_oauth_clients(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, created_ms FROM oauth_clients
             WHERE id NOT IN (SELECT client_id FROM oauth_grants) ORDER BY created_ms, id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Drops a registration without a grant, and the requests it made.
    pub fn delete_unproven_oauth_client(&self, id: &str) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "DELETE FROM oauth_clients WHERE id = ?1
                 AND id NOT IN (SELECT client_id FROM oauth_grants)",
            [id],
        )?;
        Ok(n == 1)
    }

    /// Drops the registrations made before `before_ms` that hold no grant and that no request
    /// still waits on; returns how many.
    pub fn prune_unproven_oauth_clients(&self, before_ms: i64) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "DELETE FROM oauth_clients WHERE created_ms < ?1
                 AND id NOT IN (SELECT client_id FROM oauth_grants)
                 AND id NOT IN (SELECT client_id FROM oauth_requests
                                WHERE decision != 'denied' AND token_id IS NULL
                                  AND expires_ms > ?2)",
            params![before_ms, now_ms()],
        )?)
    }

    /// Ends a pending request now, undecided: it can no longer be approved, and its consent
    /// page says it is over. `Ok(false)` when it was not pending any more.
    pub fn expire_oauth_request(&self, id: &str) -> Result<bool, StoreError> {
        let now = now_ms();
        self.write_sealed(&OAUTH_REQUESTS, id, Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE oauth_requests SET expires_ms = ?2
                 WHERE id = ?1 AND decision = 'pending' AND expires_ms > ?2",
                params![id, now],
            )?;
            Ok(n == 1)
        })
    }

    /// Requests still waiting for the user at `now`.
    pub fn pending_oauth_requests(&self, now: i64) -> Result<Vec<OAuthRequest>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {REQUEST_COLUMNS} FROM oauth_requests r JOIN oauth_clients c
             ON c.id = r.client_id WHERE r.decision = 'pending' AND r.expires_ms > ?1
             ORDER BY r.created_ms, r.id"
        ))?;
        let rows = stmt.query_map([now], request_from_row)?;
        let mut out = Vec::new();
        for row in rows {
            let mut request = row?;
            request.tampered = !self.row_sealed(&conn, &OAUTH_REQUESTS, &request.id.as_str())?;
            out.push(request);
        }
        Ok(out)
    }

    /// Records a new request (pending), dropping requests that ended more than a day ago.
    pub fn insert_oauth_request(&self, new: &NewOAuthRequest) -> Result<(), StoreError> {
        let now = now_ms();
        self.write_sealed(&OAUTH_REQUESTS, &new.id, Before::Any, |tx| {
            tx.execute(
                "DELETE FROM oauth_requests WHERE expires_ms < ?1 AND token_id IS NULL",
                params![now - 86_400_000],
            )?;
            tx.execute(
                "INSERT INTO oauth_requests (id, client_id, redirect_uri, state, code_challenge,
                     resource, user_code, created_ms, expires_ms)
                 VALUES (?1, ?2, ?3, ?9, ?4, ?5, ?6, ?7, ?8)",
                params![
                    new.id,
                    new.client_id,
                    new.redirect_uri,
                    new.code_challenge,
                    new.resource,
                    new.user_code,
                    now,
                    new.expires_ms,
                    new.state
                ],
            )?;
            Ok(())
        })
    }

    /// One request by id; a request whose seal does not match reads as denied and `tampered`.
    pub fn oauth_request(&self, id: &str) -> Result<Option<OAuthRequest>, StoreError> {
        let conn = self.conn();
        let found = conn
            .query_row(
                &format!(
                    "SELECT {REQUEST_COLUMNS} FROM oauth_requests r JOIN oauth_clients c
                     ON c.id = r.client_id WHERE r.id = ?1"
                ),
                [id],
                request_from_row,
            )
            .optional()?;
        let Some(mut request) = found else { return Ok(None) };
        if !self.row_sealed(&conn, &OAUTH_REQUESTS, &id)? {
            request.tampered = true;
            request.decision = OAuthDecision::Denied;
        }
        Ok(Some(request))
    }

    /// The user's decision: a conditional update from `pending` before the request expires, so
    /// each request is decided once. `Ok(false)` when it was not pending any more.
    pub fn decide_oauth_request(&self, id: &str, approve: bool) -> Result<bool, StoreError> {
        let decision = if approve { OAuthDecision::Approved } else { OAuthDecision::Denied };
        let now = now_ms();
        self.write_sealed(&OAUTH_REQUESTS, id, Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE oauth_requests SET decision = ?2, decided_ms = ?3
                 WHERE id = ?1 AND decision = 'pending' AND expires_ms > ?3",
                params![id, decision.as_str(), now],
            )?;
            Ok(n == 1)
        })
    }

    /// Mints the request's code, once, and only from an approved request whose seal matches.
    pub fn mint_oauth_code(
        &self,
        id: &str,
        code_hash: &[u8; 32],
        code_expires_ms: i64,
    ) -> Result<bool, StoreError> {
        let conn = self.conn();
        if !self.row_sealed(&conn, &OAUTH_REQUESTS, &id)? {
            return Ok(false);
        }
        let n = conn.execute(
            "UPDATE oauth_requests SET code_hash = ?2, code_expires_ms = ?3
             WHERE id = ?1 AND decision = 'approved' AND code_hash IS NULL",
            params![id, &code_hash[..], code_expires_ms],
        )?;
        Ok(n == 1)
    }

    /// Presents a code: the first use within its lifetime marks it used and returns its request.
    pub fn redeem_oauth_code(&self, code_hash: &[u8; 32]) -> Result<CodeRedemption, StoreError> {
        let now = now_ms();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let found: Option<(String, Option<i64>, i64, Option<String>)> = tx
            .query_row(
                "SELECT id, code_used_ms, code_expires_ms, token_id FROM oauth_requests
                 WHERE code_hash = ?1",
                [&code_hash[..]],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        let Some((id, used, expires, token)) = found else { return Ok(CodeRedemption::Unknown) };
        if used.is_some() {
            return Ok(CodeRedemption::Replayed(token.and_then(|t| TokenId::parse(&t))));
        }
        if expires <= now {
            return Ok(CodeRedemption::Expired);
        }
        tx.execute("UPDATE oauth_requests SET code_used_ms = ?2 WHERE id = ?1", params![id, now])?;
        tx.commit()?;
        drop(conn);
        match self.oauth_request(&id)? {
            Some(request) if !request.tampered => Ok(CodeRedemption::Fresh(Box::new(request))),
            _ => Ok(CodeRedemption::Unknown),
        }
    }

    /// Records the token a request's code was exchanged for (revoked if the code is replayed).
    pub fn set_oauth_request_token(&self, id: &str, token: &TokenId) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE oauth_requests SET token_id = ?2 WHERE id = ?1",
            params![id, token.as_str()],
        )?;
        Ok(())
    }

    /// Binds a freshly inserted token to its grant and first refresh token.
    pub fn insert_oauth_grant(
        &self,
        grant: &OAuthGrant,
        refresh_hash: &[u8; 32],
        refresh_expires_ms: i64,
    ) -> Result<(), StoreError> {
        let id = grant.token_id.as_str();
        self.write_sealed(&OAUTH_GRANTS, id, Before::Any, |tx| {
            tx.execute(
                "INSERT INTO oauth_grants (token_id, client_id, client_name, resource)
                 VALUES (?1, ?2, ?3, ?4)",
                params![id, grant.client_id, grant.client_name, grant.resource],
            )?;
            tx.execute(
                "INSERT INTO oauth_refresh (hash, token_id, expires_ms) VALUES (?1, ?2, ?3)",
                params![&refresh_hash[..], id, refresh_expires_ms],
            )?;
            Ok(())
        })
    }

    /// The grant behind a token: `None` for a local token, or when the grant's seal does not
    /// match (the token is then refused).
    pub fn oauth_grant(&self, token: &TokenId) -> Result<Option<OAuthGrant>, StoreError> {
        let conn = self.conn();
        let found = conn
            .query_row(
                "SELECT client_id, client_name, resource FROM oauth_grants WHERE token_id = ?1",
                [token.as_str()],
                |r| {
                    Ok(OAuthGrant {
                        token_id: token.clone(),
                        client_id: r.get(0)?,
                        client_name: r.get(1)?,
                        resource: r.get(2)?,
                    })
                },
            )
            .optional()?;
        match found {
            Some(grant) if self.row_sealed(&conn, &OAUTH_GRANTS, &token.as_str())? => {
                Ok(Some(grant))
            }
            _ => Ok(None),
        }
    }

    /// Rotates a refresh token: in one transaction the presented one is spent, the new one
    /// stored, and the token given its new access hash and expiry. A spent one presented again
    /// is reported, for the caller to revoke the grant.
    pub fn rotate_oauth_refresh(
        &self,
        presented: &[u8; 32],
        next: &[u8; 32],
        next_expires_ms: i64,
        access_hash: &[u8; 32],
        access_expires_ms: i64,
    ) -> Result<RefreshRotation, StoreError> {
        let now = now_ms();
        let found: Option<(String, i64, Option<i64>)> = self
            .conn()
            .query_row(
                "SELECT token_id, expires_ms, spent_ms FROM oauth_refresh WHERE hash = ?1",
                [&presented[..]],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((token, expires, spent)) = found else { return Ok(RefreshRotation::Unknown) };
        let Some(token) = TokenId::parse(&token) else { return Ok(RefreshRotation::Unknown) };
        if spent.is_some() {
            return Ok(RefreshRotation::Spent(token));
        }
        if expires <= now {
            return Ok(RefreshRotation::Expired);
        }
        self.write_sealed(&TOKENS, token.as_str(), Before::MustVerify, |tx| {
            // The conditional update decides a race between two presentations: one rotates,
            // the other finds it spent.
            let n = tx.execute(
                "UPDATE oauth_refresh SET spent_ms = ?2 WHERE hash = ?1 AND spent_ms IS NULL",
                params![&presented[..], now],
            )?;
            if n == 0 {
                return Ok(RefreshRotation::Spent(token.clone()));
            }
            tx.execute(
                "INSERT INTO oauth_refresh (hash, token_id, expires_ms) VALUES (?1, ?2, ?3)",
                params![&next[..], token.as_str(), next_expires_ms],
            )?;
            tx.execute(
                "UPDATE tokens SET hash = ?2, expires_ms = ?3 WHERE id = ?1 AND revoked_ms IS NULL",
                params![token.as_str(), &access_hash[..], access_expires_ms],
            )?;
            Ok(RefreshRotation::Rotated(token.clone()))
        })
    }
}

/// What of reach from the web does not carry Sluice's seal, and what Sluice does about each.
pub(crate) fn reach_findings(
    conn: &Connection,
    key: &[u8; 32],
) -> Result<Vec<IntegrityFinding>, StoreError> {
    let mut found = Vec::new();
    let stored: Option<String> = conn
        .query_row("SELECT value FROM kv WHERE key = ?1", [REACH_KEY], |r| r.get(0))
        .optional()?;
    if stored.is_some() && kv_get_sealed(conn, key, REACH_KEY)?.is_none() {
        found.push(IntegrityFinding {
            kind: FindingKind::Reach,
            subject: REACH_KEY.into(),
            message: "the setting of reach from the web was written or changed outside Sluice: \
                      reach stays off and nothing is exposed. `sluice reach off` removes it; \
                      turn reach on again in Sluice if you want it"
                .into(),
        });
    }
    for (id, good) in OAUTH_REQUESTS.check_all(conn, key)? {
        if !good {
            found.push(IntegrityFinding {
                kind: FindingKind::ConnectionRequest,
                message: format!(
                    "connection request {id} was changed outside Sluice (its decision or what \
                     it asks; its seal does not match): it reads as denied and mints no code"
                ),
                subject: id,
            });
        }
    }
    for (id, good) in OAUTH_GRANTS.check_all(conn, key)? {
        if !good {
            let label: Option<String> = conn
                .query_row("SELECT label FROM tokens WHERE id = ?1", [&id], |r| r.get(0))
                .optional()?;
            let label = sluice_core::text::visible(&label.unwrap_or_default()).into_owned();
            found.push(IntegrityFinding {
                kind: FindingKind::Grant,
                message: format!(
                    "the grant behind remote token {label:?} ({id}) was changed outside Sluice \
                     (its client or resource; its seal does not match): the token is refused. \
                     Revoke it with `sluice token revoke {id}`"
                ),
                subject: id,
            });
        }
    }
    Ok(found)
}
