//! Windows: a job started as the sandbox account, once its setup holds. The project's own file
//! rules (its folder, the job's private folders, its grants) are applied before its first job
//! in this process, and again when they change; then the job's command — program, arguments,
//! environment and folder exactly as the spawn built them for `std` — starts as the account
//! ([`super::process::spawn_as`]).
//!
//! The project's folder is writable for the account in every mode that runs commands, as it is
//! for jobs on Linux and macOS: what a mode may run is the verdict's to decide, not the files'.
//!
//! UNTESTED: type-checked on Linux (`cargo xtask check-targets`), never run.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use sluice_core::ExecMode;

use super::acl::{AclInputs, AclPlan, plan};
use super::firewall::SandboxUser;
use super::path::WinPath;
use super::process::{AccountProcess, spawn_as};
use crate::error::ExecError;
use crate::spawn::Sandbox;
use crate::winjob::JobObject;

/// Project plans applied in this process (their `Project` entries), so a project's rules are
/// set once, not before every job: setting them walks the project's whole tree.
static APPLIED: Mutex<Vec<AclPlan>> = Mutex::new(Vec::new());

/// More plans than this and the list starts over (each is applied again on its next job).
const MAX_APPLIED: usize = 256;

/// Starts `command` (the job's, built for `std`) as the sandbox account `sandbox`'s network
/// calls for.
pub(crate) fn start(
    command: &Command,
    sandbox: &Sandbox,
) -> Result<(AccountProcess, JobObject), ExecError> {
    let password = super::logon::password().ok_or_else(|| {
        ExecError::ConfinementUnavailable(
            "Sluice does not hold the sandbox accounts' password; run `sluice sandbox setup` \
             again; nothing ran"
                .into(),
        )
    })?;
    apply_project_rules(sandbox)?;
    let text = |p: &Path, what: &str| {
        p.to_str().map(str::to_owned).ok_or_else(|| {
            ExecError::Invalid(format!("the job's {what} is not valid Unicode; nothing ran"))
        })
    };
    let program = text(Path::new(command.get_program()), "program")?;
    let args = command
        .get_args()
        .map(|a| a.to_str().map(str::to_owned))
        .collect::<Option<Vec<String>>>()
        .ok_or_else(|| {
            ExecError::Invalid("an argument is not valid Unicode; nothing ran".into())
        })?;
    let env = command
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect::<Vec<_>>();
    let cwd = command.get_current_dir().unwrap_or(&sandbox.project_root);
    let cwd = WinPath::parse(&text(cwd, "working folder")?)?;
    let user = SandboxUser::for_network(&sandbox.network);
    Ok(spawn_as(user, &password, &program, &args, &env, &cwd)?)
}

/// The project's entries for both accounts, unless this process applied the same already.
fn apply_project_rules(sandbox: &Sandbox) -> Result<(), ExecError> {
    let wide = |p: &Path| {
        p.to_str()
            .ok_or_else(|| ExecError::Invalid("a folder's name is not valid Unicode".into()))
            .and_then(|t| Ok(WinPath::parse(t)?))
    };
    let profile = std::env::var("USERPROFILE")
        .map_err(|_| ExecError::ConfinementUnavailable("USERPROFILE is not set".into()))?;
    let profile = WinPath::parse(&profile)?;
    let (data_dir, more_hidden) = sandbox
        .hidden
        .split_first()
        .ok_or_else(|| ExecError::Invalid("the sandbox names no data folder to hide".into()))?;
    let list = |paths: &mut dyn Iterator<Item = &std::path::PathBuf>| {
        paths.map(|p| wide(p)).collect::<Result<Vec<_>, _>>()
    };
    let hidden = list(&mut more_hidden.iter().chain(&sandbox.exposure.hidden))?;
    let unhidden = list(&mut sandbox.exposure.unhidden.iter())?;
    let granted = list(&mut sandbox.exposure.granted.iter())?;
    let full = plan(&AclInputs {
        profile: &profile,
        data_dir: &wide(data_dir)?,
        project_root: &wide(&sandbox.project_root)?,
        private: &wide(&sandbox.state_dir)?,
        exec: ExecMode::Project,
        hidden: &hidden,
        unhidden: &unhidden,
        granted: &granted,
    })?;
    let mut applied = APPLIED.lock().unwrap_or_else(|e| e.into_inner());
    if applied.contains(&full) {
        return Ok(());
    }
    let refused = super::os::apply_project(&full)?;
    if let Some((_, why)) = refused.first() {
        // A rule Windows refused on the project's own files: the job would not see its project
        // as planned. Say so without the path (messages never carry physical paths).
        return Err(ExecError::ConfinementUnavailable(format!(
            "Windows refused {} of the project's file rules for the sandbox account ({why}); \
             nothing ran",
            refused.len()
        )));
    }
    if applied.len() >= MAX_APPLIED {
        applied.clear();
    }
    applied.push(full);
    Ok(())
}
