//! Project rows: uniqueness, the mode rule, state, shield and deletion.

use sluice_core::{AccessMode, Coded, ErrorCode, ExecMode, NetworkMode, ProjectState};
use sluice_store::{Channel, ModeChange, NewProject, RootFingerprint, RuleOrigin, Store};

use crate::{add_project, data_dir, open};

fn new(name: &str, root: &str) -> NewProject {
    NewProject {
        name: name.into(),
        root: crate::root(root),
        access: AccessMode::ReadOnly,
        exec: ExecMode::Off,
        fingerprint: Some(RootFingerprint { dev: u64::MAX, ino: 42 }),
    }
}

#[test]
fn names_are_unique_case_insensitively_and_roots_are_unique() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = s.insert_project(&new("Web", "/a")).unwrap();
    assert_eq!(p.access, AccessMode::ReadOnly);
    assert_eq!(s.project(&p.id).unwrap().unwrap(), p, "round trip, fingerprint bits included");

    let err = s.insert_project(&new("web", "/b")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert!(err.to_string().contains("already exists"), "{err}");

    let err = s.insert_project(&new("other", "/a")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert!(err.to_string().contains("already authorized"), "{err}");

    let q = s.insert_project(&new("api", "/b")).unwrap();
    assert_eq!(s.rename_project(&q.id, "WEB").unwrap_err().code(), ErrorCode::Conflict);
    s.rename_project(&q.id, "backend").unwrap();
    assert_eq!(s.find_project("BACKEND").unwrap().unwrap().id, q.id);
    assert_eq!(s.find_project(q.id.as_str()).unwrap().unwrap().name, "backend");
    assert!(s.find_project("nope").unwrap().is_none());
    let names: Vec<_> = s.list_projects().unwrap().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["backend", "Web"]);
}

#[test]
fn bad_names_and_roots_are_refused() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    for (name, root) in
        [("", "/x"), ("  ", "/x"), ("proj_abc", "/x"), ("a\nb", "/x"), ("ok", "rel")]
    {
        let err = s.insert_project(&new(name, root)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{name:?} {root:?}");
    }
}

#[test]
fn execution_that_can_write_needs_read_write() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let mut n = new("p", "/p");
    n.exec = ExecMode::Project;
    assert_eq!(s.insert_project(&n).unwrap_err().code(), ErrorCode::Forbidden);

    let p = s.insert_project(&new("p", "/p")).unwrap();
    let err = s.set_project_modes(&p.id, None, Some(ExecMode::Any)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Forbidden);
    assert!(err.to_string().contains("read-write"), "{err}");
    // `safe` inspections are allowed on a read-only project.
    s.set_project_modes(&p.id, None, Some(ExecMode::Safe)).unwrap();

    let change =
        s.set_project_modes(&p.id, Some(AccessMode::ReadWrite), Some(ExecMode::Project)).unwrap();
    assert_eq!(
        change,
        ModeChange {
            access: AccessMode::ReadWrite,
            exec: ExecMode::Project,
            exec_forced_off: false
        }
    );
    // Dropping to read-only forces execution off.
    let change = s.set_project_modes(&p.id, Some(AccessMode::ReadOnly), None).unwrap();
    assert_eq!(
        change,
        ModeChange { access: AccessMode::ReadOnly, exec: ExecMode::Off, exec_forced_off: true }
    );
    let p = s.project(&p.id).unwrap().unwrap();
    assert_eq!((p.access, p.exec), (AccessMode::ReadOnly, ExecMode::Off));
    // Asking for both at once is contradictory and refused.
    s.set_project_modes(&p.id, Some(AccessMode::ReadWrite), Some(ExecMode::Any)).unwrap();
    let err = s.set_project_modes(&p.id, Some(AccessMode::ReadOnly), Some(ExecMode::Any));
    assert_eq!(err.unwrap_err().code(), ErrorCode::Forbidden);
}

