//! The tray menu end to end, as a desktop panel drives it. The real tray process (`sluice-tray
//! --hidden`) runs under Xvfb on a private session bus where a stand-in panel
//! (`tray_host.rs`) owns `org.kde.StatusNotifierWatcher`; the tray registers its
//! StatusNotifierItem there and the test reads and clicks its exported menu (dbusmenu) over
//! D-Bus, as a user's panel would. The assistant is raw MCP over HTTP; the human's other side
//! is the `sluice` CLI on the same data folder.
//!
//! A delete waits: its approval shows in the menu with the exact action, Approve runs it. A
//! second one is denied from the menu and the assistant hears `denied`. A command approved
//! with "Always allow this command" becomes an allow rule recorded as made in the tray, and
//! runs again without asking. A job approved once shows under Jobs, and Cancel there ends it.
//! With a command waiting, Pause greys out both ways of approving it ("resume AI access
//! first") while Deny stays; `sluice pause` in a terminal is followed by the menu too. The
//! emergency stop from the menu denies what waits, and the menu, `sluice doctor` and the MCP
//! gate all say stopped; Resume asks natively first (Return keeps it stopped), and Quit ends
//! the process cleanly. Every step asserts on the menu as read over D-Bus.
//!
//! Needs `dbus-daemon`, `Xvfb`, libayatana-appindicator, python-xlib in `SLUICE_TEST_PYTHON`
//! (the native dialog) and the `sluice` CLI built beside the tray binary — `cargo xtask test`
//! provides all of them (its `cargo test --workspace` builds the CLI too).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::driver::{Native, Xvfb, answer_native_now, native_dialog_up};
use crate::tray_host::{Bus, Host, Item};

/// How long any one step may take.
const STEP: Duration = Duration::from_secs(30);
/// Pause between two reads of the menu.
const POLL: Duration = Duration::from_millis(100);

const TOKEN_LABEL: &str = "tray-test";
const ON: &str = "● AI access on";
const PAUSED: &str = "⏸ Paused — resume to allow AI access";
const STOPPED: &str = "⛔ Stopped — resume to allow AI access";
const PAUSE: &str = "Pause AI access";
const RESUME: &str = "Resume AI access";
const STOP: &str = "Emergency stop (kills every job, denies approvals)";
/// How an approval of `echo` names its risk, after the exact command.
const ECHO_RISK: &str = "risk caution: runs `echo`; writes confined to the project, network off";
/// The risk class the tray shows for an `echo` waiting in `any` mode.
const COMMAND_CLASS: &str = "arbitrary program";

/// The `sluice` CLI beside the tray binary, where `cargo test --workspace` builds it (and
/// where the tray itself looks for it).
fn cli() -> PathBuf {
    let cli = Path::new(env!("CARGO_BIN_EXE_sluice-tray")).with_file_name("sluice");
    assert!(
        cli.is_file(),
        "{} is missing: build it first (`cargo build -p sluice-cli`; `cargo xtask test` does)",
        cli.display()
    );
    cli
}

