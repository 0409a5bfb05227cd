//! The harness: a private X server, tauri-driver (which runs WebKitWebDriver, which runs the
//! app), a WebDriver session, and lookups that poll with deadlines instead of sleeping.
//! tauri-driver sometimes resets a request ("SendRequest"): reads are retried until their
//! deadline; clicks are retried only after checking that the first one did not land.
//! Shared by the end-to-end test and the screenshots command (`examples/screenshots.rs`); the
//! tray test (`tray.rs`) uses only the X server and the native dialogs, without WebDriver.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;

/// How long any one step may take.
const STEP: Duration = Duration::from_secs(30);
/// Pause between two polls of the window.
const POLL: Duration = Duration::from_millis(100);

/// A process group killed when dropped (the X server; tauri-driver with its children).
pub struct Group(pub Child);

impl Drop for Group {
    fn drop(&mut self) {
        // The child leads its own process group (see `spawn_group`): kill exactly that group.
        if let Some(pgid) = rustix::process::Pid::from_raw(self.0.id() as i32) {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        let _ = self.0.wait();
    }
}

/// Starts `cmd` as the leader of a process group of its own, killed with the returned guard.
pub fn spawn_group(cmd: &mut Command) -> Group {
    cmd.process_group(0);
    Group(cmd.spawn().unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}")))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn tauri_driver() -> PathBuf {
    if let Some(p) = std::env::var_os("SLUICE_TAURI_DRIVER") {
        return p.into();
    }
    let in_cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .map(|c| c.join("bin/tauri-driver"))
        .filter(|p| p.is_file());
    in_cargo_home.unwrap_or_else(|| "tauri-driver".into())
}

/// One app at a time: on two cores, two WebKit windows (or a window and the tray with its bus)
/// starve each other past the tests' 30 s steps — a WebDriver session that never started, a
/// tray item that never registered. Each test holds its [`Turn`] for its whole run (across
/// awaits, which a `MutexGuard` must not be); a failing test gives it back as it unwinds.
pub fn one_at_a_time() -> Turn {
    while BUSY.compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst).is_err() {
        std::thread::sleep(Duration::from_millis(50));
    }
    Turn
}

static BUSY: AtomicBool = AtomicBool::new(false);

/// The right to run an app, until dropped.
pub struct Turn;

impl Drop for Turn {
    fn drop(&mut self) {
        BUSY.store(false, Ordering::SeqCst);
    }
}

fn transient(e: &WebDriverError) -> bool {
    let s = format!("{e:?}");
    // reqwest names a reset request "SendRequest" in its debug form and "error sending
    // request" in the message thirtyfour keeps.
    s.contains("SendRequest")
        || s.contains("error sending request")
        || s.contains("connection")
        || s.contains("Connection")
}

/// How a test answers a native dialog.
#[derive(Clone, Copy)]
pub enum Native {
    /// Tab to the button that allows, then Return.
    Accept,
    /// Return alone: the dialog's default, which must be the safe answer.
    Return,
    /// Closed, as with a window manager's close button.
    Close,
}

/// A private X server on a display it chose itself.
pub struct Xvfb {
    /// `:N`, for `DISPLAY`.
    pub display: String,
    pub group: Group,
}

