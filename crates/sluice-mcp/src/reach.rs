//! The remote front: what a tunnel's edge reaches while the user has reach from the web on.
//!
//! A second listener on loopback, never the local clients' port, so a request is remote by the
//! port it arrived on and not by anything it says. It serves the OAuth metadata (RFC 9728, RFC
//! 8414), client registration (RFC 7591) and metadata documents ([`crate::cimd`]), the consent
//! page, the token endpoint, and `/mcp` behind the same gate as the local front, where only
//! remote tokens bound to this resource are accepted. `serve_reach` (`reach_owner.rs`) binds it
//! when reach is turned on, and closes the listener and every connection on it the moment reach
//! is turned off or changed.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use sluice_engine::Engine;
use sluice_engine::reach::{
    AuthorizationState, AuthorizeParams, AuthorizeRefusal, ClientIdentity, OAuthError, Reach,
    TokenParams, Tunnel, is_metadata_client_id,
};
use tokio_util::sync::CancellationToken;

use crate::cimd::MetadataFetcher;
use crate::http::{Front, build_router, closing, content_type_is};
use crate::limits::{Limiter, Limits, SourceBudget};

/// The largest OAuth request body read (a registration or a token request).
const MAX_FORM_BYTES: usize = 16 * 1024;
/// Requests per second the unauthenticated OAuth endpoints answer, together (bursts of twice
/// as many): a connection takes a handful, a flood from the internet is cut off here.
const OAUTH_PER_SEC: f64 = 20.0;
/// Requests per second one source may make of those endpoints (bursts of [`SOURCE_BURST`]):
/// a connection takes a handful, so one source's flood cannot spend everyone's budget.
const SOURCE_PER_SEC: f64 = 5.0;
const SOURCE_BURST: f64 = 20.0;
/// The consent page reloads itself this often while the user decides.
const CONSENT_REFRESH_SECS: u32 = 2;

struct Door {
    engine: Arc<Engine>,
    reach: Reach,
    /// Unauthenticated requests (registration, authorization, token) share one budget.
    limiter: Limiter,
    /// Each source's share of them, when the tunnel says where requests come from.
    sources: SourceBudget,
    metadata: MetadataFetcher,
}

/// The remote front for `reach`: OAuth endpoints beside `/mcp`, all behind a check that reach
/// is still on exactly as it was when the router was built.
pub(crate) fn remote_router(
    engine: Arc<Engine>,
    reach: &Reach,
    limits: Limits,
    shutdown: CancellationToken,
) -> axum::Router {
    let origin = reach.public_url.clone();
    let front = Front::Remote {
        host: reach.host().to_owned(),
        origin: origin.clone(),
        resource_metadata: format!("{origin}/.well-known/oauth-protected-resource/mcp"),
    };
    let mcp = build_router(engine.clone(), front, limits, shutdown, true);
    let door = Arc::new(Door {
        engine,
        reach: reach.clone(),
        limiter: Limiter::new(Limits { auth_failures_per_sec: OAUTH_PER_SEC, ..limits }),
        sources: SourceBudget::new(SOURCE_PER_SEC, SOURCE_BURST),
        metadata: MetadataFetcher::new(),
    });
    let oauth = axum::Router::new()
        .route("/.well-known/oauth-protected-resource", get(resource_metadata))
        .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
        .route("/.well-known/oauth-authorization-server", get(server_metadata))
        .route("/oauth/register", post(register))
        .route("/oauth/authorize", get(authorize))
        .route("/oauth/consent/{id}", get(consent))
        .route("/oauth/token", post(token))
        .with_state(door.clone());
    mcp.merge(oauth).layer(middleware::from_fn_with_state(door, still_on))
}

/// Every request: reach still on as configured, the one public `Host`, and within budget for
/// the unauthenticated endpoints. A refusal closes its connection, as the gate's do.
async fn still_on(State(door): State<Arc<Door>>, req: Request, next: Next) -> Response {
    match refusal(&door, &req) {
        Some(refused) => closing(refused),
        None => next.run(req).await,
    }
}

