//! The child's setup on Unix, computed in the parent and applied between fork and exec: its
//! signals back to their defaults, a session of its own (and its terminal), resource limits, and
//! on Linux death with the engine, no inherited descriptor, the job's cgroup (for root), and its
//! namespaces ([`crate::jail`]) or the fallback (Landlock, seccomp, no capabilities).
//!
//! [`prepare_unix`] is the two halves: [`ChildPlan::prepare`] computes everything in the parent,
//! and [`ChildPlan::in_child`] applies it in the child, step by step, with system calls on what
//! was prepared: nothing there allocates or takes a lock.

use std::io;
#[cfg(target_os = "linux")]
use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(target_os = "linux")]
use landlock::RulesetCreated;
use rustix::process::{Resource, Rlimit};

#[cfg(target_os = "linux")]
use super::{Network, SHM_DIR};
use super::{ResourceLimits, Sandbox};
#[cfg(target_os = "linux")]
use crate::cgroup::JobCgroup;
#[cfg(target_os = "linux")]
use crate::confine::{self, Enforcement, LandlockReport, NoIpSockets};
use crate::error::ExecError;
#[cfg(target_os = "linux")]
use crate::places::user_tool_home;
#[cfg(target_os = "linux")]
use crate::spec::{ResolvedCommand, TrustedPath};

/// What [`prepare_unix`] turns into the child's setup between fork and exec.
pub(super) struct ChildSetup<'a> {
    pub(super) sandbox: &'a Sandbox,
    /// Its stdin is a terminal of its own, to become its controlling terminal.
    pub(super) terminal: bool,
    /// What only Linux's setup needs: the job's view and its channels.
    #[cfg(target_os = "linux")]
    pub(super) linux: LinuxSetup<'a>,
}

/// The part of [`ChildSetup`] only Linux uses.
#[cfg(target_os = "linux")]
pub(super) struct LinuxSetup<'a> {
    pub(super) cmd: &'a ResolvedCommand,
    pub(super) path: &'a TrustedPath,
    /// The working folder, checked and resolved.
    pub(super) cwd: &'a Path,
    /// The job's process marker ([`crate::kill`]), carried in `RLIMIT_RTTIME`.
    pub(super) marker: Option<u64>,
    pub(super) confinement: &'a LandlockReport,
    /// The job's end of its proxy channel (`registries` network).
    pub(super) proxy: Option<i32>,
    /// The job's end of its port keeper's channel (published ports).
    pub(super) ports: Option<i32>,
}

/// Prepares `command`'s child: everything is computed here, in the parent, and applied between
/// fork and exec.
pub(super) fn prepare_unix(command: &mut Command, setup: ChildSetup<'_>) -> Result<(), ExecError> {
    use std::os::unix::process::CommandExt;

    let mut plan = ChildPlan::prepare(&setup)?;
    let in_child = move || plan.in_child();
    // SAFETY: `pre_exec` runs the closure in the forked child, where only async-signal-safe work
    // is sound; `in_child` makes only such system calls, on data prepared above, and allocates
    // and locks nothing (see each of its steps).
    unsafe { command.pre_exec(in_child) };
    Ok(())
}

/// Everything the child's setup between fork and exec needs, prepared in the parent.
struct ChildPlan {
    /// The job's stdin is its own terminal, to become its controlling terminal.
    terminal: bool,
    /// The resource limits, each set as soft and hard limit alike.
    limits: Vec<(Resource, u64)>,
    #[cfg(target_os = "linux")]
    linux: LinuxPlan,
}

impl ChildPlan {
    /// In the parent: the resource limits, then (Linux) the job's cgroup, view and confinement.
    fn prepare(setup: &ChildSetup<'_>) -> Result<ChildPlan, ExecError> {
        let limits = file_limits(&setup.sandbox.limits);
        #[cfg(target_os = "linux")]
        let limits = limits.chain(process_limits(&setup.sandbox.limits, setup.linux.marker));
        Ok(ChildPlan {
            terminal: setup.terminal,
            limits: limits.collect(),
            #[cfg(target_os = "linux")]
            linux: LinuxPlan::prepare(setup.sandbox, &setup.linux)?,
        })
    }

