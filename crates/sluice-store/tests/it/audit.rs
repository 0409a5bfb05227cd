//! The audit chain: append, list, verify, and detection of each kind of tampering done with a
//! raw SQLite connection (as an attacker with file access would).

use std::sync::Arc;

use sluice_core::{ProjectId, TokenId};
use sluice_store::{
    ActorKind, AuditFilter, AuditRecord, ChainReport, InstallSecret, Outcome, Store, params_hash,
};

use crate::{data_dir, open};

fn record(n: u64, secret: &InstallSecret, project: Option<&ProjectId>) -> AuditRecord {
    AuditRecord {
        time_ms: 1_700_000_000_000 + n as i64,
        actor: "Cursor on laptop".into(),
        actor_kind: ActorKind::Mcp,
        token_id: Some(TokenId::parse("tok_abc").unwrap()),
        action: format!("read_file#{n}"),
        project_id: project.cloned(),
        outcome: if n.is_multiple_of(3) { Outcome::Denied } else { Outcome::Ok },
        error_code: n.is_multiple_of(3).then(|| "path_shielded".to_owned()),
        duration_ms: Some(n),
        params_hash: Some(params_hash(secret, format!("{{\"n\":{n}}}").as_bytes())),
        detail: None,
    }
}

/// A log of `n` entries, plus a raw connection with the append-only triggers dropped.
fn log_of(n: u64) -> (tempfile::TempDir, Store, InstallSecret, rusqlite::Connection) {
    let (tmp, dir) = data_dir();
    let store = open(&dir);
    let secret = InstallSecret::generate();
    for i in 1..=n {
        assert_eq!(store.audit_append(&secret, &record(i, &secret, None)).unwrap(), i);
    }
    let raw = rusqlite::Connection::open(dir.join("sluice.db")).unwrap();
    raw.execute_batch("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;").unwrap();
    (tmp, store, secret, raw)
}

fn broken_at(report: &ChainReport) -> u64 {
    assert!(!report.intact, "{report:?}");
    report.first_break.as_ref().expect("a break").seq
}

