//! The shapes that cross into the window. Field names are camelCase in TypeScript; times are
//! milliseconds since the Unix epoch as plain numbers.

use serde::{Deserialize, Serialize};
use sluice_core::{
    AccessMode, AutoRunAction, AutoRunHit, AutoRunRule, ExecMode, NetworkMode, ProjectState,
};
use sluice_engine::{
    ApprovalRecord, ApprovalState, AuditEntry, AuditOutcome, Project, TokenRecord,
};
use ts_rs::TS;

/// Every error the window receives: a stable code to branch on and a message to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct IpcError {
    /// An [`sluice_core::ErrorCode`]'s wire form (a checked union in TypeScript).
    #[ts(type = "ErrorCode")]
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Exec {
    Off,
    Safe,
    Project,
    Any,
}

impl From<AccessMode> for Access {
    fn from(m: AccessMode) -> Access {
        match m {
            AccessMode::ReadOnly => Access::ReadOnly,
            AccessMode::ReadWrite => Access::ReadWrite,
        }
    }
}

impl From<Access> for AccessMode {
    fn from(m: Access) -> AccessMode {
        match m {
            Access::ReadOnly => AccessMode::ReadOnly,
            Access::ReadWrite => AccessMode::ReadWrite,
        }
    }
}

impl From<ExecMode> for Exec {
    fn from(m: ExecMode) -> Exec {
        match m {
            ExecMode::Off => Exec::Off,
            ExecMode::Safe => Exec::Safe,
            ExecMode::Project => Exec::Project,
            ExecMode::Any => Exec::Any,
        }
    }
}

/// What a project's commands may reach: nothing, only the package registries, or anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Net {
    Off,
    Registries,
    On,
}

impl From<NetworkMode> for Net {
    fn from(m: NetworkMode) -> Net {
        match m {
            NetworkMode::Off => Net::Off,
            NetworkMode::Registries => Net::Registries,
            NetworkMode::On => Net::On,
        }
    }
}

impl From<Net> for NetworkMode {
    fn from(m: Net) -> NetworkMode {
        match m {
            Net::Off => NetworkMode::Off,
            Net::Registries => NetworkMode::Registries,
            Net::On => NetworkMode::On,
        }
    }
}

/// A host the `registries` network reaches, and what it serves when it is a known registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RegistryDto {
    pub host: String,
    pub serves: Option<String>,
}