#[test]
fn state_shield_and_delete() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "st");
    let lost = ProjectState::RootLost("folder replaced".into());
    s.set_project_state(&p.id, &lost).unwrap();
    assert_eq!(s.project(&p.id).unwrap().unwrap().state, lost);
    s.set_project_state(&p.id, &ProjectState::Disabled).unwrap();
    assert_eq!(s.project(&p.id).unwrap().unwrap().state, ProjectState::Disabled);

    let pats = vec![".env*".to_owned(), "secrets/**".to_owned()];
    s.set_project_shield(&p.id, Some(&pats)).unwrap();
    assert_eq!(s.project(&p.id).unwrap().unwrap().shield_patterns, Some(pats));
    s.set_project_shield(&p.id, None).unwrap();
    assert_eq!(s.project(&p.id).unwrap().unwrap().shield_patterns, None);

    s.delete_project(&p.id).unwrap();
    assert!(s.project(&p.id).unwrap().is_none());
    assert_eq!(s.delete_project(&p.id).unwrap_err().code(), ErrorCode::NotFound);
    assert_eq!(s.rename_project(&p.id, "x").unwrap_err().code(), ErrorCode::NotFound);
}

#[test]
fn allow_rules_are_exact_and_go_with_their_project() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "rules");
    let unknown = RuleOrigin::default();
    let argv = vec!["cargo".to_owned(), "test".to_owned()];
    let r = s.insert_allow_rule(&p.id, &argv, "", &[], None, &unknown).unwrap();
    assert_eq!(
        s.insert_allow_rule(&p.id, &argv, "", &[], None, &unknown).unwrap(),
        r,
        "idempotent"
    );
    // The same argv in another folder or with other environment additions is another rule.
    let env = [("RUST_LOG".to_owned(), "debug".to_owned())];
    let in_sub = s.insert_allow_rule(&p.id, &argv, "sub", &[], None, &unknown).unwrap();
    let with_env = s.insert_allow_rule(&p.id, &argv, "", &env, None, &unknown).unwrap();
    assert_ne!(in_sub.id, r.id);
    assert_eq!(with_env.env, env.to_vec());
    assert_eq!(s.list_allow_rules(Some(&p.id)).unwrap(), vec![r.clone(), in_sub, with_env]);
    // Approving "always" again after the scripts changed binds the same rule to the new text.
    let npm = vec!["npm".to_owned(), "run".to_owned(), "build".to_owned()];
    let first = s.insert_allow_rule(&p.id, &npm, "", &[], Some("aaaa"), &unknown).unwrap();
    assert_eq!(first.content.as_deref(), Some("aaaa"));
    let again = s.insert_allow_rule(&p.id, &npm, "", &[], Some("bbbb"), &unknown).unwrap();
    assert_eq!((again.id, again.content.as_deref()), (first.id, Some("bbbb")));
    assert_eq!(s.list_allow_rules(Some(&p.id)).unwrap().len(), 4);
    s.delete_project(&p.id).unwrap();
    assert!(s.list_allow_rules(None).unwrap().is_empty());
    assert_eq!(s.delete_allow_rule(r.id).unwrap_err().code(), ErrorCode::NotFound);
}

#[test]
fn an_allow_rule_records_who_added_it_and_keeps_its_first_origin() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "rules");
    let argv = vec!["npm".to_owned(), "run".to_owned(), "build".to_owned()];
    let tray = RuleOrigin { from: Some(Channel::Tray), asked_by: Some("Cursor".into()) };
    let r = s.insert_allow_rule(&p.id, &argv, "", &[], Some("aaaa"), &tray).unwrap();
    assert_eq!(r.origin, tray);
    // Granted again (the scripts changed) from elsewhere: the new text, the first origin.
    let cli = RuleOrigin { from: Some(Channel::Cli), asked_by: Some("Claude".into()) };
    let again = s.insert_allow_rule(&p.id, &argv, "", &[], Some("bbbb"), &cli).unwrap();
    assert_eq!((again.id, again.content.as_deref(), &again.origin), (r.id, Some("bbbb"), &tray));
    let window = RuleOrigin { from: Some(Channel::Window), asked_by: None };
    let other = vec!["cargo".to_owned(), "test".to_owned()];
    let w = s.insert_allow_rule(&p.id, &other, "", &[], None, &window).unwrap();
    let listed: Vec<RuleOrigin> =
        s.list_allow_rules(Some(&p.id)).unwrap().into_iter().map(|r| r.origin).collect();
    assert_eq!(listed, vec![tray, window]);
    assert_eq!(s.list_allow_rules(None).unwrap()[1], w);

    // A channel the schema does not know is refused by the database itself.
    let raw = rusqlite::Connection::open(dir.join(sluice_store::DB_FILE)).unwrap();
    let err = raw
        .execute("UPDATE allow_rules SET added_from = 'telepathy' WHERE id = ?1", [w.id])
        .unwrap_err();
    assert!(err.to_string().contains("CHECK"), "{err}");
}

