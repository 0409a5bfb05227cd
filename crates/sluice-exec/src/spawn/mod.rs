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
mod leader;
mod plan;
#[cfg(target_os = "linux")]
mod proxy;
#[cfg(unix)]
mod pty;
mod start;
#[cfg(unix)]
mod unix;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::confine::{Enforcement, LandlockReport};
use crate::egress::HostList;
use crate::error::ExecError;
use crate::kill::Tree;
use crate::spec::{ResolvedCommand, TrustedPath};

use env::create_private_dirs;
pub use env::{JobView, job_env};
#[cfg(unix)]
use grants::link_grants_in_home;
pub use leader::{Exit, Leader};
use plan::Plan;
#[cfg(unix)]
use start::{attach_input, engine_input};
use start::{job_command, start};
#[cfg(target_os = "linux")]
use start::{publish_ports, serve_registries};
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
    pub child: Leader,
    pub tree: Tree,
    /// The Landlock state the process runs under.
    pub confinement: LandlockReport,
    /// The engine's end of an interactive job's input.
    #[cfg(unix)]
    pub input: Option<SpawnedInput>,
    /// Its published ports, forwarded while it runs.
    pub ports: Option<Arc<crate::publish::Ports>>,
    /// Windows: its registries proxy, served while it runs.
    #[cfg(windows)]
    pub egress: Option<crate::egress::LoopbackProxy>,
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
///
/// The steps, in this order: the request is checked, the job's folders are made ready, its
/// confinement is decided (and what the host does not give refuses it), its command is built and
/// its child's setup prepared, the child is spawned, and the engine's ends are connected.
pub fn spawn_with(
    cmd: &ResolvedCommand,
    sandbox: &Sandbox,
    path: &TrustedPath,
    live: &Live,
) -> Result<Spawned, ExecError> {
    check_request(cmd, live)?;
    let cwd = working_dir(&sandbox.project_root, &cmd.cwd)?;
    prepare_folders(sandbox)?;
    let plan = Plan::decide(sandbox, live)?;
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut command = job_command(cmd, sandbox, path, &cwd, &plan)?;
    #[cfg(unix)]
    let terminal = attach_input(&mut command, live.interactive)?;
    let marker = crate::kill::imp::next_marker();
    #[cfg(unix)]
    prepare_unix(
        &mut command,
        ChildSetup {
            sandbox,
            terminal: live.interactive == Some(Interactive::Terminal),
            #[cfg(target_os = "linux")]
            linux: plan.linux_setup(cmd, path, &cwd, marker),
        },
    )?;
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut child = start(command, &cmd.program, sandbox, &plan)?;
    // The child holds the terminal's slave now: the engine keeps only the master.
    #[cfg(unix)]
    let input = engine_input(terminal, child.child().stdin.take())?;
    #[cfg(target_os = "linux")]
    serve_registries(child.child(), plan.proxy, plan.registries)?;
    #[cfg(target_os = "linux")]
    let ports = publish_ports(child.child(), plan.keeper, &live.publish, marker)?;
    #[cfg(not(target_os = "linux"))]
    let ports = None;
    let tree = Tree { leader: child.id(), marker };
    Ok(Spawned {
        child,
        tree,
        #[cfg(windows)]
        egress: plan.egress.map(|(egress, _)| egress),
        confinement: plan.confinement,
        #[cfg(unix)]
        input,
        ports,
    })
}

/// Refuses, before anything is made, what no sandbox can run: an interactive job on Windows, a
/// bad list of ports, a program not resolved to an absolute path.
fn check_request(cmd: &ResolvedCommand, live: &Live) -> Result<(), ExecError> {
    if cfg!(windows) && live.interactive.is_some() {
        return Err(ExecError::NotInteractive(
            "interactive jobs need Linux or macOS; start it without `interactive`".into(),
        ));
    }
    crate::publish::check_list(&live.publish)?;
    if !cmd.program.is_absolute() {
        return Err(ExecError::Invalid("the program must be resolved to an absolute path".into()));
    }
    Ok(())
}

/// The job's private folders (HOME, TMPDIR, caches…) made, or made real folders again, and on
/// Unix its granted stores linked from its HOME where tools look for them.
fn prepare_folders(sandbox: &Sandbox) -> Result<(), ExecError> {
    create_private_dirs(sandbox)?;
    #[cfg(unix)]
    link_grants_in_home(sandbox);
    Ok(())
}
