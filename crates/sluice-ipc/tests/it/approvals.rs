//! Approvals through the window's commands, against a real engine: a waiting `ask` (as a write
//! tool makes it) is listed, decided once, and the waiting side sees the decision and reason.

use std::time::{Duration, Instant};

use sluice_engine::{AskOutcome, AskRequest, ChangeTally, Engine, EngineConfig, SecretPreference};
use sluice_ipc::*;
use tokio_util::sync::CancellationToken;

struct Fixture {
    _tmp: tempfile::TempDir,
    engine: std::sync::Arc<Engine>,
    project: ProjectDto,
    secret: String,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("my-app");
    std::fs::create_dir(&folder).unwrap();
    let engine =
        Engine::open(&EngineConfig::new(tmp.path().join("data"), SecretPreference::FileOnly))
            .unwrap();
    let project = add_project(
        &engine,
        AddProject {
            path: folder.display().to_string(),
            name: None,
            access: Access::ReadWrite,
            exec: Exec::Off,
        },
    )
    .unwrap();
    let (_, secret) = engine.create_token("Cursor", None, None).unwrap();
    Fixture { _tmp: tmp, engine: std::sync::Arc::new(engine), project, secret }
}

/// Starts an `ask` on its own thread, as the MCP layer does for a delete, and returns the
/// approval's id once it is pending along with the handle to the outcome.
fn ask(f: &Fixture, summary: &str) -> (String, std::thread::JoinHandle<AskOutcome>) {
    ask_noting(f, summary, None, Vec::new())
}

/// [`ask`] for a change with what it does counted (`Plan::tally`) and the auto-run paths it
/// touches, as `write_file` asks for `.vscode/tasks.json`.
fn ask_noting(
    f: &Fixture,
    summary: &str,
    tally: Option<ChangeTally>,
    autorun: Vec<sluice_core::AutoRunHit>,
) -> (String, std::thread::JoinHandle<AskOutcome>) {
    let engine = f.engine.clone();
    let project = f.project.name.clone();
    let summary = summary.to_owned();
    let secret = f.secret.clone();
    let before: Vec<String> =
        pending_approvals(&f.engine).unwrap().into_iter().map(|a| a.id).collect();
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let caller = engine.authenticate(&secret).unwrap();
            let handle = engine.project(&caller, &project).unwrap();
            let req = AskRequest {
                caller: &caller,
                project: &handle,
                tool: "delete_path",
                summary,
                tally,
                asked_because: "the project asks before deletes".into(),
                fingerprint: [7; 32],
            };
            engine.ask_change(req, autorun, CancellationToken::new(), |_| {}).await.unwrap()
        })
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(a) =
            pending_approvals(&f.engine).unwrap().into_iter().find(|a| !before.contains(&a.id))
        {
            return (a.id, handle);
        }
        assert!(Instant::now() < deadline, "no approval appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn approve_once_then_a_second_decision_is_a_conflict() {
    let f = fixture();
    let (id, waiting) = ask(&f, "delete notes/old.txt (12 B, restorable)");
    let listed = list_approvals(&f.engine).unwrap();
    assert_eq!(listed.len(), 1);
    let a = &listed[0];
    assert_eq!(a.status, ApprovalStatus::Pending);
    assert_eq!((a.tool.as_str(), a.token_label.as_str()), ("delete_path", "Cursor"));
    assert_eq!(a.project_name, "my-app");
    assert_eq!(a.summary, "delete notes/old.txt (12 B, restorable)");
    assert!(a.expires_ms > a.created_ms);
    assert_eq!(a.headline(), "Cursor · delete notes/old.txt (12 B, restorable) · my-app");

    let decided =
        decide_approval(&f.engine, &id, Verdict::Approve, None, DecidedFrom::Window).unwrap();
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert_eq!(decided.decided_by.as_deref(), Some("local user (window)"));
    assert!(matches!(waiting.join().unwrap(), AskOutcome::Approved { .. }));

    // Each approval is decided once, from anywhere.
    for verdict in [Verdict::Approve, Verdict::Deny] {
        let e = decide_approval(&f.engine, &id, verdict, None, DecidedFrom::Tray).unwrap_err();
        assert_eq!(e.code, "conflict", "{e:?}");
        assert_eq!(
            serde_json::to_value(&e).unwrap().as_object().unwrap().keys().collect::<Vec<_>>(),
            ["code", "message"]
        );
    }
    assert!(pending_approvals(&f.engine).unwrap().is_empty());
    assert_eq!(approval(&f.engine, &id).unwrap().status, ApprovalStatus::Approved);
    assert_eq!(approval(&f.engine, "apr_nosuch").unwrap_err().code, "not_found");
}

