//! The file-system calls the jail makes between fork and exec, on rustix: paths opened and walked
//! without following a symlink, binds and mounts through `/proc/self/fd/N` (strings built on the
//! stack), mount attributes, the id maps. rustix makes raw system calls, and nothing here
//! allocates or takes a lock (errors are plain error numbers), so all of it is safe in the forked
//! child of a threaded engine. `mount_setattr` is the one call rustix does not wrap.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use rustix::fs::{CWD, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use rustix::mount::{MountAttrFlags, MountFlags};

/// A NUL-terminated string built on the stack (mount options, `/proc/self/fd/N`).
pub(super) struct StackText {
    buf: [u8; 128],
    len: usize,
}

impl StackText {
    pub(super) fn new() -> StackText {
        StackText { buf: [0; 128], len: 0 }
    }

    /// Appends what fits, always leaving the final NUL (a cut option fails the mount).
    pub(super) fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.len + 1 < self.buf.len() {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }
    }

    pub(super) fn number(&mut self, n: i32) {
        let mut digits = [0u8; 10];
        let (mut n, mut i) = (n.unsigned_abs(), digits.len());
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }

    pub(super) fn as_cstr(&self) -> &CStr {
        // The last byte is never written: there is always a NUL.
        CStr::from_bytes_until_nul(&self.buf).unwrap_or(c"")
    }
}

/// `/proc/self/fd/N` for `fd`, on the stack: what every mount of the jail targets, so that no
/// path a job could plant a link in is resolved again.
pub(super) fn fd_path(fd: BorrowedFd<'_>) -> StackText {
    let mut text = StackText::new();
    text.push(b"/proc/self/fd/");
    text.number(fd.as_raw_fd());
    text
}

/// What [`walk`] does when a component is missing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Make {
    No,
    Dir,
    File,
}

/// Opens a canonical absolute path (`O_PATH`) with no symlink anywhere in it.
pub(super) fn open_nofollow(path: &CStr, directory: bool) -> std::io::Result<OwnedFd> {
    let mut flags = OFlags::PATH | OFlags::CLOEXEC;
    if directory {
        flags |= OFlags::DIRECTORY;
    }
    Ok(rustix::fs::openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS)?)
}

/// Walks `parts` beneath `root` one component at a time, never following a symlink, creating
/// missing folders (and the last component as `make` says). Returns an `O_PATH` descriptor.
pub(super) fn walk(
    root: BorrowedFd<'_>,
    parts: &[CString],
    make: Make,
) -> std::io::Result<OwnedFd> {
    let mut fd = rustix::io::fcntl_dupfd_cloexec(root, 0)?;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        fd = open_at(&fd, part, if last { make } else { Make::Dir })?;
    }
    Ok(fd)
}

/// One component: opened with `O_NOFOLLOW`, created first when missing and `make` says so.
pub(super) fn open_at(dir: &OwnedFd, name: &CStr, make: Make) -> std::io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Err(Errno::NOENT) if make != Make::No => {}
        opened => return Ok(opened?),
    }
    match make {
        Make::Dir => match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        },
        Make::File => {
            let create = OFlags::CREATE | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            drop(rustix::fs::openat(dir, name, create, Mode::from_raw_mode(0o644))?);
        }
        Make::No => {}
    }
    Ok(rustix::fs::openat(dir, name, flags, Mode::empty())?)
}

/// Binds what `source` is onto what `target` is (with `recursive`, the mounts beneath too).
pub(super) fn bind(
    source: BorrowedFd<'_>,
    target: BorrowedFd<'_>,
    recursive: bool,
) -> std::io::Result<()> {
    let (source, target) = (fd_path(source), fd_path(target));
    if recursive {
        rustix::mount::mount_bind_recursive(source.as_cstr(), target.as_cstr())?;
    } else {
        rustix::mount::mount_bind(source.as_cstr(), target.as_cstr())?;
    }
    Ok(())
}

/// Mounts a new file system of type `fs` (`tmpfs`, `proc`, `overlay`) on what `target` is.
pub(super) fn mount_new(
    fs: &CStr,
    target: BorrowedFd<'_>,
    flags: MountFlags,
    options: Option<&CStr>,
) -> std::io::Result<()> {
    Ok(rustix::mount::mount(fs, fd_path(target).as_cstr(), fs, flags, options)?)
}

/// `mount_setattr` on the mount `fd` is (with `recursive`, every mount beneath it too).
pub(super) fn set_attr(
    fd: BorrowedFd<'_>,
    set: MountAttrFlags,
    recursive: bool,
) -> std::io::Result<()> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr =
        MountAttr { attr_set: u64::from(set.bits()), attr_clr: 0, propagation: 0, userns_fd: 0 };
    let mut flags = libc::AT_EMPTY_PATH;
    if recursive {
        flags |= libc::AT_RECURSIVE;
    }
    // SAFETY: mount_setattr reads an empty NUL-terminated path and `attr`, both alive for the
    // call, whose size it is given; `fd` is a borrowed open descriptor.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            fd.as_raw_fd(),
            c"".as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
}

/// Writes `data` to the file at `path` in one write (`/proc/self/uid_map` and the like).
pub(super) fn write_file(path: &CStr, data: &[u8]) -> std::io::Result<()> {
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    if rustix::io::write(&fd, data)? != data.len() {
        return Err(Errno::IO.into());
    }
    Ok(())
}
