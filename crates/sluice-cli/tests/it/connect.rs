//! `sluice connect` / `sluice disconnect` / `token create --client` on real temp config files,
//! with the connection check made against a real `sluice serve`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::*;

fn connect(sb: &Sandbox, server: &Server, args: &[&str]) -> std::process::Output {
    sb.cmd()
        .arg("connect")
        .args(args)
        .args(["--port", &server.port.to_string()])
        .output()
        .expect("run sluice connect")
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn assert_ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        stdout(out)
    );
    stdout(out)
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".bak-"))
        .collect()
}

fn token_count(sb: &Sandbox) -> usize {
    let list: serde_json::Value =
        serde_json::from_str(&sb.ok(&["token", "list", "--json"])).unwrap();
    list.as_array().unwrap().len()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn connect_cursor_keeps_other_servers_writes_a_backup_and_the_token_works() {
    let sb = Sandbox::new();
    sb.add_project();
    let server = sb.serve();
    let dir = sb.root().join("cursor");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    let before = "{\n  \"mcpServers\": {\n    \"github\": { \"command\": \"gh-mcp\" }\n  }\n}\n";
    std::fs::write(&config, before).unwrap();

    let out = connect(&sb, &server, &["cursor", "--config", config.to_str().unwrap(), "--yes"]);
    let text = assert_ok(&out);
    assert!(text.contains("+    \"sluice\": {"), "the change is shown: {text}");
    assert!(text.contains("Connection check: OK"), "{text}");
    assert!(text.contains("1 project(s) visible"), "{text}");

    let v = json(&config);
    assert_eq!(v["mcpServers"]["github"]["command"], "gh-mcp");
    let auth = v["mcpServers"]["sluice"]["headers"]["Authorization"].as_str().unwrap();
    let token = auth.strip_prefix("Bearer ").unwrap();
    assert_eq!(v["mcpServers"]["sluice"]["url"], server.url());
    // The token written into the file is a real one: a plain MCP call with it works.
    let r = call(server.port, token, "list_projects", serde_json::json!({}));
    assert!(r.get("result").is_some(), "{r}");
    let b = backups(&dir);
    assert_eq!(b.len(), 1);
    assert_eq!(std::fs::read_to_string(&b[0]).unwrap(), before);
    let list = sb.ok(&["token", "list"]);
    assert!(list.contains("Cursor (sluice connect)"), "{list}");

    // Disconnect removes only Sluice's entry, with another backup.
    let out = sb
        .cmd()
        .args(["disconnect", "cursor", "--config", config.to_str().unwrap(), "--yes"])
        .output()
        .unwrap();
    let text = assert_ok(&out);
    assert!(text.contains("-    \"sluice\": {"), "{text}");
    let v = json(&config);
    assert!(v["mcpServers"].get("sluice").is_none());
    assert_eq!(v["mcpServers"]["github"]["command"], "gh-mcp");
    assert_eq!(backups(&dir).len(), 2);
}

#[test]
fn connect_vscode_keeps_comments_and_leaves_the_token_out_of_the_file() {
    let sb = Sandbox::new();
    sb.add_project();
    let server = sb.serve();
    let config = sb.root().join("mcp.json");
    let before = "// user MCP servers\n{\n  \"servers\": {\n    // docs server\n    \"docs\": { \"type\": \"http\", \"url\": \"https://example.com/mcp\" },\n  },\n}\n";
    std::fs::write(&config, before).unwrap();
    let out = connect(&sb, &server, &["vscode", "--config", config.to_str().unwrap(), "--yes"]);
    let text = assert_ok(&out);
    let after = std::fs::read_to_string(&config).unwrap();
    assert!(after.contains("// user MCP servers") && after.contains("// docs server"), "{after}");
    assert!(after.contains("${input:sluice-token}"), "{after}");
    assert!(!after.contains("slc_"), "no token in VS Code's file: {after}");
    // The token to paste is printed once, and it is the one the check used.
    let token = text.split_whitespace().find(|w| w.starts_with("slc_")).expect("token shown");
    let r = call(server.port, token, "list_projects", serde_json::json!({}));
    assert!(r.get("result").is_some());
    assert!(text.contains("Connection check: OK"), "{text}");
    assert_eq!(backups(&sb.root()).len(), 1);
}

#[test]
fn connect_claude_desktop_through_stdio_keeps_the_token_out_of_its_file() {
    let sb = Sandbox::new();
    sb.add_project();
    let server = sb.serve();
    // The file does not exist yet (Claude Desktop creates it only on "Edit Config").
    let config = sb.root().join("Claude").join("claude_desktop_config.json");
    let out =
        connect(&sb, &server, &["claude-desktop", "--config", config.to_str().unwrap(), "--yes"]);
    let text = assert_ok(&out);
    assert!(text.contains("through `sluice stdio`"), "{text}");
    assert!(text.contains("Connection check: OK"), "{text}");
    let raw = std::fs::read_to_string(&config).unwrap();
    assert!(!raw.contains("slc_"), "no token in Claude Desktop's file: {raw}");
    let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let entry = &v["mcpServers"]["sluice"];
    let command = entry["command"].as_str().unwrap();
    assert!(Path::new(command).is_absolute());
    let args: Vec<String> =
        entry["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_owned()).collect();
    assert_eq!(args[..3], ["stdio", "--connection", "claude-desktop"]);
    assert!(entry.get("env").is_none());
    // The token lives in the data folder's owner-only fallback (no keychain in this test).
    let stored = sb.data.join("connections").join("claude-desktop.token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&stored).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Run the command exactly as Claude Desktop would, with a minimal environment.
    let mut child = Command::new(command)
        .args(&args)
        .env_clear()
        .env("HOME", sb.root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, "{}", initialize_body()).unwrap();
        writeln!(stdin, "{}", call_body("list_projects", serde_json::json!({}))).unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let lines = String::from_utf8_lossy(&out.stdout).into_owned();
    let answer = lines
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("no answer: {lines}"));
    assert_eq!(answer["result"]["structuredContent"]["projects"][0]["name"], "demo", "{answer}");

    // Disconnecting forgets the stored token too.
    let out = sb
        .cmd()
        .args(["disconnect", "claude-desktop", "--config", config.to_str().unwrap(), "--yes"])
        .output()
        .unwrap();
    let text = assert_ok(&out);
    assert!(text.contains("Forgot the stored token"), "{text}");
    assert!(!stored.exists());
    drop(server);
}

#[test]
fn connect_codex_and_goose_edit_toml_and_yaml_in_place() {
    let sb = Sandbox::new();
    sb.add_project();
    let server = sb.serve();
    let codex = sb.root().join("config.toml");
    let before = "# my codex\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs\" # keep\n";
    std::fs::write(&codex, before).unwrap();
    // The HTTP form, asked for explicitly (the default is stdio, below).
    let out = connect(
        &sb,
        &server,
        &["codex", "--transport", "http", "--config", codex.to_str().unwrap(), "--yes"],
    );
    let text = assert_ok(&out);
    assert!(text.contains("export SLUICE_TOKEN=slc_"), "{text}");
    assert!(text.contains("Connection check: OK"), "{text}");
    let after = std::fs::read_to_string(&codex).unwrap();
    assert!(after.starts_with(before), "{after}");
    assert!(after.contains("bearer_token_env_var = \"SLUICE_TOKEN\""));
    assert!(!after.contains("slc_"));

    let goose = sb.root().join("config.yaml");
    let before = "# goose\nextensions:\n  developer:\n    enabled: true # builtin\n    type: builtin\nGOOSE_MODEL: gpt-4o\n";
    std::fs::write(&goose, before).unwrap();
    let out = connect(&sb, &server, &["goose", "--config", goose.to_str().unwrap(), "--yes"]);
    let text = assert_ok(&out);
    assert!(text.contains("Connection check: OK"), "{text}");
    let after = std::fs::read_to_string(&goose).unwrap();
    assert!(after.contains("enabled: true # builtin") && after.starts_with("# goose\n"));
    // A second, independent YAML parser (PyYAML) reads the result as Goose will.
    let py = Command::new(python())
        .args([
            "-c",
            "import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
            goose.to_str().unwrap(),
        ])
        .output()
        .expect("the test Python, with PyYAML");
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
    let v: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    assert_eq!(v["GOOSE_MODEL"], "gpt-4o");
    assert_eq!(v["extensions"]["developer"]["type"], "builtin");
    let ext = &v["extensions"]["sluice"];
    assert_eq!(ext["type"], "streamable_http");
    assert_eq!(ext["uri"], server.url());
    let token = ext["headers"]["Authorization"].as_str().unwrap().strip_prefix("Bearer ").unwrap();
    assert!(
        call(server.port, token, "list_projects", serde_json::json!({})).get("result").is_some()
    );
}

#[test]
fn unparseable_files_dry_runs_and_missing_confirmation_write_nothing() {
    let sb = Sandbox::new();
    sb.add_project();
    let server = sb.serve();
    let config = sb.root().join("broken.json");
    std::fs::write(&config, "{ \"mcpServers\": { ").unwrap();
    let out = connect(&sb, &server, &["cursor", "--config", config.to_str().unwrap(), "--yes"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be parsed") && err.contains("left untouched"), "{err}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "{ \"mcpServers\": { ");
    assert!(backups(&sb.root()).is_empty());
    assert_eq!(token_count(&sb), 0, "no token was created for a failed connect");

    let fresh = sb.root().join("fresh.json");
    let out = connect(&sb, &server, &["cursor", "--config", fresh.to_str().unwrap(), "--dry-run"]);
    let text = assert_ok(&out);
    assert!(text.contains("--- /dev/null") && text.contains("dry run"), "{text}");
    assert!(!fresh.exists());
    assert_eq!(token_count(&sb), 0);

    // Not on a terminal and no --yes: refuse rather than write unasked.
    let out = connect(&sb, &server, &["cursor", "--config", fresh.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert!(!fresh.exists());
    assert_eq!(token_count(&sb), 0);
}

#[test]
fn a_token_the_engine_refuses_fails_the_connection_check() {
    let sb = Sandbox::new();
    let server = sb.serve();
    let config = sb.root().join("mcp.json");
    let out = sb
        .cmd()
        .args(["connect", "cursor", "--use-env-token", "--yes", "--config"])
        .arg(&config)
        .args(["--port", &server.port.to_string()])
        .env("SLUICE_TOKEN", format!("slc_{}", "x".repeat(52)))
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", stdout(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("connection check failed"), "{err}");
}

#[test]
fn token_create_for_one_client_prints_only_its_config() {
    let sb = Sandbox::new();
    let out = sb.ok(&["token", "create", "--label", "c", "--client", "codex", "--port", "4321"]);
    assert!(out.contains("[mcp_servers.sluice]"), "{out}");
    assert!(out.contains("bearer_token_env_var = \"SLUICE_TOKEN\""));
    assert!(!out.contains("mcpServers"), "only Codex's form: {out}");
    let out = sb.ok(&["token", "create", "--label", "v", "--client", "vscode"]);
    assert!(out.contains("vscode:mcp/install?"), "{out}");
    let err = sb.err(&["token", "create", "--label", "z", "--client", "notepad"]);
    assert!(err.contains("unknown client"), "{err}");
}

#[test]
fn sluice_stdio_without_a_token_or_a_known_connection_says_what_to_do() {
    let sb = Sandbox::new();
    sb.add_project();
    let _server = sb.serve();
    let out = sb.cmd().arg("stdio").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SLUICE_TOKEN") && err.contains("--connection"), "{err}");
    let out = sb.cmd().args(["stdio", "--connection", "nobody"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no token for the connection \"nobody\""), "{err}");
    let out = sb.cmd().args(["stdio", "--connection", "../etc"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a connection name"));
}

/// With a real Secret Service (gnome-keyring on a private D-Bus session), the connection's
/// token lives in the keychain: no file in the data folder, none in the client's config, and
/// `sluice stdio --connection` finds it there.
#[cfg(target_os = "linux")]
#[test]
fn a_stdio_connection_keeps_its_token_in_a_real_secret_service() {
    let sb = Sandbox::new();
    let home = sb.root().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let config = sb.root().join("claude_desktop_config.json");
    let port = free_port();
    let script = r#"
        echo -n test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
        "$SLUICE_BIN" project add "$PROJ" --name demo >/dev/null || exit 3
        "$SLUICE_BIN" serve --port "$PORT" > "$HOME/serve.log" 2>&1 &
        S=$!
        for _ in $(seq 100); do grep -q serving "$HOME/serve.log" && break; sleep 0.1; done
        "$SLUICE_BIN" connect claude-desktop --config "$CFG" --yes --port "$PORT"
        R=$?
        kill $S; wait $S
        exit $R
    "#;
    let out = Command::new("dbus-run-session")
        .args(["--", "sh", "-c", script])
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_BIN", BIN)
        .env("PROJ", &sb.project)
        .env("CFG", &config)
        .env("PORT", port.to_string())
        .env_remove("SLUICE_SECRET_STORE")
        .env_remove("SLUICE_TOKEN")
        .output()
        .expect("dbus-run-session and gnome-keyring are needed; `cargo xtask test` installs them");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Token kept in the OS keychain (Secret Service)"), "{text}");
    assert!(
        text.contains("Connection check: OK") && text.contains("through `sluice stdio`"),
        "{text}"
    );
    assert!(!sb.data.join("connections").exists(), "no file fallback was used");
    let raw = std::fs::read_to_string(&config).unwrap();
    assert!(!raw.contains("slc_") && raw.contains("--connection"), "{raw}");
}

/// Codex's default needs nothing from the user: `sluice stdio` reads the token from the
/// connection's stored entry, so neither Codex's file nor its environment holds it.
#[test]
fn connect_codex_by_default_keeps_the_token_out_of_its_file_and_environment() {
    let sb = Sandbox::new();
    sb.add_project();
    let server = sb.serve();
    let codex = sb.root().join("config.toml");
    let out = connect(&sb, &server, &["codex", "--config", codex.to_str().unwrap(), "--yes"]);
    let text = assert_ok(&out);
    assert!(text.contains("No token in the client's file"), "{text}");
    assert!(!text.contains("export SLUICE_TOKEN"), "nothing to export: {text}");
    assert!(
        text.contains("Connection check: OK") && text.contains("through `sluice stdio`"),
        "{text}"
    );
    let after = std::fs::read_to_string(&codex).unwrap();
    assert!(!after.contains("slc_") && !after.contains("bearer_token_env_var"), "{after}");
    let v: toml::Value = toml::from_str(&after).unwrap();
    let args: Vec<&str> = v["mcp_servers"]["sluice"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[..3], ["stdio", "--connection", "codex"]);
    assert!(v["mcp_servers"]["sluice"].get("env").is_none());
}

fn status(sb: &Sandbox, args: &[&str]) -> serde_json::Value {
    let out = sb.cmd().args(["connect", "--status", "--json"]).args(args).output().unwrap();
    let text = assert_ok(&out);
    assert!(!text.contains("slc_"), "no token in a status: {text}");
    let rows: serde_json::Value = serde_json::from_str(&text).unwrap();
    rows[0].clone()
}

/// A config file that does not parse: a clear error state, and neither status nor repair
/// changes it.
#[test]
fn a_malformed_config_is_an_error_state_and_repair_leaves_it_alone() {
    let sb = Sandbox::new();
    let server = sb.serve();
    let config = sb.root().join("mcp.json");
    let broken = "{ \"mcpServers\": { \"sluice\": { \"url\": ";
    std::fs::write(&config, broken).unwrap();
    let cfg = config.to_str().unwrap();
    let h = status(&sb, &["cursor", "--config", cfg]);
    assert_eq!((h["state"].as_str(), h["code"].as_str()), (Some("broken"), Some("config_invalid")));
    assert!(h["reason"].as_str().unwrap().contains("cannot be parsed as JSON"), "{h}");
    assert_eq!(h["repairable"], false);
    let out = connect(&sb, &server, &["cursor", "--repair", "--yes", "--config", cfg]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be parsed") && err.contains("left untouched"), "{err}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), broken);
    assert!(backups(&sb.root()).is_empty());
    assert_eq!(token_count(&sb), 0);
    // Not UTF-8, and a folder where the file should be: errors too, never a panic.
    std::fs::write(&config, [0xff, 0xfe, b'{']).unwrap();
    assert_eq!(status(&sb, &["cursor", "--config", cfg])["code"], "config_invalid");
    let dir = sb.root().join("folder.json");
    std::fs::create_dir(&dir).unwrap();
    assert_eq!(
        status(&sb, &["cursor", "--config", dir.to_str().unwrap()])["code"],
        "config_unreadable"
    );
    // No entry: "not configured", and repair says to connect instead.
    std::fs::write(&config, "{\"mcpServers\": {}}").unwrap();
    assert_eq!(status(&sb, &["cursor", "--config", cfg])["state"], "not_configured");
    let out = connect(&sb, &server, &["cursor", "--repair", "--yes", "--config", cfg]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("connect it instead"));
}

/// The client keeps the token (VS Code's prompt): Sluice says it cannot check it, but still
/// checks the port; with Sluice stopped it says so instead of guessing.
#[test]
fn a_token_kept_by_the_client_is_unverified_and_a_stopped_sluice_is_said() {
    let sb = Sandbox::new();
    let server = sb.serve();
    let config = sb.root().join("mcp.json");
    let cfg = config.to_str().unwrap();
    assert_ok(&connect(&sb, &server, &["vscode", "--config", cfg, "--yes"]));
    let h = status(&sb, &["vscode", "--config", cfg]);
    assert_eq!(
        (h["state"].as_str(), h["code"].as_str()),
        (Some("unverified"), Some("token_kept_by_client"))
    );
    assert_eq!(h["token"], "in the client's own secret storage");
    let port = server.port;
    server.stop();
    let h = status(&sb, &["vscode", "--config", cfg]);
    assert_eq!(h["state"], "not_running", "{h}");
    // The port moved while the client keeps the token: broken, and repair keeps the prompt.
    let server = sb.serve();
    let h = status(&sb, &["vscode", "--config", cfg]);
    assert_eq!(h["code"], "port_changed", "{h}");
    assert!(h["reason"].as_str().unwrap().contains(&format!("port {port}")), "{h}");
    let out = sb.cmd().args(["connect", "vscode", "--repair", "--yes", "--config", cfg]).output();
    let text = assert_ok(&out.unwrap());
    assert!(text.contains("The client keeps the token itself"), "{text}");
    assert!(text.contains("Status: unverified"), "{text}");
    let after = std::fs::read_to_string(&config).unwrap();
    assert!(after.contains(&server.url()) && after.contains("${input:sluice-token}"), "{after}");
    assert_eq!(token_count(&sb), 1, "no token created for a client that keeps its own");
}

/// An entry whose command is not this Sluice's `sluice` — a planted program named like it, or
/// another copy — is reported and never started by the check (opening the Clients view must
/// not run what someone wrote into a client's file); a repair points it back at this one.
// Unix: a planted executable, links, Unix sockets.
#[cfg(unix)]
#[test]
fn a_stdio_entry_running_another_program_is_reported_never_started() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let server = sb.serve();
    let config = sb.root().join("mcp.json");
    let cfg = config.to_str().unwrap();
    assert_ok(&connect(
        &sb,
        &server,
        &["cursor", "--transport", "stdio", "--config", cfg, "--yes"],
    ));
    assert_eq!(status(&sb, &["cursor", "--config", cfg])["state"], "working");
    let planted = sb.root().join("bin/sluice");
    std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
    let marker = sb.root().join("planted-ran");
    std::fs::write(&planted, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = std::fs::read_to_string(&config).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ours = v["mcpServers"]["sluice"]["command"].as_str().unwrap().to_owned();
    std::fs::write(&config, text.replace(&ours, planted.to_str().unwrap())).unwrap();
    let h = status(&sb, &["cursor", "--config", cfg]);
    assert_eq!((h["state"].as_str(), h["code"].as_str()), (Some("broken"), Some("other_binary")));
    assert_eq!(h["repairable"], true, "{h}");
    assert!(!marker.exists(), "the health check ran the planted program");
    assert_ok(&connect(&sb, &server, &["cursor", "--repair", "--yes", "--config", cfg]));
    assert_eq!(status(&sb, &["cursor", "--config", cfg])["state"], "working");
    assert!(!marker.exists());
}
