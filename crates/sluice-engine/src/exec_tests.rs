//! Tests of execution planning and the emergency stop against a real engine.
//!
//! The tests that run Unix programs as jobs (`sh`, `echo`, `sleep`, `make`, `git`) are built on
//! Unix only: they are not Windows programs, and on Windows a job runs only as the sandbox
//! account, which an administrator sets up (docs/SANDBOX.md).

use std::sync::Arc;

use sluice_core::AccessMode;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::{AskOutcome, AskRequest, Caller, EngineConfig, SecretPreference};

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(&EngineConfig::new(dir.join("data"), SecretPreference::FileOnly)).unwrap()
}

/// A data folder with one project, `demo`, in the given modes, and a caller that sees it.
/// The folder's canonical path is the temp dir's.
fn demo(access: AccessMode, exec: ExecMode) -> (tempfile::TempDir, Engine, Caller) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("proj")).unwrap();
    let engine = open(&root);
    engine.add_project(&root.join("proj"), Some("demo"), access, exec).unwrap();
    let (_, plaintext) = engine.create_token("t", None, None).unwrap();
    let caller = engine.authenticate(&plaintext).unwrap();
    (tmp, engine, caller)
}

/// Asks for approval of `fingerprint` in project `demo` in the background, as a
/// `run_command` call does while it waits for the user.
fn ask_in_background(
    engine: &Arc<Engine>,
    caller: &Caller,
    summary: &str,
    fingerprint: [u8; 32],
) -> tokio::task::JoinHandle<AskOutcome> {
    let (asker, caller, summary) = (engine.clone(), caller.clone(), summary.to_owned());
    tokio::spawn(async move {
        let h = asker.project(&caller, "demo").unwrap();
        let req = AskRequest {
            caller: &caller,
            project: &h,
            tool: "run_command",
            summary,
            tally: None,
            asked_because: "the project's execution mode asks".into(),
            fingerprint,
        };
        asker.ask(req, CancellationToken::new(), |_| {}).await.unwrap()
    })
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn es_emergency_stop_denies_pending_refuses_requests_and_survives_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("proj")).unwrap();
    let engine = Arc::new(open(&root));
    engine
        .add_project(&root.join("proj"), Some("demo"), AccessMode::ReadWrite, ExecMode::Any)
        .unwrap();
    let (token, plaintext) = engine.create_token("t", None, None).unwrap();
    let caller = engine.authenticate(&plaintext).unwrap();
    assert_eq!(caller.token_id, token.id);
    let handle = engine.project(&caller, "demo").unwrap();
    let verdict = engine.plan_exec(&handle, &CommandSpec::new("echo", &["$(id)"])).unwrap();
    assert!(verdict.ask, "any mode asks");
    assert_eq!(verdict.resolved.args, vec!["$(id)".to_owned()]);

    let fp = Engine::verdict_fingerprint(&verdict);
    let waiting = ask_in_background(&engine, &caller, "run echo", fp);
    while engine.approvals().unwrap().iter().all(|a| a.state != ApprovalState::Pending) {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let e = engine.clone();
    let summary = tokio::task::spawn_blocking(move || e.emergency_stop()).await.unwrap().unwrap();
    assert_eq!(summary.denied_approvals, 1);
    assert!(matches!(waiting.await.unwrap(), AskOutcome::Denied { .. }));
    assert_eq!(engine.check_access().unwrap_err().code, ErrorCode::Stopped);
    assert!(engine.jobs().is_stopped());
    assert_eq!(engine.check_exec_start().unwrap_err().code, ErrorCode::Stopped);
    drop(engine);

    // Another engine on the same data folder (a restart) is still stopped.
    let engine = open(&root);
    assert_eq!(engine.check_access().unwrap_err().code, ErrorCode::Stopped);
    engine.start_serving().unwrap();
    assert!(engine.jobs().is_stopped(), "nothing may start after a restart");
    // A serving engine is non-dumpable: its /proc entries are out of a job's reach.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments.
    assert_eq!(unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) }, 0);
    engine.resume().unwrap();
    engine.check_access().unwrap();
    assert!(!engine.jobs().is_stopped());
}

