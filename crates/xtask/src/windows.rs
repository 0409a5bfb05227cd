//! `cargo xtask windows build|run|check|installer`: a linked Windows build of Sluice
//! (`x86_64-pc-windows-gnu`: `sluice.exe`, the desktop app's `sluice-app.exe` and
//! `sluice-tray.exe`), made on this Debian machine, run under Wine. `check-targets` only
//! type-checks Windows; this links and runs them, so a missing import, a linker error or a
//! Windows-only failure at start shows here before a release.
//!
//! - `build [--profile P]` — the three programs (default profile `wine`: unoptimized, the
//!   quickest cold build; `release` is what would ship). The compiler is `check-targets`'
//!   private toolchain (Debian's `rustc-web`, std built from its source); the linker and C
//!   compiler are Debian's mingw-w64 (gcc 12, posix threads), with the C runtime linked
//!   statically so no exe needs a mingw DLL. Paths of this machine are remapped and the PE
//!   timestamp left out, and the linker's inputs named alike in every folder ([`linker`]), so
//!   the same commit gives the same bytes wherever it is built.
//! - `run [--profile P] [-- ARGS…]` — builds, then runs `sluice.exe ARGS…` under Wine.
//! - `check [--profile P]` — builds, with the engine's test binaries, then proves the CLI works
//!   under Wine ([`crate::windows_check`]), runs those tests ([`crate::windows_tests`]), and
//!   shows that the installer installs the app and the CLI, that they run, and that it
//!   uninstalls ([`crate::windows_app`]).
//! - `installer [--profile P]` — builds, then makes the per-user installer with Debian's NSIS
//!   ([`crate::windows_installer`]).
//! - `reproduce [--profile P]` — builds, then builds the same commit again in another folder
//!   with a cache of its own, and compares the programs byte for byte.
//!
//! Wine: Debian 12's Wine 8.0, with a private prefix, no display and no debug output. Rust's
//! std imports `ProcessPrng` from `bcryptprimitives.dll`, which Wine only has from 8.13, so the
//! exe runs beside a stand-in DLL built here from `crates/xtask/wine/bcryptprimitives.c` (its
//! header says why it is never shipped). `sluice.exe` and the stand-in are copied into a
//! folder of their own, so the build's folder holds nothing that would not ship.
//!
//! Everything lives in `windows/` beside the toolchain ([`check_targets::cache_dir`]): the
//! target folder, the Wine prefix and the folder Wine runs from.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::check_targets::{self, Refresh, Toolchain};
use crate::{deps, sh};

/// The one Windows target built: mingw-w64 links it, and Debian ships mingw-w64.
const TRIPLE: &str = "x86_64-pc-windows-gnu";

/// The profile `cargo xtask test` and these commands build with unless told (root Cargo.toml).
pub const PROFILE: &str = "wine";

/// Debian's mingw-w64: gcc (posix threads: std's static runtime links `libpthread.a`), its
/// headers and libraries, and Wine 8.0 (64-bit only; the exe is 64-bit).
const APT_PACKAGES: &[&str] =
    &["gcc-mingw-w64-x86-64-posix", "mingw-w64-x86-64-dev", "wine", "wine64"];

const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc-posix";
const MINGW_AR: &str = "x86_64-w64-mingw32-ar";

/// Debian's 64-bit Wine loader (`/usr/bin/wine` is a wrapper that first looks for the 32-bit
/// Wine and warns that it is missing).
const WINE: &str = "/usr/lib/wine/wine64";

