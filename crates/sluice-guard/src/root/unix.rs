//! Unix implementation of [`Root`] and [`DirHandle`].
//!
//! Every lookup starts from the root's directory handle, never from a path string, so swapping
//! a directory for a symlink mid-operation cannot redirect it (SL-03):
//!
//! - Linux fast path: `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)`.
//!   When the path has no links (the common case) one syscall opens it and the kernel
//!   guarantees it is below the root; the requested path is then also the resolved path.
//! - When a link is involved (`ELOOP` from the fast path), on other Unixes, and when `openat2`
//!   is missing (`ENOSYS`, or `EPERM` from a seccomp filter): a component-wise walk that opens
//!   each directory with `openat(dirfd, name, O_NOFOLLOW | O_DIRECTORY)` and resolves links
//!   itself, so it knows the resolved project-relative path of what it opened. Absolute link
//!   targets and `..` above the root are refused without looking further, which keeps denials
//!   uniform: the answer does not depend on whether the outside target exists.
//! - [`Root::open_file`] (no resolved path needed) uses `openat2(RESOLVE_BENEATH |
//!   RESOLVE_NO_MAGICLINKS)` directly, letting the kernel follow in-root links.

use std::collections::VecDeque;
use std::fmt;
use std::fs::{File, Metadata};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{DirEntry, EntryKind, EntryMeta, FileId, MAX_LINK_HOPS};
use crate::{GuardError, RelPath};

// The changes made through a [`DirHandle`] (create, rename, remove, link, sync, mode).
mod write;

/// Set once `openat2` turned out to be unavailable in this process, so later calls go
/// straight to the walk instead of failing a syscall each time. Linux only, as `openat2`.
#[cfg(any(target_os = "linux", target_os = "android"))]
static OPENAT2_MISSING: AtomicBool = AtomicBool::new(false);

/// Flags for directories we only resolve through (no reading): `O_PATH` where it exists.
fn dir_path_flags() -> OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let base = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let base = OFlags::RDONLY;
    base | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// Directories we read entries from.
const READ_DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// Files we read. `NONBLOCK` so opening a FIFO returns at once (it is then refused by kind
/// instead of hanging the tool); `NOCTTY` so a terminal device can never become ours.
const READ_FILE_FLAGS: OFlags =
    OFlags::RDONLY.union(OFlags::NONBLOCK).union(OFlags::NOCTTY).union(OFlags::CLOEXEC);

/// An authorized project folder, held open by an `O_PATH` directory handle.
pub struct Root {
    fd: OwnedFd,
    canonical: PathBuf,
    use_openat2: AtomicBool,
}

impl fmt::Debug for Root {
    // Deliberately opaque: a `Debug` print ends up in logs, and logs never get physical paths.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Root { .. }")
    }
}

/// What the walk should do with the last component.
#[derive(Clone, Copy)]
enum Last {
    /// Open it with these flags (links followed).
    Open(OFlags),
    /// Only find out where it resolves to (links followed, must exist).
    Probe,
}

impl Root {
    /// Canonicalizes `path` and holds it open. The physical path is not kept in a form that
    /// could leak: errors say only what went wrong.
    pub fn open(path: &Path) -> Result<Root, GuardError> {
        let canonical = std::fs::canonicalize(path)
            .map_err(|e| GuardError::RootUnavailable { reason: e.kind().to_string() })?;
        let fd = rfs::open(&canonical, dir_path_flags(), Mode::empty()).map_err(|e| {
            let reason = if e == Errno::NOTDIR {
                "it is not a folder".to_owned()
            } else {
                std::io::Error::from(e).kind().to_string()
            };
            GuardError::RootUnavailable { reason }
        })?;
        Ok(Root { fd, canonical, use_openat2: AtomicBool::new(true) })
    }

    /// The canonical physical path of the root, for in-process consumers that need one (the
    /// git library, the folder watcher). Never put it in a message, log or tool output.
    pub fn path(&self) -> &Path {
        &self.canonical
    }

