//! Whether this kernel lets this process do what [`Jail::enter`](super::Jail::enter) needs:
//! measured once ([`super::status`]) by a throw-away child that tries the namespaces, the maps,
//! a mount and `/proc`.

use std::ffi::CStr;
use std::os::fd::AsFd;

use rustix::mount::{MountAttrFlags, MountFlags};
use rustix::process::WaitStatus;

use super::enter::{Forked, NAMESPACES, exit, fork, map_ids, root_mount, unshare, wait_for};
use super::sys::{mount_new, set_attr};
use super::{JailReport, cstr};

/// Tries everything [`Jail::enter`](super::Jail::enter) needs in a throw-away child.
pub(super) fn probe() -> JailReport {
    let dir = std::env::temp_dir().join(format!("sluice-jail-probe-{}", std::process::id()));
    let result = (|| -> Result<(), String> {
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let root = cstr(dir.as_os_str()).map_err(|e| e.to_string())?;
        let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
        let maps =
            (format!("{uid} {uid} 1\n").into_bytes(), format!("{gid} {gid} 1\n").into_bytes());
        // SAFETY: the child makes only system calls on data prepared here, then exits.
        let pid = match unsafe { fork() }.map_err(|e| e.to_string())? {
            Forked::Child => exit(probe_child(&root, &maps.0, &maps.1)),
            Forked::Parent(pid) => pid,
        };
        match wait_for(pid).and_then(WaitStatus::exit_status) {
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

/// In the forked child: each step [`Jail::enter`](super::Jail::enter) takes, with the exit
/// code [`probe`] explains.
fn probe_child(root: &CStr, uid_map: &[u8], gid_map: &[u8]) -> i32 {
    if unshare(NAMESPACES).is_err() {
        return 2;
    }
    if map_ids(uid_map, gid_map).is_err() {
        return 3;
    }
    let Ok(root) = root_mount(root) else { return 4 };
    if set_attr(root.as_fd(), MountAttrFlags::MOUNT_ATTR_RDONLY, false).is_err() {
        return 5;
    }
    // A /proc needs the new PID namespace's first process.
    // SAFETY: this process is the single-threaded child of the probe's fork.
    match unsafe { fork() } {
        Ok(Forked::Child) => {
            let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
            exit(if mount_new(c"proc", root.as_fd(), flags, None).is_ok() { 0 } else { 6 })
        }
        Ok(Forked::Parent(pid)) => wait_for(pid).and_then(WaitStatus::exit_status).unwrap_or(6),
        Err(_) => 6,
    }
}