/// A verify while another process appends (the CLI's `audit verify` beside a serving engine)
/// sees one consistent chain: its count, head and entries from one moment.
#[test]
fn a_chain_verified_while_another_writer_appends_is_intact() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let secret = Arc::new(InstallSecret::generate());
    for i in 1..=5 {
        store.audit_append(&secret, &record(i, &secret, None)).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let appended = Arc::new(AtomicUsize::new(0));
    let appender = {
        let (writer, secret, stop, appended) =
            (open(&dir), secret.clone(), stop.clone(), appended.clone());
        std::thread::spawn(move || {
            // Bounded, so a fast writer cannot grow the chain until each verify takes minutes.
            while !stop.load(Ordering::Relaxed) && appended.load(Ordering::Relaxed) < MAX_APPENDS {
                let n = appended.load(Ordering::Relaxed) as u64;
                writer.audit_append(&secret, &record(100 + n, &secret, None)).unwrap();
                appended.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // Verifies until the writer has appended while they ran (however the threads are
    // scheduled), at least 300 of them; a writer that ended early (its panic is reported by
    // the join below) ends the loop instead of leaving it waiting.
    const MAX_APPENDS: usize = 2000;
    let mut verifies = 0;
    while verifies < 300 || appended.load(Ordering::Relaxed) < 50 {
        if verifies >= 300 && appender.is_finished() {
            break;
        }
        let report = store.audit_verify(&secret).unwrap();
        assert!(report.intact, "{report:?}");
        verifies += 1;
    }
    stop.store(true, Ordering::Relaxed);
    appender.join().unwrap();
    let appended = appended.load(Ordering::Relaxed);
    assert!(appended > 10, "only {appended} entries were appended during the verifies");
}

/// A verify is a reader: it runs while another process (the serving engine, mid-append) holds
/// the database's write lock, and sees the chain as it was before that writer's commit. Taking
/// the write lock itself, it would wait out the busy timeout here and fail, and beside an
/// engine it would hold every request's audit entry up for the length of the verify.
#[test]
fn a_verify_needs_no_write_lock() {
    let (_tmp, store, secret, raw) = log_of(7);
    raw.execute_batch("BEGIN IMMEDIATE; INSERT INTO kv (key, value) VALUES ('probe', 'x');")
        .unwrap();
    let report = store.audit_verify(&secret).unwrap();
    assert_eq!(report, ChainReport { entries: 7, intact: true, first_break: None });
    raw.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn an_untouched_chain_verifies() {
    let (_tmp, store, secret, _raw) = log_of(10);
    let report = store.audit_verify(&secret).unwrap();
    assert_eq!(report, ChainReport { entries: 10, intact: true, first_break: None });
    // A log without entries verifies under the secret it was opened with (its genesis head is
    // sealed with it), and not under another.
    let (_tmp, dir) = data_dir();
    let empty = open(&dir);
    assert!(empty.audit_verify(&crate::test_secret()).unwrap().intact);
    assert!(!empty.audit_verify(&secret).unwrap().intact);
}

#[test]
fn the_wrong_key_does_not_verify() {
    let (_tmp, store, _secret, _raw) = log_of(3);
    assert_eq!(broken_at(&store.audit_verify(&InstallSecret::generate()).unwrap()), 1);
}

#[test]
fn honest_code_cannot_edit_the_log() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let secret = InstallSecret::generate();
    store.audit_append(&secret, &record(1, &secret, None)).unwrap();
    let raw = rusqlite::Connection::open(dir.join("sluice.db")).unwrap();
    assert!(raw.execute("UPDATE audit SET actor = 'x'", []).is_err());
    assert!(raw.execute("DELETE FROM audit", []).is_err());
}

#[test]
fn an_edited_field_is_detected_at_its_entry() {
    let (_tmp, store, secret, raw) = log_of(6);
    raw.execute("UPDATE audit SET outcome = 'ok', error_code = NULL WHERE seq = 3", []).unwrap();
    let report = store.audit_verify(&secret).unwrap();
    assert_eq!(broken_at(&report), 3);
    assert_eq!(report.entries, 6);
}

#[test]
fn an_edited_duration_is_detected() {
    let (_tmp, store, secret, raw) = log_of(6);
    raw.execute("UPDATE audit SET duration_ms = NULL WHERE seq = 5", []).unwrap();
    assert_eq!(broken_at(&store.audit_verify(&secret).unwrap()), 5);
}

#[test]
fn a_deleted_middle_row_is_detected() {
    let (_tmp, store, secret, raw) = log_of(6);
    raw.execute("DELETE FROM audit WHERE seq = 4", []).unwrap();
    let report = store.audit_verify(&secret).unwrap();
    assert_eq!(broken_at(&report), 4);
    assert!(report.first_break.unwrap().reason.contains("missing"));
}

#[test]
fn deleted_and_renumbered_rows_are_detected() {
    let (_tmp, store, secret, raw) = log_of(6);
    raw.execute("DELETE FROM audit WHERE seq = 4", []).unwrap();
    raw.execute("UPDATE audit SET seq = seq - 1 WHERE seq > 4", []).unwrap();
    assert_eq!(broken_at(&store.audit_verify(&secret).unwrap()), 4);
}

#[test]
fn swapped_rows_are_detected() {
    let (_tmp, store, secret, raw) = log_of(6);
    raw.execute_batch(
        "UPDATE audit SET seq = 1000 WHERE seq = 2;
         UPDATE audit SET seq = 2 WHERE seq = 5;
         UPDATE audit SET seq = 5 WHERE seq = 1000;",
    )
    .unwrap();
    assert_eq!(broken_at(&store.audit_verify(&secret).unwrap()), 2);
}

#[test]
fn a_forged_row_is_detected() {
    let (_tmp, store, secret, raw) = log_of(6);
    raw.execute(
        "INSERT INTO audit (seq, time_ms, actor, actor_kind, action, outcome, mac)
         VALUES (7, 0, 'local user', 'human', 'pause', 'ok', zeroblob(32))",
        [],
    )
    .unwrap();
    let report = store.audit_verify(&secret).unwrap();
    assert_eq!(broken_at(&report), 7);
    assert_eq!(report.entries, 7);
}

#[test]
fn a_forged_row_copying_a_real_mac_is_detected() {
    let (_tmp, store, secret, raw) = log_of(6);
    raw.execute(
        "INSERT INTO audit (seq, time_ms, actor, actor_kind, token_id, action, project_id,
                            outcome, error_code, duration_ms, params_hash, mac)
         SELECT 7, time_ms, actor, actor_kind, token_id, action, project_id, outcome,
                error_code, duration_ms, params_hash, mac FROM audit WHERE seq = 6",
        [],
    )
    .unwrap();
    assert_eq!(broken_at(&store.audit_verify(&secret).unwrap()), 7);
}

#[test]
fn a_cut_tail_is_detected() {
    let (_tmp, store, secret, raw) = log_of(6);
    raw.execute("DELETE FROM audit WHERE seq >= 5", []).unwrap();
    assert_eq!(broken_at(&store.audit_verify(&secret).unwrap()), 5);
}

#[test]
fn list_filters_and_pages_newest_first() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let secret = InstallSecret::generate();
    let p = ProjectId::generate();
    for i in 1..=9 {
        let proj = (i % 2 == 0).then_some(&p);
        store.audit_append(&secret, &record(i, &secret, proj)).unwrap();
    }
    let all = store.audit_list(&AuditFilter::default(), 100, None).unwrap();
    assert_eq!(all.iter().map(|e| e.seq).collect::<Vec<_>>(), (1..=9).rev().collect::<Vec<_>>());
    assert_eq!(all[8].record, record(1, &secret, None), "round trip");

    let page = store.audit_list(&AuditFilter::default(), 3, Some(7)).unwrap();
    assert_eq!(page.iter().map(|e| e.seq).collect::<Vec<_>>(), [6, 5, 4]);

    let in_p = AuditFilter { project_id: Some(p.clone()), ..Default::default() };
    let seqs: Vec<_> = store.audit_list(&in_p, 100, None).unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [8, 6, 4, 2]);
    let denied = AuditFilter { outcome: Some(Outcome::Denied), ..Default::default() };
    let seqs: Vec<_> =
        store.audit_list(&denied, 100, None).unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [9, 6, 3]);
    let human = AuditFilter { actor_kind: Some(ActorKind::Human), ..Default::default() };
    assert!(store.audit_list(&human, 100, None).unwrap().is_empty());
}

