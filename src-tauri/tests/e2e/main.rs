//! The real app in WebKit, end to end: Xvfb, tauri-driver and WebKitWebDriver drive the built
//! app (UI embedded); the official Python MCP SDK is the assistant. The test authorizes a
//! project through the path field, creates a token in the window and reads it from the result
//! panel, uses it from the client, pauses from the window (the client is refused with 503 and
//! `paused`), and resumes. Then approvals: the project is made read-write in the window (deletes
//! ask, the default the window shows), the client's `delete_path` waits, the window shows the
//! exact path and the Approve click lets it run; a second delete is denied with a reason,
//! which the client receives. Then jobs: the project is switched to execution `any`, the client
//! starts a job, the user approves it, the Jobs view shows it running with its live log, and the
//! user cancels it from the window; a terminal job the assistant types into shows as a live
//! read-only session, and a dev server's link opens in the default browser (`live.rs`). An
//! exact command approved with "Always allow" runs again without asking until the user removes
//! the rule from the project. Then the emergency stop:
//! the client is refused with `stopped` until the user resumes. Then one-click Connect for
//! Cursor against the app's temporary home folder (`connect.rs`), and reach from the web turned
//! on, a connection request made over its real port approved, and reach turned off
//! (`reach.rs`). Every step asserts on what the window shows.
//!
//! The window follows changes made from the CLI while it is open (`follow.rs`).
//!
//! The tray menu has a test of its own (`tray.rs`): the tray process under a stand-in
//! desktop panel on a private D-Bus (`tray_host.rs`), its menu read and clicked over D-Bus.
//!
//! Needs: `tauri-driver` (PATH or ~/.cargo/bin), `WebKitWebDriver`, `Xvfb`, and the Python SDK
//! in `SLUICE_TEST_PYTHON` — `cargo xtask test` installs all of them and builds `ui/dist` first.

// Xvfb, tauri-driver and WebKitWebDriver: Linux only.
#![cfg(target_os = "linux")]

mod client;
mod connect;
mod driver;
mod follow;
mod live;
mod reach;
mod tray;
mod tray_host;

use std::path::{Path, PathBuf};

use client::{Pending, client, client_step, start_job, start_job_argv};
use driver::{Native, Session, by_text};
use thirtyfour::By;

/// The title of the native dialog that confirms widening a project's access.
const WIDEN: &str = "Sluice — widen access?";
const AUTHORIZE: &str = "Sluice — authorize a folder?";

/// The job the assistant starts: lines over a few seconds, then on until cancelled.
const TICKS: &str = "i=0; while [ $i -lt 900 ]; do i=$((i+1)); echo \"tick $i\"; sleep 0.2; done";

/// The window as a user first sees it: the page embedded in this very binary, drawn. `cargo
/// xtask run --check` runs this test against the optimized build `cargo xtask run` starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_opens_on_the_projects_view() {
    let _turn = crate::driver::one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let app = Path::new(env!("CARGO_BIN_EXE_sluice-app"));
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let s = Session::start_with(app, &tmp.path().join("data"), &[("HOME", home.to_str().unwrap())])
        .await;
    s.wait_view("projects").await;
    s.wait_text(By::Css("main[data-view=projects] h1"), "Projects").await;
    s.wait_text(By::Css("[data-testid=state-pill]"), "AI access on").await;
    s.quit().await;
}

