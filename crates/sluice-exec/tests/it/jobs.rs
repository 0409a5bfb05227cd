//! The registry: states, limits, logs, events, and jobs outliving their client.

use std::time::Duration;

use sluice_exec::{ExecError, JobEvent, JobLimits, JobState, Jobs, Stream};

use crate::support::{Fixture, marker, rt, survivors};

#[test]
fn a_job_survives_its_client_and_its_logs_are_read_afterwards() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let id = {
        // The "client": its own handle and its own runtime, both gone before the job ends.
        let client = jobs.clone();
        let client_rt = rt();
        let id = client_rt
            .block_on(async {
                client.start(fx.request("sh", &["-c", "echo begin; sleep 0.3; echo end"]))
            })
            .expect("start");
        drop(client_rt);
        drop(client);
        id
    };
    let status = rt().block_on(jobs.wait(&id)).expect("wait");
    assert_eq!(status.state, JobState::Succeeded);
    let page = jobs.logs(&id, Stream::Stdout, 0, 1000).expect("logs");
    assert_eq!(page.text, "begin\nend\n");
    assert!(page.at_end);
}

#[test]
fn concurrency_queue_and_rate_limits_refuse_clearly() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits {
        max_running: 1,
        max_queued: 1,
        max_starts_per_minute: 3,
        ..JobLimits::default()
    });
    let mark = marker();
    let a = jobs.start(fx.request("sleep", &[&mark])).expect("a");
    let b = jobs.start(fx.request("sleep", &[&mark])).expect("b");
    assert_eq!(jobs.status(&a).expect("a").state, JobState::Running);
    assert_eq!(jobs.status(&b).expect("b").state, JobState::Queued);
    // The wall-clock start is there once a job runs, and not while it waits.
    let (sa, sb) = (jobs.status(&a).expect("a"), jobs.status(&b).expect("b"));
    assert!(sa.started_ms.is_some_and(|s| s > 1_600_000_000_000), "{sa:?}");
    assert_eq!(sb.started_ms, None);
    let c = jobs.start(fx.request("sleep", &[&mark]));
    assert!(matches!(&c, Err(ExecError::Limit(m)) if m.contains("queued")), "{c:?}");
    // Cancelling the running job lets the queued one start.
    let mut events = jobs.subscribe();
    assert_eq!(jobs.cancel(&a).expect("cancel"), JobState::Cancelled);
    let started = rt().block_on(async {
        loop {
            match events.recv().await {
                Ok(JobEvent::Started { id }) => break id,
                Ok(_) => continue,
                Err(e) => panic!("events: {e}"),
            }
        }
    });
    assert_eq!(started, b);
    assert_eq!(jobs.status(&b).expect("b").state, JobState::Running);
    // The refused start did not count towards the rate: this third start is queued.
    let d = jobs.start(fx.request("sleep", &[&mark])).expect("d");
    assert_eq!(jobs.status(&d).expect("d").state, JobState::Queued);
    let e = jobs.start(fx.request("sleep", &[&mark]));
    assert!(matches!(&e, Err(ExecError::Limit(m)) if m.contains("minute")), "{e:?}");
    assert_eq!(jobs.kill_project("proj_test"), 2);
    assert_eq!(jobs.status(&d).expect("d").state, JobState::Cancelled);
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

#[test]
fn kill_project_ends_only_that_projects_jobs() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let (mark_a, mark_b) = (marker(), marker());
    let a = jobs.start(fx.request("sleep", &[&mark_a])).expect("a");
    let mut other = fx.request("sleep", &[&mark_b]);
    other.project = "proj_other".into();
    let b = jobs.start(other).expect("b");
    assert_eq!(jobs.kill_project("proj_test"), 1);
    assert_eq!(jobs.status(&a).expect("a").state, JobState::Cancelled);
    assert_eq!(jobs.status(&b).expect("b").state, JobState::Running);
    assert!(survivors(&mark_a).is_empty());
    assert_eq!(survivors(&mark_b).len(), 1);
    jobs.cancel(&b).expect("cancel");
    assert!(survivors(&mark_b).is_empty());
    assert_eq!(jobs.list().len(), 2);
}

