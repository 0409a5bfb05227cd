//! Between fork and exec, in the job's child: [`Jail::enter`] makes the job's world in named
//! steps, in this order: new namespaces and id maps ([`unshare`], [`map_ids`]); the root
//! assembled from the steps [`Jail::new`] prepared ([`root_mount`], [`Jail::step`]); the
//! loopback and the proxy listener handed to the engine; a fork into the outer process
//! ([`outer`]) and the namespace's init, which mounts its `/proc` and switches to the new root
//! ([`switch_root`]), drops every capability and applies the second layer (Landlock, seccomp);
//! the port keeper; a last fork into init's loop ([`init_loop`]) and the job's process.
//!
//! Only system calls on data prepared in the parent: rustix's, and libc's for what rustix does
//! not wrap (`fork`, signal dispositions, `close_range`, the interface ioctls, `_exit`).

use std::ffi::{CStr, CString};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use rustix::io::Errno;
use rustix::mount::{MountAttrFlags, MountFlags, MountPropagationFlags, UnmountFlags};
use rustix::net::{AddressFamily, SocketFlags, SocketType};
use rustix::process::{Pid, WaitOptions, WaitStatus};
use rustix::thread::{CapabilitySet, CapabilitySets, UnshareFlags};

use super::sys::{
    Make, StackText, bind, mount_new, open_at, open_nofollow, set_attr, walk, write_file,
};
use super::{Jail, OVERLAY_SIZE, Step};

/// The namespaces every job gets (and the network's when its network is off).
pub(super) const NAMESPACES: UnshareFlags = UnshareFlags::NEWUSER
    .union(UnshareFlags::NEWNS)
    .union(UnshareFlags::NEWPID)
    .union(UnshareFlags::NEWIPC)
    .union(UnshareFlags::NEWUTS);