    /// In the child, between fork and exec, in this order. Each step is async-signal-safe and
    /// allocates nothing (rustix's calls are the bare system calls).
    fn in_child(&mut self) -> io::Result<()> {
        default_signals();
        self.own_session()?;
        #[cfg(target_os = "linux")]
        self.linux.die_with_engine()?;
        #[cfg(target_os = "linux")]
        close_inherited_descriptors()?;
        self.set_limits()?;
        #[cfg(target_os = "linux")]
        self.linux.confine()?;
        Ok(())
    }

    /// A session and process group of its own (by which the job's tree is found and killed);
    /// with a terminal of its own, that terminal as the session's controlling terminal.
    fn own_session(&self) -> io::Result<()> {
        rustix::process::setsid()?;
        if self.terminal {
            // The new session's controlling terminal: the job's own, on its stdin. Its
            // programs (and the jail's init and outer process, which ignore it) are the
            // foreground group, so Ctrl-C on the terminal interrupts them.
            rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())?;
        }
        Ok(())
    }

    /// The resource limits, soft and hard alike: the job cannot raise them again.
    fn set_limits(&self) -> io::Result<()> {
        for &(resource, value) in &self.limits {
            let lim = Rlimit { current: Some(value), maximum: Some(value) };
            rustix::process::setrlimit(resource, lim)?;
        }
        Ok(())
    }
}

/// What Linux's child setup needs beyond the limits, prepared in the parent.
#[cfg(target_os = "linux")]
struct LinuxPlan {
    /// The engine's pid: the child checks it is still its parent once PDEATHSIG is set.
    parent: rustix::process::Pid,
    /// The job's cgroup (root's engine), entered before any privilege is dropped.
    cgroup: Option<JobCgroup>,
    /// The job's namespaces; `None` for the fallback.
    jail: Option<crate::jail::Jail>,
    /// Landlock's rules, taken once in the child (`restrict_self` consumes them).
    ruleset: Option<RulesetCreated>,
    /// How strictly Landlock must hold.
    required: Enforcement,
    /// The filter that leaves the job no IP socket.
    no_ip: Option<NoIpSockets>,
}

#[cfg(target_os = "linux")]
impl LinuxPlan {
    /// In the parent, in this order: the job's cgroup, its namespaces (when the kernel allows
    /// them), its Landlock rules, and its filter of IP sockets.
    fn prepare(sandbox: &Sandbox, setup: &LinuxSetup<'_>) -> Result<LinuxPlan, ExecError> {
        let required = sandbox.policy.required();
        let cgroup = job_cgroup(&sandbox.limits, setup.marker);
        let jail =
            if setup.confinement.namespaces { Some(linux_jail(sandbox, setup)?) } else { None };
        let ruleset = landlock_ruleset(sandbox, jail.is_some(), required)?;
        let no_ip = no_ip_filter(sandbox, jail.is_some())?;
        let parent = rustix::process::getpid();
        Ok(LinuxPlan { parent, cgroup, jail, ruleset, required, no_ip })
    }

    /// In the child: SIGKILL when the engine's spawner thread ends (see the module docs of
    /// `spawn`). The engine may have died between fork and this call: then nobody would kill
    /// the job, and it does not start.
    fn die_with_engine(&self) -> io::Result<()> {
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
        if rustix::process::getppid() != Some(self.parent) {
            return Err(rustix::io::Errno::SRCH.into());
        }
        Ok(())
    }

    /// In the child, the last steps before exec: into the job's cgroup, then into its
    /// namespaces (which drop every capability) or, without them, every capability dropped
    /// here; then Landlock and the IP filter ([`restrict`]).
    fn confine(&mut self) -> io::Result<()> {
        // Before any privilege is dropped: entering a cgroup takes root's.
        if let Some(cgroup) = &self.cgroup {
            crate::cgroup::enter(cgroup.procs_fd())?;
        }
        let (ruleset, required, no_ip) = (&mut self.ruleset, self.required, &self.no_ip);
        let mut lock_down = || restrict(ruleset.take(), required, no_ip.as_ref());
        match &self.jail {
            // SAFETY: this is the single-threaded child of the spawn's fork, which execs right
            // after, and `lock_down` makes only system calls (Landlock's, seccomp's).
            Some(jail) => unsafe { jail.enter(lock_down) },
            None => {
                crate::jail::drop_capabilities()?;
                lock_down()
            }
        }
    }
}

