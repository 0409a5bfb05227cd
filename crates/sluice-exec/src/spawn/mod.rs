//! Starting one confined process: `execve` of an absolute program with an argv — no shell — in
//! a folder inside the project, with an environment built from nothing, stdin from `/dev/null`
//! (an interactive job: a pipe, or a terminal of its own, `pty.rs`), its own session and process
//! group, resource limits, and (Linux) Landlock.
//!
//! Between fork and exec the child runs only async-signal-safe calls on data prepared in the
//! parent: `setsid`, `prctl(PR_SET_PDEATHSIG)`, `setrlimit`, and Landlock's `restrict_self` on a
//! ruleset built in the parent. Processes are forked from one long-lived spawner thread because
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked exits, not the process: forking from
//! a short-lived worker thread would kill jobs at random.

mod env;
mod grants;
#[cfg(target_os = "linux")]
mod proxy;
#[cfg(unix)]
mod pty;
#[cfg(unix)]
mod unix;

#[cfg(target_os = "macos")]
use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
#[cfg(not(windows))]
use std::sync::mpsc;
#[cfg(not(windows))]
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::confine::{self, Enforcement, LandlockReport};
use crate::egress::HostList;
use crate::error::ExecError;
use crate::kill::Tree;
use crate::spec::{ResolvedCommand, TrustedPath};

use env::create_private_dirs;
pub use env::{JobView, job_env};
use grants::check_grants;
#[cfg(unix)]
use grants::link_grants_in_home;
#[cfg(target_os = "linux")]
use proxy::ProxyChannel;
#[cfg(target_os = "linux")]
use unix::LinuxSetup;
#[cfg(unix)]
use unix::{ChildSetup, prepare_unix};

/// How a job takes input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interactive {
    /// Its stdin is a pipe; stdout and stderr stay separate pipes.
    Pipe,
    /// A pseudo-terminal of its own is its stdin, stdout and stderr (and its controlling
    /// terminal): for programs that check `isatty`, prompts, REPLs, debuggers. Its output is
    /// one stream, `stdout`, as a terminal shows it (echo included).
    Terminal,
}

impl Interactive {
    /// The stable kebab-case name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Interactive::Pipe => "pipe",
            Interactive::Terminal => "terminal",
        }
    }
}

/// Outbound network for a job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Network {
    Allowed,
    /// Only HTTPS to the hosts of the list (the package registries), through the engine's
    /// filtering proxy ([`crate::egress`]); nothing else leaves the job's network namespace.
    /// Needs namespaces (Linux); elsewhere such a job is refused.
    Registries(Arc<HostList>),
    /// No outbound TCP (Landlock ABI ≥ 4), and no IPv4 or IPv6 socket at all (a seccomp
    /// filter: UDP and DNS included). Unix sockets stay.
    #[default]
    Off,
}

/// How strictly Landlock must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxPolicy {
    /// Refuse to start unless every requested rule is enforced.
    #[default]
    Require,
    /// Start with whatever the kernel enforces; the spawn reports what that was.
    BestEffort,
}

/// Resource limits applied to the job's processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceLimits {
    /// `RLIMIT_FSIZE`: the largest file a job may write.
    pub max_file_size: Option<u64>,
    /// Extra processes the job may create beyond those the user already runs (`RLIMIT_NPROC`
    /// is per user, so the limit is the current count plus this). Not enforced for root.
    pub max_new_processes: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> ResourceLimits {
        ResourceLimits { max_file_size: Some(8 << 30), max_new_processes: Some(1024) }
    }
}

impl SandboxPolicy {
    /// How strictly Landlock must hold under this policy.
    fn required(self) -> Enforcement {
        match self {
            SandboxPolicy::Require => Enforcement::FullyEnforced,
            SandboxPolicy::BestEffort => Enforcement::NotEnforced,
        }
    }
}