/// UI-02: a script in the page (as an injected link or markup would run) sends the window to
/// another page, opens one, submits a form to one and frames one: a local web server that
/// stands in for the attacker's page never receives a request, and the window stays on its
/// page. (WebKit may open a bare connection ahead of a clicked link; no request follows it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui02_the_window_never_leaves_its_own_page() {
    let _turn = crate::driver::one_at_a_time();
    use std::io::Read;
    use std::sync::{Arc, Mutex};
    let tmp = tempfile::tempdir().unwrap();
    let app = Path::new(env!("CARGO_BIN_EXE_sluice-app"));
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let evil = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}/", evil.local_addr().unwrap().port());
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = heard.clone();
    std::thread::spawn(move || {
        for mut conn in evil.incoming().flatten() {
            conn.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
            let mut buf = [0u8; 512];
            let n = conn.read(&mut buf).unwrap_or(0);
            if n > 0 {
                log.lock().unwrap().push(String::from_utf8_lossy(&buf[..n]).into_owned());
            }
        }
    });
    let s = Session::start_with(app, &tmp.path().join("data"), &[("HOME", home.to_str().unwrap())])
        .await;
    s.wait_view("projects").await;
    let own = s.eval("return location.href").await;
    for js in [
        format!("window.open('{url}open')"),
        format!(
            "const f = document.createElement('iframe'); f.src = '{url}frame'; document.body.appendChild(f)"
        ),
        format!(
            "const a = document.createElement('a'); a.href = '{url}link'; document.body.appendChild(a); a.click()"
        ),
        format!(
            "const f = document.createElement('form'); f.action = '{url}form'; f.method = 'post'; document.body.appendChild(f); f.submit()"
        ),
        format!("location.href = '{url}location'"),
    ] {
        s.script(&js).await;
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        assert_eq!(*heard.lock().unwrap(), Vec::<String>::new(), "a request left after: {js}");
        assert_eq!(s.eval("return location.href").await, own, "the window left its page: {js}");
    }
    s.wait_text(By::Css("main[data-view=projects] h1"), "Projects").await;
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_token_client_pause_resume_approvals_jobs_stop() {
    let _turn = crate::driver::one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let folder: PathBuf = tmp.path().join("e2e-app");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("README.md"), "# e2e\nhello from the window test\n").unwrap();
    let folder = std::fs::canonicalize(&folder).unwrap();
    let data = tmp.path().join("data");

    // The app's home folder, where Connect finds Cursor's config.
    let home = tmp.path().join("home");
    let cursor = connect::cursor_home(&home);
    let config = home.join(".config");
    let opened = tmp.path().join("browser-opened");
    live::stand_in_browser(&home, &config, &opened);

    let app = Path::new(env!("CARGO_BIN_EXE_sluice-app"));
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
        // A copied token leaves the clipboard after 2 s instead of a minute (debug builds).
        ("SLUICE_CLIPBOARD_CLEAR_SECS", "2"),
    ];
    let s = Session::start_with(app, &data, &env).await;
    let url = format!("http://127.0.0.1:{}/mcp", s.mcp_port);

    // The window is up, AI access is on, and a first-time user sees the checklist.
    s.wait_view("projects").await;
    s.wait_text(By::Css("[data-testid=state-pill]"), "AI access on").await;
    s.wait_text(By::Css("section[aria-label='Getting started']"), "Authorize a project").await;

    // Authorize the folder through the path field (WebDriver cannot drive the native picker).
    s.click(By::XPath("//section[@aria-label='Projects']//div[@class='section-head']/button"))
        .await;
    s.type_into(
        By::Css("form[aria-label='Authorize a folder'] input[name=path]"),
        &folder.to_string_lossy(),
    )
    .await;
    s.type_into(By::Css("form[aria-label='Authorize a folder'] input[name=name]"), "e2e-app").await;
    // Authorizing is confirmed in a native dialog (UI-04): closing it authorizes nothing.
    s.click(By::Css("form[aria-label='Authorize a folder'] button[type=submit]")).await;
    s.answer_native(AUTHORIZE, Native::Close).await;
    s.wait_text(By::Css("form[aria-label='Authorize a folder'] .error"), "nothing changed").await;
    let rows = s.eval("return document.querySelectorAll('[data-testid=project-row]').length").await;
    assert_eq!(rows, serde_json::json!(0), "a cancelled authorization added a project");
    s.click(By::Css("form[aria-label='Authorize a folder'] button[type=submit]")).await;
    s.answer_native(AUTHORIZE, Native::Accept).await;
    let row = s.wait_text(By::Css("[data-testid=project-row]"), "e2e-app").await;
    assert!(row.contains("Available") && row.contains("Read-only") && row.contains("Off"), "{row}");

    // Create a token in the window and read it from the result panel.
    s.click(by_text("nav", "Tokens")).await;
    s.click(By::XPath("//section[@aria-label='Tokens']//div[@class='section-head']/button")).await;
    s.type_into(By::Css("form[aria-label='New token'] input[name=label]"), "e2e assistant").await;
    // A new token is `review` unless chosen: this one deletes a file and runs jobs, so `agent`.
    s.click(By::Css("form[aria-label='New token'] select[aria-label=Profile] option[value=agent]"))
        .await;
    s.click(By::Css("form[aria-label='New token'] button[type=submit]")).await;
    let token = s.wait_value(By::Css("[data-testid=new-token]"), "slc_").await;
    assert_eq!(token.len(), 56, "{token}");
    // Copy puts it on the clipboard, as another application pastes it, and the app takes it
    // off again (after a minute; 2 s here).
    s.click(By::XPath(
        "//section[@aria-label='New token created']//button[normalize-space()='Copy']",
    ))
    .await;
    s.wait_clipboard(&token).await;
    s.wait_clipboard("").await;
    let panel = s.wait_text(By::Css("section[aria-label='New token created']"), "only time").await;
    for client in ["Claude Code", "Claude Desktop", "Cursor", "VS Code", "Codex"] {
        assert!(panel.contains(client), "no {client} tab in {panel}");
    }
    // The first tab's snippet is ready to paste: it carries the token and this app's port.
    let snippet = s.wait_text(By::Css("pre.snippet"), &token).await;
    assert!(snippet.contains(&format!("127.0.0.1:{}/mcp", s.mcp_port)), "{snippet}");
    let row = s.wait_text(By::Css("[data-testid=token-row]"), "e2e assistant").await;
    assert!(row.contains("All projects") && row.contains("never"), "{row}");

    // The assistant uses the token: it sees the project and reads the file.
    let out = client_step(&url, &token, "e2e-app", "ok");
    assert!(out.starts_with("OK ") && out.contains("hello from the window test"), "{out}");
    // The window's Activity shows the calls, attributed to the token's label.
    s.click(by_text("nav", "Activity")).await;
    let audit = s.wait_text(By::Css("section[aria-label='Activity'] table"), "read_file").await;
    assert!(audit.contains("e2e assistant") && audit.contains("list_projects"), "{audit}");
    s.wait_text(By::Css("[data-testid=chain-status]"), "Audit chain intact").await;

    // Pause from the window: the pill says so and the client's next call is refused.
    s.click_until(
        by_text("header", "Pause AI access"),
        By::Css("[data-testid=state-pill]"),
        "Paused",
    )
    .await;
    s.wait_text(By::Css("header"), "Resume AI access").await;
    assert_eq!(client_step(&url, &token, "e2e-app", "paused").trim(), "PAUSED");
    s.click(by_text("section[@aria-label='Activity']", "Refresh")).await;
    s.wait_text(By::Css("section[aria-label='Activity'] table"), "pause").await;

    // Resume: the pill turns back and the client works again.
    s.click_until(
        by_text("header", "Resume AI access"),
        By::Css("[data-testid=state-pill]"),
        "AI access on",
    )
    .await;
    let out = client_step(&url, &token, "e2e-app", "ok");
    assert!(out.contains("hello from the window test"), "{out}");

    // Approvals. Make the project read-write in the window; deletes ask (the default).
    s.click(by_text("nav", "Projects")).await;
    s.click(By::XPath("//tr[@data-testid='project-row']//button[normalize-space()='e2e-app']"))
        .await;
    let detail = "section[aria-label='Project e2e-app']";
    // Widening access asks in a native dialog, which the page's script cannot answer (UI-04):
    // its default (Return) changes nothing; allowing takes a Tab to that button.
    s.click(By::Css(format!("{detail} input[value='read-write']"))).await;
    s.answer_native(WIDEN, Native::Return).await;
    s.wait_text(By::Css(format!("{detail} .error")), "nothing changed").await;
    let row = s.wait_text(By::Css("[data-testid=project-row]"), "Read-only").await;
    assert!(row.contains("e2e-app"), "{row}");
    s.click(By::Css(format!("{detail} input[value='read-write']"))).await;
    s.answer_native(WIDEN, Native::Accept).await;
    let row = s.wait_text(By::Css("[data-testid=project-row]"), "Read-write").await;
    assert!(row.contains("e2e-app"), "{row}");
    let deletes = format!("{detail} [aria-label='Deleting or moving files'] [aria-pressed=true]");
    s.wait_text(By::Css(deletes), "Ask").await;

    // The assistant deletes a file: the call waits for the user.
    std::fs::write(folder.join("doomed.txt"), "bye\n").unwrap();
    let waiting =
        Pending::start(client(&url, &token, "e2e-app", "doomed.txt", "deleted"), "delete");
    s.wait_text(By::Css("[data-testid=approvals-badge]"), "1").await;
    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Approvals')]")).await;
    let card = s.wait_text(By::Css("[data-testid=approval-card]"), "delete doomed.txt").await;
    assert!(card.contains("e2e assistant wants to delete_path in e2e-app"), "{card}");
    assert!(card.contains("delete doomed.txt (4 B, restorable)"), "{card}");
    assert!(card.contains("Expires in"), "{card}");
    assert!(folder.join("doomed.txt").exists(), "nothing runs before the decision");
    // Approve once: enabled only after the inert period; the click lets the call complete.
    s.click(by_text("article[@data-testid='approval-card']", "Approve once")).await;
    assert_eq!(waiting.finish().await.trim(), "DELETED");
    assert!(!folder.join("doomed.txt").exists(), "the approved delete ran");
    let decided = s.wait_text(By::Css("[data-testid=decision-row]"), "Approved").await;
    assert!(decided.contains("local user (window)") && decided.contains("doomed.txt"), "{decided}");
    s.wait_text(By::Css("section[aria-label='Approvals']"), "No approvals waiting").await;

    // A second delete, denied in the window with a reason that reaches the assistant.
    std::fs::write(folder.join("keep.txt"), "stay\n").unwrap();
    let reason = "keep that file, please";
    let mut cmd = client(&url, &token, "e2e-app", "keep.txt", "denied");
    cmd.args(["--reason", reason]);
    let waiting = Pending::start(cmd, "denied delete");
    let card = s.wait_text(By::Css("[data-testid=approval-card]"), "delete keep.txt").await;
    assert!(card.contains("e2e assistant"), "{card}");
    s.type_into(By::Css("[data-testid=approval-card] input[name=reason]"), reason).await;
    s.click(By::Css("[data-testid=approval-card][data-armed=true] button.danger")).await;
    let out = waiting.finish().await;
    assert!(out.starts_with("DENIED ") && out.contains(reason), "{out}");
    assert!(folder.join("keep.txt").exists(), "a denied delete does nothing");
    let denied = s.wait_text(By::Css("[data-testid=decision-row]"), reason).await;
    assert!(denied.contains("Denied") && denied.contains("keep.txt"), "{denied}");
    s.wait_text(By::Css("section[aria-label='Approvals']"), "No approvals waiting").await;

    // Jobs. The project may run any command; each run asks first.
    s.click(by_text("nav", "Projects")).await;
    s.click(By::XPath("//tr[@data-testid='project-row']//button[normalize-space()='e2e-app']"))
        .await;
    s.click(By::Css(format!("{detail} input[value='any']"))).await;
    s.answer_native(WIDEN, Native::Accept).await;
    s.wait_text(By::Css("[data-testid=project-row]"), "Any").await;
    let waiting = Pending::start(start_job(&url, &token, "e2e-app", TICKS), "start_job");
    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Approvals')]")).await;
    let card = s.wait_text(By::Css("[data-testid=approval-card]"), "tick").await;
    assert!(card.contains("e2e assistant wants to start_job in e2e-app"), "{card}");
    assert!(card.contains("sh -c"), "{card}");
    s.click(by_text("article[@data-testid='approval-card']", "Approve once")).await;
    let out = waiting.finish().await;
    let job = out.trim().strip_prefix("JOB ").unwrap_or_else(|| panic!("{out}")).to_owned();

    // The Jobs view shows it running; its log shows the lines as they come.
    s.wait_text(By::Css("[data-testid=jobs-badge]"), "1").await;
    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Jobs')]")).await;
    let row = s.wait_text(By::Css("[data-testid=job-row]"), "Running").await;
    assert!(row.contains("e2e-app") && row.contains("tick"), "{row}");
    s.click(By::XPath("//tr[@data-testid='job-row']//button[contains(., 'tick')]")).await;
    s.wait_text(By::Css("[data-testid=job-log]"), "tick 3\n").await;
    let log = s.wait_text(By::Css("[data-testid=job-log]"), "tick 8\n").await;
    assert!(log.starts_with("tick 1\ntick 2\n"), "{log}");
    let shot = tmp.path().join("jobs.png");
    s.screenshot(&shot).await;
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"), "a PNG of the window");

    // Cancel from the window, after confirming: the job ends as cancelled.
    s.click(by_text("section[@data-testid='job-detail']", "Cancel job…")).await;
    s.click(by_text("section[@data-testid='job-detail']", "Cancel job")).await;
    let row = s.wait_text(By::Css("[data-testid=job-row]"), "Cancelled").await;
    assert!(!row.contains("Running"), "{row}");
    let detail = s.wait_text(By::Css("[data-testid=job-detail]"), "Cancelled").await;
    assert!(detail.contains(&job), "the job the assistant started: {detail}");
    live::terminal_and_link(&s, &url, &token, "e2e-app", &opened).await;

    // Always allow: an exact command approved "always" in the window runs again without asking;
    // the project lists the rule, and removing it there makes the command ask again.
    let argv = ["echo", "always allowed"];
    let waiting = Pending::start(start_job_argv(&url, &token, "e2e-app", &argv), "start_job");
    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Approvals')]")).await;
    s.wait_text(By::Css("[data-testid=approval-card]"), "always allowed").await;
    // The card shows the command token by token: the program, then the one argument.
    let tokens = s.wait_text(By::Css("[data-testid=approval-command] li"), "always allowed").await;
    assert_eq!(tokens, "always allowed", "one argument with its space, not two");
    // And what it runs under: the project's network for commands (off in `any` mode) and the
    // confinement (Landlock here).
    let under = s.wait_text(By::Css("[data-testid=approval-confinement]"), "Network: off.").await;
    assert!(under.contains("Landlock"), "{under}");
    s.click(by_text("article[@data-testid='approval-card']", "Always allow this command")).await;
    let out = waiting.finish().await;
    assert!(out.starts_with("JOB "), "{out}");
    let again = Pending::start(start_job_argv(&url, &token, "e2e-app", &argv), "start_job");
    let out = again.finish().await;
    assert!(out.starts_with("JOB "), "the same command runs without asking: {out}");
    s.click(by_text("nav", "Projects")).await;
    s.click(By::XPath("//tr[@data-testid='project-row']//button[normalize-space()='e2e-app']"))
        .await;
    let rule = s.wait_text(By::Css("[data-testid=allow-rule]"), "always allowed").await;
    // The exact command, its program resolved as it runs (`/usr/bin/echo`).
    assert!(rule.contains("echo 'always allowed'"), "{rule}");
    s.click(By::Css("[data-testid=allow-rule] button")).await;
    s.wait_text(By::Css("[data-testid=allow-rules]"), "Every command asks first").await;
    let waiting = Pending::start(start_job_argv(&url, &token, "e2e-app", &argv), "start_job");
    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Approvals')]")).await;
    s.wait_text(By::Css("[data-testid=approval-card]"), "always allowed").await;
    s.click(by_text("article[@data-testid='approval-card']", "Approve once")).await;
    assert!(waiting.finish().await.starts_with("JOB "), "asked again once the rule was removed");

    // Emergency stop: one click in the window; the client is refused until the user resumes
    // (which asks first).
    s.click_until(
        by_text("header", "Emergency stop"),
        By::Css("[data-testid=state-pill]"),
        "Stopped",
    )
    .await;
    s.wait_text(By::Css("[data-testid=stopped-banner]"), "every AI request is refused").await;
    assert_eq!(client_step(&url, &token, "e2e-app", "stopped").trim(), "STOPPED");
    s.click(by_text("header", "Resume AI access")).await;
    s.click_until(
        by_text("div[@data-testid='resume-confirm']", "Resume"),
        By::Css("[data-testid=state-pill]"),
        "AI access on",
    )
    .await;
    let out = client_step(&url, &token, "e2e-app", "ok");
    assert!(out.contains("hello from the window test"), "{out}");

    // Settings: the confinement in force, and "Start at login" answered by the autostart plugin
    // through its permission (the box is enabled only once the plugin has answered).
    s.click(by_text("nav", "Settings")).await;
    s.wait_text(By::Css("[data-testid=confinement]"), "Landlock").await;
    s.wait_usable(By::Css("input[name=start-at-login]")).await;
    // Ticking it writes the login item that starts this very binary (in the test's home, as an
    // installed app does in the user's), and unticking removes it.
    let autostart = config.join("autostart");
    let login_item = || {
        std::fs::read_dir(&autostart)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "desktop"))
    };
    s.click(By::Css("input[name=start-at-login]")).await;
    // The plugin creates the file, then writes it: wait for the whole entry.
    let entry = poll_until(|| {
        let text = std::fs::read_to_string(login_item()?).ok()?;
        let exec_line_done = text.split_once("Exec=").is_some_and(|(_, rest)| rest.contains('\n'));
        exec_line_done.then_some(text)
    })
    .await;
    let exec = entry.lines().find_map(|l| l.strip_prefix("Exec=")).unwrap_or_default();
    assert!(exec.contains(app.to_str().unwrap()), "the login item starts the app: {entry}");
    // At login Sluice starts in the tray: no window, so no WebKit processes either.
    assert!(exec.ends_with(" --hidden"), "the login item starts the app hidden: {entry}");
    s.click(By::Css("input[name=start-at-login]")).await;
    poll_until(|| login_item().is_none().then_some(())).await;

    connect::connect_and_disconnect_cursor(&s, &cursor).await;

    // Reach from the web: on from Settings, a connection over the tunnel's port approved in the
    // window, then off (`reach.rs`).
    reach::on_approve_off(&s, "e2e-app").await;

    // One Sluice per data folder: a second launch asks the first to show its window and exits,
    // and the first keeps serving.
    let mut second = std::process::Command::new(app)
        .env("DISPLAY", &s.display)
        .env("SLUICE_DATA_DIR", &data)
        .env("SLUICE_PORT", s.mcp_port.to_string())
        .env("SLUICE_SECRET_STORE", "file")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = poll_until(|| second.try_wait().unwrap()).await;
    assert!(status.success(), "a second launch exits quietly: {status}");
    s.wait_text(By::Css("[data-testid=state-pill]"), "AI access on").await;
    client_step(&url, &token, "e2e-app", "ok");

    s.quit().await;
}

/// Polls `f` until it yields a value (files the app writes in the background).
async fn poll_until<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "the app did not write what it should");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
