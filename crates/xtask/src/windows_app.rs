//! The installed desktop app under Wine, the steps of the installer's check
//! ([`crate::windows_installer::check`]) that are about the app rather than `sluice.exe`: its
//! Start menu entry; `sluice-app.exe` started as at login (`--hidden`), becoming the tray
//! process, which runs the engine and serves MCP on the port it records; the uninstaller
//! refusing while it runs, with nothing removed; and the tray process stopped.
//!
//! Not shown here, and left to a Windows machine (the release workflow's build, the native CI
//! job): the window (Wine has no WebView2 runtime, so `sluice-app.exe --window` cannot draw),
//! the tray icon and its menu (no display), notifications and the native dialogs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::windows::{Built, wine_path, wine_program};
use crate::windows_check::{Shown, Sluice, first_calls, output_within};
use crate::windows_installer::{Place, UNINSTALL_KEY, host_path, reg_values, tool};

/// How long the tray process may take to record its port (a Wine start, then the engine's).
const TRAY_DEADLINE: Duration = Duration::from_secs(90);

/// How long `sluice-app.exe` may take to hand over to the tray process and exit.
const LAUNCH_DEADLINE: Duration = Duration::from_secs(60);

/// The Start menu entry as this machine names it: `%APPDATA%\…\Programs\Sluice.lnk`.
pub fn shortcut(built: &Built) -> Result<PathBuf> {
    let appdata = tool(built, &["cmd", "/c", "echo", "%APPDATA%"], &built.wine_bin)?;
    let windows = format!(r"{}\Microsoft\Windows\Start Menu\Programs\Sluice.lnk", appdata.trim());
    host_path(&built.prefix, &windows)
}

/// The Start menu entry exists and starts the installed `sluice-app.exe`.
pub fn shortcut_installed(built: &Built) -> Result<String> {
    let lnk = shortcut(built)?;
    let bytes = std::fs::read(&lnk).with_context(|| format!("read {}", lnk.display()))?;
    // A shell link keeps its target's path in ANSI and, in its string data, UTF-16.
    let utf16: Vec<u8> = "sluice-app.exe".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let names = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    if !names(b"sluice-app.exe") && !names(&utf16) {
        bail!("{} does not name sluice-app.exe", lnk.display());
    }
    Ok(format!("{} → sluice-app.exe", lnk.display()))
}

/// The tray process the installed app became, serving MCP.
pub struct Tray {
    port: u16,
    ready_in: Duration,
    tools: usize,
}

impl Shown for Tray {
    fn shown(&self) -> String {
        format!(
            "serving on 127.0.0.1:{} {} ms after the start, {} tools",
            self.port,
            self.ready_in.as_millis(),
            self.tools
        )
    }
}

/// Starts the installed `sluice-app.exe --hidden`, as a start at login does, with a data folder
/// of its own and a token made by the installed `sluice.exe`; waits for the tray process it
/// hands over to to record its port; then an MCP client's first calls to it.
pub fn start(built: &Built, place: &Place, work: &Path) -> Result<Tray> {
    let data = work.join("installed-app-data");
    let data_windows = wine_path(&data)?;
    let cli = format!(r"{}\sluice.exe", place.windows);
    let sluice = Sluice::new(built, cli.into(), data_windows.clone());
    let token = sluice.token("tray")?;

    let app = format!(r"{}\sluice-app.exe", place.windows);
    let mut launch = wine_program(built, app.as_ref())?;
    launch
        // What a start at login passes (sluice-ipc's `HIDDEN_ARG`): no window, which Wine
        // could not draw.
        .arg("--hidden")
        .env("SLUICE_DATA_DIR", &data_windows)
        .env("SLUICE_SECRET_STORE", "file")
        .env("SLUICE_PORT", "0")
        // The tray process inherits the launcher's standard handles and outlives it: pipes
        // here would stay open, and reading them to their end would wait for the tray.
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let status = wait_within(&mut launch, LAUNCH_DEADLINE, "sluice-app.exe --hidden")?;
    if !status.success() {
        bail!("sluice-app.exe --hidden exited with {status}");
    }
    let port = recorded_port(&data.join("engine.json"), started)?;
    let ready_in = started.elapsed();
    let (init, tools) = first_calls(port, &token, "xtask-windows-app-check")?;
    if init["serverInfo"]["name"] != "sluice" {
        bail!("initialize answered {init}");
    }
    Ok(Tray { port, ready_in, tools })
}

/// The port the tray process records once it serves, read from `engine.json` when it names a
/// port and was written after `since`.
fn recorded_port(file: &Path, since: Instant) -> Result<u16> {
    let deadline = since + TRAY_DEADLINE;
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            let port = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["port"].as_u64())
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p != 0);
            if let Some(port) = port {
                return Ok(port);
            }
        }
        if Instant::now() > deadline {
            bail!("{} named no port within {} s", file.display(), TRAY_DEADLINE.as_secs());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The installed uninstaller, run in place (`_?=`, so it neither copies itself nor returns
/// before it is done) while the tray process runs: it must refuse, and leave every file, the
/// uninstall key and the Start menu entry where they were.
pub fn refused_uninstall(built: &Built, place: &Place, installed: &[String]) -> Result<String> {
    let uninstaller = format!(r"{}\uninstall.exe", place.windows);
    let mut cmd = wine_program(built, uninstaller.as_ref())?;
    cmd.args(["/S", &format!("_?={}", place.windows)]);
    let out = output_within(&mut cmd, LAUNCH_DEADLINE, "the uninstaller")?;
    if out.status.success() {
        bail!("the uninstaller succeeded while sluice-tray.exe ran");
    }
    let left = names(&place.host)?;
    if left != installed {
        bail!("the folder held {installed:?}, now {left:?}");
    }
    if reg_values(built, UNINSTALL_KEY)?.is_none() {
        bail!("the uninstall key is gone");
    }
    if !shortcut(built)?.is_file() {
        bail!("the Start menu entry is gone");
    }
    Ok(format!("exited with {}; every file, the key and the entry stay", out.status))
}

/// The file names in `dir`, sorted.
pub fn names(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("read {}", dir.display()))?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    names.sort();
    Ok(names)
}

/// Ends the tray process as Windows' Task Manager would, and waits until its port is closed.
pub fn stop(built: &Built, tray: &Tray) -> Result<String> {
    end_tray(built)?;
    let deadline = Instant::now() + LAUNCH_DEADLINE;
    while std::net::TcpStream::connect(("127.0.0.1", tray.port)).is_ok() {
        if Instant::now() > deadline {
            bail!("127.0.0.1:{} still answers", tray.port);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(format!("127.0.0.1:{} closed", tray.port))
}

/// `taskkill /f /im sluice-tray.exe`: ends every tray process in the prefix.
pub fn end_tray(built: &Built) -> Result<String> {
    tool(built, &["taskkill", "/f", "/im", "sluice-tray.exe"], &built.wine_bin)
}

/// Waits for `cmd` to exit, killing it past `deadline`.
fn wait_within(
    cmd: &mut Command,
    deadline: Duration,
    what: &str,
) -> Result<std::process::ExitStatus> {
    let mut child = cmd.spawn().context("cannot start Wine")?;
    let until = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{what} did not end in {} s", deadline.as_secs());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
