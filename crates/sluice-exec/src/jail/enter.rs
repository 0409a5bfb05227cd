//! Between fork and exec, in the job's child: [`Jail::enter`] enters the namespaces, builds the
//! root from the steps [`Jail::new`] prepared, brings up the loopback, hands the proxy listener
//! to the engine, drops every capability, and forks the outer process, the namespace's init and
//! the job. System calls only, on data prepared in the parent.

use std::ffi::CString;
use std::os::fd::BorrowedFd;

use super::sys::{
    CStrs, Fd, FdPath, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY, Make, StackText,
    check, errno, mount_fd_bind, open_at, open_nofollow, set_attr, walk_parts, write_file,
};
use super::{Jail, OVERLAY_SIZE, Step};

impl Jail {
    /// In the child between fork and exec (only system calls, no allocation): enters the
    /// namespaces, builds the root, and forks twice. Returns `Ok` only in the process that is to
    /// exec the job's program; the other two never return: the outer one waits and exits as the
    /// job did, the middle one is the namespace's init. `before_exec` runs in the job's process
    /// after the switch to the new root (Landlock, seccomp).
    pub(crate) fn enter(
        &self,
        before_exec: impl FnOnce() -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        // SAFETY: only system calls on data owned by `self` or on the stack; see each helper.
        unsafe {
            let mut flags = libc::CLONE_NEWUSER
                | libc::CLONE_NEWNS
                | libc::CLONE_NEWPID
                | libc::CLONE_NEWIPC
                | libc::CLONE_NEWUTS;
            if self.new_net {
                flags |= libc::CLONE_NEWNET;
            }
            check(libc::unshare(flags))?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", &self.uid_map)?;
            write_file(c"/proc/self/gid_map", &self.gid_map)?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            // The root becomes a mount point of its own (pivot_root needs one).
            let root = open_nofollow(&self.root, libc::O_DIRECTORY)?;
            mount_fd_bind(root.0, root.0, false)?;
            drop(root);
            let root = open_nofollow(&self.root, libc::O_DIRECTORY)?;
            for step in &self.steps {
                self.step(root.0, step)?;
            }
            if self.new_net {
                loopback_up();
                if let Some(channel) = self.proxy {
                    send_proxy_listener(channel)?;
                }
            }
            let proc_dir = open_at(root.0, c"proc".as_ptr(), Make::Dir)?;

            // The outer process: waits for the namespace's init and exits as the job did.
            let mut pipe = [0; 2];
            check(libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC))?;
            let init = check(libc::fork())?;
            if init > 0 {
                outer(init, pipe[0], pipe[1]);
            }
            libc::close(pipe[0]);
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            // PID 1 of the new namespace: its own /proc, then the switch of root.
            let mut buf = FdPath::new();
            check(libc::mount(
                c"proc".as_ptr(),
                buf.of(proc_dir.0),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ))?;
            drop(proc_dir);
            set_attr(root.0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false)?;
            check(libc::fchdir(root.0))?;
            drop(root);
            check(libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as i32)?;
            check(libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
            check(libc::chdir(self.cwd.as_ptr()))?;
            drop_capabilities()?;
            before_exec()?;
            if let Some(channel) = self.ports
                && check(libc::fork())? == 0
            {
                port_keeper(channel);
            }
            let job = check(libc::fork())?;
            if job > 0 {
                init_loop(job, pipe[1]);
            }
            libc::close(pipe[1]);
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            Ok(())
        }
    }

