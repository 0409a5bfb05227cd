//! A job's own pseudo-terminal (interactive jobs that need a terminal). The engine keeps the
//! master, non-blocking; the job gets the slave as stdin, stdout and stderr, opened here in the
//! parent through the master (`TIOCGPTPEER`, no path lookup in `/dev/pts`), and makes it its
//! controlling terminal right after `setsid` (see `unix.rs`), so Ctrl-C typed into the master
//! reaches the job's foreground programs as SIGINT. The job's view needs no `/dev/pts`: it
//! holds the descriptor, and its `/dev/tty` opens the controlling terminal.

use std::os::fd::OwnedFd;

use rustix::fs::OFlags;
use rustix::pty::{OpenptFlags, grantpt, openpt, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

use crate::error::ExecError;

/// The size the job's terminal reports: a common default, wide enough for most tables.
const SIZE: Winsize = Winsize { ws_row: 40, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0 };

/// A new terminal: its master (non-blocking, close-on-exec) and its slave (for the child).
pub(super) fn open() -> Result<(OwnedFd, OwnedFd), ExecError> {
    let fail = |e: rustix::io::Errno| ExecError::os("opening the job's terminal", e.into());
    #[cfg(target_os = "linux")]
    let master =
        openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).map_err(fail)?;
    #[cfg(not(target_os = "linux"))]
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).map_err(fail)?;
    grantpt(&master).map_err(fail)?;
    unlockpt(&master).map_err(fail)?;
    #[cfg(target_os = "linux")]
    let slave = rustix::pty::ioctl_tiocgptpeer(
        &master,
        OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC,
    )
    .map_err(fail)?;
    #[cfg(not(target_os = "linux"))]
    let slave = {
        let name = rustix::pty::ptsname(&master, Vec::new()).map_err(fail)?;
        rustix::fs::open(
            name.as_c_str(),
            OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(fail)?
    };
    tcsetwinsize(&slave, SIZE).map_err(fail)?;
    let flags = rustix::fs::fcntl_getfl(&master).map_err(fail)?;
    rustix::fs::fcntl_setfl(&master, flags | OFlags::NONBLOCK).map_err(fail)?;
    Ok((master, slave))
}

/// Makes `fd` non-blocking (the engine's end of an input pipe).
pub(super) fn nonblocking(fd: &OwnedFd) -> Result<(), ExecError> {
    let fail = |e: rustix::io::Errno| ExecError::os("preparing the job's input", e.into());
    let flags = rustix::fs::fcntl_getfl(fd).map_err(fail)?;
    rustix::fs::fcntl_setfl(fd, flags | OFlags::NONBLOCK).map_err(fail)
}
