//! Commands by name, as the window process forwards them: every command the bindings declare
//! is reachable, bad names and arguments change nothing, and widening commands run only after
//! the native confirmation says yes.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use sluice_engine::clients::Dirs;
use sluice_ipc::dispatch::{self, AUTHORIZE_TITLE, Api, Desktop, Question, WIDEN_TITLE};
use sluice_ipc::{Connector, IpcError};

/// A desktop whose user gives the answer the test set; it records what it was asked.
pub(crate) struct ScriptedUser {
    answer: AtomicBool,
    pub(crate) asked: Mutex<Vec<Question>>,
    copied: Mutex<Vec<String>>,
}

impl Desktop for ScriptedUser {
    fn confirm(&self, question: Question) -> bool {
        self.asked.lock().unwrap().push(question);
        self.answer.load(Ordering::SeqCst)
    }
    fn copy_secret(&self, text: String) -> Result<(), IpcError> {
        self.copied.lock().unwrap().push(text);
        Ok(())
    }
    fn open_link(&self, url: String) -> Result<(), IpcError> {
        self.copied.lock().unwrap().push(url);
        Ok(())
    }
}

/// An engine, the window's connector and a scripted user: the window process's side.
pub(crate) struct Fixture {
    pub(crate) base: crate::commands::Fixture,
    connector: Connector,
    pub(crate) user: ScriptedUser,
}

impl Fixture {
    pub(crate) fn new(answer: bool) -> Fixture {
        let base = crate::commands::fixture();
        let home = base.folder.with_file_name("home");
        std::fs::create_dir(&home).unwrap();
        let connector = Connector::with_dirs(Dirs::home(home));
        let user = ScriptedUser {
            answer: AtomicBool::new(answer),
            asked: Mutex::default(),
            copied: Mutex::default(),
        };
        Fixture { base, connector, user }
    }

    /// The user's answer to the next questions.
    pub(crate) fn answer(&self, yes: bool) {
        self.user.answer.store(yes, Ordering::SeqCst);
    }

    pub(crate) fn call(&self, cmd: &str, args: Value) -> Result<Value, IpcError> {
        let api = Api {
            engine: &self.base.engine,
            ctx: &self.base.ctx,
            connector: &self.connector,
            desktop: &self.user,
        };
        dispatch::call(&api, cmd, args)
    }

    fn folder(&self) -> String {
        self.base.folder.display().to_string()
    }

    fn add_args(&self) -> Value {
        json!({ "args": { "path": self.folder(), "name": null, "access": "read-write", "exec": "off" } })
    }
}

#[test]
fn every_declared_command_is_reachable_by_name() {
    let f = Fixture::new(false);
    for (name, _, _) in sluice_ipc::bindings::COMMANDS {
        // On Windows this one would make real accounts (a CI runner is elevated already).
        if cfg!(windows) && *name == "set_up_sandbox_account" {
            continue;
        }
        // Whatever the arguments make of it, the name itself is known.
        if let Err(e) = f.call(name, json!({})) {
            assert_ne!(e.message, "the window has no such command", "{name}");
        }
    }
    let e = f.call("plugin:shell|execute", json!({})).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("invalid_argument", "the window has no such command")
    );
}

#[test]
fn malformed_arguments_are_refused_and_change_nothing() {
    let f = Fixture::new(true);
    for (cmd, args) in [
        ("set_paused", json!({})),
        ("set_paused", json!({ "paused": "yes" })),
        ("set_paused", json!({ "paused": true, "also": 1 })),
        ("set_paused", json!([true])),
        ("add_project", json!({ "args": { "path": f.folder() } })),
    ] {
        let e = f.call(cmd, args.clone()).unwrap_err();
        assert_eq!(e.code, "invalid_argument", "{cmd} {args}");
        assert!(e.message.starts_with("the window sent arguments"), "{}", e.message);
    }
    assert_eq!(f.call("app_state", json!({})).unwrap()["paused"], false);
    assert_eq!(f.call("list_projects", json!({})).unwrap(), json!([]));
    assert!(f.user.asked.lock().unwrap().is_empty(), "nothing was asked");
}

#[test]
fn check_port_takes_a_port_number_and_answers_a_status() {
    let f = Fixture::new(false);
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let c = f.call("check_port", json!({ "port": port })).unwrap();
    assert_eq!((&c["port"], &c["status"]), (&json!(port), &json!("in-use")));
    assert!(c["message"].as_str().unwrap().contains("another program"), "{c}");
    for bad in [json!({ "port": 70000 }), json!({ "port": "7457" }), json!({})] {
        let e = f.call("check_port", bad.clone()).unwrap_err();
        assert_eq!(e.code, "invalid_argument", "{bad}");
    }
    assert_eq!(f.call("check_port", json!({ "port": 0 })).unwrap_err().code, "invalid_argument");
    assert!(f.user.asked.lock().unwrap().is_empty(), "a check asks nothing");
}