/// The serving engine's watcher can read a stop made by the CLI, then the user resumes and an
/// assistant asks again before the watcher acts on what it read: the late stop denies only
/// what was pending when it was read (it once denied the new request too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_noticed_late_denies_nothing_asked_after_the_resume() {
    let (tmp, engine, caller) = demo(AccessMode::ReadWrite, ExecMode::Any);
    let engine = Arc::new(engine);
    let cli = open(&tmp.path().canonicalize().unwrap());
    cli.emergency_stop().unwrap();
    let seen = sluice_store::now_ms();
    cli.resume().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let waiting = ask_in_background(&engine, &caller, "run echo", [7; 32]);
    let pending = || {
        engine
            .approvals()
            .unwrap()
            .into_iter()
            .filter(|a| a.state == ApprovalState::Pending)
            .count()
    };
    while pending() == 0 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    engine.apply_stop(seen);
    assert_eq!(pending(), 1, "a stop read before the resume denied a later request");
    // A stop seen now denies it.
    engine.apply_stop(sluice_store::now_ms());
    assert!(matches!(waiting.await.unwrap(), AskOutcome::Denied { .. }));
}

/// OR-01: a job that prints the install secret, raw, hex- or base64-encoded, shows only a
/// placeholder.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn or01_the_install_secret_never_leaves_in_job_output() {
    let (_tmp, engine, caller) = demo(AccessMode::ReadWrite, ExecMode::Any);
    let secret = engine.secret.stored_form().to_string();
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    // `base64` (coreutils) encodes it inside a longer text, as a leak would.
    let handle = engine.project(&caller, "demo").unwrap();
    let spec = CommandSpec::new(
        "sh",
        &["-c", &format!("echo {secret}; echo {hex}; printf 'secret={secret}' | base64 -w0")],
    );
    let verdict = engine.plan_exec(&handle, &spec).unwrap();
    let out = engine.jobs().run(engine.job_request(&handle, &verdict).unwrap()).await.unwrap();
    assert_eq!(out.stdout.matches("[redacted:secret]").count(), 3, "{}", out.stdout);
    assert!(!out.stdout.contains(&secret) && !out.stdout.contains(&hex), "{}", out.stdout);
}

