//! `run_tests` / `run_build` on a real cargo crate, the per-project network setting, jobs
//! remembered across a restart of `sluice serve`, and a job's blindness to Sluice's own data
//! folder — all over raw HTTP against the real binary, the human side played through the CLI.

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// Turns the sandbox's project into a tiny cargo crate with two tests (no dependencies, so it
/// builds without network).
fn cargo_crate(sb: &Sandbox) {
    std::fs::write(
        sb.project.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        sb.project.join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n\n#[cfg(test)]\nmod tests {\n    \
         #[test]\n    fn adds() {\n        assert_eq!(2 + 2, 4);\n    }\n\n    #[test]\n    \
         fn other() {}\n}\n",
    )
    .unwrap();
}

fn project_mode() -> (Sandbox, String) {
    executable("project")
}

#[test]
fn run_build_and_run_tests_detect_cargo_and_ask_like_run_command() {
    let (sb, token) = project_mode();
    cargo_crate(&sb);
    std::fs::create_dir_all(sb.project.join("tools")).unwrap();
    std::fs::write(sb.project.join("tools/Makefile"), "test:\n\t@echo made-the-tests\n").unwrap();
    std::fs::create_dir_all(sb.project.join("docs")).unwrap();
    let server = sb.serve();
    let port = server.port;

    // The approval shows the detected command and the network state of the project.
    let build = call_async(port, &token, "run_build", json!({"project": "demo"}));
    let a = wait_pending(&sb);
    let summary = a["summary"].as_str().unwrap();
    assert!(summary.contains("cargo build"), "{summary}");
    assert!(
        summary.contains("network only the package registries"),
        "project mode defaults to the registries: {summary}"
    );
    sb.ok(&["approvals", "approve", a["id"].as_str().unwrap()]);
    let out = ok(&build.join().unwrap());
    assert_eq!(out["toolchain"], "cargo", "{out}");
    assert_eq!(out["detected_from"], "Cargo.toml");
    assert_eq!(out["path"], "");
    assert!(out["command"].as_str().unwrap().ends_with("cargo build"), "{out}");
    assert_eq!(out["state"], "succeeded", "{out}");
    assert!(sb.project.join("target/debug/demo").exists());

    let args = json!({"project": "demo", "filter": "adds", "args": ["--", "--test-threads=1"]});
    let out = ok(&approved(&sb, port, &token, "run_tests", args, &[]));
    assert!(out["command"].as_str().unwrap().ends_with("cargo test adds -- --test-threads=1"));
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.contains("test tests::adds ... ok"), "{out}");
    assert!(stdout.contains("1 passed") && stdout.contains("1 filtered out"), "{out}");
    assert_eq!((out["state"].as_str(), out["exit_code"].as_i64()), (Some("succeeded"), Some(0)));

    // A subfolder is detected on its own (a Makefile target here).
    let out = ok(&approved(
        &sb,
        port,
        &token,
        "run_tests",
        json!({"project": "demo", "path": "tools"}),
        &[],
    ));
    assert_eq!((out["toolchain"].as_str(), out["path"].as_str()), (Some("make"), Some("tools")));
    assert_eq!(out["stdout"], "made-the-tests\n", "{out}");

    // Refusals change nothing and never ask: nothing to detect, option injection, escapes.
    let msg = refused(
        &call(port, &token, "run_tests", json!({"project": "demo", "path": "docs"})),
        "not_found",
    );
    assert!(msg.contains("found no way to test \"docs\""), "{msg}");
    for (args, code) in [
        (json!({"args": ["--config", "build.rustc-wrapper='/tmp/x'"]}), "forbidden"),
        (json!({"args": ["-Zunstable-options"]}), "forbidden"),
        (json!({"filter": "--nocapture"}), "invalid_argument"),
        (json!({"path": "../"}), "invalid_argument"),
        (json!({"toolchain": "sh"}), "invalid_argument"),
        (json!({"toolchain": "go"}), "not_found"),
    ] {
        let mut call_args = args.clone();
        call_args["project"] = json!("demo");
        refused(&call(port, &token, "run_tests", call_args), code);
    }
    let msg = refused(
        &call(port, &token, "run_build", json!({"project": "demo", "filter": "adds"})),
        "invalid_argument",
    );
    assert!(msg.contains("tests only"), "{msg}");
    assert!(pending(&sb).is_empty());

    // Execution off: refused before anything is detected or asked.
    sb.ok(&["project", "set", "demo", "--exec", "off"]);
    let msg = refused(&call(port, &token, "run_tests", json!({"project": "demo"})), "forbidden");
    assert!(msg.contains("execution is off"), "{msg}");
}

