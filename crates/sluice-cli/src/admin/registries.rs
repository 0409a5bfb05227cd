//! `sluice registries`: the hosts projects on the `registries` network reach.

use anyhow::{Result, anyhow};
use clap::Subcommand;
use sluice_engine::Engine;

use super::fail;

#[derive(Subcommand)]
pub enum RegistriesCmd {
    /// The hosts, and what each known one serves.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Let projects on the `registries` network reach these hosts too (`pypi.corp.example`,
    /// or `*.corp.example` for its subdomains).
    Add {
        #[arg(required = true)]
        hosts: Vec<String>,
    },
    Remove {
        #[arg(required = true)]
        hosts: Vec<String>,
    },
    /// Back to the default list.
    Reset,
}

pub fn registries(engine: Engine, cmd: RegistriesCmd) -> Result<()> {
    let now = engine.registries().map_err(fail)?;
    let list = match cmd {
        RegistriesCmd::List { json } => {
            if json {
                outln!("{}", serde_json::to_string_pretty(now.hosts())?);
                return Ok(());
            }
            now
        }
        RegistriesCmd::Add { hosts } => {
            let mut next = now.hosts().to_vec();
            next.extend(hosts);
            engine.set_registries(Some(next)).map_err(fail)?
        }
        RegistriesCmd::Remove { hosts } => {
            let hosts: Vec<String> = hosts.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
            if let Some(missing) = hosts.iter().find(|h| !now.hosts().contains(h)) {
                return Err(anyhow!("{missing} is not on the list; nothing changed"));
            }
            let next = now.hosts().iter().filter(|h| !hosts.contains(h)).cloned().collect();
            engine.set_registries(Some(next)).map_err(fail)?
        }
        RegistriesCmd::Reset => engine.set_registries(None).map_err(fail)?,
    };
    outln!("Projects on the `registries` network reach, over HTTPS only:");
    for host in list.hosts() {
        let serves = sluice_engine::job_view::DEFAULT_REGISTRIES.iter().find(|(h, _)| h == host);
        match serves {
            Some((_, what)) => outln!("  {host:<24} {what}"),
            None => outln!("  {host}"),
        }
    }
    Ok(())
}