/// PE-02: jobs started from several threads at the instant of an emergency stop. Every
/// start that begins after the stop returned is refused, and nothing that started before
/// it outlives it: no job left running, no process of theirs alive.
#[cfg(unix)]
#[test]
fn pe02_starts_racing_the_emergency_stop_never_outlive_it() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let (_tmp, engine, caller) = demo(AccessMode::ReadWrite, ExecMode::Any);
    let engine = Arc::new(engine);
    // A sleep no other process on the machine runs: its argument is the marker.
    let marker = format!("4000.{}", std::process::id());
    let alive = |marker: &str| {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .filter(|cmd| cmd.split(|b| *b == 0).any(|arg| arg == marker.as_bytes()))
            .count()
    };
    // The detector sees a running job (so its zero below means something).
    let handle = engine.project(&caller, "demo").unwrap();
    let verdict =
        engine.plan_exec(&handle, &CommandSpec::new("sleep", &[marker.as_str()])).unwrap();
    engine.jobs().start(engine.job_request(&handle, &verdict).unwrap()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive(&marker) == 0 {
        assert!(std::time::Instant::now() < deadline, "the job's process never showed");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    engine.emergency_stop().unwrap();
    assert_eq!(alive(&marker), 0);
    engine.resume().unwrap();

    let (mut started, mut refused_after) = (0, 0);
    // 1 000 rounds under `cargo xtask attack --long`.
    let rounds = sluice_core::attack_scale(100, 1000);
    for round in 0..rounds {
        let stopped = Arc::new(AtomicBool::new(false));
        let starters: Vec<_> = (0..2)
            .map(|_| {
                let (engine, caller, marker) = (engine.clone(), caller.clone(), marker.clone());
                let stopped = stopped.clone();
                std::thread::spawn(move || {
                    let (mut ok, mut late_refusals) = (0, 0);
                    for _ in 0..4 {
                        let after_stop = stopped.load(Ordering::SeqCst);
                        let attempt = engine.check_exec_start().and_then(|()| {
                            let handle = engine.project(&caller, "demo")?;
                            let spec = CommandSpec::new("sleep", &[marker.as_str()]);
                            let verdict = engine.plan_exec(&handle, &spec)?;
                            let req = engine.job_request(&handle, &verdict)?;
                            engine
                                .jobs()
                                .start(req)
                                .map_err(|e| Failure::new(ErrorCode::Stopped, e.to_string()))
                        });
                        match attempt {
                            Ok(_) => {
                                assert!(!after_stop, "a job started after the stop returned");
                                ok += 1;
                            }
                            Err(_) if after_stop => late_refusals += 1,
                            Err(_) => {}
                        }
                    }
                    (ok, late_refusals)
                })
            })
            .collect();
        // The stop lands somewhere among the starts, at a different point each round.
        std::thread::sleep(std::time::Duration::from_micros(200 * (round % 10) as u64));
        engine.emergency_stop().unwrap();
        stopped.store(true, Ordering::SeqCst);
        for s in starters {
            let (ok, late) = s.join().unwrap();
            started += ok;
            refused_after += late;
        }
        assert!(
            engine.jobs().list().iter().all(|j| j.state.is_final()),
            "round {round}: a job is still running after the stop"
        );
        assert_eq!(alive(&marker), 0, "round {round}: a job's process outlived the stop");
        engine.resume().unwrap();
    }
    eprintln!(
        "PE-02: {rounds} engine rounds, {started} job starts before the stop, \
         {refused_after} refused after it, 0 processes left"
    );
    // Not timing assertions: only that the race really ran both ways.
    assert!(started > 0, "no start ever won the race");
    assert!(refused_after > 0, "no start ever came after the stop");
}

#[cfg(unix)]
#[test]
fn network_follows_the_mode_unless_set_and_jobs_never_see_the_data_folder() {
    let (_tmp, engine, caller) = demo(AccessMode::ReadWrite, ExecMode::Any);
    let request = |engine: &Engine| {
        let handle = engine.project(&caller, "demo").unwrap();
        let verdict = engine.plan_exec(&handle, &CommandSpec::new("git", &["--version"])).unwrap();
        engine.job_request(&handle, &verdict).unwrap()
    };
    let req = request(&engine);
    assert_eq!(req.sandbox.network, Network::Off, "any mode: off by default");
    assert_eq!(req.sandbox.hidden, vec![engine.data_dir().to_path_buf()]);
    assert!(req.sandbox.state_dir.starts_with(engine.data_dir()));

    engine.set_modes("demo", None, Some(ExecMode::Project)).unwrap();
    let registries = Network::Registries(Arc::new(HostList::registries()));
    assert_eq!(request(&engine).sandbox.network, registries, "project mode: registries");
    let p = engine.set_network("demo", Some(NetworkMode::Off)).unwrap();
    assert_eq!(p.network, Some(NetworkMode::Off));
    assert_eq!(NetworkSetting::of_project(&p).describe(p.exec), "off (set by the user)");
    assert_eq!(request(&engine).sandbox.network, Network::Off);
    engine.set_modes("demo", None, Some(ExecMode::Any)).unwrap();
    let p = engine.set_network("demo", Some(NetworkMode::On)).unwrap();
    assert_eq!(request(&engine).sandbox.network, Network::Allowed);
    let p2 = engine.set_network("demo", None).unwrap();
    assert_eq!(p2.network, None);
    assert_eq!(NetworkSetting::of_project(&p2).describe(p.exec), "off (default for any mode)");
    assert_eq!(
        engine.set_network("nope", Some(NetworkMode::On)).unwrap_err().code,
        ErrorCode::ProjectNotFound
    );
}

/// The registries list is the user's to edit: a bad entry changes nothing, a good list is
/// what the next job gets, and `None` restores the default.
#[cfg(unix)]
#[test]
fn the_registries_list_is_checked_kept_and_given_to_the_next_job() {
    let (_tmp, engine, caller) = demo(AccessMode::ReadWrite, ExecMode::Project);
    let request = |engine: &Engine| {
        let handle = engine.project(&caller, "demo").unwrap();
        let verdict = engine.plan_exec(&handle, &CommandSpec::new("git", &["--version"])).unwrap();
        engine.job_request(&handle, &verdict).unwrap().sandbox.network
    };
    assert_eq!(engine.registries().unwrap(), HostList::registries());
    for bad in ["127.0.0.1", "localhost", "pypi.org:8080", "https://pypi.org"] {
        let err = engine.set_registries(Some(vec!["pypi.org".into(), bad.into()])).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad}");
        assert_eq!(engine.registries().unwrap(), HostList::registries(), "{bad} changed it");
    }
    let mine = engine.set_registries(Some(vec!["pypi.org".into(), "*.corp.example".into()]));
    let mine = mine.unwrap();
    assert_eq!(mine.hosts(), ["pypi.org", "*.corp.example"]);
    assert_eq!(request(&engine), Network::Registries(Arc::new(mine)));
    engine.set_registries(None).unwrap();
    assert_eq!(request(&engine), Network::Registries(Arc::new(HostList::registries())));
}

