//! PE-02 through the real front door: writes and runs fired over HTTP while the user's
//! `sluice stop` lands, round after round. Every request sent after the stop returned is
//! refused, and no process of any job outlives it. (The engine-level race of job starts against
//! the stop, 100 rounds here and 1 000 under `--long`, is `sluice-engine`'s
//! `pe02_starts_racing_the_emergency_stop_never_outlive_it`.)

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Rig, Via, scale};
use crate::harness::{bearer, call_body, post, result, survivors};

#[test]
fn pe02_nothing_sent_after_the_stop_runs_or_lands_and_no_job_outlives_it() {
    let rig = Rig::new("any");
    let marker = format!("8888.{}", std::process::id());
    let run = json!({"project": "demo", "program": "sleep", "args": [marker],
        "timeout_seconds": 60});
    // "Always allow" this exact command, so the race needs no prompt.
    let v = std::thread::scope(|s| {
        let call = s.spawn(|| rig.call(Via::Http, "start_job", run.clone()));
        let a = crate::harness::wait_pending(&rig.sb);
        rig.cli(&["approvals", "approve", a["id"].as_str().unwrap(), "--always"]);
        call.join().unwrap()
    });
    assert!(!result(&v).1, "{v}");
    let rounds = scale(10, 1000);
    let (late_refused, before) = (AtomicUsize::new(0), AtomicUsize::new(0));
    for round in 0..rounds {
        let stopped = AtomicBool::new(false);
        std::thread::scope(|s| {
            for worker in 0..3 {
                let (stopped, rig, run) = (&stopped, &rig, &run);
                let (late_refused, before) = (&late_refused, &before);
                s.spawn(move || {
                    for i in 0.. {
                        let after = stopped.load(Ordering::SeqCst);
                        let body = if worker == 0 {
                            call_body("start_job", run.clone())
                        } else {
                            call_body(
                                "write_file",
                                json!({"project": "demo",
                                "path": format!("r{round}/w{worker}-{i}.txt"), "content": "x",
                                "create_parents": true}),
                            )
                        };
                        let reply = post(rig.port, &bearer(&rig.token), &body);
                        let refused = reply.status != 200 || {
                            let v = reply.json();
                            v.get("error").is_some() || result(&v).1
                        };
                        if after {
                            assert!(
                                refused,
                                "round {round}: sent after the stop, it ran: {}",
                                reply.body
                            );
                            late_refused.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                        if !refused {
                            before.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
            std::thread::sleep(Duration::from_millis(5 + (round as u64 * 7) % 40));
            rig.cli(&["stop"]);
            stopped.store(true, Ordering::SeqCst);
        });
        // The running engine ends every job within seconds of the stop.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !survivors(&marker).is_empty() {
            assert!(Instant::now() < deadline, "round {round}: a job outlived the stop");
            std::thread::sleep(Duration::from_millis(20));
        }
        rig.cli(&["resume"]);
    }
    let (late, before) = (late_refused.into_inner(), before.into_inner());
    eprintln!("PE-02: {rounds} rounds, {before} actions before each stop, {late} refused after");
    assert!(before > 0 && late == rounds * 3, "the race did not run both ways");
    rig.finish(&[]);
}