/// The shim's source, in the repository.
const SHIM_SOURCE: &str = "crates/xtask/wine/bcryptprimitives.c";

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let usage =
        "usage: cargo xtask windows <build|run|check|installer|reproduce> [--profile P] [-- ARGS…]";
    let (command, rest) = args.split_first().context(usage)?;
    let (profile, extra) = parse(rest)?;
    // The app embeds the window's pages.
    crate::build_ui(root)?;
    match command.as_str() {
        "build" => {
            if !extra.is_empty() {
                bail!("`windows build` takes no arguments after --\n{usage}");
            }
            let built = build(root, &profile, false)?;
            eprintln!("windows: {}", built.exe.display());
            Ok(())
        }
        "run" => {
            let built = build(root, &profile, false)?;
            let status = wine(&built)?
                .args(&extra)
                .status()
                .with_context(|| format!("cannot start {WINE}"))?;
            if !status.success() {
                bail!("sluice.exe {} exited with {status}", extra.join(" "));
            }
            Ok(())
        }
        "check" => {
            if !extra.is_empty() {
                bail!("`windows check` takes no arguments after --\n{usage}");
            }
            let built = build(root, &profile, true)?;
            crate::windows_check::run(root, &built)
        }
        "reproduce" => {
            if !extra.is_empty() {
                bail!("`windows reproduce` takes no arguments after --\n{usage}");
            }
            reproduce(root, &profile)
        }
        "installer" => {
            if !extra.is_empty() {
                bail!("`windows installer` takes no arguments after --\n{usage}");
            }
            let built = build(root, &profile, false)?;
            let installer = crate::windows_installer::build(root, &built)?;
            eprintln!("windows installer: {}", installer.describe());
            Ok(())
        }
        other => bail!("unknown windows command {other:?}\n{usage}"),
    }
}

/// Builds the programs here, then the same commit from a clone in another folder with a cache
/// folder of its own (the toolchain copied in, not fetched again), as `cargo xtask windows build`
/// there, and compares the two builds byte for byte. Different bytes fail, and the other build
/// is kept for a look.
fn reproduce(root: &Path, profile: &str) -> Result<()> {
    let changed = Command::new("git")
        .current_dir(root)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .context("cannot run git")?;
    if !changed.status.success() || !changed.stdout.is_empty() {
        bail!("`windows reproduce` builds the committed tree again elsewhere: commit first");
    }
    let here = build(root, profile, false)?;
    let elsewhere = std::env::temp_dir().join(format!("sluice-reproduce-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&elsewhere);
    let (clone, cache) = (elsewhere.join("sluice"), elsewhere.join("cache"));
    sh(Command::new("git").args(["clone", "--quiet", "--no-hardlinks"]).arg(root).arg(&clone))?;
    let their_cache = cache.join("check-targets");
    std::fs::create_dir_all(&their_cache)?;
    sh(Command::new("cp")
        .arg("-a")
        .arg(check_targets::cache_dir(root).join("toolchain"))
        .arg(&their_cache))?;
    let built = sh(Command::new("cargo")
        .current_dir(&clone)
        .args(["xtask", "windows", "build", "--profile", profile])
        .env("SLUICE_CI_CACHE", &cache)
        .env("CARGO_TARGET_DIR", elsewhere.join("target")));
    if let Err(e) = built {
        // Gigabytes of a build that did not finish: nothing to look at.
        let _ = std::fs::remove_dir_all(&elsewhere);
        return Err(e);
    }
    let ours = windows_dir(root).join("target");
    let theirs = their_cache.join("windows/target");
    let mut differ = Vec::new();
    for file in [&here.exe, &here.app, &here.tray, &here.loader] {
        let other = theirs.join(file.strip_prefix(&ours)?);
        let (a, b) = (std::fs::read(file)?, std::fs::read(&other)?);
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        if a == b {
            eprintln!("windows reproduce: {name}: the same {} bytes", a.len());
        } else {
            eprintln!("windows reproduce: {name}: DIFFERENT ({} and {} bytes)", a.len(), b.len());
            differ.push(other.display().to_string());
        }
    }
    if !differ.is_empty() {
        bail!("the two builds differ; the other is kept: {}", differ.join(", "));
    }
    std::fs::remove_dir_all(&elsewhere)
        .with_context(|| format!("remove {}", elsewhere.display()))?;
    eprintln!(
        "windows reproduce: the builds in {} and in another folder are the same",
        root.display()
    );
    Ok(())
}

/// `[--profile P] [-- ARGS…]` → the profile and the arguments for the exe.
fn parse(args: &[String]) -> Result<(String, Vec<String>)> {
    let mut profile = PROFILE.to_owned();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--profile" => profile = it.next().context("--profile needs a value")?.clone(),
            "--" => return Ok((profile, it.cloned().collect())),
            other => bail!("unknown argument {other:?} (the exe's arguments go after --)"),
        }
    }
    Ok((profile, Vec::new()))
}

