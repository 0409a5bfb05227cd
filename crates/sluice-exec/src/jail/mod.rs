//! The job's own view of the machine (Linux): new user, mount, PID and IPC namespaces (and a
//! network namespace when its network is off), a root assembled from only what the job may see,
//! no capabilities, and a small init that ends everything the job started when its command ends.
//!
//! What the job sees: the system folders (`/usr`, `/etc`, `/opt`, the `/lib*` and `/bin` links,
//! `/sys`) and the user's toolchains ([`crate::places::TOOLCHAINS`], the trusted PATH) read-only,
//! with the credential stores beneath them ([`crate::hide::credential_stores`]) covered; the
//! project and the job's private folders read-write; a private `/tmp`, `/var/tmp` and `/dev/shm`
//! (the job's own folders, on disk); a `/dev` with only the harmless devices; its own `/proc`.
//! Nothing else: not the user's home (a private HOME is in the environment), not Sluice's data
//! folder, not another project, not a single Unix socket of the host (session and system bus,
//! Docker, X11, agents, systemd) unless one lives inside an exposed system folder. With the network
//! off, host abstract sockets are gone with the host's network namespace; otherwise Landlock scopes
//! them.
//!
//! Written with the system calls rather than through bubblewrap: Landlock, the second layer, must
//! be applied after the mounts (a Landlock domain may not change the mount topology) and in the
//! process that then runs the program; bubblewrap cannot apply it, so it would need a helper binary
//! shipped beside every engine and an extra `execve` per job.
//!
//! Everything is prepared in the parent ([`Jail::new`]: paths, maps, the step list, read from the
//! machine in `view.rs`); between fork and exec [`Jail::enter`] (`enter.rs`, on the file-system
//! calls of `sys.rs`) makes only system calls on that data. Paths are resolved in the child
//! with `openat2(RESOLVE_NO_SYMLINKS)` on canonical paths and mount points are walked component by
//! component with `O_NOFOLLOW`, and every mount targets `/proc/self/fd/N`: a job that plants a
//! symlink in its writable folders cannot redirect the next job's mounts (it can only make the
//! spawn fail). Needs Linux ≥ 5.12 (`mount_setattr`); [`status`] measures whether the kernel
//! lets this process do all of it, and callers fall back to Landlock alone when not.

mod enter;
mod probe;
mod sys;
mod view;

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use crate::error::ExecError;

pub(crate) use enter::drop_capabilities;

/// System folders, read-only (a symlink among them is recreated as the same symlink).
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/gnu",
    "/snap", "/sys",
];

/// Where the tmpfs behind a copy-on-write folder is mounted in the job's root.
const OVERLAY_SCRATCH: &str = "/run/sluice-overlay";

/// The most a job may write into its copy of the cargo home (downloads), in memory.
const OVERLAY_SIZE: &std::ffi::CStr = c"size=2g,mode=0700";

/// The devices a job gets, bound from the host's.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// What the kernel allows this process: whether jobs can run in namespaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JailReport {
    pub available: bool,
    /// A sentence for `sluice doctor`, Settings and the approval card.
    pub summary: String,
}

/// Measured once: a throw-away child tries the namespaces, the maps, a mount and `/proc`.
pub fn status() -> JailReport {
    static STATUS: OnceLock<JailReport> = OnceLock::new();
    STATUS.get_or_init(probe::probe).clone()
}

/// A mount point or link inside the job's root, as path components beneath it.
#[derive(Debug, Clone)]
struct Dest(Vec<CString>);

#[derive(Debug)]
enum Step {
    /// An empty folder (read-only with the root).
    Dir(Dest),
    /// A symlink, as on the host (`/lib -> usr/lib`).
    Link { dest: Dest, target: CString },
    /// A host folder or file (canonical path) at `dest`.
    Bind { src: CString, dest: Dest, file: bool, writable: bool, devices: bool },
    /// Covers what an earlier bind exposed: an empty read-only tmpfs or `/dev/null`. With `id`
    /// (a project's shielded entry, [`crate::cover`]), a file shows [`Jail::empty`] instead, a
    /// regular file that refuses writes rather than swallowing them, and only the file or folder
    /// with that device and inode is covered: anything else at `dest` fails the spawn.
    Hide { dest: Dest, file: bool, id: Option<(u64, u64)> },
    /// A host folder (canonical path) copy-on-write at `dest`: an overlay whose upper layer is
    /// a tmpfs of the job's own, mounted at `scratch` (so it goes with the job, and no folder a
    /// job could have planted a link in is ever part of it).
    Overlay { lower: CString, dest: Dest, scratch: Dest },
}

