//! `cargo xtask check-targets`: type-checks the whole workspace — every crate and every target
//! kind (lib, bins, tests, examples, benches), with the app's features — for Windows and macOS,
//! on this Linux machine, with warnings as errors. The Windows and macOS branches ship in the
//! MSI and the DMG; this is the only place they are compiled before a release.
//!
//! Nothing here needs rustup targets or an SDK: Debian's `rustc-web` with its exact library source
//! (`rust-web-src`), fetched with `apt-get download` and unpacked with `dpkg -x` into a private
//! folder — never installed, they conflict with rustup — builds std for each target
//! (`-Zbuild-std`, allowed by `RUSTC_BOOTSTRAP=1`); PyPI's `ziglang` compiles the C that build
//! scripts carry (SQLite, blake3); `llvm-rc` and mingw's `windres` compile tauri's Windows
//! resource; `DOCS_RS=1` makes `mac-notification-sys` skip the Objective-C that needs Apple's
//! SDK. Everything lives in one cache folder ([`cache_dir`]), with its own target folder, so the
//! Linux build cache is left alone. `cargo xtask windows` links and runs a Windows build with the
//! same toolchain ([`Toolchain::cargo`]).
//!
//! It checks types, borrows and lints. It does not link, run, sign or notarize anything: a
//! missing system library, a linker error, a runtime failure or a signing problem only shows
//! on a real Windows or macOS machine (the release workflow).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{deps, sh};

/// One target to check: Rust's triple and zig's name for it.
pub struct Target {
    pub triple: &'static str,
    zig: &'static str,
}

impl Target {
    fn is_apple(&self) -> bool {
        self.triple.ends_with("-apple-darwin")
    }

    fn is_msvc(&self) -> bool {
        self.triple.ends_with("-msvc")
    }
}

/// What the release workflow builds for Windows and macOS, plus windows-gnu (cheap: the same
/// crates, another std).
const TARGETS: &[Target] = &[
    // zig ships no MSVC headers; mingw's compile the same C, and nothing is linked.
    Target { triple: "x86_64-pc-windows-msvc", zig: "x86_64-windows-gnu" },
    Target { triple: "aarch64-apple-darwin", zig: "aarch64-macos" },
    Target { triple: "x86_64-apple-darwin", zig: "x86_64-macos" },
    Target { triple: "x86_64-pc-windows-gnu", zig: "x86_64-windows-gnu" },
];

/// The target of that name, if it is one of [`TARGETS`].
pub fn target(triple: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.triple == triple)
}

/// zig, pinned: the C compiler for every target (from PyPI, a wheel with its own libc headers).
const ZIG: &str = "ziglang==0.17.1";

/// Installed (not unpacked) because they are ordinary runtime libraries Debian's LLVM needs,
/// which never conflict with anything; and what the rest needs (a host C compiler and linker
/// for build scripts, Python for zig's wheel).
const APT_PACKAGES: &[&str] = &[
    "build-essential",
    "python3",
    "python3-venv",
    "libedit2",
    "libffi8",
    "libxml2",
    "libz3-4",
    "libzstd1",
];

/// The folder everything lives in: `$SLUICE_CI_CACHE/check-targets` (default
/// `/var/cache/sluice-ci`) when that folder exists and is writable, as on CI, else
/// `check-targets/` in the target folder.
pub fn cache_dir(root: &Path) -> PathBuf {
    let ci = std::env::var_os("SLUICE_CI_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/var/cache/sluice-ci".into());
    if ci.is_dir() && writable(&ci) {
        return ci.join("check-targets");
    }
    crate::target_dir(root).join("check-targets")
}

fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".sluice-write-probe-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// The toolchain's stamp: present once everything is unpacked and installed; it lists the
/// Debian packages (with versions) and zig, so a new `rustc-web` in Debian unpacks afresh.
fn stamp(cache: &Path) -> PathBuf {
    cache.join("toolchain/ready")
}

/// Written once every target was checked and passed: std and the crates for all of them are
/// cached beside the toolchain.
fn checked_stamp(cache: &Path) -> PathBuf {
    cache.join("checked-all")
}

