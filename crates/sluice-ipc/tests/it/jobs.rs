//! Jobs and the emergency stop through the window's commands, against a real engine running a
//! real, confined process.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_engine::{Engine, EngineConfig, SecretPreference};
use sluice_exec::CommandSpec;
use sluice_ipc::*;

struct Fixture {
    _tmp: tempfile::TempDir,
    engine: Arc<Engine>,
    ctx: Context,
    secret: String,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("my-app");
    std::fs::create_dir(&folder).unwrap();
    let engine =
        Engine::open(&EngineConfig::new(tmp.path().join("data"), SecretPreference::FileOnly))
            .unwrap();
    add_project(
        &engine,
        AddProject {
            path: folder.display().to_string(),
            name: None,
            access: Access::ReadWrite,
            exec: Exec::Any,
        },
    )
    .unwrap();
    let (_, secret) = engine.create_token("Cursor", None, None).unwrap();
    let ctx = Context { port: 4321, sluice_binary: PathBuf::from("sluice"), version: "9".into() };
    Fixture { _tmp: tmp, engine: Arc::new(engine), ctx, secret }
}

/// Starts `sh -c script` in the project as the MCP layer does after an approval.
fn start(f: &Fixture, script: &str) -> String {
    let caller = f.engine.authenticate(&f.secret).unwrap();
    let handle = f.engine.project(&caller, "my-app").unwrap();
    let verdict = f.engine.plan_exec(&handle, &CommandSpec::new("sh", &["-c", script])).unwrap();
    let req = f.engine.job_request(&handle, &verdict).unwrap();
    f.engine.jobs().start(req).unwrap().0
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn unix_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    i64::try_from(since.as_millis()).unwrap()
}

fn the_job(f: &Fixture, id: &str) -> JobDto {
    list_jobs(&f.engine).unwrap().into_iter().find(|j| j.id == id).unwrap()
}

#[test]
fn a_running_job_is_listed_its_log_paged_by_cursor_and_cancelled() {
    let f = fixture();
    let before = unix_ms();
    let id = start(&f, "echo first; echo 'second <b>&amp;'; echo oops >&2; exec sleep 30");
    let expected = "first\nsecond <b>&amp;\n";
    wait_for("the output", || {
        let j = the_job(&f, &id);
        j.stdout_bytes >= expected.len() as u64 && j.stderr_bytes >= 5
    });
    let j = the_job(&f, &id);
    assert_eq!(j.state, JobStateDto::Running);
    assert_eq!(j.project_name.as_deref(), Some("my-app"));
    assert!(j.command.contains("sh") && j.command.contains("exec sleep 30"), "{}", j.command);
    assert!(j.runtime_ms.is_some());
    // The window shows when it started: wall-clock time, between the request and now.
    let started = j.started_ms.expect("a running job has started");
    assert!(before <= started && started <= unix_ms(), "{started} not in [{before}, now]");

    // Small pages, read on by cursor, add up to the whole log; markup stays text.
    let mut text = String::new();
    let mut cursor = 0;
    loop {
        let q = JobLogsQuery { id: id.clone(), stream: LogStream::Stdout, cursor, max_bytes: 5 };
        let page = job_logs(&f.engine, q).unwrap();
        assert!(page.text.len() <= 5);
        assert_eq!(page.state, JobStateDto::Running);
        text.push_str(&page.text);
        cursor = page.next_cursor;
        if page.at_end {
            break;
        }
    }
    assert_eq!(text, expected);
    let q =
        JobLogsQuery { id: id.clone(), stream: LogStream::Stderr, cursor: 0, max_bytes: 1 << 30 };
    assert_eq!(job_logs(&f.engine, q).unwrap().text, "oops\n");

    let cancelled = cancel_job(&f.engine, &id).unwrap();
    assert_eq!(cancelled.state, JobStateDto::Cancelled);
    assert_eq!(the_job(&f, &id).state, JobStateDto::Cancelled);
    let again = cancel_job(&f.engine, &id).unwrap_err();
    assert_eq!(again.code, "conflict", "{}", again.message);
}