fn refusal(door: &Door, req: &Request) -> Option<Response> {
    match door.engine.reach() {
        Err(_) => return Some(try_again("Sluice is busy; try again")),
        Ok(None) => {
            return Some(text(StatusCode::NOT_FOUND, "reach from the web is off in Sluice"));
        }
        // This listener gives way to one for the new setting within a moment.
        Ok(Some(current)) if current != door.reach => {
            return Some(try_again("reach from the web just changed in Sluice; try again"));
        }
        Ok(Some(_)) if !door.reach.ready() => {
            return Some(try_again("waiting for the tunnel's public address; try again"));
        }
        Ok(Some(_)) => {}
    }
    let host_ok = req.headers().get_all(header::HOST).iter().count() == 1
        && req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| h.eq_ignore_ascii_case(door.reach.host()));
    if !host_ok {
        return Some(text(StatusCode::FORBIDDEN, "forbidden: unexpected Host header"));
    }
    // The endpoints that register, record or mint something share one budget; the consent
    // page only reads its request (it reloads itself while the person decides).
    // One source's flood is cut off by its own budget before it spends the shared one.
    let source = source_of(&door.reach, req.headers());
    if req.uri().path().starts_with("/oauth/")
        && !req.uri().path().starts_with("/oauth/consent/")
        && let Err(wait) = source
            .as_deref()
            .map_or(Ok(()), |s| door.sources.take(s))
            .and_then(|()| door.limiter.auth_failed())
    {
        let mut res = text(StatusCode::TOO_MANY_REQUESTS, "too many requests; slow down");
        let secs = wait.as_secs().max(1).to_string();
        if let Ok(v) = HeaderValue::from_str(&secs) {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return Some(res);
    }
    None
}

/// Where a request came from, as the tunnel in force reports it: Cloudflare's
/// `CF-Connecting-IP` behind cloudflared (its edge sets it, replacing a client's own), else the
/// last `X-Forwarded-For` address (the one a tunnel appends: ngrok, Tailscale, a reverse proxy).
/// An IPv6 address counts by its /64, which one host holds whole. `None` when nothing
/// (parseable) says: then only the shared budgets apply. Kept in memory, never logged.
pub(crate) fn source_of(reach: &Reach, headers: &HeaderMap) -> Option<String> {
    let cloudflare =
        matches!(reach.tunnel, Some(Tunnel::Cloudflared | Tunnel::CloudflaredNamed { .. }));
    let raw = if cloudflare {
        let mut all = headers.get_all("cf-connecting-ip").iter();
        match (all.next(), all.next()) {
            (Some(one), None) => one.to_str().ok()?.trim().to_owned(),
            _ => return None,
        }
    } else {
        let last = headers.get_all("x-forwarded-for").iter().next_back()?;
        last.to_str().ok()?.rsplit(',').next()?.trim().to_owned()
    };
    match raw.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(v4) => Some(v4.to_string()),
        std::net::IpAddr::V6(v6) => {
            let s = v6.segments();
            Some(format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3]))
        }
    }
}

/// A 503 with `Retry-After: 1`.
fn try_again(message: &str) -> Response {
    let mut res = text(StatusCode::SERVICE_UNAVAILABLE, message);
    res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    res
}

fn text(status: StatusCode, message: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message.to_owned())
        .into_response()
}

/// JSON that must not be cached (RFC 6749 §5.1).
fn no_store(status: StatusCode, body: serde_json::Value) -> Response {
    let mut res = (status, axum::Json(body)).into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn oauth_error(status: StatusCode, e: OAuthError) -> Response {
    no_store(status, json!({ "error": e.error, "error_description": e.description }))
}

/// A 400 with the OAuth error `error` (RFC 6749 §5.2, RFC 7591 §3.2.2).
fn bad_request(error: &'static str, why: String) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, OAuthError { error, description: why })
}

async fn resource_metadata(State(door): State<Arc<Door>>) -> Response {
    let reach = &door.reach;
    no_store(
        StatusCode::OK,
        json!({
            "resource": reach.resource(),
            "authorization_servers": [reach.issuer()],
            "bearer_methods_supported": ["header"],
            "resource_name": "Sluice",
        }),
    )
}

async fn server_metadata(State(door): State<Arc<Door>>) -> Response {
    let issuer = door.reach.issuer();
    no_store(
        StatusCode::OK,
        json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/oauth/authorize"),
            "token_endpoint": format!("{issuer}/oauth/token"),
            "registration_endpoint": format!("{issuer}/oauth/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": true,
        }),
    )
}

