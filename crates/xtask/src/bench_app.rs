//! `cargo xtask bench app`: the desktop app's start and memory, beside the smallest Tauri 2 app
//! (`src-tauri/examples/minimal.rs`: one window, one button) built with the same Tauri and
//! measured the same way in the same run.
//!
//! Both run release builds under Xvfb with WebKit's compositing off (as the end-to-end test
//! runs them) and no session bus. Memory is the proportional set size (PSS) of the app's
//! process and every process below it (WebKit's web and network processes), so pages shared
//! between them count once. "Window closed" is a real close request (`WM_DELETE_WINDOW`, what a
//! window manager sends when the user clicks ×), after which Sluice keeps running in the tray;
//! "started at login" is the app started as its login item starts it (`--hidden`), the window
//! never opened. "Window open" is measured only after the page has said it drew the Projects
//! view (`window_shown`, logged by the tray), so an error page cannot pass for the window.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::{deps, sh};

pub const HEADING: &str = "## Desktop app";

/// How many times each app is started; medians are reported.
const RUNS: usize = 5;
/// Time for a window to finish loading and settle before memory is read.
const SETTLE: Duration = Duration::from_secs(5);

pub fn run(root: &Path, target: &Path) -> Result<String> {
    // The approval benchmark drives the window like the end-to-end test: tauri-driver, the
    // Python MCP SDK.
    let env = deps::install(root)?;
    crate::build_ui(root)?;
    sh(Command::new("cargo")
        .args(["build", "--release", "--locked", "-p", "sluice-app"])
        .args(crate::APP_FEATURES)
        .args(["--bin", "sluice-app", "--bin", "sluice-tray"])
        .args(["--example", "minimal", "--example", "bench_approval"]))?;
    let python = deps::python(root)?;
    let app = target.join("release/sluice-app");
    let minimal = target.join("release/examples/minimal");
    let work = target.join(format!("xtask/bench-app-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let xvfb = Xvfb::start()?;

    let (mut ready, mut open, mut closed, mut peer) = (vec![], vec![], vec![], vec![]);
    let mut login = vec![];
    let sluice_cmd = |data: &Path| -> Result<Command> {
        let mut cmd = Command::new(&app);
        cmd.env("SLUICE_DATA_DIR", data)
            .env("SLUICE_PORT", free_port()?.to_string())
            .env("SLUICE_SECRET_STORE", "file")
            .env("SLUICE_LOG", "sluice_tray=info,sluice_ipc=info");
        Ok(cmd)
    };
    for i in 0..RUNS {
        let data = work.join(format!("data-{i}"));
        std::fs::create_dir_all(&data)?;
        let mut cmd = sluice_cmd(&data)?;
        let started = Instant::now();
        let mut sluice = xvfb.spawn(&mut cmd, &data)?;
        ready.push(wait_for_line(&mut sluice, &["tray ready"], started)?);
        wait_for_line(&mut sluice, &["window shows the view", "projects"], started)?;
        wait_for_webkit(sluice.child.id(), true)?;
        std::thread::sleep(SETTLE);
        open.push(pss_tree(sluice.child.id()));
        sh(Command::new(&python)
            .arg(root.join("tests/bench/close_window.py"))
            .arg("Sluice")
            .env("DISPLAY", &xvfb.display))?;
        wait_for_webkit(sluice.child.id(), false)?;
        std::thread::sleep(SETTLE);
        if sluice.child.try_wait()?.is_some() {
            bail!("Sluice exited when its window closed; it should stay in the tray");
        }
        closed.push(pss_tree(sluice.child.id()));
        drop(sluice);

        // As the login item starts it: tray only, the window never opened.
        let mut sluice = xvfb.spawn(sluice_cmd(&data)?.arg("--hidden"), &data)?;
        wait_for_line(&mut sluice, &["tray ready"], Instant::now())?;
        std::thread::sleep(SETTLE);
        login.push(pss_tree(sluice.child.id()));
        drop(sluice);

        let mut peer_cmd = Command::new(&minimal);
        let minimal = xvfb.spawn(&mut peer_cmd, &data)?;
        wait_for_webkit(minimal.child.id(), true)?;
        std::thread::sleep(SETTLE);
        peer.push(pss_tree(minimal.child.id()));
        drop(minimal);
    }
    let _ = std::fs::remove_dir_all(&work);
    drop(xvfb);

    let approvals = crate::bench_util::output(
        Command::new(target.join("release/examples/bench_approval"))
            .arg("--app")
            .arg(&app)
            .envs(env.vars.iter().map(|(k, v)| (k, v))),
    )?;
    let approvals: serde_json::Value =
        serde_json::from_str(approvals.lines().last().context("bench_approval printed nothing")?)?;
    let mut shown: Vec<i64> = approvals["approval_to_window_ms"]
        .as_array()
        .context("approval_to_window_ms")?
        .iter()
        .filter_map(serde_json::Value::as_i64)
        .collect();
    shown.sort();

    let mib = |kib: u64| kib as f64 / 1024.0;
    let (open, closed, peer, login) = (median(open), median(closed), median(peer), median(login));
    Ok(format!(
        "{HEADING}\n\nRelease builds under Xvfb, WebKit compositing off, median of {RUNS} starts. \
         Memory is PSS of the app and every process below it (WebKit's web and network \
         processes); the peer is the smallest Tauri 2 app (one window, one button, \
         `src-tauri/examples/minimal.rs`) built with the same Tauri.\n\n\
         | measure | value |\n|---|---:|\n\
         | start to tray ready | {:.0} ms |\n\
         | memory, window open | {:.1} MiB |\n\
         | memory, minimal Tauri app (window open) | {:.1} MiB |\n\
         | ratio to the minimal app | {:.2} |\n\
         | memory, window closed (Sluice in the tray) | {:.1} MiB |\n\
         | memory, started at login (`--hidden`: tray only, window never opened) | {:.1} MiB |\n\
         | approval registered → card in the window, median of {} | {} ms |\n\
         | same, slowest | {} ms |\n\n\
         The approval row: the official Python MCP SDK asks to delete a file; the engine's \
         record of the approval is compared with the moment the card appeared in the window's \
         document (a MutationObserver), through the engine event, the IPC to the webview and \
         the render (`src-tauri/examples/bench_approval.rs`).\n\n",
        median(ready).as_secs_f64() * 1e3,
        mib(open),
        mib(peer),
        open as f64 / peer as f64,
        mib(closed),
        mib(login),
        shown.len(),
        shown.get(shown.len() / 2).copied().unwrap_or_default(),
        shown.last().copied().unwrap_or_default(),
    ))
}

fn median<T: Ord + Copy>(mut v: Vec<T>) -> T {
    v.sort();
    v[v.len() / 2]
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// An Xvfb server on a display it picked itself; stopped on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Result<Xvfb> {
        deps::apt(&["xvfb"])?;
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start Xvfb")?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("Xvfb stdout")?).read_line(&mut line)?;
        let n: u32 = line.trim().parse().with_context(|| format!("Xvfb said {line:?}"))?;
        Ok(Xvfb { child, display: format!(":{n}") })
    }

    /// Starts an app on this display, as the end-to-end test does: no compositing, no session
    /// bus (GTK would otherwise start one, and the accessibility bus, that outlive the run).
    fn spawn(&self, cmd: &mut Command, data: &Path) -> Result<Running> {
        let child = cmd
            .env("DISPLAY", &self.display)
            .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
            .env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", data.join("no-bus").display()))
            .env("NO_AT_BRIDGE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {cmd:?}"))?;
        Ok(Running { child, lines: None })
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An app under measurement; killed, with whatever WebKit left, on drop.
struct Running {
    child: Child,
    /// The app's stderr, line by line, once something waits for a line.
    lines: Option<mpsc::Receiver<String>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let tree = descendants(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        for pid in tree {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

/// Waits for a line of the app's stderr containing every one of `needles`; returns the time
/// since `since`. A reader thread drains stderr meanwhile, so the app never blocks on a full
/// pipe.
fn wait_for_line(app: &mut Running, needles: &[&str], since: Instant) -> Result<Duration> {
    if app.lines.is_none() {
        let stderr = app.child.stderr.take().context("stderr")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                // After the wait, the rest is only drained.
                let _ = tx.send(line);
            }
        });
        app.lines = Some(rx);
    }
    let lines = app.lines.as_ref().context("stderr")?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if needles.iter().all(|n| line.contains(n)) => return Ok(since.elapsed()),
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => bail!("the app never logged {needles:?}"),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                bail!("the app exited before logging {needles:?}")
            }
        }
    }
}

/// Waits until a WebKit web process runs below `pid` (`present`) or none does.
fn wait_for_webkit(pid: u32, present: bool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let running = descendants(pid).into_iter().any(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.starts_with("WebKitWebProces"))
        });
        if running == present {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("WebKit's web process {}", if present { "never started" } else { "stayed" });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every live process below `root`, zombies excluded.
fn descendants(root: u32) -> Vec<u32> {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if let Some(ppid) = fields.get(1).and_then(|p| p.parse().ok()) {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let (mut out, mut todo) = (vec![], vec![root]);
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

/// PSS in KiB of `root` and every process below it.
fn pss_tree(root: u32) -> u64 {
    std::iter::once(root).chain(descendants(root)).map(pss_kib).sum()
}

fn pss_kib(pid: u32) -> u64 {
    let path = PathBuf::from(format!("/proc/{pid}/smaps_rollup"));
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