#[test]
fn deny_with_a_reason_reaches_the_waiting_call() {
    let f = fixture();
    let (id, waiting) = ask(&f, "delete src/main.rs (1.0 KB, restorable)");
    let long = "x".repeat(501);
    let e = decide_approval(&f.engine, &id, Verdict::Deny, Some(long), DecidedFrom::Window)
        .unwrap_err();
    assert_eq!(e.code, "invalid_argument");
    let decided = decide_approval(
        &f.engine,
        &id,
        Verdict::Deny,
        Some("  keep that file  ".into()),
        DecidedFrom::Tray,
    )
    .unwrap();
    assert_eq!(decided.status, ApprovalStatus::Denied);
    assert_eq!(decided.reason.as_deref(), Some("keep that file"));
    assert_eq!(decided.decided_by.as_deref(), Some("local user (tray)"));
    match waiting.join().unwrap() {
        AskOutcome::Denied { reason, .. } => assert_eq!(reason.as_deref(), Some("keep that file")),
        other => panic!("{other:?}"),
    }
    // Recent decisions come after the pending ones.
    let (id2, waiting2) = ask(&f, "delete b.txt (1 B, restorable)");
    let listed = list_approvals(&f.engine).unwrap();
    assert_eq!(listed.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(), [&id2, &id]);
    decide_approval(&f.engine, &id2, Verdict::Deny, Some(" ".into()), DecidedFrom::Window).unwrap();
    match waiting2.join().unwrap() {
        AskOutcome::Denied { reason, .. } => assert_eq!(reason, None),
        other => panic!("{other:?}"),
    }
}

#[test]
fn pe01_approving_while_paused_is_refused_but_denying_works() {
    let f = fixture();
    let (id, waiting) = ask(&f, "delete a.txt (1 B, restorable)");
    f.engine.set_paused(true).unwrap();
    let e =
        decide_approval(&f.engine, &id, Verdict::Approve, None, DecidedFrom::Window).unwrap_err();
    assert_eq!(e.code, "paused");
    assert_eq!(approval(&f.engine, &id).unwrap().status, ApprovalStatus::Pending);
    decide_approval(&f.engine, &id, Verdict::Deny, None, DecidedFrom::Window).unwrap();
    assert!(matches!(waiting.join().unwrap(), AskOutcome::Denied { .. }));
}

#[test]
fn headlines_show_deceptive_characters_and_count_further_effects() {
    let f = fixture();
    let (id, waiting) =
        ask(&f, "delete a\u{202e}txt.exe (1 B, restorable)\ndelete b (1 B, restorable)");
    let a = approval(&f.engine, &id).unwrap();
    assert_eq!(
        a.headline(),
        "Cursor · delete a⟨U+202E⟩txt.exe (1 B, restorable) (+1 more) · my-app"
    );
    decide_approval(&f.engine, &id, Verdict::Deny, None, DecidedFrom::Window).unwrap();
    waiting.join().unwrap();
}

#[test]
fn the_project_policy_is_shown_and_set() {
    let f = fixture();
    assert_eq!(f.project.policy, ApprovalPolicy { ask_deletes: true, ask_writes: false });
    let args = SetPolicy { id: f.project.id.clone(), ask_deletes: None, ask_writes: Some(true) };
    assert!(!widens_policy(&f.engine, &args).unwrap());
    let p = set_project_policy(&f.engine, args).unwrap();
    assert_eq!(p.policy, ApprovalPolicy { ask_deletes: true, ask_writes: true });
    let widen = SetPolicy { id: p.id.clone(), ask_deletes: Some(false), ask_writes: None };
    assert!(widens_policy(&f.engine, &widen).unwrap());
    let p = set_project_policy(&f.engine, widen).unwrap();
    assert_eq!(p.policy, ApprovalPolicy { ask_deletes: false, ask_writes: true });
    assert_eq!(list_projects(&f.engine).unwrap()[0].policy, p.policy);
    let e = set_project_policy(
        &f.engine,
        SetPolicy { id: "nope".into(), ask_deletes: Some(true), ask_writes: None },
    )
    .unwrap_err();
    assert_eq!(e.code, "project_not_found");
}