/// The body's parameters, each at most once (RFC 6749 §3.1), as a JSON object for serde.
fn form_params(bytes: &[u8]) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut out = serde_json::Map::new();
    for (k, v) in form_urlencoded::parse(bytes) {
        if out.insert(k.clone().into_owned(), v.into_owned().into()).is_some() {
            return Err(format!("parameter {k:?} is given more than once"));
        }
    }
    Ok(out)
}

async fn read_body(body: Body) -> Option<bytes::Bytes> {
    axum::body::to_bytes(body, MAX_FORM_BYTES).await.ok()
}

async fn register(State(door): State<Arc<Door>>, headers: HeaderMap, body: Body) -> Response {
    #[derive(serde::Deserialize)]
    struct Registration {
        client_name: Option<String>,
        #[serde(default)]
        redirect_uris: Vec<String>,
        token_endpoint_auth_method: Option<String>,
    }
    let bad = |why: String| bad_request("invalid_client_metadata", why);
    if !content_type_is(&headers, "application/json") {
        return bad("send the registration as application/json".into());
    }
    let Some(bytes) = read_body(body).await else { return bad("the body is too large".into()) };
    // serde refuses a member given twice.
    let reg: Registration = match serde_json::from_slice(&bytes) {
        Ok(reg) => reg,
        Err(e) => return bad(format!("the registration is not valid JSON: {e}")),
    };
    let source = source_of(&door.reach, &headers);
    match door.engine.register_oauth_client(
        reg.client_name.as_deref(),
        &reg.redirect_uris,
        reg.token_endpoint_auth_method.as_deref(),
        source.as_deref(),
    ) {
        Ok(client) => no_store(
            StatusCode::CREATED,
            json!({
                "client_id": client.id,
                "client_id_issued_at": client.created_ms / 1000,
                "client_name": client.name,
                "redirect_uris": client.redirect_uris,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }),
        ),
        Err(e) => oauth_error(StatusCode::BAD_REQUEST, e),
    }
}

fn redirect(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(v) => {
            let mut res = StatusCode::SEE_OTHER.into_response();
            res.headers_mut().insert(header::LOCATION, v);
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(_) => {
            page(StatusCode::BAD_REQUEST, "Sluice", "The redirect address is not valid.", None)
        }
    }
}

async fn authorize(State(door): State<Arc<Door>>, req: Request) -> Response {
    let query = req.uri().query().unwrap_or_default().as_bytes().to_vec();
    let params: AuthorizeParams = match form_params(&query)
        .and_then(|m| serde_json::from_value(m.into()).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(why) => return refusal_page(&why),
    };
    // A client that names itself by its metadata document is recorded from a fresh fetch.
    if let Some(id) = params.client_id.as_deref().filter(|id| is_metadata_client_id(id)) {
        let recorded = match door.metadata.fetch(id).await {
            Ok(body) => door.engine.metadata_client(id, &body).map_err(|e| e.description),
            Err(why) => Err(why),
        };
        if let Err(why) = recorded {
            let why = format!("Sluice could not use this client's metadata document: {why}.");
            return refusal_page(&why);
        }
    }
    let source = source_of(&door.reach, req.headers());
    match door.engine.begin_authorization(&params, source.as_deref()) {
        Ok(request) => redirect(&format!("/oauth/consent/{}", request.id)),
        Err(AuthorizeRefusal::Redirect(to)) => redirect(&to),
        Err(AuthorizeRefusal::Page(why)) => refusal_page(&why),
    }
}

