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
#[cfg(unix)]
use std::os::fd::OwnedFd;
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
    let mut child = start(command, &cmd.program)?;
    // The child holds the terminal's slave now: the engine keeps only the master.
    #[cfg(unix)]
    let input = engine_input(terminal, child.stdin.take())?;
    #[cfg(target_os = "linux")]
    serve_registries(&mut child, plan.proxy, plan.registries)?;
    #[cfg(target_os = "linux")]
    let ports = publish_ports(&mut child, plan.keeper, &live.publish, marker)?;
    #[cfg(not(target_os = "linux"))]
    let ports = None;
    let tree = Tree { leader: child.id(), marker };
    Ok(Spawned {
        child,
        tree,
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

/// How a job is confined, decided before its command is built: what the host enforces, and
/// what the job's network and ports need of it.
struct Plan {
    /// What the kernel enforces for this job (namespaces, Landlock).
    confinement: LandlockReport,
    /// The hosts of a `registries` network, served through the engine's proxy.
    registries: Option<Arc<HostList>>,
    /// The channel the job's proxy listener comes through (`registries` network).
    #[cfg(target_os = "linux")]
    proxy: Option<ProxyChannel>,
    /// The channel of the job's port keeper (published ports).
    #[cfg(target_os = "linux")]
    keeper: Option<ProxyChannel>,
    /// Where the job sees its private folders.
    private: PathBuf,
}

impl Plan {
    /// The job's confinement, and its refusals, in this order: a `registries` network needs
    /// namespaces (then its proxy channel is made); published ports need a network namespace of
    /// the job's own (then the port keeper's channel is made); a project that requires full
    /// confinement gets it; granted stores are reached through no link; and a job whose policy
    /// requires Landlock gets it fully.
    fn decide(sandbox: &Sandbox, live: &Live) -> Result<Plan, ExecError> {
        let confinement = confine::confinement(sandbox.network == Network::Off, sandbox.namespaces);
        let registries = registries(sandbox, &confinement)?;
        #[cfg(target_os = "linux")]
        let proxy = registries.as_ref().map(|_| ProxyChannel::new()).transpose()?;
        check_publish(&live.publish, sandbox, &confinement)?;
        #[cfg(target_os = "linux")]
        let keeper = (!live.publish.is_empty()).then(ProxyChannel::new).transpose()?;
        let private = private_folders(sandbox, &confinement);
        check_confinement(sandbox, &confinement)?;
        Ok(Plan {
            confinement,
            registries,
            #[cfg(target_os = "linux")]
            proxy,
            #[cfg(target_os = "linux")]
            keeper,
            private,
        })
    }

    /// What the child's setup on Linux takes from the plan: the confinement, and the job's ends
    /// of its channels.
    #[cfg(target_os = "linux")]
    fn linux_setup<'a>(
        &'a self,
        cmd: &'a ResolvedCommand,
        path: &'a TrustedPath,
        cwd: &'a Path,
        marker: Option<u64>,
    ) -> LinuxSetup<'a> {
        LinuxSetup {
            cmd,
            path,
            cwd,
            marker,
            confinement: &self.confinement,
            proxy: self.proxy.as_ref().map(|c| c.job.as_raw_fd()),
            ports: self.keeper.as_ref().map(|c| c.job.as_raw_fd()),
        }
    }
}

/// The hosts of a `registries` network: it needs the job in namespaces of its own, where its
/// only way out is the engine's proxy; without them the job is refused.
fn registries(
    sandbox: &Sandbox,
    confinement: &LandlockReport,
) -> Result<Option<Arc<HostList>>, ExecError> {
    match &sandbox.network {
        Network::Registries(hosts) if confinement.namespaces => Ok(Some(hosts.clone())),
        Network::Registries(_) => Err(ExecError::Unconfinable(format!(
            "this project's network is \"registries\", which needs jobs to run in \
             namespaces of their own, and here {}; turn the project's network off, or on",
            confinement.summary
        ))),
        _ => Ok(None),
    }
}

/// Published ports need the job in a network namespace of its own (Linux): with the network on
/// a job's server could not be told from the machine's other services.
fn check_publish(
    publish: &[u16],
    sandbox: &Sandbox,
    confinement: &LandlockReport,
) -> Result<(), ExecError> {
    if !publish.is_empty()
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
    Ok(())
}

/// Where the job sees its private folders: in namespaces at one fixed place, whatever the data
/// folder is; without them, where they are.
#[cfg(target_os = "linux")]
fn private_folders(sandbox: &Sandbox, confinement: &LandlockReport) -> PathBuf {
    if confinement.namespaces {
        PathBuf::from(crate::places::JOB_VIEW)
    } else {
        sandbox.state_dir.clone()
    }
}

/// Where the job sees its private folders: where they are (no namespaces here).
#[cfg(not(target_os = "linux"))]
fn private_folders(sandbox: &Sandbox, _: &LandlockReport) -> PathBuf {
    sandbox.state_dir.clone()
}