/// Runs `sluice ARGS` on the test's data folder, asserting success; returns stdout.
pub(crate) fn sluice(data: &Path, args: &[&str]) -> String {
    let out = Command::new(cli())
        .args(args)
        .env("SLUICE_DATA_DIR", data)
        .env("SLUICE_SECRET_STORE", "file")
        .env_remove("SLUICE_TOKEN")
        .output()
        .expect("run sluice");
    assert!(
        out.status.success(),
        "sluice {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn sluice_json(data: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&sluice(data, args)).unwrap()
}

/// The tray process, ended when dropped: SIGTERM (it quits as the menu's Quit does), then
/// SIGKILL to its process group if it lingers. Its log is shown if the test failed.
struct Tray {
    child: Child,
    log: PathBuf,
}

impl Tray {
    fn start(dir: &Path, data: &Path, port: u16, display: &str, bus: &str) -> Tray {
        let (home, runtime) = (dir.join("home"), dir.join("run"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&runtime).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        let log = dir.join("tray.log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sluice-tray"));
        cmd.arg("--hidden")
            .env("DISPLAY", display)
            .env("DBUS_SESSION_BUS_ADDRESS", bus)
            .env("SLUICE_DATA_DIR", data)
            .env("SLUICE_PORT", port.to_string())
            .env("SLUICE_SECRET_STORE", "file")
            .env("HOME", &home)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("NO_AT_BRIDGE", "1")
            .env_remove("SLUICE_TOKEN")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().expect("start sluice-tray");
        Tray { child, log }
    }

    /// Waits for the process to exit on its own (after Quit); its exit status.
    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the tray process did not exit");
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Tray {
    fn drop(&mut self) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32);
        if self.child.try_wait().ok().flatten().is_none() {
            if let Some(pid) = pid {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(POLL);
            }
        }
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            eprintln!("--- sluice-tray's log ---\n{log}--- end of sluice-tray's log ---");
        }
    }
}

/// A JSON-RPC POST to /mcp; the HTTP status and the JSON answer (plain or the first SSE event).
fn post(port: u16, token: &str, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the MCP port");
    // An approval's wait is part of the call: longer than any one step of the test.
    s.set_read_timeout(Some(STEP * 2)).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).expect("read the MCP answer");
    let text = String::from_utf8_lossy(&buf);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_owned()
    };
    let json = body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(body.trim());
    let json = serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {body:?}"));
    (status, json)
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        match usize::from_str_radix(size.trim(), 16) {
            Ok(n) if n > 0 && after.len() >= n => {
                out.push_str(&after[..n]);
                rest = after[n..].trim_start_matches("\r\n");
            }
            _ => break,
        }
    }
    out
}

/// A request to the tunnel's port as the tunnel's edge sends it (`Host` the public name, then
/// `headers`, each line ending in CRLF): the status, the head and the body; `Err` while nothing
/// listens there.
fn http(
    port: u16,
    method: &str,
    path: &str,
    host: &str,
    headers: &str,
    body: &str,
) -> std::io::Result<(u16, String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(STEP))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Ok((status, head.to_owned(), body.to_owned()))
}

/// A header's value in a response head.
fn header(head: &str, name: &str) -> String {
    head.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no {name} in {head}"))
}

/// A `tools/call`; the JSON-RPC answer (which must come with 200).
fn call(port: u16, token: &str, tool: &str, args: Value) -> Value {
    let body = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": tool, "arguments": args }
    });
    let (status, v) = post(port, token, &body);
    assert_eq!(status, 200, "{tool}: {v}");
    v
}

/// A call that waits for an approval, made while the test clicks.
fn call_async(port: u16, token: &str, tool: &str, args: Value) -> std::thread::JoinHandle<Value> {
    let (token, tool) = (token.to_owned(), tool.to_owned());
    std::thread::spawn(move || call(port, &token, &tool, args))
}

/// The tool's structured result; panics unless it succeeded.
fn ok(v: &Value) -> &Value {
    assert_ne!(v["result"]["isError"], json!(true), "the call failed: {v}");
    &v["result"]["structuredContent"]
}

/// The tool's refusal message; panics unless it was refused with `code`.
fn refused<'a>(v: &'a Value, code: &str) -> &'a str {
    assert_eq!(v["result"]["isError"], json!(true), "the call was not refused: {v}");
    let out = &v["result"]["structuredContent"];
    assert_eq!(out["code"], code, "{v}");
    out["message"].as_str().unwrap_or_default()
}

/// The gate's answer to a request while access is off: 503 and `code` (`paused`, `stopped`).
fn gate_refuses(port: u16, token: &str, code: &str) {
    let list = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": { "name": "list_projects", "arguments": {} }
    });
    let (status, v) = post(port, token, &list);
    assert_eq!((status, &v["error"]["data"]["code"]), (503, &json!(code)), "{v}");
}