async fn consent(State(door): State<Arc<Door>>, Path(id): Path<String>) -> Response {
    let engine = door.engine.clone();
    let state = tokio::task::spawn_blocking(move || engine.authorization_state(&id)).await;
    match state {
        Ok(AuthorizationState::Pending(request)) => {
            // Only a fetched metadata document vouches for a client; a registered name is its
            // own claim, and says so here as everywhere else.
            let who = match ClientIdentity::of(&request.client_id, &request.client_name) {
                ClientIdentity::Verified { name, host } => format!(
                    "<strong>{}</strong> (verified: its metadata document is at {})",
                    escape(&name),
                    escape(&host)
                ),
                ClientIdentity::Claimed { name } => format!(
                    "A client calling itself <strong>\u{201C}{}\u{201D}</strong> (unverified \
                     name: anyone can register any name)",
                    escape(&name)
                ),
            };
            let body = format!(
                "<p>{who}, returning to {}, asks to connect to Sluice on your computer.</p>\
                 <p>Approve it in Sluice (its window's Settings, its tray, or \
                 <code>sluice reach approve</code>) if Sluice shows this code:</p><p class=code>{}</p><p>This \
                 page continues by itself once you decide. Nothing on this page can approve \
                 it.</p>",
                escape(request.redirect_host()),
                escape(&request.user_code),
            );
            page(StatusCode::OK, "Connect to Sluice?", &body, Some(CONSENT_REFRESH_SECS))
        }
        Ok(AuthorizationState::Redirect(to)) => redirect(&to),
        _ => page(
            StatusCode::GONE,
            "Sluice",
            "This request is over (decided, used or expired). Start again from your assistant.",
            None,
        ),
    }
}

/// HTML-escapes text for the page.
fn escape(s: &str) -> String {
    let shown = sluice_core::text::visible(s);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A 400 page saying why, as text: the reason can quote what the client sent (a parameter's
/// name, a metadata document's member), which must never become markup on this origin.
fn refusal_page(why: &str) -> Response {
    page(StatusCode::BAD_REQUEST, "Sluice", &format!("<p>{}</p>", escape(why)), None)
}

/// A small static page: no script, no outside resources, never framed.
fn page(status: StatusCode, title: &str, body_html: &str, refresh: Option<u32>) -> Response {
    let refresh =
        refresh.map(|s| format!("<meta http-equiv=refresh content={s}>")).unwrap_or_default();
    let html = format!(
        "<!doctype html><html><head><meta charset=utf-8>{refresh}<meta name=viewport \
         content=\"width=device-width\"><title>{t}</title><style>body{{font:16px system-ui;\
         max-width:36em;margin:3em auto;padding:0 1em}}.code{{font:600 2em monospace;\
         letter-spacing:.1em}}</style></head><body><h1>{t}</h1>{body_html}</body></html>",
        t = escape(title),
    );
    let mut res =
        (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    res
}

async fn token(State(door): State<Arc<Door>>, headers: HeaderMap, body: Body) -> Response {
    let bad = |why: String| bad_request("invalid_request", why);
    if !content_type_is(&headers, "application/x-www-form-urlencoded") {
        return bad("send the token request as application/x-www-form-urlencoded".into());
    }
    if headers.contains_key(header::AUTHORIZATION) {
        // Public clients only: a client secret here means a confused client.
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            OAuthError {
                error: "invalid_client",
                description: "Sluice registers public clients only; send no client secret".into(),
            },
        );
    }
    let Some(bytes) = read_body(body).await else { return bad("the body is too large".into()) };
    let params: TokenParams = match form_params(&bytes)
        .and_then(|m| serde_json::from_value(m.into()).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(why) => return bad(why),
    };
    let engine = door.engine.clone();
    match tokio::task::spawn_blocking(move || engine.oauth_token(&params)).await {
        Ok(Ok(tokens)) => no_store(StatusCode::OK, json!(tokens)),
        Ok(Err(e)) => oauth_error(StatusCode::BAD_REQUEST, e),
        Err(_) => bad("the request could not be completed".into()),
    }
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