/// A job that connects to a loopback port and says how it went.
fn connect_job(port: u16) -> Value {
    let script = format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo connected");
    json!({"project": "demo", "program": "bash", "args": ["-c", script]})
}

#[test]
fn the_project_network_setting_blocks_or_allows_outbound_connections() {
    let (sb, token) = executable("any");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let target = listener.local_addr().unwrap().port();
    let list = sb.ok(&["project", "list"]);
    assert!(list.contains("network:   off (default for any mode)"), "{list}");
    let server = sb.serve();

    // Off: in a network namespace of its own the job finds nothing listening on its loopback
    // (without namespaces, Landlock refuses the connect): either way nothing reaches the host.
    let refusal = if jobs_in_namespaces(&sb) { "Connection refused" } else { "Permission denied" };
    listener.set_nonblocking(true).unwrap();
    let out = ok(&approved(&sb, server.port, &token, "run_command", connect_job(target), &[]));
    assert!(!out["stdout"].as_str().unwrap().contains("connected"), "{out}");
    assert!(out["stderr"].as_str().unwrap().contains(refusal), "{out}");
    assert!(listener.accept().is_err(), "the host's listener was reached");
    listener.set_nonblocking(false).unwrap();

    sb.ok(&["project", "set", "demo", "--network", "on"]);
    let listed: Value = serde_json::from_str(&sb.ok(&["project", "list", "--json"])).unwrap();
    assert_eq!(
        (listed[0]["network"].as_str(), listed[0]["network_setting"].as_str()),
        (Some("on"), Some("on"))
    );
    let doctor = sb.ok(&["doctor"]);
    assert!(doctor.contains("network on (set by the user)"), "{doctor}");
    assert!(doctor.contains("confinement:"), "{doctor}");

    let call = call_async(server.port, &token, "run_command", connect_job(target));
    let a = wait_pending(&sb);
    assert!(a["summary"].as_str().unwrap().contains("network on"), "{a}");
    sb.ok(&["approvals", "approve", a["id"].as_str().unwrap()]);
    let out = ok(&call.join().unwrap());
    assert!(out["stdout"].as_str().unwrap().contains("connected"), "{out}");
    let (mut conn, _) = listener.accept().unwrap();
    let mut got = String::new();
    conn.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hi\n");

    // Registries: only HTTPS to the listed hosts through the proxy; the host's listener is
    // as far out of reach as with the network off.
    if jobs_in_namespaces(&sb) {
        let shown = sb.ok(&["project", "set", "demo", "--network", "registries"]);
        assert!(shown.contains("network:   registries (set by the user)"), "{shown}");
        listener.set_nonblocking(true).unwrap();
        let out = ok(&approved(&sb, server.port, &token, "run_command", connect_job(target), &[]));
        assert!(out["stderr"].as_str().unwrap().contains("Connection refused"), "{out}");
        assert!(listener.accept().is_err(), "the host's listener was reached");
        listener.set_nonblocking(false).unwrap();
    }

    // Back to the default: off again for `any` mode.
    let shown = sb.ok(&["project", "set", "demo", "--network", "default"]);
    assert!(shown.contains("network:   off (default for any mode)"), "{shown}");
    listener.set_nonblocking(true).unwrap();
    let out = ok(&approved(&sb, server.port, &token, "run_command", connect_job(target), &[]));
    assert!(out["stderr"].as_str().unwrap().contains(refusal), "{out}");
    assert!(listener.accept().is_err(), "the host's listener was reached");
    assert!(sb.err(&["project", "set", "demo", "--network", "maybe"]).contains("registries"));
}

/// `sluice registries`: the default list with what each host serves, an added host and an
/// added subdomain pattern, a refused entry that changes nothing, removal and reset.
#[test]
fn the_registries_list_is_shown_and_edited_from_the_cli() {
    let sb = Sandbox::new();
    let list = sb.ok(&["registries", "list"]);
    assert!(list.contains("pypi.org") && list.contains("Python packages"), "{list}");
    let added = sb.ok(&["registries", "add", "pypi.corp.example", "*.npm.corp.example"]);
    assert!(added.contains("pypi.corp.example") && added.contains("*.npm.corp.example"), "{added}");
    let json: Vec<String> =
        serde_json::from_str(&sb.ok(&["registries", "list", "--json"])).unwrap();
    assert!(json.contains(&"pypi.corp.example".to_owned()), "{json:?}");
    for bad in ["10.0.0.1", "localhost", "pypi.org:8443", "https://x.example", "*.*.example"] {
        let err = sb.err(&["registries", "add", bad]);
        assert!(err.contains("is not a host name"), "{bad}: {err}");
    }
    let unchanged: Vec<String> =
        serde_json::from_str(&sb.ok(&["registries", "list", "--json"])).unwrap();
    assert_eq!(unchanged, json, "a refused entry changed the list");
    assert!(sb.err(&["registries", "remove", "nowhere.example"]).contains("not on the list"));
    let removed = sb.ok(&["registries", "remove", "pypi.org"]);
    assert!(!removed.contains("pypi.org ") && removed.contains("pypi.corp.example"), "{removed}");
    let reset = sb.ok(&["registries", "reset"]);
    assert!(reset.contains("pypi.org") && !reset.contains("corp.example"), "{reset}");
    assert!(sb.ok(&["doctor"]).contains("registries:"));
}

