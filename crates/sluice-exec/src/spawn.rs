//! Starting one confined process: `execve` of an absolute program with an argv — no shell — in
//! a folder inside the project, with an environment built from nothing, stdin from `/dev/null`,
//! its own session and process group, resource limits, and (Linux) Landlock.
//!
//! Between fork and exec the child runs only async-signal-safe calls on data prepared in the
//! parent: `setsid`, `prctl(PR_SET_PDEATHSIG)`, `setrlimit`, and Landlock's `restrict_self` on a
//! ruleset built in the parent. Processes are forked from one long-lived spawner thread because
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked exits, not the process: forking from
//! a short-lived worker thread would kill jobs at random.

use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
#[cfg(not(windows))]
use std::sync::mpsc;
#[cfg(not(windows))]
use std::sync::{Mutex, OnceLock};

use crate::confine::{self, Enforcement, LandlockReport};
use crate::egress::{HostList, PROXY_PORT};
use crate::error::ExecError;
use crate::kill::Tree;
use crate::spec::{ResolvedCommand, TrustedPath};

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
}

/// A started process.
#[derive(Debug)]
pub struct Spawned {
    pub child: Child,
    pub tree: Tree,
    /// The Landlock state the process runs under.
    pub confinement: LandlockReport,
}

/// Substrings that disqualify an environment variable name, whatever put it there.
const DENIED_ENV: &[&str] =
    &["TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"];
const DENIED_ENV_PREFIXES: &[&str] = &["AWS_", "SLUICE_", "AZURE_", "GOOGLE_", "GCP_", "GH_"];

pub(crate) fn env_name_denied(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    DENIED_ENV.iter().any(|d| upper.contains(d))
        || DENIED_ENV_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// What a job's environment depends on besides the command.
#[derive(Debug, Clone, Copy, Default)]
pub struct JobView {
    pub network_off: bool,
    /// The job reaches the network only through the proxy on `127.0.0.1:`[`PROXY_PORT`].
    pub proxy: bool,
}

/// The private folders of a job under `state_dir`: `(variable, sub-folder)`.
const PRIVATE_DIRS: &[(&str, &str)] = &[
    ("HOME", "home"),
    ("TMPDIR", "tmp"),
    ("TMP", "tmp"),
    ("TEMP", "tmp"),
    ("XDG_CACHE_HOME", "cache"),
    ("XDG_CONFIG_HOME", "config"),
    ("XDG_DATA_HOME", "data"),
    ("XDG_STATE_HOME", "state"),
    ("CARGO_HOME", "cargo"),
    ("GOPATH", "go"),
];

/// The complete environment of a job: nothing inherited except the locale and where rustup
/// keeps its toolchains (read-only for the job), then the command's vetted additions. The
/// private folders are named as the job sees them: beneath `private` (the sandbox's
/// `state_dir`, or where the namespaces show it).
pub fn job_env(
    cmd: &ResolvedCommand,
    private: &Path,
    path: &TrustedPath,
    view: JobView,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), path.joined()),
        ("TERM".into(), "dumb".into()),
        ("NO_COLOR".into(), "1".into()),
        ("CARGO_TERM_COLOR".into(), "never".into()),
    ];
    for (var, sub) in PRIVATE_DIRS {
        env.push(((*var).into(), private.join(sub).into_os_string()));
    }
    let mut has_lang = false;
    for (name, value) in std::env::vars_os() {
        let Some(n) = name.to_str() else { continue };
        if n == "LANG"
            || n == "LANGUAGE"
            || (n.starts_with("LC_") && n[3..].bytes().all(|b| b.is_ascii_uppercase()))
        {
            has_lang |= n == "LANG";
            env.push((name, value));
        }
    }
    if !has_lang {
        env.push(("LANG".into(), "C.UTF-8".into()));
    }
    // rustup's proxies (`cargo` in ~/.cargo/bin) find toolchains through RUSTUP_HOME; with a
    // private HOME they would look in the wrong place. (CARGO_HOME stays the private one: in
    // namespaces it is the user's cargo home, copy-on-write — see `jail::JailSpec`.)
    if let Some(home) = user_tool_home("RUSTUP_HOME", ".rustup") {
        env.push(("RUSTUP_HOME".into(), home.into_os_string()));
    }
    if let Some(tc) = std::env::var_os("RUSTUP_TOOLCHAIN") {
        env.push(("RUSTUP_TOOLCHAIN".into(), tc));
    }
    // Without a network, package managers are told so: they use what is cached and fail at
    // once instead of retrying a registry they cannot reach.
    if view.network_off {
        env.push(("CARGO_NET_OFFLINE".into(), "true".into()));
        env.push(("npm_config_offline".into(), "true".into()));
    }
    // Through the proxy: the variables curl, cargo, npm, pip, go and git read; the JVM's own
    // properties for Maven and Gradle. Loopback stays direct (a test server in the job).
    if view.proxy {
        let url = format!("http://127.0.0.1:{PROXY_PORT}");
        for var in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"] {
            env.push((var.into(), url.clone().into()));
        }
        for var in ["NO_PROXY", "no_proxy"] {
            env.push((var.into(), "localhost,127.0.0.1,::1".into()));
        }
        let java = format!(
            "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort={PROXY_PORT} \
             -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={PROXY_PORT} \
             -Dhttp.nonProxyHosts=localhost|127.0.0.1"
        );
        env.push(("JAVA_TOOL_OPTIONS".into(), java.into()));
    }
    for (k, v) in &cmd.env {
        env.retain(|(n, _)| n != k.as_str());
        env.push((k.into(), v.into()));
    }
    env.retain(|(n, _)| !n.to_str().is_none_or(env_name_denied));
    env
}

