//! Reach from the web: the official Python MCP SDK's OAuth client through the tunnel Sluice
//! runs (a TLS edge standing in for cloudflared, which needs the internet), against a running
//! `sluice serve`, with the person approving in the CLI. The script asserts each step and attack
//! (see tests/clients/reach_client.py); this side checks the tunnel's life and what the run left
//! behind.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::*;

/// `sluice reach on` with the test edge as the tunnel Sluice runs, on tunnel port `backend`.
pub(crate) fn reach_on_with_edge(
    sb: &Sandbox,
    backend: u16,
    certs: &Path,
    extra: &[&str],
) -> String {
    let command = format!(
        "{} {} --backend {{port}} --cert-dir {}{}",
        python(),
        client_script("tunnel_edge.py").display(),
        certs.display(),
        extra.iter().map(|a| format!(" {a}")).collect::<String>()
    );
    let port = backend.to_string();
    let args = ["reach", "on", "--tunnel-command", &command, "--port", &port, "--project", "demo"];
    sb.ok(&[&args[..], &["--redirect", "http://localhost:33418/callback"]].concat())
}

/// Waits until `sluice reach status` satisfies `ready`; returns it.
pub(crate) fn status_until(sb: &Sandbox, what: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = sb.ok(&["reach", "status"]);
        if ready(&status) {
            return status;
        }
        assert!(Instant::now() < deadline, "{what}: {status}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether a status shows the tunnel running and its address learned.
pub(crate) fn announced(status: &str) -> bool {
    status.contains("on: https://") && status.contains("running (pid ")
}

/// The public address and the tunnel's pid in a status.
pub(crate) fn address_and_pid(status: &str) -> (String, u32) {
    let url = status.split("on: ").nth(1).and_then(|r| r.split("/mcp").next()).unwrap();
    let pid = status.split("(pid ").nth(1).and_then(|r| r.split(')').next()).unwrap();
    (url.to_owned(), pid.parse().unwrap())
}

fn alive(pid: u32) -> bool {
    // A zombie is not alive: it is reaped by its parent, or by init once that parent is gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| !r.trim_start().starts_with('Z')))
}

fn gone_within(pid: u32, secs: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

#[test]
fn a_hosted_assistant_connects_through_a_tunnel_with_oauth_and_every_attack_fails() {
    let sb = Sandbox::new();
    // Read-write, commands in `any` mode, for local tokens; reach exposes it read-only.
    sb.add_project_with(&["--access", "read-write", "--exec", "any"]);
    let local = sb.token("local", &[]);
    let backend = free_port();
    let certs = sb.root().join("edge-certs");
    let on = reach_on_with_edge(&sb, backend, &certs, &[]);
    assert!(on.contains("once it starts") && on.contains("only read"), "{on}");
    assert!(sb.ok(&["reach", "status"]).contains("waiting for the tunnel's address"));
    let server = sb.serve();
    let status = status_until(&sb, "the tunnel announces its address", announced);
    let (url, pid) = address_and_pid(&status);
    assert!(url.starts_with("https://localhost:"), "{status}");
    // A job the local client started (and the person approved): the hosted assistant, read-only,
    // must not be able to end it.
    let job = serde_json::json!({"project": "demo", "program": "sleep", "args": ["600"]});
    let job = ok(&approved(&sb, server.port, &local, "start_job", job, &[]));
    let job_id = job["job_id"].as_str().unwrap().to_owned();
    let out = python_client("reach_client.py")
        .args(["--base", &url, "--ca", &certs.join("edge.pem").to_string_lossy()])
        .args(["--local-url", &server.url(), "--sluice", BIN])
        .env("SLUICE_TOKEN", &local)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_JOB_ID", &job_id)
        .output()
        .expect("run the Python OAuth client");
    passed(&out);
    // The script turned reach off: the tunnel Sluice ran is gone with it.
    assert!(gone_within(pid, 10), "the tunnel process {pid} outlived reach");
    // The job the hosted assistant tried to end runs on; its own client ends it.
    let job = serde_json::json!({"job_id": job_id});
    assert_eq!(ok(&call(server.port, &local, "job_status", job.clone()))["state"], "running");
    assert_eq!(ok(&call(server.port, &local, "cancel_job", job))["state"], "cancelled");
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
    let host = url.trim_start_matches("https://");
    assert!(audit.contains(&format!("remote, through {host} (tunnel: command)")), "{audit}");
    for secret in ["slr_", "slf_", "slco_"] {
        assert!(!audit.contains(secret), "no {secret}… in the audit log");
    }
    assert!(sb.ok(&["audit", "verify"]).contains("intact"));
}

#[test]
fn sluice_restarts_the_tunnel_it_runs_learns_its_new_address_and_stops_its_whole_group() {
    let sb = Sandbox::new();
    sb.add_project();
    let backend = free_port();
    let certs = sb.root().join("edge-certs");
    reach_on_with_edge(&sb, backend, &certs, &["--child"]);
    let server = sb.serve();
    let status = status_until(&sb, "the tunnel runs", announced);
    let (first, pid) = address_and_pid(&status);
    let ca = certs.join("edge.pem");
    // The authorization server's metadata through the tunnel names `base` as its issuer (the
    // listener follows a new address within a moment: until then it says to try again).
    let serves = |base: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = Command::new("curl")
                .args(["-sS", "--max-time", "10", "--cacert", &ca.to_string_lossy()])
                .arg(format!("{base}/.well-known/oauth-authorization-server"))
                .output()
                .unwrap();
            let body = String::from_utf8_lossy(&out.stdout).into_owned();
            if body.contains(&format!("\"issuer\":\"{base}\"")) {
                return true;
            }
            assert!(body.contains("try again") || body.is_empty(), "{base}: {body}");
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    assert!(serves(&first), "{first}");

    // The tunnel dies: what it started goes too, Sluice starts it again, and its new address
    // becomes the public one.
    let helper = helper_of(pid);
    assert!(Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap().success());
    assert!(gone_within(helper, 10), "the dead tunnel's helper was left running");
    let status = status_until(&sb, "the tunnel is started again", |s| {
        s.contains("1 restart(s)") && announced(s) && !s.contains(&format!("on: {first}/"))
    });
    let (second, pid2) = address_and_pid(&status);
    assert_ne!(pid, pid2);
    assert!(serves(&second), "{status}");
    let audit = sb.ok(&["audit", "list", "--json", "--limit", "100"]);
    assert!(audit.matches("reach.address").count() >= 2, "{audit}");

    // Sluice stops: the tunnel and what it started in its group go too.
    let child = helper_of(pid2);
    server.stop();
    assert!(gone_within(pid2, 10), "the tunnel outlived `sluice serve`");
    assert!(gone_within(child, 10), "the tunnel's helper outlived `sluice serve`");
}

#[test]
fn a_tunnel_program_inside_a_project_or_a_relative_one_is_refused() {
    let sb = Sandbox::new();
    sb.add_project();
    let planted = sb.project.join("cloudflared");
    std::fs::write(&planted, "#!/bin/sh\necho pwned\n").unwrap();
    let exec = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&planted, exec).unwrap();
    for command in [planted.to_string_lossy().into_owned(), "./cloudflared".to_owned()] {
        let err = sb.err(&["reach", "on", "--tunnel-command", &command, "--project", "demo"]);
        assert!(err.contains("tunnel program"), "{command}: {err}");
    }
    // A project folder on PATH is not trusted either.
    let path = format!("{}:{}", sb.project.display(), std::env::var("PATH").unwrap());
    let out = sb
        .cmd()
        .env("PATH", &path)
        .args(["reach", "on", "--tunnel", "cloudflared", "--project", "demo"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("tunnel program"), "{err}");
    assert!(sb.ok(&["reach", "status"]).contains("off"), "nothing was turned on");
    // A quick tunnel chooses its own address; a named one needs the user's.
    let err = sb.err(&[
        "reach",
        "on",
        "--tunnel",
        "cloudflared",
        "--url",
        "https://a.example",
        "--project",
        "demo",
    ]);
    assert!(err.contains("chosen by Cloudflare"), "{err}");
    let err = sb.err(&["reach", "on", "--tunnel-name", "home", "--project", "demo"]);
    assert!(err.contains("public hostname"), "{err}");
    // The engine splits the command, as it does the window's: an open quote is said plainly.
    let err = sb.err(&["reach", "on", "--tunnel-command", "edge 'open", "--project", "demo"]);
    assert!(err.contains("--tunnel-command: unbalanced quotes"), "{err}");
    assert!(sb.ok(&["reach", "status"]).contains("off"), "nothing was turned on");
}

/// The helper process a test edge started with `--child`.
fn helper_of(edge: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let children = std::fs::read_to_string(format!("/proc/{edge}/task/{edge}/children"));
        if let Some(pid) =
            children.unwrap_or_default().split_whitespace().find_map(|c| c.parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the edge {edge} started no helper");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The test edges running with certificates in `certs`.
fn edges(certs: &Path) -> Vec<u32> {
    let needle = certs.to_string_lossy().into_owned();
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid: &u32| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                c.contains("tunnel_edge.py") && c.contains(&needle)
            }) && alive(*pid)
        })
        .collect();
    pids.sort();
    pids
}

#[test]
fn the_next_engine_stops_the_tunnel_a_killed_engine_left() {
    let sb = Sandbox::new();
    sb.add_project();
    let certs = sb.root().join("edge-certs");
    reach_on_with_edge(&sb, free_port(), &certs, &[]);
    let first = sb.serve();
    let (_, pid) = address_and_pid(&status_until(&sb, "the tunnel runs", announced));
    // Killed before it can stop its tunnel (the one engine per data folder is
    // `a_second_engine_cannot_serve_the_same_data_folder`; the tray takes the same lock).
    drop(first);
    assert!(alive(pid), "SIGKILL leaves the tunnel running");
    assert_eq!(edges(&certs), [pid]);
    let second = sb.serve();
    let status = status_until(&sb, "the next engine runs the tunnel", |s| {
        announced(s) && !s.contains(&format!("(pid {pid})"))
    });
    assert!(gone_within(pid, 10), "the tunnel a killed engine left is stopped");
    let (_, pid2) = address_and_pid(&status);
    assert_eq!(edges(&certs), [pid2]);
    second.stop();
    assert!(gone_within(pid2, 10));
    assert!(edges(&certs).is_empty());
}

#[test]
fn pc02_reach_changed_in_the_database_is_named_by_doctor_and_never_accepted() {
    use crate::resilience::{findings, tamper};
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write"]);
    sb.ok(&["reach", "on", "--url", "https://sluice.example.com", "--project", "demo"]);
    assert!(sb.ok(&["reach", "status"]).contains("writes: no"));
    assert_eq!(findings(&sb), "");
    // Writes turned on behind Sluice's back: reach reads as off, and doctor says why.
    tamper(
        &sb,
        r#"UPDATE kv SET value = replace(value, '"write":false', '"write":true') WHERE key = 'reach'"#,
    );
    let found = findings(&sb);
    assert!(found.contains("[reach-seal]") && found.contains("reach stays off"), "{found}");
    assert!(sb.ok(&["reach", "status"]).starts_with("Reach from the web is off"));
    // Accepting the database as it is never turns reach on.
    let accepted = sb.ok(&["doctor", "--reseal"]);
    assert!(!accepted.contains("reach-seal"), "{accepted}");
    assert!(findings(&sb).contains("[reach-seal]"));
    assert!(sb.ok(&["reach", "status"]).starts_with("Reach from the web is off"));
    // Turning it off removes the forged setting.
    sb.ok(&["reach", "off"]);
    assert_eq!(findings(&sb), "");
}
