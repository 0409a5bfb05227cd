//! Interactive jobs in the registry, in the real sandbox: a terminal of their own (a REPL, a
//! prompt, Ctrl-C, `isatty`), a pipe (end of input, Ctrl-C as SIGINT), the limits, and writes
//! refused with nothing sent.

use std::time::Duration;

use sluice_exec::{
    ExecError, InputPart, Interactive, JobId, JobLimits, JobState, Jobs, Key, Stream,
};

use crate::support::{Fixture, rt, wait_for};

fn start(jobs: &Jobs, fx: &Fixture, kind: Interactive, program: &str, args: &[&str]) -> JobId {
    let mut req = fx.request(program, args);
    req.interactive = Some(kind);
    req.owner = Some("tok_a".into());
    jobs.start(req).expect("start")
}

/// The job's whole stdout once it contains `needle`.
fn output_with(jobs: &Jobs, id: &JobId, needle: &str) -> String {
    wait_for(&format!("output containing {needle:?}"), Duration::from_secs(20), || {
        let text = jobs.logs(id, Stream::Stdout, 0, 1 << 20).expect("logs").text;
        text.contains(needle).then_some(text)
    })
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
    let status = rt().block_on(jobs.wait(&id)).expect("wait");
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
    let status = rt().block_on(jobs.wait(&id)).expect("wait");
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
    let status = rt().block_on(jobs.wait(&id)).expect("wait");
    assert_eq!(status.state, JobState::Succeeded);
    let out = jobs.logs(&id, Stream::Stdout, 0, 1 << 20).expect("logs").text;
    assert_eq!(out, "no-tty\nline\n");

    let trap = "trap 'echo got-int; exit 3' INT; echo ready; while :; do sleep 0.05; done";
    let id = start(&jobs, &fx, Interactive::Pipe, "sh", &["-c", trap]);
    output_with(&jobs, &id, "ready");
    jobs.write_input(&id, &[InputPart::Key(Key::CtrlC)]).expect("ctrl-c");
    let status = rt().block_on(jobs.wait(&id)).expect("wait");
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
