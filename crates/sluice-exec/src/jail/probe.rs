//! Whether this kernel lets this process do what [`Jail::enter`](super::Jail::enter) needs:
//! measured once ([`super::status`]) by a throw-away child that tries the namespaces, the maps,
//! a mount and `/proc`.

use std::ffi::CString;

use super::sys::{
    FdPath, MOUNT_ATTR_RDONLY, errno, mount_fd_bind, open_nofollow, set_attr, write_file,
};
use super::{JailReport, cstr};

/// Tries everything [`Jail::enter`](super::Jail::enter) needs in a throw-away child of a
/// throw-away thread.
pub(super) fn probe() -> JailReport {
    let dir = std::env::temp_dir().join(format!("sluice-jail-probe-{}", std::process::id()));
    let result = (|| -> Result<(), String> {
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let root = cstr(dir.as_os_str()).map_err(|e| e.to_string())?;
        let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
        let maps =
            (format!("{uid} {uid} 1\n").into_bytes(), format!("{gid} {gid} 1\n").into_bytes());
        // SAFETY: the child makes only system calls and exits.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        if pid == 0 {
            // SAFETY: in the child: system calls only, then _exit.
            unsafe {
                let code = probe_child(&root, &maps.0, &maps.1);
                libc::_exit(code);
            }
        }
        let mut st = 0;
        // SAFETY: waits for the child forked above.
        while unsafe { libc::waitpid(pid, &mut st, 0) } < 0 && errno() == libc::EINTR {}
        match libc::WIFEXITED(st).then(|| libc::WEXITSTATUS(st)) {
            Some(0) => Ok(()),
            Some(n) => Err(match n {
                2 => "the kernel does not allow this user to create namespaces (unshare); on \
                      Ubuntu 24.04+ an AppArmor profile for Sluice allows it"
                    .into(),
                3 => "the user namespace's id maps could not be written".into(),
                4 => "mounts in the job's namespace failed".into(),
                5 => "this kernel lacks mount_setattr (Linux 5.12+)".into(),
                6 => "a /proc for the job's PID namespace could not be mounted".into(),
                _ => format!("the namespace probe failed ({n})"),
            }),
            None => Err("the namespace probe crashed".into()),
        }
    })();
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(()) => JailReport {
            available: true,
            summary: "namespaces: each job sees only its project, the system and the toolchains \
                      (read-only), private /tmp and HOME; no host sockets, no other processes, \
                      no capabilities"
                .into(),
        },
        Err(why) => {
            JailReport { available: false, summary: format!("no namespaces for jobs: {why}") }
        }
    }
}

unsafe fn probe_child(root: &CString, uid_map: &[u8], gid_map: &[u8]) -> i32 {
    // SAFETY: system calls only, in a forked child.
    unsafe {
        let flags =
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
        if libc::unshare(flags) != 0 {
            return 2;
        }
        if write_file(c"/proc/self/setgroups", b"deny").is_err()
            || write_file(c"/proc/self/uid_map", uid_map).is_err()
            || write_file(c"/proc/self/gid_map", gid_map).is_err()
        {
            return 3;
        }
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return 4;
        }
        let Ok(fd) = open_nofollow(root, libc::O_DIRECTORY) else { return 4 };
        if mount_fd_bind(fd.0, fd.0, false).is_err() {
            return 4;
        }
        drop(fd);
        let Ok(fd) = open_nofollow(root, libc::O_DIRECTORY) else { return 4 };
        if set_attr(fd.0, MOUNT_ATTR_RDONLY, false).is_err() {
            return 5;
        }
        let pid = libc::fork();
        if pid == 0 {
            let mut buf = FdPath::new();
            let rc = libc::mount(
                c"proc".as_ptr(),
                buf.of(fd.0),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            );
            libc::_exit(if rc == 0 { 0 } else { 6 });
        }
        if pid < 0 {
            return 6;
        }
        let mut st = 0;
        while libc::waitpid(pid, &mut st, 0) < 0 && errno() == libc::EINTR {}
        if libc::WIFEXITED(st) { libc::WEXITSTATUS(st) } else { 6 }
    }
}