/// Where and how a job runs.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// The project's physical root (canonical). Writable.
    pub project_root: PathBuf,
    /// The job's private folders (HOME, TMPDIR, caches) are created beneath it. Writable.
    pub state_dir: PathBuf,
    /// Folders the job may neither read nor write (Sluice's data folder), except the writable
    /// folders above that lie beneath them. See [`crate::confine`] for how and its limits.
    pub hidden: Vec<PathBuf>,
    pub network: Network,
    pub policy: SandboxPolicy,
    pub limits: ResourceLimits,
    /// Linux: run in namespaces ([`crate::jail`]) when the kernel allows it; off, or where it
    /// does not, Landlock and seccomp alone confine the job (see `sluice doctor`).
    pub namespaces: bool,
    /// The project's changes to the default view: stores hidden, un-hidden or granted, host
    /// sockets, whether every layer is required.
    pub exposure: Exposure,
    /// The project's sensitive-file shield, applied to the job's view with the project's grants
    /// ([`crate::cover`]); `None` shows the whole project (Sluice's own tests of the sandbox).
    pub shield: Option<sluice_guard::Shield>,
}

/// What a project's jobs see of the user's secrets and the host's sockets beyond the default
/// sandbox. Built by the engine from the project's settings, which only the human changes;
/// every path absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exposure {
    /// Hidden beside the default credential stores ([`crate::hide::credential_stores`]).
    pub hidden: Vec<PathBuf>,
    /// Default stores left visible where the sandbox would otherwise show them.
    pub unhidden: Vec<PathBuf>,
    /// Stores visible read-only: in namespaces bound into the job's view at their real path
    /// (and linked from the job's HOME when beneath the user's home, where tools look), without
    /// namespaces left out of the hidden folders. A path with a link in it is refused: the job
    /// does not start.
    pub granted: Vec<PathBuf>,
    /// Host Unix sockets the job may connect to; in namespaces bound into its view at the path
    /// named here (and at the socket's real path). Without namespaces every socket by path is
    /// reachable anyway (see docs/SANDBOX.md).
    pub sockets: Vec<PathBuf>,
    /// The job starts only when every layer holds (Linux: namespaces and Landlock; macOS:
    /// Seatbelt); under the fallback it is refused.
    pub require_full: bool,
}

impl Sandbox {
    /// Where the job's root is assembled (Linux namespaces): beside `state_dir`, not beneath
    /// it, so the job cannot write there (Landlock grants writes beneath `state_dir`).
    pub fn jail_root(&self) -> PathBuf {
        let mut name = self.state_dir.file_name().unwrap_or_default().to_os_string();
        name.push(".root");
        self.state_dir.with_file_name(name)
    }

    /// The empty file a covered project file shows in the job's view (Linux namespaces): beside
    /// `state_dir` like [`Sandbox::jail_root`], out of every job's reach.
    pub fn empty_file(&self) -> PathBuf {
        let mut name = self.state_dir.file_name().unwrap_or_default().to_os_string();
        name.push(".empty");
        self.state_dir.with_file_name(name)
    }
}

/// A started process.
#[derive(Debug)]
pub struct Spawned {
    pub child: Child,
    pub tree: Tree,
    /// The Landlock state the process runs under.
    pub confinement: LandlockReport,
    /// The engine's end of an interactive job's input.
    #[cfg(unix)]
    pub input: Option<SpawnedInput>,
    /// Its published ports, forwarded while it runs.
    pub ports: Option<Arc<crate::publish::Ports>>,
}

/// The engine's end of an interactive job's input ([`spawn_with`]).
#[cfg(unix)]
#[derive(Debug)]
pub enum SpawnedInput {
    /// The write end of the job's stdin pipe, non-blocking.
    Pipe(std::os::fd::OwnedFd),
    /// The master of the job's terminal, non-blocking: input is written to it and the job's
    /// output read from it (the child's stdout and stderr pipes are then absent).
    Terminal(std::os::fd::OwnedFd),
}

/// Checks the working directory: a folder, really inside the project (links resolved).
fn working_dir(root: &Path, cwd: &str) -> Result<PathBuf, ExecError> {
    let bad =
        || ExecError::Invalid(format!("working directory {cwd:?} is not a folder in the project"));
    let joined = if cwd.is_empty() { root.to_path_buf() } else { root.join(cwd) };
    let real = std::fs::canonicalize(&joined).map_err(|_| bad())?;
    let root = std::fs::canonicalize(root).map_err(|_| bad())?;
    if !real.starts_with(&root) || !real.is_dir() {
        return Err(bad());
    }
    Ok(real)
}

/// The job's `/dev/shm`, beneath `state_dir`.
const SHM_DIR: &str = "shm";

