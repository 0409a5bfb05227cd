//! The child's setup on Unix, computed in the parent and applied between fork and exec: resource
//! limits (and for root, the job's cgroup), and on Linux the job's namespaces ([`crate::jail`]) or the fallback (Landlock,
//! seccomp, no capabilities).

use std::path::Path;
#[cfg(target_os = "linux")]
use std::path::PathBuf;
use std::process::Command;

use super::Sandbox;
#[cfg(target_os = "linux")]
use super::{Network, SHM_DIR};
#[cfg(target_os = "linux")]
use crate::confine;
use crate::confine::{Enforcement, LandlockReport};
use crate::error::ExecError;
#[cfg(target_os = "linux")]
use crate::places::user_tool_home;
use crate::spec::{ResolvedCommand, TrustedPath};

/// What [`prepare_unix`] turns into the child's setup between fork and exec.
pub(super) struct ChildSetup<'a> {
    pub(super) cmd: &'a ResolvedCommand,
    pub(super) sandbox: &'a Sandbox,
    pub(super) path: &'a TrustedPath,
    /// The working folder, checked and resolved.
    pub(super) cwd: &'a Path,
    /// The job's process marker ([`crate::kill`]), carried in `RLIMIT_RTTIME` on Linux.
    pub(super) marker: Option<u64>,
    /// Whether Landlock must be fully enforced, or the job may start with less.
    pub(super) required: Enforcement,
    pub(super) confinement: &'a LandlockReport,
    /// The job's end of its proxy channel (Linux, `registries` network).
    pub(super) proxy: Option<i32>,
    /// Its stdin is a terminal of its own, to become its controlling terminal.
    pub(super) terminal: bool,
    /// The job's end of its port keeper's channel (Linux, published ports).
    pub(super) ports: Option<i32>,
}

