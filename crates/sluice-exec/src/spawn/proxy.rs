//! The socket pair over which a job's proxy listener (`registries` network) comes out of its
//! network namespace to the engine, which serves the proxy on it ([`crate::egress`]).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::ExecError;

/// The socket pair over which a job's proxy listener comes from its network namespace
/// ([`crate::jail`] sends it before exec; both ends are close-on-exec).
pub(super) struct ProxyChannel {
    engine: OwnedFd,
    pub(super) job: OwnedFd,
}

impl ProxyChannel {
    pub(super) fn new() -> Result<ProxyChannel, ExecError> {
        let (engine, job) =
            seqpacket_pair().map_err(|e| ExecError::os("preparing the job's proxy", e))?;
        Ok(ProxyChannel { engine, job })
    }

    /// The listener the job's side sent before its exec (so it is there once spawn returned).
    pub(super) fn receive(self) -> std::io::Result<OwnedFd> {
        drop(self.job);
        // SAFETY: the engine's end, owned by `self`.
        unsafe { receive_fd_flags(self.engine.as_raw_fd(), libc::MSG_DONTWAIT) }
            .map_err(|_| std::io::Error::other("the job sent no proxy listener"))
    }

    /// The engine's end, for a channel that carries more than one descriptor (the port keeper
    /// of [`crate::publish`]); the job's end is closed.
    pub(super) fn into_engine_end(self) -> OwnedFd {
        drop(self.job);
        self.engine
    }
}

/// A connected pair of Unix sequenced-packet sockets, both close-on-exec.
pub(crate) fn seqpacket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills two descriptors, owned below.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just created and are owned only here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// One descriptor sent over the socket pair `fd` as SCM_RIGHTS with a one-byte message,
/// received close-on-exec; waits for it.
///
/// # Safety
/// `fd` must be an open socket.
pub(crate) unsafe fn receive_fd(fd: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: the caller's promise.
    unsafe { receive_fd_flags(fd, 0) }
}

unsafe fn receive_fd_flags(fd: i32, flags: i32) -> std::io::Result<OwnedFd> {
    let mut control = [0u64; 4];
    let mut byte = 0u8;
    let mut iov = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
    let none = || std::io::Error::other("no descriptor came over the channel");
    // SAFETY: recvmsg into buffers on the stack; a received descriptor is checked and owned.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        if libc::recvmsg(fd, &mut msg, flags | libc::MSG_CMSG_CLOEXEC) != 1 {
            return Err(none());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(none());
        }
        // Every descriptor that came is ours now: all but exactly one are closed again.
        let data = libc::CMSG_DATA(cmsg).cast::<i32>();
        let count = ((*cmsg).cmsg_len as usize).saturating_sub(libc::CMSG_LEN(0) as usize) / 4;
        let fds: Vec<OwnedFd> = (0..count.min(4))
            .map(|i| OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))))
            .collect();
        let mut fds = fds.into_iter();
        match (fds.next(), fds.next()) {
            (Some(fd), None) => Ok(fd),
            _ => Err(none()),
        }
    }
}