impl From<Exec> for ExecMode {
    fn from(m: Exec) -> ExecMode {
        match m {
            Exec::Off => ExecMode::Off,
            Exec::Safe => ExecMode::Safe,
            Exec::Project => ExecMode::Project,
            Exec::Any => ExecMode::Any,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SecretInfo {
    /// Whether the install secret lives in the OS keychain.
    pub in_keychain: bool,
    /// The keychain's name, or the fallback file's path.
    pub location: String,
    /// Why the keychain is not used, when it is not.
    pub reason: Option<String>,
}

/// Sealed state that does not verify: changed in the database without the install secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IntegrityFindingDto {
    /// Stable: `project-seal`, `allow-rule-seal`, `token-seal`, `stop-seal`, `pause-seal`,
    /// `audit-head-seal`, `seal-marker`, `seal-reset` (the database was put back to before
    /// sealing: everything sealed in it is held broken).
    pub code: String,
    /// The project's or token's id, the rule's number, or the record's key.
    pub subject: String,
    /// What was found and what Sluice does about it, naming the project, rule or token.
    pub message: String,
}

impl From<&sluice_engine::IntegrityFinding> for IntegrityFindingDto {
    fn from(f: &sluice_engine::IntegrityFinding) -> IntegrityFindingDto {
        IntegrityFindingDto {
            code: f.kind.code().to_owned(),
            subject: f.subject.clone(),
            message: f.message.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppState {
    /// AI access is paused (also true while stopped: a stop pauses too).
    pub paused: bool,
    /// The emergency stop is on: every AI request is refused until the user resumes.
    pub stopped: bool,
    pub port: u16,
    pub mcp_url: String,
    pub data_dir: String,
    pub secret: SecretInfo,
    pub version: String,
    /// How commands are confined on this system (namespaces and Landlock), one sentence.
    pub confinement: String,
    /// Commands get their own namespaces here (else the Landlock and seccomp fallback).
    pub namespaces: bool,
    /// What the sandbox promises, and whether each promise holds here.
    pub guarantees: Vec<GuaranteeDto>,
    /// The credential stores on this machine that no command can read (the home as `~`).
    pub hidden_from_jobs: Vec<String>,
    /// The hosts projects on the `registries` network reach.
    pub registries: Vec<RegistryDto>,
    /// Whether `registries` can be enforced here (it needs jobs in namespaces).
    pub registries_available: bool,
    /// What in the database was changed outside Sluice (empty when every seal verifies).
    pub integrity: Vec<IntegrityFindingDto>,
}

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScopeEntry {
    pub id: String,
    /// The project's name, or `null` when the project was removed since.
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenDto {
    pub id: String,
    pub label: String,
    /// `null`: every project.
    pub scope: Option<Vec<ScopeEntry>>,
    #[ts(type = "number")]
    pub created_ms: i64,
    #[ts(type = "number | null")]
    pub last_used_ms: Option<i64>,
    #[ts(type = "number | null")]
    pub expires_ms: Option<i64>,
    #[ts(type = "number | null")]
    pub revoked_ms: Option<i64>,
    /// The limit the assistant put on this token itself (`drop_privileges`): `read-only` or
    /// `paused`; `null` when none. Only the user lifts it (`restore_token`).
    pub self_limit: Option<String>,
    #[ts(type = "number | null")]
    pub self_limited_ms: Option<i64>,
}

impl TokenDto {
    pub(crate) fn new(t: &TokenRecord, names: &[(String, String)]) -> TokenDto {
        TokenDto {
            id: t.id.as_str().to_owned(),
            label: t.label.clone(),
            scope: t.scope.as_ref().map(|ids| {
                ids.iter()
                    .map(|id| ScopeEntry {
                        id: id.as_str().to_owned(),
                        name: name_of(names, id.as_str()),
                    })
                    .collect()
            }),
            created_ms: t.created_ms,
            last_used_ms: t.last_used_ms,
            expires_ms: t.expires_ms,
            revoked_ms: t.revoked_ms,
            self_limit: t.self_limit.map(|(l, _)| l.as_str().to_owned()),
            self_limited_ms: t.self_limit.map(|(_, at)| at),
        }
    }
}

pub(crate) fn name_of(names: &[(String, String)], id: &str) -> Option<String> {
    names.iter().find(|(i, _)| i == id).map(|(_, n)| n.clone())
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CreateToken {
    pub label: String,
    /// Project ids or names; `null` for every project.
    pub scope: Option<Vec<String>>,
    /// `null`: never expires.
    pub expires_in_days: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientSnippetDto {
    pub client: String,
    pub title: String,
    pub target: String,
    pub text: String,
    pub holds_token: bool,
    /// A one-click install link (Cursor, VS Code, VS Code Insiders); never carries the token.
    pub link: Option<String>,
    /// Exactly what the link installs (the server entry, as JSON), shown beside it.
    pub link_installs: Option<String>,
    /// Whether the token lies in plain text in the client's file when set up this way.
    pub plain_text: bool,
    /// Something to do besides pasting (set a variable, answer a prompt).
    pub note: Option<String>,
}

/// A new token: the plaintext exists only in this value, shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CreatedToken {
    pub token: TokenDto,
    pub secret: String,
    pub snippets: Vec<ClientSnippetDto>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Ok,
    Denied,
    Error,
}

impl From<Outcome> for AuditOutcome {
    fn from(o: Outcome) -> AuditOutcome {
        match o {
            Outcome::Ok => AuditOutcome::Ok,
            Outcome::Denied => AuditOutcome::Denied,
            Outcome::Error => AuditOutcome::Error,
        }
    }
}

impl From<AuditOutcome> for Outcome {
    fn from(o: AuditOutcome) -> Outcome {
        match o {
            AuditOutcome::Ok => Outcome::Ok,
            AuditOutcome::Denied => Outcome::Denied,
            AuditOutcome::Error => Outcome::Error,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditQuery {
    /// A project id or name.
    pub project: Option<String>,
    /// A token id.
    pub token: Option<String>,
    /// A tool or action name, matched exactly.
    pub action: Option<String>,
    pub outcome: Option<Outcome>,
    pub limit: u32,
    /// Entries older than this sequence number (paging back).
    #[ts(type = "number | null")]
    pub before_seq: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryDto {
    #[ts(type = "number")]
    pub seq: u64,
    #[ts(type = "number")]
    pub time_ms: i64,
    /// The token's label, or "local user".
    pub actor: String,
    pub by_assistant: bool,
    pub token_id: Option<String>,
    pub action: String,
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    pub outcome: Outcome,
    pub error_code: Option<String>,
    #[ts(type = "number | null")]
    pub duration_ms: Option<u64>,
    /// A line Sluice wrote about the entry: for an approval, what would run on its own.
    pub detail: Option<String>,
}

impl AuditEntryDto {
    pub(crate) fn new(e: &AuditEntry, names: &[(String, String)]) -> AuditEntryDto {
        let r = &e.record;
        AuditEntryDto {
            seq: e.seq,
            time_ms: r.time_ms,
            actor: r.actor.clone(),
            by_assistant: matches!(r.actor_kind, sluice_engine::ActorKind::Mcp),
            token_id: r.token_id.as_ref().map(|t| t.as_str().to_owned()),
            action: r.action.clone(),
            project_id: r.project_id.as_ref().map(|p| p.as_str().to_owned()),
            project_name: r.project_id.as_ref().and_then(|p| name_of(names, p.as_str())),
            outcome: r.outcome.into(),
            error_code: r.error_code.clone(),
            duration_ms: r.duration_ms,
            detail: r.detail.as_deref().map(crate::visible),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditPage {
    pub entries: Vec<AuditEntryDto>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChainStatus {
    #[ts(type = "number")]
    pub entries: u64,
    pub intact: bool,
    /// The first entry that does not verify.
    #[ts(type = "number | null")]
    pub break_at: Option<u64>,
    pub break_reason: Option<String>,
}

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

/// Whether a port on 127.0.0.1 could serve Sluice's MCP endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum PortStatus {
    /// Nothing listens there: Sluice could use it.
    Free,
    /// Another program listens there.
    InUse,
    /// This Sluice's MCP server listens there.
    ThisSluice,
    /// This system does not let Sluice listen there (e.g. a port below 1024).
    Unavailable,
}

/// The answer of `check_port`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PortCheck {
    pub port: u16,
    pub status: PortStatus,
    /// One sentence to show.
    pub message: String,
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

/// Engine events, as the window receives them on the `engine-event` channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum UiEvent {
    ProjectsChanged,
    TokensChanged,
    AccessChanged {
        paused: bool,
    },
    ProjectRootLost {
        id: String,
        reason: String,
    },
    /// An MCP client asks for something that needs the user's decision.
    ApprovalRequested {
        id: String,
    },
    /// An approval ended: `approved`, `denied`, `expired` or `withdrawn`.
    ApprovalDecided {
        id: String,
        state: String,
    },
    /// The shell asks the window to show a view (a notification or the tray was clicked).
    OpenView {
        view: String,
    },
    /// A job started or ended (`state`).
    JobChanged {
        id: String,
        state: crate::JobStateDto,
    },
    /// A running job wrote output or was sampled (CPU, memory); coalesced by the shell.
    JobActivity {
        id: String,
    },
}

/// The event channel's name, shared by the shell and the window.
pub const EVENT_CHANNEL: &str = "engine-event";