    /// One step beneath the root's descriptor.
    unsafe fn step(&self, root: i32, step: &Step) -> std::io::Result<()> {
        let parts: &[CString] = &step.dest().0;
        let parts_ref = CStrs(parts);
        // SAFETY: system calls on descriptors this function owns and on `self`'s strings.
        unsafe {
            match step {
                Step::Dir(_) => drop(walk_parts(root, parts_ref, Make::Dir)?),
                Step::Link { target, .. } => {
                    let Some((last, parents)) = parts.split_last() else { return Ok(()) };
                    let parent = walk_parts(root, CStrs(parents), Make::Dir)?;
                    let rc = libc::symlinkat(target.as_ptr(), parent.0, last.as_ptr());
                    if rc != 0 && errno() != libc::EEXIST {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Step::Bind { src, file, writable, devices, .. } => {
                    let source = open_nofollow(src, if *file { 0 } else { libc::O_DIRECTORY })?;
                    let target =
                        walk_parts(root, parts_ref, if *file { Make::File } else { Make::Dir })?;
                    mount_fd_bind(source.0, target.0, true)?;
                    drop(target);
                    // The new mount, seen through the path again.
                    let mounted = walk_parts(root, parts_ref, Make::No)?;
                    let mut attr = MOUNT_ATTR_NOSUID;
                    if !writable {
                        attr |= MOUNT_ATTR_RDONLY;
                    }
                    if !devices {
                        attr |= MOUNT_ATTR_NODEV;
                    }
                    set_attr(mounted.0, attr, true)?;
                }
                Step::Overlay { lower, scratch, .. } => {
                    let mut buf = FdPath::new();
                    let at = walk_parts(root, CStrs(&scratch.0), Make::Dir)?;
                    check(libc::mount(
                        c"tmpfs".as_ptr(),
                        buf.of(at.0),
                        c"tmpfs".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        OVERLAY_SIZE.as_ptr().cast(),
                    ))?;
                    drop(at);
                    let tmp = walk_parts(root, CStrs(&scratch.0), Make::No)?;
                    let upper = open_at(tmp.0, c"upper".as_ptr(), Make::Dir)?;
                    let work = open_at(tmp.0, c"work".as_ptr(), Make::Dir)?;
                    let lower = open_nofollow(lower, libc::O_DIRECTORY)?;
                    let target = walk_parts(root, parts_ref, Make::Dir)?;
                    let mut data = StackText::new();
                    data.push(b"lowerdir=/proc/self/fd/");
                    data.number(lower.0);
                    data.push(b",upperdir=/proc/self/fd/");
                    data.number(upper.0);
                    data.push(b",workdir=/proc/self/fd/");
                    data.number(work.0);
                    data.push(b",userxattr");
                    check(libc::mount(
                        c"overlay".as_ptr(),
                        buf.of(target.0),
                        c"overlay".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        data.as_ptr().cast(),
                    ))?;
                }
                Step::Hide { file, id, .. } => {
                    let target = walk_parts(root, parts_ref, Make::No)?;
                    if let Some((dev, ino)) = id {
                        // Only what the walk found: another job may have moved its folder.
                        let mut st: libc::stat = std::mem::zeroed();
                        check(libc::fstat(target.0, &mut st))?;
                        if st.st_dev != *dev || st.st_ino != *ino {
                            return Err(std::io::Error::from_raw_os_error(libc::ESTALE));
                        }
                    }
                    let mut buf = FdPath::new();
                    if *file {
                        let null = match id {
                            Some(_) => open_nofollow(&self.empty, 0)?,
                            None => open_nofollow(c"/dev/null", 0)?,
                        };
                        let mut src = FdPath::new();
                        check(libc::mount(
                            src.of(null.0),
                            buf.of(target.0),
                            std::ptr::null(),
                            libc::MS_BIND,
                            std::ptr::null(),
                        ))?;
                    } else {
                        check(libc::mount(
                            c"tmpfs".as_ptr(),
                            buf.of(target.0),
                            c"tmpfs".as_ptr(),
                            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                            c"size=4k,mode=0500".as_ptr().cast(),
                        ))?;
                    }
                    drop(target);
                    if *file {
                        let mounted = walk_parts(root, parts_ref, Make::No)?;
                        set_attr(mounted.0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, false)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Brings up `lo` in the new network namespace, so test servers on loopback work.
unsafe fn loopback_up() {
    // SAFETY: a socket and two ioctls on a zeroed ifreq on the stack.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return;
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        if libc::ioctl(s, libc::SIOCGIFFLAGS, &mut req) == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(s, libc::SIOCSIFFLAGS, &mut req);
        }
        libc::close(s);
    }
}

/// Listens on `127.0.0.1:PROXY_PORT` in the job's network namespace and sends the listening
/// socket over `channel` to the engine, which serves the proxy on it ([`crate::egress`]). The
/// socket is close-on-exec here, and this process's copy is closed: only the engine accepts.
unsafe fn send_proxy_listener(channel: i32) -> std::io::Result<()> {
    // SAFETY: socket calls on a descriptor this function owns and on structs on the stack.
    unsafe {
        let s = Fd(check(libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0))?);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = crate::egress::PROXY_PORT.to_be();
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        check(libc::bind(
            s.0,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ))?;
        check(libc::listen(s.0, 128))?;
        crate::fdpass::send_fd(BorrowedFd::borrow_raw(channel), BorrowedFd::borrow_raw(s.0))
    }
}

/// No capabilities, in any set, for this process and whatever it executes (also as root).
pub(crate) unsafe fn drop_capabilities() -> std::io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: prctl with integers; capset with structs on the stack.
    unsafe {
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        let header = Header { version: 0x2008_0522, pid: 0 }; // _LINUX_CAPABILITY_VERSION_3
        let data = [
            Data { effective: 0, permitted: 0, inheritable: 0 },
            Data { effective: 0, permitted: 0, inheritable: 0 },
        ];
        check(libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()))?;
    }
    Ok(())
}

/// The outer process (outside the PID namespace, the one the engine knows): closes everything,
/// ignores the polite signals (the job gets them itself through the process group), waits for
/// init and ends as the job did.
unsafe fn outer(init: i32, status_read: i32, status_write: i32) -> ! {
    // SAFETY: system calls only; never returns.
    unsafe {
        libc::close(status_write);
        close_all_but(status_read);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_IGN);
        }
        let mut st = 0;
        while libc::waitpid(init, &mut st, 0) < 0 && errno() == libc::EINTR {}
        let mut sig = 0u8;
        let got = libc::read(status_read, (&mut sig as *mut u8).cast(), 1);
        if got == 1 && sig > 0 {
            exit_by_signal(i32::from(sig));
        }
        if libc::WIFSIGNALED(st) {
            exit_by_signal(libc::WTERMSIG(st));
        }
        libc::_exit(if libc::WIFEXITED(st) { libc::WEXITSTATUS(st) } else { 1 })
    }
}

unsafe fn exit_by_signal(sig: i32) -> ! {
    // SAFETY: system calls only; never returns.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig)
    }
}

