//! The shapes that cross into the window. Field names are camelCase in TypeScript; times are
//! milliseconds since the Unix epoch as plain numbers.

use serde::{Deserialize, Serialize};
use sluice_core::{AccessMode, ExecMode, NetworkMode};
use ts_rs::TS;

mod approval;
mod audit;
mod project;
mod reach;
mod token;

pub use approval::*;
pub use audit::*;
pub use project::*;
pub use reach::*;
pub use token::*;

/// Every error the window receives: a stable code to branch on and a message to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct IpcError {
    /// An [`sluice_core::ErrorCode`]'s wire form (a checked union in TypeScript).
    #[ts(type = "ErrorCode")]
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Exec {
    Off,
    Safe,
    Project,
    Any,
}

impl From<AccessMode> for Access {
    fn from(m: AccessMode) -> Access {
        match m {
            AccessMode::ReadOnly => Access::ReadOnly,
            AccessMode::ReadWrite => Access::ReadWrite,
        }
    }
}

impl From<Access> for AccessMode {
    fn from(m: Access) -> AccessMode {
        match m {
            Access::ReadOnly => AccessMode::ReadOnly,
            Access::ReadWrite => AccessMode::ReadWrite,
        }
    }
}

impl From<ExecMode> for Exec {
    fn from(m: ExecMode) -> Exec {
        match m {
            ExecMode::Off => Exec::Off,
            ExecMode::Safe => Exec::Safe,
            ExecMode::Project => Exec::Project,
            ExecMode::Any => Exec::Any,
        }
    }
}

/// What a project's commands may reach: nothing, only the package registries, or anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Net {
    Off,
    Registries,
    On,
}

impl From<NetworkMode> for Net {
    fn from(m: NetworkMode) -> Net {
        match m {
            NetworkMode::Off => Net::Off,
            NetworkMode::Registries => Net::Registries,
            NetworkMode::On => Net::On,
        }
    }
}

impl From<Net> for NetworkMode {
    fn from(m: Net) -> NetworkMode {
        match m {
            Net::Off => NetworkMode::Off,
            Net::Registries => NetworkMode::Registries,
            Net::On => NetworkMode::On,
        }
    }
}

/// A host the `registries` network reaches, and what it serves when it is a known registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RegistryDto {
    pub host: String,
    pub serves: Option<String>,
}

impl From<Exec> for ExecMode {
    fn from(m: Exec) -> ExecMode {
        match m {
            Exec::Off => ExecMode::Off,
            Exec::Safe => ExecMode::Safe,
            Exec::Project => ExecMode::Project,
            Exec::Any => ExecMode::Any,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SecretInfo {
    /// Whether the install secret lives in the OS keychain.
    pub in_keychain: bool,
    /// The keychain's name, or the fallback file's path.
    pub location: String,
    /// Why the keychain is not used, when it is not.
    pub reason: Option<String>,
}

/// Sealed state that does not verify: changed in the database without the install secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IntegrityFindingDto {
    /// A `sluice_store::FindingKind`'s wire form (a checked union in TypeScript).
    #[ts(type = "FindingCode")]
    pub code: String,
    /// The project's or token's id, the rule's number, or the record's key.
    pub subject: String,
    /// What was found and what Sluice does about it, naming the project, rule or token.
    pub message: String,
}

impl From<&sluice_engine::IntegrityFinding> for IntegrityFindingDto {
    fn from(f: &sluice_engine::IntegrityFinding) -> IntegrityFindingDto {
        IntegrityFindingDto {
            code: f.kind.code().to_owned(),
            subject: f.subject.clone(),
            message: f.message.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppState {
    /// AI access is paused (also true while stopped: a stop pauses too).
    pub paused: bool,
    /// The emergency stop is on: every AI request is refused until the user resumes.
    pub stopped: bool,
    pub port: u16,
    pub mcp_url: String,
    pub data_dir: String,
    pub secret: SecretInfo,
    pub version: String,
    /// How commands are confined on this system (namespaces and Landlock), one sentence.
    pub confinement: String,
    /// Commands get their own namespaces here (else the Landlock and seccomp fallback).
    pub namespaces: bool,
    /// What the sandbox promises, and whether each promise holds here.
    pub guarantees: Vec<GuaranteeDto>,
    /// The credential stores on this machine that no command can read (the home as `~`).
    pub hidden_from_jobs: Vec<String>,
    /// The hosts projects on the `registries` network reach.
    pub registries: Vec<RegistryDto>,
    /// Whether `registries` can be enforced here (it needs jobs in namespaces).
    pub registries_available: bool,
    /// What in the database was changed outside Sluice (empty when every seal verifies).
    pub integrity: Vec<IntegrityFindingDto>,
    /// The Windows sandbox account's state; absent on other systems.
    pub sandbox_account: Option<crate::SandboxAccountState>,
}

/// Whether a port on 127.0.0.1 could serve Sluice's MCP endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum PortStatus {
    /// Nothing listens there: Sluice could use it.
    Free,
    /// Another program listens there.
    InUse,
    /// This Sluice's MCP server listens there.
    ThisSluice,
    /// This system does not let Sluice listen there (e.g. a port below 1024).
    Unavailable,
}

/// The answer of `check_port`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PortCheck {
    pub port: u16,
    pub status: PortStatus,
    /// One sentence to show.
    pub message: String,
}

/// Engine events, as the window receives them on the `engine-event` channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum UiEvent {
    ProjectsChanged,
    TokensChanged,
    AccessChanged {
        paused: bool,
    },
    ProjectRootLost {
        id: String,
        reason: String,
    },
    /// An MCP client asks for something that needs the user's decision.
    ApprovalRequested {
        id: String,
    },
    /// An approval ended: `approved`, `denied`, `expired` or `withdrawn`.
    ApprovalDecided {
        id: String,
        state: String,
    },
    /// The shell asks the window to show a view (a notification or the tray was clicked).
    OpenView {
        view: String,
    },
    /// A job started or ended (`state`).
    JobChanged {
        id: String,
        state: crate::JobStateDto,
    },
    /// A running job wrote output or was sampled (CPU, memory); coalesced by the shell.
    JobActivity {
        id: String,
    },
}

/// The event channel's name, shared by the shell and the window.
pub const EVENT_CHANNEL: &str = "engine-event";
