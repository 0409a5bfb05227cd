//! Each command against a real engine (SQLite in a temp folder, the file-based secret).

use std::path::PathBuf;

use sluice_core::NetworkMode;
use sluice_engine::{Engine, EngineConfig, SecretPreference};
use sluice_ipc::*;

/// A real engine in a temp folder with one folder (`my-app`, holding a README) to authorize.
pub(crate) struct Fixture {
    _tmp: tempfile::TempDir,
    pub(crate) folder: PathBuf,
    pub(crate) engine: Engine,
    pub(crate) ctx: Context,
}

pub(crate) fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("my-app");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("README.md"), "hello\n").unwrap();
    let engine =
        Engine::open(&EngineConfig::new(tmp.path().join("data"), SecretPreference::FileOnly))
            .unwrap();
    let ctx = Context {
        port: 4321,
        sluice_binary: PathBuf::from("/opt/sluice/sluice"),
        version: "9.9.9".into(),
    };
    Fixture { _tmp: tmp, folder, engine, ctx }
}

fn add(f: &Fixture) -> ProjectDto {
    add_project(
        &f.engine,
        AddProject {
            path: f.folder.display().to_string(),
            name: None,
            access: Access::ReadOnly,
            exec: Exec::Off,
        },
    )
    .unwrap()
}

#[test]
fn state_reports_port_secret_and_pause() {
    let f = fixture();
    let s = app_state(&f.engine, &f.ctx).unwrap();
    assert!(!s.paused);
    assert!(!s.stopped);
    assert!(!s.confinement.is_empty());
    assert_eq!(s.mcp_url, "http://127.0.0.1:4321/mcp");
    assert!(!s.secret.in_keychain);
    assert_eq!(s.version, "9.9.9");
    let s = set_paused(&f.engine, &f.ctx, true).unwrap();
    assert!(s.paused);
    assert!(f.engine.check_access().is_err());
    assert!(!set_paused(&f.engine, &f.ctx, false).unwrap().paused);
}

#[test]
fn authorize_change_disable_remove_a_project() {
    let f = fixture();
    let p = add(&f);
    assert_eq!(p.name, "my-app");
    assert_eq!(
        (p.access, p.exec, p.status),
        (Access::ReadOnly, Exec::Off, ProjectStatus::Available)
    );
    assert_eq!(list_projects(&f.engine).unwrap(), vec![p.clone()]);

    let p = set_project_modes(
        &f.engine,
        SetModes { id: p.id.clone(), access: Some(Access::ReadWrite), exec: None },
    )
    .unwrap();
    assert_eq!(p.access, Access::ReadWrite);
    let p = set_project_enabled(&f.engine, &p.id, false).unwrap();
    assert_eq!(p.status, ProjectStatus::Disabled);
    let p = set_project_enabled(&f.engine, &p.id, true).unwrap();
    assert_eq!(p.status, ProjectStatus::Available);

    let p = set_shield(&f.engine, &p.id, Some(vec![" *.key ".into(), String::new()])).unwrap();
    assert_eq!(p.shield, Some(vec!["*.key".to_owned()]));
    let p = set_shield(&f.engine, &p.id, None).unwrap();
    assert_eq!(p.shield, None);
    assert!(default_shield().iter().any(|s| s.contains(".env")));

    remove_project(&f.engine, &p.id).unwrap();
    assert!(list_projects(&f.engine).unwrap().is_empty());
}

