//! The job's own view of the machine (Linux): new user, mount, PID and IPC namespaces (and a
//! network namespace when its network is off), a root assembled from only what the job may see,
//! no capabilities, and a small init that ends everything the job started when its command ends.
//!
//! What the job sees: the system folders (`/usr`, `/etc`, `/opt`, the `/lib*` and `/bin` links,
//! `/sys`) and the user's toolchains ([`TOOLCHAINS`], the trusted PATH) read-only, with the
//! credential stores beneath them ([`crate::hide::credential_stores`]) covered; the project and the
//! job's private folders read-write; a private `/tmp`, `/var/tmp` and `/dev/shm` (the job's own
//! folders, on disk); a `/dev` with only the harmless devices; its own `/proc`. Nothing else: not
//! the user's home (a private HOME is in the environment), not Sluice's data folder, not another
//! project, not a single Unix socket of the host (session and system bus, Docker, X11, agents,
//! systemd) unless one lives inside an exposed system folder. With the network off, host
//! abstract sockets are gone with the host's network namespace; otherwise Landlock scopes them.
//!
//! Written with the system calls rather than through bubblewrap: Landlock, the second layer, must
//! be applied after the mounts (a Landlock domain may not change the mount topology) and in the
//! process that then runs the program; bubblewrap cannot apply it, so it would need a helper binary
//! shipped beside every engine and an extra `execve` per job.
//!
//! Everything is prepared in the parent ([`Jail::new`]: paths, maps, the step list); between fork
//! and exec [`Jail::enter`] makes only system calls on that data. Paths are resolved in the child
//! with `openat2(RESOLVE_NO_SYMLINKS)` on canonical paths and mount points are walked component by
//! component with `O_NOFOLLOW`, and every mount targets `/proc/self/fd/N`: a job that plants a
//! symlink in its writable folders cannot redirect the next job's mounts (it can only make the
//! spawn fail). Needs Linux ≥ 5.12 (`mount_setattr`); [`status`] measures whether the kernel
//! lets this process do all of it, and callers fall back to Landlock alone when not.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use crate::error::ExecError;

/// Where a job sees its private folders (HOME, caches, temp): the sandbox's `state_dir` is
/// mounted here, so nothing of the path to Sluice's data folder is in the job's view.
pub const JOB_VIEW: &str = "/run/sluice-job";

/// Folders of the user's home that hold toolchains and their caches, exposed read-only when
/// they exist. Everything else in the home is absent from the job's view.
pub const TOOLCHAINS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".npm",
    ".nvm",
    ".volta",
    ".fnm",
    ".bun",
    ".deno",
    ".pyenv",
    ".rbenv",
    ".gem",
    ".asdf",
    ".local/share/mise",
    ".local/share/pnpm",
    ".local/bin",
    ".local/lib",
    ".cache/pip",
    ".cache/uv",
    "go",
    ".sdkman",
    ".gradle/caches",
    ".gradle/wrapper",
    ".m2/repository",
    ".dotnet",
    ".nuget/packages",
    ".cabal",
    ".ghcup",
    ".opam",
    ".elan",
    ".pub-cache",
    "miniconda3",
    "anaconda3",
];

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
    STATUS.get_or_init(probe).clone()
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
    /// Covers what an earlier bind exposed: an empty read-only tmpfs or `/dev/null`.
    Hide { dest: Dest, file: bool },
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
    steps: Vec<Step>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    new_net: bool,
    /// The job's end of the socket pair its proxy listener is passed to the engine over
    /// (`registries` network, [`crate::egress`]).
    proxy: Option<i32>,
    cwd: CString,
}

