//! Approvals as the window lists and decides them: the request, its risk in words, the
//! command, and the allow rules "always allow" leaves behind.

use serde::{Deserialize, Serialize};
use sluice_engine::{ApprovalRecord, ApprovalState};
use ts_rs::TS;

use super::Net;
use super::project::{AutoRunHitDto, SandboxDto};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Denied,
    /// Nobody answered in time; nothing ran.
    Expired,
    /// The assistant cancelled or went away while waiting; nothing ran.
    Withdrawn,
    /// Sluice stopped while it waited; nothing ran.
    Aborted,
}

/// One request for the user's decision, pending or decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDto {
    pub id: String,
    pub project_id: String,
    pub project_name: String,
    pub token_id: String,
    /// Who asks: the label of the assistant's token.
    pub token_label: String,
    /// The MCP tool (`delete_path`, `write_file`, …).
    pub tool: String,
    /// The exact action, one line per effect (paths, sizes, whether it can be undone); never
    /// shortened. Deceptive characters already appear as `⟨U+202E⟩`.
    pub summary: String,
    /// The paths the change touches that another program runs on its own, with what happens:
    /// the reason it asks even where changes otherwise do not. Empty for most approvals.
    pub autorun: Vec<AutoRunHitDto>,
    #[ts(type = "number")]
    pub created_ms: i64,
    #[ts(type = "number")]
    pub expires_ms: i64,
    pub status: ApprovalStatus,
    /// The user's reason, for a denial that gave one.
    pub reason: Option<String>,
    #[ts(type = "number | null")]
    pub decided_ms: Option<i64>,
    /// Who or what ended it: "local user (window)", "local user (tray)", "local user" (the
    /// CLI), "expiry", the assistant's label (withdrawn), …
    pub decided_by: Option<String>,
    /// Whether "Always allow" is offered: a pending approval for a command, which becomes an
    /// exact allow rule (argv, folder, environment) for its project.
    pub always_allowable: bool,
    /// The exact command of a pending command approval, token by token.
    pub command: Option<CommandDto>,
    /// How risky the action is and why, when Sluice can say: a pending command, or a change
    /// to files.
    pub risk: Option<RiskDto>,
}

/// How much harm a command can do if the assistant was misled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum RiskLevel {
    /// A version check or read-only inspection.
    Safe,
    /// Runs project code or changes files inside the project.
    Caution,
    /// Evaluates inline code, installs dependencies, persists beyond the job, raises privileges.
    Dangerous,
}

impl From<sluice_exec::Risk> for RiskLevel {
    fn from(r: sluice_exec::Risk) -> RiskLevel {
        match r {
            sluice_exec::Risk::Safe => RiskLevel::Safe,
            sluice_exec::Risk::Caution => RiskLevel::Caution,
            sluice_exec::Risk::Dangerous => RiskLevel::Dangerous,
        }
    }
}

/// The risk class of an approval's action and why, in words; deceptive characters already
/// appear as `⟨U+202E⟩`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RiskDto {
    /// For commands: the execution policy's risk level. `null` for changes to files, which
    /// have no such level (their class says what they destroy and whether it can be undone).
    pub level: Option<RiskLevel>,
    /// A few words: "arbitrary program", "deletes 3 files (restorable)".
    pub class: String,
    /// One line: why it is in that class.
    pub why: String,
}

impl From<&sluice_engine::ApprovalRisk> for RiskDto {
    fn from(r: &sluice_engine::ApprovalRisk) -> RiskDto {
        use sluice_engine::ApprovalRisk;
        use sluice_exec::Form;
        match r {
            ApprovalRisk::Command { risk, form, reason } => RiskDto {
                level: Some((*risk).into()),
                class: match form {
                    Form::Inspection => "read-only inspection",
                    Form::Toolchain => "builds, tests or runs through the project's toolchain",
                    Form::Arbitrary => "arbitrary program",
                }
                .to_owned(),
                why: crate::visible(reason),
            },
            ApprovalRisk::Change(t) => change_risk(t),
        }
    }
}

/// The class and why of a change to files: [`sluice_core::ChangeTally::class`], the same words
/// the CLI and the audit log use.
fn change_risk(t: &sluice_engine::ChangeTally) -> RiskDto {
    let sluice_core::ChangeClass { class, why } = t.class();
    RiskDto { level: None, class, why }
}

/// A command as it will run: each argument on its own, never a joined string. Deceptive
/// characters already appear as `⟨U+202E⟩`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CommandDto {
    /// The resolved program first, then every argument.
    pub argv: Vec<String>,
    /// The project-relative working folder; `""` is the project's root.
    pub cwd: String,
    /// Environment additions, `NAME=value`.
    pub env: Vec<String>,
    /// What it may reach (the project's network setting for commands).
    pub network: Net,
    /// How it is confined, one sentence (Landlock on Linux).
    pub confinement: String,
    /// The project's sandbox it would run in (hidden stores, grants, sockets, guarantees).
    pub sandbox: Option<SandboxDto>,
}

