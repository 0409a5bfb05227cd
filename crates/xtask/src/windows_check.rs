//! `cargo xtask windows check`: the Windows `sluice.exe`, under Wine, doing what a user and an
//! assistant would do first: `--version`; a project added by its Windows path (`Z:\…`, Wine's
//! name for this machine's root) and a token made with the CLI; `sluice serve` answering MCP
//! `initialize` and `tools/list` over loopback HTTP from this (Linux) process; then file tools
//! (read, list, search, write — the write checked on disk from Linux) and a job, approved
//! through the CLI as a user would, and then refused: without the sandbox account, which Wine
//! cannot set up, Windows does not confine jobs. Then the engine's own test binaries
//! ([`crate::windows_tests`]). Last, the per-user installer is built, installed with the app,
//! run and uninstalled ([`crate::windows_installer::check`]).
//!
//! Every step runs even when an earlier one failed, so one run shows everything that fails
//! under Wine; the report lists each step and its answer, and the command fails if any did.
//! Wine is not Windows: a failure here is a lead (Wine may lack what Windows has), a pass is
//! evidence that the binary links, starts and serves, not a Windows test.
//!
//! Links are not checked: Wine 8.0 shows a Unix symlink inside the project as a plain file or
//! folder (no reparse point), so `sluice-guard` follows it out of the project — measured: a
//! `read_file` through one read the file beside the project — and Wine 8.0 cannot make a real
//! Windows link (`mklink /d` does nothing, `mklink /j` fails). Such a step would test Wine, not
//! Sluice; Windows links need a Windows machine (or a Wine with reparse points).

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::mcp_http::{Client, Response};
use crate::windows::{Built, wine_path, wine_program};

/// How long `sluice serve` under Wine may take to say it is serving (Wine starts slowly the
/// first time a prefix is used).
const SERVE_DEADLINE: Duration = Duration::from_secs(90);

/// How long one CLI command under Wine may take.
const CLI_DEADLINE: Duration = Duration::from_secs(60);

/// How long an approval may take to appear.
const PENDING_DEADLINE: Duration = Duration::from_secs(60);

pub fn run(root: &Path, built: &Built) -> Result<()> {
    let mut report = Report::default();
    let work = built.wine_bin.parent().context("wine folder")?.join("check");
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("remove {}", work.display()))?;
    }
    let project = work.join("demo");
    std::fs::create_dir_all(project.join("src"))?;
    std::fs::write(project.join("README.md"), "# demo\nmade by cargo xtask windows check\n")?;
    std::fs::write(project.join("src/lib.rs"), "pub fn answer() -> u32 {\n    42\n}\n")?;
    // Beside the project: what a path escaping it would reach.
    std::fs::write(work.join("outside.txt"), "outside the project\n")?;
    let sluice = Sluice::new(built, built.wine_exe().into(), wine_path(&work.join("data"))?);

    report.step("sluice.exe --version", || {
        let out = sluice.ok(&["--version"])?;
        if !out.starts_with("sluice ") {
            bail!("unexpected output {out:?}");
        }
        Ok(out.trim().to_owned())
    });
    let windows_project = wine_path(&project)?;
    report.step(&format!("project add {windows_project}"), || {
        let args = ["project", "add", &windows_project, "--name", "demo"];
        sluice.ok(&[&args[..], &["--access", "read-write", "--exec", "any"]].concat())
    });
    let token = report.step("token create", || sluice.token("wine").map(Token));
    let serving = report.step("serve", || Serve::start(&sluice));
    if let (Some(Token(token)), Some(server)) = (token, serving) {
        mcp(&mut report, &sluice, &server, &token, &project);
        escapes(&mut report, &server, &token, &work.join("outside.txt"));
        report.step("sluice.exe stdio: initialize, tools/list", || stdio(&sluice, &server, &token));
    }
    report.step("audit verify", || sluice.ok(&["audit", "verify"]));
    report.step("audit list --json", || {
        let out = sluice.ok(&["audit", "list", "--json", "--limit", "1000"])?;
        Ok(format!("{} entries", out.lines().filter(|l| !l.trim().is_empty()).count()))
    });
    crate::windows_tests::run(&mut report, built);
    crate::windows_installer::check(&mut report, root, built, &work);
    report.finish()
}

