//! PC-02 at the store: state edited in the database without the install secret is read as less
//! privilege, never more, and named by `Store::integrity`; Sluice's own writes, from any
//! process, keep verifying; a database migrated from schema 13 is sealed as it was, and one
//! put back to before sealing is not (the secret's storage records that sealing began).

use rusqlite::Connection;
use sluice_core::{AccessMode, Coded, ErrorCode, ExecMode, ProjectState};
use sluice_store::{
    ActorKind, AuditRecord, FindingKind, IntegrityFinding, NewToken, Outcome, RuleOrigin,
    SecretPreference, Store,
};

use crate::{add_project, data_dir, open, test_secret};

/// What an attacker without the secret uses: a plain connection to the file.
fn raw(dir: &std::path::Path) -> Connection {
    Connection::open(dir.join(sluice_store::DB_FILE)).unwrap()
}

fn kinds(found: &[IntegrityFinding]) -> Vec<FindingKind> {
    found.iter().map(|f| f.kind).collect()
}

fn human(action: &str) -> AuditRecord {
    AuditRecord {
        time_ms: 1_700_000_000_000,
        actor: "local user".into(),
        actor_kind: ActorKind::Human,
        token_id: None,
        action: action.into(),
        project_id: None,
        outcome: Outcome::Ok,
        error_code: None,
        duration_ms: None,
        params_hash: None,
        detail: None,
    }
}

/// A read-only project without execution, the state every widening attack starts from.
fn read_only_site(s: &Store) -> sluice_store::Project {
    s.insert_project(&sluice_store::NewProject {
        name: "site".into(),
        root: crate::root("/srv/site"),
        access: AccessMode::ReadOnly,
        exec: ExecMode::Off,
        fingerprint: None,
    })
    .unwrap()
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

#[test]
fn pc02_a_widened_project_is_unavailable_named_and_not_changed_further() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = read_only_site(&s);
    s.set_project_policy(&p.id, Some(true), Some(true)).unwrap();
    assert!(s.integrity().unwrap().is_empty(), "Sluice's own writes verify");

    raw(&dir)
        .execute(
            "UPDATE projects SET access = 'read-write', exec = 'any', ask_writes = 0 WHERE id = ?1",
            [p.id.as_str()],
        )
        .unwrap();
    let read = s.project(&p.id).unwrap().unwrap();
    assert!(
        matches!(read.state, ProjectState::RootLost(ref why) if why.contains("outside Sluice"))
    );
    assert!(!s.list_projects().unwrap()[0].state.is_available());
    let found = s.integrity().unwrap();
    assert_eq!(kinds(&found), [FindingKind::Project]);
    assert!(found[0].message.contains("\"site\"") && found[0].message.contains(p.id.as_str()));
    // An ordinary change does not bless the edit.
    let err = s.set_project_network(&p.id, None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Forbidden, "{err}");
    // The user's explicit acceptance does, and says what it accepted.
    let accepted = s.reseal().unwrap();
    assert_eq!(kinds(&accepted), [FindingKind::Project]);
    assert!(s.integrity().unwrap().is_empty());
    assert!(s.project(&p.id).unwrap().unwrap().state.is_available());
}

#[test]
fn pc02_an_inserted_allow_rule_is_ignored_and_named() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "app");
    let good = s
        .insert_allow_rule(&p.id, &argv(&["cargo", "test"]), "", &[], None, &RuleOrigin::default())
        .unwrap();
    raw(&dir)
        .execute(
            "INSERT INTO allow_rules (project_id, argv, cwd, env, created_ms)
             VALUES (?1, '[\"/bin/rm\",\"-rf\",\".\"]', '', '[]', 1)",
            [p.id.as_str()],
        )
        .unwrap();
    let rules = s.list_allow_rules(Some(&p.id)).unwrap();
    assert_eq!(rules, std::slice::from_ref(&good), "the forged rule allows nothing");
    let found = s.integrity().unwrap();
    assert_eq!(kinds(&found), [FindingKind::AllowRule]);
    assert!(found[0].message.contains("/bin/rm"), "{}", found[0].message);
    // Removing it clears the finding.
    s.delete_allow_rule(found[0].subject.parse().unwrap()).unwrap();
    assert!(s.integrity().unwrap().is_empty());
    // An edited good rule is ignored too.
    raw(&dir).execute("UPDATE allow_rules SET cwd = 'elsewhere' WHERE id = ?1", [good.id]).unwrap();
    assert!(s.list_allow_rules(Some(&p.id)).unwrap().is_empty());
}

