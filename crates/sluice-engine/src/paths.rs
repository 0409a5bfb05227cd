//! Where Sluice keeps its state, and the small file through which `sluice stdio` finds the
//! running engine's port.

use std::path::{Path, PathBuf};

/// The user's home folder, from the environment (never expanded inside project paths).
pub fn home_dir() -> Option<PathBuf> {
    #[cfg(windows)]
    let var = "USERPROFILE";
    #[cfg(not(windows))]
    let var = "HOME";
    std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The OS's per-user data folder for Sluice: `$XDG_DATA_HOME/sluice` or
/// `~/.local/share/sluice` on Linux, `~/Library/Application Support/Sluice` on macOS,
/// `%APPDATA%\Sluice` on Windows.
pub fn default_data_dir() -> Option<PathBuf> {
    #[cfg(target_os = "macos")]
    {
        home_dir().map(|h| h.join("Library/Application Support/Sluice"))
    }
    #[cfg(windows)]
    {
        std::env::var_os("APPDATA").map(|a| PathBuf::from(a).join("Sluice"))
    }
    #[cfg(not(any(target_os = "macos", windows)))]
    {
        std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| home_dir().map(|h| h.join(".local/share")))
            .map(|d| d.join("sluice"))
    }
}

/// `<data_dir>/engine.json`: written by a serving engine, read by `sluice stdio`.
pub fn engine_file(data_dir: &Path) -> PathBuf {
    data_dir.join("engine.json")
}

/// Records the serving port (and pid, for diagnostics); owner-only like everything there.
pub fn write_engine_file(data_dir: &Path, port: u16) -> std::io::Result<()> {
    let body = serde_json::json!({ "port": port, "pid": std::process::id() }).to_string();
    let path = engine_file(data_dir);
    let tmp = path.with_extension("json.tmp");
    write_private(&tmp, body.as_bytes())?;
    std::fs::rename(tmp, path)
}

/// `<data_dir>/nudge`: rewritten by any process that changed something a serving engine must
/// act on at once (an emergency stop, a project that may no longer run commands). The serving
/// engine watches it, so a `sluice stop` kills running jobs without waiting for its periodic
/// check. It carries no information: the database says what changed.
pub fn nudge_file(data_dir: &Path) -> PathBuf {
    data_dir.join("nudge")
}

/// Wakes a serving engine (see [`nudge_file`]). Best effort: the periodic check still comes.
pub fn nudge(data_dir: &Path) {
    let stamp = crate::now_ms().to_string();
    if let Err(err) = write_private_unsynced(&nudge_file(data_dir), stamp.as_bytes()) {
        tracing::debug!(%err, "cannot nudge the serving engine");
    }
}

fn write_private_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    sluice_store::fsperm::create_private(path)?.write_all(bytes)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = sluice_store::fsperm::create_private(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// The port of the engine serving from `data_dir`, if one recorded it.
pub fn read_engine_file(data_dir: &Path) -> Option<u16> {
    let text = std::fs::read_to_string(engine_file(data_dir)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    u16::try_from(v.get("port")?.as_u64()?).ok()
}
