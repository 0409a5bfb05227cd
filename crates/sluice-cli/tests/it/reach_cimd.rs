//! Client ID metadata documents through the tunnel, with the fetch attacked. `sluice serve` runs
//! in a network and mount namespace of its own, where `client.sluice.test` resolves (through
//! its own /etc/hosts) to a routable address on the namespace's loopback device and the test CA
//! is the trust store (`SSL_CERT_FILE`, which the platform store honours). The script
//! (tests/clients/cimd_client.py) joins the namespace, serves the documents and a decoy on
//! 127.0.0.1:443, connects the Python SDK by its metadata URL, and tries each way of making
//! Sluice fetch from the local network or accept a document it should not.

use std::path::Path;
use std::process::Command;

use crate::harness::*;
use crate::reach::{address_and_pid, announced, reach_on_with_edge, status_until};

/// client.sluice.test's address: routable, so only the name decides where Sluice may fetch.
const ADDRESS: &str = "11.22.33.44";

/// Sets up the namespace `unshare` made, then becomes `sluice serve`.
const SETUP: &str = "ip link set lo up && ip addr add \"$CIMD_ADDRESS/32\" dev lo && \
                     mount --bind \"$CIMD_HOSTS\" /etc/hosts && exec \"$@\"";

/// `sluice serve --port PORT` in a network and mount namespace of its own, where `address` is
/// on the loopback device, `hosts` is /etc/hosts and `ca` the trust store.
pub(crate) fn serve_in_own_network(
    sb: &Sandbox,
    address: &str,
    hosts: &Path,
    ca: &Path,
    port: u16,
) -> Command {
    let mut cmd = Command::new("unshare");
    for (k, v) in sb.cmd().get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.args(["--net", "--mount", "--propagation", "private", "--", "sh", "-c", SETUP, "sh"])
        .args([BIN, "serve", "--port", &port.to_string()])
        .env("CIMD_ADDRESS", address)
        .env("CIMD_HOSTS", hosts)
        .env("SSL_CERT_FILE", ca);
    cmd
}

#[test]
fn a_client_named_by_its_metadata_document_connects_and_nothing_local_is_ever_fetched() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write"]);
    let certs = sb.root().join("cimd-certs");
    let made = Command::new(python())
        .arg(client_script("cimd_client.py"))
        .arg("certs")
        .arg(&certs)
        .status();
    assert!(made.unwrap().success(), "make the test CA");
    let hosts = sb.root().join("hosts");
    std::fs::write(
        &hosts,
        format!(
            "127.0.0.1 localhost\n::1 localhost\n{ADDRESS} client.sluice.test \
             wrong.sluice.test\n127.0.0.1 inside.sluice.test\n"
        ),
    )
    .unwrap();
    let edge = sb.root().join("edge-certs");
    reach_on_with_edge(&sb, free_port(), &edge, &[]);
    let port = free_port();
    let server = Server::spawn(
        serve_in_own_network(&sb, ADDRESS, &hosts, &certs.join("ca.pem"), port),
        port,
    );
    let (url, _) = address_and_pid(&status_until(&sb, "the tunnel's address", announced));

    let out = Command::new("nsenter")
        .args(["--target", &server.child.id().to_string(), "--net", "--mount", "--"])
        .arg(python())
        .arg(client_script("cimd_client.py"))
        .args(["--base", &url, "--ca", &edge.join("edge.pem").to_string_lossy()])
        .args(["--certs", &certs.to_string_lossy(), "--address", ADDRESS, "--sluice", BIN])
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_SECRET_STORE", "file")
        .env("SLUICE_CANARY", &sb.canary)
        .output()
        .expect("run the CIMD client in Sluice's namespace");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stdout.starts_with("OK "), "CIMD client:\n{stdout}\n{stderr}");
    server.stop();

    // The grant and the person's decision name the client by its document's host.
    let tokens = sb.ok(&["token", "list", "--json"]);
    assert!(tokens.contains("remote: CIMD <Test> (verified: client.sluice.test)"), "{tokens}");
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    assert!(audit.contains("reach.approve") && audit.contains("client.sluice.test"), "{audit}");
    // Each of its requests is marked remote, with the address, the tunnel and the client.
    let marked = format!("remote, through {}", url.trim_start_matches("https://"));
    assert!(audit.contains(&marked), "{marked}: {audit}");
    assert!(audit.contains("OAuth client https://client.sluice.test/good.json"), "{audit}");
}
