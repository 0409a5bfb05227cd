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