#[test]
fn widening_modes_or_dropping_shield_patterns_is_told_apart_for_a_native_confirmation() {
    let f = fixture();
    let p = add(&f);
    let modes = |access, exec| SetModes { id: p.id.clone(), access, exec };
    // Authorizing a folder always asks, and says everything it would allow.
    let folder =
        |access, exec| AddProject { path: "/srv/code/<b>".into(), name: None, access, exec };
    let q = authorize_question(&folder(Access::ReadOnly, Exec::Off)).unwrap();
    assert!(q.contains("read its files") && q.contains("/srv/code/<b>"), "{q}");
    assert!(!q.contains("change") && !q.contains("run"), "{q}");
    let q = authorize_question(&folder(Access::ReadWrite, Exec::Any)).unwrap();
    assert!(
        q.contains("create, change and move its files") && q.contains("run any program"),
        "{q}"
    );
    let q = widens_modes(&f.engine, &modes(Some(Access::ReadWrite), None)).unwrap().unwrap();
    assert!(q.contains("create, change and move its files") && q.contains("my-app"), "{q}");
    let q = widens_modes(&f.engine, &modes(None, Some(Exec::Any))).unwrap().unwrap();
    assert!(q.contains("run any program"), "{q}");
    assert_eq!(
        widens_modes(&f.engine, &modes(Some(Access::ReadOnly), Some(Exec::Off))).unwrap(),
        None
    );
    set_project_modes(&f.engine, modes(Some(Access::ReadWrite), Some(Exec::Any))).unwrap();
    // Narrowing, or the same modes again, needs no confirmation.
    for (access, exec) in [(Some(Access::ReadOnly), Some(Exec::Project)), (None, Some(Exec::Any))] {
        assert_eq!(widens_modes(&f.engine, &modes(access, exec)).unwrap(), None);
    }

    // The shield: dropping a default pattern exposes it; adding one exposes nothing.
    let defaults = default_shield();
    let fewer = defaults[1..].to_vec();
    assert_eq!(unshielded(&f.engine, &p.id, Some(&fewer)).unwrap(), vec![defaults[0].clone()]);
    let more: Vec<String> = defaults.iter().cloned().chain(["*.secret".to_owned()]).collect();
    assert!(unshielded(&f.engine, &p.id, Some(&more)).unwrap().is_empty());
    set_shield(&f.engine, &p.id, Some(more)).unwrap();
    // Restoring the defaults drops the user's own pattern.
    assert_eq!(unshielded(&f.engine, &p.id, None).unwrap(), vec!["*.secret".to_owned()]);
}

/// The auto-run list: the defaults until set, trimmed when stored; dropping an entry or turning
/// refuse into ask guards less (the window confirms natively), adding one does not.
#[test]
fn autorun_list_round_trips_and_relaxing_it_is_told_apart() {
    let f = fixture();
    let p = add(&f);
    assert_eq!(p.autorun, None);
    let defaults = default_autorun();
    let mcp = defaults.iter().position(|r| r.pattern == ".mcp.json").unwrap();
    let claude = defaults.iter().position(|r| r.pattern == ".claude/settings.json").unwrap();
    assert_eq!(defaults[claude].action, AutoRunActionDto::Refuse);
    let mine = AutoRunRuleDto {
        pattern: " /deploy/** ".into(),
        action: AutoRunActionDto::Ask,
        program: "the deploy bot".into(),
        consequence: "the deploy bot runs these scripts every night".into(),
    };
    let more: Vec<AutoRunRuleDto> = defaults.iter().cloned().chain([mine.clone()]).collect();
    assert!(relaxed_autorun(&f.engine, &p.id, Some(&more)).unwrap().is_empty());
    let mut fewer = defaults.clone();
    fewer.remove(mcp);
    assert_eq!(relaxed_autorun(&f.engine, &p.id, Some(&fewer)).unwrap(), [".mcp.json"]);
    let mut softer = defaults.clone();
    softer[claude].action = AutoRunActionDto::Ask;
    assert_eq!(
        relaxed_autorun(&f.engine, &p.id, Some(&softer)).unwrap(),
        [".claude/settings.json"]
    );
    let p = set_autorun(&f.engine, &p.id, Some(more)).unwrap();
    let stored = p.autorun.as_ref().unwrap();
    assert_eq!(stored.last().unwrap().pattern, "/deploy/**");
    // Back to the defaults drops the user's own entry: that guards less.
    assert_eq!(relaxed_autorun(&f.engine, &p.id, None).unwrap(), ["/deploy/**"]);
    let bad = AutoRunRuleDto { pattern: "a[".into(), ..mine };
    assert_eq!(
        set_autorun(&f.engine, &p.id, Some(vec![bad])).unwrap_err().code,
        "invalid_argument"
    );
    assert_eq!(set_autorun(&f.engine, &p.id, None).unwrap().autorun, None);
}

#[test]
fn errors_cross_as_code_and_message() {
    let f = fixture();
    let relative = AddProject {
        path: "code/my-app".into(),
        name: None,
        access: Access::ReadOnly,
        exec: Exec::Off,
    };
    // A mistyped path is an error before any dialog is shown.
    assert_eq!(authorize_question(&relative).unwrap_err().code, "invalid_argument");
    let e = add_project(&f.engine, relative).unwrap_err();
    assert_eq!(e.code, "invalid_argument");
    let e = add_project(
        &f.engine,
        AddProject { path: "/".into(), name: None, access: Access::ReadOnly, exec: Exec::Off },
    )
    .unwrap_err();
    assert!(!e.code.is_empty() && !e.message.is_empty(), "{e:?}");
    // Execution that changes files needs read-write access.
    let e = add_project(
        &f.engine,
        AddProject {
            path: f.folder.display().to_string(),
            name: None,
            access: Access::ReadOnly,
            exec: Exec::Any,
        },
    )
    .unwrap_err();
    assert_eq!(e.code, "invalid_argument");
    assert_eq!(remove_project(&f.engine, "nope").unwrap_err().code, "project_not_found");
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(json.as_object().unwrap().len(), 2, "{json}");
}

