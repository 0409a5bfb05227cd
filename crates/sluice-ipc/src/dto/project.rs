//! A project as the window shows and changes it: its status, modes, policy, network, sandbox,
//! auto-run list and git e-mail setting.

use serde::{Deserialize, Serialize};
use sluice_core::{AutoRunAction, AutoRunHit, AutoRunRule, ProjectState};
use sluice_engine::Project;
use ts_rs::TS;

use super::{Access, Exec, Net};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ProjectStatus {
    Available,
    Disabled,
    RootLost,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectDto {
    pub id: String,
    pub name: String,
    /// The folder on this computer (shown to the local user only; never sent to AI clients).
    pub root: String,
    pub access: Access,
    pub exec: Exec,
    pub status: ProjectStatus,
    pub reason: Option<String>,
    /// The project's own sensitive-file patterns; `null` means the defaults apply.
    pub shield: Option<Vec<String>>,
    /// The project's own auto-run list; `null` means the defaults apply.
    pub autorun: Option<Vec<AutoRunRuleDto>>,
    /// Which changes ask the user first.
    pub policy: ApprovalPolicy,
    /// The user's network setting for the project's commands; `null` follows the execution
    /// mode's default.
    pub network: Option<Net>,
    /// What the project's commands may reach now.
    pub network_mode: Net,
    /// The sandbox its commands run in here: layers, guarantees, hidden stores, grants.
    pub sandbox: SandboxDto,
    /// Whether git_log and git_show give assistants the authors' e-mail addresses (default:
    /// hidden, names only).
    pub show_git_emails: bool,
    /// Whether `git_commit` runs the repository's hooks, each as a job in the project's sandbox
    /// (default: off, no hook runs).
    pub run_git_hooks: bool,
    /// The id of the project this one is a linked git worktree of (made by `git_worktree`;
    /// removing it removes its clean worktree and keeps the branch).
    pub worktree_of: Option<String>,
    #[ts(type = "number")]
    pub created_ms: i64,
}

/// A project's sandbox settings as the user edits them: paths as `~/…` or absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxSettingsDto {
    /// Hidden from commands beside the default credential stores.
    pub hide: Vec<String>,
    /// Default stores not hidden.
    pub unhide: Vec<String>,
    /// Stores commands may read (read-only).
    pub grants: Vec<String>,
    /// Host Unix sockets commands may connect to.
    pub sockets: Vec<String>,
    /// Commands refuse to run without every layer of confinement.
    pub require_full: bool,
}

impl From<&sluice_core::SandboxSettings> for SandboxSettingsDto {
    fn from(s: &sluice_core::SandboxSettings) -> SandboxSettingsDto {
        let text =
            |v: &[sluice_core::HostPath]| v.iter().map(|p| crate::visible(p.as_str())).collect();
        SandboxSettingsDto {
            hide: text(&s.hide),
            unhide: text(&s.unhide),
            grants: text(&s.grants),
            sockets: text(&s.sockets),
            require_full: s.require_full,
        }
    }
}

impl SandboxSettingsDto {
    /// The settings, every path checked; a bad one is an error naming it.
    pub fn parse(&self) -> Result<sluice_core::SandboxSettings, sluice_core::Failure> {
        let paths = |v: &[String]| -> Result<Vec<sluice_core::HostPath>, sluice_core::Failure> {
            v.iter()
                .map(|p| sluice_core::HostPath::parse(p).map_err(sluice_core::Failure::invalid))
                .collect()
        };
        Ok(sluice_core::SandboxSettings {
            hide: paths(&self.hide)?,
            unhide: paths(&self.unhide)?,
            grants: paths(&self.grants)?,
            sockets: paths(&self.sockets)?,
            require_full: self.require_full,
        })
    }
}

/// One promise of the sandbox and whether it holds on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GuaranteeDto {
    pub what: String,
    pub holds: bool,
}

/// A path of a project's sandbox lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPathDto {
    pub path: String,
    /// What it holds, for a default credential store.
    pub holds: Option<String>,
    /// On the default list (else added by the user).
    pub default: bool,
    /// Exists on this machine.
    pub present: bool,
}

/// The sandbox a project's commands run in here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxDto {
    /// Commands get their own namespaces (else the Landlock and seccomp fallback).
    pub namespaces: bool,
    /// Every layer holds here.
    pub full: bool,
    pub summary: String,
    pub guarantees: Vec<GuaranteeDto>,
    /// What commands never read: the defaults the project keeps and its own additions.
    pub hidden: Vec<SandboxPathDto>,
    pub unhidden: Vec<SandboxPathDto>,
    pub grants: Vec<SandboxPathDto>,
    pub sockets: Vec<String>,
    /// Shown beside every opted-in socket.
    pub socket_warning: String,
    pub require_full: bool,
    /// Why the project's commands would be refused here, if they would.
    pub refusal: Option<String>,
    /// The settings as stored, to edit.
    pub settings: SandboxSettingsDto,
}