    /// Turns the `openat2` fast path off (or back on) for this root. Only for tests, so the
    /// fallback walk used on old kernels and macOS is exercised on Linux too.
    #[doc(hidden)]
    pub fn set_openat2(&self, enabled: bool) {
        self.use_openat2.store(enabled, Ordering::Relaxed);
    }

    /// Opens a regular file for reading, following links that stay inside the project.
    pub fn open_file(&self, rel: &RelPath) -> Result<(File, Metadata), GuardError> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if self.openat2_enabled() && !rel.is_root() {
            let resolve = rfs::ResolveFlags::BENEATH | rfs::ResolveFlags::NO_MAGICLINKS;
            match openat2_retry(self.fd.as_fd(), rel, READ_FILE_FLAGS, resolve) {
                Ok(fd) => return regular_file(fd, rel),
                Err(Errno::NOSYS | Errno::PERM) => OPENAT2_MISSING.store(true, Ordering::Relaxed),
                Err(e) => return Err(map_errno(e, rel)),
            }
        }
        let (fd, _) = self.open_resolved(rel, READ_FILE_FLAGS)?;
        regular_file(fd, rel)
    }

    /// Like [`Root::open_file`], and also returns the project-relative path the file was
    /// actually opened at (after in-project links), so the caller can apply the shield to it.
    pub fn open_file_resolved(
        &self,
        rel: &RelPath,
    ) -> Result<(File, Metadata, RelPath), GuardError> {
        let (fd, resolved) = self.open_resolved(rel, READ_FILE_FLAGS)?;
        let (file, meta) = regular_file(fd, rel)?;
        Ok((file, meta, resolved))
    }

    /// Opens the directory that holds `rel` (following in-project links in the parent chain
    /// only) and returns it with the final name, for the handle-relative mutations of
    /// [`DirHandle`]. The final component is never followed: callers look at it with
    /// [`DirHandle::entry_meta`] and refuse a link there. The root itself has no parent.
    pub fn open_parent(&self, rel: &RelPath) -> Result<(DirHandle, String), GuardError> {
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Err(GuardError::invalid("the project root itself cannot be changed"));
        };
        let dir = self.open_dir(&parent).map_err(|e| match e {
            GuardError::WrongKind { .. } => GuardError::NotFound { path: rel.to_string() },
            e => e.for_path(rel),
        })?;
        Ok((dir, name.to_owned()))
    }

    /// Opens a directory for listing; [`DirHandle::rel_path`] is its resolved path.
    pub fn open_dir(&self, rel: &RelPath) -> Result<DirHandle, GuardError> {
        match self.open_resolved(rel, READ_DIR_FLAGS) {
            Ok((fd, resolved)) => Ok(DirHandle { fd, rel: resolved, read: AtomicBool::new(false) }),
            Err(GuardError::NotFound { .. }) if self.metadata(rel).is_ok() => {
                let found = self.metadata(rel).map(|m| m.kind).unwrap_or(EntryKind::Other);
                Err(GuardError::WrongKind {
                    path: rel.to_string(),
                    expected: "a directory",
                    found: found.describe(),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// `lstat`-like: links in the parent chain are followed (inside the project only), the last
    /// component is reported as it is, a link as a link.
    pub fn metadata(&self, rel: &RelPath) -> Result<EntryMeta, GuardError> {
        self.lstat_resolved(rel).map(|(meta, _)| meta)
    }

    /// [`Root::metadata`] plus the resolved path of the entry (parent links resolved, the last
    /// component not followed).
    pub fn lstat_resolved(&self, rel: &RelPath) -> Result<(EntryMeta, RelPath), GuardError> {
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            let st = rfs::fstat(&self.fd).map_err(|e| map_errno(e, rel))?;
            return Ok((entry_meta(&st), RelPath::root()));
        };
        let (pfd, presolved) =
            self.open_resolved(&parent, dir_path_flags()).map_err(|e| e.for_path(rel))?;
        let st =
            rfs::statat(&pfd, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| map_errno(e, rel))?;
        Ok((entry_meta(&st), presolved.join(name)?))
    }

    /// The canonical project-relative path of `rel` after following every link; refused with
    /// `OutsideProject` if any link leaves the project, `NotFound` if it does not exist.
    pub fn resolve(&self, rel: &RelPath) -> Result<RelPath, GuardError> {
        if rel.is_root() {
            return Ok(RelPath::root());
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if self.openat2_enabled() {
            let strict = rfs::ResolveFlags::BENEATH
                | rfs::ResolveFlags::NO_MAGICLINKS
                | rfs::ResolveFlags::NO_SYMLINKS;
            let flags = OFlags::PATH | OFlags::CLOEXEC;
            match openat2_retry(self.fd.as_fd(), rel, flags, strict) {
                Ok(_) => return Ok(rel.clone()),
                Err(Errno::LOOP) => {}
                Err(Errno::NOSYS | Errno::PERM) => OPENAT2_MISSING.store(true, Ordering::Relaxed),
                Err(e) => return Err(map_errno(e, rel)),
            }
        }
        self.walk(rel, Last::Probe).map(|(_, resolved)| resolved)
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn openat2_enabled(&self) -> bool {
        self.use_openat2.load(Ordering::Relaxed) && !OPENAT2_MISSING.load(Ordering::Relaxed)
    }

    /// Opens `rel` with `flags`, following in-project links, and says where it ended up.
    fn open_resolved(
        &self,
        rel: &RelPath,
        flags: OFlags,
    ) -> Result<(OwnedFd, RelPath), GuardError> {
        if rel.is_root() {
            let fd =
                rfs::openat(&self.fd, ".", flags, Mode::empty()).map_err(|e| map_errno(e, rel))?;
            return Ok((fd, RelPath::root()));
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if self.openat2_enabled() {
            let strict = rfs::ResolveFlags::BENEATH
                | rfs::ResolveFlags::NO_MAGICLINKS
                | rfs::ResolveFlags::NO_SYMLINKS;
            match openat2_retry(self.fd.as_fd(), rel, flags, strict) {
                Ok(fd) => return Ok((fd, rel.clone())),
                // A link somewhere on the path: the walk resolves it and tracks where it goes.
                Err(Errno::LOOP) => {}
                Err(Errno::NOSYS | Errno::PERM) => OPENAT2_MISSING.store(true, Ordering::Relaxed),
                Err(e) => return Err(map_errno(e, rel)),
            }
        }
        let (fd, resolved) = self.walk(rel, Last::Open(flags))?;
        match fd {
            Some(fd) => Ok((fd, resolved)),
            None => Err(GuardError::Io { path: rel.to_string(), kind: std::io::ErrorKind::Other }),
        }
    }

    /// The race-safe, link-resolving walk described in the module docs.
    fn walk(&self, rel: &RelPath, last: Last) -> Result<(Option<OwnedFd>, RelPath), GuardError> {
        let outside = || GuardError::OutsideProject { path: rel.to_string() };
        let mut pending: VecDeque<String> = rel.components().map(str::to_owned).collect();
        let mut dirs: Vec<OwnedFd> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut hops = 0usize;

        while let Some(comp) = pending.pop_front() {
            match comp.as_str() {
                "" | "." => continue,
                ".." => {
                    if names.pop().is_none() {
                        return Err(outside());
                    }
                    dirs.pop();
                    continue;
                }
                _ => {}
            }
            let cur: BorrowedFd<'_> = dirs.last().map_or(self.fd.as_fd(), |d| d.as_fd());
            let is_last = pending.is_empty();

            let is_link = if is_last {
                match last {
                    Last::Open(flags) => match rfs::openat(
                        cur,
                        comp.as_str(),
                        flags | OFlags::NOFOLLOW,
                        Mode::empty(),
                    ) {
                        Ok(fd) => {
                            // `O_PATH | O_NOFOLLOW` opens a link itself instead of failing.
                            let st = rfs::fstat(&fd).map_err(|e| map_errno(e, rel))?;
                            if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
                                true
                            } else {
                                names.push(comp);
                                return Ok((Some(fd), RelPath::parse(&names.join("/"))?));
                            }
                        }
                        Err(Errno::LOOP | Errno::MLINK | Errno::NOTDIR) => {
                            is_symlink_at(cur, &comp, rel)?
                        }
                        Err(e) => return Err(map_errno(e, rel)),
                    },
                    Last::Probe => {
                        let st = rfs::statat(cur, comp.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                            .map_err(|e| map_errno(e, rel))?;
                        if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
                            true
                        } else {
                            names.push(comp);
                            return Ok((None, RelPath::parse(&names.join("/"))?));
                        }
                    }
                }
            } else {
                match rfs::openat(
                    cur,
                    comp.as_str(),
                    dir_path_flags() | OFlags::NOFOLLOW,
                    Mode::empty(),
                ) {
                    Ok(fd) => {
                        dirs.push(fd);
                        names.push(comp);
                        continue;
                    }
                    Err(Errno::LOOP | Errno::MLINK | Errno::NOTDIR) => {
                        is_symlink_at(cur, &comp, rel)?
                    }
                    Err(e) => return Err(map_errno(e, rel)),
                }
            };

            if !is_link {
                // `ELOOP` without a link: it changed under us. Try the same name again; the hop
                // budget bounds how long an attacker can keep us spinning.
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(GuardError::LinkLoop { path: rel.to_string() });
                }
                pending.push_front(comp);
                continue;
            }
            hops += 1;
            if hops > MAX_LINK_HOPS {
                return Err(GuardError::LinkLoop { path: rel.to_string() });
            }
            let target = match rfs::readlinkat(cur, comp.as_str(), Vec::new()) {
                Ok(t) => t,
                // No longer a link (swapped back): look at the name again.
                Err(Errno::INVAL) => {
                    pending.push_front(comp);
                    continue;
                }
                Err(e) => return Err(map_errno(e, rel)),
            };
            let bytes = target.as_bytes();
            if bytes.first() == Some(&b'/') {
                return Err(outside());
            }
            if bytes.is_empty() {
                return Err(GuardError::NotFound { path: rel.to_string() });
            }
            let text = target
                .to_str()
                .map_err(|_| GuardError::invalid("a link on the path has a non-UTF-8 target"))?;
            for part in text.split('/').rev() {
                pending.push_front(part.to_owned());
            }
        }

        // The path ended in `.` or `..` after link expansion: the result is the current dir.
        let resolved = RelPath::parse(&names.join("/"))?;
        match last {
            Last::Probe => Ok((None, resolved)),
            Last::Open(flags) => {
                let cur = dirs.last().map_or(self.fd.as_fd(), |d| d.as_fd());
                let fd =
                    rfs::openat(cur, ".", flags, Mode::empty()).map_err(|e| map_errno(e, rel))?;
                Ok((Some(fd), resolved))
            }
        }
    }
}

/// A directory opened for reading, with the project-relative path it was reached at. All
/// operations are relative to the handle and never follow a link, which is what makes the
/// walkers built on it immune to swaps.
pub struct DirHandle {
    fd: OwnedFd,
    rel: RelPath,
    /// Whether [`DirHandle::entries`] has moved the descriptor's position.
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    read: AtomicBool,
}

impl fmt::Debug for DirHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirHandle").field("rel", &self.rel).finish_non_exhaustive()
    }
}

impl DirHandle {
    /// The (resolved) project-relative path of this directory.
    pub fn rel_path(&self) -> &RelPath {
        &self.rel
    }

    /// The directory's identity, for loop detection.
    pub fn id(&self) -> Result<FileId, GuardError> {
        let st = rfs::fstat(&self.fd).map_err(|e| map_errno(e, &self.rel))?;
        Ok(entry_meta(&st).id)
    }

    /// The entries, without `.`/`..` and without names that are not UTF-8.
    pub fn entries(&self) -> Result<Vec<DirEntry>, GuardError> {
        // The first reading uses the handle's own descriptor, still at its start: the walkers
        // read each folder once, and a copy of the descriptor (rustix's `Dir::read_from`:
        // `fcntl`, `openat(".")`, `close`) costs three system calls a folder. Any later or
        // concurrent reading takes a copy, which starts at the beginning.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if !self.read.swap(true, Ordering::Relaxed) {
            return self.entries_raw();
        }
        let dir = rfs::Dir::read_from(&self.fd).map_err(|e| map_errno(e, &self.rel))?;
        let mut out = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| map_errno(e, &self.rel))?;
            if let Some(entry) = dir_entry(entry.file_name(), entry.file_type()) {
                out.push(entry);
            }
        }
        Ok(out)
    }

    /// `getdents64` on the handle's descriptor itself, from where it stands.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn entries_raw(&self) -> Result<Vec<DirEntry>, GuardError> {
        use std::mem::MaybeUninit;
        // Room for at least 30 entries of the longest names a filesystem allows.
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 8192];
        let mut dir = rfs::RawDir::new(&self.fd, &mut buf);
        let mut out = Vec::new();
        while let Some(entry) = dir.next() {
            let entry = entry.map_err(|e| map_errno(e, &self.rel))?;
            if let Some(entry) = dir_entry(entry.file_name(), entry.file_type()) {
                out.push(entry);
            }
        }
        Ok(out)
    }

    /// Opens the child directory `name`; a link (even one inside the project) is refused with
    /// `WrongKind`, since walkers report links and never descend them.
    pub fn open_subdir(&self, name: &str) -> Result<DirHandle, GuardError> {
        let rel = self.rel.join(name)?;
        let fd = rfs::openat(&self.fd, name, READ_DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())
            .map_err(|e| map_child_errno(e, &rel, "a directory"))?;
        Ok(DirHandle { fd, rel, read: AtomicBool::new(false) })
    }

    /// Opens the regular file `name` without following a link.
    pub fn open_file(&self, name: &str) -> Result<(File, Metadata), GuardError> {
        let rel = self.rel.join(name)?;
        let fd = rfs::openat(&self.fd, name, READ_FILE_FLAGS | OFlags::NOFOLLOW, Mode::empty())
            .map_err(|e| map_child_errno(e, &rel, "a regular file"))?;
        regular_file(fd, &rel)
    }

    /// `lstat` of the child `name`.
    pub fn entry_meta(&self, name: &str) -> Result<EntryMeta, GuardError> {
        let rel = self.rel.join(name)?;
        let st = rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| map_errno(e, &rel))?;
        Ok(entry_meta(&st))
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn openat2_retry(
    dir: BorrowedFd<'_>,
    rel: &RelPath,
    flags: OFlags,
    resolve: rfs::ResolveFlags,
) -> Result<OwnedFd, Errno> {
    // `EAGAIN` means a concurrent rename raced the `..` checks; the kernel asks us to retry.
    let mut attempts = 0;
    loop {
        match rfs::openat2(dir, rel.as_str(), flags, Mode::empty(), resolve) {
            Err(Errno::AGAIN) if attempts < 16 => attempts += 1,
            other => return other,
        }
    }
}

