//! `cargo xtask windows installer`: the per-user Windows installer of the `sluice`
//! command-line tool, made on this Debian machine with Debian's NSIS from
//! `packaging/windows/sluice.nsi`; and its check under Wine, the last steps of `cargo xtask
//! windows check`.
//!
//! The script is written by hand rather than made by Tauri's bundler: Tauri's NSIS template
//! calls plugins (`nsis_tauri_utils` and others) that Debian's NSIS 3.08 does not ship and the
//! bundler downloads. This one uses NSIS's own instructions and headers only. Releases ship
//! Tauri's installers, built on Windows by the release workflow (the desktop app with the CLI
//! beside it); this one holds `sluice.exe` alone, and is what this machine can build and test
//! end to end.
//!
//! The check installs it silently (`/S`) into the Wine prefix of `cargo xtask windows`, looks
//! at what it left (the files, the uninstall key, the user's PATH), runs the installed exe
//! (`sluice --version` found through PATH, then `serve` answering an MCP client), uninstalls it
//! with the `QuietUninstallString` it registered, and checks that what it added is gone and the
//! rest of PATH is as it was. Each run first removes what a failed run may have left and seeds
//! PATH afresh, so it can run any number of times.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::windows::{Built, wine_path, wine_program, wineserver};
use crate::windows_check::{Report, Serve, Shown, Sluice, first_calls, output_within};
use crate::{deps, sh};

/// Debian's NSIS (`makensis`, 3.08 in Debian 12).
const APT_PACKAGES: &[&str] = &["nsis"];

/// The installer's script and the icon it shows, in the repository.
const SCRIPT: &str = "packaging/windows/sluice.nsi";
const ICON: &str = "icons/icon.ico";

/// xtask's version is the workspace's (`version.workspace = true`), as is `sluice`'s.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the installer registers itself (not `…\Sluice`: Tauri's installer of the app registers
/// under its product name).
pub(crate) const UNINSTALL_KEY: &str =
    r"HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\Sluice (mingw)";

/// The user's environment, where the user's `Path` lives.
const ENVIRONMENT_KEY: &str = r"HKCU\Environment";

/// The user's PATH before the install: a plain entry, and one with a variable that Windows
/// expands when it builds a process's PATH. Both must come back exactly, unexpanded.
const SEEDED_PATH: &str = r"C:\sluice-check\bin;%USERPROFILE%\tools";

/// How long an install or uninstall under Wine may take.
const INSTALL_DEADLINE: Duration = Duration::from_secs(120);

/// How long one `reg` or `cmd` under Wine may take.
const TOOL_DEADLINE: Duration = Duration::from_secs(60);

/// What [`build`] made.
pub struct Installer {
    pub path: PathBuf,
    size: u64,
    took: Duration,
}

impl Installer {
    pub fn describe(&self) -> String {
        format!(
            "{} ({:.1} MB, made in {} s)",
            self.path.display(),
            self.size as f64 / 1e6,
            self.took.as_secs()
        )
    }
}

impl Shown for Installer {
    fn shown(&self) -> String {
        self.describe()
    }
}

/// Installs NSIS if it is missing.
pub fn prepare() -> Result<()> {
    deps::apt(APT_PACKAGES)
}