impl Jail {
    /// Enters the namespaces, builds the root, and forks twice. Returns `Ok` only in the process
    /// that is to exec the job's program; the other two never return: the outer one waits and
    /// exits as the job did, the middle one is the namespace's init. `before_exec` runs in the
    /// job's process after the switch to the new root (Landlock, seccomp).
    ///
    /// # Safety
    /// Only in the single-threaded child of a fork, which execs or exits right after: this
    /// leaves the engine's namespaces, replaces the process's root and forks. `before_exec` must
    /// be async-signal-safe. Nothing here allocates.
    pub(crate) unsafe fn enter(
        &self,
        before_exec: impl FnOnce() -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let namespaces =
            if self.new_net { NAMESPACES.union(UnshareFlags::NEWNET) } else { NAMESPACES };
        unshare(namespaces)?;
        map_ids(&self.uid_map, &self.gid_map)?;
        let root = root_mount(&self.root)?;
        for step in &self.steps {
            self.step(&root, step)?;
        }
        if self.new_net {
            loopback_up();
            if let Some(channel) = self.proxy {
                // SAFETY: the job's end of the proxy channel, open until exec (close-on-exec).
                send_proxy_listener(unsafe { BorrowedFd::borrow_raw(channel) })?;
            }
        }
        let proc_dir = open_at(&root, c"proc", Make::Dir)?;
        let (status_read, status_write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        // SAFETY: this process has one thread (the caller's promise); both sides make only
        // system calls.
        if let Forked::Parent(init) = unsafe { fork()? } {
            outer(init, status_read, status_write);
        }
        drop(status_read);
        die_with_parent()?;
        // PID 1 of the new namespace.
        switch_root(root, proc_dir, &self.cwd)?;
        drop_capabilities()?;
        before_exec()?;
        if let Some(channel) = self.ports {
            // SAFETY: as above.
            if let Forked::Child = unsafe { fork()? } {
                port_keeper(channel);
            }
        }
        // SAFETY: as above.
        if let Forked::Parent(job) = unsafe { fork()? } {
            init_loop(job, status_write);
        }
        drop(status_write);
        die_with_parent()
    }

    /// One step beneath the root's descriptor.
    fn step(&self, root: &OwnedFd, step: &Step) -> std::io::Result<()> {
        let at: &[CString] = &step.dest().0;
        match step {
            Step::Dir(_) => drop(walk(root.as_fd(), at, Make::Dir)?),
            Step::Link { target, .. } => link(root, at, target)?,
            Step::Bind { src, file, writable, devices, .. } => {
                let mut attr = MountAttrFlags::MOUNT_ATTR_NOSUID;
                if !writable {
                    attr |= MountAttrFlags::MOUNT_ATTR_RDONLY;
                }
                if !devices {
                    attr |= MountAttrFlags::MOUNT_ATTR_NODEV;
                }
                bind_host(root, at, src, *file, attr)?;
            }
            Step::Overlay { lower, scratch, .. } => overlay(root, at, lower, &scratch.0)?,
            Step::Hide { file, id, .. } => {
                let covered = walk(root.as_fd(), at, Make::No)?;
                if let Some((dev, ino)) = id {
                    // Only what the walk found: another job may have moved its folder.
                    let st = rustix::fs::fstat(&covered)?;
                    if st.st_dev != *dev || st.st_ino != *ino {
                        return Err(Errno::STALE.into());
                    }
                }
                if *file {
                    let empty = if id.is_some() { &*self.empty } else { c"/dev/null" };
                    bind(open_nofollow(empty, false)?.as_fd(), covered.as_fd(), false)?;
                    drop(covered);
                    let mounted = walk(root.as_fd(), at, Make::No)?;
                    let attr =
                        MountAttrFlags::MOUNT_ATTR_RDONLY | MountAttrFlags::MOUNT_ATTR_NOSUID;
                    set_attr(mounted.as_fd(), attr, false)?;
                } else {
                    let flags = MountFlags::RDONLY
                        | MountFlags::NOSUID
                        | MountFlags::NODEV
                        | MountFlags::NOEXEC;
                    mount_new(c"tmpfs", covered.as_fd(), flags, Some(c"size=4k,mode=0500"))?;
                }
            }
        }
        Ok(())
    }
}

/// Leaves the engine's namespaces for new ones.
pub(super) fn unshare(namespaces: UnshareFlags) -> std::io::Result<()> {
    // SAFETY: unshare_unsafe's contract concerns `UnshareFlags::FILES` (threads sharing a
    // descriptor table), which is never among `namespaces`.
    Ok(unsafe { rustix::thread::unshare_unsafe(namespaces) }?)
}

/// The user namespace's id maps: the user is itself inside, and nobody else exists.
pub(super) fn map_ids(uid_map: &[u8], gid_map: &[u8]) -> std::io::Result<()> {
    write_file(c"/proc/self/setgroups", b"deny")?;
    write_file(c"/proc/self/uid_map", uid_map)?;
    write_file(c"/proc/self/gid_map", gid_map)
}

/// Makes every mount private to the namespace, then `root` a mount of its own (`pivot_root`
/// needs one); returns it, seen through its path again.
pub(super) fn root_mount(root: &CStr) -> std::io::Result<OwnedFd> {
    rustix::mount::mount_change(c"/", MountPropagationFlags::REC | MountPropagationFlags::PRIVATE)?;
    let fd = open_nofollow(root, true)?;
    bind(fd.as_fd(), fd.as_fd(), false)?;
    drop(fd);
    open_nofollow(root, true)
}

/// A symlink at `at`, as on the host (`/lib -> usr/lib`).
fn link(root: &OwnedFd, at: &[CString], target: &CStr) -> std::io::Result<()> {
    let Some((last, parents)) = at.split_last() else { return Ok(()) };
    let parent = walk(root.as_fd(), parents, Make::Dir)?;
    match rustix::fs::symlinkat(target, &parent, last.as_c_str()) {
        Ok(()) | Err(Errno::EXIST) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A host folder or file (`src`, canonical, opened without following a link) bound at `at`,
/// with the attributes `attr` on it and every mount beneath it.
fn bind_host(
    root: &OwnedFd,
    at: &[CString],
    src: &CStr,
    file: bool,
    attr: MountAttrFlags,
) -> std::io::Result<()> {
    let source = open_nofollow(src, !file)?;
    let target = walk(root.as_fd(), at, if file { Make::File } else { Make::Dir })?;
    bind(source.as_fd(), target.as_fd(), true)?;
    drop(target);
    // The new mount, seen through the path again.
    let mounted = walk(root.as_fd(), at, Make::No)?;
    set_attr(mounted.as_fd(), attr, true)
}

/// `lower` copy-on-write at `at`: an overlay whose upper layer is a tmpfs of the job's own,
/// mounted at `scratch`.
fn overlay(
    root: &OwnedFd,
    at: &[CString],
    lower: &CStr,
    scratch: &[CString],
) -> std::io::Result<()> {
    let flags = MountFlags::NOSUID | MountFlags::NODEV;
    let tmp = walk(root.as_fd(), scratch, Make::Dir)?;
    mount_new(c"tmpfs", tmp.as_fd(), flags, Some(OVERLAY_SIZE))?;
    drop(tmp);
    let tmp = walk(root.as_fd(), scratch, Make::No)?;
    let upper = open_at(&tmp, c"upper", Make::Dir)?;
    let work = open_at(&tmp, c"work", Make::Dir)?;
    let lower = open_nofollow(lower, true)?;
    let target = walk(root.as_fd(), at, Make::Dir)?;
    let mut options = StackText::new();
    options.push(b"lowerdir=/proc/self/fd/");
    options.number(lower.as_raw_fd());
    options.push(b",upperdir=/proc/self/fd/");
    options.number(upper.as_raw_fd());
    options.push(b",workdir=/proc/self/fd/");
    options.number(work.as_raw_fd());
    options.push(b",userxattr");
    mount_new(c"overlay", target.as_fd(), flags, Some(options.as_cstr()))
}

/// In the namespace's init: its own `/proc`, the root sealed read-only, then the switch to it
/// (`pivot_root`, the old root detached) and into the job's working folder.
fn switch_root(root: OwnedFd, proc_dir: OwnedFd, cwd: &CStr) -> std::io::Result<()> {
    let proc_flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    mount_new(c"proc", proc_dir.as_fd(), proc_flags, None)?;
    drop(proc_dir);
    let sealed = MountAttrFlags::MOUNT_ATTR_RDONLY
        | MountAttrFlags::MOUNT_ATTR_NOSUID
        | MountAttrFlags::MOUNT_ATTR_NODEV;
    set_attr(root.as_fd(), sealed, false)?;
    rustix::process::fchdir(&root)?;
    drop(root);
    rustix::process::pivot_root(c".", c".")?;
    rustix::mount::unmount(c".", UnmountFlags::DETACH)?;
    Ok(rustix::process::chdir(cwd)?)
}

/// Brings up `lo` in the new network namespace, so test servers on loopback work.
fn loopback_up() {
    let Ok(s) = rustix::net::socket_with(
        AddressFamily::INET,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        None,
    ) else {
        return;
    };
    // SAFETY: `ifreq` is a plain C struct; all zeros is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    req.ifr_name[0] = b'l' as libc::c_char;
    req.ifr_name[1] = b'o' as libc::c_char;
    // SAFETY: SIOCGIFFLAGS and SIOCSIFFLAGS (which rustix does not wrap) read and write `req`,
    // on the stack, through a socket owned here; the flags are the union's member they fill.
    unsafe {
        if libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS, &mut req);
        }
    }
}

/// Listens on `127.0.0.1:PROXY_PORT` in the job's network namespace and sends the listening
/// socket over `channel` to the engine, which serves the proxy on it ([`crate::egress`]). The
/// socket is close-on-exec here, and this process's copy is closed: only the engine accepts.
fn send_proxy_listener(channel: BorrowedFd<'_>) -> std::io::Result<()> {
    let s = rustix::net::socket_with(
        AddressFamily::INET,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::bind(&s, &SocketAddrV4::new(Ipv4Addr::LOCALHOST, crate::egress::PROXY_PORT))?;
    rustix::net::listen(&s, 128)?;
    crate::fdpass::send_fd(channel, s.as_fd())
}

/// No capabilities, in any set, for this process and whatever it executes (also as root).
pub(crate) fn drop_capabilities() -> std::io::Result<()> {
    // Every bit, not only the capabilities rustix names, so a newer kernel's go too; a number
    // past the kernel's last fails, as it may.
    for cap in 0..64 {
        let cap = CapabilitySet::from_bits_retain(1 << cap);
        let _ = rustix::thread::remove_capability_from_bounding_set(cap);
    }
    let _ = rustix::thread::clear_ambient_capability_set();
    let none = CapabilitySet::empty();
    let sets = CapabilitySets { effective: none, permitted: none, inheritable: none };
    Ok(rustix::thread::set_capabilities(None, sets)?)
}

pub(super) enum Forked {
    Parent(Pid),
    Child,
}

/// `fork`, which rustix does not offer.
///
/// # Safety
/// The calling process has a single thread, or the child makes only async-signal-safe calls
/// until it execs or exits.
pub(super) unsafe fn fork() -> std::io::Result<Forked> {
    // SAFETY: the caller's promise.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        return Ok(Forked::Child);
    }
    match pid.is_positive().then(|| Pid::from_raw(pid)).flatten() {
        Some(pid) => Ok(Forked::Parent(pid)),
        None => Err(std::io::Error::last_os_error()),
    }
}

/// Killed when the process that forked this one ends.
fn die_with_parent() -> std::io::Result<()> {
    Ok(rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?)
}

/// Waits for `pid` to end, through interruptions.
pub(super) fn wait_for(pid: Pid) -> Option<WaitStatus> {
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(found) => return found.map(|(_, status)| status),
            Err(Errno::INTR) => {}
            Err(_) => return None,
        }
    }
}