impl Xvfb {
    pub fn start() -> Xvfb {
        // Xvfb picks a free display and tells us which on stdout.
        let mut xvfb = Command::new("Xvfb");
        xvfb.args(["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut group = spawn_group(&mut xvfb);
        let mut line = String::new();
        BufReader::new(group.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert!(line.trim().parse::<u32>().is_ok(), "Xvfb did not report a display: {line:?}");
        Xvfb { display: format!(":{}", line.trim()), group }
    }
}

/// Answers the native dialog titled `title` on `display` if it is up (`native_dialog.py`);
/// `false` when it is not up yet and `deadline` has not passed.
pub fn answer_native_now(display: &str, title: &str, answer: Native, deadline: Instant) -> bool {
    let answer = match answer {
        Native::Accept => "accept",
        Native::Return => "return",
        Native::Close => "close",
    };
    match native_dialog(display, title, answer) {
        Some(true) => true,
        Some(false) if Instant::now() < deadline => false,
        Some(false) => panic!("no native dialog {title:?} came up"),
        None => panic!("cannot answer the native dialog {title:?}"),
    }
}

/// Whether the native dialog titled `title` is up on `display` (touching nothing).
pub fn native_dialog_up(display: &str, title: &str) -> bool {
    native_dialog(display, title, "present")
        .unwrap_or_else(|| panic!("cannot look for the native dialog {title:?}"))
}

/// Runs `native_dialog.py`: `Some(true)` when it found the dialog (and did `action`),
/// `Some(false)` when no such dialog is up, `None` when it failed (its stderr shown).
fn native_dialog(display: &str, title: &str, action: &str) -> Option<bool> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/native_dialog.py");
    let out = Command::new(crate::client::python())
        .arg(&script)
        .args([title, action])
        .env("DISPLAY", display)
        .output()
        .expect("run python");
    match out.status.code() {
        Some(0) => Some(true),
        Some(3) => Some(false),
        _ => {
            eprintln!("native_dialog.py: {}", String::from_utf8_lossy(&out.stderr));
            None
        }
    }
}

pub struct Session {
    driver: Option<WebDriver>,
    pub mcp_port: u16,
    /// The X display the app runs on (for its native dialogs).
    pub display: String,
    // Dropped last: the app goes with the driver's process group.
    _driver_proc: Group,
    _xvfb: Group,
}

impl Session {
    pub async fn start(app: &Path, data_dir: &Path) -> Session {
        Session::start_with(app, data_dir, &[]).await
    }

    /// Starts the app with extra environment variables (e.g. a GTK theme).
    pub async fn start_with(app: &Path, data_dir: &Path, env: &[(&str, &str)]) -> Session {
        let Xvfb { display, group: xvfb } = Xvfb::start();

        let (port, native_port, mcp_port) = (free_port(), free_port(), free_port());
        let mut cmd = Command::new(tauri_driver());
        cmd.args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
            .env("DISPLAY", &display)
            .env("SLUICE_DATA_DIR", data_dir)
            .env("SLUICE_PORT", mcp_port.to_string())
            .env("SLUICE_SECRET_STORE", "file")
            .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
            // No session bus: otherwise GTK autolaunches a D-Bus daemon (and the accessibility
            // bus) through X11, and they outlive the test.
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}", data_dir.join("no-bus").display()),
            )
            .env("NO_AT_BRIDGE", "1")
            .envs(env.iter().copied())
            .stdout(Stdio::null());
        let driver_proc = spawn_group(&mut cmd);

        let deadline = Instant::now() + STEP;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "tauri-driver did not listen on {port}");
            tokio::time::sleep(POLL).await;
        }
        let caps: serde_json::Map<String, serde_json::Value> =
            serde_json::from_value(serde_json::json!({
                "browserName": "wry",
                "tauri:options": { "application": app },
            }))
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        let driver = loop {
            match WebDriver::new(&url, caps.clone()).await {
                Ok(d) => break d,
                Err(e) if Instant::now() < deadline && transient(&e) => {
                    tokio::time::sleep(POLL).await;
                }
                Err(e) => panic!("cannot start a WebDriver session: {e:?}"),
            }
        };
        Session { driver: Some(driver), mcp_port, display, _driver_proc: driver_proc, _xvfb: xvfb }
    }

    /// Answers the app's native dialog titled `title` once it has opened, as a user would with
    /// the keyboard (`native_dialog.py`; WebDriver cannot reach native dialogs).
    pub async fn answer_native(&self, title: &str, answer: Native) {
        let deadline = Instant::now() + STEP;
        while !answer_native_now(&self.display, title, answer, deadline) {
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls until the X11 clipboard holds exactly `want` (`""`: nothing), as another
    /// application would paste it (`clipboard.py`).
    pub async fn wait_clipboard(&self, want: &str) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/clipboard.py");
        let deadline = Instant::now() + STEP;
        let mut last = String::new();
        while Instant::now() < deadline {
            let out = Command::new(crate::client::python())
                .arg(&script)
                .env("DISPLAY", &self.display)
                .output()
                .expect("run python");
            last = String::from_utf8_lossy(&out.stdout).into_owned();
            if out.status.success() && last == want {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
        panic!("the clipboard holds {last:?}, not {want:?}");
    }

    fn d(&self) -> &WebDriver {
        self.driver.as_ref().unwrap()
    }

    /// Polls until the first element matching `by` has text containing `want`; returns it.
    pub async fn wait_text(&self, by: By, want: &str) -> String {
        let deadline = Instant::now() + STEP;
        let mut last = String::new();
        loop {
            if let Ok(els) = self.d().find_all(by.clone()).await {
                for el in els {
                    if let Ok(text) = el.text().await {
                        if text.contains(want) {
                            return text;
                        }
                        last = text;
                    }
                }
            }
            assert!(Instant::now() < deadline, "no {by:?} showing {want:?}; last seen: {last:?}");
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls until the page has drawn `view` with the app's state loaded (`main[data-view]`,
    /// which only Sluice's own script sets); on a timeout the failure shows what the window
    /// does show — an error page such as "asset not found" fails here.
    pub async fn wait_view(&self, view: &str) {
        let by = By::Css(format!("main[data-view={view}]"));
        let deadline = Instant::now() + STEP;
        while self.d().find(by.clone()).await.is_err() {
            if Instant::now() >= deadline {
                let shown = self.d().find(By::Tag("body")).await.ok();
                let shown = match shown {
                    Some(body) => body.text().await.unwrap_or_default(),
                    None => String::new(),
                };
                panic!("the window never drew the {view} view; it shows: {shown:?}");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls until the element's value starts with `prefix`; returns the value.
    pub async fn wait_value(&self, by: By, prefix: &str) -> String {
        let deadline = Instant::now() + STEP;
        loop {
            if let Ok(el) = self.d().find(by.clone()).await
                && let Ok(Some(v)) = el.prop("value").await
                && v.starts_with(prefix)
            {
                return v;
            }
            assert!(Instant::now() < deadline, "no {by:?} with a value starting {prefix:?}");
            tokio::time::sleep(POLL).await;
        }
    }

    async fn element(&self, by: &By) -> WebElement {
        let deadline = Instant::now() + STEP;
        loop {
            if let Ok(el) = self.d().find(by.clone()).await
                && el.is_displayed().await.unwrap_or(false)
                && el.is_enabled().await.unwrap_or(false)
            {
                return el;
            }
            assert!(Instant::now() < deadline, "no usable {by:?}");
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until a control is visible and enabled.
    pub async fn wait_usable(&self, by: By) {
        self.element(&by).await;
    }

    /// Clicks a control once it is visible and enabled.
    pub async fn click(&self, by: By) {
        let deadline = Instant::now() + STEP;
        loop {
            match self.element(&by).await.click().await {
                Ok(()) => return,
                Err(e) if transient(&e) && Instant::now() < deadline => {}
                Err(e) => panic!("cannot click {by:?}: {e:?}"),
            }
        }
    }

    /// Clicks a toggle until `check` shows `want` — without clicking twice when a reset
    /// request had in fact landed.
    pub async fn click_until(&self, by: By, check: By, want: &str) {
        let deadline = Instant::now() + STEP;
        loop {
            match self.element(&by).await.click().await {
                Ok(()) => break,
                Err(e) if transient(&e) && Instant::now() < deadline => {
                    if self.shows_now(&check, want).await {
                        return;
                    }
                }
                Err(e) => panic!("cannot click {by:?}: {e:?}"),
            }
        }
        self.wait_text(check, want).await;
    }

    /// Clicks `by` until `check` shows `want`, for an idempotent action whose control sits in
    /// a view that updates live: a click computed on one layout can land beside the control
    /// on the next, and is then clicked again (a second cancel of a job changes nothing).
    pub async fn click_again_until(&self, by: By, check: By, want: &str) {
        let deadline = Instant::now() + STEP;
        loop {
            if self.shows_now(&check, want).await {
                return;
            }
            if let Ok(el) = self.d().find(by.clone()).await {
                let _ = el.click().await;
            }
            assert!(
                Instant::now() < deadline,
                "no {check:?} showing {want:?} after clicking {by:?}"
            );
            tokio::time::sleep(POLL * 10).await;
        }
    }

    async fn shows_now(&self, by: &By, want: &str) -> bool {
        match self.d().find(by.clone()).await {
            Ok(el) => el.text().await.is_ok_and(|t| t.contains(want)),
            Err(_) => false,
        }
    }

    /// Replaces an input's text.
    pub async fn type_into(&self, by: By, text: &str) {
        let deadline = Instant::now() + STEP;
        loop {
            let el = self.element(&by).await;
            let done = async {
                el.clear().await?;
                el.send_keys(text).await?;
                el.prop("value").await
            }
            .await;
            match done {
                Ok(Some(v)) if v == text => return,
                Ok(_) => {}
                Err(e) if transient(&e) => {}
                Err(e) => panic!("cannot type into {by:?}: {e:?}"),
            }
            assert!(Instant::now() < deadline, "cannot type {text:?} into {by:?}");
        }
    }

    /// Saves a PNG of the window's content. WebKitWebDriver answers with the next frame the
    /// page paints, so a page that shows nothing changing would keep it waiting: a pixel in a
    /// corner flickers between two invisible opacities while the picture is taken.
    pub async fn screenshot(&self, path: &Path) {
        self.script(KEEP_PAINTING).await;
        self.take_png(path).await;
        self.script(STOP_PAINTING).await;
    }

    async fn take_png(&self, path: &Path) {
        let deadline = Instant::now() + STEP;
        loop {
            match self.d().screenshot_as_png().await {
                Ok(png) => {
                    std::fs::write(path, png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    return;
                }
                Err(e) if transient(&e) && Instant::now() < deadline => {
                    tokio::time::sleep(POLL).await;
                }
                Err(e) => panic!("cannot take a screenshot: {e:?}"),
            }
        }
    }

    /// Runs a script in the window (for the screenshots: scrolling, resetting the focus).
    pub async fn script(&self, js: &str) {
        let deadline = Instant::now() + STEP;
        loop {
            match self.d().execute(js, Vec::new()).await {
                Ok(_) => return,
                Err(e) if transient(&e) && Instant::now() < deadline => {
                    tokio::time::sleep(POLL).await;
                }
                Err(e) => panic!("cannot run a script: {e:?}"),
            }
        }
    }

    /// Runs a script in the window and returns its value (for the benchmark's timestamps).
    pub async fn eval(&self, js: &str) -> serde_json::Value {
        let deadline = Instant::now() + STEP;
        loop {
            match self.d().execute(js, Vec::new()).await {
                Ok(ret) => return ret.json().clone(),
                Err(e) if transient(&e) && Instant::now() < deadline => {
                    tokio::time::sleep(POLL).await;
                }
                Err(e) => panic!("cannot run a script: {e:?}"),
            }
        }
    }

    pub async fn quit(mut self) {
        if let Some(d) = self.driver.take() {
            let _ = d.quit().await;
        }
    }
}

const KEEP_PAINTING: &str = "if (!window.__sluicePaint) { \
    const d = document.createElement('div'); \
    d.style.cssText = 'position:fixed;right:0;bottom:0;width:1px;height:1px;background:#808080;pointer-events:none;opacity:0.01'; \
    document.body.appendChild(d); let on = false; \
    window.__sluicePaint = { d, t: setInterval(() => { on = !on; d.style.opacity = on ? '0.02' : '0.01'; }, 40) }; }";

const STOP_PAINTING: &str = "if (window.__sluicePaint) { \
    clearInterval(window.__sluicePaint.t); window.__sluicePaint.d.remove(); window.__sluicePaint = null; }";

/// A button with exactly this text inside `scope` (an XPath step such as `nav` or
/// `section[@aria-label='Tokens']`).
pub fn by_text(scope: &str, text: &str) -> By {
    By::XPath(format!("//{scope}//button[normalize-space()='{text}']"))
}