#[test]
fn pc02_a_widened_token_is_refused_until_revoked_or_accepted() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let a = add_project(&s, "a");
    let b = add_project(&s, "b");
    let t = s
        .insert_token(&NewToken {
            label: "Cursor".into(),
            hash: [3; 32],
            scope: Some(vec![a.id.clone()]),
            expires_ms: Some(i64::MAX),
            profile: sluice_core::Profile::Full,
        })
        .unwrap();
    assert!(s.find_token_by_hash(&[3; 32]).unwrap().unwrap().is_active(0));
    let max = i64::MAX.to_string();
    for (attack, undo) in [
        ("UPDATE tokens SET all_projects = 1", "UPDATE tokens SET all_projects = 0"),
        (
            "INSERT INTO token_scopes (token_id, project_id) SELECT id, '%B%' FROM tokens",
            "DELETE FROM token_scopes WHERE project_id = '%B%'",
        ),
        ("UPDATE tokens SET expires_ms = NULL", "UPDATE tokens SET expires_ms = %MAX%"),
    ] {
        let sql = |q: &str| q.replace("%B%", b.id.as_str()).replace("%MAX%", &max);
        raw(&dir).execute(&sql(attack), []).unwrap();
        let read = s.find_token_by_hash(&[3; 32]).unwrap().unwrap();
        assert!(read.tampered && !read.is_active(0), "{attack}");
        assert!(s.list_tokens().unwrap().iter().all(|t| !t.is_active(0)), "{attack}");
        let found = s.integrity().unwrap();
        assert_eq!(kinds(&found), [FindingKind::Token], "{attack}");
        assert!(found[0].message.contains("\"Cursor\""));
        raw(&dir).execute(&sql(undo), []).unwrap();
    }
    assert!(s.find_token_by_hash(&[3; 32]).unwrap().unwrap().is_active(0), "undone, it verifies");
    // A project removed from its scope keeps it verifying (the store reseals it).
    s.delete_project(&b.id).unwrap();
    s.delete_project(&a.id).unwrap();
    assert!(s.integrity().unwrap().is_empty());
    // Revoking a tampered token clears its finding: revoked, it is sealed as such.
    raw(&dir).execute("UPDATE tokens SET all_projects = 1", []).unwrap();
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::Token]);
    let revoked = s.revoke_token(&t.id).unwrap();
    assert!(!revoked.tampered && !revoked.is_active(0));
    assert!(s.integrity().unwrap().is_empty());
}

#[test]
fn pc02_a_deleted_or_forged_stop_counts_as_on() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    assert_eq!(s.sealed_flag("stopped").unwrap(), Some(false), "sealed off from the start");
    s.set_sealed_flag("stopped", true).unwrap();
    raw(&dir).execute("DELETE FROM kv WHERE key = 'stopped'", []).unwrap();
    assert_eq!(s.sealed_flag("stopped").unwrap(), None, "missing: the caller keeps the stop");
    raw(&dir).execute("INSERT INTO kv (key, value) VALUES ('stopped', 'false')", []).unwrap();
    assert_eq!(s.sealed_flag("stopped").unwrap(), None, "forged: the caller keeps the stop");
    raw(&dir).execute("DELETE FROM kv WHERE key = 'paused'", []).unwrap();
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::Stop, FindingKind::Pause]);
    // Accepting never lifts a stop or a pause: it seals them on.
    s.reseal().unwrap();
    assert_eq!(s.sealed_flag("stopped").unwrap(), Some(true));
    assert_eq!(s.sealed_flag("paused").unwrap(), Some(true));
    s.set_sealed_flag("stopped", false).unwrap();
    assert_eq!(s.sealed_flag("stopped").unwrap(), Some(false));
}