/// What [`build`] made: the programs as cargo wrote them, and the folder Wine runs the CLI from.
pub struct Built {
    /// `sluice.exe` in the target folder: what a release would ship, nothing beside it.
    pub exe: PathBuf,
    /// The desktop app: `sluice-app.exe` (the window, which becomes the tray process at start),
    /// `sluice-tray.exe`, and the `WebView2Loader.dll` the window loads (mingw links it as a
    /// DLL; MSVC builds link it in).
    pub app: PathBuf,
    pub tray: PathBuf,
    pub loader: PathBuf,
    /// The cargo profile they were built with.
    pub profile: String,
    /// The engine's test binaries, when they were built ([`crate::windows_tests`]).
    pub tests: Vec<crate::windows_tests::TestExe>,
    /// The folder with a copy of the exe and the `ProcessPrng` stand-in.
    pub wine_bin: PathBuf,
    /// Wine's private prefix (its `C:` drive and registry).
    pub prefix: PathBuf,
}

impl Built {
    /// The copy Wine starts.
    pub fn wine_exe(&self) -> PathBuf {
        self.wine_bin.join("sluice.exe")
    }
}

/// The folder of everything this command keeps.
fn windows_dir(root: &Path) -> PathBuf {
    check_targets::cache_dir(root).join("windows")
}

/// Builds the programs and the stand-in DLL, and fills the folder Wine runs from; `with_tests`,
/// the engine's test binaries too.
pub fn build(root: &Path, profile: &str, with_tests: bool) -> Result<Built> {
    start(root, &prepare(root)?, profile, None, with_tests)?.finish()
}

/// What the build needs on the machine: mingw and Wine (apt), the toolchain and the linker,
/// ready. Kept apart from the build, which `cargo xtask test` runs beside other work: apt takes
/// one command at a time.
pub struct Prepared {
    toolchain: Toolchain,
    /// The build's linker ([`linker`]), written once here for every cargo command.
    linker: PathBuf,
}

pub fn prepare(root: &Path) -> Result<Prepared> {
    deps::apt(APT_PACKAGES)?;
    let cache = check_targets::cache_dir(root);
    let toolchain = Toolchain::prepare(&cache, Refresh::IfAptHasNewer)?;
    Ok(Prepared { toolchain, linker: linker(root)? })
}

/// A Windows build under way ([`start`]): cargo commands run one after the other on a thread of
/// their own; ended with [`Compiling::finish`], killed on drop.
pub struct Compiling {
    worker: Option<JoinHandle<Result<String>>>,
    /// Whether a drop asked the worker to stop, and the running cargo's process group (0: none).
    running: Arc<Mutex<(bool, u32)>>,
    /// Where the output goes, when not to this process's.
    log: Option<PathBuf>,
    root: PathBuf,
    profile: String,
    started: Instant,
}

/// Starts the build of the three programs with `profile` and, `with_tests`, of the engine's
/// test binaries ([`crate::windows_tests`]). With a `log`, it runs at the lowest priority with
/// its output in that file: `cargo xtask test` starts it beside the Linux suite, so it takes
/// the cycles the suite leaves idle rather than time of its own.
pub fn start(
    root: &Path,
    prepared: &Prepared,
    profile: &str,
    log: Option<PathBuf>,
    with_tests: bool,
) -> Result<Compiling> {
    if !profile.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        bail!("bad profile name {profile:?}");
    }
    let programs = [
        "build",
        "--locked",
        "-p",
        "sluice-cli",
        "-p",
        "sluice-app",
        "--bin",
        "sluice",
        "--bin",
        "sluice-app",
        "--bin",
        "sluice-tray",
        "--features",
        "sluice-app/custom-protocol",
        "--profile",
        profile,
    ];
    let mut commands = vec![(cargo(root, prepared, &programs, log.as_deref())?, false)];
    if with_tests {
        let mut args = vec!["test", "--no-run", "--locked", "--lib", "--test", "it"];
        for krate in crate::windows_tests::CRATES {
            args.extend(["-p", krate]);
        }
        args.extend(["--profile", profile, "--message-format=json-render-diagnostics"]);
        let mut cmd = cargo(root, prepared, &args, log.as_deref())?;
        cmd.stdout(Stdio::piped());
        commands.push((cmd, true));
    }
    let running = Arc::new(Mutex::new((false, 0)));
    let shared = Arc::clone(&running);
    let worker = std::thread::spawn(move || -> Result<String> {
        let mut messages = String::new();
        for (mut cmd, json) in commands {
            let mut child = {
                let mut state = shared.lock().unwrap_or_else(|p| p.into_inner());
                if state.0 {
                    bail!("stopped");
                }
                // Its own process group, so a drop ends cargo and every rustc under it.
                #[cfg(unix)]
                std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
                let child = cmd.spawn().context("cannot start cargo")?;
                state.1 = child.id();
                child
            };
            if json {
                let mut out = child.stdout.take().context("cargo's output")?;
                out.read_to_string(&mut messages).context("cannot read cargo's messages")?;
            }
            let status = child.wait().context("cannot wait for cargo")?;
            shared.lock().unwrap_or_else(|p| p.into_inner()).1 = 0;
            if !status.success() {
                bail!("the Windows build failed ({status})");
            }
        }
        Ok(messages)
    });
    Ok(Compiling {
        worker: Some(worker),
        running,
        log,
        root: root.to_owned(),
        profile: profile.to_owned(),
        started: Instant::now(),
    })
}