/// Makes the installer of the built programs, beside them in the target folder.
pub fn build(root: &Path, built: &Built) -> Result<Installer> {
    prepare()?;
    let dir = built.exe.parent().context("the exe has no folder")?;
    let path = dir.join(format!("sluice_{VERSION}_x64-mingw-setup.exe"));
    // A stale installer must never pass for a new one.
    if path.exists() {
        std::fs::remove_file(&path).with_context(|| format!("remove {}", path.display()))?;
    }
    let define = |name: &str, value: &Path| -> Result<String> {
        let value = value.to_str().with_context(|| format!("not UTF-8: {}", value.display()))?;
        Ok(format!("-D{name}={value}"))
    };
    // LZMA takes a core for a quarter minute over the optimized programs (about 40 MB each),
    // and minutes over the unoptimized ones `cargo xtask test` builds, which zlib packs fast.
    let compressor = if built.profile == crate::windows::PROFILE { "zlib" } else { "lzma" };
    let started = Instant::now();
    // `nice`: benchmarks may run on the machine.
    sh(Command::new("nice")
        .args(["-n", "10", "makensis", "-V2", "-WX", "-NOCD", "-INPUTCHARSET", "UTF8"])
        .arg(format!("-DVERSION={VERSION}"))
        .arg(format!("-DCOMPRESSOR={compressor}"))
        .arg(format!("-DVERSION4={}", version4(VERSION)?))
        .arg(define("EXE", &built.exe)?)
        .arg(define("APP", &built.app)?)
        .arg(define("TRAY", &built.tray)?)
        .arg(define("LOADER", &built.loader)?)
        .arg(define("ICON", &root.join(ICON))?)
        .arg(define("OUTFILE", &path)?)
        .arg(root.join(SCRIPT)))?;
    let size = std::fs::metadata(&path)
        .with_context(|| format!("makensis succeeded but {} is missing", path.display()))?
        .len();
    Ok(Installer { path, size, took: started.elapsed() })
}

/// `0.1.0` (or `0.1.0-beta.1`) as the four numbers a Windows version resource holds.
fn version4(version: &str) -> Result<String> {
    let core = version.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<u16> = core
        .split('.')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .with_context(|| format!("version {version:?} is not numbers"))?;
    if parts.len() != 3 {
        bail!("version {version:?} is not major.minor.patch");
    }
    Ok(format!("{}.{}.{}.0", parts[0], parts[1], parts[2]))
}

/// The install folder, as Windows and as this machine name it.
pub(crate) struct Place {
    pub(crate) windows: String,
    pub(crate) host: PathBuf,
}

impl Shown for Place {
    fn shown(&self) -> String {
        format!("{} (PATH {SEEDED_PATH})", self.windows)
    }
}