#[test]
fn pc02_a_cut_audit_log_with_its_head_rewound_does_not_verify() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let secret = test_secret();
    for n in 0..5 {
        s.audit_append(&secret, &human(&format!("action.{n}"))).unwrap();
    }
    assert!(s.audit_verify(&secret).unwrap().intact);
    let db = raw(&dir);
    let (seq, mac): (i64, Vec<u8>) = db
        .query_row("SELECT seq, mac FROM audit WHERE seq = 4", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
    db.execute_batch("DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE seq = 5;").unwrap();
    db.execute(
        "UPDATE kv SET value = ?1 WHERE key = 'sluice.audit.head'",
        [format!("{seq}:{hex}")],
    )
    .unwrap();
    let report = s.audit_verify(&secret).unwrap();
    assert!(!report.intact);
    let cut = report.first_break.unwrap();
    assert_eq!(cut.seq, 5);
    assert!(cut.reason.contains("#4") && cut.reason.contains("cut"), "{}", cut.reason);
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::AuditHead]);
}

#[test]
fn pc02_writes_from_another_process_verify_and_a_store_without_the_secret_writes_nothing() {
    let (_tmp, dir) = data_dir();
    let engine = open(&dir);
    let cli = open(&dir);
    let p = add_project(&cli, "from-cli");
    cli.set_project_modes(&p.id, Some(AccessMode::ReadWrite), Some(ExecMode::Project)).unwrap();
    cli.insert_allow_rule(&p.id, &argv(&["make"]), "", &[], None, &RuleOrigin::default()).unwrap();
    cli.rename_project(&p.id, "renamed").unwrap();
    cli.set_project_state(&p.id, &ProjectState::Disabled).unwrap();
    cli.set_project_state(&p.id, &ProjectState::Available).unwrap();
    cli.set_project_shield(&p.id, Some(&["*.key".to_owned()])).unwrap();
    cli.set_project_policy(&p.id, Some(false), None).unwrap();
    cli.set_project_fingerprint(&p.id, None).unwrap();
    cli.set_project_sandbox(&p.id, &Default::default()).unwrap();
    cli.set_project_autorun(&p.id, None).unwrap();
    let t = cli
        .insert_token(&NewToken {
            label: "t".into(),
            hash: [4; 32],
            scope: Some(vec![p.id.clone()]),
            expires_ms: None,
            profile: sluice_core::Profile::Full,
        })
        .unwrap();
    cli.limit_token(&t.id, sluice_core::SelfLimit::ReadOnly).unwrap();
    cli.lift_token_limit(&t.id).unwrap();
    cli.set_sealed_flag("paused", true).unwrap();
    assert!(engine.integrity().unwrap().is_empty());
    assert!(engine.project(&p.id).unwrap().unwrap().state.is_available());
    assert_eq!(engine.list_allow_rules(None).unwrap().len(), 1);
    assert_eq!(engine.sealed_flag("paused").unwrap(), Some(true));

    let blind = Store::open(&dir).unwrap();
    let err = blind.set_project_network(&p.id, None).unwrap_err();
    assert!(err.to_string().contains("install secret"), "{err}");
    assert!(blind.list_projects().is_err(), "nor read unverified");
}

#[test]
fn pc02_a_schema_13_database_is_sealed_as_it_was_at_the_first_start() {
    let (_tmp, dir) = data_dir();
    let old = Store::open_at_version(&dir, 13).unwrap();
    let p = add_project(&old, "old");
    old.set_project_modes(&p.id, None, Some(ExecMode::Any)).unwrap();
    old.insert_allow_rule(&p.id, &argv(&["npm", "test"]), "", &[], None, &RuleOrigin::default())
        .unwrap();
    let t = old
        .insert_token(&NewToken {
            label: "old".into(),
            hash: [9; 32],
            scope: Some(vec![p.id.clone()]),
            expires_ms: None,
            profile: sluice_core::Profile::Full,
        })
        .unwrap();
    old.kv_set_bool("stopped", true).unwrap();
    old.audit_append(&test_secret(), &human("old")).unwrap();
    drop(old);

    let s = open(&dir);
    assert_eq!(s.schema_version().unwrap(), sluice_store::SCHEMA_VERSION);
    assert!(s.integrity().unwrap().is_empty(), "{:?}", s.integrity());
    let migrated = s.project(&p.id).unwrap().unwrap();
    assert!(migrated.state.is_available() && migrated.exec == ExecMode::Any);
    assert_eq!(s.list_allow_rules(None).unwrap().len(), 1);
    assert!(s.find_token_by_hash(&[9; 32]).unwrap().unwrap().is_active(0));
    assert_eq!(s.find_token(t.id.as_str()).unwrap().unwrap().scope, Some(vec![p.id.clone()]));
    assert_eq!(s.sealed_flag("stopped").unwrap(), Some(true), "a stop survives the upgrade");
    assert!(s.audit_verify(&test_secret()).unwrap().intact);
    // Sealing happened once: a second start finds everything as it left it.
    drop(s);
    let s = open(&dir);
    assert!(s.integrity().unwrap().is_empty());
    // And from then on, a missing seal is a broken one.
    raw(&dir).execute("UPDATE projects SET seal = NULL", []).unwrap();
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::Project]);
}

