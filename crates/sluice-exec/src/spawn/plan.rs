//! What [`spawn_with`](super::spawn_with) decides before anything starts: the job's
//! confinement and its refusals, its network's channels and where it sees its private folders.

#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
#[cfg(target_os = "linux")]
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use super::grants::check_grants;
#[cfg(target_os = "linux")]
use super::proxy::ProxyChannel;
#[cfg(target_os = "linux")]
use super::unix::LinuxSetup;
use super::{Live, Network, Sandbox};
use crate::confine::{self, Enforcement, LandlockReport};
use crate::egress::HostList;
use crate::error::ExecError;
#[cfg(target_os = "linux")]
use crate::spec::{ResolvedCommand, TrustedPath};

/// How a job is confined, decided before its command is built: what the host enforces, and
/// what the job's network and ports need of it.
pub(super) struct Plan {
    /// What the kernel enforces for this job (namespaces, Landlock).
    pub(super) confinement: LandlockReport,
    /// The hosts of a `registries` network, served through the engine's proxy (on Windows,
    /// `egress`'s).
    #[cfg(not(windows))]
    pub(super) registries: Option<Arc<HostList>>,
    /// The channel the job's proxy listener comes through (`registries` network).
    #[cfg(target_os = "linux")]
    pub(super) proxy: Option<ProxyChannel>,
    /// The channel of the job's port keeper (published ports).
    #[cfg(target_os = "linux")]
    pub(super) keeper: Option<ProxyChannel>,
    /// Windows: the job's proxy on the host's loopback (a `registries` network), serving the
    /// processes of the Job Object the spawn puts in the slot.
    #[cfg(windows)]
    pub(super) egress: Option<(crate::egress::LoopbackProxy, JobSlot)>,
    /// Where the job sees its private folders.
    pub(super) private: PathBuf,
}

/// Where the spawn puts (a handle of) the job's Job Object for its proxy to ask about.
#[cfg(windows)]
pub(super) type JobSlot = Arc<std::sync::OnceLock<crate::winjob::JobObject>>;

/// Windows: the loopback proxy of a `registries` network, admitting the processes of the job
/// whose Job Object the spawn puts in the slot (nobody before).
#[cfg(windows)]
fn loopback_egress(
    registries: Option<&Arc<HostList>>,
) -> Result<Option<(crate::egress::LoopbackProxy, JobSlot)>, ExecError> {
    let Some(hosts) = registries else { return Ok(None) };
    let slot: JobSlot = Arc::default();
    let job = slot.clone();
    let admit: crate::egress::Admit = Box::new(move |client| {
        job.get().is_some_and(|job| crate::winsandbox::egress::client_in_job(client, job))
    });
    let proxy = crate::egress::LoopbackProxy::start(hosts.clone(), admit)
        .map_err(|e| ExecError::os("starting the job's registries proxy", e))?;
    Ok(Some((proxy, slot)))
}

impl Plan {
    /// The job's confinement, and its refusals, in this order: a `registries` network needs
    /// namespaces (then its proxy channel is made) or, on Windows, the sandbox account (then
    /// its loopback proxy is started); published ports need a network namespace of
    /// the job's own (then the port keeper's channel is made); a project that requires full
    /// confinement gets it; granted stores are reached through no link; and a job whose policy
    /// requires Landlock gets it fully.
    pub(super) fn decide(sandbox: &Sandbox, live: &Live) -> Result<Plan, ExecError> {
        let confinement = confine::confinement(sandbox.network == Network::Off, sandbox.namespaces);
        let registries = registries(sandbox, &confinement)?;
        #[cfg(target_os = "linux")]
        let proxy = registries.as_ref().map(|_| ProxyChannel::new()).transpose()?;
        #[cfg(windows)]
        let egress = loopback_egress(registries.as_ref())?;
        check_publish(&live.publish, sandbox, &confinement)?;
        #[cfg(target_os = "linux")]
        let keeper = (!live.publish.is_empty()).then(ProxyChannel::new).transpose()?;
        let private = private_folders(sandbox, &confinement);
        check_confinement(sandbox, &confinement)?;
        Ok(Plan {
            confinement,
            #[cfg(not(windows))]
            registries,
            #[cfg(target_os = "linux")]
            proxy,
            #[cfg(target_os = "linux")]
            keeper,
            #[cfg(windows)]
            egress,
            private,
        })
    }

    /// What the child's setup on Linux takes from the plan: the confinement, and the job's ends
    /// of its channels.
    #[cfg(target_os = "linux")]
    pub(super) fn linux_setup<'a>(
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

/// The hosts of a `registries` network: it needs the job where its only way out is the
/// engine's proxy — in namespaces of its own (Linux), or as the Windows sandbox account, whose
/// firewall rules leave it loopback only; elsewhere the job is refused.
fn registries(
    sandbox: &Sandbox,
    confinement: &LandlockReport,
) -> Result<Option<Arc<HostList>>, ExecError> {
    match &sandbox.network {
        Network::Registries(hosts) if confinement.serves_registries() => Ok(Some(hosts.clone())),
        Network::Registries(_) => Err(ExecError::Unconfinable(format!(
            "this project's network is \"registries\", which needs {}, and here {}; turn the \
             project's network off, or on",
            confinement.registries_need(),
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