/// The installer's steps, appended to `report`; `work` is the check's scratch folder.
pub fn check(report: &mut Report, root: &Path, built: &Built, work: &Path) {
    let Some(installer) = report.step("installer: makensis", || build(root, built)) else {
        return;
    };
    let keep = KeepWine::start(built);
    let Some(place) = report.step("installer: no earlier install, PATH seeded", || fresh(built))
    else {
        return;
    };
    let installed = report.step("installer /S", || {
        let started = Instant::now();
        let out = output_within(
            wine_program(built, installer.path.as_os_str())?.arg("/S"),
            INSTALL_DEADLINE,
            "the installer",
        )?;
        if !out.status.success() {
            bail!("it exited with {}", out.status);
        }
        Ok(format!("exit 0 in {} ms", started.elapsed().as_millis()))
    });
    if installed.is_none() {
        return;
    }
    let files = report.step("installed: files", || installed_files(built, &place));
    report.step("installed: Start menu entry", || crate::windows_app::shortcut_installed(built));
    let key = report.step("installed: uninstall key", || uninstall_key(built, &place));
    report.step("installed: the folder on the user's PATH, once", || {
        let want = format!("{SEEDED_PATH};{}", place.windows);
        expect_path(built, Some(&want))
    });
    // Debian's Wine 8.0 lacks `ProcessPrng` ([`crate::windows`]), so the installed exe starts
    // only with the stand-in beside it. The installer does not carry it (Windows has the
    // function): the check puts it there, and takes it away before the uninstall, which
    // removes only what the installer wrote and would leave a folder still holding it.
    let shim = place.host.join("bcryptprimitives.dll");
    report.step("installed: ProcessPrng stand-in put beside the programs (Wine 8.0 only)", || {
        std::fs::copy(built.wine_bin.join("bcryptprimitives.dll"), &shim)?;
        Ok(shim.display().to_string())
    });
    report.step("sluice --version, found through the user's PATH (cmd /c)", || {
        // Wine builds a new process's PATH from the registry (the system's, then the user's), as
        // Windows does for a new shell: `cmd` finds `sluice` only if the install put it there.
        // Run from the check's folder, which holds no sluice.exe.
        let out = tool(built, &["cmd", "/c", "sluice", "--version"], work)?;
        let want = format!("sluice {VERSION}");
        if out.trim() != want {
            bail!("{:?}, not {want:?}", out.trim());
        }
        Ok(want)
    });
    report.step("installed sluice.exe serve: initialize, tools/list", || {
        serve_installed(built, &place, work)
    });
    app_steps(report, built, &place, work, files.as_ref());
    report.step("installed: stand-in removed", || {
        std::fs::remove_file(&shim)?;
        Ok("gone".to_owned())
    });
    let Some(Key(values)) = key else { return };
    drop(keep);
    report.step("uninstall: QuietUninstallString", || uninstall(built, &values));
    report.step("uninstalled: the folder is gone", || {
        if place.host.exists() {
            let left = crate::windows_app::names(&place.host)?;
            bail!("{} still holds {left:?}", place.host.display());
        }
        Ok(place.windows.clone())
    });
    report.step("uninstalled: the key is gone", || match reg_values(built, UNINSTALL_KEY)? {
        None => Ok("no such key".to_owned()),
        Some(values) => bail!("it still holds {values:?}"),
    });
    report.step("uninstalled: PATH as seeded", || expect_path(built, Some(SEEDED_PATH)));
    report.step("uninstalled: the Start menu entry is gone", || {
        let lnk = crate::windows_app::shortcut(built)?;
        if lnk.exists() {
            bail!("{} is still there", lnk.display());
        }
        Ok("gone".to_owned())
    });
    // Leave the prefix's user environment as the rest of the check found it: no Path.
    if let Err(e) = reg(built, &["delete", ENVIRONMENT_KEY, "/v", "Path", "/f"]) {
        println!("note: the seeded PATH was not removed: {e:#}");
    }
}

/// The desktop app, installed ([`crate::windows_app`]): started as at login it becomes the
/// tray process and serves MCP, the uninstaller refuses while it runs, and it is stopped.
fn app_steps(
    report: &mut Report,
    built: &Built,
    place: &Place,
    work: &Path,
    files: Option<&Files>,
) {
    let tray = report.step(
        "installed app: sluice-app.exe --hidden becomes the tray process; initialize, tools/list",
        || crate::windows_app::start(built, place, work),
    );
    if let (Some(tray), Some(Files(installed))) = (&tray, files) {
        report.step("uninstall while the tray process runs: refused, nothing removed", || {
            let mut with_shim = installed.clone();
            with_shim.push("bcryptprimitives.dll".to_owned());
            with_shim.sort();
            crate::windows_app::refused_uninstall(built, place, &with_shim)
        });
        report.step("tray process ended (taskkill)", || crate::windows_app::stop(built, tray));
    } else {
        // Whatever the failed step left running must not hold the files for the uninstall.
        let _ = crate::windows_app::end_tray(built);
    }
}

/// The state a user who never installed Sluice has: no install folder and no uninstall key
/// (what an interrupted earlier run may have left is removed), and a PATH of their own.
fn fresh(built: &Built) -> Result<Place> {
    let local = tool(built, &["cmd", "/c", "echo", "%LOCALAPPDATA%"], &built.wine_bin)?;
    let windows = format!(r"{}\Programs\Sluice", local.trim());
    let host = host_path(&built.prefix, &windows)?;
    if host.exists() {
        std::fs::remove_dir_all(&host).with_context(|| format!("remove {}", host.display()))?;
    }
    if reg_values(built, UNINSTALL_KEY)?.is_some() {
        reg(built, &["delete", UNINSTALL_KEY, "/f"])?;
    }
    let seed = ["add", ENVIRONMENT_KEY, "/v", "Path", "/t", "REG_EXPAND_SZ", "/d", SEEDED_PATH];
    reg(built, &[&seed[..], &["/f"]].concat())?;
    expect_path(built, Some(SEEDED_PATH))?;
    Ok(Place { windows, host })
}

