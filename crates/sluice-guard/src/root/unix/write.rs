//! The changes a [`DirHandle`] makes in its folder: a file of its own, a rename, a removal, a
//! new folder or link, a sync, a mode. Apart from `unix.rs` only for its length; the same
//! rules hold (no link followed at `name`).

use std::fs::File;

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::{DirHandle, READ_FILE_FLAGS, entry_meta, map_child_errno, map_errno};
use crate::{EntryKind, FileId, GuardError, RelPath};

/// Mutations relative to a held directory. None of them follows a link at `name`: `O_NOFOLLOW`
/// opens, `unlinkat` and `renameat` all act on the name itself, so a link planted at a
/// destination is replaced or removed, never written through (SL-02).
impl DirHandle {
    /// Creates a new, empty file with a random name in this directory (`O_CREAT | O_EXCL |
    /// O_NOFOLLOW`, so a pre-planted link or file at the name makes the attempt fail and a new
    /// name is tried). `mode` is filtered by the umask as usual. Returns the file and its name.
    pub fn create_temp(&self, stem: &str, mode: u32) -> Result<(File, String), GuardError> {
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::NOCTTY
            | OFlags::CLOEXEC;
        for _ in 0..16 {
            let name = temp_name(stem);
            match rfs::openat(&self.fd, name.as_str(), flags, Mode::from_raw_mode(mode as _)) {
                Ok(fd) => return Ok((File::from(fd), name)),
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(map_errno(e, &self.rel)),
            }
        }
        Err(GuardError::Io { path: self.rel.to_string(), kind: std::io::ErrorKind::AlreadyExists })
    }

    /// Renames `from` in this directory to `to` in `to_dir`. With `replace` an existing `to`
    /// (file or link, never followed) is atomically replaced; without it an existing `to` fails
    /// with `Io { kind: AlreadyExists }` (`RENAME_NOREPLACE` where the kernel has it).
    pub fn rename(
        &self,
        from: &str,
        to_dir: &DirHandle,
        to: &str,
        replace: bool,
    ) -> Result<(), GuardError> {
        let rel = to_dir.rel.join(to)?;
        if replace {
            return rfs::renameat(&self.fd, from, &to_dir.fd, to).map_err(|e| map_errno(e, &rel));
        }
        #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
        match rfs::renameat_with(&self.fd, from, &to_dir.fd, to, rfs::RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(Errno::EXIST) => return Err(exists(&rel)),
            // Filesystems without RENAME_NOREPLACE: fall through to check-then-rename.
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {}
            Err(e) => return Err(map_errno(e, &rel)),
        }
        // The caller holds the project's mutation lock, so only an outside process could race
        // this check; the worst it can do is have its own new file replaced.
        match rfs::statat(&to_dir.fd, to, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Err(exists(&rel)),
            Err(Errno::NOENT) => {
                rfs::renameat(&self.fd, from, &to_dir.fd, to).map_err(|e| map_errno(e, &rel))
            }
            Err(e) => Err(map_errno(e, &rel)),
        }
    }

    /// Removes the non-directory entry `name` (a link is removed itself, never its target).
    pub fn unlink(&self, name: &str) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        rfs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(|e| map_errno(e, &rel))
    }

    /// Removes the empty directory `name`.
    pub fn remove_dir(&self, name: &str) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        rfs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR).map_err(|e| match e {
            Errno::NOTEMPTY | Errno::EXIST => GuardError::Io {
                path: rel.to_string(),
                kind: std::io::ErrorKind::DirectoryNotEmpty,
            },
            e => map_errno(e, &rel),
        })
    }

    /// Creates the directory `name`; an existing entry fails with `Io { AlreadyExists }`.
    pub fn mkdir(&self, name: &str, mode: u32) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode as _)).map_err(|e| match e {
            Errno::EXIST => exists(&rel),
            e => map_errno(e, &rel),
        })
    }

    /// The target text of the link `name` (never followed). Non-UTF-8 targets are refused.
    pub fn read_link(&self, name: &str) -> Result<String, GuardError> {
        let rel = self.rel.join(name)?;
        let target = rfs::readlinkat(&self.fd, name, Vec::new()).map_err(|e| map_errno(e, &rel))?;
        target.into_string().map_err(|_| GuardError::invalid("a link has a non-UTF-8 target"))
    }

    /// Creates the link `name -> target` (only used to put back a link Sluice deleted).
    pub fn symlink(&self, target: &str, name: &str) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        rfs::symlinkat(target, &self.fd, name).map_err(|e| match e {
            Errno::EXIST => exists(&rel),
            e => map_errno(e, &rel),
        })
    }

    /// Flushes the directory itself, so renames and unlinks in it survive a crash.
    pub fn sync(&self) -> Result<(), GuardError> {
        rfs::fsync(&self.fd).map_err(|e| map_errno(e, &self.rel))
    }

    /// Sets the permission bits of the file or folder `name`, only if it is still the entry
    /// `expect`: the entry is opened without following a link (a link fails to open) and
    /// changed through that handle, so a swap can neither redirect the change nor go unseen.
    pub fn set_mode(&self, name: &str, expect: FileId, mode: u32) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        let flags = READ_FILE_FLAGS | OFlags::NOFOLLOW;
        let fd = rfs::openat(&self.fd, name, flags, Mode::empty())
            .map_err(|e| map_child_errno(e, &rel, "a regular file or directory"))?;
        let st = rfs::fstat(&fd).map_err(|e| map_errno(e, &rel))?;
        let meta = entry_meta(&st);
        if meta.id != expect || !matches!(meta.kind, EntryKind::File | EntryKind::Dir) {
            return Err(GuardError::Io {
                path: rel.to_string(),
                kind: std::io::ErrorKind::AlreadyExists,
            });
        }
        rfs::fchmod(&fd, Mode::from_raw_mode((mode & 0o7777) as _)).map_err(|e| map_errno(e, &rel))
    }

    /// Bytes available to unprivileged writers on the directory's filesystem, if known.
    pub fn free_space(&self) -> Option<u64> {
        let st = rfs::fstatvfs(&self.fd).ok()?;
        Some(st.f_bavail.saturating_mul(st.f_frsize))
    }
}

/// `.{stem}.sluice-tmp-{random}`: hidden, recognisable as ours, unguessable (SL-02: a planted
/// link at a predictable temp name is the classic attack).
fn temp_name(stem: &str) -> String {
    let mut short: String = stem.chars().take(40).collect();
    short.retain(|c| c != '/' && c != '\\');
    let random = sluice_core::id::base32(&sluice_core::random_bytes::<12>());
    format!(".{short}.sluice-tmp-{random}")
}

fn exists(rel: &RelPath) -> GuardError {
    GuardError::Io { path: rel.to_string(), kind: std::io::ErrorKind::AlreadyExists }
}
