//! Reach from hosted assistants (ChatGPT, Claude.ai): Sluice as an OAuth 2.1 authorization
//! server and resource server for clients that can only reach public HTTPS, through a tunnel the
//! user runs to a second loopback port.
//!
//! - The setting ([`Reach`]) is off unless the user turned it on; it names the public URL, the
//!   loopback port the tunnel connects to, the projects exposed and whether writes are. It is
//!   sealed: a missing or broken seal reads as off.
//! - Clients register themselves (RFC 7591) or name a metadata document ([`cimd`]), but only
//!   with redirect URIs on the allow-list: the hosted assistants' published callbacks and the
//!   URIs the user added.
//! - An authorization request waits for the user (`sluice reach approve`, the tray): the consent
//!   page only shows the request's code and waits; it decides nothing.
//! - Codes are single-use and short-lived, PKCE S256 is required, the `resource` names this
//!   server's `/mcp` exactly, and the redirect URI must equal the registered one.
//! - Access tokens are client tokens (`slr_…`, a row in `tokens` with a sealed grant beside it),
//!   refused on the local port; refresh tokens rotate, and a spent one presented again revokes
//!   its grant. Every secret is kept as a keyed hash.
//!
//! Written by hand: the protocol is small, and the OAuth server crates in the field either bring
//! a web framework and storage model of their own or are unmaintained; what is here is only the
//! parts the MCP authorization spec requires.

use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sluice_core::{ErrorCode, Failure, ProjectId, id::base32, random_bytes};
use sluice_store::{NewOAuthRequest, OAuthClient, OAuthDecision, OAuthRequest, REACH_KEY};

use crate::{AuditOutcome, Engine, EngineEvent, paths, store_failure};

mod authority;
mod budget;
mod cimd;
mod openai;
mod token;
mod tunnel;
pub use authority::ClientIdentity;
pub(crate) use budget::Sources;
pub use budget::{MAX_PENDING_PER_SOURCE, MAX_UNPROVEN_PER_SOURCE, UNPROVEN_CLIENT_TTL};
pub use cimd::{MAX_DOCUMENT_BYTES, is_metadata_client_id, metadata_url_host};
pub use openai::{ApiKey, OPENAI_ORIGIN};
pub use token::{TokenParams, TokenResponse};
pub use tunnel::{Tunnel, TunnelState, TunnelStatus};

/// The loopback port the tunnel forwards to unless the user names one.
pub const DEFAULT_PORT: u16 = 7879;

/// The prefix of a remote access token; the local port refuses it whatever the database says.
pub const REMOTE_TOKEN_PREFIX: &str = "slr_";
/// The prefix of a refresh token.
pub const REFRESH_TOKEN_PREFIX: &str = "slf_";
/// How long an access token lives; the client refreshes it.
pub const ACCESS_TTL: Duration = Duration::from_secs(3600);
/// How long a refresh token lives unused.
pub const REFRESH_TTL: Duration = Duration::from_secs(30 * 86_400);
/// How long the user has to decide a request.
pub const REQUEST_TTL: Duration = Duration::from_secs(600);
/// How long a code is good for after it was minted.
pub const CODE_TTL: Duration = Duration::from_secs(60);
/// Requests waiting at once; more are refused until the user decides or they expire.
pub const MAX_PENDING: usize = 8;

/// The callbacks the hosted assistants publish, accepted exactly.
pub const PUBLISHED_CALLBACKS: &[&str] = &[
    "https://claude.ai/api/mcp/auth_callback",
    "https://claude.com/api/mcp/auth_callback",
    "https://chatgpt.com/connector_platform_oauth_redirect",
];
/// ChatGPT's per-connector callbacks: this prefix, then one path segment of letters, digits,
/// `-` and `_`.
const CHATGPT_CONNECTOR_CALLBACK: &str = "https://chatgpt.com/connector/oauth/";