fn is_symlink_at(dir: BorrowedFd<'_>, name: &str, rel: &RelPath) -> Result<bool, GuardError> {
    match rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => {
            let ft = FileType::from_raw_mode(st.st_mode);
            if ft == FileType::Symlink {
                Ok(true)
            } else if ft != FileType::Directory {
                // A file where a directory was needed: nothing exists at the full path.
                Err(GuardError::NotFound { path: rel.to_string() })
            } else {
                Ok(false)
            }
        }
        Err(e) => Err(map_errno(e, rel)),
    }
}

/// One name read from a directory as the tools see it: `None` for `.`, `..` and names that are
/// not UTF-8.
fn dir_entry(name: &std::ffi::CStr, kind: FileType) -> Option<DirEntry> {
    let name = name.to_str().ok()?;
    if name == "." || name == ".." {
        return None;
    }
    let kind = match kind {
        FileType::RegularFile => Some(EntryKind::File),
        FileType::Directory => Some(EntryKind::Dir),
        FileType::Symlink => Some(EntryKind::Symlink),
        FileType::Unknown => None,
        _ => Some(EntryKind::Other),
    };
    Some(DirEntry { name: name.to_owned(), kind })
}

/// Wraps an opened descriptor as a `File` if it is a regular file.
fn regular_file(fd: OwnedFd, rel: &RelPath) -> Result<(File, Metadata), GuardError> {
    let file = File::from(fd);
    let meta =
        file.metadata().map_err(|e| GuardError::Io { path: rel.to_string(), kind: e.kind() })?;
    if meta.is_file() {
        return Ok((file, meta));
    }
    let found = if meta.is_dir() { EntryKind::Dir } else { EntryKind::Other };
    Err(GuardError::WrongKind {
        path: rel.to_string(),
        expected: "a regular file",
        found: found.describe(),
    })
}

