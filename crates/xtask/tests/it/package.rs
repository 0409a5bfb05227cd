//! The Linux packages `cargo xtask bundle` built: small enough, and the .deb installed for real
//! (`tests/package/deb_install.py`: apt installs it with its declared dependencies, the installed
//! app runs under Xvfb and answers a real MCP client with a token the installed `sluice` made,
//! over HTTP and through `sluice stdio`; a second launch hands over to it (single instance);
//! driven through tauri-driver, its Settings write a login item that starts the installed app
//! with `--hidden`, and that command serves MCP without opening the window; then `dpkg --purge`
//! leaves none of its files).
//!
//! Installing changes the system, and a release build takes minutes, so the ordinary test suite
//! neither builds nor installs packages: unless asked, these tests say so and check nothing —
//! even when an older package lies in the target folder, which may not match the code. `cargo
//! xtask bundle --test` builds them and runs these tests on them (`SLUICE_TEST_DEB` names the
//! fresh .deb, and `SLUICE_TEST_REQUIRE_DEB=1` makes a missing package fail).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{repo_root, target_dir};

/// The size every installer should stay under.
const MAX_PACKAGE_BYTES: u64 = 15 * 1024 * 1024;

fn required() -> bool {
    std::env::var_os("SLUICE_TEST_REQUIRE_DEB").is_some_and(|v| v == "1")
}

/// The packages of one kind under the bundle folder, newest first.
fn packages(kind: &str) -> Vec<PathBuf> {
    let dir = target_dir().join("release/bundle").join(kind);
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == kind))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    found.sort();
    found.into_iter().rev().map(|(_, p)| p).collect()
}

/// The .deb to test: `SLUICE_TEST_DEB`, set by `cargo xtask bundle --test` after building it.
fn deb() -> Option<PathBuf> {
    let deb = std::env::var_os("SLUICE_TEST_DEB").map(PathBuf::from);
    if deb.is_none() {
        assert!(!required(), "SLUICE_TEST_REQUIRE_DEB=1 but no .deb was named");
        eprintln!(
            "package test: not asked to install a package (`cargo xtask bundle --test` builds \
             the packages and runs this test)"
        );
    }
    deb
}

#[test]
fn packages_stay_under_15_mb() {
    if std::env::var_os("SLUICE_TEST_DEB").is_none() {
        eprintln!("package test: not asked to check packages (`cargo xtask bundle --test`)");
        return;
    }
    let built: Vec<PathBuf> = ["deb", "rpm"].iter().flat_map(|k| packages(k)).collect();
    if built.is_empty() {
        assert!(!required(), "SLUICE_TEST_REQUIRE_DEB=1 but no package was built");
        eprintln!("package test: no .deb or .rpm was built, no size to check");
        return;
    }
    for path in built {
        let size = std::fs::metadata(&path).unwrap().len();
        eprintln!("{} {:.1} MB", path.display(), size as f64 / 1_000_000.0);
        assert!(size < MAX_PACKAGE_BYTES, "{} is {size} bytes, over 15 MB", path.display());
    }
}

/// Whether this process may install packages (root, or password-less sudo).
fn can_install() -> bool {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    root || Command::new("sudo").args(["-n", "true"]).status().is_ok_and(|s| s.success())
}

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

fn python() -> PathBuf {
    std::env::var_os("SLUICE_TEST_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        panic!(
            "SLUICE_TEST_PYTHON is not set: run the tests with `cargo xtask test` or `cargo \
             xtask bundle --test`, which install the Python MCP SDK"
        )
    })
}

/// Why the install test cannot run here, if it cannot (printed, then the test checks nothing).
fn blocker(deb: &Path) -> Option<String> {
    if !can_install() {
        return Some("installing a package needs root or password-less sudo".into());
    }
    let out = Command::new("dpkg-deb").args(["-f"]).arg(deb).arg("Package").output();
    let package = out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).ok()?;
    if installed(&package) {
        return Some(format!(
            "{package} is already installed on this machine; the test would purge that install"
        ));
    }
    None
}

#[test]
fn deb_installs_runs_and_purges() {
    let Some(deb) = deb() else { return };
    if let Some(reason) = blocker(&deb) {
        assert!(!required(), "cannot run the package test: {reason}");
        eprintln!("package test: {reason}; not installing {}", deb.display());
        return;
    }
    let script = repo_root().join("tests/package/deb_install.py");
    let started = std::time::Instant::now();
    let out = Command::new(python()).arg(&script).arg(&deb).output().expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the .deb install test failed ({})", deb.display());
    assert!(stdout.lines().any(|l| l == "OK"), "the install test reached its end");
    eprintln!("package test: {} s", started.elapsed().as_secs());
}
