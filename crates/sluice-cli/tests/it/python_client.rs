//! The official Python MCP SDK (not written here) drives every tool and the path attacks, over
//! Streamable HTTP and through `sluice stdio`, with both the 2026-07-28 discovery flow and the
//! 2025-11-25 initialize handshake. The script itself asserts; see tests/clients/python_client.py.

use crate::harness::*;

fn run(transport: &str, mode: &str) {
    let sb = Sandbox::new();
    sb.add_project();
    sb.add_media();
    let token = sb.token("python", &[]);
    let server = sb.serve();
    let out = python_client("python_client.py")
        .args(["--transport", transport, "--mode", mode, "--url", &server.url(), "--sluice", BIN])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_DATA_DIR", &sb.data)
        .output()
        .expect("run the Python client");
    passed(&out);
    // Every call reached the audit log, attributed to the token's label. Reads are batched; a
    // clean stop writes what is queued.
    server.stop();
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    assert!(audit.contains("\"read_file\"") && audit.contains("\"python\""), "{audit}");
    assert!(!audit.contains(&sb.canary) && !audit.contains(&token));
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
}

#[test]
fn python_sdk_over_http_with_discovery() {
    run("http", "auto");
}

#[test]
fn python_sdk_over_http_with_initialize() {
    run("http", "legacy");
}

#[test]
fn python_sdk_over_stdio_with_discovery() {
    run("stdio", "auto");
}

#[test]
fn python_sdk_over_stdio_with_initialize() {
    run("stdio", "legacy");
}