/// Prepares `command`'s child: resource limits, and on Linux its namespaces or the fallback
/// (Landlock, seccomp, no capabilities), all computed here in the parent.
pub(super) fn prepare_unix(command: &mut Command, setup: ChildSetup<'_>) -> Result<(), ExecError> {
    use std::os::unix::process::CommandExt;

    let ChildSetup {
        cmd,
        sandbox,
        path,
        cwd,
        marker,
        required,
        confinement,
        proxy,
        terminal,
        ports,
    } = setup;

    // Everything the child needs is computed here, in the parent.
    use rustix::process::Resource;
    let mut limits = vec![(Resource::Core, 0)];
    if let Some(size) = sandbox.limits.max_file_size {
        limits.push((Resource::Fsize, size));
    }
    #[cfg(target_os = "linux")]
    let cgroup = {
        if let Some(extra) = sandbox.limits.max_new_processes {
            limits.push((Resource::Nproc, user_process_count() + extra));
        }
        if let Some(m) = marker {
            limits.push((Resource::Rttime, m));
        }
        // Root is exempt from RLIMIT_NPROC: a cgroup holds the same cap.
        match (sandbox.limits.max_new_processes, marker) {
            (Some(max), Some(m)) => crate::cgroup::JobCgroup::create(m, max),
            _ => None,
        }
    };
    #[cfg(not(target_os = "linux"))]
    let _ = (marker, cmd, path, cwd, confinement, proxy, ports);

    #[cfg(target_os = "linux")]
    let jail = if confinement.namespaces {
        Some(linux_jail(cmd, sandbox, path, cwd, (proxy, ports))?)
    } else {
        None
    };
    #[cfg(target_os = "linux")]
    let mut ruleset = {
        // `/tmp` and `/dev/shm` are these folders mounted elsewhere: Landlock sees them through
        // their mount, not beneath `state_dir`, so they are rules of their own.
        let (tmp, shm) = (sandbox.state_dir.join("tmp"), sandbox.state_dir.join(SHM_DIR));
        let writable = [
            sandbox.project_root.as_path(),
            sandbox.state_dir.as_path(),
            tmp.as_path(),
            shm.as_path(),
        ];
        // In namespaces the job's root holds only what it may read; without them, everything
        // but the hidden folders and the credential stores.
        let (readable, tcp_rules) = match &jail {
            Some(_) => (vec![sandbox.jail_root()], false),
            None => (
                confine::read_roots_with(&fallback_hidden(sandbox), &sandbox.exposure.granted),
                sandbox.network == Network::Off,
            ),
        };
        match confine::imp::ruleset(&readable, &writable, tcp_rules) {
            Ok(rs) => Some(rs),
            Err(e) if required == Enforcement::FullyEnforced => return Err(e),
            Err(_) => None,
        }
    };
    #[cfg(not(target_os = "linux"))]
    let _ = required;
    // Without a network namespace of its own, a job whose network is off gets no IP socket.
    #[cfg(target_os = "linux")]
    let no_ip = match sandbox.network {
        Network::Off if jail.is_none() => Some(confine::NoIpSockets::new().ok_or_else(|| {
            ExecError::Unconfinable(
                "network access cannot be turned off for commands on this processor \
                 architecture; turn the project's network on to run them"
                    .into(),
            )
        })?),
        _ => None,
    };

    let parent = rustix::process::getpid();
    let pre_exec = move || -> std::io::Result<()> {
        // Each call below is async-signal-safe, takes only integers or a pointer to a stack
        // value, and allocates nothing (rustix's calls are the bare system calls).
        default_signals();
        rustix::process::setsid()?;
        if terminal {
            // The new session's controlling terminal: the job's own, on its stdin. Its
            // programs (and the jail's init and outer process, which ignore it) are the
            // foreground group, so Ctrl-C on the terminal interrupts them.
            rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())?;
        }
        #[cfg(target_os = "linux")]
        {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // The engine may have died between fork and prctl: then nobody would kill us.
            if rustix::process::getppid() != Some(parent) {
                return Err(rustix::io::Errno::SRCH.into());
            }
            // Only stdin, stdout and stderr reach the program: whatever the engine itself
            // inherited without close-on-exec (a descriptor of the program that started it) is
            // closed at exec. libc, because rustix has no `close_range`.
            // SAFETY: close_range takes integers only; it marks descriptors, it frees nothing.
            if unsafe { libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) }
                != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = parent;
        for &(resource, value) in &limits {
            let lim = rustix::process::Rlimit { current: Some(value), maximum: Some(value) };
            rustix::process::setrlimit(resource, lim)?;
        }
        #[cfg(target_os = "linux")]
        {
            // Before any privilege is dropped: entering a cgroup takes root's.
            if let Some(cgroup) = &cgroup {
                crate::cgroup::enter(cgroup.procs_fd())?;
            }
            let mut confine = || -> std::io::Result<()> {
                if let Some(rs) = ruleset.take() {
                    confine::imp::apply(rs, required)?;
                }
                if let Some(filter) = &no_ip {
                    filter.apply()?;
                }
                Ok(())
            };
            match &jail {
                // SAFETY: this is the single-threaded child of the spawn's fork, which execs
                // right after, and `confine` makes only system calls.
                Some(jail) => unsafe { jail.enter(confine)? },
                None => {
                    crate::jail::drop_capabilities()?;
                    confine()?;
                }
            }
        }
        Ok(())
    };
    // SAFETY: the closure only makes async-signal-safe calls (see above).
    unsafe { command.pre_exec(pre_exec) };
    Ok(())
}

/// Every ignored signal back to its default action. A signal the engine ignores stays ignored
/// across exec (handlers do not), and a program that starts with SIGINT ignored cannot be
/// interrupted: Python installs no KeyboardInterrupt, a shell cannot trap it. An engine started
/// in the background of a script, or by a launcher that ignores SIGINT or SIGHUP, would hand
/// that on. Only ignored ones are touched (the C library's own signals are left alone). libc,
/// because rustix has no `sigaction`; async-signal-safe, between fork and exec.
fn default_signals() {
    #[cfg(target_os = "linux")]
    const LAST: i32 = 64;
    #[cfg(not(target_os = "linux"))]
    const LAST: i32 = 31;
    for sig in 1..=LAST {
        // SAFETY: sigaction reads into and from stack values; a signal number the C library
        // reserves is refused with EINVAL and left as it is.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
    }
}