/// The MCP steps, against a serving `sluice.exe`.
fn mcp(report: &mut Report, sluice: &Sluice, server: &Serve, token: &str, project: &Path) {
    let mut client = Client::new(server.port, token);
    report.step("initialize", || {
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "xtask-windows-check", "version": "0"}
        });
        let r = result(client.request("initialize", params)?)?;
        Ok(format!("{} {}", r["serverInfo"]["name"], r["protocolVersion"]))
    });
    report.step("tools/list", || {
        let r = result(client.request("tools/list", json!({}))?)?;
        let tools = r["tools"].as_array().context("no tools array")?;
        Ok(format!("{} tools", tools.len()))
    });
    report.step("read_file README.md", || {
        let r = tool(&mut client, "read_file", json!({"project": "demo", "path": "README.md"}))?;
        let text = r["content"].as_str().context("no content")?;
        if !text.contains("made by cargo xtask windows check") {
            bail!("unexpected content {text:?}");
        }
        Ok(format!("{} bytes", text.len()))
    });
    report.step("list_directory src", || {
        let r = tool(&mut client, "list_directory", json!({"project": "demo", "path": "src"}))?;
        Ok(format!("{} entries", r["entries"].as_array().context("no entries")?.len()))
    });
    report.step("search_text answer", || {
        let r = tool(&mut client, "search_text", json!({"project": "demo", "pattern": "answer"}))?;
        Ok(compact(&r))
    });
    report.step("write_file notes/wine.txt", || {
        let content = "written through sluice.exe under Wine\r\n";
        let args = json!({"project": "demo", "path": "notes/wine.txt", "content": content,
                          "create_parents": true});
        tool(&mut client, "write_file", args)?;
        let on_disk = std::fs::read_to_string(project.join("notes/wine.txt"))
            .context("the file is not on disk")?;
        if on_disk != content {
            bail!("on disk: {on_disk:?}");
        }
        Ok("on disk, same bytes".to_owned())
    });
    // Jobs on Windows today: the user approves, then the engine refuses to run it, because
    // Windows can neither cut a job off the network nor confine it (sluice-exec's `confine.rs`:
    // jobs require full confinement, and only Linux and macOS give it). These steps check that
    // refusal; once Windows confines jobs, the second must expect the command's output.
    let echo = json!({"project": "demo", "program": "cmd", "args": ["/c", "echo", "hi"]});
    report.step("run_command cmd /c echo hi, network off, approved: refused", || {
        refused(approved_call(sluice, server, token, echo.clone()), "cannot block a job's network")
    });
    report.step("project set demo --network on", || {
        sluice.ok(&["project", "set", "demo", "--network", "on"])
    });
    report.step("run_command cmd /c echo hi, network on, approved: refused", || {
        refused(approved_call(sluice, server, token, echo.clone()), "requires full confinement")
    });
}

/// Paths that lead out of the project, in the forms Windows adds: each must be refused and
/// the file beside the project never read.
fn escapes(report: &mut Report, server: &Serve, token: &str, outside: &Path) {
    let mut client = Client::new(server.port, token);
    let absolute = wine_path(outside).unwrap_or_default();
    let unc = format!("\\\\?\\{absolute}");
    for path in ["..\\outside.txt", "../outside.txt", absolute.as_str(), unc.as_str()] {
        report.step(&format!("read_file {path}: refused"), || {
            match tool(&mut client, "read_file", json!({"project": "demo", "path": path})) {
                Ok(r) => bail!("it was read: {}", compact(&r)),
                Err(e) => Ok(format!("{e:#}")),
            }
        });
    }
}

/// `sluice.exe stdio` bridging two requests to the serving exe: the number of tools it lists.
fn stdio(sluice: &Sluice, server: &Serve, token: &str) -> Result<String> {
    let mut child = sluice
        .command()?
        .args(["stdio", "--port", &server.port.to_string()])
        .env("SLUICE_TOKEN", token)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start Wine")?;
    let res = stdio_exchange(&mut child);
    let _ = child.kill();
    let _ = child.wait();
    res
}

fn stdio_exchange(child: &mut Child) -> Result<String> {
    use std::io::Write;
    let mut stdin = child.stdin.take().context("stdin")?;
    let stdout = child.stdout.take().context("stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // One message a line; a request's answer is the next line (nothing else is pending).
    let mut send = |msg: Value, answered: bool| -> Result<Option<Value>> {
        writeln!(stdin, "{msg}")?;
        stdin.flush()?;
        if !answered {
            return Ok(None);
        }
        let line = rx.recv_timeout(SERVE_DEADLINE).context("no answer")??;
        let reply: Value = serde_json::from_str(&line).context("not JSON")?;
        if !reply["error"].is_null() {
            bail!("{}: {}", msg["method"], compact(&reply["error"]));
        }
        Ok(Some(reply["result"].clone()))
    };
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "xtask-windows-check", "version": "0"}
    });
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}), true)?;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), false)?;
    let tools = send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), true)?
        .context("no answer")?;
    Ok(format!("{} tools", tools["tools"].as_array().context("no tools array")?.len()))
}