/// The reach setting, while it is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    /// `https://host[:port]`, no path: the tunnel's public address; empty until a tunnel that
    /// chooses its own address announced it.
    pub public_url: String,
    /// Whether `public_url` is what the tunnel announced (else the user gave it).
    #[serde(default)]
    pub learned: bool,
    /// The tunnel Sluice runs, if any; else the user runs their own.
    #[serde(default)]
    pub tunnel: Option<Tunnel>,
    /// The loopback port the tunnel connects to (never the local clients' port).
    pub port: u16,
    /// The projects a remote token sees.
    pub projects: Vec<ProjectId>,
    /// Whether remote tokens may change files (else they are read-only). Commands in `any`
    /// mode are never exposed.
    pub write: bool,
    /// Redirect URIs the user allowed beside the published callbacks, exactly.
    #[serde(default)]
    pub redirects: Vec<String>,
}

impl Reach {
    /// The resource identifier tokens are bound to: the public `/mcp`.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.public_url)
    }

    /// The authorization server's issuer identifier.
    pub fn issuer(&self) -> &str {
        &self.public_url
    }

    /// The `Host` header the tunnel forwards: the public URL's authority.
    pub fn host(&self) -> &str {
        self.public_url.strip_prefix("https://").unwrap_or(&self.public_url)
    }

    fn allows_redirect(&self, uri: &str) -> bool {
        PUBLISHED_CALLBACKS.contains(&uri)
            || self.redirects.iter().any(|r| r == uri)
            || uri.strip_prefix(CHATGPT_CONNECTOR_CALLBACK).is_some_and(|id| {
                (1..=128).contains(&id.len())
                    && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            })
    }
}

/// What the user asks for when turning reach on.
#[derive(Debug, Clone, Default)]
pub struct ReachRequest {
    /// The public URL; `None` when the tunnel announces its own.
    pub url: Option<String>,
    pub port: u16,
    /// Names or ids; at least one.
    pub projects: Vec<String>,
    pub write: bool,
    pub redirects: Vec<String>,
    pub tunnel: Option<Tunnel>,
    /// The API key of OpenAI's Secure MCP Tunnel: needed the first time, kept (encrypted)
    /// while reach stays on with the same tunnel.
    pub api_key: Option<ApiKey>,
}

/// An OAuth error response: the registered code (RFC 6749 §5.2, RFC 7591 §3.2.2) and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    pub error: &'static str,
    pub description: String,
}

impl OAuthError {
    fn new(error: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError { error, description: description.into() }
    }

    fn internal(f: Failure) -> OAuthError {
        tracing::warn!(code = %f.code, message = %f.message, "authorization server error");
        OAuthError::new("server_error", "Sluice could not complete this; try again")
    }
}

/// What an authorization request carries (RFC 6749 §4.1.1, RFC 7636, RFC 8707).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AuthorizeParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub resource: Option<String>,
    pub scope: Option<String>,
}

/// Why an authorization request was refused: before the redirect URI is trusted the error is
/// shown on the page; after, it goes back to the client (RFC 6749 §4.1.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizeRefusal {
    Page(String),
    Redirect(String),
}

/// Where the consent page's request stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizationState {
    Pending(Box<OAuthRequest>),
    /// Decided (approved with a fresh code, or denied): where to send the browser.
    Redirect(String),
    /// Expired, already used or unknown: nothing more happens.
    Over,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn secret(prefix: &str) -> String {
    format!("{prefix}{}", base32(&random_bytes::<32>()))
}

/// `BASE64URL(SHA-256(verifier))` equals the challenge (RFC 7636 §4.6), compared in constant
/// time. The verifier must be 43–128 unreserved characters.
fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    use sha2::Digest;
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    well_formed
        && sluice_store::hashes_equal(
            blake3::hash(computed.as_bytes()).as_bytes(),
            blake3::hash(challenge.as_bytes()).as_bytes(),
        )
}

/// `uri` with `pairs` appended to its query.
fn with_query(uri: &str, pairs: &[(&str, &str)]) -> String {
    let Ok(mut url) = url::Url::parse(uri) else { return uri.to_owned() };
    {
        let mut query = url.query_pairs_mut();
        for (k, v) in pairs {
            query.append_pair(k, v);
        }
    }
    url.into()
}