/// What Landlock alone keeps out of reach when namespaces are not available: the hidden
/// folders and the credential stores (the project's list).
#[cfg(target_os = "linux")]
fn fallback_hidden(sandbox: &Sandbox) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut hidden = sandbox.hidden.clone();
    hidden.extend(
        crate::hide::effective_stores(home.as_deref(), &sandbox.exposure)
            .into_iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .filter(|p| !sandbox.project_root.starts_with(p) && !sandbox.state_dir.starts_with(p)),
    );
    hidden
}

/// The job's own view of the machine (see [`crate::jail`]).
#[cfg(target_os = "linux")]
fn linux_jail(
    cmd: &ResolvedCommand,
    sandbox: &Sandbox,
    path: &TrustedPath,
    cwd: &Path,
    (proxy, ports): (Option<i32>, Option<i32>),
) -> Result<crate::jail::Jail, ExecError> {
    let home = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    let mut path_dirs = path.dirs().to_vec();
    if let Some(dir) = cmd.program.parent() {
        path_dirs.push(dir.to_path_buf());
    }
    let project = std::fs::canonicalize(&sandbox.project_root)
        .map_err(|e| ExecError::os("resolving the project folder", e))?;
    let state = std::fs::canonicalize(&sandbox.state_dir)
        .map_err(|e| ExecError::os("resolving the job's private folders", e))?;
    let cargo_home = user_tool_home("CARGO_HOME", ".cargo").filter(|c| c.is_dir());
    // Walked now, right before the fork: what the shield hides as the job starts.
    let (covered, read_only) = match &sandbox.shield {
        Some(shield) => {
            let cover = crate::cover::ShieldCover { shield, granted: &sandbox.exposure.granted };
            (crate::cover::covered(&project, cover)?, crate::cover::read_only(&project, cover))
        }
        None => (Vec::new(), Vec::new()),
    };
    let empty = empty_file(&sandbox.empty_file())?;
    crate::jail::Jail::new(&crate::jail::JailSpec {
        root: &sandbox.jail_root(),
        empty: &empty,
        project: &project,
        project_writable: true,
        state_dir: &state,
        tmp: &state.join("tmp"),
        shm: &state.join(SHM_DIR),
        home: home.as_deref(),
        path_dirs,
        hidden: &sandbox.hidden,
        credentials: crate::hide::effective_stores(home.as_deref(), &sandbox.exposure),
        granted: &sandbox.exposure.granted,
        sockets: &sandbox.exposure.sockets,
        covered: &covered,
        read_only: &read_only,
        cargo_home: cargo_home.as_deref(),
        own_network: sandbox.network != Network::Allowed,
        proxy,
        ports,
        cwd,
    })
}

/// The empty file at `at`, made (or emptied) now: a plain file, never a link.
#[cfg(target_os = "linux")]
fn empty_file(at: &Path) -> Result<PathBuf, ExecError> {
    let fail = |e| ExecError::os("preparing the job's empty file", e);
    match std::fs::symlink_metadata(at) {
        Ok(m) if m.is_file() && m.len() == 0 => {}
        Ok(m) if m.is_file() => std::fs::File::create(at).map(drop).map_err(fail)?,
        Ok(_) => std::fs::remove_file(at).and_then(|()| std::fs::write(at, "")).map_err(fail)?,
        Err(_) => std::fs::write(at, "").map_err(fail)?,
    }
    std::fs::canonicalize(at).map_err(fail)
}

/// How many processes the engine's user runs now (for `RLIMIT_NPROC`, which counts them all).
#[cfg(target_os = "linux")]
fn user_process_count() -> u64 {
    use std::os::unix::fs::MetadataExt;
    let uid = rustix::process::getuid().as_raw();
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| {
                    e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
                })
                .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
                .count() as u64
        })
        .unwrap_or(0)
}
