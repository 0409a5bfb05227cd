//! MCP software written by others, on Node 22: the TypeScript SDK v2 client (2026-07-28,
//! validating every structured result against its output schema), the v1 client (which checks
//! error results against it too) and the official conformance suite: 2025-11-25's scenarios that
//! apply to a server without the suite's fixture tools, and every check 2026-07-28 requires
//! but those named in `tests/node/conformance-baseline.yml`. The suite
//! has no bearer-token option, so it goes through `tests/node/auth-proxy.mjs`, which only adds
//! the header: Sluice's authentication stays on.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::harness::*;

fn node() -> String {
    std::env::var("SLUICE_TEST_NODE").unwrap_or_else(|_| {
        panic!("SLUICE_TEST_NODE is not set: run the tests with `cargo xtask test`, which installs Node 22 and the clients")
    })
}

fn node_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/node")
}

/// Runs `script` (in tests/node) against a fresh server with a project and a token; it prints
/// "OK <n> checks" and exits 0 when every check passed.
fn run_client(script: &str, label: &str) {
    run_client_with(script, label, &[], &[]);
}

/// [`run_client`] with the project added with `project_args` and a token made with
/// `token_args` (e.g. its profile).
fn run_client_with(script: &str, label: &str, project_args: &[&str], token_args: &[&str]) {
    let sb = Sandbox::new();
    sb.add_project_with(project_args);
    sb.add_media();
    let token = sb.token(label, token_args);
    let server = sb.serve();
    let out = Command::new(node())
        .arg(node_dir().join(script))
        .env("SLUICE_URL", server.url())
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("OK "), "{stdout}");
    assert!(!stderr.contains("unknown format"), "schema warnings: {stderr}");
}

#[test]
fn typescript_sdk_v2_calls_every_tool() {
    run_client("ts_client.mjs", "ts");
}

/// A live job through the TypeScript SDK v2 (tests/node/ts_live_client.mjs): an interactive
/// REPL approved through the CLI answers 6*7, and a published Node server is fetched, every
/// result valid against its output schema.
#[test]
fn typescript_sdk_v2_drives_an_interactive_job() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let out = Command::new(node())
        .arg(node_dir().join("ts_live_client.mjs"))
        .env("SLUICE_URL", server.url())
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_BIN", BIN)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stdout.starts_with("OK "), "{stdout}\n{stderr}");
}

/// The TypeScript SDK v1, which most clients embed, checks an error result's structured content
/// against the tool's output schema too: every refusal must reach the caller as a result.
#[test]
fn typescript_sdk_v1_sees_every_refusal_as_a_result() {
    run_client("ts_v1_client.mjs", "ts-v1");
}

/// A `review` token through the TypeScript SDK v2: only read tools listed, a write refused with
/// `outside_profile` in a read-write project, nothing written.
#[test]
fn typescript_sdk_sees_a_review_token_offered_only_read_tools() {
    run_client_with(
        "ts_profiles.mjs",
        "ts-review",
        &["--access", "read-write"],
        &["--profile", "review"],
    );
}

/// Scenarios of 2025-11-25 (the last version with `initialize` and `ping`) that need no fixture
/// tools, resources or prompts.
pub const APPLICABLE_SCENARIOS: &[&str] =
    &["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

#[test]
fn conformance_suite_passes_the_applicable_scenarios() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("conformance", &[]);
    let server = sb.serve();
    let proxy_port = free_port();
    let mut proxy = Command::new(node())
        .arg(node_dir().join("auth-proxy.mjs"))
        .args([proxy_port.to_string(), server.port.to_string()])
        .env("SLUICE_TOKEN", &token)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(proxy.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    assert_eq!(ready.trim(), "ready");
    let results = sb.root().join("conformance");
    let suite = |args: &[&str]| {
        let out = Command::new(node())
            .arg(node_dir().join("node_modules/.bin/conformance"))
            .args(["server", "--url", &format!("http://localhost:{proxy_port}/mcp")])
            .args(args)
            .arg("-o")
            .arg(&results)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}:\n{stdout}\n{stderr}");
        stdout
    };
    for scenario in APPLICABLE_SCENARIOS {
        let stdout = suite(&["--scenario", scenario, "--spec-version", "2025-11-25"]);
        assert!(stdout.contains(" 0 failed"), "{scenario}:\n{stdout}");
    }
    // Everything 2026-07-28 requires; the baseline names, check by check, the ones that need
    // the suite's fixture tools or features Sluice does not offer, and fails on any other.
    let baseline = node_dir().join("conformance-baseline.yml");
    let stdout =
        suite(&["--requirements", "2026-07-28", "--expected-failures", baseline.to_str().unwrap()]);
    assert!(stdout.contains("all failures are expected"), "{stdout}");
    let _ = proxy.kill();
    let _ = proxy.wait();
}