#[test]
fn create_list_and_revoke_a_token() {
    let f = fixture();
    let p = add(&f);
    let created = create_token(
        &f.engine,
        &f.ctx,
        CreateToken {
            label: "Cursor".into(),
            scope: Some(vec![p.name.clone()]),
            expires_in_days: Some(30),
            profile: Some("edit".into()),
        },
    )
    .unwrap();
    assert!(created.secret.starts_with("slc_"));
    assert!(f.engine.authenticate(&created.secret).is_ok());
    let scope = created.token.scope.clone().unwrap();
    assert_eq!(scope[0].name.as_deref(), Some("my-app"));
    assert!(created.token.expires_ms.is_some());
    assert_eq!(created.token.profile, "edit");
    let ids: Vec<_> = created.snippets.iter().map(|s| s.client.as_str()).collect();
    assert!(ids.contains(&"cursor") && ids.contains(&"claude-desktop"), "{ids:?}");
    let cursor = created.snippets.iter().find(|s| s.client == "cursor").unwrap();
    assert!(cursor.text.contains(&created.secret) && cursor.text.contains(":4321/mcp"));
    let desktop = created.snippets.iter().find(|s| s.client == "claude-desktop").unwrap();
    assert!(desktop.text.contains("/opt/sluice/sluice"));

    let listed = list_tokens(&f.engine).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, created.token.id);
    assert!(listed[0].last_used_ms.is_some(), "authenticating above counts as a use");
    // The list never carries the secret.
    assert!(!serde_json::to_string(&listed).unwrap().contains(&created.secret));

    let revoked = revoke_token(&f.engine, &created.token.id).unwrap();
    assert!(revoked.revoked_ms.is_some());
    assert!(f.engine.authenticate(&created.secret).is_err());
}

#[test]
fn token_arguments_are_checked() {
    let f = fixture();
    let bad = |label: &str, scope: Option<Vec<String>>, days: Option<u32>| {
        create_token(
            &f.engine,
            &f.ctx,
            CreateToken { label: label.into(), scope, expires_in_days: days, profile: None },
        )
        .unwrap_err()
        .code
    };
    assert_eq!(bad("x", None, Some(0)), "invalid_argument");
    assert_eq!(bad("x", None, Some(100_000)), "invalid_argument");
    assert_eq!(bad("x", Some(vec![]), None), "invalid_argument");
    assert_eq!(bad("", None, None), "invalid_argument");
    assert_eq!(bad("x\u{202e}", None, None), "invalid_argument");
    assert_eq!(bad("x", Some(vec!["nope".into()]), None), "project_not_found");
}

#[test]
fn audit_lists_filters_and_verifies() {
    let f = fixture();
    let p = add(&f);
    set_paused(&f.engine, &f.ctx, true).unwrap();
    set_paused(&f.engine, &f.ctx, false).unwrap();
    let q = |action: Option<&str>, project: Option<&str>| AuditQuery {
        project: project.map(str::to_owned),
        token: None,
        action: action.map(str::to_owned),
        outcome: None,
        limit: 100,
        before_seq: None,
    };
    let all = audit(&f.engine, q(None, None)).unwrap().entries;
    let actions: Vec<_> = all.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["resume", "pause", "project.add"], "newest first");
    assert!(all.iter().all(|e| e.actor == "local user" && !e.by_assistant));
    let added = audit(&f.engine, q(None, Some(&p.name))).unwrap().entries;
    assert_eq!(added.len(), 1);
    assert_eq!(added[0].project_name.as_deref(), Some("my-app"));
    assert_eq!(audit(&f.engine, q(Some("pause"), None)).unwrap().entries.len(), 1);
    let chain = verify_audit(&f.engine).unwrap();
    assert!(chain.intact && chain.entries == 3 && chain.break_at.is_none());
}

#[test]
fn engine_events_become_ui_events() {
    let f = fixture();
    let mut rx = f.engine.subscribe();
    set_paused(&f.engine, &f.ctx, true).unwrap();
    let e = event(&rx.try_recv().unwrap());
    assert_eq!(e, UiEvent::AccessChanged { paused: true });
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        serde_json::json!({"kind": "accessChanged", "paused": true})
    );
    add(&f);
    // The engine may repeat an access event when it reloads its cache; the window treats
    // events as "redraw this", so repeats are harmless.
    let next = std::iter::from_fn(|| rx.try_recv().ok())
        .map(|e| event(&e))
        .find(|e| *e != UiEvent::AccessChanged { paused: true });
    assert_eq!(next, Some(UiEvent::ProjectsChanged));
}

