//! Descriptors passed between a job's namespaces and the engine (Linux): a sequenced-packet
//! socket pair, and one descriptor at a time sent as `SCM_RIGHTS` with a one-byte message. The
//! job's side sends between fork and exec (its proxy listener, [`crate::jail`]) and from its port
//! keeper ([`crate::publish`]), so [`send_fd`] is a system call on buffers on the stack: nothing
//! allocates. A receiver keeps exactly one descriptor and closes any other that came.

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::{IoSlice, IoSliceMut};
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};

/// A connected pair of Unix sequenced-packet sockets, both close-on-exec.
pub(crate) fn seqpacket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// Sends `fds` over `channel` as one `SCM_RIGHTS` message of one byte. Only system calls on
/// buffers on the stack: safe between fork and exec. At most four descriptors.
pub(crate) fn send_fds(channel: BorrowedFd<'_>, fds: &[BorrowedFd<'_>]) -> std::io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    // Errors are plain error numbers: an error built from a message would allocate.
    if !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(rustix::io::Errno::INVAL.into());
    }
    let sent =
        rustix::net::sendmsg(channel, &[IoSlice::new(&[1])], &mut control, SendFlags::NOSIGNAL)?;
    if sent != 1 {
        return Err(rustix::io::Errno::MSGSIZE.into());
    }
    Ok(())
}

/// Sends one descriptor (see [`send_fds`]).
pub(crate) fn send_fd(channel: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> std::io::Result<()> {
    send_fds(channel, &[fd])
}

/// Waits for one descriptor over `channel`, received close-on-exec.
pub(crate) fn receive_fd(channel: impl AsFd) -> std::io::Result<OwnedFd> {
    receive(channel.as_fd(), RecvFlags::empty())
}

/// One descriptor that is already waiting over `channel`; an error when none is.
pub(crate) fn receive_waiting_fd(channel: impl AsFd) -> std::io::Result<OwnedFd> {
    receive(channel.as_fd(), RecvFlags::DONTWAIT)
}

fn receive(channel: BorrowedFd<'_>, flags: RecvFlags) -> std::io::Result<OwnedFd> {
    let none = || std::io::Error::other("no descriptor came over the channel");
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8];
    let got = rustix::net::recvmsg(
        channel,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        flags | RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(|_| none())?;
    if got.bytes != 1 {
        return Err(none());
    }
    // Every descriptor that came is ours now: all but exactly one are closed (dropped) again.
    let mut fds = control.drain().flat_map(|message| match message {
        RecvAncillaryMessage::ScmRights(fds) => Some(fds),
        _ => None,
    });
    let mut fds = fds.by_ref().flatten();
    match (fds.next(), fds.next()) {
        (Some(fd), None) => Ok(fd),
        _ => Err(none()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_descriptor_crosses_and_extra_ones_are_refused_and_closed() {
        let (a, b) = seqpacket_pair().expect("pair");
        let file = std::fs::File::open("/dev/null").expect("null");
        send_fd(a.as_fd(), file.as_fd()).expect("send");
        let got = receive_fd(&b).expect("receive");
        assert!(got.as_fd().try_clone_to_owned().is_ok());

        // Two copies of a pipe's write end in one message: refused, and both closed, which the
        // read end shows as end of file once its own writer is gone too.
        let (read, write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::NONBLOCK).expect("pipe");
        send_fds(a.as_fd(), &[write.as_fd(), write.as_fd()]).expect("send two");
        drop(write);
        assert!(receive_fd(&b).is_err(), "two descriptors in one message are refused");
        assert_eq!(rustix::io::read(&read, &mut [0u8; 1]).expect("end of file"), 0);

        assert!(receive_waiting_fd(&b).is_err(), "nothing waiting");
    }
}