/// Errors from opening a child without following links: a link shows up as `ELOOP`.
fn map_child_errno(e: Errno, rel: &RelPath, expected: &'static str) -> GuardError {
    match e {
        Errno::LOOP | Errno::MLINK => {
            GuardError::WrongKind { path: rel.to_string(), expected, found: "a symbolic link" }
        }
        Errno::NOTDIR => {
            GuardError::WrongKind { path: rel.to_string(), expected, found: "not a directory" }
        }
        e => map_errno(e, rel),
    }
}

fn map_errno(e: Errno, rel: &RelPath) -> GuardError {
    let path = rel.to_string();
    match e {
        Errno::NOENT | Errno::NOTDIR => GuardError::NotFound { path },
        Errno::XDEV => GuardError::OutsideProject { path },
        Errno::LOOP | Errno::MLINK => GuardError::LinkLoop { path },
        Errno::ACCESS | Errno::PERM => GuardError::PermissionDenied { path },
        Errno::NAMETOOLONG => GuardError::invalid("a path component is too long"),
        e => GuardError::Io { path, kind: std::io::Error::from(e).kind() },
    }
}

// Field types differ between platforms (`i64` here, `i32`/`u32` there), hence the casts.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn entry_meta(st: &rfs::Stat) -> EntryMeta {
    let kind = match FileType::from_raw_mode(st.st_mode as _) {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Dir,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Other,
    };
    let time = |secs: i64, nanos: i64| {
        let nanos = u32::try_from(nanos).unwrap_or(0).min(999_999_999);
        if secs >= 0 {
            SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs.unsigned_abs(), nanos))
        } else {
            SystemTime::UNIX_EPOCH.checked_sub(Duration::from_secs(secs.unsigned_abs()))
        }
    };
    let modified = time(st.st_mtime as i64, st.st_mtime_nsec as i64);
    let changed = time(st.st_ctime as i64, st.st_ctime_nsec as i64);
    EntryMeta {
        kind,
        len: u64::try_from(st.st_size as i64).unwrap_or(0),
        modified,
        readonly: (st.st_mode as u32) & 0o222 == 0,
        id: FileId { dev: st.st_dev as u64, ino: st.st_ino as u64 },
        mode: (st.st_mode as u32) & 0o7777,
        nlink: st.st_nlink as u64,
        changed,
    }
}
