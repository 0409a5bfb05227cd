//! Published ports: a dev server a job starts, reachable from the user's browser and the
//! assistant, while the job keeps its own network namespace (inbound only).
//!
//! How it is wired (Linux, in namespaces): a small process of the job's, the port keeper,
//! lives in the job's namespaces ([`crate::jail`] forks it beside the job) and does one thing:
//! for each byte the engine sends over a socket pair, it makes an unconnected TCP socket and
//! sends it back. A socket stays in the network namespace it was made in, so the engine
//! connects it to `127.0.0.1:port` *of the job's namespace*, and copies bytes between it and a
//! connection accepted on a listener of its own on the host's loopback. Nothing else crosses:
//! the job still has no route out, and a connection made this way reaches only the job's
//! loopback (never the engine's port, nor the machine's other services).
//!
//! The keeper runs the job's uid, so the job could replace what it sends: the engine checks each
//! socket it receives (TCP over IPv4, unconnected, and in a network namespace that is not the
//! engine's) and drops anything else. A job can at worst break its own forwarding.
//!
//! Written by hand: the pieces (fd passing, a checked connect) are small, and the proxies that
//! exist (slirp4netns, pasta) bring a whole user-mode network the job does not need.

#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

#[cfg(target_os = "linux")]
use std::sync::Mutex;
#[cfg(target_os = "linux")]
use std::sync::atomic::Ordering;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Duration;

use serde::Serialize;

/// The most ports one job may publish.
pub const MAX_PUBLISHED: usize = 4;
/// The most forwarded connections open at once, per job.
pub const MAX_CONNECTIONS: usize = 64;
/// How long a connection into the job's namespace may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// One published port: the job's, and where it is on the host's loopback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PublishedPort {
    /// The port the job's program listens on, inside its namespace.
    pub port: u16,
    /// The port on the host's `127.0.0.1` that forwards to it.
    pub host_port: u16,
}

/// A job's published ports and the means to open connections to them (while the job runs).
pub struct Ports {
    pub published: Vec<PublishedPort>,
    #[cfg(target_os = "linux")]
    keeper: std::sync::Arc<imp::Keeper>,
    ended: AtomicBool,
    open: AtomicUsize,
}

impl std::fmt::Debug for Ports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ports").field("published", &self.published).finish()
    }
}

impl Ports {
    /// Whether something accepts connections on the job's `port` now (a readiness probe).
    pub fn accepting(&self, port: u16) -> bool {
        #[cfg(target_os = "linux")]
        {
            !self.ended.load(Ordering::SeqCst) && self.keeper.connect(port).is_ok()
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = port;
            false
        }
    }
}