#[test]
fn authorizing_a_folder_waits_for_the_users_yes() {
    let no = Fixture::new(false);
    let e = no.call("add_project", no.add_args()).unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("denied", "nothing changed: you chose \"Cancel\"")
    );
    assert_eq!(no.call("list_projects", json!({})).unwrap(), json!([]));
    let asked = no.user.asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].title, AUTHORIZE_TITLE);
    assert!(asked[0].text.contains(&no.folder()), "{}", asked[0].text);
    assert!(asked[0].text.contains("create, change and move"), "{}", asked[0].text);

    let yes = Fixture::new(true);
    let project = yes.call("add_project", yes.add_args()).unwrap();
    assert_eq!(project["name"], "my-app");
    assert_eq!(project["access"], "read-write");
    let listed = yes.call("list_projects", json!({})).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
}

#[test]
fn narrowing_asks_nothing_widening_asks_first() {
    let f = Fixture::new(false);
    // Added directly: this fixture's user says no to everything.
    let id = {
        let args = sluice_ipc::AddProject {
            path: f.folder(),
            name: None,
            access: sluice_ipc::Access::ReadOnly,
            exec: sluice_ipc::Exec::Off,
        };
        sluice_ipc::add_project(&f.base.engine, args).unwrap().id
    };
    // Read-only → read-write widens: asked, refused, unchanged.
    let widen = json!({ "args": { "id": id, "access": "read-write", "exec": null } });
    assert_eq!(f.call("set_project_modes", widen).unwrap_err().code, "denied");
    let now = f.call("list_projects", json!({})).unwrap();
    assert_eq!(now[0]["access"], "read-only");
    assert_eq!(f.user.asked.lock().unwrap().len(), 1);
    // Pausing and disabling narrow: no question.
    f.call("set_paused", json!({ "paused": true })).unwrap();
    f.call("set_project_enabled", json!({ "id": id, "enabled": false })).unwrap();
    assert_eq!(f.user.asked.lock().unwrap().len(), 1);
}

/// Showing the e-mail addresses of a project's history asks natively first; a no keeps them
/// hidden; hiding them again asks nothing.
#[test]
fn showing_git_emails_asks_first_and_hiding_them_does_not() {
    let f = Fixture::new(false);
    let args = sluice_ipc::AddProject {
        path: f.folder(),
        name: None,
        access: sluice_ipc::Access::ReadOnly,
        exec: sluice_ipc::Exec::Off,
    };
    let id = sluice_ipc::add_project(&f.base.engine, args).unwrap().id;
    assert_eq!(f.call("list_projects", json!({})).unwrap()[0]["showGitEmails"], false);
    let show = json!({ "id": id, "show": true });
    assert_eq!(f.call("set_project_git_emails", show.clone()).unwrap_err().code, "denied");
    assert_eq!(f.call("list_projects", json!({})).unwrap()[0]["showGitEmails"], false);
    {
        let asked = f.user.asked.lock().unwrap();
        assert_eq!(asked.len(), 1);
        assert_eq!(
            (asked[0].title, asked[0].yes, asked[0].no),
            (WIDEN_TITLE, "Show addresses", "Keep hidden")
        );
        assert!(asked[0].text.contains("e-mail addresses"), "{}", asked[0].text);
    }
    f.answer(true);
    assert_eq!(f.call("set_project_git_emails", show.clone()).unwrap()["showGitEmails"], true);
    // Already shown: nothing more to ask. Hiding narrows: no question either.
    f.call("set_project_git_emails", show).unwrap();
    let hide = json!({ "id": id, "show": false });
    assert_eq!(f.call("set_project_git_emails", hide).unwrap()["showGitEmails"], false);
    assert_eq!(f.user.asked.lock().unwrap().len(), 2);
    let bad = json!({ "id": id, "show": "yes" });
    assert_eq!(f.call("set_project_git_emails", bad).unwrap_err().code, "invalid_argument");
}

