//! The system calls the jail makes between fork and exec, wrapped: descriptors closed on drop,
//! strings built on the stack, paths opened and walked without following a symlink, binds and
//! mount attributes through `/proc/self/fd/N`. Nothing here allocates.

use std::ffi::CString;

#[derive(Clone, Copy)]
pub(super) struct CStrs<'a>(pub(super) &'a [CString]);

/// A NUL-terminated string built on the stack between fork and exec (mount options).
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

    pub(super) fn as_ptr(&self) -> *const u8 {
        self.buf.as_ptr()
    }
}

/// An owned descriptor, closed on drop (`close` is async-signal-safe).
pub(super) struct Fd(pub(super) i32);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is owned by this value.
        unsafe { libc::close(self.0) };
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Make {
    No,
    Dir,
    File,
}

/// `/proc/self/fd/N` in a stack buffer, without allocating.
pub(super) struct FdPath(StackText);

impl FdPath {
    pub(super) fn new() -> FdPath {
        FdPath(StackText::new())
    }

    pub(super) fn of(&mut self, fd: i32) -> *const libc::c_char {
        self.0 = StackText::new();
        self.0.push(b"/proc/self/fd/");
        self.0.number(fd);
        self.0.as_ptr().cast()
    }
}

pub(super) const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub(super) const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub(super) const MOUNT_ATTR_NODEV: u64 = 0x4;

/// `struct open_how` of openat2(2) (libc's is non-exhaustive).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

pub(super) fn check<T: Copy + PartialOrd + Default>(rc: T) -> std::io::Result<T> {
    if rc < T::default() { Err(std::io::Error::last_os_error()) } else { Ok(rc) }
}

/// Opens a canonical absolute path with no symlink anywhere in it.
pub(super) unsafe fn open_nofollow(path: &std::ffi::CStr, flags: i32) -> std::io::Result<Fd> {
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC | flags) as u64,
        mode: 0,
        resolve: libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: openat2 with a NUL-terminated path and a struct on the stack.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    Ok(Fd(check(fd)? as i32))
}

/// Walks `parts` beneath `root` one component at a time, never following a symlink, creating
/// missing folders (and the last component as `make` says). Returns an `O_PATH` descriptor.
pub(super) unsafe fn walk_parts(root: i32, parts: CStrs<'_>, make: Make) -> std::io::Result<Fd> {
    // SAFETY: system calls on descriptors owned here.
    let mut fd = Fd(check(unsafe { libc::fcntl(root, libc::F_DUPFD_CLOEXEC, 0) })?);
    let n = parts.0.len();
    for (i, part) in parts.0.iter().enumerate() {
        let last = i + 1 == n;
        // SAFETY: `fd` is a descriptor owned here and `part` a NUL-terminated string that
        // outlives the call.
        fd = unsafe { open_at(fd.0, part.as_ptr(), if last { make } else { Make::Dir })? };
    }
    Ok(fd)
}

/// One component: opened with `O_NOFOLLOW`, created first when missing and `make` says so.
pub(super) unsafe fn open_at(
    dir: i32,
    name: *const libc::c_char,
    make: Make,
) -> std::io::Result<Fd> {
    let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: system calls on a descriptor and a NUL-terminated name.
    unsafe {
        let fd = libc::openat(dir, name, flags);
        if fd >= 0 {
            return Ok(Fd(fd));
        }
        if errno() != libc::ENOENT || make == Make::No {
            return Err(std::io::Error::last_os_error());
        }
        match make {
            Make::Dir => {
                if libc::mkdirat(dir, name, 0o755) != 0 && errno() != libc::EEXIST {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Make::File => {
                let f = libc::openat(
                    dir,
                    name,
                    libc::O_CREAT | libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    0o644,
                );
                if f < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(f);
            }
            Make::No => {}
        }
        Ok(Fd(check(libc::openat(dir, name, flags))?))
    }
}

pub(super) unsafe fn mount_fd_bind(src: i32, target: i32, recursive: bool) -> std::io::Result<()> {
    let (mut a, mut b) = (FdPath::new(), FdPath::new());
    let flags = if recursive { libc::MS_BIND | libc::MS_REC } else { libc::MS_BIND };
    // SAFETY: mount with two NUL-terminated stack strings.
    check(unsafe {
        libc::mount(a.of(src), b.of(target), std::ptr::null(), flags, std::ptr::null())
    })?;
    Ok(())
}

/// `mount_setattr` on the mount `fd` is (recursively: and every mount beneath it).
pub(super) unsafe fn set_attr(fd: i32, set: u64, recursive: bool) -> std::io::Result<()> {
    let attr = MountAttr { attr_set: set, attr_clr: 0, propagation: 0, userns_fd: 0 };
    let mut flags = libc::AT_EMPTY_PATH;
    if recursive {
        flags |= 0x8000; // AT_RECURSIVE
    }
    // SAFETY: mount_setattr with an empty path on an owned descriptor and a stack struct.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            fd,
            c"".as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(rc).map(|_| ())
}

pub(super) unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: open/write/close on a NUL-terminated path and a borrowed buffer.
    unsafe {
        let fd = Fd(check(libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC))?);
        let n = libc::write(fd.0, data.as_ptr().cast(), data.len());
        if n < 0 || n as usize != data.len() {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
