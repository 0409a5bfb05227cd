//! Reach from the web through the window's commands, against a real engine: turning it on is
//! asked natively and a "no" changes nothing; the question names what is exposed and the tunnel
//! program Sluice is to run; approving a connection asks too, with the client's name made
//! visible; bad input (a bad tunnel choice, a tunnel program that is not trusted) is refused
//! before anyone is asked; remote tokens are marked and revoked when reach goes off.

use serde_json::{Value, json};
use sluice_engine::reach::{
    AuthorizeParams, ReachRequest, TokenParams, Tunnel, TunnelState, TunnelStatus,
};
use sluice_ipc::dispatch::Question;
use sluice_ipc::reach::{CONNECT_TITLE, REACH_TITLE};

/// A PKCE pair: the challenge is BASE64URL(SHA-256(verifier)).
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K9uhvlrWXzrbDhzcIv0L6hOdq0";
const CHALLENGE: &str = "71sBKApreKw_UZi7L3qzh2gmzhu2A3KNpyV1F7ko0B8";
const CALLBACK: &str = "https://claude.ai/api/mcp/auth_callback";
const URL: &str = "https://sluice.example.com";

/// The window's side (`crate::dispatch::Fixture`) over an engine with two projects.
struct Fixture(crate::dispatch::Fixture);