/// `cargo ARGS -Zbuild-std --target x86_64-pc-windows-gnu` with the toolchain, mingw and this
/// build's flags; at `nice 19` with its output in `log` when given, else at `nice 10`.
fn cargo(root: &Path, prepared: &Prepared, args: &[&str], log: Option<&Path>) -> Result<Command> {
    let toolchain = &prepared.toolchain;
    let target = check_targets::target(TRIPLE).context("windows-gnu is not a checked target")?;
    let target_dir = windows_dir(root).join("target");
    // `nice`: benchmarks may run on the machine, and this build takes both cores for minutes.
    let niceness = if log.is_some() { "19" } else { "10" };
    let mut cmd = toolchain.cargo(&["nice", "-n", niceness], root, &target_dir, target, args)?;
    let var = TRIPLE.replace('-', "_");
    let flags = rustflags(root, &target_dir, toolchain)?;
    cmd.env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        .env(format!("CARGO_TARGET_{}_LINKER", var.to_uppercase()), &prepared.linker)
        .env("SLUICE_LINK_TARGET", std::path::absolute(&target_dir)?)
        .env("SLUICE_LINK_CARGO", std::path::absolute(cargo_home()?)?)
        .env(format!("CC_{var}"), MINGW_GCC)
        .env(format!("AR_{var}"), MINGW_AR)
        .env(
            format!("CFLAGS_{var}"),
            format!("-ffile-prefix-map={}=/cargo", cargo_home()?.display()),
        )
        // Incremental builds may differ from a clean one; this build wants the same bytes.
        .env("CARGO_INCREMENTAL", "0")
        // A fixed date for what C's `__DATE__` and `__TIME__` expand to. Fixed rather than the
        // commit's: cc-rs reruns every C build script when it changes, and so every crate above
        // them (SQLite is under the engine) would build again after each commit.
        .env("SOURCE_DATE_EPOCH", "1");
    let shown = format!("cargo {} -Zbuild-std --target {TRIPLE}", args.join(" "));
    if let Some(log) = log {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("open {}", log.display()))?;
        cmd.stdout(file.try_clone()?).stderr(file);
        eprintln!("$ {shown} (beside the rest, output in {})", log.display());
    } else {
        eprintln!("$ {shown}");
    }
    Ok(cmd)
}

impl Drop for Compiling {
    fn drop(&mut self) {
        let Some(worker) = self.worker.take() else { return };
        {
            let mut state = self.running.lock().unwrap_or_else(|p| p.into_inner());
            state.0 = true;
            if state.1 != 0 {
                let _ = Command::new("kill").arg("-KILL").arg(format!("-{}", state.1)).status();
            }
        }
        let _ = worker.join();
    }
}