/// The inputs of a jail, from the sandbox.
pub(crate) struct JailSpec<'a> {
    pub root: &'a Path,
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
    /// The user's cargo home: it becomes the job's (`JOB_VIEW/cargo`), copy-on-write, so the
    /// crates and the configuration the user has are there and what cargo downloads is the
    /// job's own.
    pub cargo_home: Option<&'a Path>,
    /// A network namespace of its own: no network, or only the proxy.
    pub own_network: bool,
    /// With [`JailSpec::own_network`]: the descriptor (close-on-exec) over which the job's
    /// proxy listener goes to the engine.
    pub proxy: Option<i32>,
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
    pub(crate) fn new(spec: &JailSpec<'_>) -> Result<Jail, ExecError> {
        let mut steps = Vec::new();
        let mut exposed: Vec<PathBuf> = Vec::new();
        let bind = |steps: &mut Vec<Step>,
                    exposed: &mut Vec<PathBuf>,
                    at: &Path,
                    writable: bool,
                    devices: bool|
         -> Result<(), ExecError> {
            let Ok(real) = std::fs::canonicalize(at) else { return Ok(()) };
            let file = !real.is_dir();
            steps.push(Step::Bind {
                src: cstr(real.as_os_str())?,
                dest: dest(at)?,
                file,
                writable,
                devices,
            });
            exposed.push(at.to_path_buf());
            Ok(())
        };
        for sys in SYSTEM {
            let p = Path::new(sys);
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    let target = std::fs::read_link(p)
                        .map_err(|e| ExecError::os("reading a system link", e))?;
                    steps.push(Step::Link { dest: dest(p)?, target: cstr(target.as_os_str())? });
                }
                Ok(m) if m.is_dir() => bind(&mut steps, &mut exposed, p, false, false)?,
                _ => {}
            }
        }
        for d in ["/dev", "/proc", "/run", "/var", "/tmp", "/var/tmp", "/dev/shm"] {
            steps.push(Step::Dir(dest(Path::new(d))?));
        }
        for dev in DEVICES {
            let p = Path::new("/dev").join(dev);
            if p.exists() {
                bind(&mut steps, &mut exposed, &p, true, true)?;
            }
        }
        for (name, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            steps.push(Step::Link {
                dest: dest(&Path::new("/dev").join(name))?,
                target: cstr(OsStr::new(target))?,
            });
        }
        // The job's private temp folders, at the usual places.
        for (at, src) in [("/tmp", spec.tmp), ("/var/tmp", spec.tmp), ("/dev/shm", spec.shm)] {
            let src = std::fs::canonicalize(src)
                .map_err(|e| ExecError::os("resolving the job's temp folder", e))?;
            steps.push(Step::Bind {
                src: cstr(src.as_os_str())?,
                dest: dest(Path::new(at))?,
                file: false,
                writable: true,
                devices: false,
            });
        }
        if let Some(home) = spec.home {
            steps.push(Step::Dir(dest(home)?));
            for tc in TOOLCHAINS {
                let p = home.join(tc);
                if p.is_dir() {
                    bind(&mut steps, &mut exposed, &p, false, false)?;
                }
            }
        }
        if let Some(p) = crate::spawn::user_tool_home("RUSTUP_HOME", ".rustup")
            && p.is_dir()
            && !exposed.iter().any(|e| p.starts_with(e))
        {
            bind(&mut steps, &mut exposed, &p, false, false)?;
        }
        for dir in &spec.path_dirs {
            // Through its links: `/bin` is `/usr/bin`, already there.
            let Ok(real) = std::fs::canonicalize(dir) else { continue };
            let dir = &real;
            let inside = |roots: &[PathBuf]| roots.iter().any(|r| dir.starts_with(r));
            // Never the home, Sluice's data folder or a folder above them (a PATH with `~`
            // or `/` in it): those would bring everything beneath into view.
            let above = |p: &Path| std::fs::canonicalize(p).is_ok_and(|p| p.starts_with(dir));
            if dir.is_dir()
                && !inside(&exposed)
                && !inside(spec.hidden)
                && !spec.home.is_some_and(above)
                && !spec.hidden.iter().any(|h| above(h))
                && !spec.credentials.iter().any(|c| dir.starts_with(c))
            {
                bind(&mut steps, &mut exposed, dir, false, false)?;
            }
        }
        bind(&mut steps, &mut exposed, spec.project, spec.project_writable, false)?;
        // Granted stores at their own path, not through `bind`'s canonicalization: a link
        // along the path must not choose what is mounted (the child's open refuses one).
        for g in spec.granted {
            let Ok(meta) = std::fs::symlink_metadata(g) else { continue };
            if exposed.iter().any(|e| g.starts_with(e)) || meta.file_type().is_symlink() {
                continue;
            }
            steps.push(Step::Bind {
                src: cstr(g.as_os_str())?,
                dest: dest(g)?,
                file: !meta.is_dir(),
                writable: false,
                devices: false,
            });
            exposed.push(g.clone());
        }
        // Opted-in sockets: only a socket, found through the system's links (`/var/run` is
        // `/run`), shown where the user named it and where it really is.
        for named in spec.sockets {
            use std::os::unix::fs::FileTypeExt;
            let Ok(real) = std::fs::canonicalize(named) else { continue };
            if !std::fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_socket()) {
                continue;
            }
            let mut at = vec![real.clone()];
            if named != &real {
                at.push(named.clone());
            }
            for at in at {
                if exposed.iter().any(|e| at.starts_with(e)) || at.starts_with(JOB_VIEW) {
                    continue;
                }
                steps.push(Step::Bind {
                    src: cstr(real.as_os_str())?,
                    dest: dest(&at)?,
                    file: true,
                    writable: true,
                    devices: false,
                });
            }
        }
        steps.push(Step::Bind {
            src: cstr(spec.state_dir.as_os_str())?,
            dest: dest(Path::new(JOB_VIEW))?,
            file: false,
            writable: true,
            devices: false,
        });
        let cargo = Path::new(JOB_VIEW).join("cargo");
        let cargo_home = spec.cargo_home.and_then(|c| Some((c, std::fs::canonicalize(c).ok()?)));
        if let Some((_, real)) = &cargo_home {
            steps.push(Step::Overlay {
                lower: cstr(real.as_os_str())?,
                dest: dest(&cargo)?,
                scratch: dest(Path::new(OVERLAY_SCRATCH))?,
            });
        }
        // What must stay hidden even beneath an exposed folder, and in the cargo home's copy.
        let ro_exposed: Vec<&PathBuf> =
            exposed.iter().filter(|e| !e.starts_with(spec.project)).collect();
        for h in spec.credentials.iter().chain(spec.hidden) {
            let Ok(meta) = std::fs::symlink_metadata(h) else { continue };
            if meta.file_type().is_symlink() {
                continue;
            }
            if ro_exposed.iter().any(|e| h.starts_with(e) && *e != h) {
                steps.push(Step::Hide { dest: dest(h)?, file: !meta.is_dir() });
            }
            let in_cargo = cargo_home.as_ref().and_then(|(given, real)| {
                h.strip_prefix(given).or_else(|_| h.strip_prefix(real)).ok()
            });
            if let Some(rel) = in_cargo.filter(|r| !r.as_os_str().is_empty()) {
                steps.push(Step::Hide { dest: dest(&cargo.join(rel))?, file: !meta.is_dir() });
            }
        }
        // Parents before children; a hide after the bind it covers.
        steps.sort_by_key(|s| (s.dest().0.len(), matches!(s, Step::Hide { .. })));

        let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
        let root = std::fs::canonicalize(spec.root)
            .map_err(|e| ExecError::os("resolving the job's root folder", e))?;
        Ok(Jail {
            root: cstr(root.as_os_str())?,
            steps,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            new_net: spec.own_network,
            proxy: spec.proxy.filter(|_| spec.own_network),
            cwd: cstr(spec.cwd.as_os_str())?,
        })
    }

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
                Step::Hide { file, .. } => {
                    let target = walk_parts(root, parts_ref, Make::No)?;
                    let mut buf = FdPath::new();
                    if *file {
                        let null = open_nofollow(c"/dev/null", 0)?;
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

#[derive(Clone, Copy)]
struct CStrs<'a>(&'a [CString]);

/// A NUL-terminated string built on the stack between fork and exec (mount options).
struct StackText {
    buf: [u8; 128],
    len: usize,
}

impl StackText {
    fn new() -> StackText {
        StackText { buf: [0; 128], len: 0 }
    }

    /// Appends what fits, always leaving the final NUL (a cut option fails the mount).
    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.len + 1 < self.buf.len() {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }
    }

    fn number(&mut self, n: i32) {
        let mut digits = [0u8; 10];
        let (mut n, mut i) = (n.unsigned_abs(), digits.len());
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }

    fn as_ptr(&self) -> *const u8 {
        self.buf.as_ptr()
    }
}

