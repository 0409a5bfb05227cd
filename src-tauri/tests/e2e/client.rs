//! The assistant's side: one step of the official Python MCP SDK (see mcp_step.py) per call.
//! Shared by the end-to-end test and the screenshots command (`examples/screenshots.rs`), so
//! each uses only part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn python() -> String {
    std::env::var("SLUICE_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("SLUICE_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which installs the Python MCP SDK")
    })
}

pub fn client(url: &str, token: &str, project: &str, path: &str, expect: &str) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/mcp_step.py");
    let mut cmd = Command::new(python());
    cmd.arg(script)
        .args(["--url", url, "--project", project, "--path", path, "--expect", expect])
        .env("SLUICE_TOKEN", token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A `start_job` of `sh -c script` (it waits for the user's approval).
pub fn start_job(url: &str, token: &str, project: &str, script: &str) -> Command {
    let mut cmd = client(url, token, project, "README.md", "job");
    cmd.args(["--script", script]);
    cmd
}

/// A `start_job` of an exact argv (it waits for the user's approval).
pub fn start_job_argv(url: &str, token: &str, project: &str, argv: &[&str]) -> Command {
    let mut cmd = client(url, token, project, "README.md", "job");
    cmd.arg("--argv").arg(serde_json::to_string(argv).unwrap());
    cmd
}

/// Runs one client step (see mcp_step.py) and returns its stdout.
pub fn client_step(url: &str, token: &str, project: &str, expect: &str) -> String {
    let out = client(url, token, project, "README.md", expect)
        .output()
        .expect("run the Python MCP client");
    finished(out, expect)
}

/// A client step that blocks (a delete waiting for approval), running while the test clicks.
pub struct Pending(Option<Child>, &'static str);

impl Pending {
    pub fn start(mut cmd: Command, expect: &'static str) -> Pending {
        Pending(Some(cmd.spawn().expect("run the Python MCP client")), expect)
    }

    /// Waits (with a deadline) for the client to finish; returns its stdout.
    pub async fn finish(mut self) -> String {
        let mut child = self.0.take().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the client's {} call did not finish", self.1);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        finished(child.wait_with_output().unwrap(), self.1)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn finished(out: std::process::Output, expect: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "client step {expect:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Types `text`, then the named `keys`, into job `job` as the assistant (write_job_input).
pub fn type_into_job(url: &str, token: &str, project: &str, job: &str, text: &str, keys: &[&str]) {
    let out = client(url, token, project, "README.md", "type")
        .args(["--job", job, "--text", text, "--keys", &serde_json::to_string(keys).unwrap()])
        .output()
        .expect("run the Python MCP client");
    assert_eq!(finished(out, "type").trim(), "TYPED");
}
