//! `cargo xtask bundle [--test] [--target TRIPLE]`: the Linux installers (.deb and .rpm) of the
//! desktop app, built offline with the npm-installed Tauri CLI (`ui/node_modules`), and Claude
//! Desktop's `.mcpb` bundle of the same CLI (`mcpb.rs`).
//!
//! The `sluice` CLI ships inside the package as a Tauri sidecar (`bundle.externalBin`): it is
//! built in release mode and copied to `src-tauri/binaries/sluice-<target triple>`, where the
//! bundler looks for it, and installed beside the app (`/usr/bin/sluice` next to
//! `/usr/bin/sluice-app`), where the app looks for it when it writes stdio client configs. The
//! sidecar is declared in `tauri.bundle.conf.json`, merged only for bundle builds: tauri-build
//! refuses to compile when a declared sidecar file is missing, and a fresh clone has none, so
//! declaring it in `tauri.conf.json` would break every plain `cargo build` of the app.
//!
//! Size: both binaries embed the whole engine, and the workspace's release profile keeps their
//! symbol tables, so the bundler's packages were ~19.6 MB each. Here the app is built once
//! (`tauri build --no-bundle`), the binaries are stripped, and `tauri bundle` packages the
//! result (deb and rpm in one run, no relink); the rpm is xz-compressed (`tauri.conf.json`) and the
//! .deb, which the bundler always gzips, is rebuilt with `dpkg-deb -Zxz` (Debian's default).
//!
//! AppImage is not built here: its bundler downloads AppRun and linuxdeploy from GitHub, which no
//! package registry provides; the release workflow (`.github/workflows/release.yml`) builds it.
//!
//! `--test` then runs the package test (`crates/xtask/tests/it/package.rs`): install the .deb with
//! apt, start the installed app under Xvfb, drive it with the installed `sluice` and a real MCP
//! client, purge it and check nothing of it is left.
//!
//! Icons come from one source, `icons/src/app.svg`; regenerate them with
//! `ui/node_modules/.bin/tauri icon icons/src/app.svg -o icons` (then delete `icons/android`
//! and `icons/ios`: there is no mobile app).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use anyhow::{Context, Result, bail};

use crate::{build_ui, deps, sh, target_dir};

/// The bundles built on this machine, in one bundler run.
const LINUX_BUNDLES: &str = "deb,rpm";

/// Merged over `tauri.conf.json` for bundle builds only (it declares the sidecar).
const BUNDLE_CONFIG: &str = "tauri.bundle.conf.json";

/// The app's executable (`mainBinaryName` in `tauri.conf.json`).
const APP_BINARY: &str = "sluice-app";
/// The tray process, which `sluice-app` becomes at start (shipped beside it).
const TRAY_BINARY: &str = "sluice-tray";

/// What the command line asked for.
#[derive(Debug, Default)]
struct Options {
    /// Run the install test on the built .deb afterwards.
    test: bool,
    /// Cross-target triple (default: the host's).
    target: Option<String>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut opts = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--test" => opts.test = true,
            "--target" => opts.target = Some(it.next().context("--target needs a triple")?.clone()),
            other => bail!(
                "unknown argument {other:?}; usage: cargo xtask bundle [--test] [--target TRIPLE]"
            ),
        }
    }
    Ok(opts)
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let opts = parse(args)?;
    let started = Instant::now();
    let since = SystemTime::now();
    deps::apt(deps::APP_APT_PACKAGES)?;
    if !deps::have("npm") {
        deps::apt(&["nodejs", "npm"])?;
    }
    build_ui(root)?;
    let triple = match &opts.target {
        Some(t) => t.clone(),
        None => host_triple()?,
    };
    let profile_dir = match &opts.target {
        Some(t) => target_dir(root).join(t).join("release"),
        None => target_dir(root).join("release"),
    };
    sidecar(root, &triple, opts.target.as_deref(), &profile_dir)?;
    tauri(root, "build", opts.target.as_deref(), &["--no-bundle"])?;
    if opts.target.is_none() {
        // The host's `strip` knows the host's binaries only.
        strip(&profile_dir.join(APP_BINARY))?;
        strip(&profile_dir.join(TRAY_BINARY))?;
    }
    tauri(root, "bundle", opts.target.as_deref(), &["--bundles", LINUX_BUNDLES])?;
    let mut packages = built_since(&profile_dir.join("bundle"), since)?;
    if packages.is_empty() {
        bail!("the Tauri CLI finished but no .deb or .rpm is newer than this run");
    }
    for (path, size) in &mut packages {
        if path.extension().is_some_and(|e| e == "deb") {
            *size = recompress_deb(path)?;
        }
    }
    // Claude Desktop's bundle, with the same (stripped) CLI the packages ship.
    if opts.target.is_none() {
        let mcpb = crate::mcpb::default_out(root);
        crate::mcpb::build(root, &profile_dir.join("sluice"), &mcpb, &deps::node_env(root)?)?;
        let size = std::fs::metadata(&mcpb)?.len();
        packages.push((mcpb, size));
    }
    eprintln!("\nxtask bundle: built in {} s:", started.elapsed().as_secs());
    for (path, size) in &packages {
        println!("{}  {:.1} MB", path.display(), *size as f64 / 1_000_000.0);
    }
    eprintln!(
        "xtask bundle: AppImage skipped here: its bundler downloads AppRun and linuxdeploy from \
         GitHub, which no package registry provides. The release workflow \
         (.github/workflows/release.yml) builds it."
    );
    if opts.test {
        let deb = packages
            .iter()
            .map(|(p, _)| p)
            .find(|p| p.extension().is_some_and(|e| e == "deb"))
            .context("no .deb was built")?;
        package_test(root, deb)?;
        eprintln!("xtask bundle: build and install test took {} s", started.elapsed().as_secs());
    }
    Ok(())
}

