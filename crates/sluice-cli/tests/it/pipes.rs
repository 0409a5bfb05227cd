//! Every command ends quietly when the program reading its output goes away (`sluice token
//! create | head -1`): no panic, no backtrace, the status 141 a shell reports for a program its
//! pipe's signal ended. The commands are read off the real binary's `--help`, so a command added
//! later without an entry here fails the test.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::harness::*;

/// The status of a command whose reader went away (`sluice::output::READER_GONE`).
const READER_GONE: i32 = 141;

/// Runs `cmd` with its standard output a pipe whose reading end is already closed, so the first
/// write fails as it does under `| head` once head has exited.
fn run_reader_gone(mut cmd: Command) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    cmd.stdout(writer).stderr(std::process::Stdio::piped());
    let out = cmd.output().expect("run sluice");
    drop(cmd);
    out
}

/// Subcommands (with their parents) as the binary's help lists them, depth first.
fn commands(prefix: &[String]) -> Vec<Vec<String>> {
    let mut help = Command::new(BIN);
    help.args(prefix).arg("--help");
    let text = String::from_utf8(help.output().unwrap().stdout).unwrap();
    let Some((_, rest)) = text.split_once("Commands:\n") else {
        return vec![prefix.to_vec()];
    };
    let mut out = Vec::new();
    for line in rest.lines().take_while(|l| l.starts_with("  ")) {
        let name = line.split_whitespace().next().unwrap();
        if name != "help" {
            let mut path = prefix.to_vec();
            path.push(name.to_owned());
            out.extend(commands(&path));
        }
    }
    out
}