/// A tool call that asks the user, approved through the CLI as the user would; its answer.
fn approved_call(sluice: &Sluice, server: &Serve, token: &str, args: Value) -> Result<Value> {
    let (port, token) = (server.port, token.to_owned());
    let call = std::thread::spawn(move || Client::new(port, &token).call("run_command", args));
    // An answer before any approval (a refusal) ends the wait.
    let approve = sluice
        .wait_pending(|| call.is_finished())
        .and_then(|id| id.map(|id| sluice.ok(&["approvals", "approve", &id])).transpose());
    let answer = call.join().map_err(|_| anyhow::anyhow!("the call's thread panicked"))?;
    let when = if approve?.is_some() { "after the approval" } else { "before any approval" };
    structured(answer?).context(when)
}

/// Passes when the call failed with a message containing `why`.
fn refused(answer: Result<Value>, why: &str) -> Result<String> {
    match answer {
        Ok(r) => bail!("it ran: {}", compact(&r)),
        Err(e) if format!("{e:#}").contains(why) => Ok(format!("refused: {e:#}")),
        Err(e) => Err(e),
    }
}

/// `sluice.exe` under Wine with the check's data folder.
pub(crate) struct Sluice<'a> {
    built: &'a Built,
    /// The exe Wine starts: the built one beside the stand-in, or an installed one.
    exe: OsString,
    /// `SLUICE_DATA_DIR`, as a Windows path.
    data: String,
}

impl<'a> Sluice<'a> {
    pub(crate) fn new(built: &'a Built, exe: OsString, data: String) -> Sluice<'a> {
        Sluice { built, exe, data }
    }

    fn command(&self) -> Result<Command> {
        let mut cmd = wine_program(self.built, &self.exe)?;
        cmd.env("SLUICE_DATA_DIR", &self.data)
            .env("SLUICE_SECRET_STORE", "file")
            .env_remove("SLUICE_TOKEN");
        Ok(cmd)
    }

    /// Runs `sluice.exe args…`; its standard output, or an error with both outputs.
    pub(crate) fn ok(&self, args: &[&str]) -> Result<String> {
        let what = format!("sluice.exe {}", args.join(" "));
        let out = output_within(self.command()?.args(args), CLI_DEADLINE, &what)?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            bail!(
                "{what} exited with {}: {}{}",
                out.status,
                stdout.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(stdout)
    }

    /// `token create --label LABEL --profile full`: the token it printed.
    pub(crate) fn token(&self, label: &str) -> Result<String> {
        let out = self.ok(&["token", "create", "--label", label, "--profile", "full"])?;
        let token = out.split_whitespace().find(|w| w.starts_with("slc_"));
        Ok(token.with_context(|| format!("no token in {out:?}"))?.to_owned())
    }

    /// The id of the first pending approval, once there is one; `None` once `answered`.
    fn wait_pending(&self, answered: impl Fn() -> bool) -> Result<Option<String>> {
        let deadline = Instant::now() + PENDING_DEADLINE;
        loop {
            if answered() {
                return Ok(None);
            }
            let list: Value = serde_json::from_str(&self.ok(&["approvals", "list", "--json"])?)
                .context("approvals list --json is not JSON")?;
            let pending = list.as_array().and_then(|a| a.iter().find(|a| a["state"] == "pending"));
            if let Some(id) = pending.and_then(|a| a["id"].as_str()) {
                return Ok(Some(id.to_owned()));
            }
            if Instant::now() > deadline {
                bail!("no approval appeared in {} s", PENDING_DEADLINE.as_secs());
            }
            // Each `approvals list` is a Wine start (about a second): no need to wait more.
        }
    }
}

/// Runs a command to its end, with its outputs captured. A command that hangs under Wine must
/// not hang the check: past the deadline it is killed (by its own id) and this fails.
pub(crate) fn output_within(cmd: &mut Command, deadline: Duration, what: &str) -> Result<Output> {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start Wine")?;
    let pid = child.id().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(deadline) {
        Ok(out) => out.with_context(|| format!("cannot read the output of {what}")),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            bail!("{what} did not end in {} s", deadline.as_secs());
        }
    }
}

/// A running `sluice.exe serve`, killed on drop.
pub(crate) struct Serve {
    child: Child,
    pub(crate) port: u16,
    /// From start to the "serving" line.
    ready_in: Duration,
}

impl Serve {
    pub(crate) fn start(sluice: &Sluice) -> Result<Serve> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut child = sluice
            .command()?
            .args(["serve", "--port", &port.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start Wine")?;
        let stdout = child.stdout.take().context("stdout")?;
        let stderr = child.stderr.take().context("stderr")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let first = lines.next();
            let _ = tx.send(first);
            // Keep draining, so the server never blocks on a full pipe.
            lines.for_each(drop);
        });
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                text.push_str(&line);
                text.push('\n');
            }
            text
        });
        let started = Instant::now();
        let mut server = Serve { child, port, ready_in: Duration::ZERO };
        match rx.recv_timeout(SERVE_DEADLINE) {
            Ok(Some(Ok(line))) if line.contains("serving") => {
                server.ready_in = started.elapsed();
                Ok(server)
            }
            other => {
                let _ = server.child.kill();
                let _ = server.child.wait();
                let stderr = errors.join().unwrap_or_default();
                bail!("did not start: {other:?}; stderr: {}", stderr.trim())
            }
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An MCP client's first calls to the server on `port`: `initialize`, as `client`, then
/// `tools/list`; the `initialize` result and the number of tools.
pub(crate) fn first_calls(port: u16, token: &str, client: &str) -> Result<(Value, usize)> {
    let mut c = Client::new(port, token);
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": client, "version": "0"}
    });
    let init = result(c.request("initialize", params)?)?;
    let tools = result(c.request("tools/list", json!({}))?)?;
    Ok((init, tools["tools"].as_array().context("no tools array")?.len()))
}

