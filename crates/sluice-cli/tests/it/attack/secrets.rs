//! ES and OR: what a job and the read tools can reach of the user's and the engine's secrets
//! (HOME's keys, the engine's environment and process, host sockets, shielded files, the data
//! folder), and what output shows of a secret a job prints.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{BOTH, PYTHON, Rig, Via, as_user};
use crate::harness::{git, ok, result};

/// Runs `program args` in the project (asks in `any` mode: approved as the user would).
fn run(rig: &Rig, via: Via, program: &str, args: &[&str]) -> Value {
    let v = rig.approved(
        via,
        "run_command",
        json!({"project": "demo", "program": program,
        "args": args, "timeout_seconds": 60}),
    );
    ok(&v)
}

/// Reads one readable page of process `pid`'s memory (the first readable mapping its `maps`
/// lists): prints `MEM-READ` if it could, else `refused` and why.
const MEM_PROBE: &str = "import sys\n\
    pid=sys.argv[1]\n\
    try:\n\
    \x20 lo=[int(l.split('-')[0],16) for l in open('/proc/%s/maps'%pid) if l.split()[1][0]=='r'][0]\n\
    \x20 f=open('/proc/%s/mem'%pid,'rb'); f.seek(lo); print('MEM-READ', len(f.read(64)))\n\
    except Exception as e:\n\
    \x20 print('refused', type(e).__name__)\n";

#[test]
fn es01_a_jobs_environment_and_view_of_the_engine_hold_no_secret() {
    let rig = Rig::new("any");
    // A project file that would redirect a tool's endpoint if anything loaded it.
    std::fs::write(rig.project().join(".env.example"), "HTTP_PROXY=http://evil.example:1\n")
        .unwrap();
    for via in BOTH {
        let out = run(&rig, via, "env", &[]);
        let env = out["stdout"].as_str().unwrap();
        assert!(env.contains("HOME="), "{env}");
        for name in ["SLUICE_", "RT_CANARY", "HTTP_PROXY", "RUST_LOG"] {
            assert!(!env.contains(name), "{name} reached the job: {env}");
        }
        // HOME's keys and the data folder, by the paths the engine knows them by. Each is
        // readable outside Sluice by the user the job runs as (the probe can succeed).
        let home = rig.home.to_str().unwrap().to_owned();
        let data = rig.sb.data.to_str().unwrap().to_owned();
        for path in [
            format!("{home}/.ssh/id_rsa"),
            format!("{data}/install-secret"),
            format!("{data}/rt_canary.txt"),
            rig.sb.evil.join("x.txt").to_str().unwrap().to_owned(),
        ] {
            assert!(std::fs::read(&path).is_ok(), "{path} is not there to be read");
            let out = run(&rig, via, "cat", &[&path]);
            assert_ne!(out["exit_code"], 0, "{path} was readable from a job: {out}");
        }
    }
    rig.finish(&[]);
}