impl std::ops::Deref for Fixture {
    type Target = crate::dispatch::Fixture;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Fixture {
    /// An engine with two read-write projects, `my-app` and `other`; reach off; the user
    /// answers no until told otherwise.
    fn new() -> Fixture {
        let window = crate::dispatch::Fixture::new(false);
        let other = window.base.folder.with_file_name("other");
        std::fs::create_dir(&other).unwrap();
        for (path, name) in [(&window.base.folder, "my-app"), (&other, "other")] {
            window
                .base
                .engine
                .add_project(
                    path,
                    Some(name),
                    sluice_core::AccessMode::ReadWrite,
                    sluice_core::ExecMode::Off,
                )
                .unwrap();
        }
        Fixture(window)
    }

    fn asked(&self) -> Vec<Question> {
        std::mem::take(&mut *self.user.asked.lock().unwrap())
    }

    fn state(&self) -> Value {
        self.call("reach_state", json!({})).unwrap()
    }

    fn turn_on(&self, write: bool) -> Value {
        self.answer(true);
        let on = self.call("reach_on", on_args(URL, &["my-app"], write)).unwrap();
        self.asked();
        on
    }

    /// A hosted assistant registers as `name` and asks to connect; returns the request's id.
    fn ask_to_connect(&self, name: &str) -> String {
        let e = &self.base.engine;
        let client =
            e.register_oauth_client(Some(name), &[CALLBACK.to_owned()], None, None).unwrap();
        let params = AuthorizeParams {
            response_type: Some("code".into()),
            client_id: Some(client.id.clone()),
            redirect_uri: Some(CALLBACK.into()),
            state: Some("st".into()),
            code_challenge: Some(CHALLENGE.into()),
            code_challenge_method: Some("S256".into()),
            ..AuthorizeParams::default()
        };
        e.begin_authorization(&params, None).unwrap().id
    }
}

fn on_args(url: &str, projects: &[&str], write: bool) -> Value {
    json!({ "args": { "url": url, "projects": projects, "write": write, "port": null, "redirects": null } })
}

/// `reach_on`'s arguments with a tunnel for Sluice to run (`url` may be `null`).
fn tunnel_args(url: Value, projects: &[&str], tunnel: Value) -> Value {
    json!({ "args": {
        "url": url, "projects": projects, "write": false, "port": null, "redirects": null,
        "tunnel": tunnel,
    } })
}

/// An executable shell script at `path`.
fn script(path: &std::path::Path) {
    std::fs::write(path, "#!/bin/sh\nexit 0\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn reach_is_off_until_the_user_says_yes_to_a_question_naming_what_it_exposes() {
    let f = Fixture::new();
    assert_eq!(f.state(), json!({ "setting": null, "requests": [], "remoteTokens": 0 }));

    // "No": nothing changes, and the refusal says so.
    let e = f.call("reach_on", on_args(URL, &["my-app"], false)).unwrap_err();
    assert_eq!(e.code, "denied", "{e:?}");
    assert!(e.message.contains("nothing changed"), "{}", e.message);
    assert_eq!(f.state()["setting"], Value::Null);
    assert_eq!(f.base.engine.reach().unwrap(), None);
    let asked = f.asked();
    assert_eq!(asked.len(), 1);
    let q = &asked[0];
    assert_eq!((q.title, q.yes, q.no), (REACH_TITLE, "Turn on", "Keep as is"));
    for part in ["my-app", "only read (read-only)", "https://sluice.example.com/mcp", "\"any\""] {
        assert!(q.text.contains(part), "{part:?} in {}", q.text);
    }
    assert!(q.text.contains("never exposed to a remote token"), "{}", q.text);
    assert!(!q.text.contains("other"), "only the chosen project: {}", q.text);

    // "Yes": on, exactly as asked.
    let on = f.turn_on(false);
    let setting = &on["setting"];
    assert_eq!(setting["publicUrl"], URL);
    assert_eq!(setting["connectorUrl"], "https://sluice.example.com/mcp");
    assert_eq!(setting["port"], 7879, "the CLI's default port");
    assert_eq!(setting["write"], false);
    assert_eq!(setting["projects"][0]["name"], "my-app");
    assert_eq!(setting["projects"].as_array().unwrap().len(), 1);
    assert_eq!(f.state(), on);

    // Widening it (writes, another project) asks again, and names the writes.
    f.answer(false);
    let e = f.call("reach_on", on_args(URL, &["my-app", "other"], true)).unwrap_err();
    assert_eq!(e.code, "denied");
    let q = &f.asked()[0];
    assert!(q.text.contains("my-app, other") && q.text.contains("change files"), "{}", q.text);
    assert_eq!(q.yes, "Change");
    assert_eq!(f.state(), on, "a no keeps the setting as it was");

    // Narrowing it asks nothing.
    let port = json!({ "args": { "url": URL, "projects": ["my-app"], "write": false, "port": 9000, "redirects": null } });
    assert_eq!(f.call("reach_on", port).unwrap()["setting"]["port"], 9000);
    assert!(f.asked().is_empty(), "nothing widened, nothing asked");
}

#[test]
fn bad_input_is_refused_with_a_code_before_anyone_is_asked() {
    let f = Fixture::new();
    f.answer(true);
    let refused = |args: Value, code: &str, says: &str| {
        let e = f.call("reach_on", args.clone()).unwrap_err();
        assert_eq!(e.code, code, "{args}: {e:?}");
        assert!(e.message.contains(says), "{args}: {:?} lacks {says:?}", e.message);
    };
    refused(
        on_args("http://sluice.example.com", &["my-app"], false),
        "invalid_argument",
        "https://",
    );
    refused(
        on_args("https://sluice.example.com/mcp", &["my-app"], false),
        "invalid_argument",
        "path",
    );
    refused(
        on_args("https://sluice.example.com/?a=1", &["my-app"], false),
        "invalid_argument",
        "query",
    );
    refused(
        on_args("https://u:p@sluice.example.com", &["my-app"], false),
        "invalid_argument",
        "password",
    );
    refused(on_args("not a url", &["my-app"], false), "invalid_argument", "public URL");
    refused(on_args(URL, &[], false), "invalid_argument", "at least one project");
    refused(on_args(URL, &["nope"], false), "project_not_found", "nope");
    let port0 = json!({ "args": { "url": URL, "projects": ["my-app"], "write": false, "port": 0, "redirects": null } });
    refused(port0, "invalid_argument", "port");
    let redirect = json!({ "args": { "url": URL, "projects": ["my-app"], "write": false, "port": null, "redirects": ["http://evil.example/cb"] } });
    refused(redirect, "invalid_argument", "redirect URI");
    let missing = json!({ "args": { "url": URL, "write": false } });
    refused(missing, "invalid_argument", "the window sent arguments");
    assert!(f.asked().is_empty(), "bad input asks nothing");
    assert_eq!(f.base.engine.reach().unwrap(), None);
}

#[test]
fn approving_a_connection_asks_with_the_code_and_a_visible_name() {
    let f = Fixture::new();
    f.turn_on(false);
    let name = "Claude\u{202E}evil</b><img src=x onerror=alert(1)>\u{200B}\n";
    let id = f.ask_to_connect(name);

    let state = f.state();
    let requests = state["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r["id"], id);
    assert_eq!(r["redirectHost"], "claude.ai");
    let code = r["code"].as_str().unwrap().to_owned();
    assert_eq!(code.len(), 9, "ABCD-EFGH: {code}");
    let shown = r["clientName"].as_str().unwrap();
    assert!(!shown.contains('\u{202E}') && !shown.contains('\u{200B}'), "{shown:?}");
    // It registered itself: nothing verified its name.
    assert_eq!(r["verifiedHost"], serde_json::Value::Null);

    // "No" to the native question: the request still waits.
    f.answer(false);
    let e = f.call("reach_decide", json!({ "id": id, "approve": true })).unwrap_err();
    assert_eq!(e.code, "denied");
    let q = &f.asked()[0];
    assert_eq!((q.title, q.yes, q.no), (CONNECT_TITLE, "Approve", "Don't approve"));
    for part in [code.as_str(), "claude.ai", "my-app", "read", "⟨U+202E⟩", "(unverified name)"]
    {
        assert!(q.text.contains(part), "{part:?} in {:?}", q.text);
    }
    for raw in ['\u{202E}', '\u{200B}', '\n'] {
        assert!(!q.text[..q.text.find("connect").unwrap()].contains(raw), "{:?}", q.text);
    }
    // The HTML stays text: the dialog never interprets it, and it is shown as it came.
    assert!(q.text.contains("</b><img src=x onerror=alert(1)>"), "{:?}", q.text);
    assert_eq!(f.state()["requests"].as_array().unwrap().len(), 1, "still pending");
    let pending = f.base.engine.oauth_request(&id).unwrap().unwrap();
    assert_eq!(pending.decision, sluice_engine::OAuthDecision::Pending);

    // "Yes": approved, and gone from the list.
    f.answer(true);
    let after = f.call("reach_decide", json!({ "id": id, "approve": true })).unwrap();
    assert_eq!(after["requests"], json!([]));
    let decided = f.base.engine.oauth_request(&id).unwrap().unwrap();
    assert_eq!(decided.decision, sluice_engine::OAuthDecision::Approved);

    // Decided once: a second decision is refused and changes nothing.
    let e = f.call("reach_decide", json!({ "id": id, "approve": false })).unwrap_err();
    assert_eq!(e.code, "conflict", "{e:?}");
    assert!(e.message.contains("already approved"), "{}", e.message);
    assert_eq!(
        f.base.engine.oauth_request(&id).unwrap().unwrap().decision,
        sluice_engine::OAuthDecision::Approved
    );
}

#[test]
fn denying_asks_nothing_and_unknown_requests_are_refused() {
    let f = Fixture::new();
    f.turn_on(false);
    let id = f.ask_to_connect("ChatGPT");
    f.answer(false);
    let after = f.call("reach_decide", json!({ "id": id, "approve": false })).unwrap();
    assert_eq!(after["requests"], json!([]));
    assert!(f.asked().is_empty(), "denying narrows: nothing asked");
    let denied = f.base.engine.oauth_request(&id).unwrap().unwrap();
    assert_eq!(denied.decision, sluice_engine::OAuthDecision::Denied);

    f.answer(true);
    for approve in [true, false] {
        let e = f
            .call("reach_decide", json!({ "id": "slrq_nope\u{202E}", "approve": approve }))
            .unwrap_err();
        assert_eq!(e.code, "not_found", "{e:?}");
        assert!(e.message.contains("⟨U+202E⟩"), "the id as sent, made visible: {}", e.message);
    }
    assert!(f.asked().is_empty(), "an unknown request asks nothing");
    let e = f.call("reach_decide", json!({ "id": id })).unwrap_err();
    assert_eq!(e.code, "invalid_argument");
}

#[test]
fn remote_tokens_are_marked_and_revoked_when_reach_goes_off() {
    let f = Fixture::new();
    let local = f.base.engine.create_token("local", None, None).unwrap().0;
    f.turn_on(true);
    let id = f.ask_to_connect("Claude");
    f.answer(true);
    f.call("reach_decide", json!({ "id": id, "approve": true })).unwrap();
    assert_eq!(f.asked().len(), 1, "approving asked");
    let e = &f.base.engine;
    let sluice_engine::reach::AuthorizationState::Redirect(to) = e.authorization_state(&id) else {
        panic!("an approved request redirects with a code");
    };
    let code = to.split("code=").nth(1).unwrap().split('&').next().unwrap().to_owned();
    let client = e.oauth_request(&id).unwrap().unwrap().client_id;
    e.oauth_token(&TokenParams {
        grant_type: Some("authorization_code".into()),
        code: Some(code),
        redirect_uri: Some(CALLBACK.into()),
        client_id: Some(client),
        code_verifier: Some(VERIFIER.into()),
        ..TokenParams::default()
    })
    .unwrap();
    assert_eq!(f.state()["remoteTokens"], 1);

    let tokens = f.call("list_tokens", json!({})).unwrap();
    let by_label = |prefix: &str| {
        tokens
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["label"].as_str().unwrap().starts_with(prefix))
            .cloned()
            .unwrap()
    };
    // The label says the name is the client's own claim.
    assert_eq!(by_label("remote: \u{201C}Claude\u{201D} (unverified name) ")["remote"], true);
    assert_eq!(by_label("local")["remote"], false);
    assert_eq!(by_label("local")["id"], local.id.as_str());

    // Off: asks nothing, revokes the remote token only, says how many, and denies the
    // request still waiting (it could otherwise be approved once reach is on again).
    let waiting = f.ask_to_connect("Waiting");
    f.answer(false);
    assert_eq!(f.call("reach_off", json!({})).unwrap(), 1);
    let decided = e.oauth_request(&waiting).unwrap().unwrap();
    assert_eq!(decided.decision, sluice_engine::OAuthDecision::Denied, "{decided:?}");
    assert!(f.asked().is_empty(), "turning off narrows: nothing asked");
    assert_eq!(f.state(), json!({ "setting": null, "requests": [], "remoteTokens": 0 }));
    let tokens = f.call("list_tokens", json!({})).unwrap();
    for t in tokens.as_array().unwrap() {
        assert_eq!(t["revokedMs"].is_null(), t["remote"] == false, "{t}");
    }
    // A second off revokes nothing more.
    assert_eq!(f.call("reach_off", json!({})).unwrap(), 0);
}

#[test]
fn a_tunnel_sluice_runs_is_shown_with_its_state_and_no_address_until_it_announces_one() {
    let f = Fixture::new();
    let e = &f.base.engine;
    let tunnel = Tunnel::Command { argv: vec!["sh".into(), "-c".into(), "exit 0".into()] };
    let req = ReachRequest {
        url: None,
        port: 7879,
        projects: vec!["my-app".into()],
        tunnel: Some(tunnel.clone()),
        ..ReachRequest::default()
    };
    e.set_reach(&req).unwrap();
    let setting = f.state()["setting"].clone();
    assert_eq!(
        (setting["publicUrl"].clone(), setting["connectorUrl"].clone()),
        (json!(null), json!(null))
    );
    assert_eq!(
        setting["tunnel"],
        json!({
            "name": "`sh -c exit 0`",
            "state": null,
            "restarts": 0,
            "message": null,
            "choice": { "kind": "command", "name": null, "command": "sh -c 'exit 0'" },
        }),
        "not started: no process serves this data folder"
    );

    // What its supervisor recorded, the process's words made visible.
    let status = TunnelStatus {
        state: TunnelState::Restarting,
        restarts: 3,
        message: Some("the tunnel exited: bye\u{202E}".into()),
        ..TunnelStatus::default()
    };
    e.set_tunnel_status(Some(&status)).unwrap();
    let tunnel = &f.state()["setting"]["tunnel"];
    assert_eq!(tunnel["state"], "restarting");
    assert_eq!(tunnel["restarts"], 3);
    assert_eq!(tunnel["message"], "the tunnel exited: bye⟨U+202E⟩");

    // Once it announces its address, that is the connector's.
    let reach = e.reach().unwrap().unwrap();
    assert!(e.tunnel_announced(&reach, "https://calm-river.example.net").unwrap());
    let setting = f.state()["setting"].clone();
    assert_eq!(setting["connectorUrl"], "https://calm-river.example.net/mcp");
}

#[test]
fn a_tunnel_chosen_in_the_window_is_named_in_the_question_and_stored_as_chosen() {
    let f = Fixture::new();
    let command =
        json!({ "kind": "command", "name": null, "command": "sh -c 'exit 0' --to={port}" });
    let args = tunnel_args(Value::Null, &["my-app"], command);

    // "No": nothing changes; the question named the program Sluice would run, and that the
    // address is the one the tunnel announces.
    let e = f.call("reach_on", args.clone()).unwrap_err();
    assert_eq!(e.code, "denied", "{e:?}");
    assert_eq!(f.base.engine.reach().unwrap(), None);
    let q = &f.asked()[0];
    assert_eq!((q.title, q.yes), (REACH_TITLE, "Turn on"));
    for part in [
        "through the address the tunnel announces?",
        "Sluice will run `sh -c exit 0 --to={port}`: the program sh (/",
        "/sh), forwarding to http://127.0.0.1:7879",
        "my-app",
    ] {
        assert!(q.text.contains(part), "{part:?} in {}", q.text);
    }
    assert!(!q.text.contains("/mcp"), "no address yet: {}", q.text);

    // "Yes": stored as chosen, and given back to fill in a change.
    f.answer(true);
    let setting = f.call("reach_on", args).unwrap()["setting"].clone();
    assert_eq!(
        setting["tunnel"]["choice"],
        json!({ "kind": "command", "name": null, "command": "sh -c 'exit 0' '--to={port}'" })
    );
    assert_eq!(
        (setting["publicUrl"].clone(), setting["givenUrl"].clone()),
        (Value::Null, Value::Null)
    );
    let stored = f.base.engine.reach().unwrap().unwrap().tunnel.unwrap();
    let words = ["sh", "-c", "exit 0", "--to={port}"];
    assert_eq!(stored, Tunnel::Command { argv: words.map(String::from).to_vec() });
    assert_eq!(f.state()["setting"], setting);
}

#[test]
fn a_disguised_tunnel_program_is_named_visibly_and_a_quick_tunnel_with_its_changing_address() {
    let f = Fixture::new();
    let tools = f.base.folder.with_file_name("tools");
    std::fs::create_dir(&tools).unwrap();
    // The program, outside every project, with a name that would disguise itself.
    let program = tools.join("edge\u{202E}hs.txt");
    script(&program);
    let command = format!("'{}' {{port}}", program.display());
    let args = tunnel_args(
        Value::Null,
        &["my-app"],
        json!({ "kind": "command", "name": null, "command": command }),
    );
    f.call("reach_on", args).unwrap_err();
    let q = &f.asked()[0];
    assert!(!q.text.contains('\u{202E}'), "{:?}", q.text);
    assert!(q.text.contains("edge⟨U+202E⟩hs.txt"), "{:?}", q.text);

    // A quick tunnel's question says its address changes (cloudflared may be missing here:
    // then the refusal names the program, and nothing was asked).
    let quick = json!({ "kind": "cloudflared", "name": null, "command": null });
    match f.call("reach_on", tunnel_args(Value::Null, &["my-app"], quick)) {
        Err(e) if e.code == "not_found" => {
            assert!(e.message.contains("tunnel program"), "{e:?}");
            assert!(f.asked().is_empty());
        }
        other => {
            assert_eq!(other.unwrap_err().code, "denied");
            let q = &f.asked()[0];
            assert!(
                q.text.contains("a Cloudflare quick tunnel: the program cloudflared"),
                "{}",
                q.text
            );
            assert!(q.text.contains("new address every time it starts"), "{}", q.text);
        }
    }
    assert_eq!(f.base.engine.reach().unwrap(), None);
}

#[test]
fn a_tunnel_program_inside_a_project_or_a_relative_one_is_refused_and_changes_nothing() {
    let f = Fixture::new();
    let on = f.turn_on(false);
    let planted = f.base.folder.join("cloudflared");
    script(&planted);
    for command in [planted.display().to_string(), "./cloudflared".into(), "bin/edge".into()] {
        let tunnel = json!({ "kind": "command", "name": null, "command": command });
        let e = f.call("reach_on", tunnel_args(json!(URL), &["my-app"], tunnel)).unwrap_err();
        assert_eq!(e.code, "not_found", "{command}: {e:?}");
        assert!(e.message.contains("tunnel program"), "{command}: {}", e.message);
    }
    assert!(f.asked().is_empty(), "refused before anyone is asked");
    assert_eq!(f.state(), on, "reach stays exactly as it was");
}

#[test]
fn a_bad_tunnel_choice_gets_its_own_error_before_anyone_is_asked() {
    let f = Fixture::new();
    f.answer(true);
    let on = f.turn_on(false);
    let refused = |url: Value, tunnel: Value, code: &str, says: &str| {
        let e = f.call("reach_on", tunnel_args(url, &["my-app"], tunnel.clone())).unwrap_err();
        assert_eq!(e.code, code, "{tunnel}: {e:?}");
        assert!(e.message.contains(says), "{tunnel}: {:?} lacks {says:?}", e.message);
    };
    let choice = |kind: &str, name: Value, command: Value| json!({ "kind": kind, "name": name, "command": command });
    let none = || Value::Null;
    refused(
        json!(URL),
        choice("wireguard\u{202E}", none(), none()),
        "invalid_argument",
        "unknown tunnel kind `wireguard⟨U+202E⟩`: choose one of cloudflared, cloudflared-named",
    );
    refused(
        json!(URL),
        choice("cloudflared", none(), none()),
        "invalid_argument",
        "chosen by Cloudflare",
    );
    refused(
        Value::Null,
        choice("cloudflared-named", json!("home"), none()),
        "invalid_argument",
        "public hostname",
    );
    refused(
        json!(URL),
        choice("cloudflared-named", none(), none()),
        "invalid_argument",
        "tunnel's name",
    );
    refused(
        json!(URL),
        choice("cloudflared-named", json!("../home"), none()),
        "invalid_argument",
        "a tunnel name is",
    );
    refused(
        json!(URL),
        choice("command", none(), json!("edge 'open")),
        "invalid_argument",
        "unbalanced quotes",
    );
    refused(
        json!(URL),
        choice("command", none(), json!("  ")),
        "invalid_argument",
        "command is empty",
    );
    refused(
        Value::Null,
        choice("cloudflared", json!("home"), none()),
        "invalid_argument",
        "takes no tunnel name",
    );
    refused(
        Value::Null,
        choice("tailscale", none(), json!("sh")),
        "invalid_argument",
        "takes no command",
    );
    // The user's own tunnel still needs its URL.
    refused(Value::Null, Value::Null, "invalid_argument", "public URL");
    let missing_kind = json!({ "name": "home" });
    refused(json!(URL), missing_kind, "invalid_argument", "the window sent arguments");
    assert!(f.asked().is_empty(), "bad input asks nothing");
    assert_eq!(f.state(), on, "nothing changed");
}

#[test]
fn changing_the_setting_while_on_asks_again_and_keeps_reach_on() {
    let f = Fixture::new();
    assert_eq!(f.turn_on(false)["setting"]["givenUrl"], URL, "the URL given fills in a change");
    let id = f.ask_to_connect("Claude");
    let on = f.state();

    // The same address and projects, but a program for Sluice to run: that is asked, and a
    // no changes nothing.
    let tunnel = json!({ "kind": "command", "name": null, "command": "sh -c 'exit 0'" });
    let args = tunnel_args(json!(URL), &["other"], tunnel.clone());
    f.answer(false);
    assert_eq!(f.call("reach_on", args.clone()).unwrap_err().code, "denied");
    let q = &f.asked()[0];
    assert_eq!(q.yes, "Change");
    assert!(q.text.contains("Sluice will run `sh -c exit 0`"), "{}", q.text);
    assert!(q.text.contains("through https://sluice.example.com/mcp"), "{}", q.text);
    assert_eq!(f.state(), on);
    let same_projects = tunnel_args(json!(URL), &["my-app"], tunnel);
    assert_eq!(f.call("reach_on", same_projects).unwrap_err().code, "denied");
    assert_eq!(f.asked().len(), 1, "a new tunnel is asked even when nothing else widens");

    // Yes: still on, with the new projects and tunnel; the request still waits.
    f.answer(true);
    let changed = f.call("reach_on", args).unwrap();
    let setting = &changed["setting"];
    assert_eq!(
        setting["projects"],
        json!([{ "id": setting["projects"][0]["id"], "name": "other" }])
    );
    assert_eq!(setting["connectorUrl"], "https://sluice.example.com/mcp");
    assert_eq!(setting["givenUrl"], URL);
    assert_eq!(setting["tunnel"]["choice"]["command"], "sh -c 'exit 0'");
    assert_eq!(changed["requests"][0]["id"], id);
    assert_eq!(f.state(), changed);
    assert_eq!(f.asked().len(), 1, "the yes was asked too");

    // Back to the user's own tunnel: Sluice stops running one, which is asked too.
    f.answer(false);
    assert_eq!(f.call("reach_on", on_args(URL, &["other"], false)).unwrap_err().code, "denied");
    assert_eq!(f.asked().len(), 1);
    assert_eq!(f.state(), changed);
}

#[test]
fn openais_tunnel_needs_its_key_once_asks_what_it_lets_in_and_mints_one_revocable_grant() {
    let f = Fixture::new();
    let e = &f.base.engine;
    let openai = json!({ "kind": "openai", "name": "tunnel_abc123", "command": null });
    let with_key = |key: Value| {
        let mut args = tunnel_args(Value::Null, &["my-app"], openai.clone());
        args["args"]["apiKey"] = key;
        args
    };
    // No key, a bad key, a URL beside it: refused before anyone is asked.
    f.answer(true);
    for (args, says) in [
        (with_key(Value::Null), "give the tunnel's API key"),
        (with_key(json!("sk with spaces")), "visible characters with no spaces"),
        (tunnel_args(json!(URL), &["my-app"], openai.clone()), "leave out the URL"),
    ] {
        let err = f.call("reach_on", args).unwrap_err();
        assert!(err.message.contains(says), "{says}: {}", err.message);
    }
    assert!(f.asked().is_empty() && e.reach().unwrap().is_none());

    // On, with the question saying what the tunnel lets in.
    let on = f.call("reach_on", with_key(json!("sk-proj-key1"))).unwrap();
    let asked = f.asked();
    assert_eq!(asked.len(), 1);
    for part in ["OpenAI's Secure MCP Tunnel tunnel_abc123", "API key", "without asking again"] {
        assert!(asked[0].text.contains(part), "{part:?} in {}", asked[0].text);
    }
    let tunnel = &on["setting"]["tunnel"];
    assert_eq!(tunnel["choice"]["kind"], "openai");
    assert_eq!(tunnel["choice"]["name"], "tunnel_abc123");
    assert!(!on.to_string().contains("sk-proj-key1"), "the key never goes back to the window");
    assert_eq!(e.openai_api_key("tunnel_abc123").unwrap().as_str(), "sk-proj-key1");
    assert!(e.openai_api_key("tunnel_other").is_err(), "the key is bound to its tunnel");

    // A change keeps the key unless a new one is given; another tunnel needs its own.
    f.call("reach_on", with_key(Value::Null)).unwrap();
    let other = json!({ "kind": "openai", "name": "tunnel_other", "command": null });
    let err = f.call("reach_on", tunnel_args(Value::Null, &["my-app"], other)).unwrap_err();
    assert!(err.message.contains("give the tunnel's API key"), "{}", err.message);

    // Each run of the poller mints one grant and revokes the one before; off forgets the key.
    let reach = e.reach().unwrap().unwrap();
    let first = e.openai_tunnel_grant(&reach).unwrap();
    let second = e.openai_tunnel_grant(&reach).unwrap();
    assert!(e.authenticate_remote(&first).is_err(), "the earlier grant is revoked");
    let caller = e.authenticate_remote(&second).unwrap();
    assert!(caller.read_only);
    assert_eq!(f.state()["remoteTokens"], 1);
    let tokens = e.tokens().unwrap();
    let live: Vec<_> = tokens.iter().filter(|t| t.remote && t.revoked_ms.is_none()).collect();
    assert!(live[0].label.starts_with("remote: OpenAI Secure MCP Tunnel tunnel_abc123 "));
    assert_eq!(f.call("reach_off", json!({})).unwrap(), 1);
    assert!(e.authenticate_remote(&second).is_err());
    assert!(e.openai_api_key("tunnel_abc123").is_err(), "reach off forgets the key");
}
