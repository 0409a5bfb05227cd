//! Reach from the web: the official Python MCP SDK's OAuth client through a TLS edge standing in
//! for a tunnel, against a running `sluice serve`, with the person approving in the CLI. The
//! script asserts each step and attack (see tests/clients/reach_client.py); this side checks
//! what the run left behind.

use std::path::PathBuf;
use std::process::Command;

use crate::harness::*;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients/reach_client.py")
}

#[test]
fn a_hosted_assistant_connects_through_a_tunnel_with_oauth_and_every_attack_fails() {
    let sb = Sandbox::new();
    // Read-write for local tokens; reach exposes it read-only.
    sb.add_project_with(&["--access", "read-write"]);
    let local = sb.token("local", &[]);
    let (edge, backend) = (free_port(), free_port());
    let url = format!("https://localhost:{edge}");
    let on = sb.ok(&[
        "reach",
        "on",
        "--url",
        &url,
        "--port",
        &backend.to_string(),
        "--project",
        "demo",
        "--redirect",
        "http://localhost:33418/callback",
    ]);
    assert!(on.contains(&format!("{url}/mcp")) && on.contains("only read"), "{on}");
    let server = sb.serve();
    let out = Command::new(python())
        .arg(script())
        .args(["--edge-port", &edge.to_string(), "--backend-port", &backend.to_string()])
        .args(["--local-url", &server.url(), "--sluice", BIN])
        .env("SLUICE_TOKEN", &local)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_DATA_DIR", &sb.data)
        .output()
        .expect("run the Python OAuth client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "reach client failed:\n{stdout}\n{stderr}");
    assert!(stdout.starts_with("OK "), "{stdout}");
    server.stop();

    // Reach is off and every remote token it issued is revoked; the local token is not.
    assert!(sb.ok(&["reach", "status"]).contains("off"));
    let tokens: serde_json::Value =
        serde_json::from_str(&sb.ok(&["token", "list", "--json"])).unwrap();
    let tokens = tokens.as_array().or(tokens["tokens"].as_array()).unwrap().clone();
    let remote: Vec<_> =
        tokens.iter().filter(|t| t["label"].as_str().unwrap().starts_with("remote: ")).collect();
    assert!(remote.len() >= 4, "{tokens:?}");
    assert!(remote.iter().all(|t| !t["revoked_ms"].is_null()), "{remote:?}");
    assert!(tokens.iter().any(|t| t["label"] == "local" && t["revoked_ms"].is_null()));
    // The person's decisions are in the audit log; no secret is.
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    for action in ["reach.on", "reach.approve", "reach.deny", "reach.token", "reach.off"] {
        assert!(audit.contains(action), "{action} audited: {audit}");
    }
    for secret in ["slr_", "slf_", "slco_"] {
        assert!(!audit.contains(secret), "no {secret}… in the audit log");
    }
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
}