#[test]
fn pc02_the_window_hears_when_the_integrity_findings_change() {
    let f = fixture();
    add(&f);
    let mut rx = f.engine.subscribe();
    let heard = |rx: &mut tokio::sync::broadcast::Receiver<_>| {
        std::iter::from_fn(|| rx.try_recv().ok())
            .any(|e| matches!(event(&e), UiEvent::AccessChanged { .. }))
    };
    // Edited without the install secret, by another program: a finding, and the banner shows.
    rusqlite::Connection::open(f.engine.data_dir().join("sluice.db"))
        .unwrap()
        .execute("UPDATE projects SET access = 'read-write'", [])
        .unwrap();
    let state = app_state(&f.engine, &f.ctx).unwrap();
    assert_eq!(state.integrity.len(), 1, "{:?}", state.integrity);
    assert!(heard(&mut rx), "the window is told to reload its state");
    // `sluice doctor --reseal` in another process: the banner goes without a window reload.
    let cli =
        Engine::open(&EngineConfig::new(f.engine.data_dir().into(), SecretPreference::FileOnly))
            .unwrap();
    assert_eq!(cli.reseal().unwrap().len(), 1);
    f.engine.check_access().unwrap();
    assert!(heard(&mut rx), "the reseal reaches the window");
    assert!(app_state(&f.engine, &f.ctx).unwrap().integrity.is_empty());
    // Nothing changed since: no event.
    f.engine.check_access().unwrap();
    assert!(!heard(&mut rx));
}

/// A change made by another process (the CLI, as the README suggests, while the window is open)
/// reaches the window as the event that makes it reload that view, once the serving engine
/// looks (at the nudge the CLI leaves, or its next tick; here, the next check).
#[test]
fn the_window_hears_projects_and_tokens_changed_by_another_process() {
    let f = fixture();
    f.engine.check_access().unwrap();
    let mut rx = f.engine.subscribe();
    let mut heard = || -> Vec<UiEvent> {
        f.engine.check_access().unwrap();
        std::iter::from_fn(|| rx.try_recv().ok()).map(|e| event(&e)).collect()
    };
    let cli =
        Engine::open(&EngineConfig::new(f.engine.data_dir().into(), SecretPreference::FileOnly))
            .unwrap();
    use sluice_core::{AccessMode, ExecMode};
    cli.add_project(&f.folder, None, AccessMode::ReadOnly, ExecMode::Off).unwrap();
    assert_eq!(heard(), [UiEvent::ProjectsChanged]);
    cli.set_modes("my-app", Some(AccessMode::ReadWrite), None).unwrap();
    assert_eq!(heard(), [UiEvent::ProjectsChanged]);
    assert_eq!(list_projects(&f.engine).unwrap()[0].access, Access::ReadWrite);
    cli.create_token("Cursor", None, None).unwrap();
    assert_eq!(heard(), [UiEvent::TokensChanged]);
    cli.revoke_token("Cursor").unwrap();
    assert_eq!(heard(), [UiEvent::TokensChanged]);
    cli.remove_project("my-app").unwrap();
    assert_eq!(heard(), [UiEvent::ProjectsChanged]);
    assert!(list_projects(&f.engine).unwrap().is_empty());
    // Nothing changed since: no event.
    assert_eq!(heard(), []);
}