/// A user code: eight characters without look-alikes, shown as `ABCD-EFGH`.
fn user_code() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let raw: String =
        random_bytes::<8>().iter().map(|b| ALPHABET[usize::from(*b) % 32] as char).collect();
    format!("{}-{}", &raw[..4], &raw[4..])
}

/// The reach setting in the database: `None` when off, or when its seal does not match.
pub(crate) fn load(store: &sluice_store::Store) -> Result<Option<Reach>, sluice_store::StoreError> {
    let text = store.sealed_text(REACH_KEY)?;
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
}

/// Checks a public URL: `https://host[:port]` and nothing else (no path, query, fragment or
/// credentials); returns it without a trailing slash.
pub fn parse_public_url(raw: &str) -> Result<String, Failure> {
    let bad = |why: &str| Failure::new(ErrorCode::InvalidArgument, format!("public URL: {why}"));
    let url = url::Url::parse(raw.trim()).map_err(|e| bad(&e.to_string()))?;
    if url.scheme() != "https" {
        return Err(bad("must start with https:// (hosted assistants only call HTTPS)"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not carry a user name or password"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(bad("must be just the address, without a path, query or fragment"));
    }
    let Some(host) = url.host_str() else { return Err(bad("has no host")) };
    Ok(match url.port() {
        Some(port) => format!("https://{host}:{port}"),
        None => format!("https://{host}"),
    })
}

/// Checks a redirect URI the user allows: absolute, no fragment, `https` or loopback `http`.
fn parse_redirect(raw: &str) -> Result<String, Failure> {
    let bad = |why: &str| Failure::new(ErrorCode::InvalidArgument, format!("redirect URI: {why}"));
    let url = url::Url::parse(raw.trim()).map_err(|e| bad(&e.to_string()))?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    if !(url.scheme() == "https" || (url.scheme() == "http" && loopback)) {
        return Err(bad("must be https, or http on a loopback address"));
    }
    if url.fragment().is_some() {
        return Err(bad("must not have a fragment"));
    }
    Ok(url.into())
}

/// A name as a client registered it, made safe to show: control and format characters
/// dropped, at most 60 characters, "Unnamed client" when nothing is left.
fn client_name(raw: Option<&str>) -> String {
    let shown = sluice_core::text::visible(raw.unwrap_or_default().trim()).into_owned();
    let name: String = shown.chars().take(60).collect();
    if name.trim().is_empty() { "Unnamed client".to_owned() } else { name.trim().to_owned() }
}

impl Engine {
    /// The reach setting while it is on; `None` when off, or when its seal does not match.
    /// Cached with the rest of the engine's state until the database changes.
    pub fn reach(&self) -> Result<Option<Reach>, Failure> {
        Ok(self.refresh()?.reach.clone())
    }

    /// Turns reach on (or changes it): the user's decision. A project whose commands run in
    /// `any` mode is exposed without them.
    pub fn set_reach(&self, req: &ReachRequest) -> Result<Reach, Failure> {
        let reach = self.check_reach(req)?;
        let before = self.reach()?;
        self.keep_openai_key(Some(&reach), req.api_key.as_ref().map(ApiKey::as_str))?;
        self.store_reach(&reach)?;
        self.record_human("reach.on", None, AuditOutcome::Ok, None);
        self.narrow_grants(before.as_ref(), &reach);
        Ok(reach)
    }

    /// The setting [`Engine::set_reach`] would store for `req`, checked but not stored (the
    /// window's question names exactly what turning reach on exposes).
    pub fn check_reach(&self, req: &ReachRequest) -> Result<Reach, Failure> {
        let url = req.url.as_deref().map(str::trim).filter(|u| !u.is_empty());
        if let Some(tunnel) = &req.tunnel {
            tunnel.validate(url)?;
        } else if url.is_none() {
            return Err(Failure::new(
                ErrorCode::InvalidArgument,
                "give your tunnel's public URL (https://…), or choose a tunnel for Sluice to \
                 run",
            ));
        }
        let openai = matches!(req.tunnel, Some(Tunnel::OpenAi { .. }));
        let given = match url {
            _ if openai => Some(OPENAI_ORIGIN.to_owned()),
            url => url.map(parse_public_url).transpose()?,
        };
        let learned = given.is_none();
        // The same tunnel keeps running across a change of the rest: keep what it announced.
        let announced = self.reach()?.filter(|old| {
            learned && old.learned && old.tunnel == req.tunnel && old.port == req.port
        });
        let public_url = given.or(announced.map(|old| old.public_url)).unwrap_or_default();
        if req.port == 0 {
            return Err(Failure::new(ErrorCode::InvalidArgument, "the reach port must be 1–65535"));
        }
        if req.projects.is_empty() {
            return Err(Failure::new(
                ErrorCode::InvalidArgument,
                "name at least one project to expose (--project NAME)",
            ));
        }
        let mut ids = Vec::new();
        for reference in &req.projects {
            ids.push(self.find_project(reference)?.id);
        }
        ids.sort();
        ids.dedup();
        let redirects =
            req.redirects.iter().map(|r| parse_redirect(r)).collect::<Result<_, _>>()?;
        let reach = Reach {
            learned,
            public_url,
            tunnel: req.tunnel.clone(),
            port: req.port,
            projects: ids,
            write: req.write,
            redirects,
        };
        match &reach.tunnel {
            Some(Tunnel::OpenAi { tunnel_id }) => {
                self.openai_key_for(tunnel_id, req.api_key.as_ref().map(ApiKey::as_str))?;
            }
            // Said now rather than when the tray first tries to start it.
            Some(_) => drop(self.tunnel_command(&reach)?),
            None => {}
        }
        Ok(reach)
    }

    /// Seals `reach` as the setting; every process follows.
    fn store_reach(&self, reach: &Reach) -> Result<(), Failure> {
        let text = serde_json::to_string(reach)
            .map_err(|e| Failure::new(ErrorCode::Internal, e.to_string()))?;
        self.store.set_sealed_text(REACH_KEY, Some(&text)).map_err(store_failure)?;
        self.reach_changed();
        Ok(())
    }

    /// Turns reach off, revokes every remote token and denies the connection requests still
    /// waiting; returns how many tokens this revoked.
    pub fn reach_off(&self) -> Result<usize, Failure> {
        self.store.set_sealed_text(REACH_KEY, None).map_err(store_failure)?;
        self.keep_openai_key(None, None)?;
        let mut revoked = 0;
        for token in self.tokens()? {
            if token.remote && token.revoked_ms.is_none() {
                self.store.revoke_token(&token.id).map_err(store_failure)?;
                revoked += 1;
            }
        }
        let now = sluice_store::now_ms();
        for request in self.store.pending_oauth_requests(now).map_err(store_failure)? {
            // One changed outside Sluice cannot be decided, nor ever approved.
            let _ = self.store.decide_oauth_request(&request.id, false);
        }
        self.record_human("reach.off", None, AuditOutcome::Ok, None);
        self.reach_changed();
        self.emit(EngineEvent::TokensChanged);
        Ok(revoked)
    }

    /// The setting or its requests changed: every process rereads them, and the tray and the
    /// window redraw (the tray lists connection requests beside approvals).
    fn reach_changed(&self) {
        self.invalidate();
        paths::nudge(&self.data_dir);
        let paused = self.is_paused().unwrap_or(true);
        self.emit(EngineEvent::AccessChanged { paused });
    }

    fn reach_on(&self) -> Result<Reach, OAuthError> {
        self.reach().map_err(OAuthError::internal)?.filter(Reach::ready).ok_or_else(|| {
            OAuthError::new("temporarily_unavailable", "reach from the web is off in Sluice")
        })
    }

    /// Dynamic client registration (RFC 7591): public clients only (`none` authentication),
    /// the code grant, and redirect URIs on the allow-list; within `source`'s budget (see
    /// [`budget`]; `None` when the tunnel does not say where requests come from).
    pub fn register_oauth_client(
        &self,
        name: Option<&str>,
        redirect_uris: &[String],
        auth_method: Option<&str>,
        source: Option<&str>,
    ) -> Result<OAuthClient, OAuthError> {
        let reach = self.reach_on()?;
        if redirect_uris.is_empty() || redirect_uris.len() > 8 {
            return Err(OAuthError::new(
                "invalid_redirect_uri",
                "register between one and eight redirect URIs",
            ));
        }
        if let Some(uri) = redirect_uris.iter().find(|u| !reach.allows_redirect(u)) {
            return Err(OAuthError::new(
                "invalid_redirect_uri",
                format!(
                    "{} is not a redirect URI Sluice accepts; the user can allow it with `sluice \
                     reach on --redirect URI`",
                    sluice_core::text::visible(uri)
                ),
            ));
        }
        if auth_method.is_some_and(|m| m != "none") {
            return Err(OAuthError::new(
                "invalid_client_metadata",
                "only public clients are registered (token_endpoint_auth_method \"none\", with \
                 PKCE)",
            ));
        }
        let client = OAuthClient {
            id: format!("slcl_{}", base32(&random_bytes::<16>())),
            name: client_name(name),
            redirect_uris: redirect_uris.to_vec(),
            created_ms: sluice_store::now_ms(),
        };
        self.make_room_for_client(source);
        self.store.put_oauth_client(&client).map_err(|e| OAuthError::internal(store_failure(e)))?;
        self.client_from(&client.id, source);
        Ok(client)
    }

    /// Starts an authorization: validated in the order RFC 6749 asks (client and redirect URI
    /// first, shown on the page when wrong; then the rest, sent back to the client), then a
    /// pending request for the user, within `source`'s budget (see [`budget`]).
    pub fn begin_authorization(
        &self,
        params: &AuthorizeParams,
        source: Option<&str>,
    ) -> Result<OAuthRequest, AuthorizeRefusal> {
        let page = |why: &str| AuthorizeRefusal::Page(why.to_owned());
        let reach = self.reach_on().map_err(|e| page(&e.description))?;
        let client_id = params.client_id.as_deref().ok_or_else(|| page("client_id is missing"))?;
        let client = self
            .store
            .oauth_client(client_id)
            .map_err(|_| page("Sluice could not read its registrations"))?
            .ok_or_else(|| page("this client is not registered with Sluice"))?;
        let redirect =
            params.redirect_uri.as_deref().ok_or_else(|| page("redirect_uri is missing"))?;
        if !client.redirect_uris.iter().any(|r| r == redirect) || !reach.allows_redirect(redirect) {
            return Err(page("redirect_uri is not one this client registered"));
        }
        let back = |error: &str, why: &str| {
            let mut pairs = vec![("error", error), ("error_description", why)];
            if let Some(state) = params.state.as_deref() {
                pairs.push(("state", state));
            }
            pairs.push(("iss", reach.issuer()));
            AuthorizeRefusal::Redirect(with_query(redirect, &pairs))
        };
        if params.response_type.as_deref() != Some("code") {
            return Err(back("unsupported_response_type", "response_type must be code"));
        }
        let challenge = params.code_challenge.as_deref().unwrap_or_default();
        if params.code_challenge_method.as_deref() != Some("S256")
            || challenge.len() != 43
            || !challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(back(
                "invalid_request",
                "PKCE with code_challenge_method S256 is required",
            ));
        }
        let resource = params.resource.clone().unwrap_or_else(|| reach.resource());
        if resource != reach.resource() {
            return Err(back("invalid_target", "resource must be this server's /mcp"));
        }
        let now = sluice_store::now_ms();
        let pending = self
            .store
            .pending_oauth_requests(now)
            .map_err(|_| back("server_error", "Sluice could not read its pending requests"))?;
        if let budget::Room::Full = self.make_room_for_request(&pending, source) {
            return Err(back(
                "temporarily_unavailable",
                "too many connection requests are waiting for the user",
            ));
        }
        let id = format!("slrq_{}", base32(&random_bytes::<16>()));
        let new = NewOAuthRequest {
            id: id.clone(),
            client_id: client.id.clone(),
            redirect_uri: redirect.to_owned(),
            state: params.state.clone(),
            code_challenge: challenge.to_owned(),
            resource,
            user_code: user_code(),
            expires_ms: now.saturating_add(millis(REQUEST_TTL)),
        };
        self.store
            .insert_oauth_request(&new)
            .map_err(|_| back("server_error", "Sluice could not record the request"))?;
        let request = self
            .store
            .oauth_request(&id)
            .ok()
            .flatten()
            .ok_or_else(|| back("server_error", "the request vanished"))?;
        self.request_from(&request.id, source);
        tracing::info!(request = %request.id, "a hosted assistant asks to connect");
        self.reach_changed();
        Ok(request)
    }

    /// Connection requests waiting for the user.
    pub fn oauth_requests(&self) -> Result<Vec<OAuthRequest>, Failure> {
        self.store.pending_oauth_requests(sluice_store::now_ms()).map_err(store_failure)
    }

    /// A connection request by id, pending or decided; `None` when there is no such request.
    pub fn oauth_request(&self, id: &str) -> Result<Option<OAuthRequest>, Failure> {
        self.store.oauth_request(id).map_err(store_failure)
    }

    /// The user's decision on a connection request (CLI, tray, window). Decided once.
    pub fn decide_oauth_request(&self, id: &str, approve: bool) -> Result<OAuthRequest, Failure> {
        let request = self.store.oauth_request(id).map_err(store_failure)?.ok_or_else(|| {
            Failure::new(ErrorCode::NotFound, format!("no connection request {id:?}"))
        })?;
        if request.tampered {
            return Err(Failure::new(
                ErrorCode::Forbidden,
                "this request was changed outside Sluice and cannot be approved",
            ));
        }
        if !self.store.decide_oauth_request(id, approve).map_err(store_failure)? {
            return Err(Failure::new(
                ErrorCode::Conflict,
                "this request was already decided or has expired",
            ));
        }
        let action = if approve { "reach.approve" } else { "reach.deny" };
        self.record_human_detail(
            action,
            None,
            AuditOutcome::Ok,
            None,
            Some(format!(
                "{} ({})",
                ClientIdentity::of(&request.client_id, &request.client_name).label(),
                request.id
            )),
        );
        self.reach_changed();
        self.store
            .oauth_request(id)
            .map_err(store_failure)?
            .ok_or_else(|| Failure::new(ErrorCode::NotFound, "the request vanished"))
    }

    /// Where the consent page's request stands; an approved request mints its code here, once.
    pub fn authorization_state(&self, id: &str) -> AuthorizationState {
        let Ok(Some(request)) = self.store.oauth_request(id) else {
            return AuthorizationState::Over;
        };
        let Ok(Some(reach)) = self.reach() else { return AuthorizationState::Over };
        let state = request.state.as_deref();
        let finish = |pairs: &mut Vec<(&str, String)>| {
            if let Some(state) = state {
                pairs.push(("state", state.to_owned()));
            }
            pairs.push(("iss", reach.issuer().to_owned()));
            let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            with_query(&request.redirect_uri, &pairs)
        };
        match request.decision {
            OAuthDecision::Pending if request.expires_ms > sluice_store::now_ms() => {
                AuthorizationState::Pending(Box::new(request))
            }
            OAuthDecision::Pending => AuthorizationState::Over,
            OAuthDecision::Denied => AuthorizationState::Redirect(finish(&mut vec![
                ("error", "access_denied".to_owned()),
                ("error_description", "the user declined in Sluice".to_owned()),
            ])),
            OAuthDecision::Approved => {
                if request.code_minted {
                    return AuthorizationState::Over;
                }
                let code = secret("slco_");
                let hash = sluice_store::token_hash(&self.secret, &code);
                let expires = sluice_store::now_ms().saturating_add(millis(CODE_TTL));
                match self.store.mint_oauth_code(&request.id, &hash, expires) {
                    Ok(true) => AuthorizationState::Redirect(finish(&mut vec![("code", code)])),
                    _ => AuthorizationState::Over,
                }
            }
        }
    }
}
