//! Sluice's execution core: what may run (`spec`: structured commands, modes, risk classes,
//! trusted program resolution, approval fingerprints and allow rules), how it runs (`spawn`: no
//! shell, an allow-listed environment, Landlock confinement, resource limits), how it stops
//! (`kill`: whole process trees, including `setsid` and double-forked descendants), what comes
//! back (`output`: capped, ANSI-stripped, redacted), the registry of running work (`job`), and
//! the one helper Sluice runs for itself, unconfined and supervised (`service`: the tunnel).
//!
//! No MCP and no engine here: the engine decides with [`spec::decide`], asks the human when the
//! verdict says so, and hands the resolved command to [`job::Jobs`].

#[cfg(target_os = "linux")]
mod cgroup;
pub mod confine;
pub mod cover;
pub mod detect;
pub mod egress;
pub mod error;
#[cfg(target_os = "linux")]
mod fdpass;
pub mod hide;
#[cfg(target_os = "linux")]
pub mod jail;
pub mod job;
pub mod kill;
pub mod output;
pub mod pins;
pub mod places;
pub mod publish;
pub mod seatbelt;
pub mod service;
pub mod spawn;
pub mod spec;
#[cfg(windows)]
pub mod winjob;
pub mod winsandbox;

pub use confine::{
    Enforcement, Guarantee, LandlockReport, confinement, covers_shield, guarantees, is_full,
    landlock_status,
};
pub use egress::{DEFAULT_REGISTRIES, HostList};
pub use error::ExecError;
#[cfg(target_os = "linux")]
pub use jail::{JailReport, status as jail_status};
pub use job::{
    Channel, InputPart, InputReport, Interactive, JobEvent, JobId, JobLimits, JobObserver,
    JobRecord, JobRequest, JobState, JobStatus, Jobs, Key, LogPage, RunOutput, Sample, StopReport,
    Stream,
};
pub use kill::{KillReport, Tree, init_subreaper, kill_all, protect_engine};
pub use publish::{Ports, PublishedPort};
pub use spawn::{Exposure, Live, Network, ResourceLimits, Sandbox, SandboxPolicy, Spawned};
pub use spec::{
    AllowRule, Assessment, CommandSpec, Fingerprint, Form, LANGUAGE_SERVERS, LanguageServer,
    Policy, ProjectFacts, ResolvedCommand, Risk, TrustedPath, Verdict, assess, decide, servers_for,
};