/// The outer process (outside the PID namespace, the one the engine knows): closes everything,
/// ignores the polite signals (the job gets them itself through the process group), waits for
/// init and ends as the job did.
fn outer(init: Pid, status_read: OwnedFd, status_write: OwnedFd) -> ! {
    drop(status_write);
    // SAFETY: this process never returns to a value owning another descriptor: it exits below.
    unsafe { close_all_but(status_read.as_raw_fd()) };
    ignore_polite_signals();
    let status = wait_for(init);
    let mut sig = [0u8];
    if rustix::io::read(&status_read, &mut sig) == Ok(1) && sig[0] > 0 {
        exit_by_signal(i32::from(sig[0]));
    }
    if let Some(sig) = status.and_then(WaitStatus::terminating_signal) {
        exit_by_signal(sig);
    }
    exit(status.and_then(WaitStatus::exit_status).unwrap_or(1))
}

/// PID 1 of the job's namespace: reaps every orphan, and when the job's process ends, ends
/// too — the kernel then kills everything left in the namespace. A signal that killed the job is
/// passed to the outer process through `status`.
fn init_loop(job: Pid, status: OwnedFd) -> ! {
    // SAFETY: this process never returns to a value owning another descriptor: it exits below.
    unsafe { close_all_but(status.as_raw_fd()) };
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, st))) if pid == job => {
                if let Some(sig) = st.terminating_signal() {
                    let _ = rustix::io::write(&status, &[sig as u8]);
                    exit(128 + (sig & 0xff));
                }
                exit(st.exit_status().unwrap_or(1));
            }
            Err(Errno::CHILD) => exit(1),
            _ => {}
        }
    }
}