#[test]
fn bad_or_unknown_job_ids_are_refused_and_change_nothing() {
    let f = fixture();
    for bad in ["", "job_", "../etc", "job_a/b", "job_\u{202e}x", &"job_a".repeat(40)] {
        assert_eq!(cancel_job(&f.engine, bad).unwrap_err().code, "invalid_argument", "{bad:?}");
    }
    let q = JobLogsQuery {
        id: "job_doesnotexist".into(),
        stream: LogStream::Stdout,
        cursor: 0,
        max_bytes: 10,
    };
    assert_eq!(job_logs(&f.engine, q).unwrap_err().code, "not_found");
    assert_eq!(cancel_job(&f.engine, "job_doesnotexist").unwrap_err().code, "not_found");
    assert!(list_jobs(&f.engine).unwrap().is_empty());
}

#[test]
fn a_failed_job_reports_its_exit_code_and_a_headline() {
    let f = fixture();
    let id = start(&f, "echo broken >&2; exit 3");
    wait_for("the job to fail", || the_job(&f, &id).state.is_final());
    let j = the_job(&f, &id);
    assert_eq!(j.state, JobStateDto::Failed);
    assert_eq!(j.exit_code, Some(3));
    assert!(j.headline().ends_with("· my-app · exit code 3"), "{}", j.headline());
}

#[test]
fn job_events_become_window_events() {
    let f = fixture();
    let mut rx = f.engine.jobs().subscribe();
    let id = start(&f, "echo hi");
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.contains(&UiEvent::JobChanged { id: id.clone(), state: JobStateDto::Succeeded }) {
        assert!(Instant::now() < deadline, "no finish event: {seen:?}");
        match rx.try_recv() {
            Ok(e) => seen.extend(job_event(&e)),
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    assert!(seen.contains(&UiEvent::JobChanged { id, state: JobStateDto::Running }), "{seen:?}");
}

#[test]
fn emergency_stop_kills_jobs_and_shows_stopped_until_resumed() {
    let f = fixture();
    let id = start(&f, "exec sleep 30");
    wait_for("the job to run", || the_job(&f, &id).state == JobStateDto::Running);
    let r = emergency_stop(&f.engine, &f.ctx).unwrap();
    assert_eq!(r.killed_jobs, 1);
    assert!(r.state.stopped && r.state.paused);
    assert_eq!(the_job(&f, &id).state, JobStateDto::Cancelled);
    assert_eq!(f.engine.check_access().unwrap_err().code, sluice_core::ErrorCode::Stopped);
    let s = set_paused(&f.engine, &f.ctx, false).unwrap();
    assert!(!s.stopped && !s.paused);
    f.engine.check_access().unwrap();
}

/// What the tray offers to undo: the checkpoints taken before commands, newest first, each with
/// its project; one the user took by hand is not among them. Undoing one puts the files back.
#[test]
fn the_tray_offers_to_undo_the_newest_commands_and_undoing_one_restores_the_files() {
    let f = fixture();
    let caller = f.engine.authenticate(&f.secret).unwrap();
    let handle = f.engine.project(&caller, "my-app").unwrap();
    let root = handle.workspace.root().path().to_path_buf();
    std::fs::write(root.join("a.txt"), "before\n").unwrap();
    let m = f.engine.mutations(&handle).unwrap();
    let args = sluice_runner::CreateCheckpointArgs::default();
    let first = m.create_checkpoint(&args, Some("npm install".into())).unwrap();
    let by_hand = create_checkpoint(&f.engine, "my-app", Some("mine".into())).unwrap();
    // RFC 3339 to the second: the next one is newer.
    std::thread::sleep(Duration::from_millis(1100));
    let second = m.create_checkpoint(&args, Some("cargo fmt".into())).unwrap();
    std::fs::write(root.join("a.txt"), "changed by the command\n").unwrap();
    std::fs::write(root.join("new.txt"), "made by the command\n").unwrap();

    let offered = recent_command_checkpoints(&f.engine, 5);
    let ids: Vec<&str> = offered.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, [second.checkpoint_id.as_str(), first.checkpoint_id.as_str()]);
    assert!(!ids.contains(&by_hand.id.as_str()), "a checkpoint taken by hand is not a command");
    assert_eq!(offered[0].command, "cargo fmt");
    assert_eq!(offered[0].project_name, "my-app");
    assert_eq!(recent_command_checkpoints(&f.engine, 1).len(), 1);

    let restored = restore_checkpoint(&f.engine, &offered[0].project_id, &offered[0].id).unwrap();
    assert!(restored.files >= 2, "{restored:?}");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "before\n");
    assert!(!root.join("new.txt").exists(), "what the command made is gone");
}