/// What the installer packs: each file's installed name and the built file.
fn packed(built: &Built) -> [(&'static str, &Path); 4] {
    [
        ("WebView2Loader.dll", &built.loader),
        ("sluice-app.exe", &built.app),
        ("sluice-tray.exe", &built.tray),
        ("sluice.exe", &built.exe),
    ]
}

/// The names of the files installed.
struct Files(Vec<String>);

impl Shown for Files {
    fn shown(&self) -> String {
        format!("{} (the built bytes)", self.0.join(", "))
    }
}

/// The install folder holds what was packed (the very bytes built) and the uninstaller,
/// nothing else.
fn installed_files(built: &Built, place: &Place) -> Result<Files> {
    let names = crate::windows_app::names(&place.host)?;
    let mut want: Vec<String> = packed(built).iter().map(|(name, _)| (*name).to_owned()).collect();
    want.push("uninstall.exe".to_owned());
    if names != want {
        bail!("the folder holds {names:?}, not {want:?}");
    }
    for (name, file) in packed(built) {
        if std::fs::read(place.host.join(name))? != std::fs::read(file)? {
            bail!("the installed {name} differs from the built one");
        }
    }
    Ok(Files(names))
}

/// The uninstall key's values, as `reg query` prints them.
struct Key(BTreeMap<String, (String, String)>);

impl Shown for Key {
    fn shown(&self) -> String {
        let get = |name: &str| self.0.get(name).map(|v| v.1.as_str()).unwrap_or_default();
        format!(
            "{} {}, {}, EstimatedSize {}",
            get("DisplayName"),
            get("DisplayVersion"),
            get("Publisher"),
            get("EstimatedSize")
        )
    }
}

/// The uninstall key holds what Windows' "Installed apps" shows and runs, and points at this
/// install.
fn uninstall_key(built: &Built, place: &Place) -> Result<Key> {
    let values = reg_values(built, UNINSTALL_KEY)?.context("no uninstall key")?;
    let uninstaller = format!(r#""{}\uninstall.exe""#, place.windows);
    let want = [
        ("DisplayName", "REG_SZ", "Sluice".to_owned()),
        ("DisplayVersion", "REG_SZ", VERSION.to_owned()),
        ("Publisher", "REG_SZ", "The Sluice authors".to_owned()),
        ("DisplayIcon", "REG_SZ", format!(r"{}\sluice-app.exe", place.windows)),
        ("InstallLocation", "REG_SZ", place.windows.clone()),
        ("UninstallString", "REG_SZ", uninstaller.clone()),
        ("QuietUninstallString", "REG_SZ", format!("{uninstaller} /S")),
        ("NoModify", "REG_DWORD", "0x1".to_owned()),
        ("NoRepair", "REG_DWORD", "0x1".to_owned()),
    ];
    for (name, kind, data) in want {
        match values.get(name) {
            Some((k, d)) if k == kind && *d == data => {}
            other => bail!("{name}: {other:?}, not ({kind}, {data:?})"),
        }
    }
    // In KB: at least what was packed, and not more than it and the uninstaller could take.
    let mut packed_kb = 0;
    for (_, file) in packed(built) {
        packed_kb += std::fs::metadata(file)?.len() / 1024;
    }
    let size = match values.get("EstimatedSize") {
        Some((k, d)) if k == "REG_DWORD" => {
            u64::from_str_radix(d.trim_start_matches("0x"), 16).context("EstimatedSize")?
        }
        other => bail!("EstimatedSize: {other:?}"),
    };
    if !(packed_kb..packed_kb + 1024).contains(&size) {
        bail!("EstimatedSize {size} KB for {packed_kb} KB of files");
    }
    Ok(Key(values))
}

/// The user's `Path` is `want` (None: no such value), and of Windows' type for it.
fn expect_path(built: &Built, want: Option<&str>) -> Result<String> {
    let values = reg_values(built, ENVIRONMENT_KEY)?.unwrap_or_default();
    let path = values.iter().find(|(name, _)| name.eq_ignore_ascii_case("Path")).map(|v| v.1);
    match (path, want) {
        (None, None) => Ok("no Path".to_owned()),
        (Some((kind, data)), Some(want)) if kind == "REG_EXPAND_SZ" && data == want => {
            Ok(format!("{kind} {data}"))
        }
        (got, want) => bail!("Path is {got:?}, not (REG_EXPAND_SZ, {want:?})"),
    }
}

/// The installed exe (by its Windows path) serving its own data folder, and an MCP client
/// making its first calls to it; the server is stopped at the end.
fn serve_installed(built: &Built, place: &Place, work: &Path) -> Result<String> {
    let exe = format!(r"{}\sluice.exe", place.windows);
    let sluice = Sluice::new(built, exe.into(), wine_path(&work.join("installed-data"))?);
    let token = sluice.token("installed")?;
    let server = Serve::start(&sluice)?;
    let (init, n) = first_calls(server.port, &token, "xtask-windows-installer-check")?;
    Ok(format!("{} {}, {n} tools", init["serverInfo"]["name"], init["serverInfo"]["version"]))
}

/// Runs the registered `QuietUninstallString` as Windows' "Installed apps" would, and waits
/// for it: NSIS's uninstaller copies itself into %TEMP% and returns at once while the copy
/// works (it could not delete its own exe otherwise), so the wait is for every process in the
/// prefix to end (`wineserver -w`; the check's servers are stopped by now).
fn uninstall(built: &Built, values: &BTreeMap<String, (String, String)>) -> Result<String> {
    let command = &values.get("QuietUninstallString").context("no QuietUninstallString")?.1;
    let (exe, args) = command
        .strip_prefix('"')
        .and_then(|rest| rest.split_once('"'))
        .with_context(|| format!("not a quoted program: {command}"))?;
    let started = Instant::now();
    let mut cmd = wine_program(built, exe.as_ref())?;
    cmd.args(args.split_whitespace());
    let out = output_within(&mut cmd, INSTALL_DEADLINE, "the uninstaller")?;
    if !out.status.success() {
        bail!("it exited with {}", out.status);
    }
    let waited = output_within(wineserver(built).arg("-w"), INSTALL_DEADLINE, "wineserver -w")?;
    if !waited.status.success() {
        bail!("wineserver -w exited with {}", waited.status);
    }
    Ok(format!("{command}: done in {} ms", started.elapsed().as_millis()))
}

/// A Wine process that only waits (`cmd /c pause` on a pipe never written), killed on drop.
/// While one runs, Wine keeps its own services up, and each `reg` or `cmd` starts in a tenth
/// of a second instead of about 2.5 s (measured): it saves some 20 s of the steps before the
/// uninstall, which must wait for every process in the prefix to end and so runs without it.
struct KeepWine(Option<Child>);

/// How long Wine may take to start the keeper from cold.
const KEEP_DEADLINE: Duration = Duration::from_secs(60);

impl KeepWine {
    /// Starts it and waits until it says it runs: a `cmd` started beside it while Wine itself
    /// was still starting hung for the whole deadline in one of the first two runs, so nothing
    /// else starts before. Never fails the check: without it the steps are only slower.
    fn start(built: &Built) -> KeepWine {
        let mut keep = KeepWine(None);
        if let Err(e) = keep.spawn(built) {
            println!("note: Wine not kept up: {e:#}");
            return KeepWine(None);
        }
        keep
    }

    fn spawn(&mut self, built: &Built) -> Result<()> {
        let child = wine_program(built, "cmd".as_ref())?
            // One argument without spaces, so Wine passes `echo up&pause` to cmd unquoted.
            .args(["/c", "echo", "up&pause"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start Wine")?;
        let child = self.0.insert(child);
        let stdout = child.stdout.take().context("stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next());
            lines.for_each(drop);
        });
        match rx.recv_timeout(KEEP_DEADLINE) {
            Ok(Some(Ok(line))) if line.trim() == "up" => Ok(()),
            other => bail!("cmd did not start in {} s: {other:?}", KEEP_DEADLINE.as_secs()),
        }
    }
}

impl Drop for KeepWine {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs a Windows tool under Wine in `dir`; its standard output.
pub(crate) fn tool(built: &Built, args: &[&str], dir: &Path) -> Result<String> {
    let (program, rest) = args.split_first().context("no program")?;
    let mut cmd = wine_program(built, program.as_ref())?;
    cmd.args(rest).current_dir(dir);
    let out = output_within(&mut cmd, TOOL_DEADLINE, &args.join(" "))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "{} exited with {}: {}{}",
            args.join(" "),
            out.status,
            stdout.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(stdout)
}

/// Wine's `reg` with `args`; its standard output.
fn reg(built: &Built, args: &[&str]) -> Result<String> {
    tool(built, &[&["reg"], args].concat(), &built.wine_bin)
}

/// A key's values (name → type, data) as `reg query` prints them, one a line:
/// `    Name    REG_SZ    data`; `None` when there is no such key.
pub(crate) fn reg_values(
    built: &Built,
    key: &str,
) -> Result<Option<BTreeMap<String, (String, String)>>> {
    let mut cmd = wine_program(built, "reg".as_ref())?;
    cmd.args(["query", key]).current_dir(&built.wine_bin);
    let out = output_within(&mut cmd, TOOL_DEADLINE, &format!("reg query {key}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if format!("{stdout}{stderr}").contains("Unable to find") {
            return Ok(None);
        }
        bail!("reg query {key} exited with {}: {}{}", out.status, stdout.trim(), stderr.trim());
    }
    let mut values = BTreeMap::new();
    for line in stdout.lines().filter(|l| l.starts_with("    ")) {
        let mut parts = line.trim_start().splitn(3, "    ");
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else { continue };
        let data = parts.next().unwrap_or_default().trim_end_matches('\r');
        values.insert(name.to_owned(), (kind.to_owned(), data.to_owned()));
    }
    Ok(Some(values))
}

/// A path on the prefix's `C:` drive (`C:\users\…`) as this machine names it.
pub(crate) fn host_path(prefix: &Path, windows: &str) -> Result<PathBuf> {
    let rest = windows
        .strip_prefix("C:\\")
        .or_else(|| windows.strip_prefix("c:\\"))
        .with_context(|| format!("not on C: {windows:?}"))?;
    Ok(rest.split('\\').filter(|s| !s.is_empty()).fold(prefix.join("drive_c"), |p, s| p.join(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version4_drops_what_windows_cannot_hold() {
        assert_eq!(version4("0.1.0").unwrap(), "0.1.0.0");
        assert_eq!(version4("1.22.333-beta.1+build.5").unwrap(), "1.22.333.0");
        assert!(version4("1.2").is_err());
        assert!(version4("1.2.x").is_err());
    }

    #[test]
    fn host_path_maps_the_c_drive_into_the_prefix() {
        let p = host_path(Path::new("/p"), r"C:\users\root\AppData\Local\Programs\Sluice");
        assert_eq!(p.unwrap(), Path::new("/p/drive_c/users/root/AppData/Local/Programs/Sluice"));
        assert!(host_path(Path::new("/p"), r"Z:\work").is_err());
    }
}