impl CommandDto {
    /// The command an approval would run (as its allow rule would match it), with the network
    /// and confinement it would run under.
    pub(crate) fn new(r: &sluice_exec::AllowRule, network: Net, confinement: String) -> CommandDto {
        let argv = std::iter::once(r.program.to_string_lossy().into_owned())
            .chain(r.args.iter().cloned())
            .map(|a| crate::visible(&a))
            .collect();
        let env = r.env.iter().map(|(k, v)| crate::visible(&format!("{k}={v}"))).collect();
        CommandDto { argv, cwd: crate::visible(&r.cwd), env, network, confinement, sandbox: None }
    }
}

impl From<&ApprovalRecord> for ApprovalDto {
    fn from(a: &ApprovalRecord) -> ApprovalDto {
        let a = &a.shown();
        let (status, reason) = match &a.state {
            ApprovalState::Pending => (ApprovalStatus::Pending, None),
            ApprovalState::Approved => (ApprovalStatus::Approved, None),
            ApprovalState::Denied(r) => (ApprovalStatus::Denied, r.clone()),
            ApprovalState::Expired => (ApprovalStatus::Expired, None),
            ApprovalState::Withdrawn => (ApprovalStatus::Withdrawn, None),
            ApprovalState::Aborted => (ApprovalStatus::Aborted, None),
        };
        ApprovalDto {
            id: a.id.clone(),
            project_id: a.project_id.as_str().to_owned(),
            project_name: a.project_name.clone(),
            token_id: a.token_id.as_str().to_owned(),
            token_label: a.token_label.clone(),
            tool: a.tool.clone(),
            summary: a.summary.clone(),
            autorun: a.autorun.iter().map(AutoRunHitDto::from).collect(),
            created_ms: a.created_ms,
            expires_ms: a.expires_ms,
            status,
            reason,
            decided_ms: a.decided_ms,
            decided_by: a.decided_by.clone(),
            always_allowable: false,
            command: None,
            risk: None,
        }
    }
}

impl ApprovalDto {
    /// One line for the tray and notifications: "<who> · <what> · <project>". The summary's
    /// first effect is shown whole; further effects are counted, never silently dropped. A
    /// change another program runs on its own says so at the end, with which program.
    pub fn headline(&self) -> String {
        let mut lines = self.summary.lines();
        let first = lines.next().unwrap_or(self.tool.as_str());
        let more = lines.count();
        let what = if more == 0 { first.to_owned() } else { format!("{first} (+{more} more)") };
        let mut line = format!("{} · {what} · {}", self.token_label, self.project_name);
        if let Some(first) = self.autorun.first() {
            line.push_str(&format!(" · ⚠ {} runs it on its own", first.program));
            if self.autorun.len() > 1 {
                line.push_str(&format!(" (+{} more)", self.autorun.len() - 1));
            }
        }
        crate::visible(&line)
    }

    /// What runs on its own, one line per path: "`path`: consequence" (the tray's items, the
    /// notification's body).
    pub fn autorun_lines(&self) -> Vec<String> {
        self.autorun
            .iter()
            .map(|h| crate::visible(&format!("{}: {}", h.path, h.consequence)))
            .collect()
    }

    /// The body of the notification that announces the approval: the headline, then what runs
    /// on its own.
    pub fn notification(&self) -> String {
        std::iter::once(self.headline()).chain(self.autorun_lines()).collect::<Vec<_>>().join("\n")
    }
}

/// An exact command a project runs without asking: granted by "Always allow this command".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AllowRuleDto {
    #[ts(type = "number")]
    pub id: i64,
    /// The command line, with its folder and environment when it has them; deceptive
    /// characters already appear as `⟨U+202E⟩`.
    pub command: String,
    #[ts(type = "number")]
    pub created_ms: i64,
    /// Where the user chose "Always allow"; `null` for rules made before Sluice recorded it.
    pub added_from: Option<Channel>,
    /// The label of the assistant's token that asked for the command, as it was then; `null`
    /// for rules made before Sluice recorded it. Deceptive characters appear as `⟨U+202E⟩`.
    pub asked_by: Option<String>,
}

impl From<&sluice_engine::RuleInfo> for AllowRuleDto {
    fn from(r: &sluice_engine::RuleInfo) -> AllowRuleDto {
        AllowRuleDto {
            id: r.id,
            command: crate::visible(&r.display()),
            created_ms: r.created_ms,
            added_from: r.origin.from.map(Channel::from),
            asked_by: r.origin.asked_by.as_deref().map(crate::visible),
        }
    }
}

/// Where the local user acted: the window, the tray menu or the `sluice` CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    Window,
    Tray,
    Cli,
}

impl From<sluice_engine::Channel> for Channel {
    fn from(c: sluice_engine::Channel) -> Channel {
        match c {
            sluice_engine::Channel::Window => Channel::Window,
            sluice_engine::Channel::Tray => Channel::Tray,
            sluice_engine::Channel::Cli => Channel::Cli,
        }
    }
}

/// The user's answer to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Approve,
    /// Approve, and always allow this exact command in its project from now on (commands
    /// only: see [`ApprovalDto::always_allowable`]).
    ApproveAlways,
    Deny,
}
