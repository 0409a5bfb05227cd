//! Reach from the web, what a grant may do after the person changes their mind (issue 37): the
//! Python MCP SDK's OAuth client through the tunnel Sluice runs, against a running `sluice
//! serve`, with the person approving and changing reach in the CLI (see
//! tests/clients/reach_authority.py). This side sets the scene and checks what the run left in
//! the audit log and the token list.

use crate::harness::*;
use crate::reach::{address_and_pid, announced, status_until};

#[test]
fn narrowing_reach_narrows_old_grants_read_only_touches_nothing_and_strangers_lock_no_one_out() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write", "--exec", "any"]);
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "the other project\n").unwrap();
    let other = other.to_string_lossy().into_owned();
    sb.ok(&["project", "add", &other, "--name", "other", "--access", "read-write"]);
    let local = sb.token("local", &[]);
    let backend = free_port().to_string();
    let certs = sb.root().join("edge-certs");
    let command = format!(
        "{} {} --backend {{port}} --cert-dir {}",
        python(),
        client_script("tunnel_edge.py").display(),
        certs.display()
    );
    let reach_on: Vec<&str> = vec![
        "reach",
        "on",
        "--tunnel-command",
        &command,
        "--port",
        &backend,
        "--redirect",
        "http://localhost:33418/callback",
    ];
    sb.ok(&[&reach_on[..], &["--project", "demo", "--project", "other"]].concat());
    let server = sb.serve();
    let (url, _) = address_and_pid(&status_until(&sb, "the tunnel announces", announced));
    // A job the person's local client started (and approved); then the project runs only its
    // own toolchains, which is what a hosted assistant that may write could run there.
    let job = serde_json::json!({"project": "demo", "program": "sleep", "args": ["600"]});
    let job = ok(&approved(&sb, server.port, &local, "start_job", job, &[]));
    let job_id = job["job_id"].as_str().unwrap().to_owned();
    sb.ok(&["project", "set", "demo", "--exec", "project"]);

    let out = python_client("reach_authority.py")
        .args(["--base", &url, "--ca", &certs.join("edge.pem").to_string_lossy()])
        .args(["--sluice", BIN])
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_SECRET_STORE", "file")
        .env("SLUICE_JOB_ID", &job_id)
        .env("SLUICE_REACH_ON", serde_json::to_string(&reach_on).unwrap())
        .output()
        .expect("run the Python OAuth client");
    passed(&out);

    // Nothing remote ended the person's job; its own client can.
    let job = serde_json::json!({"job_id": job_id});
    assert_eq!(ok(&call(server.port, &local, "job_status", job.clone()))["state"], "running");
    assert_eq!(ok(&call(server.port, &local, "cancel_job", job))["state"], "cancelled");
    server.stop();

    // The narrowing is in the audit log, and the grants it narrowed say so in the token list:
    // the first grant sees one project, read-only, for good.
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "1000"]);
    assert!(audit.contains("reach.narrow"), "{audit}");
    assert!(audit.contains("narrowed for good: projects no longer exposed"), "{audit}");
    assert!(audit.contains("read-only now"), "{audit}");
    let tokens: serde_json::Value =
        serde_json::from_str(&sb.ok(&["token", "list", "--json"])).unwrap();
    let tokens = tokens.as_array().or(tokens["tokens"].as_array()).unwrap().clone();
    let narrowed = tokens
        .iter()
        .find(|t| t["label"].as_str().unwrap().contains("Narrowed"))
        .unwrap_or_else(|| panic!("{tokens:?}"));
    assert_eq!(narrowed["profile"], "review", "{narrowed}");
    // Registered names are claims, and the labels say so.
    assert!(narrowed["label"].as_str().unwrap().contains("(unverified name)"), "{narrowed}");
    for secret in ["slr_", "slf_", "slco_", "203.0.113.66", "198.51.100.7"] {
        assert!(!audit.contains(secret), "no {secret} in the audit log");
    }
}
