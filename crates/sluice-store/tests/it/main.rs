//! Integration tests of sluice-store against real SQLite files in temporary folders.

mod audit;
mod oauth;
mod projects;
mod seal;
mod secret;
mod store;
mod tokens;
mod worktrees;

use std::path::Path;

use sluice_core::{AccessMode, ExecMode};
use sluice_store::{InstallSecret, NewProject, Project, Store};

/// A fresh data folder (inside a temp dir, so the 0700 creation is exercised too).
pub fn data_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    (tmp, dir)
}

/// The install secret of every test store, as the engine would load it.
pub fn test_secret() -> InstallSecret {
    InstallSecret::from_bytes([0x5e; 32])
}

/// Opens the store and attaches the test secret, as the engine and the CLI do.
pub fn open(dir: &Path) -> Store {
    let store = Store::open(dir).expect("open store");
    store.attach_secret(&test_secret()).expect("attach the secret");
    store
}

/// An absolute path for a project root, from a Unix-style one (`/srv/x`): on Windows on drive
/// `C:` (`C:/srv/x`), where a path without a drive is not absolute.
pub fn root(unix: &str) -> std::path::PathBuf {
    if cfg!(windows) { format!("C:{unix}").into() } else { unix.into() }
}

pub fn add_project(store: &Store, name: &str) -> Project {
    store
        .insert_project(&NewProject {
            name: name.to_owned(),
            root: root(&format!("/srv/projects/{name}")),
            access: AccessMode::ReadWrite,
            exec: ExecMode::Off,
            fingerprint: None,
        })
        .expect("insert project")
}

#[cfg(unix)]
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}
