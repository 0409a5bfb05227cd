//! What happened: `sluice audit` (the audit log, and verifying its chain) and `sluice jobs` (the
//! stored job history).

use anyhow::Result;
use clap::Subcommand;
use serde::Serialize;
use sluice_core::ProjectId;
use sluice_engine::{AuditFilter, Engine};

use super::{fail, print_json, project_filter, shown, time};

#[derive(Subcommand)]
pub enum AuditCmd {
    /// Show recent audit entries, newest first.
    List {
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Verify the audit chain: detects edited, deleted, reordered or forged entries.
    Verify,
}

/// `sluice audit list --json`: one entry, one line each.
#[derive(Serialize)]
struct AuditJson<'a> {
    seq: u64,
    time_ms: i64,
    actor: String,
    action: String,
    project: Option<&'a ProjectId>,
    outcome: &'static str,
    error_code: Option<&'a str>,
    duration_ms: Option<u64>,
    detail: Option<String>,
}

pub fn audit(engine: Engine, cmd: AuditCmd) -> Result<()> {
    match cmd {
        AuditCmd::List { limit, json } => {
            let entries = engine.audit_list(&AuditFilter::default(), limit, None).map_err(fail)?;
            for e in entries {
                let r = &e.record;
                if json {
                    // One line per entry, keys in the order `print_json` gives them.
                    let line = serde_json::to_value(AuditJson {
                        seq: e.seq,
                        time_ms: r.time_ms,
                        actor: shown(&r.actor),
                        action: shown(&r.action),
                        project: r.project_id.as_ref(),
                        outcome: r.outcome.as_str(),
                        error_code: r.error_code.as_deref(),
                        duration_ms: r.duration_ms,
                        detail: r.detail.as_deref().map(shown),
                    })?;
                    outln!("{line}");
                } else {
                    outln!(
                        "#{} {} {} {} {}{}{}",
                        e.seq,
                        time(Some(r.time_ms)),
                        shown(&r.actor),
                        shown(&r.action),
                        r.outcome.as_str(),
                        r.project_id.as_ref().map(|p| format!(" {p}")).unwrap_or_default(),
                        r.error_code.as_ref().map(|c| format!(" [{c}]")).unwrap_or_default(),
                    );
                    if let Some(detail) = &r.detail {
                        outln!("    {}", shown(detail));
                    }
                }
            }
        }
        AuditCmd::Verify => {
            let report = engine.audit_verify().map_err(fail)?;
            match report.first_break {
                None => outln!("Audit chain intact — {} entries verified.", report.entries),
                Some(b) => {
                    outln!("Audit chain BROKEN at entry #{}: {}", b.seq, b.reason);
                    std::process::exit(2);
                }
            }
        }
    }
    Ok(())
}

/// `sluice jobs --json`: one job.
#[derive(Serialize)]
struct JobJson<'a> {
    id: &'a str,
    project: &'a str,
    token: Option<&'a str>,
    command: String,
    cwd: String,
    state: &'a str,
    error: Option<String>,
    exit_code: Option<i32>,
    signal: Option<i32>,
    created_ms: i64,
    started_ms: Option<i64>,
    ended_ms: Option<i64>,
    /// Published ports while it runs: the job's port and the link on this computer.
    ports: Vec<PortJson>,
    /// The checkpoint Sluice took right before it (`sluice checkpoint restore` undoes it).
    checkpoint: Option<String>,
}

#[derive(Serialize)]
struct PortJson {
    port: u16,
    url: String,
}

/// A stored `port:host_port,…` list as ports and links (an odd entry is left out).
fn ports(stored: Option<&str>) -> Vec<PortJson> {
    stored
        .unwrap_or_default()
        .split(',')
        .filter_map(|pair| {
            let (port, host) = pair.split_once(':')?;
            let (port, host) = (port.parse::<u16>().ok()?, host.parse::<u16>().ok()?);
            Some(PortJson { port, url: sluice_core::link::job_link(host) })
        })
        .collect()
}

/// `sluice jobs`: the stored job history, oldest first.
pub fn jobs(engine: Engine, project: Option<&str>, limit: usize, json: bool) -> Result<()> {
    let (only, names) = project_filter(&engine, project)?;
    let list = engine.job_history(only.as_ref(), limit).map_err(fail)?;
    // Each automatic checkpoint records the job it was taken before.
    let mut checkpoints = std::collections::HashMap::new();
    let projects: std::collections::HashSet<&str> =
        list.iter().map(|j| j.project_id.as_str()).collect();
    for project in projects {
        for c in engine.checkpoints(project).map(|l| l.checkpoints).unwrap_or_default() {
            if let Some(job) = c.job_id {
                checkpoints.insert(job, c.checkpoint_id);
            }
        }
    }
    if json {
        let v: Vec<_> = list
            .iter()
            .map(|j| JobJson {
                id: &j.id,
                project: &j.project_id,
                token: j.token_id.as_deref(),
                command: shown(&j.command),
                cwd: shown(&j.cwd),
                state: &j.state,
                error: j.error.as_deref().map(shown),
                exit_code: j.exit_code,
                signal: j.signal,
                created_ms: j.created_ms,
                started_ms: j.started_ms,
                ended_ms: j.ended_ms,
                ports: ports(j.ports.as_deref()),
                checkpoint: checkpoints.get(&j.id).cloned(),
            })
            .collect();
        print_json(&v)?;
    } else if list.is_empty() {
        outln!("No jobs yet.");
    } else {
        for j in &list {
            let project = names.get(&j.project_id).map_or(j.project_id.as_str(), String::as_str);
            let ended = match (j.exit_code, j.signal) {
                (Some(code), _) => format!(" (exit {code})"),
                (None, Some(sig)) => format!(" (signal {sig})"),
                _ => String::new(),
            };
            outln!("{}  [{}{ended}]  {project}", j.id, j.state);
            outln!("  command:  {}", shown(&j.command));
            if !j.cwd.is_empty() {
                outln!("  folder:   {}", shown(&j.cwd));
            }
            outln!("  started:  {}", time(j.started_ms.or(Some(j.created_ms))));
            if j.ended_ms.is_some() {
                outln!("  ended:    {}", time(j.ended_ms));
            }
            for p in ports(j.ports.as_deref()) {
                outln!("  port:     {} → {}", p.port, p.url);
            }
            if let Some(error) = &j.error {
                outln!("  note:     {}", shown(error));
            }
            if let Some(c) = checkpoints.get(&j.id) {
                outln!("  before:   checkpoint {c} (sluice checkpoint restore {project} {c})");
            }
        }
    }
    Ok(())
}