/// Rules made before v8 keep their command, folder, environment, content and time, and say
/// nothing about who added them; the migration backs the v7 database up first.
#[test]
fn allow_rules_survive_the_migration_to_v8_without_an_origin() {
    let (_tmp, dir) = data_dir();
    let old = Store::open_at_version(&dir, 7).unwrap();
    let p = add_project(&old, "old-rules");
    let argv = vec!["make".to_owned(), "test".to_owned()];
    let env = [("CI".to_owned(), "1".to_owned())];
    let raw = rusqlite::Connection::open(dir.join(sluice_store::DB_FILE)).unwrap();
    raw.execute(
        "INSERT INTO allow_rules (project_id, argv, cwd, env, created_ms, content)
         VALUES (?1, '[\"make\",\"test\"]', 'sub', '[[\"CI\",\"1\"]]', 1700000000000, 'cafe')",
        [p.id.as_str()],
    )
    .unwrap();
    drop(raw);
    drop(old);

    let s = open(&dir);
    assert_eq!(s.schema_version().unwrap(), sluice_store::SCHEMA_VERSION);
    let rules = s.list_allow_rules(Some(&p.id)).unwrap();
    assert_eq!(rules.len(), 1);
    let r = &rules[0];
    assert_eq!((&r.argv, r.cwd.as_str(), &r.env), (&argv, "sub", &env.to_vec()));
    assert_eq!((r.content.as_deref(), r.created_ms), (Some("cafe"), 1_700_000_000_000));
    assert_eq!(r.origin, RuleOrigin::default());
    let backups: Vec<String> = std::fs::read_dir(dir.join("backups"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(backups.iter().any(|n| n.starts_with("sluice.db.v7-")), "{backups:?}");
}

#[test]
fn the_network_setting_defaults_to_the_mode_and_survives_a_migration_from_v4() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("p");
    std::fs::create_dir_all(&root).unwrap();
    let data = dir.path().join("data");
    let old = Store::open_at_version(&data, 4).unwrap();
    let p = old
        .insert_project(&sluice_store::NewProject {
            name: "p".into(),
            root: root.clone(),
            access: sluice_core::AccessMode::ReadWrite,
            exec: sluice_core::ExecMode::Project,
            fingerprint: None,
        })
        .unwrap();
    drop(old);
    let store = open(&data);
    assert_eq!(store.project(&p.id).unwrap().unwrap().network, None);
    for mode in NetworkMode::ALL {
        store.set_project_network(&p.id, Some(*mode)).unwrap();
        assert_eq!(store.project(&p.id).unwrap().unwrap().network, Some(*mode));
        assert_eq!(store.list_projects().unwrap()[0].network, Some(*mode));
    }
    store.set_project_network(&p.id, None).unwrap();
    assert_eq!(store.project(&p.id).unwrap().unwrap().network, None);
    let missing = sluice_core::ProjectId::generate();
    assert!(store.set_project_network(&missing, Some(NetworkMode::On)).is_err());
}

/// v10 moved the setting to a column that also takes `registries`: on and off chosen before
/// are kept, and the default stays the default.
#[test]
fn a_network_choice_made_before_v10_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let old = Store::open_at_version(&data, 9).unwrap();
    let mut ids = Vec::new();
    for name in ["off", "on", "default"] {
        let root = dir.path().canonicalize().unwrap().join(name);
        std::fs::create_dir_all(&root).unwrap();
        let p = old
            .insert_project(&sluice_store::NewProject {
                name: name.into(),
                root,
                access: sluice_core::AccessMode::ReadWrite,
                exec: sluice_core::ExecMode::Project,
                fingerprint: None,
            })
            .unwrap();
        ids.push(p.id);
    }
    drop(old);
    let raw = rusqlite::Connection::open(data.join("sluice.db")).unwrap();
    for (id, value) in ids.iter().zip(["off", "on"]) {
        raw.execute("UPDATE projects SET network = ?2 WHERE id = ?1", [id.as_str(), value])
            .unwrap();
    }
    drop(raw);
    let store = open(&data);
    let got: Vec<_> = ids.iter().map(|id| store.project(id).unwrap().unwrap().network).collect();
    assert_eq!(got, [Some(NetworkMode::Off), Some(NetworkMode::On), None]);
    store.set_project_network(&ids[2], Some(NetworkMode::Registries)).unwrap();
    drop(store);
    let store = open(&data);
    assert_eq!(store.project(&ids[2]).unwrap().unwrap().network, Some(NetworkMode::Registries));
}