/// In the child: Landlock's rules (a status weaker than `required` fails the spawn), then the
/// filter that leaves the job no IP socket.
#[cfg(target_os = "linux")]
fn restrict(
    ruleset: Option<RulesetCreated>,
    required: Enforcement,
    no_ip: Option<&NoIpSockets>,
) -> io::Result<()> {
    if let Some(rs) = ruleset {
        confine::imp::apply(rs, required)?;
    }
    if let Some(filter) = no_ip {
        filter.apply()?;
    }
    Ok(())
}

/// In the child: only stdin, stdout and stderr reach the program. Whatever the engine itself
/// inherited without close-on-exec (a descriptor of the program that started it) is closed at
/// exec.
#[cfg(target_os = "linux")]
fn close_inherited_descriptors() -> io::Result<()> {
    // libc, because rustix has no `close_range`.
    // SAFETY: close_range takes integers only; with CLOSE_RANGE_CLOEXEC it marks descriptors
    // close-on-exec, and closes or frees nothing.
    let marked =
        unsafe { libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) };
    if marked != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `RLIMIT_CORE` at 0 and, when the sandbox sets one, `RLIMIT_FSIZE`: the largest file the job
/// may write.
fn file_limits(limits: &ResourceLimits) -> impl Iterator<Item = (Resource, u64)> {
    let fsize = limits.max_file_size.map(|size| (Resource::Fsize, size));
    std::iter::once((Resource::Core, 0)).chain(fsize)
}

/// Linux: `RLIMIT_NPROC` (per user: the processes the user runs now plus the job's allowance)
/// and the job's marker, carried in `RLIMIT_RTTIME` ([`crate::kill`]).
#[cfg(target_os = "linux")]
fn process_limits(
    limits: &ResourceLimits,
    marker: Option<u64>,
) -> impl Iterator<Item = (Resource, u64)> {
    let nproc =
        limits.max_new_processes.map(|extra| (Resource::Nproc, user_process_count() + extra));
    let marker = marker.map(|m| (Resource::Rttime, m));
    nproc.into_iter().chain(marker)
}

/// Root is exempt from `RLIMIT_NPROC`: a cgroup of the job's own holds the same cap (`None`
/// where none is made, see [`crate::cgroup`]).
#[cfg(target_os = "linux")]
fn job_cgroup(limits: &ResourceLimits, marker: Option<u64>) -> Option<JobCgroup> {
    match (limits.max_new_processes, marker) {
        (Some(max), Some(m)) => JobCgroup::create(m, max),
        _ => None,
    }
}

/// Landlock's rules: writes in the project and the job's folders; reads in the job's root (in
/// namespaces) or everywhere but the hidden folders and the credential stores (without them,
/// where TCP is also refused when the network is off). A ruleset the kernel cannot build fails
/// the spawn only when Landlock is required.
#[cfg(target_os = "linux")]
fn landlock_ruleset(
    sandbox: &Sandbox,
    in_jail: bool,
    required: Enforcement,
) -> Result<Option<RulesetCreated>, ExecError> {
    // `/tmp` and `/dev/shm` are these folders mounted elsewhere: Landlock sees them through
    // their mount, not beneath `state_dir`, so they are rules of their own.
    let (tmp, shm) = (sandbox.state_dir.join("tmp"), sandbox.state_dir.join(SHM_DIR));
    let writable =
        [sandbox.project_root.as_path(), sandbox.state_dir.as_path(), tmp.as_path(), shm.as_path()];
    // In namespaces the job's root holds only what it may read; without them, everything
    // but the hidden folders and the credential stores.
    let (readable, tcp_rules) = if in_jail {
        (vec![sandbox.jail_root()], false)
    } else {
        (
            confine::read_roots_with(&fallback_hidden(sandbox), &sandbox.exposure.granted),
            sandbox.network == Network::Off,
        )
    };
    match confine::imp::ruleset(&readable, &writable, tcp_rules) {
        Ok(rs) => Ok(Some(rs)),
        Err(e) if required == Enforcement::FullyEnforced => Err(e),
        Err(_) => Ok(None),
    }
}

