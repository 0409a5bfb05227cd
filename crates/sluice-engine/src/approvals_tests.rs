//! Tests of the approval broker: asking, deciding once, expiry, withdrawal and pause.

use std::sync::Arc;

use sluice_core::{AccessMode, AutoRunAction, AutoRunRule, Coded, ExecMode};
use sluice_store::AuditFilter;

use super::*;
use crate::{EngineConfig, SecretPreference};

fn demo() -> (tempfile::TempDir, Arc<Engine>, Caller) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("proj")).unwrap();
    let config = EngineConfig::new(root.join("data"), SecretPreference::FileOnly);
    let engine = Engine::open(&config).unwrap();
    engine
        .add_project(&root.join("proj"), Some("demo"), AccessMode::ReadWrite, ExecMode::Off)
        .unwrap();
    let (_, plaintext) = engine.create_token("Cursor", None, None).unwrap();
    let caller = engine.authenticate(&plaintext).unwrap();
    (tmp, Arc::new(engine), caller)
}

fn hit() -> AutoRunHit {
    AutoRunHit {
        path: ".vscode/tasks.json".into(),
        program: "VS Code".into(),
        consequence: "VS Code runs tasks marked runOn folderOpen when you open the folder".into(),
    }
}

/// The approval of a change to an auto-run path carries what runs it, and the audit log
/// records that line on the request and on the decision, with why it asked and what the
/// change does; the decision's entry adds who decided and the reason given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_autorun_approval_says_what_runs_in_the_record_and_the_audit() {
    let (_tmp, engine, caller) = demo();
    let asker = engine.clone();
    let c = caller.clone();
    let waiting = tokio::spawn(async move {
        let h = asker.project(&c, "demo").unwrap();
        let req = AskRequest {
            caller: &c,
            project: &h,
            tool: "write_file",
            summary: "create .vscode/tasks.json (2 B)".into(),
            tally: Some(ChangeTally { created_files: 1, ..ChangeTally::default() }),
            asked_because: "it touches the auto-run list".into(),
            fingerprint: [1; 32],
        };
        asker.ask_change(req, vec![hit()], CancellationToken::new(), |_| {}).await.unwrap()
    });
    let pending = loop {
        let list = engine.approvals().unwrap();
        if let Some(a) = list.into_iter().find(|a| a.state == ApprovalState::Pending) {
            break a;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(pending.autorun, vec![hit()]);
    let e = engine.clone();
    let id = pending.id.clone();
    let deny = Decision::Deny { reason: Some("not \u{202E}now".into()) };
    tokio::task::spawn_blocking(move || e.decide(&id, deny, "local user (tray)"))
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(waiting.await.unwrap(), AskOutcome::Denied { .. }));
    assert_eq!(engine.approval(&pending.id).unwrap().autorun, vec![hit()]);
    let audit = engine.audit_list(&AuditFilter::default(), 100, None).unwrap();
    for action in ["approval.requested", "approval.denied"] {
        let entry = audit.iter().find(|e| e.record.action == action).unwrap();
        let detail = entry.record.detail.as_deref().unwrap_or_default();
        assert!(detail.contains(&hit().line()), "{action}: {detail:?}");
        assert!(detail.contains("asked because it touches the auto-run list"), "{detail:?}");
        assert!(detail.contains("creates 1 file"), "{detail:?}");
    }
    let denied = audit.iter().find(|e| e.record.action == "approval.denied").unwrap();
    let detail = denied.record.detail.as_deref().unwrap();
    // The reason was cleaned of hidden characters when it was given.
    assert!(detail.starts_with("denied by local user (tray): not now; "), "{detail}");
    assert!(engine.audit_verify().unwrap().intact);
}

#[test]
fn the_audit_detail_is_bounded_and_absent_when_there_is_nothing_to_say() {
    let record = ApprovalRecord {
        id: "apr_x".into(),
        project_id: sluice_core::ProjectId::generate(),
        project_name: "demo".into(),
        token_id: sluice_core::TokenId::generate(),
        token_label: "t".into(),
        tool: "write_file".into(),
        summary: "create a (1 B)".into(),
        autorun: Vec::new(),
        tally: None,
        asked_because: String::new(),
        fingerprint: [0; 32],
        created_ms: 0,
        expires_ms: 1,
        state: ApprovalState::Pending,
        decided_ms: None,
        decided_by: None,
    };
    assert_eq!(approval_detail(&record), None);
    let many = ApprovalRecord { autorun: vec![hit(); 100], ..record };
    let detail = approval_detail(&many).unwrap();
    assert!(detail.len() <= 2000 + '…'.len_utf8() && detail.ends_with('…'), "{detail}");
}