/// An owned descriptor, closed on drop (`close` is async-signal-safe).
struct Fd(i32);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is owned by this value.
        unsafe { libc::close(self.0) };
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Make {
    No,
    Dir,
    File,
}

/// `/proc/self/fd/N` in a stack buffer, without allocating.
struct FdPath(StackText);

impl FdPath {
    fn new() -> FdPath {
        FdPath(StackText::new())
    }

    fn of(&mut self, fd: i32) -> *const libc::c_char {
        self.0 = StackText::new();
        self.0.push(b"/proc/self/fd/");
        self.0.number(fd);
        self.0.as_ptr().cast()
    }
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

/// `struct open_how` of openat2(2) (libc's is non-exhaustive).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn check<T: Copy + PartialOrd + Default>(rc: T) -> std::io::Result<T> {
    if rc < T::default() { Err(std::io::Error::last_os_error()) } else { Ok(rc) }
}

/// Opens a canonical absolute path with no symlink anywhere in it.
unsafe fn open_nofollow(path: &std::ffi::CStr, flags: i32) -> std::io::Result<Fd> {
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC | flags) as u64,
        mode: 0,
        resolve: libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: openat2 with a NUL-terminated path and a struct on the stack.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    Ok(Fd(check(fd)? as i32))
}

/// Walks `parts` beneath `root` one component at a time, never following a symlink, creating
/// missing folders (and the last component as `make` says). Returns an `O_PATH` descriptor.
unsafe fn walk_parts(root: i32, parts: CStrs<'_>, make: Make) -> std::io::Result<Fd> {
    // SAFETY: system calls on descriptors owned here.
    let mut fd = Fd(check(unsafe { libc::fcntl(root, libc::F_DUPFD_CLOEXEC, 0) })?);
    let n = parts.0.len();
    for (i, part) in parts.0.iter().enumerate() {
        let last = i + 1 == n;
        // SAFETY: `fd` is a descriptor owned here and `part` a NUL-terminated string that
        // outlives the call.
        fd = unsafe { open_at(fd.0, part.as_ptr(), if last { make } else { Make::Dir })? };
    }
    Ok(fd)
}