impl Step {
    fn dest(&self) -> &Dest {
        match self {
            Step::Dir(d) | Step::Link { dest: d, .. } | Step::Bind { dest: d, .. } => d,
            Step::Hide { dest, .. } | Step::Overlay { dest, .. } => dest,
        }
    }
}

/// Everything the child needs, prepared in the parent.
#[derive(Debug)]
pub(crate) struct Jail {
    /// The job's root on disk (canonical; not writable by jobs).
    root: CString,
    /// An empty file no job can write, shown in place of a covered project file.
    empty: CString,
    steps: Vec<Step>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    new_net: bool,
    /// The job's end of the socket pair its proxy listener is passed to the engine over
    /// (`registries` network, [`crate::egress`]).
    proxy: Option<i32>,
    /// The job's end of the socket pair to its port keeper ([`crate::publish`]).
    ports: Option<i32>,
    cwd: CString,
}

/// The inputs of a jail, from the sandbox.
pub(crate) struct JailSpec<'a> {
    pub root: &'a Path,
    /// An empty regular file outside the job's view (canonical): what a covered file shows.
    pub empty: &'a Path,
    pub project: &'a Path,
    pub project_writable: bool,
    pub state_dir: &'a Path,
    /// Sub-folders of `state_dir` that become `/tmp` (and `/var/tmp`) and `/dev/shm`.
    pub tmp: &'a Path,
    pub shm: &'a Path,
    pub home: Option<&'a Path>,
    /// Folders of the trusted PATH and the program's own folder.
    pub path_dirs: Vec<PathBuf>,
    /// Folders hidden even when beneath an exposed one (Sluice's data folder).
    pub hidden: &'a [PathBuf],
    /// Credential stores, covered when beneath an exposed folder.
    pub credentials: Vec<PathBuf>,
    /// Stores granted to the project: bound read-only at their path, which holds no link
    /// (checked in the parent; opened without following one in the child).
    pub granted: &'a [PathBuf],
    /// Host sockets the project opted in to: bound at the path named and at the socket's own.
    pub sockets: &'a [PathBuf],
    /// What the project's shield hides beneath `project` ([`crate::cover::covered`]).
    pub covered: &'a [crate::cover::Covered],
    /// Beneath `project`, shown read-only: the programs of its `.git` and the shielded files
    /// granted to its commands ([`crate::cover::read_only`]).
    pub read_only: &'a [PathBuf],
    /// The user's cargo home: it becomes the job's (`JOB_VIEW/cargo`), copy-on-write, so the
    /// crates and the configuration the user has are there and what cargo downloads is the
    /// job's own.
    pub cargo_home: Option<&'a Path>,
    /// A network namespace of its own: no network, or only the proxy.
    pub own_network: bool,
    /// With [`JailSpec::own_network`]: the descriptor (close-on-exec) over which the job's
    /// proxy listener goes to the engine.
    pub proxy: Option<i32>,
    /// With [`JailSpec::own_network`]: the descriptor (close-on-exec) over which the port
    /// keeper sends the engine sockets of the job's namespace (published ports).
    pub ports: Option<i32>,
    pub cwd: &'a Path,
}

fn cstr(p: &OsStr) -> Result<CString, ExecError> {
    CString::new(p.as_bytes())
        .map_err(|_| ExecError::Invalid("a path of the sandbox contains a NUL byte".into()))
}

fn dest(p: &Path) -> Result<Dest, ExecError> {
    let mut parts = Vec::new();
    for c in p.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(n) => parts.push(cstr(n)?),
            _ => return Err(ExecError::Invalid(format!("{} is not a plain path", p.display()))),
        }
    }
    Ok(Dest(parts))
}

impl Jail {
    /// Everything the child needs, read from the machine and prepared here, in the parent.
    pub(crate) fn new(spec: &JailSpec<'_>) -> Result<Jail, ExecError> {
        let steps = view::steps(spec)?;
        let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
        let root = std::fs::canonicalize(spec.root)
            .map_err(|e| ExecError::os("resolving the job's root folder", e))?;
        Ok(Jail {
            root: cstr(root.as_os_str())?,
            empty: cstr(spec.empty.as_os_str())?,
            steps,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            new_net: spec.own_network,
            proxy: spec.proxy.filter(|_| spec.own_network),
            ports: spec.ports.filter(|_| spec.own_network),
            cwd: cstr(spec.cwd.as_os_str())?,
        })
    }
}