/// Refuses a publish list that is not a few distinct, non-zero ports.
pub fn check_list(ports: &[u16]) -> Result<(), crate::ExecError> {
    if ports.len() > MAX_PUBLISHED {
        return Err(crate::ExecError::Limit(format!(
            "a job publishes at most {MAX_PUBLISHED} ports; this one asked for {}",
            ports.len()
        )));
    }
    for (i, p) in ports.iter().enumerate() {
        if *p == 0 || ports[..i].contains(p) {
            return Err(crate::ExecError::Invalid(format!(
                "port {p} cannot be published: ports are 1 to 65535, each named once"
            )));
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
pub(crate) use imp::{Keeper, forward};

#[cfg(target_os = "linux")]
mod imp {
    use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use rustix::event::{PollFd, PollFlags, poll};
    use rustix::fs::OFlags;
    use rustix::io::Errno;
    use rustix::net::{AddressFamily, SendFlags, SocketType, sockopt};

    use super::*;

    /// `SIOCGSKNS` (linux/sockios.h): a descriptor of a socket's network namespace.
    const SIOCGSKNS: libc::c_ulong = 0x894C;

    /// The engine's end of the channel to a job's port keeper.
    pub(crate) struct Keeper {
        channel: Mutex<OwnedFd>,
        /// The engine's own network namespace (device, inode), which no socket may be in.
        own_net: (u64, u64),
    }

    impl Keeper {
        pub(crate) fn new(channel: OwnedFd) -> std::io::Result<Keeper> {
            use std::os::unix::fs::MetadataExt;
            let meta = std::fs::metadata("/proc/self/ns/net")?;
            Ok(Keeper { channel: Mutex::new(channel), own_net: (meta.dev(), meta.ino()) })
        }

        /// A new TCP connection to `127.0.0.1:port` in the job's network namespace.
        pub(crate) fn connect(&self, port: u16) -> std::io::Result<TcpStream> {
            let socket = self.socket()?;
            connect_within(&socket, port, CONNECT_TIMEOUT)?;
            Ok(TcpStream::from(socket))
        }

        /// An unconnected TCP socket of the job's namespace, checked.
        fn socket(&self) -> std::io::Result<OwnedFd> {
            let channel = self.channel.lock().unwrap_or_else(|p| p.into_inner());
            if !matches!(rustix::net::send(&*channel, &[1], SendFlags::NOSIGNAL), Ok(1)) {
                return Err(std::io::Error::other("the job's port keeper has ended"));
            }
            if !matches!(poll_once(&*channel, PollFlags::IN, CONNECT_TIMEOUT), Ok(1)) {
                return Err(std::io::Error::other("the job's port keeper did not answer"));
            }
            let received = crate::fdpass::receive_fd(&*channel)?;
            self.check(&received)?;
            Ok(received)
        }

        /// TCP over IPv4, not connected, and not in the engine's network namespace.
        fn check(&self, socket: &OwnedFd) -> std::io::Result<()> {
            use std::os::unix::fs::MetadataExt;
            let bad = || std::io::Error::other("the job's port keeper sent something else");
            if sockopt::socket_domain(socket).map_err(|_| bad())? != AddressFamily::INET
                || sockopt::socket_type(socket).map_err(|_| bad())? != SocketType::STREAM
            {
                return Err(bad());
            }
            if rustix::net::getpeername(socket).is_ok() {
                return Err(bad());
            }
            let ns = std::fs::File::from(socket_netns(socket).map_err(|_| bad())?);
            let meta = ns.metadata()?;
            if (meta.dev(), meta.ino()) == self.own_net {
                return Err(bad());
            }
            Ok(())
        }
    }

    /// A descriptor of the network namespace `socket` was made in (`SIOCGSKNS`). libc: rustix
    /// has no wrapper for this ioctl (its generic `ioctl` would need an unsafe `Ioctl` impl of
    /// our own, no smaller).
    fn socket_netns(socket: &OwnedFd) -> std::io::Result<OwnedFd> {
        // SAFETY: SIOCGSKNS takes no argument and reads or writes no memory of ours; `socket` is
        // an open descriptor for the call's duration.
        let ns = unsafe { libc::ioctl(socket.as_raw_fd(), SIOCGSKNS as _) };
        if ns < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `ns` is the new descriptor the ioctl just returned: open, and owned by nothing
        // else, so this is its only owner.
        Ok(unsafe { OwnedFd::from_raw_fd(ns) })
    }

    /// One `poll` of `fd` for `events`, waiting at most `timeout`: the number of descriptors
    /// ready (0 or 1).
    fn poll_once(
        fd: &impl std::os::fd::AsFd,
        events: PollFlags,
        timeout: std::time::Duration,
    ) -> rustix::io::Result<usize> {
        let timeout = rustix::event::Timespec::try_from(timeout).map_err(|_| Errno::INVAL)?;
        poll(&mut [PollFd::new(fd, events)], Some(&timeout))
    }

    /// Connects the non-blocking-for-now `socket` to the job's `127.0.0.1:port` within
    /// `timeout`, and leaves it blocking.
    fn connect_within(
        socket: &OwnedFd,
        port: u16,
        timeout: std::time::Duration,
    ) -> std::io::Result<()> {
        let flags = rustix::fs::fcntl_getfl(socket)?;
        rustix::fs::fcntl_setfl(socket, flags | OFlags::NONBLOCK)?;
        match rustix::net::connect(socket, &SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)) {
            Ok(()) => {}
            Err(Errno::INPROGRESS) => {
                if !matches!(poll_once(socket, PollFlags::OUT, timeout), Ok(1)) {
                    return Err(std::io::ErrorKind::TimedOut.into());
                }
                sockopt::socket_error(socket)??;
            }
            Err(e) => return Err(e.into()),
        }
        rustix::fs::fcntl_setfl(socket, flags - OFlags::NONBLOCK)?;
        Ok(())
    }

    /// A listener on the host's loopback for `port`: the same number when it is free, so links
    /// a project's configuration names keep working, else one the system picks.
    fn host_listener(port: u16) -> std::io::Result<TcpListener> {
        TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .or_else(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
    }

    /// Publishes `ports` of the job whose outer process is `job`: binds the host's listeners
    /// now, and forwards their connections on a thread of its own until the job ends.
    pub(crate) fn forward(keeper: Keeper, ports: &[u16], job: u32) -> std::io::Result<Arc<Ports>> {
        let pidfd = crate::kill::pidfd(job)?;
        let mut listeners = Vec::new();
        let mut published = Vec::new();
        for &port in ports {
            let listener = host_listener(port)?;
            published.push(PublishedPort { port, host_port: listener.local_addr()?.port() });
            listeners.push((port, listener));
        }
        let ports = Arc::new(Ports {
            published,
            keeper: Arc::new(keeper),
            ended: AtomicBool::new(false),
            open: AtomicUsize::new(0),
        });
        let served = ports.clone();
        std::thread::Builder::new()
            .name("sluice-ports".into())
            .spawn(move || serve(&served, &listeners, &pidfd))?;
        Ok(ports)
    }

    fn serve(ports: &Arc<Ports>, listeners: &[(u16, TcpListener)], pidfd: &OwnedFd) {
        let mut fds: Vec<PollFd<'_>> =
            listeners.iter().map(|(_, l)| PollFd::new(l, PollFlags::IN)).collect();
        fds.push(PollFd::new(pidfd, PollFlags::IN));
        loop {
            fds.iter_mut().for_each(PollFd::clear_revents);
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(_) => break,
            }
            // The job ended: the listeners close with this thread.
            if !fds[listeners.len()].revents().is_empty() {
                break;
            }
            for (i, (port, listener)) in listeners.iter().enumerate() {
                if fds[i].revents().is_empty() {
                    continue;
                }
                let Ok((client, _)) = listener.accept() else { continue };
                if ports.open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                    ports.open.fetch_sub(1, Ordering::SeqCst);
                    drop(client);
                    continue;
                }
                let (ports, port) = (ports.clone(), *port);
                let _ =
                    std::thread::Builder::new().name("sluice-ports-conn".into()).spawn(move || {
                        if let Ok(upstream) = ports.keeper.connect(port) {
                            relay(client, upstream);
                        }
                        ports.open.fetch_sub(1, Ordering::SeqCst);
                    });
            }
        }
        ports.ended.store(true, Ordering::SeqCst);
    }

    /// Bytes both ways until either side closes.
    fn relay(mut client: TcpStream, mut upstream: TcpStream) {
        let (Ok(mut client_rx), Ok(mut upstream_tx)) = (client.try_clone(), upstream.try_clone())
        else {
            return;
        };
        let up = std::thread::Builder::new().name("sluice-ports-up".into()).spawn(move || {
            let _ = std::io::copy(&mut client_rx, &mut upstream_tx);
            let _ = upstream_tx.shutdown(std::net::Shutdown::Write);
        });
        let _ = std::io::copy(&mut upstream, &mut client);
        let _ = client.shutdown(std::net::Shutdown::Both);
        let _ = upstream.shutdown(std::net::Shutdown::Both);
        if let Ok(up) = up {
            let _ = up.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keeper runs the job's uid, so the job could make it send anything: a socket of the
    /// engine's own namespace (which would reach the engine's port), a connected one, a Unix
    /// socket, two at once. Each is refused, and the engine keeps none of them open.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_hostile_keeper_hands_the_engine_nothing_it_would_use() {
        use std::os::fd::{AsFd, AsRawFd, OwnedFd};
        let host = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = host.local_addr().expect("addr").port();
        let offers: Vec<Box<dyn Fn() -> Vec<OwnedFd> + Send>> = vec![
            // A fresh TCP socket, but made in the engine's namespace.
            Box::new(|| vec![tcp_socket()]),
            // Already connected (to the host service).
            Box::new(move || {
                let s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
                vec![OwnedFd::from(s)]
            }),
            // Not TCP.
            Box::new(|| {
                let (a, _b) = std::os::unix::net::UnixStream::pair().expect("pair");
                vec![OwnedFd::from(a)]
            }),
            // Two at once.
            Box::new(|| vec![tcp_socket(), tcp_socket()]),
        ];
        for offer in offers {
            let (engine, job) = crate::fdpass::seqpacket_pair().expect("socket pair");
            let keeper = Keeper::new(engine).expect("keeper");
            let hostile = std::thread::spawn(move || {
                let n = rustix::io::read(&job, &mut [0u8; 1]).expect("read");
                assert_eq!(n, 1);
                let fds = offer();
                let borrowed: Vec<_> = fds.iter().map(|fd| fd.as_fd()).collect();
                crate::fdpass::send_fds(job.as_fd(), &borrowed).expect("send");
                fds.iter().map(|fd| socket_inode(fd.as_raw_fd())).collect::<Vec<_>>()
            });
            let got = keeper.connect(port);
            assert!(got.is_err(), "the engine connected through a socket the keeper chose");
            let sent = hostile.join().expect("keeper thread");
            // The keeper's copies are closed now: any left is the engine's.
            for ino in sent {
                assert!(!open_sockets().contains(&ino), "a socket the keeper sent was left open");
            }
        }
        let accepted = {
            host.set_nonblocking(true).expect("nonblocking");
            let mut n = 0;
            while host.accept().is_ok() {
                n += 1;
            }
            n
        };
        // Only the offer that connected by itself reached the host service, and not through us.
        assert_eq!(accepted, 1);
    }

    /// A fresh TCP socket of this process's (the engine's) network namespace.
    #[cfg(target_os = "linux")]
    fn tcp_socket() -> std::os::fd::OwnedFd {
        use rustix::net::{AddressFamily, SocketType};
        rustix::net::socket(AddressFamily::INET, SocketType::STREAM, None).expect("socket")
    }

    #[cfg(target_os = "linux")]
    fn socket_inode(fd: i32) -> String {
        let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).expect("fd link");
        link.to_string_lossy().into_owned()
    }

    /// What every open descriptor of this process points at (`socket:[inode]` for sockets).
    #[cfg(target_os = "linux")]
    fn open_sockets() -> Vec<String> {
        std::fs::read_dir("/proc/self/fd")
            .expect("fds")
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .map(|l| l.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_publish_list_is_a_few_distinct_real_ports() {
        assert!(check_list(&[3000, 8000]).is_ok());
        assert!(matches!(check_list(&[0]), Err(crate::ExecError::Invalid(_))));
        assert!(matches!(check_list(&[80, 80]), Err(crate::ExecError::Invalid(_))));
        assert!(matches!(check_list(&[1, 2, 3, 4, 5]), Err(crate::ExecError::Limit(_))));
    }
}