#[test]
fn exit_codes_and_events_are_reported() {
    let fx = Fixture::new();
    let jobs =
        Jobs::new(JobLimits { sample_every: Duration::from_millis(50), ..Default::default() });
    let mut events = jobs.subscribe();
    // It runs until the test has seen a sample of it (however loaded the machine is).
    let script = "echo out; echo err >&2; while [ ! -e go ]; do sleep 0.02; done; exit 3";
    let id = jobs.start(fx.request("sh", &["-c", script])).expect("start");
    let mut seen = (false, false, false, false);
    // Events arrive in order; the supervisor publishes Finished just after the state changes.
    rt().block_on(async {
        while !seen.2 {
            match events.recv().await.expect("event") {
                JobEvent::Started { .. } => seen.0 = true,
                JobEvent::Output { .. } => seen.1 = true,
                JobEvent::Finished { state, .. } => {
                    assert_eq!(state, JobState::Failed);
                    seen.2 = true;
                }
                JobEvent::Sample { sample, .. } => {
                    seen.3 |= sample.processes >= 1;
                    if seen.3 {
                        std::fs::write(fx.dir.path().join("project/go"), "").expect("go");
                    }
                }
            }
        }
    });
    assert_eq!(seen, (true, true, true, true));
    let out = rt().block_on(jobs.output(&id)).expect("output");
    assert_eq!((out.state, out.exit_code), (JobState::Failed, Some(3)));
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("out\n", "err\n"));
}

#[test]
fn a_missing_working_directory_is_refused_without_a_path() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let mut req = fx.request("true", &[]);
    req.command.cwd = "nope".into();
    let err = jobs.start(req).expect_err("refused");
    assert!(err.to_string().contains("\"nope\""), "{err}");
    assert!(!err.to_string().contains(fx.dir.path().to_str().expect("utf8")), "{err}");
}

#[test]
fn the_observer_sees_every_state_change_with_wall_clock_times() {
    use std::sync::{Arc, Mutex};

    use sluice_exec::JobRecord;

    let fx = Fixture::new();
    let seen: Arc<Mutex<Vec<JobRecord>>> = Arc::default();
    let sink = seen.clone();
    let limits = JobLimits { max_running: 1, ..JobLimits::default() };
    let jobs = Jobs::with_observer(
        limits,
        Arc::new(move |r: &JobRecord| sink.lock().expect("lock").push(r.clone())),
    );
    let mut first = fx.request("sh", &["-c", "sleep 0.2; exit 4"]);
    first.owner = Some("tok_owner".into());
    let a = jobs.start(first).expect("a");
    let b = jobs.start(fx.request("echo", &["queued"])).expect("b");
    let c = jobs.start(fx.request("echo", &["cancelled"])).expect("c");
    assert_eq!(jobs.cancel(&c).expect("cancel"), JobState::Cancelled);
    rt().block_on(jobs.wait(&a)).expect("a ends");
    rt().block_on(jobs.wait(&b)).expect("b ends");
    let seen = seen.lock().expect("lock").clone();
    let states = |id: &sluice_exec::JobId| -> Vec<JobState> {
        seen.iter().filter(|r| r.id == *id).map(|r| r.state).collect()
    };
    assert_eq!(states(&a), [JobState::Running, JobState::Failed]);
    assert_eq!(states(&b), [JobState::Queued, JobState::Running, JobState::Succeeded]);
    assert_eq!(states(&c), [JobState::Queued, JobState::Cancelled]);
    let last_a = seen.iter().rev().find(|r| r.id == a).expect("a");
    assert_eq!((last_a.exit_code, last_a.owner.as_deref()), (Some(4), Some("tok_owner")));
    let (start, end) = (last_a.started_ms.expect("started"), last_a.ended_ms.expect("ended"));
    assert!(last_a.created_ms <= start && start + 150 <= end, "{last_a:?}");
    assert!(last_a.command.ends_with("sh -c 'sleep 0.2; exit 4'"), "{last_a:?}");
}
