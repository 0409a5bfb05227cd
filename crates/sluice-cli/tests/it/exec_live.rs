//! Live jobs end to end with the official Python MCP SDK (tests/clients/python_live.py): an
//! interactive start asks and says the assistant will type into the program; a Python REPL on a
//! terminal of its own answers 6*7, survives Ctrl-C; a prompt is answered; a program checking
//! isatty gets a terminal; waits end on new output or at their deadline, and a cancelled wait
//! leaves the job running; another token neither reads nor types into the session; a review
//! token cannot type. What was typed reaches the audit log as a size and a keyed hash only.

use crate::harness::*;

#[test]
fn exec_live_sessions_through_the_python_sdk() {
    let (sb, token) = executable("any");
    let other = sb.token("other", &[]);
    let review = sb.token("reviewer", &["--profile", "review"]);
    let server = sb.serve();
    let out = python_client("python_live.py")
        .args(["--url", &server.url(), "--sluice", BIN])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_OTHER_TOKEN", &other)
        .env("SLUICE_REVIEW_TOKEN", &review)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .expect("run the Python client");
    passed(&out);
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    assert!(audit.contains("job_input") && audit.contains("bytes to job_"), "input not audited");
    // Typed text never reaches the audit log.
    for typed in ["6*7", "print(6*9)", "quokka"] {
        assert!(!audit.contains(typed), "{typed} in the audit log");
    }
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
}

/// Dev servers end to end with the official Python MCP SDK (tests/clients/python_ports.py): a
/// published `python3 -m http.server` asks, becomes ready, is fetched by the assistant's tool
/// and by headless Chromium through its link, keeps the shield, refuses other ports, other
/// profiles and other hosts, and is gone after cancel_job and after the emergency stop.
#[test]
fn exec_dev_servers_through_the_python_sdk() {
    let (sb, token) = executable("any");
    std::fs::write(sb.project.join("hello.txt"), "HELLO-SERVED\n").expect("write");
    // A file naming where the project and Sluice's data are: what the server answers is
    // redacted like the job's output, so neither physical path reaches the assistant.
    let root = sb.project.canonicalize().expect("project");
    let data = sb.data.canonicalize().expect("data");
    let where_ = format!("root={}/src data={}/db\n", root.display(), data.display());
    std::fs::write(sb.project.join("where.txt"), where_).expect("write");
    let review = sb.token("reviewer", &["--profile", "review"]);
    let chromium = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
        .expect("chromium on PATH (the README's test command installs it)");
    let server = sb.serve();
    let out = python_client("python_ports.py")
        .args(["--url", &server.url(), "--sluice", BIN])
        .arg("--chromium")
        .arg(&chromium)
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_REVIEW_TOKEN", &review)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_PATHS", format!("{}:{}", root.display(), data.display()))
        .env("HOME", sb.tmp.path())
        .output()
        .expect("run the Python client");
    passed(&out);
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    assert!(audit.contains("fetch_from_job"), "the fetches are audited");
}
