//! A process cap that holds for root too (Linux, RX-02). A job's process cap is `RLIMIT_NPROC`,
//! which the kernel does not apply to root; so when the engine runs as root, each job also runs
//! in a cgroup of its own whose `pids.max` is the same cap. A user's engine cannot create
//! cgroups without a delegated subtree, and does not need to: the rlimit binds it.
//!
//! The job's cgroup is `sluice-jobs/job-<marker>` at the top of the pids hierarchy (cgroup v2's
//! unified tree, or v1's `pids` controller), named by the job's marker ([`crate::kill`]), so
//! killing a job's tree also removes its cgroup. The child enters it between fork and exec
//! (writing `0` to `cgroup.procs` through a descriptor opened here), before it drops any
//! privilege: every process it then starts is counted from its first.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A job's cgroup, ready for its child to enter.
pub(crate) struct JobCgroup {
    procs: File,
}

impl JobCgroup {
    /// Creates the cgroup of the job marked `marker`, capped at `max` processes. `None` when the
    /// engine is not root (the rlimit holds), or the pids hierarchy cannot be written here
    /// (said once in the log: the cap then does not hold for root).
    pub(crate) fn create(marker: u64, max: u64) -> Option<JobCgroup> {
        let base = base()?;
        let dir = base.join(name(marker));
        let made = std::fs::create_dir(&dir)
            .and_then(|()| std::fs::write(dir.join("pids.max"), max.to_string()))
            .and_then(|()| File::options().write(true).open(dir.join("cgroup.procs")));
        match made {
            Ok(procs) => Some(JobCgroup { procs }),
            Err(err) => {
                tracing::warn!(%err, "cannot give a job its cgroup; its process cap does not hold");
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The descriptor the child writes to (open in the parent, so the child allocates nothing).
    pub(crate) fn procs_fd(&self) -> BorrowedFd<'_> {
        self.procs.as_fd()
    }
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is `fd`. Async-signal-safe:
/// one `write` of a static byte, and errors that allocate nothing.
pub(crate) fn enter(fd: BorrowedFd<'_>) -> std::io::Result<()> {
    match rustix::io::write(fd, b"0")? {
        1 => Ok(()),
        _ => Err(std::io::ErrorKind::WriteZero.into()),
    }
}

/// Removes the cgroup of the job marked `marker` once its processes are gone (an `rmdir` of a
/// cgroup that still holds one fails, and a later kill tries again).
pub(crate) fn remove(marker: u64) {
    if let Some(base) = base() {
        let _ = std::fs::remove_dir(base.join(name(marker)));
    }
}

/// Removes every empty cgroup this engine's jobs left (the emergency stop, after its kill).
pub(crate) fn remove_all(engine_prefix: &str) {
    let Some(base) = base() else { return };
    let Ok(dir) = std::fs::read_dir(base) else { return };
    for entry in dir.flatten() {
        if entry.file_name().to_str().is_some_and(|n| n.starts_with(engine_prefix)) {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

fn name(marker: u64) -> String {
    format!("job-{marker:016x}")
}

/// `sluice-jobs` in the pids hierarchy, created once; `None` unless root and writable.
fn base() -> Option<&'static PathBuf> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        if !rustix::process::geteuid().is_root() {
            return None;
        }
        let made = find_base().and_then(|base| {
            match std::fs::create_dir(&base) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
            // cgroup v2: the controller must be on in each parent for the children.
            if base.parent().is_some_and(|p| p.join("cgroup.subtree_control").exists()) {
                enable_pids(base.parent().unwrap_or(&base))?;
                enable_pids(&base)?;
            }
            Ok(base)
        });
        made.inspect_err(|err| {
            tracing::warn!(%err, "cgroups cannot be used here: as root, jobs have no process cap");
        })
        .ok()
    })
    .as_ref()
}

fn enable_pids(cgroup: &std::path::Path) -> std::io::Result<()> {
    let control = cgroup.join("cgroup.subtree_control");
    if std::fs::read_to_string(&control)?.split_whitespace().any(|c| c == "pids") {
        return Ok(());
    }
    File::options().write(true).open(control)?.write_all(b"+pids")
}

/// The top of the pids hierarchy: cgroup v2's root when it offers `pids`, else v1's `pids`.
fn find_base() -> std::io::Result<PathBuf> {
    let v2 = std::path::Path::new("/sys/fs/cgroup");
    let unified = std::fs::read_to_string(v2.join("cgroup.controllers"))
        .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"));
    if unified {
        return Ok(v2.join("sluice-jobs"));
    }
    let v1 = v2.join("pids");
    if v1.join("cgroup.procs").exists() {
        return Ok(v1.join("sluice-jobs"));
    }
    Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no pids cgroup hierarchy"))
}