#[test]
fn a_project_uses_its_own_autorun_list_once_set() {
    let (_tmp, engine, caller) = demo();
    let rule = AutoRunRule {
        pattern: "/deploy/**".into(),
        action: AutoRunAction::Refuse,
        program: "the deploy bot".into(),
        consequence: "the deploy bot runs these scripts every night".into(),
    };
    for bad in [
        AutoRunRule { pattern: "a[".into(), ..rule.clone() },
        AutoRunRule { pattern: " ".into(), ..rule.clone() },
        AutoRunRule { consequence: "runs\nfake: line".into(), ..rule.clone() },
        AutoRunRule { program: "bot\u{202e}".into(), ..rule.clone() },
        AutoRunRule { consequence: String::new(), ..rule.clone() },
    ] {
        let err = engine.set_autorun("demo", Some(vec![bad.clone()])).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad:?}");
    }
    let p = engine.set_autorun("demo", Some(vec![rule.clone()])).unwrap();
    assert_eq!(p.autorun_rules, Some(vec![rule.clone()]));
    let h = engine.project(&caller, "demo").unwrap();
    assert_eq!(h.workspace.autorun().rules(), [rule]);
    // The change manager follows the new list at once.
    let m = engine.mutations(&h).unwrap();
    let args = sluice_runner::WriteFileArgs {
        path: "deploy/run.sh".into(),
        content: "x".into(),
        create_parents: true,
        ..Default::default()
    };
    assert_eq!(m.plan_write_file(&args).unwrap_err().code(), ErrorCode::Forbidden);
    let p = engine.set_autorun("demo", None).unwrap();
    assert_eq!(p.autorun_rules, None);
    let h = engine.project(&caller, "demo").unwrap();
    assert_eq!(h.workspace.autorun().rules(), crate::default_autorun_rules());
    assert!(engine.mutations(&h).unwrap().plan_write_file(&args).is_ok());
}

/// Deciders racing each other and the client: two people decide at once while the client
/// cancels, many times over; each time exactly one outcome holds, and it is the one the
/// waiting call got and the record says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ap02_racing_decisions_and_a_cancel_end_in_exactly_one_outcome() {
    let (_tmp, engine, caller) = demo();
    // 600 rounds under `cargo xtask attack --long`.
    for round in 0..sluice_core::attack_scale(60, 600) {
        let cancel = CancellationToken::new();
        let asker = engine.clone();
        let (c, token) = (caller.clone(), cancel.clone());
        let waiting = tokio::spawn(async move {
            let h = asker.project(&c, "demo").unwrap();
            let req = AskRequest {
                caller: &c,
                project: &h,
                tool: "delete_path",
                summary: format!("delete round-{round}"),
                tally: None,
                asked_because: "deletes ask".into(),
                fingerprint: blake3::hash(&(round as u64).to_le_bytes()).into(),
            };
            asker.ask(req, token, |_| {}).await.unwrap()
        });
        let id = loop {
            let pending = engine.approvals().unwrap();
            if let Some(a) = pending.into_iter().find(|a| a.state == ApprovalState::Pending) {
                break a.id;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let decide = |d: Decision| {
            let (e, id) = (engine.clone(), id.clone());
            std::thread::spawn(move || e.decide(&id, d, "local user"))
        };
        let approve = decide(Decision::Approve);
        let deny = decide(Decision::Deny { reason: None });
        if round % 2 == 0 {
            cancel.cancel();
        }
        let results = [approve.join().unwrap(), deny.join().unwrap()];
        let won: Vec<&ApprovalRecord> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert!(won.len() <= 1, "round {round}: two decisions both held");
        for lost in results.iter().filter_map(|r| r.as_ref().err()) {
            assert_eq!(lost.code, ErrorCode::Conflict, "round {round}: {lost:?}");
        }
        let outcome = waiting.await.unwrap();
        let state = engine.approval(&id).unwrap().state;
        match (&outcome, &state) {
            (AskOutcome::Approved { .. }, ApprovalState::Approved)
            | (AskOutcome::Denied { .. }, ApprovalState::Denied(_))
            | (AskOutcome::Withdrawn { .. }, ApprovalState::Withdrawn) => {}
            other => panic!("round {round}: the call and the record disagree: {other:?}"),
        }
        // A human decision that held is the outcome; with none, only the cancel can be.
        match won.first().map(|r| &r.state) {
            Some(ApprovalState::Approved) => {
                assert!(matches!(outcome, AskOutcome::Approved { .. }), "round {round}")
            }
            Some(ApprovalState::Denied(_)) => {
                assert!(matches!(outcome, AskOutcome::Denied { .. }), "round {round}")
            }
            _ => assert!(matches!(outcome, AskOutcome::Withdrawn { .. }), "round {round}"),
        }
    }
}