#[test]
fn a_job_cannot_read_sluices_data_folder() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    let db = sb.data.join("sluice.db");
    assert!(db.exists());
    let script = format!(
        "cat '{}' > /dev/null && echo read-db; ls '{}' || echo no-listing; \
         head -c 4 /usr/bin/env > /dev/null && echo usr-ok",
        db.display(),
        sb.data.display()
    );
    let args = json!({"project": "demo", "program": "bash", "args": ["-c", script]});
    let out = ok(&approved(&sb, server.port, &token, "run_command", args, &[]));
    let stdout = out["stdout"].as_str().unwrap();
    assert!(!stdout.contains("read-db"), "{out}");
    assert!(stdout.contains("no-listing") && stdout.contains("usr-ok"), "{out}");
    // In namespaces the folder is not there at all; with Landlock alone, access is refused.
    let refusal =
        if jobs_in_namespaces(&sb) { "No such file or directory" } else { "Permission denied" };
    assert!(out["stderr"].as_str().unwrap().contains(refusal), "{out}");
}

/// Whether `sluice doctor` says jobs run in namespaces on this machine.
fn jobs_in_namespaces(sb: &Sandbox) -> bool {
    sb.ok(&["doctor"]).lines().any(|l| l.starts_with("confinement:   namespaces:"))
}