/// A project follows the default auto-run list until the user sets its own, which survives a
/// reopen; projects made before v9 follow the defaults.
#[test]
fn the_autorun_list_is_the_default_until_set_and_survives_a_migration_from_v8() {
    use sluice_core::{AutoRunAction, AutoRunRule};
    let (_tmp, dir) = data_dir();
    let old = Store::open_at_version(&dir, 8).unwrap();
    let p = add_project(&old, "old-project");
    drop(old);
    let s = open(&dir);
    assert_eq!(s.project(&p.id).unwrap().unwrap().autorun_rules, None);
    let rules = vec![AutoRunRule {
        pattern: "/deploy/**".into(),
        action: AutoRunAction::Refuse,
        program: "the deploy bot".into(),
        consequence: "the deploy bot runs these scripts every night".into(),
    }];
    s.set_project_autorun(&p.id, Some(&rules)).unwrap();
    drop(s);
    let s = open(&dir);
    assert_eq!(s.project(&p.id).unwrap().unwrap().autorun_rules, Some(rules));
    s.set_project_autorun(&p.id, None).unwrap();
    assert_eq!(s.project(&p.id).unwrap().unwrap().autorun_rules, None);
    let raw = rusqlite::Connection::open(dir.join(sluice_store::DB_FILE)).unwrap();
    let err = raw
        .execute("UPDATE projects SET autorun_rules = '{}' WHERE id = ?1", [p.id.as_str()])
        .unwrap_err();
    assert!(err.to_string().contains("CHECK"), "{err}");
}

/// A project's sandbox settings are the defaults until set, survive a reopen and a migration
/// from v9, and a hand-edited row with a bad path fails loudly instead of decoding.
#[test]
fn sandbox_settings_are_the_defaults_until_set_and_survive_a_migration_from_v9() {
    use sluice_core::{HostPath, SandboxSettings};
    let (_tmp, dir) = data_dir();
    let old = Store::open_at_version(&dir, 9).unwrap();
    let p = add_project(&old, "old-project");
    drop(old);
    let raw = rusqlite::Connection::open(dir.join(sluice_store::DB_FILE)).unwrap();
    raw.execute("UPDATE projects SET network = 'off' WHERE id = ?1", [p.id.as_str()]).unwrap();
    drop(raw);
    let s = open(&dir);
    assert_eq!(s.schema_version().unwrap(), sluice_store::SCHEMA_VERSION);
    let migrated = s.project(&p.id).unwrap().unwrap();
    assert_eq!(migrated.sandbox, SandboxSettings::default());
    assert_eq!(migrated.network, Some(NetworkMode::Off), "older settings are kept");
    let path = |t: &str| HostPath::parse(t).unwrap();
    let settings = SandboxSettings {
        hide: vec![path("~/.config/foo"), path("/opt/secrets")],
        unhide: vec![path("~/.gitconfig")],
        grants: vec![path("~/.npmrc")],
        sockets: vec![path("/var/run/docker.sock")],
        require_full: true,
    };
    s.set_project_sandbox(&p.id, &settings).unwrap();
    drop(s);
    let s = open(&dir);
    assert_eq!(s.project(&p.id).unwrap().unwrap().sandbox, settings);
    assert_eq!(s.list_projects().unwrap()[0].sandbox, settings);
    s.set_project_sandbox(&p.id, &SandboxSettings::default()).unwrap();
    assert_eq!(s.project(&p.id).unwrap().unwrap().sandbox, SandboxSettings::default());
    let missing = sluice_core::ProjectId::generate();
    let err = s.set_project_sandbox(&missing, &settings).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);

    let raw = rusqlite::Connection::open(dir.join(sluice_store::DB_FILE)).unwrap();
    for bad in ["UPDATE projects SET grants = '{}'", "UPDATE projects SET require_full = 2"] {
        let err = raw.execute(bad, []).unwrap_err();
        assert!(err.to_string().contains("CHECK"), "{bad}: {err}");
    }
    raw.execute("UPDATE projects SET grants = '[\"relative/path\"]'", []).unwrap();
    assert!(s.project(&p.id).is_err(), "a bad path is not decoded");
}