#[test]
fn approval_events_become_ui_events() {
    let f = fixture();
    let mut rx = f.engine.subscribe();
    let (id, waiting) = ask(&f, "delete a.txt (1 B, restorable)");
    decide_approval(&f.engine, &id, Verdict::Approve, None, DecidedFrom::Window).unwrap();
    waiting.join().unwrap();
    let events: Vec<UiEvent> =
        std::iter::from_fn(|| rx.try_recv().ok()).map(|e| event(&e)).collect();
    assert!(events.contains(&UiEvent::ApprovalRequested { id: id.clone() }), "{events:?}");
    let decided = UiEvent::ApprovalDecided { id: id.clone(), state: "approved".into() };
    assert!(events.contains(&decided), "{events:?}");
    assert_eq!(
        serde_json::to_value(&decided).unwrap(),
        serde_json::json!({"kind": "approvalDecided", "id": id, "state": "approved"})
    );
}

#[test]
fn a_change_says_what_it_destroys_and_whether_that_can_be_restored() {
    let f = fixture();
    let tally = ChangeTally {
        deleted_files: 1,
        deleted_folders: 1,
        deleted_entries: 40,
        overwritten: 1,
        created_files: 1,
        destructive: 3,
        ..ChangeTally::default()
    };
    let (id, waiting) = ask_noting(
        &f,
        "delete notes/old.txt (12 B, restorable)\n\
         delete folder build/ (40 entries, 1.2 MB, restorable)\n\
         overwrite README.md (1 B → 2 B, restorable)\n\
         create src/new.rs (3 B)",
        Some(tally),
        Vec::new(),
    );
    let risk = approval(&f.engine, &id).unwrap().risk.expect("a change is classed");
    assert_eq!(
        risk,
        RiskDto {
            level: None,
            class: "deletes 1 file and 1 folder (40 entries), overwrites 1 file (restorable); \
                    creates 1 file"
                .into(),
            why: "files leave their place in the project; Sluice backs them up first, so this \
                  can be restored"
                .into(),
        }
    );
    decide_approval(&f.engine, &id, Verdict::Deny, None, DecidedFrom::Window).unwrap();
    waiting.join().unwrap();
    // Decided, the summary is the same, and so is what it says.
    assert_eq!(list_approvals(&f.engine).unwrap()[0].risk, Some(risk));

    let adds = ChangeTally { created_files: 1, created_folders: 1, ..ChangeTally::default() };
    let (id, waiting) =
        ask_noting(&f, "create folder src/\ncreate src/a.rs (3 B)", Some(adds), Vec::new());
    let risk = approval(&f.engine, &id).unwrap().risk.unwrap();
    assert_eq!(risk.class, "creates 1 file and 1 folder");
    assert_eq!(risk.why, "only adds new files and folders; nothing that exists changes");
    decide_approval(&f.engine, &id, Verdict::Deny, None, DecidedFrom::Window).unwrap();
    waiting.join().unwrap();

    // The class comes from the counts, never from the text: a summary that reads like a
    // delete, asked without counts, is not classed; nothing is made up.
    let (id, waiting) = ask(&f, "delete a.txt (1 B, restorable)");
    assert_eq!(approval(&f.engine, &id).unwrap().risk, None);
    decide_approval(&f.engine, &id, Verdict::Deny, None, DecidedFrom::Window).unwrap();
    waiting.join().unwrap();
}

