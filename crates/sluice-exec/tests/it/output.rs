//! Output: ANSI stripping, caps and cursors, and redaction of secrets split across chunks
//! (OR-01) — on real process output and on the pipeline directly.

use sluice_exec::output::{AnsiStripper, LogRing, OutputPipeline, redactor_for};
use sluice_exec::{JobLimits, Jobs, Stream};

use crate::support::{Fixture, rt};

#[test]
fn ansi_and_osc_sequences_are_stripped() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let script = r"printf '\033[31mred\033[0m \033]0;title\007ok \033]8;;http://x\033\\link\033]8;;\033\\ \033(Bdone\r\n\a'";
    let out = rt().block_on(jobs.run(fx.request("sh", &["-c", script]))).expect("run");
    assert_eq!(out.stdout, "red ok link done\n");

    // Split inside a sequence.
    let mut strip = AnsiStripper::default();
    let mut got = Vec::new();
    for chunk in [&b"a\x1b["[..], b"1;3", b"1mb\x1b]0;t", b"itle\x07c"] {
        strip.push(chunk, &mut got);
    }
    assert_eq!(got, b"abc");
}

#[test]
fn or_01_secret_split_across_process_writes_is_redacted() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let token = format!("ghp_{}", "Z".repeat(40));
    let (head, tail) = token.split_at(10);
    // Two writes with a pause between them: the reader sees two chunks.
    let script = format!("printf '%s' 'token={head}'; sleep 0.2; printf '%s\\n' '{tail} end'");
    let out = rt().block_on(jobs.run(fx.request("sh", &["-c", &script]))).expect("run");
    assert_eq!(out.stdout, "token=[redacted:github-token] end\n");

    // Byte-by-byte, through the whole pipeline, with the engine's own secret and paths.
    let secret = "canary-secret-0451";
    let root = fx.root();
    let text = format!(
        "\x1b[1m{token}\x1b[0m at {}/src/main.rs and {secret} and AKIAABCDEFGHIJKLMNOP\n",
        root.display()
    );
    let mut pipe = OutputPipeline::new(redactor_for(
        &root,
        &fx.dir.path().join("state"),
        None,
        &[secret.to_owned()],
    ));
    let mut got = String::new();
    for b in text.as_bytes() {
        got.push_str(&pipe.push(std::slice::from_ref(b)));
    }
    got.push_str(&pipe.finish());
    assert_eq!(
        got,
        "[redacted:github-token] at ./src/main.rs and [redacted:secret] and \
         [redacted:aws-access-key]\n"
    );
}

#[test]
fn output_cap_drops_old_bytes_and_cursors_page_through_the_rest() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits { output_cap: 1000, ..JobLimits::default() });
    let out = rt()
        .block_on(jobs.run(fx.request(
            "sh",
            &["-c", "i=0; while [ $i -lt 1000 ]; do echo line$i; i=$((i+1)); done"],
        )))
        .expect("run");
    assert!(out.truncated);
    assert_eq!(out.stdout.len(), 1000);
    assert!(out.stdout.ends_with("line999\n"));
    let id = jobs.list().last().expect("job").id.clone();
    let total = jobs.status(&id).expect("status").stdout_bytes;
    let want: usize = (0..1000).map(|i| format!("line{i}\n").len()).sum();
    assert_eq!(total, want as u64);
    let first = jobs.logs(&id, Stream::Stdout, 0, 300).expect("page");
    assert_eq!((first.cursor, first.dropped_bytes), (total - 1000, total - 1000));
    let mut cursor = first.next_cursor;
    let mut text = first.text;
    loop {
        let page = jobs.logs(&id, Stream::Stdout, cursor, 300).expect("page");
        assert_eq!(page.dropped_bytes, 0);
        assert!(page.text.len() <= 300);
        text.push_str(&page.text);
        cursor = page.next_cursor;
        if page.at_end {
            break;
        }
    }
    assert_eq!(text, out.stdout);
    assert_eq!(cursor, total);

    // Pages never split a character, even when the drop did.
    let mut ring = LogRing::new(5);
    ring.push("aé€😀");
    let page = ring.read(0, 3);
    assert!(page.text.chars().all(|c| c != '\u{FFFD}'), "{page:?}");
}
