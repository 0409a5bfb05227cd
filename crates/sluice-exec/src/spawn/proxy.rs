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
            return Err(ExecError::os(
                "preparing the job's proxy",
                std::io::Error::last_os_error(),
            ));
        }
        // SAFETY: both were just created and are owned only here.
        let (engine, job) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(ProxyChannel { engine, job })
    }

    /// The listener the job's side sent before its exec (so it is there once spawn returned).
    pub(super) fn receive(self) -> std::io::Result<OwnedFd> {
        drop(self.job);
        let mut control = [0u64; 4];
        let mut byte = 0u8;
        let mut iov = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
        // SAFETY: recvmsg into buffers on the stack; a received descriptor is checked and owned.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            let flags = libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC;
            if libc::recvmsg(self.engine.as_raw_fd(), &mut msg, flags) != 1 {
                return Err(std::io::Error::other("the job sent no proxy listener"));
            }
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
                || (*cmsg).cmsg_len as usize != libc::CMSG_LEN(4) as usize
            {
                return Err(std::io::Error::other("the job sent no proxy listener"));
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>());
            Ok(OwnedFd::from_raw_fd(fd))
        }
    }
}
