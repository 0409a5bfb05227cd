//! Interactive jobs in the registry, in the real sandbox: a terminal of their own (a REPL, a
//! prompt, Ctrl-C, `isatty`), a pipe (end of input, Ctrl-C as SIGINT), the limits, and writes
//! refused with nothing sent.

use std::time::{Duration, Instant};

use sluice_exec::{
    ExecError, InputPart, Interactive, JobId, JobLimits, JobState, JobStatus, Jobs, Key, Stream,
};

use crate::support::{Fixture, rt};

fn start(jobs: &Jobs, fx: &Fixture, kind: Interactive, program: &str, args: &[&str]) -> JobId {
    let mut req = fx.request(program, args);
    req.interactive = Some(kind);
    req.owner = Some("tok_a".into());
    jobs.start(req).expect("start")
}

/// The job's whole stdout once it contains `needle`.
fn output_with(jobs: &Jobs, id: &JobId, needle: &str) -> String {
    let stdout = || jobs.logs(id, Stream::Stdout, 0, 1 << 20).expect("logs").text;
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let text = stdout();
        if text.contains(needle) {
            return text;
        }
        assert!(Instant::now() < end, "no {needle:?} in the job's output after 20 s: {text:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The job's status once it has ended; fails (with its output) instead of waiting forever.
fn finished(jobs: &Jobs, id: &JobId) -> JobStatus {
    let waited =
        rt().block_on(async { tokio::time::timeout(Duration::from_secs(20), jobs.wait(id)).await });
    let Ok(status) = waited else {
        let out = jobs.logs(id, Stream::Stdout, 0, 1 << 20).expect("logs").text;
        panic!("job {id} still runs after 20 s; its output: {out:?}");
    };
    status.expect("wait")
}

fn text(s: &str) -> InputPart {
    InputPart::Text(s.into())
}

#[test]
fn a_python_repl_on_its_own_terminal_answers_and_survives_ctrl_c() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let id = start(&jobs, &fx, Interactive::Terminal, "python3", &["-i", "-q"]);
    output_with(&jobs, &id, ">>> ");
    jobs.write_input(&id, &[text("6*7"), InputPart::Key(Key::Enter)]).expect("write");
    output_with(&jobs, &id, "42\n");
    let loop_ = "import time\nwhile True: print('tick', flush=True) or time.sleep(0.2)\n\n";
    jobs.write_input(&id, &[text(loop_)]).expect("write the loop");
    output_with(&jobs, &id, "tick\n");
    jobs.write_input(&id, &[InputPart::Key(Key::CtrlC)]).expect("ctrl-c");
    output_with(&jobs, &id, "KeyboardInterrupt");
    jobs.write_input(&id, &[text("print(6*9)\r")]).expect("write after ctrl-c");
    output_with(&jobs, &id, "54\n");
    jobs.write_input(&id, &[InputPart::Eof]).expect("eof");
    let status = finished(&jobs, &id);
    assert_eq!(status.state, JobState::Succeeded, "{status:?}");
    let refused = jobs.write_input(&id, &[text("1\r")]);
    assert!(matches!(refused, Err(ExecError::Ended(_))), "{refused:?}");
}

#[test]
fn a_prompt_is_answered_and_a_program_checking_isatty_gets_a_terminal() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let script = "[ -t 0 ] && [ -t 1 ] && echo tty-yes; read -p 'name? ' n; echo \"hi $n\"";
    let id = start(&jobs, &fx, Interactive::Terminal, "bash", &["-c", script]);
    output_with(&jobs, &id, "name? ");
    jobs.write_input(&id, &[text("sluice"), InputPart::Key(Key::Enter)]).expect("write");
    let status = finished(&jobs, &id);
    assert_eq!(status.state, JobState::Succeeded);
    let out = jobs.logs(&id, Stream::Stdout, 0, 1 << 20).expect("logs").text;
    assert!(out.contains("tty-yes") && out.contains("hi sluice"), "{out:?}");
}

