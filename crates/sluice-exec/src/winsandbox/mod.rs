//! The Windows sandbox account: jobs run as a local account of their own (`SluiceSandbox`, or
//! `SluiceSandboxNet` for projects whose network is on) that Sluice sets up once, with the
//! user's consent, as an administrator. The account reads and writes the project and its
//! private folders, reads the toolchains, and nothing of the user's profile, credential
//! stores or Sluice's data; the firewall takes the offline account's network but
//! loopback, where Sluice's registries proxy listens. The same model as Codex's and Anthropic's
//! Windows sandboxes.
//!
//! The rules are data, built and tested on every system: [`path`] (Windows paths in one
//! spelling), [`acl`] (the file rules), [`firewall`] (the firewall rules and the PowerShell that
//! applies them), [`cmdline`] (the command line and environment block of a process started as
//! the account), [`status`] (what holds, in the sentences every surface shows). Only `os.rs`
//! (accounts, ACLs, firewall, the setup), `elevate.rs` (the administrator's consent),
//! `process.rs` (a process as the account) and `spawn.rs` (a job's command started that way)
//! touch Windows; they are type-checked here (`cargo xtask check-targets`) and have not been
//! run.
//!
//! Jobs start as the account when every part of the setup holds (`spawn.rs`, with the password
//! the engine installs in [`logon`]); the engine runs the setup (`elevate.rs` asks for the
//! consent) and keeps the password (`sluice_engine`'s `sandbox_account.rs`). Until every part
//! holds, the status says which is missing and a project that requires full confinement
//! refuses to run.

pub mod acl;
pub mod cmdline;
#[cfg(windows)]
pub(crate) mod egress;
#[cfg(windows)]
pub mod elevate;
pub mod firewall;
pub mod logon;
#[cfg(windows)]
pub mod os;
pub mod path;
#[cfg(windows)]
pub mod process;
#[cfg(windows)]
pub(crate) mod spawn;
pub mod status;

use sluice_core::{Coded, ErrorCode};

pub use acl::{AceKind, AclEntry, AclInputs, AclPlan, Rights, Scope, plan};
pub use firewall::{FirewallRule, SandboxUser};
pub use path::WinPath;
pub use status::{Missing, SetupState, WinSandboxStatus};

/// Why a step of the Windows sandbox cannot be taken. Each has a stable code ([`Self::code`]);
/// no message names a path (they may reach an assistant, see [`crate::error`]).
#[derive(Debug, thiserror::Error)]
pub enum WinSandboxError {
    /// A path is not one plain spelling of an absolute path on a drive.
    #[error("{0}")]
    BadPath(String),
    /// The project's folder holds or lies in something hidden from jobs.
    #[error("{0}")]
    HiddenRoot(String),
    /// A SID is not a local account's.
    #[error("{0}")]
    BadSid(String),
    /// The rules refuse this (execution off, a grant of Sluice's data, …).
    #[error("{0}")]
    Refused(String),
    /// The step needs Windows.
    #[error("the Windows sandbox account can only be set up and used on Windows")]
    NotWindows,
    /// The step needs an administrator (creating accounts, firewall rules).
    #[error("setting up the Windows sandbox account needs an administrator's consent: {0}")]
    NeedsAdministrator(String),
    /// The account is not (completely) set up.
    #[error("{0}")]
    NotSetUp(String),
    /// Windows refused; the message says which step.
    #[error("{step}: {source}")]
    Os {
        step: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl WinSandboxError {
    /// The stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            WinSandboxError::BadPath(_) => "bad_path",
            WinSandboxError::HiddenRoot(_) => "project_in_hidden_location",
            WinSandboxError::BadSid(_) => "bad_sid",
            WinSandboxError::Refused(_) => "refused",
            WinSandboxError::NotWindows => "unsupported_platform",
            WinSandboxError::NeedsAdministrator(_) => "needs_administrator",
            WinSandboxError::NotSetUp(_) => "sandbox_not_set_up",
            WinSandboxError::Os { .. } => "os",
        }
    }
}

impl Coded for WinSandboxError {
    fn code(&self) -> ErrorCode {
        match self {
            WinSandboxError::BadPath(_) | WinSandboxError::BadSid(_) => ErrorCode::InvalidArgument,
            WinSandboxError::HiddenRoot(_)
            | WinSandboxError::Refused(_)
            | WinSandboxError::NotWindows
            | WinSandboxError::NeedsAdministrator(_) => ErrorCode::Forbidden,
            WinSandboxError::NotSetUp(_) => ErrorCode::ConfinementUnavailable,
            WinSandboxError::Os { .. } => ErrorCode::Internal,
        }
    }
}

impl From<WinSandboxError> for crate::ExecError {
    fn from(e: WinSandboxError) -> crate::ExecError {
        match e {
            WinSandboxError::NotSetUp(m) => crate::ExecError::ConfinementUnavailable(m),
            WinSandboxError::Os { step, source } => crate::ExecError::Os { context: step, source },
            other => crate::ExecError::Unconfinable(other.to_string()),
        }
    }
}

/// A local account's SID (`S-1-5-21-a-b-c-rid`), read strictly: only digits and dashes, the
/// machine's account domain, a RID of an account someone created (1000 and up, so never the
/// built-in Administrator or Guest). Anything else — `Everyone`, a group, a SID with text after
/// it — is refused, so a rule meant for the sandbox account can never name someone else.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sid(String);

impl Sid {
    pub fn parse(text: &str) -> Result<Sid, WinSandboxError> {
        let bad = || WinSandboxError::BadSid("not the SID of a local account".into());
        let rest = text.strip_prefix("S-1-5-21-").ok_or_else(bad)?;
        let parts: Vec<&str> = rest.split('-').collect();
        if parts.len() != 4 {
            return Err(bad());
        }
        let mut values = [0u32; 4];
        for (v, p) in values.iter_mut().zip(&parts) {
            let plain = !p.is_empty() && p.len() <= 10 && p.bytes().all(|b| b.is_ascii_digit());
            let canonical = *p == "0" || !p.starts_with('0');
            *v = p.parse().ok().filter(|_| plain && canonical).ok_or_else(bad)?;
        }
        if values[3] < 1000 {
            return Err(bad());
        }
        Ok(Sid(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The sandbox accounts' password: kept out of `Debug` and logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(…)")
    }
}

impl Password {
    /// A new random password: 32 characters from the OS random source, over an alphabet of 64
    /// (no bias) upper- and lower-case letters, digits and symbols, with one of each kind (Windows'
    /// complexity rule asks for three of the four).
    pub fn generate() -> Password {
        const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789-_.!#%+";
        let bytes: [u8; 28] = sluice_core::random_bytes();
        let mut text: String =
            bytes.iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char).collect();
        text.push_str("Aa7!");
        Password(text)
    }

    /// A password kept by Sluice's secret store, given back.
    pub fn from_stored(text: String) -> Password {
        Password(text)
    }

    /// The text, for the secret store and the logon call only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// What holds here: on Windows measured (and cached a while, see `os.rs`), elsewhere nothing of
/// it exists.
pub fn current_status() -> WinSandboxStatus {
    #[cfg(windows)]
    {
        os::status()
    }
    #[cfg(not(windows))]
    {
        WinSandboxStatus::NotSetUp
    }
}

#[cfg(test)]
mod tests;