/// A toolchain home of the user's: `$var` when set to an absolute path, else `~/default` when
/// that is a folder.
pub(crate) fn user_tool_home(var: &str, default: &str) -> Option<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| {
        std::env::var_os("HOME").map(|h| Path::new(&h).join(default)).filter(|p| p.is_dir())
    })
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

fn create_private_dirs(sandbox: &Sandbox) -> Result<(), ExecError> {
    let subs = PRIVATE_DIRS.iter().map(|(_, sub)| sandbox.state_dir.join(sub));
    let extra = [sandbox.state_dir.join(SHM_DIR), sandbox.jail_root()];
    for dir in subs.chain(extra) {
        // A job may have replaced one of its folders with a link (to plant a mount source for
        // the next job): a private folder is a real folder, or it is made one again.
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(&dir)
                .map_err(|e| ExecError::os("replacing a job's private folder", e))?;
        }
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(&dir).map_err(|e| ExecError::os("creating the job's private folders", e))?;
    }
    Ok(())
}

/// The job's `/dev/shm`, beneath `state_dir`.
const SHM_DIR: &str = "shm";

/// Spawns `cmd` in `sandbox`. The program must already be resolved (absolute).
pub fn spawn(
    cmd: &ResolvedCommand,
    sandbox: &Sandbox,
    path: &TrustedPath,
) -> Result<Spawned, ExecError> {
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
    // In namespaces the private folders are at one fixed place, whatever the data folder is.
    #[cfg(target_os = "linux")]
    let private = if confinement.namespaces {
        PathBuf::from(crate::jail::JOB_VIEW)
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
    let required = match sandbox.policy {
        SandboxPolicy::Require => Enforcement::FullyEnforced,
        SandboxPolicy::BestEffort => Enforcement::NotEnforced,
    };
    if required == Enforcement::FullyEnforced && confinement.status != Enforcement::FullyEnforced {
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
    let marker = crate::kill::imp::next_marker();
    #[cfg(target_os = "linux")]
    let proxy = channel.as_ref().map(|c| c.job.as_raw_fd());
    #[cfg(all(unix, not(target_os = "linux")))]
    let proxy = None;
    #[cfg(unix)]
    prepare_unix(
        &mut command,
        ChildSetup {
            cmd,
            sandbox,
            path,
            cwd: &cwd,
            marker,
            required,
            confinement: &confinement,
            proxy,
        },
    )?;
    #[cfg(not(windows))]
    #[allow(unused_mut)]
    let mut child = spawn_on_spawner_thread(command).map_err(|e| start_failed(&cmd.program, e))?;
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
    Ok(Spawned { child, tree, confinement })
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
    fn refs(v: &[PathBuf]) -> Vec<&Path> {
        v.iter().map(PathBuf::as_path).collect()
    }
    let (writable, hidden) = (refs(&writable), refs(&hidden));
    let (granted, sockets) = (refs(&granted), refs(&sockets));
    let profile = crate::seatbelt::profile_with(&crate::seatbelt::Profile {
        writable: &writable,
        hidden: &hidden,
        granted: &granted,
        sockets: &sockets,
        network_off: sandbox.network == Network::Off,
    })?;
    let args: Vec<OsString> = cmd.args.iter().map(OsString::from).collect();
    crate::seatbelt::command_line(&profile, &cmd.program, &args)
}

/// What [`prepare_unix`] turns into the child's setup between fork and exec.
#[cfg(unix)]
struct ChildSetup<'a> {
    cmd: &'a ResolvedCommand,
    sandbox: &'a Sandbox,
    path: &'a TrustedPath,
    /// The working folder, checked and resolved.
    cwd: &'a Path,
    /// The job's process marker ([`crate::kill`]), carried in `RLIMIT_RTTIME` on Linux.
    marker: Option<u64>,
    /// Whether Landlock must be fully enforced, or the job may start with less.
    required: Enforcement,
    confinement: &'a LandlockReport,
    /// The job's end of its proxy channel (Linux, `registries` network).
    proxy: Option<i32>,
}

/// Prepares `command`'s child: resource limits, and on Linux its namespaces or the fallback
/// (Landlock, seccomp, no capabilities), all computed here in the parent.
#[cfg(unix)]
fn prepare_unix(command: &mut Command, setup: ChildSetup<'_>) -> Result<(), ExecError> {
    use std::os::unix::process::CommandExt;

    let ChildSetup { cmd, sandbox, path, cwd, marker, required, confinement, proxy } = setup;

    // Everything the child needs is computed here, in the parent.
    use rustix::process::Resource;
    let mut limits = vec![(Resource::Core, 0)];
    if let Some(size) = sandbox.limits.max_file_size {
        limits.push((Resource::Fsize, size));
    }
    #[cfg(target_os = "linux")]
    {
        if let Some(extra) = sandbox.limits.max_new_processes {
            limits.push((Resource::Nproc, user_process_count() + extra));
        }
        if let Some(m) = marker {
            limits.push((Resource::Rttime, m));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (marker, cmd, path, cwd, confinement, proxy);

    #[cfg(target_os = "linux")]
    let jail = if confinement.namespaces {
        Some(linux_jail(cmd, sandbox, path, cwd, proxy)?)
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
        rustix::process::setsid()?;
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
                Some(jail) => jail.enter(confine)?,
                None => {
                    // SAFETY: prctl and capset on stack values.
                    unsafe { crate::jail::drop_capabilities()? };
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
    proxy: Option<i32>,
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
    crate::jail::Jail::new(&crate::jail::JailSpec {
        root: &sandbox.jail_root(),
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
        cargo_home: cargo_home.as_deref(),
        own_network: sandbox.network != Network::Allowed,
        proxy,
        cwd,
    })
}

/// The socket pair over which a job's proxy listener comes from its network namespace
/// ([`crate::jail`] sends it before exec; both ends are close-on-exec).
#[cfg(target_os = "linux")]
struct ProxyChannel {
    engine: OwnedFd,
    job: OwnedFd,
}

#[cfg(target_os = "linux")]
impl ProxyChannel {
    fn new() -> Result<ProxyChannel, ExecError> {
        let mut fds = [0; 2];
        // SAFETY: socketpair fills two descriptors, owned below.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(ExecError::os(
                "preparing the job's proxy",
                std::io::Error::last_os_error(),
            ));
        }
        // SAFETY: both were just created and are owned only here.
        let (engine, job) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(ProxyChannel { engine, job })
    }

    /// The listener the job's side sent before its exec (so it is there once spawn returned).
    fn receive(self) -> std::io::Result<OwnedFd> {
        drop(self.job);
        let mut control = [0u64; 4];
        let mut byte = 0u8;
        let mut iov = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
        // SAFETY: recvmsg into buffers on the stack; a received descriptor is checked and owned.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            let flags = libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC;
            if libc::recvmsg(self.engine.as_raw_fd(), &mut msg, flags) != 1 {
                return Err(std::io::Error::other("the job sent no proxy listener"));
            }
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
                || (*cmsg).cmsg_len as usize != libc::CMSG_LEN(4) as usize
            {
                return Err(std::io::Error::other("the job sent no proxy listener"));
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>());
            Ok(OwnedFd::from_raw_fd(fd))
        }
    }
}

/// A granted store must be reached through no link at all: one that appeared since the grant
/// (planted by whoever can write along its path) could point anywhere, so the job does not
/// start. A store that is gone is simply absent from the job's view.
fn check_grants(granted: &[PathBuf]) -> Result<(), ExecError> {
    for g in granted {
        if std::fs::symlink_metadata(g).is_err() {
            continue;
        }
        if std::fs::canonicalize(g).ok().as_deref() != Some(g.as_path()) {
            return Err(ExecError::Refused(
                "a store granted to this project is now reached through a symbolic link, which \
                 could point at another file; nothing ran. The user can review the project's \
                 grants in Sluice."
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Links each granted store beneath the user's home from the job's private HOME
/// (`$HOME/.npmrc -> /home/u/.npmrc`), where tools look for it; the store itself is visible
/// at its real path (bound there in namespaces). Best effort: the job's HOME is the job's, so
/// whatever it planted there is replaced, through `*at` calls that follow no link.
#[cfg(unix)]
fn link_grants_in_home(sandbox: &Sandbox) {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute()) else {
        return;
    };
    let job_home = sandbox.state_dir.join("home");
    for g in &sandbox.exposure.granted {
        let Ok(rel) = g.strip_prefix(&home) else { continue };
        if rel.as_os_str().is_empty() || std::fs::symlink_metadata(g).is_err() {
            continue;
        }
        let _ = link_beneath(&job_home, rel, g);
    }
}

/// Creates `dir/rel` as a symlink to `target`, making the folders along `rel` (never following
/// a link) and replacing a file or link already there.
#[cfg(unix)]
fn link_beneath(dir: &Path, rel: &Path, target: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &std::ffi::OsStr| {
        CString::new(p.as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
    };
    let names: Vec<CString> = rel
        .components()
        .map(|part| match part {
            std::path::Component::Normal(n) => c(n),
            _ => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
        })
        .collect::<Result<_, _>>()?;
    let Some((last, parents)) = names.split_last() else { return Ok(()) };
    let dir = std::fs::File::open(dir)?;
    let mut fd = std::os::fd::OwnedFd::from(dir);
    for name in parents {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: *at calls on an owned descriptor and NUL-terminated names.
        unsafe {
            libc::mkdirat(fd.as_raw_fd(), name.as_ptr(), 0o700);
            let next = libc::openat(
                fd.as_raw_fd(),
                name.as_ptr(),
                libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_RDONLY,
            );
            if next < 0 {
                return Err(std::io::Error::last_os_error());
            }
            fd = std::os::fd::OwnedFd::from_raw_fd(next);
        }
    }
    let target = c(target.as_os_str())?;
    use std::os::fd::AsRawFd;
    // SAFETY: *at calls on an owned descriptor and NUL-terminated strings.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstatat(fd.as_raw_fd(), last.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) == 0 {
            if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
            }
            libc::unlinkat(fd.as_raw_fd(), last.as_ptr(), 0);
        }
        if libc::symlinkat(target.as_ptr(), fd.as_raw_fd(), last.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
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