#[test]
fn a_pipe_takes_text_closes_on_end_of_input_and_turns_ctrl_c_into_sigint() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let id = start(&jobs, &fx, Interactive::Pipe, "sh", &["-c", "[ -t 0 ] || echo no-tty; cat"]);
    jobs.write_input(&id, &[text("line"), InputPart::Key(Key::Enter), InputPart::Eof])
        .expect("write");
    let status = finished(&jobs, &id);
    assert_eq!(status.state, JobState::Succeeded);
    let out = jobs.logs(&id, Stream::Stdout, 0, 1 << 20).expect("logs").text;
    assert_eq!(out, "no-tty\nline\n");

    let trap = "trap 'echo got-int; exit 3' INT; echo ready; while :; do sleep 0.05; done";
    let id = start(&jobs, &fx, Interactive::Pipe, "sh", &["-c", trap]);
    output_with(&jobs, &id, "ready");
    jobs.write_input(&id, &[InputPart::Key(Key::CtrlC)]).expect("ctrl-c");
    let status = finished(&jobs, &id);
    assert_eq!(status.exit_code, Some(3), "{status:?}");
}

#[test]
fn limits_refuse_with_nothing_sent_and_plain_jobs_take_no_input() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits {
        max_interactive_per_owner: 1,
        max_input_per_write: 8,
        max_input_per_second: 12,
        ..JobLimits::default()
    });
    let id = start(&jobs, &fx, Interactive::Pipe, "cat", &[]);
    let mut second = fx.request("cat", &[]);
    second.interactive = Some(Interactive::Pipe);
    second.owner = Some("tok_a".into());
    assert!(matches!(jobs.start(second), Err(ExecError::Limit(_))));
    let big = jobs.write_input(&id, &[text("123456789")]);
    assert!(matches!(big, Err(ExecError::InputTooLarge(_))), "{big:?}");
    // Output reaches the log a line at a time (the redactor holds back an unfinished line).
    jobs.write_input(&id, &[text("1234567\n")]).expect("within the limits");
    let fast = jobs.write_input(&id, &[text("12345")]);
    assert!(matches!(fast, Err(ExecError::InputRate(_))), "{fast:?}");
    output_with(&jobs, &id, "1234567\n");
    assert_eq!(jobs.logs(&id, Stream::Stdout, 0, 100).expect("logs").text, "1234567\n");
    jobs.cancel(&id).expect("cancel");

    let plain = jobs.start(fx.request("sleep", &["5"])).expect("start");
    let refused = jobs.write_input(&plain, &[text("x")]);
    assert!(matches!(refused, Err(ExecError::NotInteractive(_))), "{refused:?}");
    jobs.cancel(&plain).expect("cancel");
}

#[test]
fn a_waiter_wakes_on_new_output() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let id = start(&jobs, &fx, Interactive::Pipe, "cat", &[]);
    let (mut output, _state) = jobs.watch(&id).expect("watch");
    output.borrow_and_update();
    jobs.write_input(&id, &[text("ping\n")]).expect("write");
    rt().block_on(async {
        tokio::time::timeout(Duration::from_secs(20), output.changed())
            .await
            .expect("woken before the deadline")
            .expect("the job is still known");
    });
    assert!(*output.borrow() >= 5);
    jobs.cancel(&id).expect("cancel");
}

/// An engine started with signals ignored (in the background of a script, by a launcher) does
/// not hand that on: ignored dispositions survive exec, and a job starting with SIGINT ignored
/// could not be interrupted (Python installs no KeyboardInterrupt, a shell cannot trap it).
/// This binary runs again with INT, QUIT, TERM and HUP ignored, and there a job ignores
/// nothing and Ctrl-C still reaches a REPL and a pipe.
#[test]
fn jobs_start_with_default_signals_even_when_the_engine_ignores_them() {
    if std::env::var_os("SLUICE_ENGINE_IGNORES_SIGNALS").is_some() {
        let fx = Fixture::new();
        let jobs = Jobs::new(JobLimits::default());
        let out = rt().block_on(jobs.run(fx.request("grep", &["^SigIgn", "/proc/self/status"])));
        let out = out.expect("run");
        // Signals 1 to 31; 32 and up are the C library's own and real-time ones.
        let ignored = |status: &str| {
            let line = status.lines().find_map(|l| l.strip_prefix("SigIgn:")).expect("SigIgn");
            u64::from_str_radix(line.trim(), 16).expect("hex") & 0x7fff_ffff
        };
        let engine = std::fs::read_to_string("/proc/self/status").expect("status");
        let int_quit_term_hup = (1 << 1) | (1 << 2) | (1 << 14) | 1;
        assert_eq!(ignored(&engine) & int_quit_term_hup, int_quit_term_hup, "{engine}");
        assert_eq!(ignored(&out.stdout), 0, "{out:?}");
    } else {
        rerun_ignoring_signals();
    }
}