#[test]
fn two_processes_appending_stay_in_one_chain() {
    let (_tmp, dir) = data_dir();
    let secret = Arc::new(InstallSecret::from_bytes([5; 32]));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (dir, secret) = (dir.clone(), secret.clone());
            let store = open(&dir);
            std::thread::spawn(move || {
                for i in 0..40 {
                    store.audit_append(&secret, &record(i, &secret, None)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let report = open(&dir).audit_verify(&secret).unwrap();
    assert_eq!(report, ChainReport { entries: 80, intact: true, first_break: None });
}

#[test]
fn oversized_or_empty_fields_are_refused() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let secret = InstallSecret::generate();
    let mut r = record(1, &secret, None);
    r.action = "x".repeat(10_000);
    assert!(store.audit_append(&secret, &r).is_err());
    r.action = String::new();
    assert!(store.audit_append(&secret, &r).is_err());
    assert_eq!(store.audit_verify(&secret).unwrap().entries, 0);
}

/// An approval's detail line (what would run on its own) is stored, listed and covered by the
/// MAC like every other field: editing it or dropping it breaks the chain at that entry.
#[test]
fn a_detail_is_kept_and_covered_by_the_chain() {
    let (_tmp, store, secret, raw) = log_of(2);
    let detail = ".vscode/tasks.json: VS Code runs tasks marked runOn folderOpen".to_owned();
    let mut r = record(3, &secret, None);
    r.detail = Some(detail.clone());
    store.audit_append(&secret, &r).unwrap();
    store.audit_append(&secret, &record(4, &secret, None)).unwrap();
    let listed = store.audit_list(&AuditFilter::default(), 10, None).unwrap();
    let details: Vec<Option<&str>> = listed.iter().map(|e| e.record.detail.as_deref()).collect();
    assert_eq!(details, [None, Some(detail.as_str()), None, None]);
    assert!(store.audit_verify(&secret).unwrap().intact);
    raw.execute("UPDATE audit SET detail = 'README.md: nothing' WHERE seq = 3", []).unwrap();
    assert_eq!(broken_at(&store.audit_verify(&secret).unwrap()), 3);
    raw.execute("UPDATE audit SET detail = NULL WHERE seq = 3", []).unwrap();
    assert_eq!(broken_at(&store.audit_verify(&secret).unwrap()), 3);
    // Control characters could forge a second line wherever the log is printed.
    let mut bad = record(5, &secret, None);
    bad.detail = Some("a\nseq 9: ok".into());
    assert!(store.audit_append(&secret, &bad).is_err());
}

/// Batches of every shape (none, fewer rows than one multi-row insert, exactly one, one and a
/// bit, many) land whole, in order, every field as given, in one chain.
#[test]
fn batches_of_any_size_land_whole_and_in_order() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let secret = InstallSecret::generate();
    let project = ProjectId::generate();
    let mut appended = Vec::new();
    let mut n = 0;
    for size in [0, 1, 15, 16, 17, 33, 256] {
        let batch: Vec<AuditRecord> = (0..size)
            .map(|_| {
                n += 1;
                let mut r = record(n, &secret, (n % 2 == 0).then_some(&project));
                r.detail = (n % 5 == 0).then(|| format!("detail {n}"));
                r
            })
            .collect();
        assert_eq!(store.audit_append_all(&secret, &batch).unwrap(), n);
        appended.extend(batch);
    }
    let listed = store.audit_list(&AuditFilter::default(), 10_000, None).unwrap();
    let mut listed: Vec<_> = listed.into_iter().map(|e| (e.seq, e.record)).collect();
    listed.reverse();
    assert_eq!(listed.len(), appended.len());
    for (i, ((seq, got), want)) in listed.iter().zip(&appended).enumerate() {
        assert_eq!(*seq, i as u64 + 1);
        assert_eq!(got, want, "entry {seq}");
    }
    let report = store.audit_verify(&secret).unwrap();
    assert_eq!(report, ChainReport { entries: n, intact: true, first_break: None });
}