fn job_state(port: u16, token: &str, id: &str) -> String {
    ok(&call(port, token, "job_status", json!({"job_id": id})))["state"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Waits until the store (`sluice jobs --json`) shows `id` in `state`.
fn wait_stored(sb: &Sandbox, id: &str, state: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let jobs: Value = serde_json::from_str(&sb.ok(&["jobs", "--json"])).unwrap();
        if jobs.as_array().unwrap().iter().any(|j| j["id"] == id && j["state"] == state) {
            return;
        }
        assert!(Instant::now() < deadline, "{id} never stored as {state}: {jobs}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn jobs_are_remembered_across_a_restart_and_unfinished_ones_are_lost() {
    let (sb, token) = executable("any");
    let mut server = sb.serve();
    let echo = json!({"project": "demo", "program": "echo", "args": ["persisted"]});
    let done = ok(&approved(&sb, server.port, &token, "start_job", echo, &[]));
    let done = done["job_id"].as_str().unwrap().to_owned();
    let sleeper = json!({"project": "demo", "program": "sleep", "args": ["3600.5"]});
    let running = ok(&approved(&sb, server.port, &token, "start_job", sleeper, &[]));
    let running = running["job_id"].as_str().unwrap().to_owned();
    wait_stored(&sb, &done, "succeeded");
    wait_stored(&sb, &running, "running");
    let page = ok(&call(server.port, &token, "job_logs", json!({"job_id": done})));
    assert_eq!(page["text"], "persisted\n");

    // A crash: the engine and its jobs die at once.
    drop(server);
    server = sb.serve();
    assert_eq!(job_state(server.port, &token, &done), "succeeded");
    let lost = ok(&call(server.port, &token, "job_status", json!({"job_id": running})));
    assert_eq!(lost["state"], "lost", "{lost}");
    assert!(lost["error"].as_str().unwrap().contains("Sluice stopped"), "{lost}");
    let listed = ok(&call(server.port, &token, "list_jobs", json!({"project": "demo"})));
    let ids: Vec<&str> =
        listed["jobs"].as_array().unwrap().iter().map(|j| j["job_id"].as_str().unwrap()).collect();
    assert_eq!(ids, [done.as_str(), running.as_str()], "{listed}");
    let msg = refused(&call(server.port, &token, "job_logs", json!({"job_id": done})), "not_found");
    assert!(msg.contains("no longer kept"), "{msg}");
    // Cancelling a remembered job changes nothing and says how it ended.
    let cancelled = ok(&call(server.port, &token, "cancel_job", json!({"job_id": running})));
    assert_eq!(cancelled["state"], "lost");

    // Scoped like live jobs.
    let other = sb.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    sb.ok(&["project", "add", other.to_str().unwrap(), "--name", "other"]);
    let scoped = sb.token("scoped", &["--projects", "other"]);
    refused(&call(server.port, &scoped, "job_status", json!({"job_id": done})), "not_found");
    assert!(
        ok(&call(server.port, &scoped, "list_jobs", json!({})))["jobs"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    let history = sb.ok(&["jobs", "--project", "demo"]);
    assert!(history.contains(&format!("{done}  [succeeded (exit 0)]  demo")), "{history}");
    assert!(history.contains(&format!("{running}  [lost]  demo")), "{history}");
}

/// A "safe" inspection whose program the project picks: a `rust-toolchain.toml` naming a
/// toolchain inside the project makes rustup's `cargo` run the project's own program. In `safe`
/// mode `cargo --version` runs unasked until the project has such a file — in the command's
/// folder or above it — and then asks, saying why; denied, nothing of the project ran. The same
/// for pyenv's shims and `.python-version`, where `python3` is one.
#[test]
#[cfg(unix)]
fn an_inspection_whose_program_the_project_picks_asks_first() {
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;
    let (sb, token) = executable("safe");
    let server = sb.serve();
    let version = |cwd: &str| json!({"project": "demo", "program": "cargo", "args": ["--version"], "cwd": cwd});
    std::fs::create_dir_all(sb.project.join("sub")).unwrap();
    let out = ok(&call(server.port, &token, "run_command", version("sub")));
    assert!(out["stdout"].as_str().unwrap().starts_with("cargo "), "{out}");
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap();
    if !cargo_home.join("bin/rustup").is_file() {
        return; // cargo is not rustup's proxy here: nothing picks it
    }
    let evil = sb.project.join("evil/bin");
    std::fs::create_dir_all(&evil).unwrap();
    std::fs::create_dir_all(sb.project.join("evil/lib")).unwrap();
    let marker = sb.project.join("ran");
    std::fs::write(evil.join("cargo"), format!("#!/bin/sh\necho PWNED > '{}'\n", marker.display()))
        .unwrap();
    std::fs::set_permissions(evil.join("cargo"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        sb.project.join("rust-toolchain.toml"),
        format!("[toolchain]\npath = \"{}\"\n", sb.project.join("evil").display()),
    )
    .unwrap();
    let call = call_async(server.port, &token, "run_command", version("sub"));
    let a = wait_pending(&sb);
    let summary = a["summary"].as_str().unwrap();
    assert!(summary.contains("rust-toolchain.toml") && summary.contains("rustup"), "{summary}");
    sb.ok(&["approvals", "deny", a["id"].as_str().unwrap()]);
    let v = call.join().unwrap();
    let (out, err) = result(&v);
    assert!(err, "a denied inspection ran: {out}");
    assert!(!marker.exists(), "the project's program ran");
    std::fs::remove_file(sb.project.join("rust-toolchain.toml")).unwrap();

    if on_path("python3").is_some_and(|p| p.to_string_lossy().contains("/.pyenv/shims/")) {
        std::fs::write(sb.project.join(".python-version"), "system\n").unwrap();
        let args = json!({"project": "demo", "program": "python3", "args": ["--version"]});
        let call = call_async(server.port, &token, "run_command", args);
        let a = wait_pending(&sb);
        assert!(a["summary"].as_str().unwrap().contains(".python-version"), "{a}");
        sb.ok(&["approvals", "deny", a["id"].as_str().unwrap()]);
        assert!(result(&call.join().unwrap()).1);
    }
}

/// Every version manager and self-configuring tool Sluice knows, attacked alike through MCP:
/// its shim (or the tool itself) first on the engine's PATH, the project file that makes it
/// pick what runs, and a `safe`-mode inspection of it, which must then ask — denied, the
/// program never ran. (rustup is the test above, which needs the real rustup.)
#[test]
#[cfg(unix)]
fn every_version_manager_pin_makes_an_inspection_ask() {
    use std::os::unix::fs::PermissionsExt;
    let volta = r#"{"volta": {"node": "20.0.0"}}"#;
    let corepack = r#"{"packageManager": "pnpm@9.0.0"}"#;
    // (folder on PATH, below a fake home; program; its inspection; pin file; pin content)
    let cases: &[(&str, &str, &[&str], &str, &str)] = &[
        (".pyenv/shims", "python3", &["--version"], ".python-version", "3.11\n"),
        (".nodenv/shims", "node", &["--version"], ".node-version", "20\n"),
        (".jenv/shims", "java", &["-version"], ".java-version", "17\n"),
        (".goenv/shims", "go", &["version"], ".go-version", "1.22\n"),
        (".asdf/shims", "node", &["-v"], ".tool-versions", "nodejs 20.0.0\n"),
        (".proto/shims", "node", &["--version"], ".prototools", "node = \"20\"\n"),
        (".volta/bin", "node", &["--version"], "package.json", volta),
        (".local/share/mise/shims", "python3", &["-V"], "mise.toml", "[tools]\npython = \"3\"\n"),
        (".local/share/mise/shims", "node", &["-v"], ".nvmrc", "20\n"),
        ("bin", "cargo", &["--version"], ".cargo/config.toml", "[build]\nrustc = \"evil\"\n"),
        ("bin", "yarn", &["--version"], ".yarnrc.yml", "yarnPath: evil.cjs\n"),
        ("bin", "pnpm", &["--version"], "package.json", corepack),
        ("bin", "dotnet", &["--version"], "global.json", r#"{"sdk": {"paths": ["evil"]}}"#),
    ];
    for (folder, program, args, pin, content) in cases {
        let (sb, token) = executable("safe");
        let home = sb.tmp.path().join("fakehome");
        let shims = home.join(folder);
        std::fs::create_dir_all(&shims).unwrap();
        let marker = sb.tmp.path().join("ran");
        let fake = shims.join(program);
        std::fs::write(&fake, format!("#!/bin/sh\necho 1.0\ntouch '{}'\n", marker.display()))
            .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("{}:/usr/bin:/bin", shims.display());
        let server = sb.serve_env(&[("PATH", &path)]);
        let pin_path = sb.project.join(pin);
        std::fs::create_dir_all(pin_path.parent().unwrap()).unwrap();
        std::fs::write(&pin_path, content).unwrap();
        let what = format!("{folder}/{program} with {pin}");
        let args = json!({"project": "demo", "program": program, "args": args});
        let call = call_async(server.port, &token, "run_command", args);
        let a = wait_pending(&sb);
        let summary = a["summary"].as_str().unwrap();
        assert!(summary.contains(pin), "{what}: the prompt names the pin: {summary}");
        sb.ok(&["approvals", "deny", a["id"].as_str().unwrap()]);
        let v = call.join().unwrap();
        assert!(result(&v).1, "{what}: a denied inspection ran: {v}");
        assert!(!marker.exists(), "{what}: the program ran");
    }
}

/// Where the engine's PATH finds a program (the engine the CLI tests start inherits this PATH).
#[cfg(unix)]
fn on_path(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}

#[test]
fn a_client_that_disconnects_after_approval_stops_the_command() {
    let (sb, token) = executable("any");
    let server = sb.serve();
    // The command would leave a mark after a pause; it must die before that.
    let args = json!({
        "project": "demo", "program": "sh",
        "args": ["-c", "echo started > started.txt; sleep 20; echo late > late.txt"],
        "timeout_seconds": 120,
    });
    let s = open_call(server.port, &token, &call_body("run_command", args));
    let approval = wait_pending(&sb);
    sb.ok(&["approvals", "approve", approval["id"].as_str().unwrap()]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !sb.project.join("started.txt").exists() {
        assert!(Instant::now() < deadline, "the approved command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The store hears of the job from a writer thread: wait until it says running.
    let job = loop {
        let jobs: Value = serde_json::from_str(&sb.ok(&["jobs", "--json"])).unwrap();
        if let Some(job) = jobs.as_array().unwrap().iter().find(|j| j["state"] == "running") {
            break job.clone();
        }
        assert!(Instant::now() < deadline, "the job was never stored as running: {jobs}");
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(s); // the client goes away: the spec says that is a cancellation
    wait_stored(&sb, job["id"].as_str().unwrap(), "cancelled");
    // The audit says the call ended because the client cancelled it.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let audit = sb.ok(&["audit", "list", "--json", "--limit", "100"]);
        let call = audit
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["action"] == "run_command");
        if let Some(call) = call {
            assert_eq!(call["outcome"], "error", "{call}");
            assert_eq!(call["error_code"], "cancelled", "{call}");
            break;
        }
        assert!(Instant::now() < deadline, "no audit record of the call: {audit}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!sb.project.join("late.txt").exists(), "the command ran on after the client left");
}