/// Guarding an auto-run path less asks natively first; a no keeps the list; guarding more
/// asks nothing.
#[test]
fn relaxing_the_autorun_list_asks_first() {
    let f = Fixture::new(false);
    let args = sluice_ipc::AddProject {
        path: f.folder(),
        name: None,
        access: sluice_ipc::Access::ReadWrite,
        exec: sluice_ipc::Exec::Off,
    };
    let id = sluice_ipc::add_project(&f.base.engine, args).unwrap().id;
    let mut rules = serde_json::to_value(sluice_ipc::default_autorun()).unwrap();
    let list = rules.as_array_mut().unwrap();
    list.retain(|r| r["pattern"] != ".vscode/tasks.json");
    let e = f.call("set_autorun", json!({ "id": id, "rules": rules })).unwrap_err();
    assert_eq!(e.code, "denied");
    let asked = f.user.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].text.contains(".vscode/tasks.json"), "{:?}", asked[0]);
    assert_eq!(f.call("list_projects", json!({})).unwrap()[0]["autorun"], Value::Null);
    // An entry of one's own guards more: no question, saved.
    let mut more = serde_json::to_value(sluice_ipc::default_autorun()).unwrap();
    more.as_array_mut().unwrap().push(json!({
        "pattern": "/deploy/**", "action": "refuse", "program": "the deploy bot",
        "consequence": "the deploy bot runs these scripts every night"
    }));
    let p = f.call("set_autorun", json!({ "id": id, "rules": more })).unwrap();
    assert_eq!(p["autorun"].as_array().unwrap().last().unwrap()["pattern"], "/deploy/**");
    assert_eq!(f.user.asked.lock().unwrap().len(), 1);
    assert_eq!(
        f.call("default_autorun", json!({})).unwrap(),
        serde_json::to_value(sluice_ipc::default_autorun()).unwrap()
    );
}

/// Granting a store, un-hiding a default, opting in to a socket or lifting the requirement of
/// full confinement asks natively first, in words that say what it exposes; a no changes
/// nothing; hiding more asks nothing; a bad path is refused before anyone is asked.
// Unix: a planted executable, links, Unix sockets.
#[cfg(unix)]
#[test]
fn exposing_a_store_or_a_socket_to_commands_asks_first() {
    let f = Fixture::new(false);
    let args = sluice_ipc::AddProject {
        path: f.folder(),
        name: Some("web".into()),
        access: sluice_ipc::Access::ReadWrite,
        exec: sluice_ipc::Exec::Off,
    };
    let id = sluice_ipc::add_project(&f.base.engine, args).unwrap().id;
    let outside = f.base.folder.with_file_name("outside-store");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("token"), "t").unwrap();
    let token = outside.join("token").display().to_string();
    let sock_path = outside.join("docker.sock");
    let _sock = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    let settings = |grants: Vec<String>, sockets: Vec<String>, hide: Vec<String>| {
        json!({ "id": id, "settings": {
            "hide": hide, "unhide": [], "grants": grants, "sockets": sockets, "requireFull": false
        } })
    };
    let sandbox = || f.call("list_projects", json!({})).unwrap()[0]["sandbox"].clone();
    let before = sandbox();
    assert_eq!(before["settings"]["grants"], json!([]));
    assert!(before["hidden"].as_array().unwrap().iter().any(|h| h["path"] == "~/.ssh"));

    let e = f.call("set_sandbox", settings(vec![token.clone()], vec![], vec![])).unwrap_err();
    assert_eq!(e.code, "denied");
    let e = f
        .call("set_sandbox", settings(vec![], vec![sock_path.display().to_string()], vec![]))
        .unwrap_err();
    assert_eq!(e.code, "denied");
    let asked = f.user.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].title, dispatch::SANDBOX_TITLE);
    assert!(
        asked[0].text.starts_with(&format!("Jobs of project web will be able to read {token}, ")),
        "{:?}",
        asked[0]
    );
    assert!(asked[1].text.contains("equivalent to full access to this machine"), "{asked:?}");
    assert_eq!(sandbox(), before, "a no changes nothing");

    // Bad paths: refused with a code, before any question.
    for bad in ["relative", "~/../etc", "/a\u{202e}b\n"] {
        let e = f.call("set_sandbox", settings(vec![bad.into()], vec![], vec![])).unwrap_err();
        assert_eq!(e.code, "invalid_argument", "{bad}: {e:?}");
    }
    assert_eq!(f.user.asked.lock().unwrap().len(), 2);
    // Hiding more narrows: no question, saved.
    let hidden = outside.join("mine").display().to_string();
    let p = f.call("set_sandbox", settings(vec![], vec![], vec![hidden.clone()])).unwrap();
    assert_eq!(p["sandbox"]["settings"]["hide"], json!([hidden]));
    assert_eq!(f.user.asked.lock().unwrap().len(), 2);

    // With a yes, the grant is stored and shown.
    f.answer(true);
    let p = f.call("set_sandbox", settings(vec![token.clone()], vec![], vec![])).unwrap();
    assert_eq!(p["sandbox"]["grants"][0]["path"], json!(token));
    assert_eq!(f.user.asked.lock().unwrap().len(), 3);
}

#[test]
fn copy_secret_goes_to_the_desktop() {
    let f = Fixture::new(false);
    assert_eq!(f.call("copy_secret", json!({ "text": "slc_x" })).unwrap(), Value::Null);
    assert_eq!(*f.user.copied.lock().unwrap(), ["slc_x"]);
}