impl Compiling {
    /// Waits for the build; the programs, the stand-in, the folder Wine runs from, and the
    /// test binaries when they were built.
    pub fn finish(mut self) -> Result<Built> {
        let worker = self.worker.take().context("the build was already waited for")?;
        let messages = match worker.join() {
            Ok(Ok(messages)) => messages,
            Ok(Err(e)) => {
                if let Some(log) = &self.log {
                    let text = std::fs::read_to_string(log).unwrap_or_default();
                    let tail: Vec<&str> = text.lines().rev().take(60).collect();
                    eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
                }
                return Err(e);
            }
            Err(_) => bail!("the Windows build's thread panicked"),
        };
        let mut built = collect(&self.root, &self.profile, self.started)?;
        built.tests = crate::windows_tests::executables(&messages)?;
        Ok(built)
    }
}

/// The build's programs, checked present, with the stand-in beside a copy of `sluice.exe`.
fn collect(root: &Path, profile: &str, started: Instant) -> Result<Built> {
    let dir = windows_dir(root);
    let target_dir = dir.join("target");
    let out = target_dir.join(TRIPLE).join(if profile == "dev" { "debug" } else { profile });
    let [exe, app, tray, loader] =
        ["sluice.exe", "sluice-app.exe", "sluice-tray.exe", "WebView2Loader.dll"]
            .map(|n| out.join(n));
    let mut sizes = Vec::new();
    for file in [&exe, &app, &tray, &loader] {
        let size = std::fs::metadata(file)
            .with_context(|| format!("cargo succeeded but {} is missing", file.display()))?
            .len();
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        sizes.push(format!("{name} {:.1} MB", size as f64 / 1e6));
    }
    let secs = started.elapsed().as_secs();
    eprintln!(
        "windows: built in {} ({}) in {}:{:02}",
        out.display(),
        sizes.join(", "),
        secs / 60,
        secs % 60
    );
    let wine_bin = dir.join("wine-bin");
    std::fs::create_dir_all(&wine_bin).with_context(|| format!("create {}", wine_bin.display()))?;
    build_shim(root, &wine_bin)?;
    std::fs::copy(&exe, wine_bin.join("sluice.exe"))
        .with_context(|| format!("copy {} into {}", exe.display(), wine_bin.display()))?;
    let profile = profile.to_owned();
    let prefix = dir.join("wine-prefix");
    Ok(Built { exe, app, tray, loader, profile, tests: Vec::new(), wine_bin, prefix })
}

/// The flags for the exe and the std it is built with: this machine's folders remapped to
/// fixed names (panic messages and debug info carry source paths), the C runtime and libgcc
/// linked in, no build time in the PE header and no symbol table. When several remappings
/// match, rustc applies the last, so the folders inside others come later.
fn rustflags(root: &Path, target_dir: &Path, toolchain: &Toolchain) -> Result<Vec<String>> {
    let remap = |from: &Path, to: &str| format!("--remap-path-prefix={}={to}", from.display());
    let std_source = toolchain.std_source();
    // Cargo names a file inside the workspace's folder relative to it: with the cache in
    // `target/` (no CI cache folder), std's source and the target folder are named so, and
    // only a relative remapping matches them.
    let relative = |from: &Path, to: &str| from.strip_prefix(root).ok().map(|rel| remap(rel, to));
    Ok([
        Some(remap(root, "/sluice")),
        Some(remap(&cargo_home()?, "/cargo")),
        Some(remap(target_dir, "/target")),
        relative(target_dir, "/target"),
        Some(remap(&std_source, "/rustc/src")),
        relative(&std_source, "/rustc/src"),
    ]
    .into_iter()
    .flatten()
    .chain([
        "-Ctarget-feature=+crt-static".into(),
        "-Clink-arg=-Wl,--no-insert-timestamp".into(),
        // No COFF symbol table: it names the import libraries rustc makes for `raw-dylib` after
        // their temporary folders (random, and under the target folder), the one difference
        // between two builds of a commit in different folders. Panic backtraces show addresses.
        // (`strip`, not a linker `-s`: rustc's `--strip-debug`, from the profile, comes after.)
        "-Cstrip=symbols".into(),
    ])
    .collect())
}