/// One component: opened with `O_NOFOLLOW`, created first when missing and `make` says so.
unsafe fn open_at(dir: i32, name: *const libc::c_char, make: Make) -> std::io::Result<Fd> {
    let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: system calls on a descriptor and a NUL-terminated name.
    unsafe {
        let fd = libc::openat(dir, name, flags);
        if fd >= 0 {
            return Ok(Fd(fd));
        }
        if errno() != libc::ENOENT || make == Make::No {
            return Err(std::io::Error::last_os_error());
        }
        match make {
            Make::Dir => {
                if libc::mkdirat(dir, name, 0o755) != 0 && errno() != libc::EEXIST {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Make::File => {
                let f = libc::openat(
                    dir,
                    name,
                    libc::O_CREAT | libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    0o644,
                );
                if f < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(f);
            }
            Make::No => {}
        }
        Ok(Fd(check(libc::openat(dir, name, flags))?))
    }
}

unsafe fn mount_fd_bind(src: i32, target: i32, recursive: bool) -> std::io::Result<()> {
    let (mut a, mut b) = (FdPath::new(), FdPath::new());
    let flags = if recursive { libc::MS_BIND | libc::MS_REC } else { libc::MS_BIND };
    // SAFETY: mount with two NUL-terminated stack strings.
    check(unsafe {
        libc::mount(a.of(src), b.of(target), std::ptr::null(), flags, std::ptr::null())
    })?;
    Ok(())
}

/// `mount_setattr` on the mount `fd` is (recursively: and every mount beneath it).
unsafe fn set_attr(fd: i32, set: u64, recursive: bool) -> std::io::Result<()> {
    let attr = MountAttr { attr_set: set, attr_clr: 0, propagation: 0, userns_fd: 0 };
    let mut flags = libc::AT_EMPTY_PATH;
    if recursive {
        flags |= 0x8000; // AT_RECURSIVE
    }
    // SAFETY: mount_setattr with an empty path on an owned descriptor and a stack struct.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            fd,
            c"".as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(rc).map(|_| ())
}

unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: open/write/close on a NUL-terminated path and a borrowed buffer.
    unsafe {
        let fd = Fd(check(libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC))?);
        let n = libc::write(fd.0, data.as_ptr().cast(), data.len());
        if n < 0 || n as usize != data.len() {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
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
        // One descriptor as SCM_RIGHTS, in a buffer aligned for cmsghdr.
        let mut control = [0u64; 4];
        let mut byte = 0u8;
        let mut iov = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>(), s.0);
        if libc::sendmsg(channel, &msg, libc::MSG_NOSIGNAL) != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
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

unsafe fn close_all_but(keep: i32) {
    // SAFETY: closing descriptor ranges of this process.
    unsafe {
        if keep > 0 {
            libc::close_range(0, (keep - 1) as libc::c_uint, 0);
        }
        libc::close_range((keep + 1) as libc::c_uint, libc::c_uint::MAX, 0);
    }
}

/// Tries everything [`Jail::enter`] needs in a throw-away child of a throw-away thread.
fn probe() -> JailReport {
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
