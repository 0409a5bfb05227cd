//! What confines commands here, as Settings shows it: the guarantees, the credential stores
//! hidden, and on Windows the sandbox account, with its setup. The engine asks Windows for an
//! administrator's consent to set it up, so the UAC prompt is the confirmation, by a human.

use serde::{Deserialize, Serialize};
use sluice_engine::Engine;
use sluice_exec::winsandbox::WinSandboxStatus;
use ts_rs::TS;

use crate::{AppState, Context, GuaranteeDto, Res, app_state};

/// How much of the Windows sandbox account is in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxAccountState {
    /// Jobs run as the sandbox account.
    SetUp,
    /// Nothing of it is on this machine: jobs run as the user.
    NotSetUp,
    /// Some of it is (the confinement sentence names what is missing): jobs run as the user.
    Partial,
}

/// What the setup did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxAccountSetup {
    /// The rules Windows refused, each with where and why.
    pub refused: Vec<String>,
    /// The state afterwards, its confinement sentence included.
    pub state: AppState,
}

/// The account's state on Windows; `None` elsewhere, where jobs have another sandbox.
pub(crate) fn sandbox_account(engine: &Engine) -> Option<SandboxAccountState> {
    cfg!(windows).then(|| match engine.windows_sandbox_status() {
        WinSandboxStatus::SetUp => SandboxAccountState::SetUp,
        WinSandboxStatus::NotSetUp => SandboxAccountState::NotSetUp,
        WinSandboxStatus::Partial(_) => SandboxAccountState::Partial,
    })
}

/// Sets the account up (or repairs it), through the UAC prompt; off Windows a refusal that
/// changes nothing.
pub fn set_up_sandbox_account(engine: &Engine, ctx: &Context) -> Res<SandboxAccountSetup> {
    let done = engine.set_up_windows_sandbox()?;
    Ok(SandboxAccountSetup { refused: done.refused, state: app_state(engine, ctx)? })
}

/// What the sandbox promises, and whether each promise holds here.
pub(crate) fn guarantee_dtos(report: &sluice_engine::LandlockReport) -> Vec<GuaranteeDto> {
    sluice_engine::guarantees(report)
        .into_iter()
        .map(|g| GuaranteeDto { what: g.what.to_owned(), holds: g.holds })
        .collect()
}

/// The default credential stores that exist here, the home written `~`.
pub(crate) fn hidden_from_jobs() -> Vec<String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    sluice_engine::job_view::credential_stores(home.as_deref())
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .map(|p| match home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
            Some(rest) => format!("~/{}", rest.display()),
            None => p.display().to_string(),
        })
        .collect()
}
