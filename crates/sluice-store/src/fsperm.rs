//! Owner-only files and folders. Sluice's data folder holds the database (token hashes, audit)
//! and maybe the install secret, so it is 0700 and its files 0600 on unix. On Windows the
//! per-user profile ACLs already confine `%APPDATA%`; these helpers only create there. The one
//! place every process that writes into the data folder (engine, tray, CLI) takes them from.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use crate::StoreError;

/// Creates `dir` and its missing parents, owner-only (an existing folder keeps its mode).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Opens `path` for writing from the start, owner-only when it is created.
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)
}

/// Writes `path` whole, owner-only: a new file under a random name in the same folder (never
/// one that exists, so never through a planted link), synced, then renamed over `path`.
pub fn write_private_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let suffix = sluice_core::id::base32(&sluice_core::random_bytes::<6>());
    let tmp = path.with_extension(format!("tmp-{suffix}"));
    let result = (|| {
        let mut file = create_new_private(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Creates `dir` (and parents) if needed, and makes `dir` itself owner-only.
pub(crate) fn ensure_private_dir(dir: &Path) -> Result<(), StoreError> {
    create_private_dir(dir)
        .map_err(|e| StoreError::io(format!("cannot create the folder {}", dir.display()), e))?;
    // An existing folder keeps its mode through `create`; tighten it, since a group- or
    // world-readable data folder would expose the database and a file-held secret.
    tighten(dir, 0o700)
}

/// Makes sure `path` exists as a file with owner-only permissions, creating it if needed.
pub(crate) fn ensure_private_file(path: &Path) -> Result<(), StoreError> {
    let mut opts = OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path).map_err(|e| StoreError::io(format!("cannot create {}", path.display()), e))?;
    tighten(path, 0o600)
}

/// Creates a new file that did not exist (O_EXCL), owner-only from the first byte.
pub fn create_new_private(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)
}

/// The permission bits of `path` that grant access to group or others (unix), else 0.
pub(crate) fn foreign_access_bits(meta: &std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o077
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        0
    }
}

/// The full permission bits, for messages (unix), else 0.
pub(crate) fn mode_bits(meta: &std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        0
    }
}

fn tighten(path: &Path, mode: u32) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path)
            .map_err(|e| StoreError::io(format!("cannot stat {}", path.display()), e))?;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(path = %path.display(), "tightening permissions to owner-only");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .map_err(|e| StoreError::io(format!("cannot chmod {}", path.display()), e))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}