/// Restoring a token whose assistant limited itself widens what it may do: the window's request
/// waits for the user's native yes; a token with no such limit is refused before anything is
/// asked.
#[test]
fn restoring_a_self_limited_token_waits_for_the_users_yes() {
    for answer in [false, true] {
        let f = Fixture::new(answer);
        let engine = &f.base.engine;
        let (token, secret) = engine.create_token("Cursor", None, None).unwrap();
        let caller = engine.authenticate(&secret).unwrap();
        engine.drop_privileges(&caller, sluice_core::SelfLimit::ReadOnly, Some("unsure")).unwrap();
        let id = json!({ "id": token.id.as_str() });
        let got = f.call("restore_token", id.clone());
        let limit = engine.tokens().unwrap()[0].self_limit.map(|(l, _)| l);
        let asked = f.user.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].title, WIDEN_TITLE);
        assert!(asked[0].text.contains("limited itself to read-only"), "{}", asked[0].text);
        if answer {
            assert_eq!(got.unwrap()["selfLimit"], Value::Null);
            assert_eq!(limit, None);
            // Nothing left to lift: refused, nothing asked.
            let e = f.call("restore_token", id).unwrap_err();
            assert_eq!(e.code, "invalid_argument", "{}", e.message);
            assert_eq!(f.user.asked.lock().unwrap().len(), 1);
        } else {
            assert_eq!(got.unwrap_err().code, "denied");
            assert_eq!(limit, Some(sluice_core::SelfLimit::ReadOnly));
        }
    }
}

/// A token's profile from the window: narrowing is done at once, widening waits for the user's
/// native yes, a name that is no profile changes nothing; a new token is `review` unless the
/// form says otherwise.
#[test]
fn widening_a_token_profile_waits_for_the_users_yes_and_narrowing_does_not_ask() {
    for answer in [false, true] {
        let f = Fixture::new(answer);
        let engine = &f.base.engine;
        let created = f
            .call("create_token", json!({ "args": { "label": "Chat", "scope": null, "expiresInDays": null, "profile": null } }))
            .unwrap();
        assert_eq!(created["token"]["profile"], "review");
        let id = created["token"]["id"].as_str().unwrap().to_owned();
        let profile_of = || engine.tokens().unwrap()[0].profile;

        let got = f.call("set_token_profile", json!({ "id": id, "profile": "agent" }));
        let asked = f.user.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].title, WIDEN_TITLE);
        assert!(asked[0].text.contains("run commands"), "{}", asked[0].text);
        if answer {
            assert_eq!(got.unwrap()["profile"], "agent");
            assert_eq!(profile_of(), sluice_core::Profile::Agent);
            // Narrowing is not asked.
            let got = f.call("set_token_profile", json!({ "id": id, "profile": "edit" })).unwrap();
            assert_eq!(got["profile"], "edit");
            assert_eq!(f.user.asked.lock().unwrap().len(), 1);
        } else {
            assert_eq!(got.unwrap_err().code, "denied");
            assert_eq!(profile_of(), sluice_core::Profile::Review);
        }
        let before = profile_of();
        let e = f.call("set_token_profile", json!({ "id": id, "profile": "root" })).unwrap_err();
        assert_eq!(e.code, "invalid_argument", "{}", e.message);
        assert!(e.message.contains("review, edit, agent, full"), "{}", e.message);
        let e = f.call("set_token_profile", json!({ "id": "tok_nope", "profile": "full" }));
        assert_eq!(e.unwrap_err().code, "not_found");
        assert_eq!(profile_of(), before);
        let e = f.call("create_token", json!({ "args": { "label": "X", "scope": null, "expiresInDays": null, "profile": "admin" } }));
        assert_eq!(e.unwrap_err().code, "invalid_argument");
        assert_eq!(engine.tokens().unwrap().len(), 1, "nothing created");
    }
}

/// Off Windows there is no sandbox account: Settings is told so (no state, so no button), and
/// a setup asked for anyway is refused with its code, leaves no handoff file, and changes what
/// the window shows in no way.
#[cfg(not(windows))]
#[test]
fn the_sandbox_account_is_windows_own_and_its_setup_is_refused_elsewhere() {
    let f = Fixture::new(true);
    let before = f.call("app_state", json!({})).unwrap();
    assert_eq!(before["sandboxAccount"], Value::Null);
    let err = f.call("set_up_sandbox_account", json!({})).unwrap_err();
    assert_eq!(err.code, "confinement_unavailable");
    assert!(err.message.contains("nothing changed"), "{}", err.message);
    assert_eq!(f.call("app_state", json!({})).unwrap(), before);
    let data = f.base.engine.data_dir();
    let handoffs = std::fs::read_dir(data)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("sandbox-setup"))
        .count();
    assert_eq!(handoffs, 0);
    assert!(f.user.asked.lock().unwrap().is_empty(), "the UAC prompt is the only question");
}