#[test]
fn pc02_a_seal_record_put_back_to_pending_seals_nothing() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "app");
    drop(s);
    raw(&dir)
        .execute_batch(
            "UPDATE projects SET exec = 'any';
             UPDATE kv SET value = 'pending' WHERE key = 'sluice.seal';",
        )
        .unwrap();
    let s = open(&dir);
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::Marker, FindingKind::Project]);
    assert!(!s.project(&p.id).unwrap().unwrap().state.is_available());
    // A restart changes nothing; the user's reseal does.
    drop(s);
    let s = open(&dir);
    assert_eq!(s.integrity().unwrap().len(), 2);
    s.reseal().unwrap();
    assert!(s.integrity().unwrap().is_empty());
}

/// Opens the store as the engine and the CLI do: the secret loaded from its owner-only file
/// (which records whether sealing began), then attached.
fn open_kept(dir: &std::path::Path) -> Store {
    let s = Store::open(dir).unwrap();
    let loaded = s.load_install_secret(SecretPreference::FileOnly).unwrap();
    s.attach_secret(&loaded.secret).unwrap();
    s
}

fn secret_file(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join(sluice_store::secret::SECRET_FILE)).unwrap()
}

/// A sealed data folder with a read-only project, an allow rule, a scoped token and the stop
/// on; returns the project's id.
fn sealed_folder(dir: &std::path::Path) -> sluice_core::ProjectId {
    let s = open_kept(dir);
    assert!(secret_file(dir).trim_end().contains(":sealed"), "recorded with the secret");
    let p = read_only_site(&s);
    s.insert_allow_rule(&p.id, &argv(&["make"]), "", &[], None, &RuleOrigin::default()).unwrap();
    s.insert_token(&NewToken {
        label: "scoped".into(),
        hash: [7; 32],
        scope: Some(vec![p.id.clone()]),
        expires_ms: None,
        profile: sluice_core::Profile::Full,
    })
    .unwrap();
    s.set_sealed_flag("stopped", true).unwrap();
    assert!(s.integrity().unwrap().is_empty());
    p.id
}

/// What the attacker gains is checked after the restart: nothing.
fn assert_reset_and_nothing_granted(s: &Store, id: &sluice_core::ProjectId) {
    let found = s.integrity().unwrap();
    assert_eq!(found[0].kind, FindingKind::Reset, "{found:?}");
    assert_eq!(found[0].kind.code(), "seal-reset");
    assert!(found[0].message.contains("reset outside Sluice"), "{}", found[0].message);
    for kind in
        [FindingKind::Project, FindingKind::AllowRule, FindingKind::Token, FindingKind::Stop]
    {
        assert!(kinds(&found).contains(&kind), "{kind:?} missing from {found:?}");
    }
    let project = s.project(id).unwrap().unwrap();
    assert!(!project.state.is_available(), "the widened project stays unavailable");
    assert!(s.list_allow_rules(None).unwrap().is_empty(), "no rule allows anything");
    assert!(!s.find_token_by_hash(&[7; 32]).unwrap().unwrap().is_active(0), "the token is refused");
    assert_eq!(s.sealed_flag("stopped").unwrap(), None, "the deleted stop stays on");
    assert_eq!(s.sealed_flag("paused").unwrap(), None);
}

