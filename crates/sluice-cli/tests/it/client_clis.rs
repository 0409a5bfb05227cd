//! The clients themselves confirm that `sluice connect` left them connected: each test
//! starts a real engine, runs `sluice connect CLIENT` with a temp HOME (so the client's real
//! config path is used), then runs the client's own status command there, with no API key and
//! nothing in the environment but PATH and HOME, and reads what it reports.
//!
//! The CLIs are the npm packages `tests/clients-cli/package.json` pins (`cargo xtask test`
//! installs them and sets SLUICE_TEST_CLIENTS to their `node_modules/.bin`); they run on the
//! Node of SLUICE_TEST_NODE. Without SLUICE_TEST_CLIENTS they fail and say how to get it.
//!
//! What each status command proves, as run here:
//! - `claude mcp list`, `gemini mcp list`, `qwen mcp list`, `opencode mcp list` connect to
//!   every server and print its state ("✔ Connected", "✓ … - Connected", "✓ sluice connected").
//! - Codex: `codex mcp list` only lists the config; `codex app-server` connects without a
//!   model: `mcpServerStatus/list` returns the server's `initialize` answer and tools, and
//!   `mcpServer/tool/call` (on a thread, which needs no model either) calls `read_file`.
//! - Copilot CLI: `copilot mcp get` only shows the parsed entry (its ACP server wants a login
//!   before a session starts MCP servers); the connection itself is `sluice connect`'s check,
//!   which runs the entry's command line.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// The folder of the client CLIs. Without it the test fails and says how to get it, like every
/// test that needs a tool installed by `cargo xtask test`: a skipped test checks nothing.
fn clients_bin() -> PathBuf {
    std::env::var_os("SLUICE_TEST_CLIENTS").map(PathBuf::from).unwrap_or_else(|| {
        panic!(
            "SLUICE_TEST_CLIENTS is not set: run the tests with `cargo xtask test`, which \
             installs the client CLIs of tests/clients-cli and sets it"
        )
    })
}

/// A temp HOME with Sluice serving a "demo" project, and the client CLIs.
struct Setup {
    sb: Sandbox,
    server: Server,
    home: PathBuf,
    bin: PathBuf,
    /// PATH for the clients: Node 22 first (some CLIs need it), then the system's.
    path: String,
}

impl Setup {
    fn new() -> Setup {
        let bin = clients_bin();
        let node = std::env::var("SLUICE_TEST_NODE")
            .expect("SLUICE_TEST_NODE is not set: the client CLIs run on the tests' Node 22");
        let node_dir = Path::new(&node).parent().unwrap().to_owned();
        let sb = Sandbox::new();
        sb.add_project();
        let server = sb.serve();
        let home = sb.root().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let path = format!("{}:{}:/usr/local/bin:/usr/bin:/bin", node_dir.display(), bin.display());
        Setup { sb, server, home, bin, path }
    }