/// The host's target triple, as `rustc -vV` reports it (the sidecar's file name carries it).
fn host_triple() -> Result<String> {
    let out = Command::new("rustc").arg("-vV").output().context("cannot run rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|t| t.trim().to_owned())
        .context("rustc -vV printed no host triple")
}

/// Builds the release `sluice` CLI and puts it, stripped, where the bundler expects the sidecar:
/// `src-tauri/binaries/sluice-<triple>` (gitignored). (tauri-build copies it back over
/// `target/release/sluice`.)
fn sidecar(root: &Path, triple: &str, target: Option<&str>, profile_dir: &Path) -> Result<()> {
    let mut cmd = Command::new("cargo");
    cmd.args(["build", "--release", "--locked", "-p", "sluice-cli", "--bin", "sluice"]);
    if let Some(t) = target {
        cmd.args(["--target", t]);
    }
    sh(&mut cmd)?;
    let exe = if triple.contains("windows") { ".exe" } else { "" };
    let built = profile_dir.join(format!("sluice{exe}"));
    let dir = root.join("src-tauri/binaries");
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    let dest = dir.join(format!("sluice-{triple}{exe}"));
    std::fs::copy(&built, &dest)
        .with_context(|| format!("copy {} to {}", built.display(), dest.display()))?;
    if target.is_none() {
        strip(&dest)?;
    }
    eprintln!("xtask bundle: sidecar {}", dest.display());
    Ok(())
}

/// Runs the npm-installed Tauri CLI (`build` or `bundle`) with the app crate in `src-tauri`
/// (`tauri.conf.json` is at the repository root, symlinked there) and the sidecar config merged.
fn tauri(root: &Path, command: &str, target: Option<&str>, extra: &[&str]) -> Result<()> {
    let cli = root.join("ui/node_modules/.bin/tauri");
    let mut cmd = Command::new(&cli);
    cmd.current_dir(root)
        .env("TAURI_APP_PATH", root.join("src-tauri"))
        .args([command, "--ci"])
        .args(extra)
        .arg("--config")
        .arg(root.join(BUNDLE_CONFIG));
    if let Some(t) = target {
        cmd.args(["--target", t]);
    }
    if command == "build" {
        cmd.args(["--", "--locked"]);
    }
    sh(&mut cmd)
}

/// Drops a binary's symbol table (the release profile keeps it; packages do not need it).
fn strip(binary: &Path) -> Result<()> {
    if !deps::have("strip") {
        deps::apt(&["binutils"])?;
    }
    sh(Command::new("strip").arg(binary))
}

/// Rebuilds a .deb with xz instead of the bundler's gzip (a third smaller), keeping its files,
/// modes and control data as they are. Returns the new size.
fn recompress_deb(deb: &Path) -> Result<u64> {
    let unpacked = deb.with_extension("unpacked");
    if unpacked.exists() {
        std::fs::remove_dir_all(&unpacked)?;
    }
    sh(Command::new("dpkg-deb").arg("-R").arg(deb).arg(&unpacked))?;
    sh(Command::new("dpkg-deb")
        .args(["-Zxz", "-z9", "--root-owner-group", "-b"])
        .arg(&unpacked)
        .arg(deb))?;
    std::fs::remove_dir_all(&unpacked)?;
    Ok(std::fs::metadata(deb)?.len())
}

/// The packages under `bundle/` written by this run, with their sizes (older ones may linger
/// from earlier versions).
fn built_since(bundle: &Path, since: SystemTime) -> Result<Vec<(PathBuf, u64)>> {
    let mut found = Vec::new();
    for kind in ["deb", "rpm"] {
        let dir = bundle.join(kind);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry?.path();
            let meta = std::fs::metadata(&path)?;
            let fresh = meta.modified().is_ok_and(|m| m >= since);
            if fresh && meta.is_file() && path.extension().is_some_and(|e| e == kind) {
                found.push((path, meta.len()));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Runs the install test (`package` module of xtask's integration tests) on `deb`. It installs
/// into the system, so it only runs here on request; in the ordinary test suite it finds no
/// package and says so.
fn package_test(root: &Path, deb: &Path) -> Result<()> {
    let python = deps::python(root)?;
    // The start-at-login step ticks the box in the installed app's window over WebDriver.
    let driver = deps::tauri_driver()?;
    sh(Command::new("cargo")
        .args(["test", "--locked", "-p", "xtask", "--test", "it", "--", "package::", "--nocapture"])
        .env("SLUICE_TEST_DEB", deb)
        .env("SLUICE_TEST_REQUIRE_DEB", "1")
        .env("SLUICE_TEST_PYTHON", python)
        .env("SLUICE_TAURI_DRIVER", driver))
}