/// Whether a previous run checked every target here, which `cargo xtask test` takes to mean
/// the check is cheap (a toolchain made for the Windows build alone is not enough: checking
/// the other targets would then start from nothing, about an hour).
pub fn warm(root: &Path) -> bool {
    checked_stamp(&cache_dir(root)).is_file()
}

/// `cargo xtask check-targets [TRIPLE…]`: prepares the toolchain if needed, then checks each
/// target (all of them without arguments).
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let targets: Vec<&Target> = if args.is_empty() {
        TARGETS.iter().collect()
    } else {
        args.iter()
            .map(|a| {
                target(a).with_context(|| {
                    let known: Vec<&str> = TARGETS.iter().map(|t| t.triple).collect();
                    format!("unknown target {a}; known: {}", known.join(", "))
                })
            })
            .collect::<Result<_>>()?
    };
    // The app embeds the window (`custom-protocol`), so `ui/dist` must exist to compile.
    if !deps::have("npm") {
        deps::apt(&["nodejs", "npm"])?;
    }
    crate::build_ui(root)?;
    check(root, &targets, Refresh::IfAptHasNewer)
}

/// Every target with the toolchain as cached, for `cargo xtask test` (which has built
/// `ui/dist` already). It never fetches a newer `rustc-web`: that would make the next test
/// run a cold one (std and every crate again), which only `check-targets` itself should do.
pub fn check_all(root: &Path) -> Result<()> {
    check(root, &TARGETS.iter().collect::<Vec<_>>(), Refresh::Never)
}

/// Whether [`Toolchain::prepare`] asks apt for a newer `rustc-web` when one is cached.
#[derive(PartialEq)]
pub enum Refresh {
    IfAptHasNewer,
    Never,
}

fn check(root: &Path, targets: &[&Target], refresh: Refresh) -> Result<()> {
    let cache = cache_dir(root);
    let toolchain = Toolchain::prepare(&cache, refresh)?;
    let mut failed = Vec::new();
    for target in targets {
        let started = Instant::now();
        let ok = toolchain.check(root, &cache, target)?;
        let secs = started.elapsed().as_secs();
        eprintln!(
            "check-targets: {} {} in {}:{:02}",
            target.triple,
            if ok { "passed" } else { "FAILED" },
            secs / 60,
            secs % 60
        );
        if !ok {
            failed.push(target.triple);
        }
    }
    if !failed.is_empty() {
        bail!("check-targets failed for {}", failed.join(", "));
    }
    if targets.len() == TARGETS.len() {
        std::fs::write(checked_stamp(&cache), "")?;
    }
    Ok(())
}

/// Debian's compiler and LLVM tools unpacked under `toolchain/root`, zig under `toolchain/zig`,
/// and the wrappers that make them usable under `toolchain/bin`. `cargo xtask windows` builds
/// with it too.
pub struct Toolchain {
    dir: PathBuf,
}

impl Toolchain {
    pub fn prepare(cache: &Path, refresh: Refresh) -> Result<Toolchain> {
        let dir = cache.join("toolchain");
        let toolchain = Toolchain { dir };
        if refresh == Refresh::Never && stamp(cache).is_file() {
            toolchain.write_wrappers()?;
            return Ok(toolchain);
        }
        let packages = debian_packages()?;
        let wanted = format!("{}\n{ZIG}\n", packages.join("\n"));
        if std::fs::read_to_string(stamp(cache)).ok().as_deref() == Some(wanted.as_str()) {
            // Cheap, and keeps them in step with this file.
            toolchain.write_wrappers()?;
            return Ok(toolchain);
        }
        deps::apt(APT_PACKAGES)?;
        // Nothing has been checked with the new toolchain: `cargo xtask test` leaves the check
        // out (every target cold, an hour) until `check-targets` runs it again.
        let _ = std::fs::remove_file(checked_stamp(cache));
        // Start from nothing: a half-unpacked or older toolchain must not mix with this one.
        if toolchain.dir.exists() {
            std::fs::remove_dir_all(&toolchain.dir)
                .with_context(|| format!("remove {}", toolchain.dir.display()))?;
        }
        let debs = toolchain.dir.join("debs");
        std::fs::create_dir_all(&debs).with_context(|| format!("create {}", debs.display()))?;
        sh(Command::new("apt-get").current_dir(&debs).arg("download").args(&packages))?;
        let unpacked = toolchain.root();
        for deb in std::fs::read_dir(&debs)? {
            let deb = deb?.path();
            sh(Command::new("dpkg").arg("-x").arg(&deb).arg(&unpacked))?;
        }
        std::fs::remove_dir_all(&debs)?;
        toolchain.install_zig()?;
        toolchain.write_wrappers()?;
        std::fs::write(stamp(cache), wanted)?;
        Ok(toolchain)
    }