/// Reads the menu until `want` holds; panics with the last menu read after [`STEP`].
fn wait_menu(host: &Host, what: &str, want: impl Fn(&Item) -> bool) -> Item {
    let deadline = Instant::now() + STEP;
    loop {
        let last = match host.menu(STEP) {
            Ok(menu) if want(&menu) => return menu,
            Ok(menu) => menu.render(),
            Err(e) => format!("(cannot read it: {e})"),
        };
        assert!(Instant::now() < deadline, "the tray menu never showed {what}; last read:\n{last}");
        std::thread::sleep(POLL);
    }
}

/// Clicks the entry at `path` once the menu shows it usable. A click that fails (the menu was
/// rebuilt between the read and the click, so its ids changed) did not land: it is tried
/// again on the menu as it is now.
fn click(host: &Host, path: &[&str]) {
    let deadline = Instant::now() + STEP;
    loop {
        let menu = wait_menu(host, &format!("{path:?}, enabled"), |m| usable(m, path));
        match host.click(&menu, path) {
            Ok(()) => return,
            Err(e) if Instant::now() < deadline => eprintln!("click on {path:?} retried: {e}"),
            Err(e) => panic!("cannot click {path:?}: {e}"),
        }
    }
}

/// Whether the entry at `path` is there and enabled, with every submenu on the way.
fn usable(menu: &Item, path: &[&str]) -> bool {
    let mut at = menu;
    for label in path {
        match at.children.iter().find(|c| &c.label == label) {
            Some(c) if c.enabled && c.visible => at = c,
            _ => return false,
        }
    }
    true
}

/// The menu's first entries: the state line, then (with approvals waiting) `Approvals (N)`.
fn state(menu: &Item) -> &str {
    menu.children.first().map_or("", |c| c.label.as_str())
}

/// Labels and whether each is enabled: what an approval's submenu offers.
fn entries(item: &Item) -> Vec<(&str, bool)> {
    item.children.iter().map(|c| (c.label.as_str(), c.enabled)).collect()
}

/// The approval whose submenu is labelled `headline`, once the menu shows it.
fn wait_approval(host: &Host, headline: &str) -> Item {
    let menu = wait_menu(host, &format!("the approval {headline:?}"), |m| {
        m.labelled("Approvals (1)").is_some_and(|a| a.labelled(headline).is_some())
    });
    menu.labelled(headline).unwrap().clone()
}

/// Waits until no approval waits in the menu and the state line says `state_line`.
fn wait_no_approvals(host: &Host, state_line: &str) -> Item {
    wait_menu(host, &format!("no approvals, {state_line:?}"), |m| {
        state(m) == state_line && m.find(&|l| l.starts_with("Approvals (")).is_none()
    })
}