/// Refuses a job that would run less confined than it must: a project that requires every
/// layer, a granted store now reached through a link, a policy that requires Landlock fully.
fn check_confinement(sandbox: &Sandbox, confinement: &LandlockReport) -> Result<(), ExecError> {
    if sandbox.exposure.require_full && !confine::is_full(confinement) {
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
    Ok(())
}

/// The job's command: its program and arguments (on macOS under its Seatbelt profile), in its
/// working folder, with an environment built from nothing, stdin from `/dev/null` and its
/// output on pipes.
fn job_command(
    cmd: &ResolvedCommand,
    sandbox: &Sandbox,
    path: &TrustedPath,
    cwd: &Path,
    plan: &Plan,
) -> Result<Command, ExecError> {
    #[cfg(target_os = "macos")]
    let mut command = seatbelt_command(cmd, sandbox, &plan.confinement)?;
    #[cfg(not(target_os = "macos"))]
    let mut command = plain_command(cmd);
    let view =
        JobView { network_off: sandbox.network == Network::Off, proxy: plan.registries.is_some() };
    command
        .current_dir(cwd)
        .env_clear()
        .envs(job_env(cmd, &plan.private, path, view))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Ok(command)
}

/// `cmd`'s program with its arguments, as they are.
fn plain_command(cmd: &ResolvedCommand) -> Command {
    let mut command = Command::new(&cmd.program);
    command.args(cmd.args.iter());
    command
}

/// macOS: the program under `sandbox-exec` with the job's Seatbelt profile, when the kernel
/// enforces it; otherwise as it is.
#[cfg(target_os = "macos")]
fn seatbelt_command(
    cmd: &ResolvedCommand,
    sandbox: &Sandbox,
    confinement: &LandlockReport,
) -> Result<Command, ExecError> {
    if confinement.status != Enforcement::FullyEnforced {
        return Ok(plain_command(cmd));
    }
    let (program, args) = seatbelt_argv(cmd, sandbox)?;
    let mut command = Command::new(program);
    command.args(args.iter());
    Ok(command)
}

/// Unix: an interactive job's input. A pipe as its stdin; or a terminal of its own as its stdin,
/// stdout and stderr, whose master is returned for the engine to keep.
#[cfg(unix)]
fn attach_input(
    command: &mut Command,
    interactive: Option<Interactive>,
) -> Result<Option<OwnedFd>, ExecError> {
    match interactive {
        None => Ok(None),
        Some(Interactive::Pipe) => {
            command.stdin(Stdio::piped());
            Ok(None)
        }
        Some(Interactive::Terminal) => {
            let (master, slave) = pty::open()?;
            let dup = |fd: &OwnedFd| {
                fd.try_clone().map_err(|e| ExecError::os("opening the job's terminal", e))
            };
            command.stdin(Stdio::from(dup(&slave)?));
            command.stdout(Stdio::from(dup(&slave)?));
            command.stderr(Stdio::from(slave));
            Ok(Some(master))
        }
    }
}

/// Starts the child: forked on the long-lived spawner thread (see the module docs on
/// PDEATHSIG).
#[cfg(not(windows))]
fn start(command: Command, program: &Path) -> Result<Child, ExecError> {
    spawn_on_spawner_thread(command).map_err(|e| start_failed(program, e))
}

/// Starts the child in its own Job Object (kill on close), which the kill functions terminate.
#[cfg(windows)]
fn start(mut command: Command, program: &Path) -> Result<Child, ExecError> {
    let (child, job) =
        crate::winjob::spawn_in_job(&mut command).map_err(|e| start_failed(program, e))?;
    crate::kill::imp::adopt(child.id(), job);
    Ok(child)
}

/// Unix: the engine's end of an interactive job's input: its terminal's master, or the write
/// end of its stdin pipe made non-blocking.
#[cfg(unix)]
fn engine_input(
    terminal: Option<OwnedFd>,
    stdin: Option<std::process::ChildStdin>,
) -> Result<Option<SpawnedInput>, ExecError> {
    Ok(match (terminal, stdin) {
        (Some(master), _) => Some(SpawnedInput::Terminal(master)),
        (None, Some(stdin)) => {
            let fd = OwnedFd::from(stdin);
            pty::nonblocking(&fd)?;
            Some(SpawnedInput::Pipe(fd))
        }
        (None, None) => None,
    })
}

/// The job's side made its proxy listener before exec: take it and serve it until the job
/// ends. Without it the job would have no network at all: it is not started half-way, but
/// killed.
#[cfg(target_os = "linux")]
fn serve_registries(
    child: &mut Child,
    channel: Option<ProxyChannel>,
    registries: Option<Arc<HostList>>,
) -> Result<(), ExecError> {
    let (Some(channel), Some(hosts)) = (channel, registries) else { return Ok(()) };
    let served =
        channel.receive().and_then(|listener| crate::egress::serve(listener, child.id(), hosts));
    if let Err(e) = served {
        let _ = child.kill();
        let _ = child.wait();
        return Err(ExecError::os("starting the job's registries proxy", e));
    }
    Ok(())
}

/// The port keeper was forked beside the job: listen on the host's loopback for it. Ports
/// that cannot be published end the job's whole tree: nothing runs.
#[cfg(target_os = "linux")]
fn publish_ports(
    child: &mut Child,
    keeper: Option<ProxyChannel>,
    publish: &[u16],
    marker: Option<u64>,
) -> Result<Option<Arc<crate::publish::Ports>>, ExecError> {
    let Some(channel) = keeper else { return Ok(None) };
    let published = crate::publish::Keeper::new(channel.into_engine_end())
        .and_then(|k| crate::publish::forward(k, publish, child.id()));
    match published {
        Ok(ports) => Ok(Some(ports)),
        Err(e) => {
            crate::kill::kill_tree(&Tree { leader: child.id(), marker }, std::time::Duration::ZERO);
            let _ = child.wait();
            Err(ExecError::CannotPublish(format!(
                "the job's ports could not be published ({e}); nothing runs"
            )))
        }
    }
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