/// A JSON-RPC answer's `result`, or its error.
pub(crate) fn result(r: Response) -> Result<Value> {
    if r.status != 200 {
        bail!("HTTP {}: {}", r.status, compact(&r.body));
    }
    if !r.body["error"].is_null() {
        bail!("JSON-RPC error {}", compact(&r.body["error"]));
    }
    Ok(r.body["result"].clone())
}

/// A tool's structured answer, or its error.
fn structured(r: Response) -> Result<Value> {
    let r = result(r)?;
    if r["isError"] == true {
        bail!("tool error {}", compact(&r["structuredContent"]));
    }
    Ok(r["structuredContent"].clone())
}

fn tool(client: &mut Client, name: &str, args: Value) -> Result<Value> {
    structured(client.call(name, args)?)
}

/// JSON on one line, cut to a readable length.
fn compact(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(300) {
        Some((idx, _)) => format!("{}…", &text[..idx]),
        None => text,
    }
}

/// Each step's outcome, printed as it ends.
#[derive(Default)]
pub(crate) struct Report {
    passed: usize,
    failed: Vec<String>,
}

impl Report {
    /// Runs a step and prints its outcome; its value when it passed.
    pub(crate) fn step<T: Shown>(
        &mut self,
        name: &str,
        f: impl FnOnce() -> Result<T>,
    ) -> Option<T> {
        let started = Instant::now();
        let res = f();
        let ms = started.elapsed().as_millis();
        match res {
            Ok(value) => {
                self.passed += 1;
                println!("ok   {name} ({ms} ms): {}", value.shown());
                Some(value)
            }
            Err(e) => {
                println!("FAIL {name} ({ms} ms): {e:#}");
                self.failed.push(name.to_owned());
                None
            }
        }
    }

    fn finish(self) -> Result<()> {
        println!("windows check: {} passed, {} failed", self.passed, self.failed.len());
        if !self.failed.is_empty() {
            bail!("under Wine, these failed: {}", self.failed.join("; "));
        }
        Ok(())
    }
}

/// A bearer token, shown without its secret part.
struct Token(String);

impl Shown for Token {
    fn shown(&self) -> String {
        format!("{}…", self.0.get(..8).unwrap_or_default())
    }
}

/// What a step's value prints as.
pub(crate) trait Shown {
    fn shown(&self) -> String;
}

impl Shown for String {
    fn shown(&self) -> String {
        self.trim().lines().next().unwrap_or_default().to_owned()
    }
}

impl Shown for Serve {
    fn shown(&self) -> String {
        format!("port {}, serving after {} ms", self.port, self.ready_in.as_millis())
    }
}