#[test]
fn network_for_commands_follows_the_mode_until_set() {
    let f = fixture();
    let p = add(&f);
    assert_eq!((p.network, p.network_mode), (None, Net::Off), "execution off: no network");
    let p = set_project_modes(
        &f.engine,
        SetModes { id: p.id.clone(), access: Some(Access::ReadWrite), exec: Some(Exec::Project) },
    )
    .unwrap();
    assert_eq!((p.network, p.network_mode), (None, Net::Registries), "project mode: registries");
    let set = |network| SetNetwork { id: p.id.clone(), network };
    assert_eq!(widens_network(&f.engine, &set(Some(Net::Off))).unwrap(), None);
    let p = set_project_network(&f.engine, set(Some(Net::Off))).unwrap();
    assert_eq!((p.network, p.network_mode), (Some(Net::Off), Net::Off));
    // Back to the default reaches the registries again: that widens, as does on.
    assert_eq!(widens_network(&f.engine, &set(None)).unwrap(), Some(NetworkMode::Registries));
    assert_eq!(widens_network(&f.engine, &set(Some(Net::On))).unwrap(), Some(NetworkMode::On));
    let p = set_project_network(&f.engine, set(Some(Net::On))).unwrap();
    assert_eq!(p.network_mode, Net::On);
    // From on, the registries reach less: no question.
    assert_eq!(widens_network(&f.engine, &set(Some(Net::Registries))).unwrap(), None);
    let p = set_project_network(&f.engine, set(None)).unwrap();
    assert_eq!((p.network, p.network_mode), (None, Net::Registries));
    assert_eq!(list_projects(&f.engine).unwrap()[0].network_mode, Net::Registries);
    // Any mode is off by default; switching to it never needs the network question.
    let p = set_project_modes(
        &f.engine,
        SetModes { id: p.id.clone(), access: None, exec: Some(Exec::Any) },
    )
    .unwrap();
    assert_eq!((p.network, p.network_mode), (None, Net::Off));
    let bad = SetNetwork { id: "nope".into(), network: Some(Net::On) };
    assert_eq!(widens_network(&f.engine, &bad).unwrap_err().code, "project_not_found");
    assert_eq!(set_project_network(&f.engine, bad).unwrap_err().code, "project_not_found");
}

/// The registries list from the window: a bad host changes nothing; what a list adds is what
/// the native question names; removing and resetting add nothing.
#[test]
fn the_registries_list_is_edited_with_what_it_adds_named() {
    let f = fixture();
    let defaults = registries(&f.engine).unwrap();
    assert!(defaults.iter().any(|r| r.host == "pypi.org" && r.serves.is_some()));
    let mut hosts: Vec<String> = defaults.iter().map(|r| r.host.clone()).collect();
    hosts.push("pypi.corp.example".into());
    assert_eq!(added_registries(&f.engine, Some(&hosts)).unwrap(), ["pypi.corp.example"]);
    let got = set_registries(&f.engine, Some(hosts.clone())).unwrap();
    let mine = got.iter().find(|r| r.host == "pypi.corp.example").unwrap();
    assert_eq!(mine.serves, None);
    assert_eq!(app_state(&f.engine, &f.ctx).unwrap().registries, got);
    hosts.retain(|h| h != "pypi.org");
    assert!(added_registries(&f.engine, Some(&hosts)).unwrap().is_empty());
    assert!(added_registries(&f.engine, None).unwrap().is_empty());
    let bad = vec!["pypi.org".to_owned(), "169.254.169.254".to_owned()];
    assert_eq!(added_registries(&f.engine, Some(&bad)).unwrap_err().code, "invalid_argument");
    assert_eq!(set_registries(&f.engine, Some(bad)).unwrap_err().code, "invalid_argument");
    assert_eq!(registries(&f.engine).unwrap(), got, "a refused list changed something");
    assert_eq!(set_registries(&f.engine, None).unwrap(), defaults);
}

#[test]
fn check_port_tells_free_taken_and_this_sluices_own_port_apart() {
    let f = fixture();
    // A port another program holds.
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = other.local_addr().unwrap().port();
    let c = check_port(&f.ctx, taken).unwrap();
    assert_eq!((c.port, c.status), (taken, PortStatus::InUse));
    assert_eq!(c.message, format!("Port {taken} is in use by another program."));

    // The same port as the one this Sluice serves on: its own.
    let ours = Context { port: taken, ..f.ctx.clone() };
    let c = check_port(&ours, taken).unwrap();
    assert_eq!(c.status, PortStatus::ThisSluice);
    assert_eq!(
        c.message,
        format!("Port {taken} is served by this Sluice: its MCP endpoint listens there.")
    );

    // Released: free, and checking it leaves it free (nothing kept listening).
    drop(other);
    let c = check_port(&f.ctx, taken).unwrap();
    assert_eq!(
        (c.status, c.message.as_str()),
        (PortStatus::Free, &*format!("Port {taken} is free."))
    );
    std::net::TcpListener::bind(("127.0.0.1", taken)).expect("the check let the port go");
    // This Sluice's own port found free means its server stopped: said so, not "free".
    let c = check_port(&ours, taken).unwrap();
    assert_eq!(c.status, PortStatus::Free);
    assert!(c.message.contains("not listening on it any more"), "{}", c.message);

    let e = check_port(&f.ctx, 0).unwrap_err();
    assert_eq!(e.code, "invalid_argument");
    assert_eq!(serde_json::to_value(check_port(&f.ctx, taken).unwrap()).unwrap()["status"], "free");
}