/// PID 1 of the job's namespace: reaps every orphan, and when the job's process ends, ends
/// too — the kernel then kills everything left in the namespace. A signal that killed the job is
/// passed to the outer process through `status`.
unsafe fn init_loop(job: i32, status: i32) -> ! {
    // SAFETY: system calls only; never returns.
    unsafe {
        close_all_but(status);
        loop {
            let mut st = 0;
            let pid = libc::waitpid(-1, &mut st, 0);
            if pid == job {
                if libc::WIFSIGNALED(st) {
                    let sig = libc::WTERMSIG(st) as u8;
                    libc::write(status, (&sig as *const u8).cast(), 1);
                    libc::_exit(128 + i32::from(sig));
                }
                libc::_exit(libc::WEXITSTATUS(st));
            }
            if pid < 0 && errno() == libc::ECHILD {
                libc::_exit(1);
            }
        }
    }
}

/// The job's port keeper ([`crate::publish`]): for each byte the engine sends, an unconnected
/// TCP socket of the job's network namespace goes back. It ignores the signals a Ctrl-C or a
/// polite stop sends the job's process group, and ends with the namespace or the channel.
unsafe fn port_keeper(channel: i32) -> ! {
    // SAFETY: system calls only; never returns.
    unsafe {
        close_all_but(channel);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_IGN);
        }
        loop {
            let mut byte = 0u8;
            let n = libc::read(channel, (&mut byte as *mut u8).cast(), 1);
            if n == 0 || (n < 0 && errno() != libc::EINTR) {
                libc::_exit(0);
            }
            if n < 0 {
                continue;
            }
            let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if s < 0
                || crate::fdpass::send_fd(
                    BorrowedFd::borrow_raw(channel),
                    BorrowedFd::borrow_raw(s),
                )
                .is_err()
            {
                // No descriptor: the engine's wait for one ends in an error.
                libc::send(channel, (&byte as *const u8).cast(), 1, libc::MSG_NOSIGNAL);
            }
            if s >= 0 {
                libc::close(s);
            }
        }
    }
}

unsafe fn close_all_but(keep: i32) {
    // SAFETY: closing descriptor ranges of this process.
    unsafe {
        if keep > 0 {
            libc::close_range(0, (keep - 1) as libc::c_uint, 0);
        }
        libc::close_range((keep + 1) as libc::c_uint, libc::c_uint::MAX, 0);
    }
}