/// The id of the approval with this summary (`sluice approvals list`).
fn approval_id(data: &Path, summary: &str) -> String {
    let list = sluice_json(data, &["approvals", "list", "--json"]);
    let found = list.as_array().unwrap().iter().find(|a| a["summary"] == summary);
    found.unwrap_or_else(|| panic!("no approval {summary:?} in {list}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn tray_menu_approves_denies_always_allows_pauses_and_stops() {
    let _turn = crate::driver::one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let (data, project) = (dir.join("data"), dir.join("proj"));
    std::fs::create_dir_all(&project).unwrap();
    let path = project.to_str().unwrap();
    let add = ["project", "add", path, "--name", "demo", "--access", "read-write", "--exec", "any"];
    sluice(&data, &add);
    let out = sluice(&data, &["token", "create", "--label", TOKEN_LABEL, "--profile", "full"]);
    let token = out
        .split_whitespace()
        .find(|w| w.starts_with("slc_") && w.len() == 56)
        .expect("a token in `sluice token create`'s output")
        .to_owned();

    // Dropped in reverse: the tray first, then the panel, its bus, the X server.
    let xvfb = Xvfb::start();
    let bus = Bus::start(&dir);
    let host = Host::start(&bus.address);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut tray = Tray::start(&dir, &data, port, &xvfb.display, &bus.address);

    // The item registers with the panel and shows its menu: access on, nothing waiting.
    let menu = wait_menu(&host, "its first menu", |m| state(m) == ON);
    assert!(!menu.children[0].enabled, "the state line is text, not a control");
    assert!(usable(&menu, &[PAUSE]) && usable(&menu, &[STOP]), "{}", menu.render());
    assert!(menu.find(&|l| l.starts_with("Approvals (")).is_none(), "{}", menu.render());
    // The tray serves as `sluice serve` does: it holds the data folder's serving lock (and with
    // it crash recovery, a non-dumpable engine and the jobs' subreaper).
    let second = Command::new(cli())
        .args(["serve", "--port", "0"])
        .env("SLUICE_DATA_DIR", &data)
        .env("SLUICE_SECRET_STORE", "file")
        .output()
        .expect("run sluice serve");
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success() && err.contains("already serving"), "{err}");

    // A delete waits for the user; the menu shows exactly what would happen, and Approve runs
    // it. The name has what a menu label could swallow: `_` (a mnemonic marker in GTK and
    // dbusmenu) and `&` (muda's).
    let name = "old_notes & drafts.txt";
    std::fs::write(project.join(name), "bye\n").unwrap();
    let waiting = call_async(port, &token, "delete_path", json!({"project": "demo", "path": name}));
    let summary = format!("delete {name} (4 B, restorable)");
    let headline = format!("{TOKEN_LABEL} · {summary} · demo");
    let approval = wait_approval(&host, &headline);
    // Its risk class comes first, as text: the same words the window's card and the CLI show.
    const DELETE_CLASS: &str = "deletes 1 file (restorable)";
    assert_eq!(
        entries(&approval),
        [(DELETE_CLASS, false), ("Approve", true), ("Deny", true), ("Details in Sluice…", true)],
        "{}",
        approval.render()
    );
    let id = approval_id(&data, &summary);
    let shown = sluice(&data, &["approvals", "show", &id]);
    assert!(shown.contains(&format!("risk:     {DELETE_CLASS}")), "{shown}");
    click(&host, &["Approvals (1)", &headline, "Approve"]);
    ok(&waiting.join().unwrap());
    assert!(!project.join(name).exists(), "the approved delete ran");
    wait_no_approvals(&host, ON);
    let shown = sluice(&data, &["approvals", "show", &id]);
    assert!(shown.contains("by local user (tray)"), "decided in the tray: {shown}");

    // Deny: the file stays and the assistant hears `denied`.
    std::fs::write(project.join("keep.txt"), "stay\n").unwrap();
    let waiting =
        call_async(port, &token, "delete_path", json!({"project": "demo", "path": "keep.txt"}));
    let headline = format!("{TOKEN_LABEL} · delete keep.txt (5 B, restorable) · demo");
    wait_approval(&host, &headline);
    click(&host, &["Approvals (1)", &headline, "Deny"]);
    refused(&waiting.join().unwrap(), "denied");
    assert!(project.join("keep.txt").exists(), "the denied delete did not run");
    wait_no_approvals(&host, ON);

    // "Always allow this command": it runs, the rule is recorded as made in the tray for this
    // assistant, and the same command then runs without asking.
    let echo = json!({"project": "demo", "program": "echo", "args": ["from the tray"]});
    let waiting = call_async(port, &token, "run_command", echo.clone());
    let headline =
        format!("{TOKEN_LABEL} · run /usr/bin/echo 'from the tray' — {ECHO_RISK} · demo");
    let approval = wait_approval(&host, &headline);
    assert_eq!(
        entries(&approval),
        [
            (COMMAND_CLASS, false),
            ("Approve once", true),
            ("Always allow this command", true),
            ("Deny", true),
            ("Details in Sluice…", true)
        ],
        "{}",
        approval.render()
    );
    click(&host, &["Approvals (1)", &headline, "Always allow this command"]);
    assert_eq!(ok(&waiting.join().unwrap())["stdout"], "from the tray\n");
    let rules = sluice_json(&data, &["rules", "list", "--json"]);
    let rules = rules.as_array().unwrap();
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0]["args"], json!(["from the tray"]), "{rules:?}");
    assert_eq!(
        (&rules[0]["added_from"], &rules[0]["asked_by"]),
        (&json!("tray"), &json!(TOKEN_LABEL))
    );
    wait_no_approvals(&host, ON);
    let asked = sluice_json(&data, &["approvals", "list", "--json"]).as_array().unwrap().len();
    assert_eq!(ok(&call(port, &token, "run_command", echo))["stdout"], "from the tray\n");
    let now = sluice_json(&data, &["approvals", "list", "--json"]).as_array().unwrap().len();
    assert_eq!(now, asked, "the always-allowed command ran without asking");

    // What a command changed is undone from the menu: its entry names the command and the
    // project, a native question comes first (Return keeps the files), then the files are put
    // back as they were before it.
    std::fs::write(project.join("made-by-the-command.txt"), "new\n").unwrap();
    const UNDO: &str = "Undo a command's changes";
    let is_echo =
        |l: &str| l.starts_with("Undo what `/usr/bin/echo 'from the tray'` changed · demo");
    let menu = wait_menu(&host, "the command to undo", |m| {
        m.labelled(UNDO).is_some_and(|u| u.find(&is_echo).is_some())
    });
    let line = menu.labelled(UNDO).unwrap().find(&is_echo).unwrap().label.clone();
    let undo = |answer: Native| {
        click(&host, &[UNDO, &line]);
        let deadline = Instant::now() + STEP;
        while !answer_native_now(&xvfb.display, "Sluice — restore a checkpoint?", answer, deadline)
        {
            std::thread::sleep(POLL);
        }
    };
    undo(Native::Return);
    std::thread::sleep(POLL * 10);
    assert!(project.join("made-by-the-command.txt").exists(), "Return kept the files");
    undo(Native::Accept);
    let deadline = Instant::now() + STEP;
    while project.join("made-by-the-command.txt").exists() {
        assert!(Instant::now() < deadline, "the undo from the tray did not restore the files");
        std::thread::sleep(POLL);
    }

    // "Approve once" for a job: it runs and shows under Jobs, where Cancel ends it.
    let sleep = json!({"project": "demo", "program": "sleep", "args": ["600"]});
    let waiting = call_async(port, &token, "start_job", sleep);
    let asks = format!("{TOKEN_LABEL} · run /usr/bin/sleep 600 — ");
    let menu =
        wait_menu(&host, "the job's approval", |m| m.find(&|l| l.starts_with(&asks)).is_some());
    let headline = menu.find(&|l| l.starts_with(&asks)).unwrap().label.clone();
    click(&host, &["Approvals (1)", &headline, "Approve once"]);
    let job = ok(&waiting.join().unwrap())["job_id"].as_str().unwrap().to_owned();
    let is_job = |l: &str| l.contains("sleep 600 · demo · ");
    let menu = wait_menu(&host, "the running job", |m| {
        m.labelled("Jobs (1 running)").is_some_and(|j| j.find(&is_job).is_some())
    });
    let line = menu.find(&is_job).unwrap().label.clone();
    click(&host, &["Jobs (1 running)", &line, "Cancel"]);
    wait_menu(&host, "no running job", |m| m.find(&|l| l.starts_with("Jobs (")).is_none());
    let status = ok(&call(port, &token, "job_status", json!({"job_id": job}))).clone();
    assert_eq!(status["state"], "cancelled", "{status}");

    // Pause with a command waiting: both ways of approving it are greyed out and say why,
    // Deny stays, and the gate refuses the assistant.
    let other = json!({"project": "demo", "program": "echo", "args": ["while paused"]});
    let waiting = call_async(port, &token, "run_command", other);
    let headline = format!("{TOKEN_LABEL} · run /usr/bin/echo 'while paused' — {ECHO_RISK} · demo");
    wait_approval(&host, &headline);
    click(&host, &[PAUSE]);
    let menu = wait_menu(&host, "the pause", |m| state(m) == PAUSED);
    assert!(usable(&menu, &[RESUME]) && menu.labelled(PAUSE).is_none(), "{}", menu.render());
    assert_eq!(
        entries(menu.labelled(&headline).unwrap()),
        [
            (COMMAND_CLASS, false),
            ("Approve once (resume AI access first)", false),
            ("Always allow this command (resume AI access first)", false),
            ("Deny", true),
            ("Details in Sluice…", true)
        ],
        "{}",
        menu.render()
    );
    gate_refuses(port, &token, "paused");
    click(&host, &[RESUME]);
    let menu = wait_menu(&host, "the resume", |m| state(m) == ON);
    assert!(usable(&menu, &["Approvals (1)", &headline, "Approve once"]), "{}", menu.render());

    // A pause made in a terminal reaches the menu too.
    sluice(&data, &["pause"]);
    wait_menu(&host, "`sluice pause`", |m| state(m) == PAUSED && usable(m, &[RESUME]));
    sluice(&data, &["resume"]);
    wait_menu(&host, "`sluice resume`", |m| state(m) == ON && usable(m, &[PAUSE]));

    // The emergency stop from the menu: what waits is denied, and the menu, the CLI and the
    // gate all say stopped.
    click(&host, &[STOP]);
    let message = refused(&waiting.join().unwrap(), "denied").to_owned();
    assert!(message.contains("emergency stop"), "{message}");
    let menu = wait_no_approvals(&host, STOPPED);
    assert!(usable(&menu, &[RESUME]), "{}", menu.render());
    assert!(!menu.labelled(STOP).unwrap().enabled, "stopped already: {}", menu.render());
    let doctor = sluice(&data, &["doctor"]);
    assert!(doctor.contains("AI access:     STOPPED"), "{doctor}");
    gate_refuses(port, &token, "stopped");

    // Resuming after a stop asks natively; Return keeps the safe answer (stay stopped).
    let resume_after_stop = |answer: Native| {
        click(&host, &[RESUME]);
        let deadline = Instant::now() + STEP;
        while !answer_native_now(&xvfb.display, "Resume AI access?", answer, deadline) {
            std::thread::sleep(POLL);
        }
    };
    resume_after_stop(Native::Return);
    // The dialog goes away in its answer's handler, after the answer took effect.
    let deadline = Instant::now() + STEP;
    while native_dialog_up(&xvfb.display, "Resume AI access?") {
        assert!(Instant::now() < deadline, "the resume dialog stayed up after Return");
        std::thread::sleep(POLL);
    }
    assert!(sluice(&data, &["doctor"]).contains("AI access:     STOPPED"), "Return resumed");
    assert_eq!(state(&host.menu(STEP).unwrap()), STOPPED);
    resume_after_stop(Native::Accept);
    wait_menu(&host, "the resume after the stop", |m| state(m) == ON && usable(m, &[STOP]));
    ok(&call(port, &token, "list_projects", json!({})));

    // Reach from the web: a hosted assistant asks to connect through the tunnel's port; the
    // tray shows who asks and the code its page shows, and Approve there lets the browser
    // continue with a code that buys a working remote token.
    let reach_port =
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let public = "tray-e2e.example:8443";
    let url = format!("https://{public}");
    let callback = "http://localhost:33418/callback";
    sluice(
        &data,
        &[
            "reach",
            "on",
            "--url",
            &url,
            "--port",
            &reach_port.to_string(),
            "--project",
            "demo",
            "--redirect",
            callback,
        ],
    );
    let through_tunnel = |method: &str, path: &str, headers: &str, body: &str| {
        let deadline = Instant::now() + STEP;
        loop {
            // The tray follows the setting within a second: wait for its listener.
            if let Ok(reply) = http(reach_port, method, path, public, headers, body) {
                return reply;
            }
            assert!(Instant::now() < deadline, "the tray never listened for the tunnel");
            std::thread::sleep(POLL);
        }
    };
    let registration = json!({"client_name": "Tray e2e", "redirect_uris": [callback]});
    let (status, _, body) = through_tunnel(
        "POST",
        "/oauth/register",
        "Content-Type: application/json\r\n",
        &registration.to_string(),
    );
    assert_eq!(status, 201, "{body}");
    let client_id =
        serde_json::from_str::<Value>(&body).unwrap()["client_id"].as_str().unwrap().to_owned();
    const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K9ubrDcJTrIGL5d0pm-Dohm5Fc";
    const CHALLENGE: &str = "1qye6EMSWDAvfQvD-4uK8RRGQWpfS33fdc4-oz8x2uY";
    let authorize = format!(
        "/oauth/authorize?response_type=code&client_id={client_id}&redirect_uri={}\
         &state=s1&code_challenge={CHALLENGE}&code_challenge_method=S256",
        "http%3A%2F%2Flocalhost%3A33418%2Fcallback"
    );
    let (status, head, _) = through_tunnel("GET", &authorize, "", "");
    assert_eq!(status, 303, "{head}");
    let consent = header(&head, "location");
    let (_, _, page) = through_tunnel("GET", &consent, "", "");
    let code = page.split("class=code>").nth(1).and_then(|r| r.split('<').next()).unwrap();
    // A registered name is a claim, and the tray says so.
    let asks = "\u{201C}Tray e2e\u{201D} (unverified name) asks to connect";
    let menu = wait_menu(&host, "the connection request", |m| {
        m.labelled("Connection requests (1)").is_some_and(|r| r.labelled(asks).is_some())
    });
    let code_line = format!("Code {code} — approve only if your browser shows it");
    assert_eq!(
        entries(menu.labelled(asks).unwrap()),
        [
            (code_line.as_str(), false),
            ("Returns to localhost:33418", false),
            ("Approve", true),
            ("Deny", true)
        ],
        "{}",
        menu.render()
    );
    let (status, _, _) = through_tunnel("GET", &consent, "", "");
    assert_eq!(status, 200, "the page waits: it decides nothing");
    click(&host, &["Connection requests (1)", asks, "Approve"]);
    wait_menu(&host, "no request", |m| m.find(&|l| l.starts_with("Connection requests")).is_none());
    let (status, head, _) = through_tunnel("GET", &consent, "", "");
    assert_eq!(status, 303, "{head}");
    let back = header(&head, "location");
    assert!(back.starts_with(&format!("{callback}?code=slco_")), "{back}");
    let code = back.split("code=").nth(1).unwrap().split('&').next().unwrap();
    let form = format!(
        "grant_type=authorization_code&code={code}&client_id={client_id}&code_verifier={VERIFIER}\
         &redirect_uri=http%3A%2F%2Flocalhost%3A33418%2Fcallback"
    );
    let (status, _, body) = through_tunnel(
        "POST",
        "/oauth/token",
        "Content-Type: application/x-www-form-urlencoded\r\n",
        &form,
    );
    assert_eq!(status, 200, "{body}");
    let remote =
        serde_json::from_str::<Value>(&body).unwrap()["access_token"].as_str().unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": {"name": "list_projects", "arguments": {}}});
    let mcp = format!(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Authorization: Bearer {remote}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
    );
    let (status, _, body) = through_tunnel("POST", "/mcp", &mcp, &list.to_string());
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("demo"), "{body}");
    let (status, _) = post(port, &remote, &list);
    assert_eq!(status, 401, "a remote token is refused on the local port");
    sluice(&data, &["reach", "off"]);

    // Quit from the menu ends the process cleanly.
    click(&host, &["Quit Sluice"]);
    let status = tray.wait_exit();
    assert!(status.success(), "the tray process exited with {status} on Quit");
}
