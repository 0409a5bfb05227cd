//! `sluice approvals` and `sluice rules`: the actions waiting for the user's decision, and the
//! "always allow this exact command" rules those decisions leave.

use anyhow::Result;
use clap::Subcommand;
use serde::Serialize;
use sluice_core::AutoRunHit;
use sluice_engine::Engine;

use super::{fail, print_json, project_filter, shown, time};

#[derive(Subcommand)]
pub enum ApprovalsCmd {
    /// Pending approvals first, then recent decisions.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Everything about one approval.
    Show { id: String },
    /// Let the waiting action run, exactly as shown.
    Approve {
        id: String,
        /// Also always allow this exact command (argv, folder, environment) in this project.
        #[arg(long)]
        always: bool,
    },
    /// Refuse the waiting action; the reason goes back to the assistant.
    Deny {
        id: String,
        #[arg(long)]
        reason: Option<String>,
    },
}

/// `sluice approvals list --json`: one approval, as shown.
#[derive(Serialize)]
struct ApprovalJson<'a> {
    id: &'a str,
    state: &'static str,
    tool: &'a str,
    project: &'a str,
    client: &'a str,
    summary: &'a str,
    expires_ms: i64,
    autorun: &'a [AutoRunHit],
    risk: Option<String>,
    asked_because: &'a str,
}

fn print_approval(a: &sluice_engine::ApprovalRecord) {
    let a = &a.shown();
    outln!("{}  [{}]  {} · {} · {}", a.id, a.state.as_str(), a.token_label, a.tool, a.project_name);
    outln!("  action:   {}", a.summary);
    if let Some(tally) = &a.tally {
        outln!("  risk:     {}", tally.class().class);
    }
    for hit in &a.autorun {
        outln!("  auto-run: {}", hit.line());
    }
    if !a.asked_because.is_empty() {
        outln!("  asks:     because {}", a.asked_because);
    }
    outln!("  created:  {}", time(Some(a.created_ms)));
    if a.state == sluice_engine::ApprovalState::Pending {
        outln!("  expires:  {}", time(Some(a.expires_ms)));
    } else {
        outln!("  decided:  {} by {}", time(a.decided_ms), a.decided_by.as_deref().unwrap_or("?"));
    }
    if let sluice_engine::ApprovalState::Denied(Some(reason)) = &a.state {
        outln!("  reason:   {reason}");
    }
}

pub fn approvals(engine: Engine, cmd: ApprovalsCmd) -> Result<()> {
    match cmd {
        ApprovalsCmd::List { json } => {
            let list = engine.approvals().map_err(fail)?;
            if json {
                let shown: Vec<_> = list.iter().map(|a| a.shown()).collect();
                let v: Vec<_> = shown
                    .iter()
                    .map(|a| ApprovalJson {
                        id: &a.id,
                        state: a.state.as_str(),
                        tool: &a.tool,
                        project: &a.project_name,
                        client: &a.token_label,
                        summary: &a.summary,
                        expires_ms: a.expires_ms,
                        autorun: &a.autorun,
                        risk: a.tally.as_ref().map(|t| t.class().class),
                        asked_because: &a.asked_because,
                    })
                    .collect();
                print_json(&v)?;
            } else if list.is_empty() {
                outln!("Nothing is waiting for your approval.");
            } else {
                list.iter().for_each(print_approval);
            }
        }
        ApprovalsCmd::Show { id } => print_approval(&engine.approval(&id).map_err(fail)?),
        ApprovalsCmd::Approve { id, always } => {
            let decision = if always {
                sluice_engine::Decision::ApproveAlways { from: sluice_engine::Channel::Cli }
            } else {
                sluice_engine::Decision::Approve
            };
            let a = engine.decide(&id, decision, sluice_engine::LOCAL_USER).map_err(fail)?.shown();
            outln!("Approved {}: {}", a.id, a.summary);
            for hit in &a.autorun {
                outln!("  auto-run: {}", hit.line());
            }
            if always {
                outln!("This exact command is now always allowed in {}.", a.project_name);
            }
        }
        ApprovalsCmd::Deny { id, reason } => {
            let a = engine
                .decide(&id, sluice_engine::Decision::Deny { reason }, sluice_engine::LOCAL_USER)
                .map_err(fail)?
                .shown();
            outln!("Denied {}: {}", a.id, a.summary);
        }
    }
    Ok(())
}

#[derive(Subcommand)]
pub enum RulesCmd {
    /// The allow rules of one project, or of all.
    List {
        /// A project id or name.
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a rule: that command asks again.
    Remove { id: i64 },
}

/// `sluice rules list --json`: one allow rule.
#[derive(Serialize)]
struct RuleJson<'a> {
    id: i64,
    project: &'a str,
    program: String,
    args: Vec<String>,
    cwd: String,
    env: Vec<(String, String)>,
    created_ms: i64,
    added_from: Option<&'static str>,
    asked_by: Option<String>,
}

pub fn rules(engine: Engine, cmd: RulesCmd) -> Result<()> {
    match cmd {
        RulesCmd::List { project, json } => {
            let (only, names) = project_filter(&engine, project.as_deref())?;
            let list = engine.allow_rules(only.as_ref()).map_err(fail)?;
            if json {
                let v: Vec<_> = list
                    .iter()
                    .map(|r| RuleJson {
                        id: r.id,
                        project: r.project_id.as_str(),
                        program: shown(&r.rule.program.to_string_lossy()),
                        args: r.rule.args.iter().map(|a| shown(a)).collect(),
                        cwd: shown(&r.rule.cwd),
                        env: r.rule.env.iter().map(|(k, v)| (shown(k), shown(v))).collect(),
                        created_ms: r.created_ms,
                        added_from: r.origin.from.map(sluice_engine::Channel::as_str),
                        asked_by: r.origin.asked_by.as_deref().map(shown),
                    })
                    .collect();
                print_json(&v)?;
            } else if list.is_empty() {
                outln!("No allow rules.");
            } else {
                for r in &list {
                    let project =
                        shown(names.get(r.project_id.as_str()).map_or("?", String::as_str));
                    let mut origin = Vec::new();
                    if let Some(from) = r.origin.from {
                        origin.push(format!("added from the {}", channel_name(from)));
                    }
                    if let Some(who) = &r.origin.asked_by {
                        origin.push(format!("asked by {}", shown(who)));
                    }
                    let origin = if origin.is_empty() {
                        String::new()
                    } else {
                        format!("  ({})", origin.join(", "))
                    };
                    outln!("{:>4}  {project}  {}{origin}", r.id, r.display());
                }
            }
        }
        RulesCmd::Remove { id } => {
            engine.remove_allow_rule(id).map_err(fail)?;
            outln!("Removed allow rule {id}; that command asks again.");
        }
    }
    Ok(())
}

/// How a rule's channel reads in a sentence: "added from the tray".
fn channel_name(from: sluice_engine::Channel) -> &'static str {
    match from {
        sluice_engine::Channel::Window => "window",
        sluice_engine::Channel::Tray => "tray",
        sluice_engine::Channel::Cli => "CLI",
    }
}