/// How a command is run here.
enum Run {
    /// Arguments after the command's name; it writes to standard output, so it must end with
    /// [`READER_GONE`].
    Prints(Vec<String>),
    /// Arguments that make it fail before printing (what it prints on success needs a hosted
    /// client's OAuth flow, tested in `reach.rs`): a plain refusal on standard error.
    Refused(Vec<String>, &'static str),
    /// Not run here, and why.
    Elsewhere(&'static str),
}

#[test]
fn every_command_ends_quietly_when_its_reader_goes_away() {
    let sb = Sandbox::new();
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let config = sb.root().join("cursor-mcp.json");
    sb.add_project_with(&["--access", "read-write", "--exec", "any"]);
    let token = sb.token("pipes", &[]);
    let limited = sb.token("limited", &[]);
    let server = sb.serve();
    // A token the assistant limited itself, for `token restore`.
    let dropped =
        call(server.port, &limited, "drop_privileges", json!({"to": "read-only", "reason": "t"}));
    ok(&dropped);
    // Two commands waiting for a decision: one approved (with a rule), one denied.
    let echo = |word: &str| json!({"project": "demo", "program": "echo", "args": [word]});
    let mut first = Some(call_async(server.port, &token, "run_command", echo("one")));
    let approve_id = wait_pending(&sb)["id"].as_str().unwrap().to_owned();
    let mut second = Some(call_async(server.port, &token, "run_command", echo("two")));
    let deny_id = loop {
        let ids: Vec<String> =
            pending(&sb).iter().map(|a| a["id"].as_str().unwrap().to_owned()).collect();
        if let Some(id) = ids.into_iter().find(|id| *id != approve_id) {
            break id;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let other = other.to_str().unwrap().to_owned();
    let config = config.to_str().unwrap().to_owned();
    let reach_port = free_port().to_string();
    let v = |args: &[&str]| args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();

    let mut ran = 0;
    let mut elsewhere = Vec::new();
    let mut answers = Vec::new();
    for path in commands(&[]) {
        let name = path.join(" ");
        let run = match name.as_str() {
            "serve" => Run::Elsewhere("a server: its output is logs on standard error"),
            "stdio" => Run::Elsewhere("standard output is the protocol (python_client.rs)"),
            "connect" => Run::Prints(v(&["cursor", "--config", &config, "--dry-run"])),
            "disconnect" => Run::Prints(v(&["cursor", "--config", &config, "--dry-run"])),
            "project add" => Run::Prints(v(&[&other, "--name", "other"])),
            "project list" | "token list" | "audit list" | "audit verify" | "approvals list"
            | "rules list" | "registries list" | "jobs" | "reach status" | "reach requests"
            | "doctor" => Run::Prints(vec![]),
            "project set" => Run::Prints(v(&["other", "--access", "read-write"])),
            "project disable" | "project enable" | "project remove" => Run::Prints(v(&["other"])),
            "project show" | "project sandbox" | "project autorun" => Run::Prints(v(&["demo"])),
            "project rename" => Run::Prints(v(&["other", "Other"])),
            "project policy" => Run::Prints(v(&["demo", "--writes", "ask"])),
            "project shield" => Run::Prints(v(&["demo", "--add", "*.secret"])),
            "token create" => Run::Prints(v(&["--label", "piped"])),
            "token revoke" => Run::Prints(v(&["piped"])),
            "token restore" => Run::Prints(v(&["limited"])),
            "token set-profile" => Run::Prints(v(&["limited", "edit"])),
            "reach on" => Run::Prints(v(&[
                "--url",
                "https://sluice.example.com",
                "--project",
                "demo",
                "--port",
                &reach_port,
            ])),
            "reach off" => Run::Prints(vec![]),
            "reach approve" | "reach deny" => {
                Run::Refused(v(&["slrq_nosuchrequest"]), "no connection request")
            }
            "approvals show" => Run::Prints(v(&[&approve_id])),
            "approvals approve" => Run::Prints(v(&[&approve_id, "--always"])),
            "approvals deny" => Run::Prints(v(&[&deny_id])),
            "rules remove" => {
                let list: Value =
                    serde_json::from_str(&sb.ok(&["rules", "list", "--json"])).unwrap();
                Run::Prints(vec![list[0]["id"].to_string()])
            }
            "checkpoint create" => Run::Prints(v(&["demo", "--name", "piped"])),
            "checkpoint list" => Run::Prints(v(&["demo"])),
            "checkpoint restore" => {
                let list: Value =
                    serde_json::from_str(&sb.ok(&["checkpoint", "list", "demo", "--json"]))
                        .unwrap();
                let id = list["checkpoints"][0]["checkpoint_id"].as_str().expect("a checkpoint");
                // Something to put back: a file made since.
                std::fs::write(sb.project.join("made-since.txt"), "x\n").unwrap();
                Run::Prints(v(&["demo", id]))
            }
            "registries add" => Run::Prints(v(&["pypi.corp.example"])),
            "registries remove" => Run::Prints(v(&["pypi.corp.example"])),
            "registries reset" | "pause" | "resume" => Run::Prints(vec![]),
            // Last but one: the stop refuses the calls still waiting.
            "stop" => Run::Prints(vec![]),
            "sandbox status" => Run::Prints(vec![]),
            // The account is Windows' own: elsewhere these refuse before printing anything.
            "sandbox setup" | "sandbox teardown" => {
                Run::Refused(vec![], "(confinement_unavailable)")
            }
            other => panic!("`sluice {other}` has no entry in pipes.rs: add how to run it"),
        };
        let (args, refusal) = match run {
            Run::Prints(args) => (args, None),
            Run::Refused(args, why) => (args, Some(why)),
            Run::Elsewhere(why) => {
                elsewhere.push((name, why));
                continue;
            }
        };
        // A pause or a stop refuses the calls still in flight: the two decided calls finish
        // first (the engine notices a decision taken in another process within its poll).
        if matches!(name.as_str(), "pause" | "stop") {
            answers
                .extend(first.take().into_iter().chain(second.take()).map(|h| h.join().unwrap()));
        }
        let mut cmd = sb.cmd();
        cmd.args(&path).args(&args);
        let out = run_reader_gone(cmd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "`sluice {name}` panicked: {stderr}");
        match refusal {
            None => assert_eq!(
                out.status.code(),
                Some(READER_GONE),
                "`sluice {name} {args:?}` did not end quietly: {stderr}"
            ),
            Some(why) => {
                assert_eq!(out.status.code(), Some(1), "`sluice {name}`: {stderr}");
                assert!(stderr.contains(why), "`sluice {name}`: {stderr}");
            }
        }
        ran += 1;
    }
    assert!(ran >= 38, "only {ran} commands ran: is `--help` parsed?");
    let names: Vec<_> = elsewhere.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["serve", "stdio"], "{elsewhere:?}");
    // The decisions the piped commands took were taken (only their report was lost).
    let [first, second] = answers.try_into().expect("both decided calls answered before the pause");
    assert_eq!(ok(&first)["stdout"], "one\n", "{first}");
    refused(&second, "denied");
}