impl From<&Project> for SandboxDto {
    fn from(p: &Project) -> SandboxDto {
        let v = sluice_engine::sandbox::view(p);
        let paths = |v: &[sluice_engine::HiddenEntry]| {
            v.iter()
                .map(|e| SandboxPathDto {
                    path: crate::visible(&e.path),
                    holds: e.holds.map(str::to_owned),
                    default: e.default,
                    present: e.present,
                })
                .collect()
        };
        SandboxDto {
            namespaces: v.namespaces,
            full: v.full,
            summary: v.summary,
            guarantees: v
                .guarantees
                .iter()
                .map(|g| GuaranteeDto { what: g.what.to_owned(), holds: g.holds })
                .collect(),
            hidden: paths(&v.hidden),
            unhidden: paths(&v.unhidden),
            grants: paths(&v.grants),
            sockets: v.sockets.iter().map(|s| crate::visible(s)).collect(),
            socket_warning: sluice_engine::SOCKET_WARNING.to_owned(),
            require_full: v.require_full,
            refusal: v.refusal,
            settings: SandboxSettingsDto::from(&p.sandbox),
        }
    }
}

/// Sets a project's network for commands, or `null` for the mode's default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SetNetwork {
    pub id: String,
    pub network: Option<Net>,
}

/// Which changes in a project ask the user first (`true`) or run without asking (`false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalPolicy {
    /// Deleting files, or moving them away from their path. Default: ask.
    pub ask_deletes: bool,
    /// Creating or changing files. Default: allow.
    pub ask_writes: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SetPolicy {
    pub id: String,
    /// `null` keeps the current setting.
    pub ask_deletes: Option<bool>,
    pub ask_writes: Option<bool>,
}

impl From<&Project> for ProjectDto {
    fn from(p: &Project) -> ProjectDto {
        let (status, reason) = match &p.state {
            ProjectState::Available => (ProjectStatus::Available, None),
            ProjectState::Disabled => (ProjectStatus::Disabled, None),
            ProjectState::RootLost(r) => (ProjectStatus::RootLost, Some(r.clone())),
        };
        ProjectDto {
            id: p.id.as_str().to_owned(),
            name: p.name.clone(),
            root: p.root.display().to_string(),
            access: p.access.into(),
            exec: p.exec.into(),
            status,
            reason,
            shield: p.shield_patterns.clone(),
            autorun: p
                .autorun_rules
                .as_ref()
                .map(|rules| rules.iter().map(AutoRunRuleDto::from).collect()),
            policy: ApprovalPolicy { ask_deletes: p.ask_deletes, ask_writes: p.ask_writes },
            network: p.network.map(Net::from),
            network_mode: sluice_engine::NetworkSetting::of_project(p).mode.into(),
            sandbox: SandboxDto::from(p),
            show_git_emails: p.git_emails == sluice_core::GitEmails::Show,
            run_git_hooks: p.git_hooks == sluice_core::GitHooks::Sandbox,
            worktree_of: p.worktree_of.as_ref().map(|id| id.to_string()),
            created_ms: p.created_ms,
        }
    }
}

/// What a change to an auto-run path gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum AutoRunActionDto {
    /// The user approves it first, whatever the approval policy.
    Ask,
    /// Refused through assistants, approved or not.
    Refuse,
}

impl From<AutoRunAction> for AutoRunActionDto {
    fn from(a: AutoRunAction) -> AutoRunActionDto {
        match a {
            AutoRunAction::Ask => AutoRunActionDto::Ask,
            AutoRunAction::Refuse => AutoRunActionDto::Refuse,
        }
    }
}

impl From<AutoRunActionDto> for AutoRunAction {
    fn from(a: AutoRunActionDto) -> AutoRunAction {
        match a {
            AutoRunActionDto::Ask => AutoRunAction::Ask,
            AutoRunActionDto::Refuse => AutoRunAction::Refuse,
        }
    }
}

/// One entry of a project's auto-run list: paths another program runs on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AutoRunRuleDto {
    /// A glob with the shield's rules (no `/`: a name at any depth; `X/**` covers the folder).
    pub pattern: String,
    pub action: AutoRunActionDto,
    /// Which program runs it ("VS Code", "direnv").
    pub program: String,
    /// What happens when it changes, one line, shown on the approval.
    pub consequence: String,
}

impl From<&AutoRunRule> for AutoRunRuleDto {
    fn from(r: &AutoRunRule) -> AutoRunRuleDto {
        AutoRunRuleDto {
            pattern: r.pattern.clone(),
            action: r.action.into(),
            program: r.program.clone(),
            consequence: r.consequence.clone(),
        }
    }
}

impl From<AutoRunRuleDto> for AutoRunRule {
    fn from(r: AutoRunRuleDto) -> AutoRunRule {
        AutoRunRule {
            pattern: r.pattern.trim().to_owned(),
            action: r.action.into(),
            program: r.program.trim().to_owned(),
            consequence: r.consequence.trim().to_owned(),
        }
    }
}

/// A path an approval's change touches that another program runs on its own. Deceptive
/// characters already appear as `⟨U+202E⟩`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AutoRunHitDto {
    pub path: String,
    pub program: String,
    /// What happens, one line: "VS Code runs tasks marked runOn folderOpen when you open the
    /// folder".
    pub consequence: String,
}

impl From<&AutoRunHit> for AutoRunHitDto {
    fn from(h: &AutoRunHit) -> AutoRunHitDto {
        AutoRunHitDto {
            path: crate::visible(&h.path),
            program: crate::visible(&h.program),
            consequence: crate::visible(&h.consequence),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AddProject {
    /// The folder's absolute path (from the picker or typed).
    pub path: String,
    /// Display name; the folder's name when empty.
    pub name: Option<String>,
    pub access: Access,
    pub exec: Exec,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SetModes {
    pub id: String,
    pub access: Option<Access>,
    pub exec: Option<Exec>,
}
