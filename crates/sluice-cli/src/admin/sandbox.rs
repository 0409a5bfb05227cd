//! `sluice sandbox`: the Windows sandbox account — what holds, its setup (with an
//! administrator's consent, which Windows asks for), and its undoing. On other systems it says
//! what confines jobs there instead, and changes nothing.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;
use sluice_engine::Engine;

use super::fail;

#[derive(Subcommand)]
pub enum SandboxCmd {
    /// What holds of the Windows sandbox account here.
    Status,
    /// Set up the Windows sandbox accounts, their file rules and firewall rules (Windows asks
    /// for an administrator's consent), and keep their new password. Run again, it resets the
    /// password and brings every rule back.
    Setup {
        /// The elevated half of the setup: the handoff file the user's own process wrote.
        #[arg(long, hide = true, requires = "profile")]
        handoff: Option<PathBuf>,
        /// The profile of the user who asked for the setup (with `--handoff`).
        #[arg(long, hide = true, requires = "handoff")]
        profile: Option<String>,
    },
    /// Remove the sandbox accounts and their firewall rules, and forget the password (from a
    /// terminal run as administrator).
    Teardown,
}

pub fn sandbox(engine: Engine, cmd: SandboxCmd) -> Result<()> {
    match cmd {
        SandboxCmd::Status if cfg!(windows) => {
            outln!("{}", engine.windows_sandbox_status().summary());
        }
        SandboxCmd::Status => {
            outln!("The sandbox account is Windows' own. Here:");
            outln!("  {}", sluice_engine::job_confinement().summary);
        }
        SandboxCmd::Setup { handoff: Some(handoff), profile: Some(profile) } => {
            engine.set_up_windows_sandbox_elevated(&handoff, &profile).map_err(fail)?;
        }
        SandboxCmd::Setup { .. } => {
            let done = engine.set_up_windows_sandbox().map_err(fail)?;
            outln!("The Windows sandbox accounts are set up; jobs run as them from now on.");
            if !done.refused.is_empty() {
                outln!(
                    "Windows refused {} rule(s); jobs may see more than planned:",
                    done.refused.len()
                );
                for r in &done.refused {
                    outln!("  {r}");
                }
            }
            outln!("An engine that was already running gives jobs the accounts after its restart.");
            outln!("{}", engine.windows_sandbox_status().summary());
        }
        SandboxCmd::Teardown => {
            engine.tear_down_windows_sandbox().map_err(fail)?;
            outln!(
                "The Windows sandbox accounts and their firewall rules are removed; jobs run as you."
            );
        }
    }
    Ok(())
}