/// The job's port keeper ([`crate::publish`]): for each byte the engine sends, an unconnected
/// TCP socket of the job's network namespace goes back. It ignores the signals a Ctrl-C or a
/// polite stop sends the job's process group, and ends with the namespace or the channel.
fn port_keeper(channel: RawFd) -> ! {
    // SAFETY: this process never returns to a value owning another descriptor: it exits below.
    unsafe { close_all_but(channel) };
    // SAFETY: the one descriptor left open, owned by this process until it exits.
    let channel = unsafe { BorrowedFd::borrow_raw(channel) };
    ignore_polite_signals();
    loop {
        let mut byte = [0u8];
        match rustix::io::read(channel, &mut byte) {
            Ok(0) => exit(0),
            Err(Errno::INTR) => continue,
            Err(_) => exit(0),
            Ok(_) => {}
        }
        let socket = rustix::net::socket_with(
            AddressFamily::INET,
            SocketType::STREAM,
            SocketFlags::CLOEXEC,
            None,
        );
        let sent = socket.map(|s| crate::fdpass::send_fd(channel, s.as_fd()));
        if !matches!(sent, Ok(Ok(()))) {
            // No descriptor: the engine's wait for one ends in an error.
            let _ = rustix::net::send(channel, &byte, rustix::net::SendFlags::NOSIGNAL);
        }
    }
}

/// Ignores the signals a Ctrl-C or a polite stop sends the job's process group (dispositions:
/// rustix has no call for them).
fn ignore_polite_signals() {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE] {
        // SAFETY: SIG_IGN is a valid disposition for these signals.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
}

/// Ends this process as the signal `sig` would, else with `128 + sig`.
fn exit_by_signal(sig: i32) -> ! {
    // SAFETY: signal-mask and disposition calls (rustix has none) on a set on the stack, then
    // the signal to this process itself.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
    }
    exit(128 + sig)
}

/// `_exit`: no destructor, no atexit handler, no flush of the engine's buffers.
pub(super) fn exit(code: i32) -> ! {
    // SAFETY: `_exit` ends the process at once; it is async-signal-safe.
    unsafe { libc::_exit(code) }
}

/// Closes every descriptor of this process but `keep` (`close_range`, which rustix does not
/// wrap).
///
/// # Safety
/// Closes descriptors that values may still own: the caller never returns to such a value (the
/// process exits or execs) and opens nothing it expects to keep from before.
unsafe fn close_all_but(keep: RawFd) {
    // SAFETY: plain integers; the caller's promise covers the descriptors closed.
    unsafe {
        if keep > 0 {
            libc::close_range(0, (keep - 1) as libc::c_uint, 0);
        }
        libc::close_range((keep + 1) as libc::c_uint, libc::c_uint::MAX, 0);
    }
}