    /// The unpacked packages (`dpkg -x`): `usr/bin/rustc`, `usr/lib/rustlib/src/rust`, …
    fn root(&self) -> PathBuf {
        self.dir.join("root")
    }

    fn bin(&self) -> PathBuf {
        self.dir.join("bin")
    }

    fn zig(&self) -> PathBuf {
        self.dir.join("zig/ziglang/zig")
    }

    /// Where the unpacked programs find their shared libraries (`librustc_driver`, `libLLVM`).
    fn library_path(&self) -> String {
        let root = self.root();
        format!(
            "{}:{}",
            root.join("usr/lib/x86_64-linux-gnu").display(),
            root.join("usr/lib").display()
        )
    }

    /// zig from PyPI, into a folder of its own (`pip --target`, run by a private virtualenv's
    /// pip: Debian's Python has no pip of its own and refuses system installs).
    fn install_zig(&self) -> Result<()> {
        let venv = self.dir.join("venv");
        sh(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        sh(Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check", "--target"])
            .arg(self.dir.join("zig"))
            .arg(ZIG))?;
        std::fs::remove_dir_all(&venv)?;
        Ok(())
    }

    /// Small shell wrappers, generated here: Debian's rustc and llvm-rc with their libraries,
    /// zig as each target's C compiler and archiver, and mingw's dlltool under the name
    /// windows-gnu's std asks for.
    fn write_wrappers(&self) -> Result<()> {
        let bin = self.bin();
        std::fs::create_dir_all(&bin)?;
        let root = self.root();
        let lib = self.library_path();
        write_script(
            &bin.join("rustc"),
            &format!(
                "export LD_LIBRARY_PATH={lib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\nexec {} \"$@\"\n",
                root.join("usr/bin/rustc").display()
            ),
        )?;
        // `llvm-NN` unpacks its programs into `usr/lib/llvm-NN/bin`.
        let llvm_rc = std::fs::read_dir(root.join("usr/lib"))?
            .flatten()
            .map(|e| e.path().join("bin/llvm-rc"))
            .find(|p| p.is_file())
            .context("the unpacked llvm package has no llvm-rc")?;
        write_script(
            &bin.join("llvm-rc"),
            &format!(
                "export LD_LIBRARY_PATH={lib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\nexec {} \"$@\"\n",
                llvm_rc.display()
            ),
        )?;
        // dlltool assembles with plain `as` unless told otherwise: the host's, which cannot
        // write PE relocations.
        let mingw = |tool: &str| root.join("usr/bin").join(format!("x86_64-w64-mingw32-{tool}"));
        write_script(
            &bin.join("x86_64-w64-mingw32-dlltool"),
            &format!("exec {} --as={} \"$@\"\n", mingw("dlltool").display(), mingw("as").display()),
        )?;
        let windres = bin.join("x86_64-w64-mingw32-windres");
        let _ = std::fs::remove_file(&windres);
        symlink(&mingw("windres"), &windres)?;
        let zig = self.zig();
        let zig_cache = self.dir.join("zig-cache");
        for target in TARGETS {
            // cc-rs passes the target its own way (`--target=`, `-arch`); zig wants its own
            // `-target`, and the OS version it implies.
            write_script(
                &bin.join(format!("cc-{}", target.triple)),
                &format!(
                    r#"export ZIG_GLOBAL_CACHE_DIR={zig_cache} ZIG_LOCAL_CACHE_DIR={zig_cache}
args=()
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$a" in
    --target=*|-mmacosx-version-min=*|-mmacos-version-min=*) ;;
    -target|-arch) skip=1 ;;
    *) args+=("$a") ;;
  esac
done
exec {zig} cc -target {t} "${{args[@]}}"
"#,
                    zig_cache = zig_cache.display(),
                    zig = zig.display(),
                    t = target.zig,
                ),
            )?;
            // `zig lib` for msvc: cc-rs then archives the MSVC way, and blake3 does not ask
            // for `ml64.exe`.
            let archiver = if target.is_msvc() { "lib" } else { "ar" };
            write_script(
                &bin.join(format!("ar-{}", target.triple)),
                &format!(
                    "export ZIG_GLOBAL_CACHE_DIR={zig_cache} ZIG_LOCAL_CACHE_DIR={zig_cache}\nexec {zig} {archiver} \"$@\"\n",
                    zig_cache = zig_cache.display(),
                    zig = zig.display(),
                ),
            )?;
        }
        Ok(())
    }

    /// `cargo check --workspace --all-targets` for one target; false when it fails.
    fn check(&self, root: &Path, cache: &Path, target: &Target) -> Result<bool> {
        // `--keep-going`: every crate that can be checked is, so one run shows every error.
        let mut args = vec!["check", "--workspace", "--all-targets", "--locked", "--keep-going"];
        args.extend(crate::APP_FEATURES);
        let mut cmd = self.cargo(&[], root, &cache.join("target"), target, &args)?;
        // Warnings are errors on every target, as clippy's `-D warnings` on Linux; only the
        // target's crates get these flags (not build scripts or proc macros).
        cmd.env("RUSTFLAGS", "-D warnings");
        eprintln!("$ cargo check --workspace --all-targets -Zbuild-std --target {}", target.triple);
        let status = cmd.status().context("cannot start cargo")?;
        Ok(status.success())
    }

    /// `cargo <args> -Zbuild-std --target T` with this toolchain: Debian's rustc, std built from
    /// its source, the target's C compiler, archiver and resource compiler, and the given
    /// target folder. Flags from the caller's environment are dropped, so the build depends
    /// only on what the caller sets next. `launcher` runs cargo (`["nice", "-n", "10"]`), or
    /// is empty.
    pub fn cargo(
        &self,
        launcher: &[&str],
        root: &Path,
        target_dir: &Path,
        target: &Target,
        args: &[&str],
    ) -> Result<Command> {
        let bin = self.bin();
        let var = target.triple.replace('-', "_");
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![bin.clone()];
        paths.extend(std::env::split_paths(&path));
        let mut cmd = match launcher.split_first() {
            Some((program, rest)) => {
                let mut cmd = Command::new(program);
                cmd.args(rest).arg("cargo");
                cmd
            }
            None => Command::new("cargo"),
        };
        cmd.args(args)
            .args(["-Zbuild-std", "--target", target.triple])
            .current_dir(root)
            .env("PATH", std::env::join_paths(paths)?)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("RUSTC", bin.join("rustc"))
            .env("CARGO_TARGET_DIR", target_dir)
            .env(format!("CC_{var}"), bin.join(format!("cc-{}", target.triple)))
            .env(format!("AR_{var}"), bin.join(format!("ar-{}", target.triple)))
            .env_remove("RUSTFLAGS")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        if target.is_msvc() {
            cmd.env(format!("RC_{var}"), bin.join("llvm-rc"));
        } else if target.triple.ends_with("-windows-gnu") {
            cmd.env(format!("RC_{var}"), bin.join("x86_64-w64-mingw32-windres"));
        }
        if target.is_apple() {
            // mac-notification-sys's build script compiles Objective-C against Cocoa.h, which
            // no registry ships; under docs.rs it skips that.
            cmd.env("DOCS_RS", "1");
        }
        Ok(cmd)
    }

    /// Where `-Zbuild-std` reads std's source, which build flags remap to a fixed name.
    pub fn std_source(&self) -> PathBuf {
        self.root().join("usr/lib/rustlib/src/rust")
    }
}