/// The engine's process holds nothing a job can read: its environment, mappings and memory.
/// Run as users run Sluice (as themselves, here `nobody`): a root engine's process is shut to a
/// job without capabilities whatever the sandbox does, a same-user one is not. Guards stand in
/// layers: the job's own process namespace, where the engine has no pid; the engine made
/// non-dumpable, which shuts all but its `cmdline` (no secret in it) to the same user; and,
/// without namespaces (as `nobody` on this machine), Landlock, which keeps a job from
/// inspecting a process outside its domain. The probes work: run as `nobody` outside Sluice
/// against a dumpable process of `nobody`, they read its environment, mappings and memory.
#[test]
fn es01_the_engines_process_is_out_of_a_jobs_sight() {
    let rig = Rig::unprivileged("any");
    let pid = rig.engine_pid().to_string();
    let outside = |program: &str, args: &[&str]| {
        let out = as_user(std::process::Command::new(program), true).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut other = as_user(std::process::Command::new("sleep"), true)
        .arg("120")
        .env("PROBE_CANARY", "probe-reached-it")
        .spawn()
        .unwrap();
    let other_pid = other.id().to_string();
    // Once `setpriv` has become `nobody` and run `sleep` (a bounded wait).
    let deadline = Instant::now() + Duration::from_secs(10);
    let environ = loop {
        let environ = outside("cat", &[&format!("/proc/{other_pid}/environ")]);
        if environ.contains("probe-reached-it") || Instant::now() > deadline {
            break environ;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let maps = outside("cat", &[&format!("/proc/{other_pid}/maps")]);
    let mem = outside(PYTHON, &["-c", MEM_PROBE, &other_pid]);
    let _ = other.kill();
    let _ = other.wait();
    assert!(environ.contains("probe-reached-it") && !maps.is_empty(), "{environ} {maps}");
    assert!(mem.starts_with("MEM-READ"), "the memory probe cannot read memory at all: {mem}");
    for via in BOTH {
        for file in ["environ", "maps"] {
            let out = run(&rig, via, "cat", &[&format!("/proc/{pid}/{file}")]);
            assert_ne!(out["exit_code"], 0, "{file} of the engine was readable: {out}");
        }
        let out = run(&rig, via, PYTHON, &["-c", MEM_PROBE, &pid]);
        let said = out["stdout"].as_str().unwrap();
        assert!(said.starts_with("refused"), "the engine's memory was readable: {out}");
    }
    rig.finish(&[]);
}

#[test]
fn es04_host_sockets_and_the_network_are_out_of_a_jobs_reach() {
    use std::os::linux::net::SocketAddrExt;
    let rig = Rig::new("any");
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let tcp_port = tcp.local_addr().unwrap().port().to_string();
    let name = format!("sluice-rt-{}", std::process::id());
    let abs = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let abstract_listener = std::os::unix::net::UnixListener::bind_addr(&abs).unwrap();
    abstract_listener.set_nonblocking(true).unwrap();
    // Where agents put theirs: a private folder in /tmp, outside the rig.
    let agent_dir = tempfile::tempdir().unwrap();
    let path_sock = agent_dir.path().join("agent.sock");
    let path_listener = std::os::unix::net::UnixListener::bind(&path_sock).unwrap();
    path_listener.set_nonblocking(true).unwrap();
    let probe = "import socket,sys\n\
        kind,addr=sys.argv[1],sys.argv[2]\n\
        try:\n\
        \x20 s=socket.socket(socket.AF_UNIX if kind!='tcp' else socket.AF_INET)\n\
        \x20 s.settimeout(3)\n\
        \x20 s.connect(('127.0.0.1',int(addr)) if kind=='tcp' else ('\\0'+addr if kind=='abstract' else addr))\n\
        \x20 print('CONNECTED')\n\
        except Exception as e:\n\
        \x20 print('refused',type(e).__name__)\n";
    let engine_port = rig.port.to_string();
    for via in BOTH {
        for (kind, addr) in [
            ("tcp", tcp_port.as_str()),
            ("tcp", engine_port.as_str()),
            ("abstract", name.as_str()),
            ("path", path_sock.to_str().unwrap()),
        ] {
            let out = run(&rig, via, PYTHON, &["-c", probe, kind, addr]);
            let said = out["stdout"].as_str().unwrap();
            assert!(said.starts_with("refused"), "{via:?} {kind} {addr}: {out}");
        }
        let out = run(&rig, via, PYTHON, &["-c", probe, "tcp", "53"]);
        assert!(out["stdout"].as_str().unwrap().starts_with("refused"), "{out}");
    }
    // Nothing arrived at any of the host's listeners.
    assert!(tcp.accept().is_err() && abstract_listener.accept().is_err());
    assert!(path_listener.accept().is_err());
    rig.finish(&[]);
}

#[test]
fn es02_shielded_files_stay_shut_through_every_tool_and_git_history() {
    let rig = Rig::new("off");
    let p = rig.project().to_path_buf();
    let secret = format!("ES02{}", rig.sb.canary);
    for rel in ["id_rsa", "server.pem", ".npmrc", ".git-credentials", ".aws/credentials", "a/.env"]
    {
        let path = p.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("token={secret}\n")).unwrap();
    }
    // Shielded code (named `id_rsa*`, `id_ed25519*`), which a syntax index would parse.
    let shielded_code = [
        ("id_rsa_loader.py", format!("def es02_hidden_fn():\n    return \"{secret}\"\n")),
        (
            "keys/id_ed25519_tool.rs",
            format!("fn es02_hidden_fn() -> &'static str {{ \"{secret}\" }}\n"),
        ),
    ];
    for (rel, text) in &shielded_code {
        std::fs::create_dir_all(p.join(rel).parent().unwrap()).unwrap();
        std::fs::write(p.join(rel), text).unwrap();
    }
    // A secret file committed in the project's history (a mistake users make).
    git(&p, &["add", "-f", ".npmrc", "server.pem"]);
    git(&p, &["commit", "-q", "-m", "oops"]);
    std::fs::write(p.join(".npmrc"), format!("token={secret}-changed\n")).unwrap();
    for via in BOTH {
        for rel in
            ["id_rsa", "server.pem", ".npmrc", ".git-credentials", ".aws/credentials", "a/.env"]
        {
            for tool in ["read_file", "read_media"] {
                let (code, _) = rig.denied(via, tool, json!({"project": "demo", "path": rel}));
                assert_eq!(code, "path_shielded", "{tool} {rel}");
            }
        }
        for (tool, args) in [
            (
                "search_text",
                json!({"project": "demo", "pattern": "token=", "include_hidden": true}),
            ),
            ("list_directory", json!({"project": "demo", "depth": 5, "include_hidden": true})),
            ("find_files", json!({"project": "demo", "include_hidden": true})),
            ("git_status", json!({"project": "demo"})),
            ("git_diff", json!({"project": "demo"})),
            ("git_show", json!({"project": "demo", "rev": "HEAD"})),
            ("git_log", json!({"project": "demo", "include_files": true})),
            ("code_symbols", json!({"project": "demo", "query": "es02_hidden_fn"})),
            ("code_definition", json!({"project": "demo", "name": "es02_hidden_fn"})),
            ("code_references", json!({"project": "demo", "name": "es02_hidden_fn"})),
        ] {
            let v = rig.call(via, tool, args);
            assert!(!v.to_string().contains(&secret), "{via:?} {tool} showed a shielded file: {v}");
        }
        for (rel, _) in &shielded_code {
            let (code, _) =
                rig.denied(via, "code_outline", json!({"project": "demo", "path": rel}));
            assert_eq!(code, "path_shielded", "code_outline {rel}");
        }
        let found = rig.call(via, "code_symbols", json!({"project": "demo", "query": "es02"}));
        assert!(!found.to_string().contains("es02_hidden_fn"), "{via:?} indexed it: {found}");
        for rev in ["HEAD:.npmrc", "HEAD:server.pem"] {
            let v = rig.call(via, "git_show", json!({"project": "demo", "rev": rev}));
            assert!(!v.to_string().contains(&secret), "{via:?} git_show {rev}: {v}");
        }
    }
    rig.finish(&[&secret]);
}

#[test]
fn es02_the_data_folder_cannot_become_a_project_or_be_reached_from_one() {
    let rig = Rig::new("off");
    let data = rig.sb.data.clone();
    let inside = data.join("backups");
    std::fs::create_dir_all(&inside).unwrap();
    for folder in [data.clone(), inside, data.join(".")] {
        let out = rig.cmd().arg("project").arg("add").arg(&folder).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{} was authorized: {err}", folder.display());
        assert!(err.contains("data folder"), "{err}");
    }
    // A project with a link to the data folder reaches nothing in it.
    std::os::unix::fs::symlink(&data, rig.project().join("state")).unwrap();
    for via in BOTH {
        for path in ["state/install-secret", "state/rt_canary.txt", "state/sluice.db", "state"] {
            rig.denied(via, "read_file", json!({"project": "demo", "path": path}));
            rig.denied(via, "list_directory", json!({"project": "demo", "path": path}));
        }
    }
    rig.finish(&[]);
}

#[test]
fn or01_a_secret_a_job_prints_is_redacted_raw_encoded_split_or_coloured() {
    let rig = Rig::new("any");
    let token = rig.token.clone();
    let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
    let b64 = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(&token)
    };
    let (head, tail) = token.split_at(23);
    for via in BOTH {
        for text in [
            token.clone(),
            format!("x{hex}y"),
            format!("value: {b64}"),
            format!("\x1b[31m{token}\x1b[0m"),
            "AKIAIOSFODNN7EXAMPLE".to_owned(),
            "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB".to_owned(),
        ] {
            let out = run(&rig, via, "printf", &["%s", &text]);
            let shown = out["stdout"].as_str().unwrap();
            assert!(shown.contains("[redacted:"), "{via:?}: {text:?} came out as {shown:?}");
            for secret in ["AKIAIOSFODNN7EXAMPLE", "ghp_0123456789abcdef"] {
                assert!(!shown.contains(secret), "{shown}");
            }
        }
        // Split across two writes of the job, a moment apart: two chunks of its output.
        let script = "printf %s \"$0\"; sleep 0.3; printf %s \"$1\"";
        let out = run(&rig, via, "sh", &["-c", script, head, tail]);
        assert!(out["stdout"].as_str().unwrap().contains("[redacted:"), "{out}");
        let v = rig.call(via, "list_jobs", json!({"project": "demo"}));
        assert!(!result(&v).1);
    }
    rig.finish(&[&hex, &b64]);
}