/// The reseal accepts it, keeps the secret's record, and keeps the stop on.
fn assert_reseal_restores(dir: &std::path::Path, id: &sluice_core::ProjectId) {
    let s = open_kept(dir);
    let accepted = s.reseal().unwrap();
    assert!(kinds(&accepted).contains(&FindingKind::Reset), "{accepted:?}");
    assert!(s.integrity().unwrap().is_empty());
    assert!(s.project(id).unwrap().unwrap().state.is_available());
    assert_eq!(s.sealed_flag("stopped").unwrap(), Some(true), "accepting never lifts the stop");
    drop(s);
    assert!(secret_file(dir).trim_end().contains(":sealed"));
    assert!(open_kept(dir).integrity().unwrap().is_empty(), "and a restart keeps it so");
}

#[test]
fn pc02_a_database_stripped_of_its_seals_and_put_back_to_pending_is_not_sealed_as_genuine() {
    let (_tmp, dir) = data_dir();
    let id = sealed_folder(&dir);
    raw(&dir)
        .execute_batch(
            "UPDATE projects SET access = 'read-write', exec = 'any';
             INSERT INTO allow_rules (project_id, argv, cwd, env, created_ms)
                 SELECT project_id, '[\"/bin/rm\",\"-rf\",\".\"]', cwd, env, 1 FROM allow_rules;
             UPDATE tokens SET all_projects = 1;
             DELETE FROM kv WHERE key = 'stopped';
             UPDATE projects SET seal = NULL;
             UPDATE allow_rules SET seal = NULL;
             UPDATE tokens SET seal = NULL;
             DELETE FROM kv WHERE key LIKE 'seal:%';
             UPDATE kv SET value = 'pending' WHERE key = 'sluice.seal';",
        )
        .unwrap();
    let s = open_kept(&dir);
    assert_reset_and_nothing_granted(&s, &id);
    drop(s);
    // A second start does not seal it either.
    assert_reset_and_nothing_granted(&open_kept(&dir), &id);
    assert_reseal_restores(&dir, &id);
}

#[test]
fn pc02_a_database_put_back_to_schema_13_is_not_sealed_as_genuine() {
    let (_tmp, dir) = data_dir();
    let id = sealed_folder(&dir);
    raw(&dir)
        .execute_batch(
            "ALTER TABLE projects DROP COLUMN seal;
             ALTER TABLE allow_rules DROP COLUMN seal;
             ALTER TABLE tokens DROP COLUMN seal;
             UPDATE projects SET access = 'read-write', exec = 'any';
             UPDATE tokens SET all_projects = 1;
             DELETE FROM kv WHERE key LIKE 'seal:%' OR key IN ('sluice.seal', 'stopped');
             PRAGMA user_version = 13;",
        )
        .unwrap();
    let s = open_kept(&dir);
    assert_eq!(s.schema_version().unwrap(), sluice_store::SCHEMA_VERSION, "migrated again");
    assert_reset_and_nothing_granted(&s, &id);
    drop(s);
    assert_reseal_restores(&dir, &id);
}

#[test]
fn pc02_a_genuine_schema_13_database_is_sealed_and_that_is_recorded_with_the_secret() {
    let (_tmp, dir) = data_dir();
    let old = Store::open_at_version(&dir, 13).unwrap();
    // The secret as every Sluice before the seals stored it: the bare hex.
    old.load_install_secret(SecretPreference::FileOnly).unwrap();
    let p = add_project(&old, "old");
    drop(old);
    assert!(!secret_file(&dir).contains(':'), "{}", secret_file(&dir));

    let s = open_kept(&dir);
    assert!(s.integrity().unwrap().is_empty(), "{:?}", s.integrity());
    assert!(s.project(&p.id).unwrap().unwrap().state.is_available());
    assert!(secret_file(&dir).trim_end().contains(":sealed"));
    #[cfg(unix)]
    assert_eq!(crate::mode(&dir.join(sluice_store::secret::SECRET_FILE)), 0o600);
    drop(s);
    // Read back with its record, the same secret: everything still verifies.
    assert!(open_kept(&dir).integrity().unwrap().is_empty());
    // A stored form with anything else after the hex is not a secret.
    let path = dir.join(sluice_store::secret::SECRET_FILE);
    std::fs::write(&path, secret_file(&dir).replace(":sealed", ":other")).unwrap();
    let err = Store::open(&dir).unwrap().load_install_secret(SecretPreference::FileOnly);
    assert!(err.unwrap_err().to_string().contains("not a Sluice install secret"));
}