fn rerun_ignoring_signals() {
    let exe = std::env::current_exe().expect("current exe");
    let tests = [
        "interactive::jobs_start_with_default_signals_even_when_the_engine_ignores_them",
        "interactive::a_python_repl_on_its_own_terminal_answers_and_survives_ctrl_c",
        "interactive::a_pipe_takes_text_closes_on_end_of_input_and_turns_ctrl_c_into_sigint",
    ];
    for test in tests {
        // `trap ''` in a non-interactive shell sets SIG_IGN, which `exec` keeps.
        let out = std::process::Command::new("sh")
            .args(["-c", "trap '' INT QUIT TERM HUP; exec \"$0\" \"$@\""])
            .arg(&exe)
            .args(["--exact", test, "--test-threads=1"])
            .env("SLUICE_ENGINE_IGNORES_SIGNALS", "1")
            .output()
            .expect("run inner harness");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{test}: {text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("1 passed"), "{test}: {text}");
    }
}

/// A job the engine talks to: what the engine writes reaches its stdin and what it prints comes
/// back raw on the channel, never into its log (where its owner could read it) and never as
/// input its owner could type; its stderr is its log; a cancel ends it and the channel with it.
#[test]
fn a_channel_job_talks_only_to_the_engine_and_ends_with_a_cancel() {
    use std::io::{BufRead, BufReader, Write};
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let script = "import sys\nfor line in sys.stdin:\n    print('echo ' + line.strip(), flush=True)\n    print('seen', file=sys.stderr, flush=True)\n";
    let mut req = fx.request("python3", &["-c", script]);
    req.owner = Some("tok_a".into());
    let (id, channel) = jobs.start_channel(req).expect("start");
    let (mut input, mut output) = (channel.input, BufReader::new(channel.output));
    input.write_all(b"ping\n").and_then(|()| input.flush()).expect("write");
    let mut line = String::new();
    output.read_line(&mut line).expect("read");
    assert_eq!(line, "echo ping\n");
    let stderr = || jobs.logs(&id, Stream::Stderr, 0, 1 << 20).expect("logs").text;
    let end = Instant::now() + Duration::from_secs(20);
    while !stderr().contains("seen") {
        assert!(Instant::now() < end, "no stderr in the log: {:?}", stderr());
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(jobs.logs(&id, Stream::Stdout, 0, 1 << 20).expect("logs").text, "");
    let status = jobs.status(&id).expect("status");
    assert_eq!((status.state, status.interactive), (JobState::Running, None));
    let typed = jobs.write_input(&id, &[text("ping\n")]);
    assert!(matches!(typed, Err(ExecError::NotInteractive(_))), "{typed:?}");
    assert!(jobs.list().iter().any(|j| j.id == id));

    assert_eq!(jobs.cancel(&id).expect("cancel"), JobState::Cancelled);
    line.clear();
    assert_eq!(output.read_line(&mut line).expect("read after the end"), 0, "{line:?}");
    let mut req = fx.request("cat", &[]);
    req.interactive = Some(Interactive::Pipe);
    let refused = jobs.start_channel(req);
    assert!(matches!(refused, Err(ExecError::Invalid(_))), "{refused:?}");
}

/// No slot, no channel job: it is refused rather than queued (the engine waits on it).
#[test]
fn a_channel_job_is_refused_rather_than_queued() {
    let fx = Fixture::new();
    let limits = JobLimits { max_running: 1, ..JobLimits::default() };
    let jobs = Jobs::new(limits);
    let busy = jobs.start(fx.request("sleep", &["30"])).expect("start");
    let refused = jobs.start_channel(fx.request("cat", &[]));
    assert!(matches!(refused, Err(ExecError::Limit(_))), "{refused:?}");
    jobs.cancel(&busy).expect("cancel");
}