/// Asks for `program args` as `run_command` does: the verdict, the offered rule, the wait.
fn ask_command(
    f: &Fixture,
    program: &str,
    args: &[&str],
) -> (String, std::thread::JoinHandle<AskOutcome>) {
    let engine = f.engine.clone();
    let (project, secret) = (f.project.name.clone(), f.secret.clone());
    let spec = sluice_exec::CommandSpec::new(program, args);
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let caller = engine.authenticate(&secret).unwrap();
            let handle = engine.project(&caller, &project).unwrap();
            let verdict = engine.plan_exec(&handle, &spec).unwrap();
            assert!(verdict.ask);
            let fingerprint = Engine::verdict_fingerprint(&verdict);
            engine.offer_rule(&handle.id, &fingerprint, &verdict);
            let req = AskRequest {
                caller: &caller,
                project: &handle,
                tool: "run_command",
                summary: format!("run {}", verdict.resolved.display()),
                tally: None,
                asked_because: format!("execution mode {} asks", handle.exec),
                fingerprint,
            };
            let outcome = engine.ask(req, CancellationToken::new(), |_| {}).await.unwrap();
            engine.withdraw_rule(&fingerprint);
            outcome
        })
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(a) = pending_approvals(&f.engine).unwrap().into_iter().next() {
            return (a.id, handle);
        }
        assert!(Instant::now() < deadline, "no approval appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_command_shows_its_risk_class_and_always_allow_records_who_added_the_rule() {
    let f = fixture();
    let args = SetModes { id: f.project.id.clone(), access: None, exec: Some(Exec::Any) };
    set_project_modes(&f.engine, args).unwrap();

    let (id, waiting) = ask_command(&f, "echo", &["hi"]);
    let a = approval(&f.engine, &id).unwrap();
    assert!(a.always_allowable);
    assert_eq!(
        a.risk,
        Some(RiskDto {
            level: Some(RiskLevel::Caution),
            class: "arbitrary program".into(),
            why: "runs `echo`".into(),
        })
    );
    assert_eq!(
        serde_json::to_value(&a.risk).unwrap(),
        serde_json::json!({"level": "caution", "class": "arbitrary program", "why": "runs `echo`"})
    );
    decide_approval(&f.engine, &id, Verdict::ApproveAlways, None, DecidedFrom::Window).unwrap();
    assert!(matches!(waiting.join().unwrap(), AskOutcome::Approved { .. }));
    // Decided, the command's analysis is gone with its call; nothing else is guessed.
    assert_eq!(approval(&f.engine, &id).unwrap().risk, None);

    // Inline code is a dangerous arbitrary program, and the rule says who asked, from where.
    let (id, waiting) = ask_command(&f, "sh", &["-c", "echo hi"]);
    let risk = approval(&f.engine, &id).unwrap().risk.unwrap();
    assert_eq!(
        (risk.level, risk.class.as_str()),
        (Some(RiskLevel::Dangerous), "arbitrary program")
    );
    assert!(risk.why.contains("inline code"), "{}", risk.why);
    decide_approval(&f.engine, &id, Verdict::ApproveAlways, None, DecidedFrom::Tray).unwrap();
    waiting.join().unwrap();

    let rules = list_allow_rules(&f.engine, &f.project.id).unwrap();
    let origins: Vec<_> = rules.iter().map(|r| (r.added_from, r.asked_by.as_deref())).collect();
    assert_eq!(
        origins,
        vec![(Some(Channel::Window), Some("Cursor")), (Some(Channel::Tray), Some("Cursor"))]
    );
    let json = serde_json::to_value(&rules[0]).unwrap();
    assert_eq!(
        (&json["addedFrom"], &json["askedBy"]),
        (&serde_json::json!("window"), &serde_json::json!("Cursor"))
    );
}

/// The window's card, the tray's menu and the notification all say what runs on its own, from
/// the approval itself; the risk class puts it first.
#[test]
fn an_autorun_approval_says_what_runs_on_every_surface() {
    let f = fixture();
    let hit = sluice_core::AutoRunHit {
        path: ".vscode/tasks.json".into(),
        program: "VS Code".into(),
        consequence: "VS Code runs tasks marked runOn folderOpen when you open the folder".into(),
    };
    let (id, waiting) = ask_noting(
        &f,
        "create .vscode/tasks.json (2 B)",
        Some(ChangeTally { created_files: 1, ..ChangeTally::default() }),
        vec![hit.clone()],
    );
    let a = approval(&f.engine, &id).unwrap();
    assert_eq!(
        a.autorun,
        [AutoRunHitDto {
            path: hit.path.clone(),
            program: hit.program.clone(),
            consequence: hit.consequence.clone()
        }]
    );
    assert_eq!(
        a.headline(),
        "Cursor · create .vscode/tasks.json (2 B) · my-app · ⚠ VS Code runs it on its own"
    );
    assert_eq!(a.autorun_lines(), [format!(".vscode/tasks.json: {}", hit.consequence)]);
    assert_eq!(
        a.notification(),
        format!("{}\n.vscode/tasks.json: {}", a.headline(), hit.consequence)
    );
    let risk = a.risk.as_ref().unwrap();
    assert!(
        risk.class.starts_with("another program runs it on its own; creates 1 file"),
        "{risk:?}"
    );
    assert!(risk.why.starts_with(&hit.consequence), "{risk:?}");
    decide_approval(&f.engine, &id, Verdict::Deny, None, DecidedFrom::Tray).unwrap();
    assert!(matches!(waiting.join().unwrap(), AskOutcome::Denied { .. }));
    // Decided, it still says what it was about; the audit log carries the line too.
    assert_eq!(approval(&f.engine, &id).unwrap().autorun.len(), 1);
    let query = AuditQuery {
        project: None,
        token: None,
        action: Some("approval.denied".into()),
        outcome: None,
        limit: 50,
        before_seq: None,
    };
    let page = audit(&f.engine, query).unwrap();
    assert!(
        page.entries.iter().any(|e| e.action == "approval.denied"
            && e.detail.as_deref().is_some_and(|d| d.contains(&hit.consequence))),
        "{page:?}"
    );
}