    /// `sluice connect ARGS --yes` as the user of `home` (the client's default config file).
    fn connect(&self, args: &[&str]) -> String {
        let out = self
            .sb
            .cmd()
            .arg("connect")
            .args(args)
            .args(["--yes", "--port", &self.server.port.to_string()])
            .env("HOME", &self.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "sluice connect {args:?}: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("Connection check: OK"), "{stdout}");
        stdout
    }

    /// The client's command with only PATH and HOME (no API key, no Sluice variables), in
    /// the project folder.
    fn client(&self, program: &str) -> Command {
        let mut c = Command::new(self.bin.join(program));
        c.env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .current_dir(&self.sb.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs `cmd` to its end (two minutes at most); returns stdout and stderr, ANSI-free.
    fn run(&self, cmd: &mut Command) -> String {
        let shown = format!("{cmd:?}");
        let child = cmd.spawn().unwrap_or_else(|e| panic!("{shown}: {e}"));
        let (status, out) = wait(child, Duration::from_secs(120), &shown);
        assert!(status.success(), "{shown} failed:\n{out}");
        out
    }
}

/// Waits for `child` with a deadline (killing it when passed) and returns its exit status and
/// its stdout followed by its stderr.
fn wait(mut child: Child, limit: Duration, shown: &str) -> (std::process::ExitStatus, String) {
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = format!("{}{}", out.join().unwrap(), err.join().unwrap());
    (status, strip_ansi(&text))
}

/// Removes terminal escape sequences (some CLIs colour their output even when piped).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The line of `out` about Sluice's server (printed: what the client said, for the log).
fn sluice_line(out: &str) -> &str {
    let line = out
        .lines()
        .find(|l| l.contains("sluice"))
        .unwrap_or_else(|| panic!("no line about sluice in:\n{out}"));
    eprintln!("client says: {}", line.trim());
    line
}

/// The token `sluice connect` asked to export (the HTTP forms that name SLUICE_TOKEN).
fn exported_token(connect_output: &str) -> String {
    connect_output
        .split_whitespace()
        .find_map(|w| w.strip_prefix("SLUICE_TOKEN="))
        .unwrap_or_else(|| panic!("no token to export in:\n{connect_output}"))
        .to_owned()
}

#[test]
fn claude_code_reports_sluice_connected_over_http_and_stdio() {
    let s = Setup::new();
    s.connect(&["claude-code"]);
    let out = s.run(s.client("claude").args(["mcp", "list"]));
    let line = sluice_line(&out);
    assert!(
        line.contains(&format!("http://127.0.0.1:{}/mcp (HTTP)", s.server.port))
            && line.ends_with("✔ Connected"),
        "{out}"
    );
    s.connect(&["claude-code", "--transport", "stdio"]);
    let raw = std::fs::read_to_string(s.home.join(".claude.json")).unwrap();
    assert!(!raw.contains("slc_"), "the stdio form keeps the token out: {raw}");
    let out = s.run(s.client("claude").args(["mcp", "list"]));
    let line = sluice_line(&out);
    assert!(
        line.contains("stdio --connection claude-code") && line.ends_with("✔ Connected"),
        "{out}"
    );
}

/// A `codex app-server` session: JSON-RPC lines over its stdin and stdout.
struct AppServer {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl AppServer {
    fn start(s: &Setup, env: &[(&str, &str)]) -> AppServer {
        let mut child = s
            .client("codex")
            .arg("app-server")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut app = AppServer { child, lines };
        app.send(json!({"id": 1, "method": "initialize",
            "params": {"clientInfo": {"name": "sluice-test", "version": "0"}}}));
        app.wait_for(|m| m["id"] == 1);
        app.send(json!({"method": "initialized"}));
        app
    }

    fn send(&mut self, msg: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// The first message matching `pred`, within a minute.
    fn wait_for(&self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).expect("codex app-server went quiet");
            let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
            if pred(&msg) {
                return msg;
            }
        }
    }

    /// `mcpServerStatus/list`: each server's state, after Codex connected to it.
    fn status(&mut self, id: u64) -> Value {
        self.send(json!({"id": id, "method": "mcpServerStatus/list", "params": {}}));
        let answer = self.wait_for(|m| m["id"] == id);
        let servers = answer["result"]["data"].as_array().cloned().unwrap_or_default();
        servers
            .into_iter()
            .find(|s| s["name"] == "sluice")
            .unwrap_or_else(|| panic!("sluice is not listed: {answer}"))
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn codex_app_server_connects_and_calls_read_file_with_the_default_form() {
    let s = Setup::new();
    let text = s.connect(&["codex"]);
    assert!(!text.contains("export SLUICE_TOKEN"), "{text}");
    // `codex mcp list` reads the file only; it shows the entry Codex parsed.
    let out = s.run(s.client("codex").args(["mcp", "list"]));
    let line = sluice_line(&out);
    assert!(line.contains("stdio --connection codex") && line.contains("enabled"), "{out}");

    let mut app = AppServer::start(&s, &[]);
    let sluice = app.status(2);
    assert_eq!(sluice["serverInfo"]["name"], "sluice", "{sluice}");
    assert!(sluice["tools"]["read_file"].is_object(), "{sluice}");
    // A thread (no model is called) and a tool call through Codex's own MCP client.
    let project = s.sb.project.to_str().unwrap();
    app.send(json!({"id": 3, "method": "thread/start",
        "params": {"ephemeral": true, "cwd": project}}));
    let thread = app.wait_for(|m| m["id"] == 3);
    let thread_id = thread["result"]["thread"]["id"].as_str().expect("thread id").to_owned();
    let ready = app.wait_for(|m| {
        m["method"] == "mcpServer/startupStatus/updated"
            && m["params"]["name"] == "sluice"
            && m["params"]["status"] != "starting"
    });
    assert_eq!(ready["params"]["status"], "ready", "{ready}");
    app.send(json!({"id": 4, "method": "mcpServer/tool/call", "params": {
        "server": "sluice", "threadId": thread_id, "tool": "read_file",
        "arguments": {"project": "demo", "path": "README.md"}}}));
    let call = app.wait_for(|m| m["id"] == 4);
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(
        call["result"]["structuredContent"]["content"], "# Demo\nhello world\nchanged\n",
        "{call}"
    );
}

#[test]
fn codex_http_form_connects_once_sluice_token_is_exported() {
    let s = Setup::new();
    let text = s.connect(&["codex", "--transport", "http"]);
    let token = exported_token(&text);
    // Without the variable Codex cannot authenticate: why this is not the default.
    let mut app = AppServer::start(&s, &[]);
    let sluice = app.status(2);
    assert!(sluice["serverInfo"].is_null(), "{sluice}");
    drop(app);
    let mut app = AppServer::start(&s, &[("SLUICE_TOKEN", &token)]);
    let sluice = app.status(2);
    assert_eq!(sluice["serverInfo"]["name"], "sluice", "{sluice}");
    assert!(sluice["tools"]["read_file"].is_object(), "{sluice}");
}

/// Gemini CLI disables every MCP server in a folder the user has not trusted; trusting the
/// project is the user's answer to its first-run question.
fn trust_for_gemini(s: &Setup) {
    let folders = json!({ s.sb.project.to_str().unwrap(): "TRUST_FOLDER" });
    std::fs::create_dir_all(s.home.join(".gemini")).unwrap();
    std::fs::write(s.home.join(".gemini/trustedFolders.json"), folders.to_string()).unwrap();
}

#[test]
fn gemini_cli_reports_sluice_connected_in_both_forms() {
    let s = Setup::new();
    s.connect(&["gemini"]);
    trust_for_gemini(&s);
    let out = s.run(s.client("gemini").args(["mcp", "list"]));
    let line = sluice_line(&out);
    assert!(line.contains("stdio --connection gemini") && line.ends_with("- Connected"), "{out}");
    // The HTTP form: Gemini expands ${SLUICE_TOKEN} in the header itself.
    let text = s.connect(&["gemini", "--transport", "http"]);
    let token = exported_token(&text);
    let out = s.run(s.client("gemini").args(["mcp", "list"]).env("SLUICE_TOKEN", &token));
    let line = sluice_line(&out);
    assert!(line.contains("(http)") && line.ends_with("- Connected"), "{out}");
}

#[test]
fn qwen_code_reports_sluice_connected_in_both_forms() {
    let s = Setup::new();
    s.connect(&["qwen"]);
    let out = s.run(s.client("qwen").args(["mcp", "list"]));
    let line = sluice_line(&out);
    assert!(line.contains("stdio --connection qwen") && line.ends_with("- Connected"), "{out}");
    let text = s.connect(&["qwen", "--transport", "http"]);
    let token = exported_token(&text);
    let out = s.run(s.client("qwen").args(["mcp", "list"]).env("SLUICE_TOKEN", &token));
    let line = sluice_line(&out);
    assert!(line.contains("(http)") && line.ends_with("- Connected"), "{out}");
}

#[test]
fn opencode_reports_sluice_connected_in_both_forms() {
    let s = Setup::new();
    s.connect(&["opencode"]);
    let out = s.run(s.client("opencode").args(["mcp", "list"]));
    // "✓ sluice connected" (a failure reads "✗ sluice failed", a stopped one "disconnected").
    assert!(sluice_line(&out).ends_with("✓ sluice connected"), "{out}");
    assert!(out.contains("stdio --connection opencode"), "{out}");
    // The HTTP form: opencode resolves {env:SLUICE_TOKEN} when it loads the file.
    let text = s.connect(&["opencode", "--transport", "http"]);
    let token = exported_token(&text);
    let out = s.run(s.client("opencode").args(["mcp", "list"]).env("SLUICE_TOKEN", &token));
    assert!(sluice_line(&out).ends_with("✓ sluice connected"), "{out}");
    assert!(out.contains(&format!("http://127.0.0.1:{}/mcp", s.server.port)), "{out}");
}

#[test]
fn copilot_cli_reads_the_entry_sluice_wrote() {
    let s = Setup::new();
    // `sluice connect` itself checked the connection through the entry's command line.
    s.connect(&["copilot"]);
    let out = s.run(s.client("copilot").args(["mcp", "get", "sluice"]));
    assert!(out.contains("Status: Enabled") && out.contains("Type: local"), "{out}");
    assert!(out.contains("Source: User") && out.contains("Tools: * (all)"), "{out}");
    let command = out.lines().find_map(|l| l.trim().strip_prefix("Command: ")).expect(&out);
    let binary = std::fs::canonicalize(BIN).unwrap();
    assert!(command.starts_with(binary.to_str().unwrap()), "{out}");
    assert!(command.contains("stdio --connection copilot"), "{out}");
}

/// The status commands are not optimistic: once the token `sluice connect` made is revoked,
/// the same clients report Sluice as failed.
#[test]
fn a_revoked_token_shows_as_failed_in_the_clients_status() {
    let s = Setup::new();
    let revoke = |text: &str| {
        let id = text
            .split(|c: char| c == '(' || c == ')' || c.is_whitespace())
            .find(|w| w.starts_with("tok_"))
            .unwrap_or_else(|| panic!("no token id in:\n{text}"));
        s.sb.ok(&["token", "revoke", id]);
    };
    revoke(&s.connect(&["claude-code", "--transport", "stdio"]));
    let out = s.run(s.client("claude").args(["mcp", "list"]));
    assert!(sluice_line(&out).contains("✘ Failed to connect"), "{out}");
    revoke(&s.connect(&["qwen"]));
    let out = s.run(s.client("qwen").args(["mcp", "list"]));
    assert!(sluice_line(&out).ends_with("- Disconnected"), "{out}");
    revoke(&s.connect(&["opencode"]));
    let out = s.run(s.client("opencode").args(["mcp", "list"]));
    assert!(sluice_line(&out).contains("✗ sluice failed"), "{out}");
}

// ── Health and repair, confirmed by the clients themselves ─────────────────────────────────

impl Setup {
    /// `sluice ARGS` as the user of `home`, with the engine's port found the usual way.
    fn sluice(&self, args: &[&str]) -> std::process::Output {
        self.sb
            .cmd()
            .args(args)
            .env("HOME", &self.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .output()
            .unwrap()
    }

    /// `sluice connect CLIENT --status --json`: the client's one row.
    fn health(&self, client: &str) -> Value {
        let out = self.sluice(&["connect", client, "--status", "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
        let row = rows[0].clone();
        eprintln!("status of {client}: {} {} — {}", row["state"], row["code"], row["reason"]);
        assert!(!row.to_string().contains("slc_"), "no token in a status: {row}");
        row
    }

    /// `sluice connect CLIENT --repair --yes`; returns its output.
    fn repair(&self, client: &str) -> String {
        let out = self.sluice(&["connect", client, "--repair", "--yes"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("Status: working"), "{text}");
        text
    }

    /// Stops the engine and starts it again on another free port.
    fn restart_on_another_port(&mut self) {
        let old = self.server.port;
        let _ = self.server.child.kill();
        let _ = self.server.child.wait();
        self.server = self.sb.serve();
        assert_ne!(self.server.port, old);
    }
}

/// The id of the token `sluice connect` printed as created.
fn created_token_id(text: &str) -> String {
    text.split(|c: char| c == '(' || c == ')' || c.is_whitespace())
        .find(|w| w.starts_with("tok_"))
        .unwrap_or_else(|| panic!("no token id in:\n{text}"))
        .to_owned()
}

#[test]
fn a_changed_port_is_reported_and_repaired_until_claude_code_connects_again() {
    let mut s = Setup::new();
    s.connect(&["claude-code"]);
    s.connect(&["gemini"]);
    trust_for_gemini(&s);
    assert_eq!(s.health("claude-code")["state"], "working");
    let gemini = s.health("gemini");
    assert_eq!(gemini["state"], "working");
    assert_eq!(gemini["token"], "in Sluice's keychain entry for the connection \"gemini\"");

    s.restart_on_another_port();
    let h = s.health("claude-code");
    assert_eq!((h["state"].as_str(), h["code"].as_str()), (Some("broken"), Some("port_changed")));
    assert!(h["reason"].as_str().unwrap().contains(&s.server.port.to_string()), "{h}");
    assert_eq!(h["repairable"], true);
    let out = s.run(s.client("claude").args(["mcp", "list"]));
    assert!(sluice_line(&out).contains("✘ Failed to connect"), "claude agrees: {out}");
    // The stdio form finds the engine wherever it listens: still working, for Gemini too.
    assert_eq!(s.health("gemini")["state"], "working");
    let out = s.run(s.client("gemini").args(["mcp", "list"]));
    assert!(sluice_line(&out).ends_with("- Connected"), "{out}");

    let tokens = || -> usize {
        let list: Value = serde_json::from_str(&s.sb.ok(&["token", "list", "--json"])).unwrap();
        list.as_array().unwrap().len()
    };
    let before = tokens();
    let text = s.repair("claude-code");
    assert!(text.contains("still works and is kept"), "{text}");
    assert!(text.contains(&format!("+      \"url\": \"http://127.0.0.1:{}/mcp\"", s.server.port)));
    assert!(!text.contains("slc_"), "the kept token is not shown: {text}");
    assert_eq!(tokens(), before, "no new token");
    let out = s.run(s.client("claude").args(["mcp", "list"]));
    let line = sluice_line(&out);
    assert!(
        line.contains(&format!("127.0.0.1:{}/mcp", s.server.port)) && line.ends_with("✔ Connected"),
        "{out}"
    );
    assert_eq!(s.health("claude-code")["state"], "working");
}

#[test]
fn a_revoked_token_is_reported_and_repair_makes_a_new_one_the_clients_accept() {
    let s = Setup::new();
    let claude = s.connect(&["claude-code"]);
    let gemini = s.connect(&["gemini"]);
    trust_for_gemini(&s);
    s.sb.ok(&["token", "revoke", &created_token_id(&claude)]);
    s.sb.ok(&["token", "revoke", &created_token_id(&gemini)]);
    for client in ["claude-code", "gemini"] {
        let h = s.health(client);
        assert_eq!(h["code"], "token_rejected", "{h}");
        assert!(h["reason"].as_str().unwrap().contains("revoked"), "the 401's message: {h}");
    }
    let out = s.run(s.client("gemini").args(["mcp", "list"]));
    assert!(sluice_line(&out).ends_with("- Disconnected"), "gemini agrees: {out}");

    let text = s.repair("claude-code");
    assert!(text.contains("a new token replaces it"), "{text}");
    assert!(text.contains("Created token Claude Code (sluice connect) #2"), "{text}");
    let out = s.run(s.client("claude").args(["mcp", "list"]));
    assert!(sluice_line(&out).ends_with("✔ Connected"), "{out}");
    let text = s.repair("gemini");
    assert!(text.contains("Created token Gemini CLI (sluice connect) #2"), "{text}");
    let out = s.run(s.client("gemini").args(["mcp", "list"]));
    assert!(sluice_line(&out).ends_with("- Connected"), "{out}");
    assert_eq!(s.health("gemini")["state"], "working");
}

#[test]
fn a_stdio_binary_moved_by_an_upgrade_is_reported_and_repaired() {
    let s = Setup::new();
    s.connect(&["gemini"]);
    trust_for_gemini(&s);
    // An upgrade moved the binary: the entry still names the old path.
    let file = s.home.join(".gemini/settings.json");
    let binary = std::fs::canonicalize(BIN).unwrap();
    let old = s.sb.root().join("old-version/sluice");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(binary.to_str().unwrap()), "{text}");
    std::fs::write(&file, text.replace(binary.to_str().unwrap(), old.to_str().unwrap())).unwrap();
    let h = s.health("gemini");
    assert_eq!((h["state"].as_str(), h["code"].as_str()), (Some("broken"), Some("binary_missing")));
    assert!(h["reason"].as_str().unwrap().contains(old.to_str().unwrap()), "{h}");
    let out = s.run(s.client("gemini").args(["mcp", "list"]));
    assert!(sluice_line(&out).ends_with("- Disconnected"), "gemini agrees: {out}");

    let text = s.repair("gemini");
    assert!(text.contains("stored token (\"gemini\") still works and is kept"), "{text}");
    assert!(!text.contains("Created token"), "{text}");
    let out = s.run(s.client("gemini").args(["mcp", "list"]));
    let line = sluice_line(&out);
    assert!(line.contains(binary.to_str().unwrap()) && line.ends_with("- Connected"), "{out}");
}
