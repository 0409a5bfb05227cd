//! The human's commands: projects, tokens, approvals and rules, the audit log and job history,
//! registries, the Windows sandbox account, doctor. Output is plain text for people; `--json`
//! where scripts need it. One file per command family; this one holds what they share.

mod approvals;
mod checkpoint;
mod doctor;
mod history;
mod project;
mod registries;
mod sandbox;
mod token;

use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Result, anyhow};
use serde::Serialize;
use sluice_core::Failure;

pub use approvals::{ApprovalsCmd, RulesCmd, approvals, rules};
pub use checkpoint::{CheckpointCmd, checkpoint};
pub use doctor::{doctor, reseal};
pub use history::{AuditCmd, audit, jobs};
pub use project::{ProjectCmd, project};
pub use registries::{RegistriesCmd, registries};
pub use sandbox::{SandboxCmd, sandbox};
pub use token::{TokenCmd, token};

fn fail(f: Failure) -> anyhow::Error {
    anyhow!("{} ({})", f.message, f.code)
}

fn time(ms: Option<i64>) -> String {
    match ms.and_then(|ms| u64::try_from(ms).ok()) {
        None => "never".to_owned(),
        Some(ms) => {
            humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
        }
    }
}

/// What an assistant, a project or a person chose, as every surface shows it.
fn shown(s: &str) -> String {
    sluice_core::text::visible(s).into_owned()
}

/// Prints a `--json` output. Through a `serde_json::Value`, as these outputs always were: its
/// maps keep keys in alphabetical order (serde_json without `preserve_order`), nested ones
/// included, and scripts may rely on the order they have always seen.
/// The project a `--project` filter names (if any), and every project's name by id, for lists
/// that show one.
fn project_filter(
    engine: &sluice_engine::Engine,
    project: Option<&str>,
) -> Result<(Option<sluice_core::ProjectId>, std::collections::HashMap<String, String>)> {
    let only = match project {
        Some(p) => Some(engine.find_project(p).map_err(fail)?.id),
        None => None,
    };
    let names = engine
        .projects()
        .map_err(fail)?
        .into_iter()
        .map(|p| (p.id.as_str().to_owned(), p.name))
        .collect();
    Ok((only, names))
}

fn print_json(v: &impl Serialize) -> Result<()> {
    outln!("{}", serde_json::to_string_pretty(&serde_json::to_value(v)?)?);
    Ok(())
}
