//! OpenAI's Secure MCP Tunnel, end to end. `sluice serve` runs in a network and mount namespace
//! of its own where `api.openai.com` resolves (its own /etc/hosts) to an address on the
//! namespace's loopback device and the test CA is the trust store. The script
//! (tests/clients/openai_tunnel.py) joins the namespace and stands in for OpenAI's tunnel
//! service, implementing the published protocol: it takes the official Python MCP SDK's
//! requests on a connector endpoint, queues them as commands for Sluice's poll, and answers with
//! what Sluice posts back; then it injects the commands an attacker on that path would.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::harness::*;
use crate::reach_cimd::serve_in_own_network;

/// api.openai.com's address inside the namespace.
const ADDRESS: &str = "11.22.33.45";
const TUNNEL: &str = "tunnel_0123456789abcdef0123456789abcdef";
const KEY: &str = "sk-proj-TestTunnelKey0123456789";

/// `sluice reach on` with OpenAI's tunnel, the key on standard input.
fn reach_on_openai(sb: &Sandbox, key: &str) -> std::process::Output {
    let mut child = sb
        .cmd()
        .args(["reach", "on", "--openai-tunnel", TUNNEL, "--project", "demo"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{key}").unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_chatgpt_connector_reaches_sluice_through_openais_tunnel_and_nothing_it_forwards_is_trusted() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write"]);
    let certs = sb.root().join("openai-certs");
    let made = Command::new(python())
        .arg(client_script("openai_tunnel.py"))
        .arg("certs")
        .arg(&certs)
        .status();
    assert!(made.unwrap().success(), "make the test CA");
    let hosts = sb.root().join("hosts");
    std::fs::write(
        &hosts,
        format!("127.0.0.1 localhost\n::1 localhost\n{ADDRESS} api.openai.com\n"),
    )
    .unwrap();

    // A bad key or tunnel ID is refused before anything is stored.
    let out = reach_on_openai(&sb, "sk with spaces");
    assert!(!out.status.success(), "a key with spaces is refused");
    assert!(String::from_utf8_lossy(&out.stderr).contains("API key"));
    let bad = sb.err(&["reach", "on", "--openai-tunnel", "tunnel_x;rm", "--project", "demo"]);
    assert!(bad.contains("tunnel ID"), "{bad}");
    let url = sb.err(&["reach", "on", "--openai-tunnel", TUNNEL, "--url", "https://a.example"]);
    assert!(url.contains("cannot be used with"), "{url}");
    assert!(sb.ok(&["reach", "status"]).contains("off"));

    let out = reach_on_openai(&sb, KEY);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("OpenAI's Secure MCP Tunnel") && said.contains("no authentication"));
    // The key is kept encrypted, never in the clear in the database.
    for file in ["sluice.db", "sluice.db-wal"] {
        let bytes = std::fs::read(sb.data.join(file)).unwrap_or_default();
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "{file} holds the key");
    }
    // A change of the rest keeps the key (nothing on standard input).
    let out = reach_on_openai(&sb, "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let port = free_port();
    let server = Server::spawn(
        serve_in_own_network(&sb, ADDRESS, &hosts, &certs.join("ca.pem"), port),
        port,
    );
    // Nothing listens for this tunnel: the remote port stays closed.
    let status = sb.ok(&["reach", "status"]);
    assert!(!status.contains("tunnel port"), "{status}");

    let out = Command::new("nsenter")
        .args(["--target", &server.child.id().to_string(), "--net", "--mount", "--"])
        .arg(python())
        .arg(client_script("openai_tunnel.py"))
        .args(["run", "--certs", &certs.to_string_lossy(), "--address", ADDRESS])
        .args(["--tunnel-id", TUNNEL, "--api-key", KEY, "--sluice", BIN])
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_SECRET_STORE", "file")
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .expect("run the tunnel service in Sluice's namespace");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.starts_with("OK "),
        "tunnel service:\n{stdout}\n{stderr}"
    );
    server.stop();

    // The calls ran under the tunnel's own grant, marked remote, through the tunnel.
    let tokens = sb.ok(&["token", "list", "--json"]);
    assert!(tokens.contains(&format!("remote: OpenAI Secure MCP Tunnel {TUNNEL}")), "{tokens}");
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    let marked = format!("remote, through OpenAI's Secure MCP Tunnel {TUNNEL}");
    assert!(audit.contains(&marked), "{marked}: {audit}");
    assert!(!audit.contains(KEY), "the key never reaches the audit");

    // Off: every remote token revoked, and the key forgotten.
    sb.ok(&["reach", "off"]);
    let out = reach_on_openai(&sb, "");
    assert!(!out.status.success(), "the key was forgotten with reach off");
}