#[test]
fn pc02_a_database_sealed_before_the_secret_recorded_it_gets_the_record_at_the_next_start() {
    let (_tmp, dir) = data_dir();
    let id = sealed_folder(&dir);
    // What a Sluice that sealed without recording it left: the bare hex.
    let path = dir.join(sluice_store::secret::SECRET_FILE);
    std::fs::write(&path, secret_file(&dir).replace(":audit", "").replace(":sealed", "")).unwrap();
    let s = open_kept(&dir);
    assert!(s.integrity().unwrap().is_empty());
    assert!(secret_file(&dir).trim_end().contains(":sealed"));
    assert!(s.project(&id).unwrap().unwrap().state.is_available());
}

#[test]
fn pc02_a_widened_profile_is_refused_until_revoked_or_accepted() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let t = s
        .insert_token(&NewToken {
            label: "Claude".into(),
            hash: [5; 32],
            scope: None,
            expires_ms: None,
            profile: sluice_core::Profile::Review,
        })
        .unwrap();
    assert_eq!(t.profile, sluice_core::Profile::Review);
    assert!(s.find_token_by_hash(&[5; 32]).unwrap().unwrap().is_active(0));
    // Set by the user through the store, it verifies.
    let t = s.set_token_profile(&t.id, sluice_core::Profile::Edit).unwrap();
    assert!(t.is_active(0) && t.profile == sluice_core::Profile::Edit);
    for widened in ["agent", "full"] {
        raw(&dir).execute("UPDATE tokens SET profile = ?1", [widened]).unwrap();
        let read = s.find_token_by_hash(&[5; 32]).unwrap().unwrap();
        assert!(read.tampered && !read.is_active(0), "{widened}");
        let found = s.integrity().unwrap();
        assert_eq!(kinds(&found), [FindingKind::Token], "{widened}");
        // And the store changes it no further.
        let err = s.set_token_profile(&t.id, sluice_core::Profile::Review).unwrap_err();
        assert_eq!(sluice_core::Coded::code(&err), sluice_core::ErrorCode::Forbidden);
    }
    raw(&dir).execute("UPDATE tokens SET profile = 'edit'", []).unwrap();
    assert!(s.find_token_by_hash(&[5; 32]).unwrap().unwrap().is_active(0), "undone, it verifies");
    // A name that is no profile fails loudly at the database.
    assert!(raw(&dir).execute("UPDATE tokens SET profile = 'root'", []).is_err());
}

#[test]
fn pc02_tokens_sealed_before_profiles_existed_keep_verifying_after_the_migration() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "a");
    let t = s
        .insert_token(&NewToken {
            label: "old".into(),
            hash: [6; 32],
            scope: Some(vec![p.id.clone()]),
            expires_ms: None,
            profile: sluice_core::Profile::Full,
        })
        .unwrap();
    drop(s);
    // Schema 15 as it was: no profile column, the seal computed without it.
    raw(&dir)
        .execute_batch("ALTER TABLE tokens DROP COLUMN profile; PRAGMA user_version = 15;")
        .unwrap();
    let s = open(&dir);
    assert_eq!(s.schema_version().unwrap(), sluice_store::SCHEMA_VERSION);
    assert!(s.integrity().unwrap().is_empty(), "{:?}", s.integrity());
    let read = s.find_token_by_hash(&[6; 32]).unwrap().unwrap();
    assert!(read.is_active(0) && read.profile == sluice_core::Profile::Full);
    assert_eq!(read.id, t.id);
    // Its seal was not blessed anew: an edit made before the upgrade still shows.
    drop(s);
    raw(&dir)
        .execute_batch(
            "ALTER TABLE tokens DROP COLUMN profile; UPDATE tokens SET expires_ms = NULL, \
             all_projects = 1; PRAGMA user_version = 15;",
        )
        .unwrap();
    let s = open(&dir);
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::Token]);
}

