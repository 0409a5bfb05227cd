//! How [`spawn_with`](super::spawn_with) starts the job: its command (under Seatbelt on
//! macOS), its input, the fork from the spawner thread, and what the engine serves it once it
//! runs (the registries proxy, published ports).

#[cfg(target_os = "macos")]
use std::ffi::OsString;
#[cfg(unix)]
use std::os::fd::OwnedFd;
use std::path::Path;
#[cfg(target_os = "macos")]
use std::path::PathBuf;
#[cfg(not(windows))]
use std::process::Child;
use std::process::{Command, Stdio};
#[cfg(target_os = "linux")]
use std::sync::Arc;
#[cfg(not(windows))]
use std::sync::mpsc;
#[cfg(not(windows))]
use std::sync::{Mutex, OnceLock};

use super::env::{JobView, job_env};
use super::leader::Leader;
use super::plan::Plan;
#[cfg(target_os = "linux")]
use super::proxy::ProxyChannel;
#[cfg(unix)]
use super::pty;
#[cfg(unix)]
use super::{Interactive, SpawnedInput};
use super::{Network, Sandbox};
#[cfg(target_os = "macos")]
use crate::confine::{Enforcement, LandlockReport};
#[cfg(target_os = "linux")]
use crate::egress::HostList;
use crate::error::ExecError;
#[cfg(target_os = "linux")]
use crate::kill::Tree;
use crate::spec::{ResolvedCommand, TrustedPath};

/// The job's command: its program and arguments (on macOS under its Seatbelt profile), in its
/// working folder, with an environment built from nothing, stdin from `/dev/null` and its
/// output on pipes.
pub(super) fn job_command(
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
    #[cfg(not(windows))]
    let proxy = plan.registries.as_ref().map(|_| crate::egress::PROXY_PORT);
    #[cfg(windows)]
    let proxy = plan.egress.as_ref().map(|(egress, _)| egress.port());
    let view = JobView { network_off: sandbox.network == Network::Off, proxy };
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
pub(super) fn attach_input(
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
pub(super) fn start(
    command: Command,
    program: &Path,
    _: &Sandbox,
    _: &Plan,
) -> Result<Leader, ExecError> {
    spawn_on_spawner_thread(command).map(Leader::Std).map_err(|e| start_failed(program, e))
}

/// Starts the child in its own Job Object (kill on close), which the kill functions terminate:
/// as the sandbox account when its setup holds (the confinement the plan reports says so),
/// else as the user.
#[cfg(windows)]
pub(super) fn start(
    mut command: Command,
    program: &Path,
    sandbox: &Sandbox,
    plan: &Plan,
) -> Result<Leader, ExecError> {
    if plan.confinement.status == crate::confine::Enforcement::FullyEnforced {
        let (process, job) = crate::winsandbox::spawn::start(&command, sandbox)?;
        // Its proxy serves the processes of this Job Object. Without that handle it could serve
        // nobody: the job ends (its Job Object's last handle closes) rather than run without.
        if let Some((_, slot)) = &plan.egress {
            let copy = job
                .try_clone()
                .map_err(|e| ExecError::os("showing the job's proxy which processes are its", e))?;
            let _ = slot.set(copy);
        }
        crate::kill::imp::adopt(process.pid, job);
        return Ok(Leader::Account(process));
    }
    let (child, job) =
        crate::winjob::spawn_in_job(&mut command).map_err(|e| start_failed(program, e))?;
    crate::kill::imp::adopt(child.id(), job);
    Ok(Leader::Std(child))
}

/// Unix: the engine's end of an interactive job's input: its terminal's master, or the write
/// end of its stdin pipe made non-blocking.
#[cfg(unix)]
pub(super) fn engine_input(
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
pub(super) fn serve_registries(
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
pub(super) fn publish_ports(
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