/// The build's linker: mingw's gcc, run from a folder of its own where the target folder and
/// cargo's home are links named `target` and `cargo`, and every argument names them so. The
/// order of the import table's DLLs follows the names of the linker's inputs (ld's script
/// sorts `.idata$*` sections by file name, each import library's together), and mingw's own
/// libraries (`/usr/…`) would sort before the build's in one folder and after them in another
/// (`/tmp/…`, `/work/…`). Named so, the order is the same wherever the build runs. (rustc would
/// pass a response file only for a command line too long for the system, not on Linux.)
fn linker(root: &Path) -> Result<PathBuf> {
    // A name ending in `-gcc`: rustc tells how to pass the linker's flags by its name.
    let path = windows_dir(root).join("bin/link-gcc");
    std::fs::create_dir_all(path.parent().unwrap_or(root))?;
    let body = format!(
        r#"set -euo pipefail
here=$(mktemp -d)
trap 'rm -rf "$here"' EXIT
ln -s "$SLUICE_LINK_TARGET" "$here/target"
ln -s "$SLUICE_LINK_CARGO" "$here/cargo"
args=()
for arg in "$@"; do
  arg=${{arg//"$SLUICE_LINK_TARGET/"/target/}}
  arg=${{arg//"$SLUICE_LINK_CARGO/"/cargo/}}
  args+=("$arg")
done
cd "$here"
{MINGW_GCC} "${{args[@]}}"
"#
    );
    check_targets::write_script(&path, &body)?;
    Ok(path)
}

fn cargo_home() -> Result<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")
}

/// `bcryptprimitives.dll`, the `ProcessPrng` stand-in, into `dir` (a second, so always made).
fn build_shim(root: &Path, dir: &Path) -> Result<()> {
    sh(Command::new(MINGW_GCC)
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-s"])
        .arg(root.join(SHIM_SOURCE))
        .arg("-o")
        .arg(dir.join("bcryptprimitives.dll"))
        // ld picks a DLL's base address from a hash of the output path unless told not to.
        .args(["-ladvapi32", "-Wl,--no-insert-timestamp,--disable-auto-image-base"]))
}

/// `sluice.exe` (the copy beside the stand-in) as a Wine command: private prefix, no display,
/// no Wine debug output, Mono and Gecko not offered (a console program needs neither).
pub fn wine(built: &Built) -> Result<Command> {
    wine_program(built, built.wine_exe().as_os_str())
}

/// Any program as a Wine command in the same prefix and environment as [`wine`]: a Linux
/// path, a Windows path, or a name Wine looks up (`cmd`, `reg`).
pub fn wine_program(built: &Built, program: &OsStr) -> Result<Command> {
    prepare_prefix(built)?;
    let mut cmd = wine_command(built);
    cmd.arg(program);
    Ok(cmd)
}

/// `wineserver` for the prefix; with `-w`, it waits until every process in it has ended.
pub fn wineserver(built: &Built) -> Command {
    let mut cmd = Command::new("/usr/lib/wine/wineserver");
    cmd.env("WINEPREFIX", &built.prefix);
    cmd
}

fn wine_command(built: &Built) -> Command {
    let mut cmd = Command::new(WINE);
    cmd.env("WINEPREFIX", &built.prefix)
        .env("WINEDEBUG", "-all")
        .env("WINEARCH", "win64")
        // The stand-in from the exe's folder before any builtin of that name.
        .env("WINEDLLOVERRIDES", "bcryptprimitives=n,b;mscoree=;mshtml=")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
    cmd
}

/// Creates the Wine prefix once (`wineboot --init`, about half a minute).
fn prepare_prefix(built: &Built) -> Result<()> {
    if built.prefix.join("system.reg").is_file() {
        return Ok(());
    }
    let started = Instant::now();
    let mut boot = wine_command(built);
    sh(boot.args(["wineboot", "--init"]))?;
    // wineboot returns before the server has written the registry.
    sh(wineserver(built).arg("-w"))?;
    eprintln!("windows: Wine prefix made in {} s", started.elapsed().as_secs());
    Ok(())
}

/// A Linux path as Wine's `Z:` drive names it.
pub fn wine_path(path: &Path) -> Result<String> {
    let text = path.to_str().with_context(|| format!("not UTF-8: {}", path.display()))?;
    if !path.is_absolute() {
        bail!("not an absolute path: {text}");
    }
    Ok(format!("Z:{}", text.replace('/', "\\")))
}