/// An approval for a command carries the policy's own analysis of it, and "always allow"
/// records where the user chose it and which assistant asked; a change's approval is
/// classed from the tally it was asked with, never from its summary's text.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offered_command_is_classed_as_its_verdict_and_always_records_who_added_it() {
    let (tmp, engine, caller) = demo(AccessMode::ReadWrite, ExecMode::Project);
    let engine = Arc::new(engine);
    let root = tmp.path().canonicalize().unwrap().join("proj");
    std::fs::write(root.join("Makefile"), "test:\n\techo ok\n").unwrap();
    let handle = engine.project(&caller, "demo").unwrap();
    let verdict = engine.plan_exec(&handle, &CommandSpec::new("make", &["test"])).unwrap();
    assert!(verdict.ask, "project mode asks");
    let fp = Engine::verdict_fingerprint(&verdict);
    engine.offer_rule(&handle.id, &fp, &verdict);

    let waiting = ask_in_background(&engine, &caller, "run make test", fp);
    let pending = loop {
        let all = engine.approvals().unwrap();
        if let Some(a) = all.into_iter().find(|a| a.state == ApprovalState::Pending) {
            break a;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    assert_eq!(
        engine.approval_risk(&pending),
        Some(ApprovalRisk::Command {
            risk: verdict.risk,
            form: Form::Toolchain,
            reason: verdict.reason.clone()
        })
    );
    assert!(verdict.reason.contains("Makefile"), "{}", verdict.reason);

    let from = sluice_store::Channel::Tray;
    engine.decide(&pending.id, crate::Decision::ApproveAlways { from }, "local user").unwrap();
    assert!(matches!(waiting.await.unwrap(), AskOutcome::Approved { .. }));
    let rules = engine.allow_rules(Some(&handle.id)).unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].origin, RuleOrigin { from: Some(from), asked_by: Some("t".into()) });

    // Once the call ended nothing backs a class for the command; a change is classed by the
    // tally it was asked with, whatever its summary's text says.
    engine.withdraw_rule(&fp);
    let decided = engine.approval(&pending.id).unwrap();
    assert_eq!(engine.approval_risk(&decided), None);
    let looks_like_a_change = ApprovalRecord {
        summary: "delete a.txt (1 B, restorable)\ncreate b.txt (2 B)".into(),
        ..decided.clone()
    };
    assert_eq!(engine.approval_risk(&looks_like_a_change), None);
    let tally = ChangeTally {
        deleted_files: 1,
        created_files: 1,
        destructive: 1,
        ..ChangeTally::default()
    };
    let change = ApprovalRecord {
        summary: "create a.txt (1 B)".into(),
        tally: Some(tally.clone()),
        ..decided
    };
    assert_eq!(engine.approval_risk(&change), Some(ApprovalRisk::Change(tally)));
}

#[test]
fn exec_off_is_refused_with_a_clear_code() {
    let (_tmp, engine, caller) = demo(AccessMode::ReadOnly, ExecMode::Off);
    let handle = engine.project(&caller, "demo").unwrap();
    let err = engine.plan_exec(&handle, &CommandSpec::new("git", &["--version"])).unwrap_err();
    assert_eq!(err.code, ErrorCode::Forbidden);
    assert!(err.message.contains("execution is off"));
}

/// Ending a job is a change: a hosted assistant that reach lets write ends only the jobs it
/// started, a read-only one (or one whose grant was consented to read-only) ends none, and
/// each refusal says why. The job runs on through all of it.
#[cfg(unix)]
#[tokio::test]
async fn a_hosted_assistant_ends_only_its_own_jobs_and_a_read_only_one_none() {
    let (_tmp, engine, local) = demo(AccessMode::ReadWrite, ExecMode::Any);
    let handle = engine.project(&local, "demo").unwrap();
    let verdict = engine.plan_exec(&handle, &CommandSpec::new("sleep", &["600"])).unwrap();
    let mut request = engine.job_request(&handle, &verdict).unwrap();
    request.owner = Some(local.token_id.as_str().to_owned());
    let job = engine.jobs().start(request).unwrap();
    // Commands in `any` mode are never a hosted assistant's: the project runs its own.
    engine.set_modes("demo", None, Some(ExecMode::Project)).unwrap();
    let (_, other) = engine.create_token("remote stand-in", None, None).unwrap();
    let remote = |read_only| Caller {
        remote: Some(crate::RemoteCaller { client_id: "slcl_x".into(), via: "h".into() }),
        read_only,
        ..engine.authenticate(&other).unwrap()
    };
    let refusal = |caller: &Caller| engine.job_to_cancel(caller, &job.0).unwrap_err();
    let writer = refusal(&remote(false));
    assert_eq!(writer.code, ErrorCode::Forbidden);
    assert!(writer.message.contains("ends only the jobs it started"), "{}", writer.message);
    let reader = refusal(&remote(true));
    assert_eq!(reader.code, ErrorCode::Forbidden);
    assert!(reader.message.contains("read-only"), "{}", reader.message);
    assert!(!engine.jobs().status(&job).unwrap().state.is_final(), "the job runs on");
    // Its own client may end it.
    assert!(engine.job_to_cancel(&local, &job.0).is_ok());
    engine.jobs().cancel(&job).unwrap();
}