/// Spawns `cmd` in `sandbox`. The program must already be resolved (absolute).
pub fn spawn(
    cmd: &ResolvedCommand,
    sandbox: &Sandbox,
    path: &TrustedPath,
) -> Result<Spawned, ExecError> {
    spawn_with(cmd, sandbox, path, &Live::default())
}

/// What a live job has beyond a plain one ([`spawn_with`]).
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// Its stdin a pipe, or a terminal of its own (Unix only).
    pub interactive: Option<Interactive>,
    /// Ports its program listens on, forwarded from the host's loopback ([`crate::publish`];
    /// Linux, in a network namespace of its own).
    pub publish: Vec<u16>,
}

/// [`spawn`], with the input and the published ports `live` asks for; the same sandbox.
pub fn spawn_with(
    cmd: &ResolvedCommand,
    sandbox: &Sandbox,
    path: &TrustedPath,
    live: &Live,
) -> Result<Spawned, ExecError> {
    let interactive = live.interactive;
    if cfg!(windows) && interactive.is_some() {
        return Err(ExecError::NotInteractive(
            "interactive jobs need Linux or macOS; start it without `interactive`".into(),
        ));
    }
    crate::publish::check_list(&live.publish)?;
    if !cmd.program.is_absolute() {
        return Err(ExecError::Invalid("the program must be resolved to an absolute path".into()));
    }
    let cwd = working_dir(&sandbox.project_root, &cmd.cwd)?;
    create_private_dirs(sandbox)?;
    #[cfg(unix)]
    link_grants_in_home(sandbox);
    let confinement = confine::confinement(sandbox.network == Network::Off, sandbox.namespaces);
    let registries = match &sandbox.network {
        Network::Registries(hosts) if confinement.namespaces => Some(hosts.clone()),
        Network::Registries(_) => {
            return Err(ExecError::Unconfinable(format!(
                "this project's network is \"registries\", which needs jobs to run in \
                 namespaces of their own, and here {}; turn the project's network off, or on",
                confinement.summary
            )));
        }
        _ => None,
    };
    #[cfg(target_os = "linux")]
    let channel = match registries {
        Some(_) => Some(ProxyChannel::new()?),
        None => None,
    };
    if !live.publish.is_empty()
        && (!cfg!(target_os = "linux")
            || !confinement.namespaces
            || sandbox.network == Network::Allowed)
    {
        return Err(ExecError::CannotPublish(if sandbox.network == Network::Allowed {
            "this project's network is on, so its jobs share the machine's network and Sluice \
             cannot tell a job's server from the machine's other services; to publish ports, \
             set the project's network to off or registries (a server needs neither)"
                .into()
        } else {
            format!(
                "publishing ports needs jobs in a network namespace of their own (Linux), \
                 and here {}",
                confinement.summary
            )
        }));
    }
    #[cfg(target_os = "linux")]
    let keeper = match live.publish.is_empty() {
        true => None,
        false => Some(ProxyChannel::new()?),
    };
    // In namespaces the private folders are at one fixed place, whatever the data folder is.
    #[cfg(target_os = "linux")]
    let private = if confinement.namespaces {
        PathBuf::from(crate::places::JOB_VIEW)
    } else {
        sandbox.state_dir.clone()
    };
    #[cfg(not(target_os = "linux"))]
    let private = sandbox.state_dir.clone();
    if sandbox.exposure.require_full && !confine::is_full(&confinement) {
        return Err(ExecError::ConfinementUnavailable(format!(
            "this project requires full confinement for its commands, but {}; nothing ran. \
             Only the user can change this project's sandbox settings in Sluice.",
            confinement.summary
        )));
    }
    check_grants(&sandbox.exposure.granted)?;
    if sandbox.policy.required() == Enforcement::FullyEnforced
        && confinement.status != Enforcement::FullyEnforced
    {
        return Err(ExecError::Unconfinable(format!(
            "this job requires full confinement, but {}",
            confinement.summary
        )));
    }

    // macOS: the job runs under `sandbox-exec` with its Seatbelt profile.
    #[cfg(target_os = "macos")]
    let (program, args) = if confinement.status == Enforcement::FullyEnforced {
        seatbelt_argv(cmd, sandbox)?
    } else {
        (cmd.program.clone(), cmd.args.iter().map(OsString::from).collect())
    };
    #[cfg(not(target_os = "macos"))]
    let (program, args) = (&cmd.program, &cmd.args);
    let mut command = Command::new(program);
    command
        .args(args.iter())
        .current_dir(&cwd)
        .env_clear()
        .envs(job_env(
            cmd,
            &private,
            path,
            JobView { network_off: sandbox.network == Network::Off, proxy: registries.is_some() },
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    let mut terminal = None;
    #[cfg(unix)]
    match interactive {
        None => {}
        Some(Interactive::Pipe) => {
            command.stdin(Stdio::piped());
        }
        Some(Interactive::Terminal) => {
            let (master, slave) = pty::open()?;
            let dup = |fd: &std::os::fd::OwnedFd| {
                fd.try_clone().map_err(|e| ExecError::os("opening the job's terminal", e))
            };
            command.stdin(Stdio::from(dup(&slave)?));
            command.stdout(Stdio::from(dup(&slave)?));
            command.stderr(Stdio::from(slave));
            terminal = Some(master);
        }
    }
    let marker = crate::kill::imp::next_marker();
    #[cfg(unix)]
    prepare_unix(
        &mut command,
        ChildSetup {
            sandbox,
            terminal: interactive == Some(Interactive::Terminal),
            #[cfg(target_os = "linux")]
            linux: LinuxSetup {
                cmd,
                path,
                cwd: &cwd,
                marker,
                confinement: &confinement,
                proxy: channel.as_ref().map(|c| c.job.as_raw_fd()),
                ports: keeper.as_ref().map(|c| c.job.as_raw_fd()),
            },
        },
    )?;
    #[cfg(not(windows))]
    #[allow(unused_mut)]
    let mut child = spawn_on_spawner_thread(command).map_err(|e| start_failed(&cmd.program, e))?;
    // The child holds the terminal's slave now: the engine keeps only the master.
    #[cfg(unix)]
    let input = match (terminal, child.stdin.take()) {
        (Some(master), _) => Some(SpawnedInput::Terminal(master)),
        (None, Some(stdin)) => {
            let fd = std::os::fd::OwnedFd::from(stdin);
            pty::nonblocking(&fd)?;
            Some(SpawnedInput::Pipe(fd))
        }
        (None, None) => None,
    };
    // The job's side made its proxy listener before exec: take it and serve it until the job
    // ends. Without it the job would have no network at all: it is not started half-way.
    #[cfg(target_os = "linux")]
    if let (Some(channel), Some(hosts)) = (channel, registries) {
        let served = channel
            .receive()
            .and_then(|listener| crate::egress::serve(listener, child.id(), hosts));
        if let Err(e) = served {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ExecError::os("starting the job's registries proxy", e));
        }
    }
    // The port keeper was forked beside the job: listen on the host's loopback for it.
    #[cfg(target_os = "linux")]
    let ports = match keeper {
        Some(channel) => {
            let published = crate::publish::Keeper::new(channel.into_engine_end())
                .and_then(|k| crate::publish::forward(k, &live.publish, child.id()));
            match published {
                Ok(ports) => Some(ports),
                Err(e) => {
                    crate::kill::kill_tree(
                        &Tree { leader: child.id(), marker },
                        std::time::Duration::ZERO,
                    );
                    let _ = child.wait();
                    return Err(ExecError::CannotPublish(format!(
                        "the job's ports could not be published ({e}); nothing runs"
                    )));
                }
            }
        }
        None => None,
    };
    #[cfg(not(target_os = "linux"))]
    let ports = None;
    // Windows: in its own Job Object (kill on close), which the kill functions terminate.
    #[cfg(windows)]
    let child = {
        let mut command = command;
        let (child, job) =
            crate::winjob::spawn_in_job(&mut command).map_err(|e| start_failed(&cmd.program, e))?;
        crate::kill::imp::adopt(child.id(), job);
        child
    };
    let tree = Tree { leader: child.id(), marker };
    #[cfg(unix)]
    return Ok(Spawned { child, tree, confinement, input, ports });
    #[cfg(not(unix))]
    Ok(Spawned { child, tree, confinement, ports })
}

/// The `sandbox-exec` argv that runs `cmd` under its Seatbelt profile: writes only in the
/// project and the job's folders, Sluice's data folder hidden, network per the sandbox.
/// Seatbelt matches resolved paths, so every folder is canonicalized first.
#[cfg(target_os = "macos")]
fn seatbelt_argv(
    cmd: &ResolvedCommand,
    sandbox: &Sandbox,
) -> Result<(PathBuf, Vec<OsString>), ExecError> {
    let canonical = |p: &Path| {
        std::fs::canonicalize(p).map_err(|e| ExecError::os("resolving a folder of the sandbox", e))
    };
    let writable = [canonical(&sandbox.project_root)?, canonical(&sandbox.state_dir)?];
    // Sluice's data folder and every credential store there is (the same list as on Linux);
    // the profile allows the job's own folders again, also where they lie beneath one.
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let stores = crate::hide::effective_stores(home.as_deref(), &sandbox.exposure);
    let hidden: Vec<PathBuf> = sandbox
        .hidden
        .iter()
        .chain(&stores)
        .filter_map(|h| std::fs::canonicalize(h).ok())
        .collect();
    let granted: Vec<PathBuf> =
        sandbox.exposure.granted.iter().filter_map(|h| std::fs::canonicalize(h).ok()).collect();
    let sockets: Vec<PathBuf> =
        sandbox.exposure.sockets.iter().filter_map(|h| std::fs::canonicalize(h).ok()).collect();
    // What the shield hides in the project, with the grants as the cover sees them (owned).
    let (covered, read_only) = match &sandbox.shield {
        Some(shield) => {
            let project = &writable[0];
            let cover = crate::cover::ShieldCover { shield, granted: &granted };
            (crate::cover::covered(project, cover)?, crate::cover::read_only(project, cover))
        }
        None => (Vec::new(), Vec::new()),
    };
    fn refs(v: &[PathBuf]) -> Vec<&Path> {
        v.iter().map(PathBuf::as_path).collect()
    }
    let (writable, hidden) = (refs(&writable), refs(&hidden));
    let (granted, sockets) = (refs(&granted), refs(&sockets));
    let read_only = refs(&read_only);
    let profile = crate::seatbelt::profile_with(&crate::seatbelt::Profile {
        writable: &writable,
        hidden: &hidden,
        granted: &granted,
        sockets: &sockets,
        covered: &covered,
        read_only: &read_only,
        network_off: sandbox.network == Network::Off,
    })?;
    let args: Vec<OsString> = cmd.args.iter().map(OsString::from).collect();
    crate::seatbelt::command_line(&profile, &cmd.program, &args)
}

/// A program that cannot be started, in the assistant's terms: one that is missing or hidden
/// inside the job's view is `not_found` with the reason, not an internal error. Only the
/// program's file name is named (messages never carry physical paths).
fn start_failed(program: &Path, e: std::io::Error) -> ExecError {
    let name = program.file_name().unwrap_or_default().to_string_lossy();
    match e.kind() {
        std::io::ErrorKind::NotFound => ExecError::NotFound(format!(
            "`{name}` could not be started: it, or the interpreter its first line names, is not \
             visible inside the job's sandbox (a version manager's shim that lives outside the \
             sandbox is a common cause); nothing ran"
        )),
        std::io::ErrorKind::PermissionDenied => ExecError::Refused(format!(
            "`{name}` could not be started: the job's sandbox does not let it run; nothing ran"
        )),
        _ => ExecError::os("starting the program", e),
    }
}

/// Windows starts each job in a Job Object instead (`winjob`), on the caller's thread.
#[cfg(not(windows))]
type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Forks on a thread that lives as long as the process (see the module docs on PDEATHSIG).
#[cfg(not(windows))]
fn spawn_on_spawner_thread(command: Command) -> std::io::Result<Child> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        let started = std::thread::Builder::new().name("sluice-spawner".into()).spawn(move || {
            for (mut command, reply) in rx {
                let _ = reply.send(command.spawn());
            }
        });
        if started.is_err() {
            // The receiver is gone with the failed thread: every request reports an error.
        }
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    let sent = match sender.lock() {
        Ok(s) => s.send((command, reply_tx)),
        Err(poisoned) => poisoned.into_inner().send((command, reply_tx)),
    };
    if sent.is_err() {
        return Err(std::io::Error::other("the spawner thread is not running"));
    }
    reply_rx.recv().unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread stopped")))
}
