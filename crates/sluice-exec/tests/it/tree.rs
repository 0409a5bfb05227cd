//! CI-07 and PE-02: cancel, timeout and emergency stop leave no process of the job alive,
//! including setsid'd and double-forked descendants (verified by scanning /proc).

use std::time::Duration;

use sluice_exec::{ExecError, JobLimits, JobState, Jobs, Stream};

use crate::support::{Fixture, escape_tree_script, marker, rt, survivors, wait_for};

fn registry() -> Jobs {
    // Makes this test process a subreaper, as the engine is: double-forked orphans come here.
    sluice_exec::init_subreaper().expect("subreaper");
    Jobs::new(JobLimits::default())
}

/// Starts the escape tree and waits until all four descendants exist.
fn start_tree(jobs: &Jobs, fx: &Fixture, mark: &str) -> sluice_exec::JobId {
    let id = jobs.start(fx.request("sh", &["-c", &escape_tree_script(mark)])).expect("start");
    wait_for("the tree to be up", Duration::from_secs(10), || {
        let page = jobs.logs(&id, Stream::Stdout, 0, 100).ok()?;
        // sh itself, the busy-loop subshell and three sleeps.
        (page.text.contains("ready") && survivors(mark).len() >= 5).then_some(())
    });
    id
}

#[test]
fn ci_07_cancel_kills_setsid_and_double_forked_descendants() {
    let (fx, jobs, mark) = (Fixture::new(), registry(), marker());
    let id = start_tree(&jobs, &fx, &mark);
    let state = jobs.cancel(&id).expect("cancel");
    assert_eq!(state, JobState::Cancelled);
    assert_eq!(survivors(&mark), Vec::<u32>::new());
    assert_eq!(jobs.status(&id).expect("status").state, JobState::Cancelled);
}

#[test]
fn pe_02_stop_all_kills_every_tree_and_refuses_new_starts() {
    let (fx, jobs, mark) = (Fixture::new(), registry(), marker());
    let a = start_tree(&jobs, &fx, &mark);
    let b = start_tree(&jobs, &fx, &mark);
    let report = jobs.stop_all();
    assert_eq!(report.killed_jobs, 2);
    assert_eq!(survivors(&mark), Vec::<u32>::new());
    for id in [a, b] {
        assert_eq!(jobs.status(&id).expect("status").state, JobState::Cancelled);
    }
    let refused = jobs.start(fx.request("true", &[]));
    assert!(matches!(refused, Err(ExecError::Stopped)), "{refused:?}");
    jobs.resume();
    let id = jobs.start(fx.request("true", &[])).expect("start after resume");
    let status = rt().block_on(jobs.wait(&id)).expect("wait");
    assert_eq!(status.state, JobState::Succeeded);
}

#[test]
fn timeout_kills_the_tree_and_reports_timed_out() {
    let (fx, jobs, mark) = (Fixture::new(), registry(), marker());
    let mut req = fx.request("sh", &["-c", &escape_tree_script(&mark)]);
    req.command.timeout = Some(Duration::from_millis(500));
    let out = rt().block_on(jobs.run(req)).expect("run");
    assert_eq!(out.state, JobState::TimedOut);
    assert!(out.timed_out);
    assert!(out.stdout.contains("ready"), "{out:?}");
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

#[test]
fn leftovers_die_when_the_leader_exits() {
    let (fx, jobs, mark) = (Fixture::new(), registry(), marker());
    // The leader exits at once and leaves daemonized processes behind.
    let script = format!("(setsid sleep {mark} &); sleep {mark} & echo started");
    let out = rt().block_on(jobs.run(fx.request("sh", &["-c", &script]))).expect("run");
    assert_eq!(out.state, JobState::Succeeded, "{out:?}");
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}