/// Without a network namespace of its own, a job whose network is off gets no IP socket (a
/// seccomp filter); where the filter cannot be built, such a job does not start.
#[cfg(target_os = "linux")]
fn no_ip_filter(sandbox: &Sandbox, in_jail: bool) -> Result<Option<NoIpSockets>, ExecError> {
    match sandbox.network {
        Network::Off if !in_jail => NoIpSockets::new().map(Some).ok_or_else(|| {
            ExecError::Unconfinable(
                "network access cannot be turned off for commands on this processor \
                 architecture; turn the project's network on to run them"
                    .into(),
            )
        }),
        _ => Ok(None),
    }
}

/// Every ignored signal back to its default action. A signal the engine ignores stays ignored
/// across exec (handlers do not), and a program that starts with SIGINT ignored cannot be
/// interrupted: Python installs no KeyboardInterrupt, a shell cannot trap it. An engine started
/// in the background of a script, or by a launcher that ignores SIGINT or SIGHUP, would hand
/// that on. Only ignored ones are touched (the C library's own signals are left alone).
/// Async-signal-safe, between fork and exec.
fn default_signals() {
    #[cfg(target_os = "linux")]
    const LAST: i32 = 64;
    #[cfg(not(target_os = "linux"))]
    const LAST: i32 = 31;
    // libc, because rustix has no `sigaction` (only a raw one for C libraries, `runtime`).
    for sig in 1..=LAST {
        // SAFETY: `sigaction` is a plain C struct, for which all zeroes is a valid value.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: with no new action, sigaction only writes the current one into `old`, a value
        // on the stack; a signal number the C library reserves is refused with EINVAL.
        let got = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
        if got == 0 && old.sa_sigaction == libc::SIG_IGN {
            // SAFETY: as above, all zeroes is a valid `sigaction`.
            let mut dfl: libc::sigaction = unsafe { std::mem::zeroed() };
            dfl.sa_sigaction = libc::SIG_DFL;
            // SAFETY: sigaction reads the new action from `dfl`, on the stack, and writes no old
            // one (null); `sig` was just accepted by the call above.
            unsafe { libc::sigaction(sig, &dfl, std::ptr::null_mut()) };
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

/// The job's own view of the machine (see [`crate::jail`]), built from the folders resolved
/// now, right before the fork.
#[cfg(target_os = "linux")]
fn linux_jail(sandbox: &Sandbox, setup: &LinuxSetup<'_>) -> Result<crate::jail::Jail, ExecError> {
    let home = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    let mut path_dirs = setup.path.dirs().to_vec();
    if let Some(dir) = setup.cmd.program.parent() {
        path_dirs.push(dir.to_path_buf());
    }
    let project = std::fs::canonicalize(&sandbox.project_root)
        .map_err(|e| ExecError::os("resolving the project folder", e))?;
    let state = std::fs::canonicalize(&sandbox.state_dir)
        .map_err(|e| ExecError::os("resolving the job's private folders", e))?;
    let cargo_home = user_tool_home("CARGO_HOME", ".cargo").filter(|c| c.is_dir());
    let (covered, read_only) = shield_cover(sandbox, &project)?;
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
        proxy: setup.proxy,
        ports: setup.ports,
        cwd: setup.cwd,
    })
}

/// What the project's shield hides in the job's view (covered) and shows read-only, with the
/// project's grants: walked now, right before the fork, so it is what the shield hides as the
/// job starts. Nothing without a shield.
#[cfg(target_os = "linux")]
fn shield_cover(
    sandbox: &Sandbox,
    project: &Path,
) -> Result<(Vec<crate::cover::Covered>, Vec<PathBuf>), ExecError> {
    let Some(shield) = &sandbox.shield else { return Ok((Vec::new(), Vec::new())) };
    let cover = crate::cover::ShieldCover { shield, granted: &sandbox.exposure.granted };
    Ok((crate::cover::covered(project, cover)?, crate::cover::read_only(project, cover)))
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
