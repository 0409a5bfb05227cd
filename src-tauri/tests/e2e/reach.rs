//! Reach from the web in the real window: turned on in Settings (a "no" in the native dialog
//! changes nothing, a yes turns it on), the connector URL shown; Change… fills the form in with
//! the setting, and a "no" to the change keeps reach as it was; a hosted assistant registers and
//! asks to connect through the tunnel's real port (HTTP, as the tunnel forwards it, with the
//! public `Host`); the window shows the request with the code the consent page shows; Approve
//! asks natively (a no leaves it waiting), and once approved the consent page sends the browser
//! back with a code, which the assistant redeems: its token is marked remote under Tokens. Then
//! Turn off, which revokes it, after which the port answers nothing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use sluice_ipc::reach::{CONNECT_TITLE, REACH_TITLE};
use thirtyfour::By;

use crate::driver::{Native, Session, by_text};

const HOST: &str = "sluice-e2e.example";
const CALLBACK: &str = "https://claude.ai/api/mcp/auth_callback";
/// A PKCE pair: the challenge is BASE64URL(SHA-256(verifier)).
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K9uhvlrWXzrbDhzcIv0L6hOdq0";
const CHALLENGE: &str = "71sBKApreKw_UZi7L3qzh2gmzhu2A3KNpyV1F7ko0B8";
const PANEL: &str = "div[@data-testid='reach']";