/// Writes an executable bash script, marked as written by xtask.
pub(crate) fn write_script(path: &Path, body: &str) -> Result<()> {
    let text = format!("#!/bin/bash\n# Written by `cargo xtask`.\n{body}");
    // Never write through a link an older version left here.
    let _ = std::fs::remove_file(path);
    std::fs::write(path, text).with_context(|| format!("write {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, link).with_context(|| format!("link {}", link.display()))
}

/// xtask runs on Debian (it unpacks Debian's packages); it is only compiled elsewhere.
#[cfg(not(unix))]
fn symlink(_: &Path, link: &Path) -> Result<()> {
    bail!("cannot link {}: check-targets runs on Debian", link.display())
}

/// The Debian packages to unpack, with the versions apt offers now: `rustc-web`, its std for
/// the host (build scripts and proc macros), its library source (for `-Zbuild-std`; it must
/// match the compiler exactly), the LLVM it links (and `llvm-rc` from that LLVM), and mingw's
/// binutils (windows-gnu's `dlltool`, `windres`). The std's package name carries the version
/// (`libstd-rust-web-1.96`) and names the LLVM (`libllvm22`), so both are read from apt.
/// Whether this system's apt offers `rustc-web`, which the toolchain is made from: Debian
/// (bookworm-security and later) does, Ubuntu does not.
pub fn toolchain_offered() -> Result<bool> {
    if !deps::have("apt-cache") {
        return Ok(false);
    }
    if candidate("rustc-web")?.is_some() {
        return Ok(true);
    }
    apt_update()?;
    Ok(candidate("rustc-web")?.is_some())
}

fn debian_packages() -> Result<Vec<String>> {
    if !deps::have("apt-cache") {
        bail!("check-targets needs Debian's apt (it unpacks Debian's rustc-web)");
    }
    let mut rustc = candidate("rustc-web")?;
    if rustc.is_none() {
        apt_update()?;
        rustc = candidate("rustc-web")?;
    }
    let rustc = rustc.context(
        "apt offers no rustc-web (Debian bookworm-security and later ship it; Ubuntu does not)",
    )?;
    // "1.96.0+dfsg1-1~deb12u2" → "1.96"
    let minor: String = rustc.split('.').take(2).collect::<Vec<_>>().join(".");
    let std = format!("libstd-rust-web-{minor}");
    let llvm = depends(&std)?
        .into_iter()
        .find(|d| d.starts_with("libllvm"))
        .with_context(|| format!("{std} names no libllvm"))?;
    let llvm_version = llvm.trim_start_matches("libllvm").to_owned();
    let mut packages = Vec::new();
    for name in [
        "rustc-web".to_owned(),
        "libstd-rust-web-dev".to_owned(),
        std,
        "rust-web-src".to_owned(),
        llvm,
        format!("llvm-{llvm_version}"),
        "binutils-mingw-w64-x86-64".to_owned(),
    ] {
        let version = candidate(&name)?.with_context(|| format!("apt offers no {name}"))?;
        packages.push(format!("{name}={version}"));
    }
    Ok(packages)
}

/// The version `apt-get download` would fetch, if any.
fn candidate(package: &str) -> Result<Option<String>> {
    let out = Command::new("apt-cache").args(["policy", package]).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Candidate: "))
        .filter(|v| *v != "(none)")
        .map(str::to_owned))
}

fn depends(package: &str) -> Result<Vec<String>> {
    let out = Command::new("apt-cache").args(["depends", package]).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().filter_map(|l| l.trim().strip_prefix("Depends: ")).map(str::to_owned).collect())
}

fn apt_update() -> Result<()> {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let mut cmd = if root { Command::new("apt-get") } else { Command::new("sudo") };
    if !root {
        cmd.arg("apt-get");
    }
    sh(cmd.args(["-o", "DPkg::Lock::Timeout=300", "update", "-qq"]))
}