#[test]
fn pc02_git_emails_shown_outside_sluice_make_the_project_unavailable() {
    use sluice_core::GitEmails;
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "history");
    assert_eq!(p.git_emails, GitEmails::Hide, "hidden by default");
    assert_eq!(s.project(&p.id).unwrap().unwrap().git_emails, GitEmails::Hide);
    // The user's own choice verifies, both ways.
    s.set_project_git_emails(&p.id, GitEmails::Show).unwrap();
    let read = s.project(&p.id).unwrap().unwrap();
    assert!(read.state.is_available() && read.git_emails == GitEmails::Show);
    s.set_project_git_emails(&p.id, GitEmails::Hide).unwrap();
    assert!(s.integrity().unwrap().is_empty());
    // Shown by an edit of the file, the project is refused and named.
    raw(&dir).execute("UPDATE projects SET git_emails = 'show'", []).unwrap();
    assert!(!s.project(&p.id).unwrap().unwrap().state.is_available());
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::Project]);
    let err = s.set_project_git_emails(&p.id, GitEmails::Show).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Forbidden, "{err}");
    raw(&dir).execute("UPDATE projects SET git_emails = 'hide'", []).unwrap();
    assert!(s.project(&p.id).unwrap().unwrap().state.is_available(), "undone, it verifies");
    // Nothing else is a setting.
    assert!(raw(&dir).execute("UPDATE projects SET git_emails = 'some'", []).is_err());
    let missing = sluice_core::ProjectId::generate();
    let err = s.set_project_git_emails(&missing, GitEmails::Show).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
}

#[test]
fn pc02_projects_sealed_before_git_emails_existed_keep_verifying_after_the_migration() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "a");
    drop(s);
    // Schema 17 as it was: no git_emails column, the seal computed without it. Run twice: the
    // step adds the column only when it is missing.
    for _ in 0..2 {
        raw(&dir)
            .execute_batch("ALTER TABLE projects DROP COLUMN git_emails; PRAGMA user_version = 17;")
            .unwrap();
        let s = open(&dir);
        assert_eq!(s.schema_version().unwrap(), sluice_store::SCHEMA_VERSION);
        assert!(s.integrity().unwrap().is_empty(), "{:?}", s.integrity());
        let read = s.project(&p.id).unwrap().unwrap();
        assert!(read.state.is_available() && read.git_emails == sluice_core::GitEmails::Hide);
    }
    // A database already at 18 whose version was put back migrates again without a change.
    raw(&dir).execute_batch("PRAGMA user_version = 17;").unwrap();
    assert!(open(&dir).integrity().unwrap().is_empty());
    // Its seal was not blessed anew: an edit made before the upgrade still shows.
    raw(&dir)
        .execute_batch(
            "ALTER TABLE projects DROP COLUMN git_emails; UPDATE projects SET exec = 'safe'; \
             PRAGMA user_version = 17;",
        )
        .unwrap();
    let s = open(&dir);
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::Project]);
}

#[test]
fn pc02_git_hooks_turned_on_outside_sluice_make_the_project_unavailable() {
    use sluice_core::GitHooks;
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "hooks");
    assert_eq!(p.git_hooks, GitHooks::Off, "off by default");
    s.set_project_git_hooks(&p.id, GitHooks::Sandbox).unwrap();
    let read = s.project(&p.id).unwrap().unwrap();
    assert!(read.state.is_available() && read.git_hooks == GitHooks::Sandbox);
    s.set_project_git_hooks(&p.id, GitHooks::Off).unwrap();
    // Turned on by an edit of the file, the project is refused and named.
    raw(&dir).execute("UPDATE projects SET git_hooks = 'sandbox'", []).unwrap();
    assert!(!s.project(&p.id).unwrap().unwrap().state.is_available());
    assert_eq!(kinds(&s.integrity().unwrap()), [FindingKind::Project]);
    raw(&dir).execute("UPDATE projects SET git_hooks = 'off'", []).unwrap();
    assert!(s.project(&p.id).unwrap().unwrap().state.is_available(), "undone, it verifies");
    assert!(raw(&dir).execute("UPDATE projects SET git_hooks = 'host'", []).is_err());
    drop(s);
    // Sealed before the column existed (schema 19), it still verifies, hooks off.
    for _ in 0..2 {
        raw(&dir)
            .execute_batch("ALTER TABLE projects DROP COLUMN git_hooks; PRAGMA user_version = 19;")
            .unwrap();
        let s = open(&dir);
        assert!(s.integrity().unwrap().is_empty(), "{:?}", s.integrity());
        let read = s.project(&p.id).unwrap().unwrap();
        assert!(read.state.is_available() && read.git_hooks == GitHooks::Off);
    }
}