/// One HTTP/1.1 exchange with the reach port, as the tunnel forwards it: the status, the
/// headers (lower-cased names) and the body; `None` while nothing listens there.
fn http(
    port: u16,
    method: &str,
    path: &str,
    body: Option<(&str, &str)>,
) -> Option<(u16, String, String)> {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n");
    if let Some((kind, body)) = body {
        req.push_str(&format!("Content-Type: {kind}\r\nContent-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    req.push_str(body.map_or("", |(_, body)| body));
    conn.write_all(req.as_bytes()).ok()?;
    let mut raw = String::new();
    conn.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, head.to_lowercase(), body.to_owned()))
}

/// The value of `"key":"…"` in a JSON text (the registration's answer).
fn json_string(text: &str, key: &str) -> String {
    let start = text.find(&format!("\"{key}\":\"")).unwrap_or_else(|| panic!("{key} in {text}"));
    let rest = &text[start + key.len() + 4..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// The `location` header of a response head.
fn location(head: &str) -> String {
    head.lines()
        .find_map(|l| l.strip_prefix("location: "))
        .unwrap_or_else(|| panic!("no location in {head}"))
        .trim()
        .to_owned()
}

/// A URI as a query parameter's value.
fn escaped(uri: &str) -> String {
    uri.replace(':', "%3A").replace('/', "%2F")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Turns reach on for `project` from Settings, lets an assistant ask to connect over the real
/// port, approves it in the window, and turns reach off.
pub async fn on_approve_off(s: &Session, project: &str) {
    let port = free_port();
    s.click(by_text("nav", "Settings")).await;
    s.wait_text(By::Css("[data-testid=reach-status]"), "Off.").await;
    s.click(by_text(PANEL, "Turn on…")).await;
    let form = "form[aria-label='Turn on reach from the web']";
    s.type_into(By::Css(format!("{form} input[name=reach-url]")), &format!("https://{HOST}")).await;
    s.type_into(By::Css(format!("{form} input[name=reach-port]")), &port.to_string()).await;
    s.click(By::XPath(format!(
        "//form[@aria-label='Turn on reach from the web']//label[normalize-space()='{project}']/input"
    )))
    .await;
    // The native question's default (Return) changes nothing.
    s.click(By::Css(format!("{form} button[type=submit]"))).await;
    s.answer_native(REACH_TITLE, Native::Return).await;
    s.wait_text(By::Css(format!("{form} .error")), "nothing changed").await;
    assert!(http(port, "GET", "/.well-known/oauth-authorization-server", None).is_none());
    s.click(By::Css(format!("{form} button[type=submit]"))).await;
    s.answer_native(REACH_TITLE, Native::Accept).await;
    let connector = format!("https://{HOST}/mcp");
    s.wait_text(By::Css("[data-testid=reach-connector-url]"), &connector).await;
    let status = s.wait_text(By::Css("[data-testid=reach-status]"), "On.").await;
    assert!(status.contains("may only read") && status.contains(project), "{status}");

    // Change… opens the same form filled in; a quick tunnel is said to change its address; a
    // no in the native dialog keeps reach as it was.
    s.click(by_text(PANEL, "Change…")).await;
    let change = "form[aria-label='Change reach from the web']";
    let url = s.wait_value(By::Css(format!("{change} input[name=reach-url]")), "https://").await;
    assert_eq!(url, format!("https://{HOST}"));
    let checked = format!(
        "return [...document.querySelectorAll(\"{change} input:checked\")].map(i => i.value)"
    );
    assert_eq!(s.eval(&checked).await.as_array().unwrap().len(), 3, "tunnel, project, access");
    s.click(By::Css(format!("{change} input[name=reach-tunnel][value=cloudflared]"))).await;
    s.wait_text(By::Css("[data-testid=reach-quick-note]"), "new hostname every time it starts")
        .await;
    s.click(By::Css(format!("{change} input[name=reach-tunnel][value=own]"))).await;
    s.click(By::Css(format!("{change} input[name=reach-access][value=read-write]"))).await;
    s.click(By::Css(format!("{change} button[type=submit]"))).await;
    s.answer_native(REACH_TITLE, Native::Return).await;
    s.wait_text(By::Css(format!("{change} .error")), "nothing changed").await;
    s.click(by_text("form[@aria-label='Change reach from the web']", "Cancel")).await;
    s.wait_text(By::Css("[data-testid=reach-status]"), "may only read").await;

    // The tunnel's port comes up (the server follows the setting every half second).
    let deadline = Instant::now() + Duration::from_secs(30);
    let metadata = loop {
        if let Some(r) = http(port, "GET", "/.well-known/oauth-authorization-server", None) {
            break r;
        }
        assert!(Instant::now() < deadline, "the reach port {port} never listened");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(metadata.0, 200, "{metadata:?}");
    assert!(metadata.2.contains(&format!("https://{HOST}/oauth/authorize")), "{metadata:?}");

    // A hosted assistant registers, with a name that tries to disguise itself, and asks.
    let registration = format!(
        r#"{{"client_name":"E2E\u202eClaude <b>x</b>","redirect_uris":["{CALLBACK}"],"token_endpoint_auth_method":"none"}}"#
    );
    let (status, _, body) =
        http(port, "POST", "/oauth/register", Some(("application/json", &registration))).unwrap();
    assert_eq!(status, 201, "{body}");
    let client = json_string(&body, "client_id");
    let query = format!(
        "/oauth/authorize?response_type=code&client_id={client}&redirect_uri={}&state=e2e&\
         code_challenge={CHALLENGE}&code_challenge_method=S256",
        escaped(CALLBACK)
    );
    let (status, head, _) = http(port, "GET", &query, None).unwrap();
    assert_eq!(status, 303, "{head}");
    let consent = location(&head);
    assert!(consent.starts_with("/oauth/consent/slrq_"), "{consent}");
    let (_, _, page) = http(port, "GET", &consent, None).unwrap();

    // The window shows it, with the code the browser's page shows, the name made visible.
    let card = "[data-testid=reach-request]";
    let shown = s.wait_text(By::Css(card), "asks to connect").await;
    assert!(
        shown.contains("“E2E⟨U+202E⟩Claude <b>x</b>” (unverified name) asks to connect"),
        "{shown}"
    );
    assert!(shown.contains("Returns to claude.ai"), "{shown}");
    let code = s.wait_text(By::Css("[data-testid=reach-code]"), "Code").await;
    let code = code.trim_start_matches("Code").trim().to_owned();
    assert_eq!(code.len(), 9, "{code}");
    assert!(page.contains(&code), "the consent page shows {code}: {page}");

    // Approve asks natively: a no leaves the request waiting, a yes approves it.
    let approve = By::XPath(
        "//article[@data-testid='reach-request'][@data-armed='true']//button[normalize-space()='Approve…']"
            .to_owned(),
    );
    s.click(approve.clone()).await;
    s.answer_native(CONNECT_TITLE, Native::Return).await;
    s.wait_text(By::Css(format!("{card} .error")), "nothing changed").await;
    let (status, _, _) = http(port, "GET", &consent, None).unwrap();
    assert_eq!(status, 200, "still waiting: the page shows the code again");
    s.click(approve).await;
    s.answer_native(CONNECT_TITLE, Native::Accept).await;
    s.wait_text(By::Css("[data-testid=reach-no-requests]"), "No assistant is asking").await;
    // Decided: the consent page now sends the browser back with a one-time code.
    let (status, head, _) = http(port, "GET", &consent, None).unwrap();
    assert_eq!(status, 303, "{head}");
    let back = location(&head);
    assert!(back.starts_with(&format!("{CALLBACK}?code=slco_")), "{back}");
    assert!(back.contains("state=e2e"), "{back}");

    // The assistant redeems the code: its token is marked remote under Tokens.
    let code = back.split("code=").nth(1).unwrap().split('&').next().unwrap();
    let form = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={}&client_id={client}&\
         code_verifier={VERIFIER}",
        escaped(CALLBACK)
    );
    let kind = "application/x-www-form-urlencoded";
    let (status, _, body) = http(port, "POST", "/oauth/token", Some((kind, &form))).unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(json_string(&body, "access_token").starts_with("slr_"), "{body}");
    s.click(by_text("nav", "Tokens")).await;
    // The badge is on the assistant's row, and on no other.
    let marked =
        By::XPath("//tr[@data-testid='token-row'][.//*[@data-testid='token-remote']]".to_owned());
    // A registered client's name, claimed and not verified, says so on the token too.
    s.wait_text(marked, "remote: “E2E⟨U+202E⟩Claude <b>x</b>” (unverified name)").await;
    let badges =
        s.eval("return document.querySelectorAll('[data-testid=token-remote]').length").await;
    assert_eq!(badges, serde_json::json!(1), "only the remote token is marked");
    s.click(by_text("nav", "Settings")).await;
    s.wait_text(By::Css("[data-testid=reach-remote-tokens]"), "1 remote token live").await;

    // Turn off, after confirming in place: the port answers nothing more.
    s.click(by_text(PANEL, "Turn off…")).await;
    s.click(by_text(PANEL, "Turn off")).await;
    s.wait_text(By::Css("[data-testid=reach] [role=status]"), "1 remote token revoked").await;
    s.wait_text(By::Css("[data-testid=reach-status]"), "Off.").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Some((status, _, _)) =
        http(port, "GET", "/.well-known/oauth-authorization-server", None)
    {
        assert_ne!(status, 200, "reach is off: nothing is served");
        assert!(Instant::now() < deadline, "the reach port {port} stayed open");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
