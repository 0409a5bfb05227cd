//! Execution and the emergency stop. The engine owns one [`Jobs`] registry; a tool call asks
//! [`Engine::plan_exec`] for a verdict (the project's execution mode, its `package.json` facts,
//! a PATH without project folders, the user's exact allow rules), asks the human when the verdict
//! says so, and starts the resolved command with [`Engine::job_request`].
//!
//! The emergency stop is a persisted flag (`stopped` in the kv table): while it is set every MCP
//! request is refused, and the serving engine kills every job as soon as it notices the flag —
//! at once when the stop comes from this process, within one watcher tick when it comes from
//! another (`sluice stop` in a terminal). Only an explicit resume lifts it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_core::ChangeTally;
use sluice_core::{ErrorCode, ExecMode, Failure, NetworkMode, ProjectId};
use sluice_exec::{
    AllowRule, CommandSpec, Enforcement, Form, HostList, JobRequest, Jobs, Network, Policy,
    ProjectFacts, ResolvedCommand, Risk, Sandbox, SandboxPolicy, TrustedPath, Verdict,
};
use sluice_store::{ApprovalRecord, ApprovalState, Project, RuleOrigin};

use crate::{AuditOutcome, Engine, EngineEvent, KV_PAUSED, ProjectHandle, lock, store_failure};

pub(crate) const KV_STOPPED: &str = "stopped";
/// The user's list of registries (JSON array of hosts); absent: the default list.
const KV_REGISTRIES: &str = "network.registries";

/// Who denied the approvals an emergency stop ended.
pub const EMERGENCY_STOP: &str = "emergency stop";

/// A rule waiting for an "always allow" decision: kv key prefix, by approval fingerprint (hex).
const KV_PENDING_RULE: &str = "pending-rule:";

/// What an emergency stop ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopSummary {
    pub killed_jobs: usize,
    pub cancelled_queued: usize,
    pub denied_approvals: usize,
}

/// The outbound network of a project's jobs: the user's setting and what applies.
///
/// Without a setting, `project` mode gets `registries` and every other mode `off`. `project`
/// mode runs the project's own build and test entry points, whose toolchains fetch dependencies
/// (cargo, npm, pip, go, gradle, maven, dotnet) from their registries: with no network nearly
/// every first build would fail, and with the whole network a build script could reach any
/// host; the registries are exactly what it needs ([`sluice_exec::egress`]). `any` mode runs
/// arbitrary programs, so nothing leaves unless the user says so; `safe` mode's inspections
/// need no network. Where jobs cannot run in namespaces, `registries` cannot be enforced and
/// such jobs are refused with a message that says so: the user then chooses `off` or `on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct NetworkSetting {
    /// The user's explicit choice; `None` follows the execution mode's default.
    pub configured: Option<NetworkMode>,
    /// What the project's jobs get.
    pub mode: NetworkMode,
}

impl NetworkSetting {
    /// What a project in execution mode `exec` gets without a choice of the user's.
    pub fn default_for(exec: ExecMode) -> NetworkMode {
        if exec == ExecMode::Project { NetworkMode::Registries } else { NetworkMode::Off }
    }

    pub fn of(exec: ExecMode, configured: Option<NetworkMode>) -> NetworkSetting {
        NetworkSetting { configured, mode: configured.unwrap_or(NetworkSetting::default_for(exec)) }
    }

    /// For a project, from its stored setting and mode.
    pub fn of_project(project: &Project) -> NetworkSetting {
        NetworkSetting::of(project.exec, project.network)
    }

    /// The mode, and whether by default: "off (default for any mode)".
    pub fn describe(&self, exec: ExecMode) -> String {
        let state = self.mode;
        match self.configured {
            Some(_) => format!("{state} (set by the user)"),
            None => format!("{state} (default for {exec} mode)"),
        }
    }
}

/// An allow rule as the user sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleInfo {
    pub id: i64,
    pub project_id: ProjectId,
    pub rule: AllowRule,
    pub created_ms: i64,
    /// Who added it: where the user chose "always allow", and which assistant asked.
    pub origin: RuleOrigin,
}

/// What the engine knows about the risk of what an approval would do — only what it can back:
/// for a command, the analysis the verdict came from; for a change to files, the effects its
/// summary lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalRisk {
    /// A command waiting for its decision, as [`sluice_exec::assess`] classed it when asked.
    Command { risk: Risk, form: Form, reason: String },
    /// A change to files.
    Change(ChangeTally),
}

/// Who ended pending approvals without deciding each one: the user by another act (an
/// emergency stop, a revoked token), or the assistant itself (`drop_privileges`). Never a
/// decision to approve; the audit log records the denial on that side, under that name.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EndedBy<'a> {
    User(&'a str),
    Assistant(&'a str),
}

/// The analysis of an offered command, kept beside its rule while the approval waits.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Assessed {
    risk: Risk,
    form: Form,
    reason: String,
}

/// The command behind a waiting approval, as the kv table keeps it.
#[derive(serde::Deserialize)]
struct Offered {
    project: String,
    rule: AllowRule,
    /// Absent in an entry written by a Sluice before risk classes were kept.
    #[serde(default)]
    assessed: Option<Assessed>,
}

impl RuleInfo {
    /// The command the rule allows, one line.
    pub fn display(&self) -> String {
        let cmd = sluice_exec::ResolvedCommand {
            program: self.rule.program.clone(),
            args: self.rule.args.clone(),
            cwd: self.rule.cwd.clone(),
            env: self.rule.env.clone(),
            timeout: None,
        };
        let mut s = cmd.describe();
        if self.rule.content.is_some() {
            s.push_str("  (while its scripts or task files stay as approved)");
        }
        s
    }
}

pub(crate) fn refuse_exec_off(handle: &ProjectHandle) -> Result<(), Failure> {
    if handle.self_limited {
        return Err(Failure::new(
            ErrorCode::Forbidden,
            "this token limited itself to read-only (drop_privileges), so it runs nothing; only \
             the user can restore it in Sluice",
        ));
    }
    if handle.exec == ExecMode::Off {
        return Err(Failure::new(
            ErrorCode::Forbidden,
            format!(
                "execution is off for project {:?}; only the user can turn it on in Sluice",
                handle.name
            ),
        ));
    }
    Ok(())
}

/// What confines a job with network off on this system (for `sluice doctor`, the Settings view
/// and the approval card): the namespaces and Landlock; without namespaces, `network_rules`
/// false means projects with network off refuse to run.
pub fn job_confinement() -> sluice_exec::LandlockReport {
    sluice_exec::confinement(true, true)
}

/// How many stored (past) jobs a list shows at most.
pub const STORED_JOBS_LISTED: usize = 100;

/// The folder whose `package.json` scripts apply to a command: its working folder when that
/// is a real folder inside the project, else the root (the policy then refuses the folder).
fn facts_dir(root: &Path, cwd: &str) -> PathBuf {
    let cwd = if cwd == "." { "" } else { cwd };
    let Ok(rel) = sluice_guard::RelPath::parse(cwd) else { return root.to_path_buf() };
    if rel.as_str().is_empty() {
        return root.to_path_buf();
    }
    match std::fs::canonicalize(root.join(rel.as_str())) {
        Ok(dir) if dir.starts_with(root) && dir.is_dir() => dir,
        _ => root.to_path_buf(),
    }
}

fn offered_key(fingerprint: &[u8; 32]) -> String {
    format!("{KV_PENDING_RULE}{}", blake3::Hash::from(*fingerprint).to_hex())
}

fn to_store(rule: &AllowRule) -> (Vec<String>, String, Vec<(String, String)>) {
    let mut argv = vec![rule.program.to_string_lossy().into_owned()];
    argv.extend(rule.args.iter().cloned());
    (argv, rule.cwd.clone(), rule.env.clone())
}

fn from_store(r: sluice_store::AllowRule) -> Option<RuleInfo> {
    let mut argv = r.argv.into_iter();
    let program = PathBuf::from(argv.next()?);
    Some(RuleInfo {
        id: r.id,
        project_id: r.project_id,
        rule: AllowRule {
            program,
            args: argv.collect(),
            cwd: r.cwd,
            env: r.env,
            content: r.content,
        },
        created_ms: r.created_ms,
        origin: r.origin,
    })
}

impl Engine {
    /// The job registry (status, logs, cancel; the MCP layer starts jobs through it).
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }

    /// Decides whether `spec` may run in this project, and whether the human must be asked.
    pub fn plan_exec(
        &self,
        handle: &ProjectHandle,
        spec: &CommandSpec,
    ) -> Result<Verdict, Failure> {
        refuse_exec_off(handle)?;
        // A project that requires full confinement asks no one about a command it cannot run.
        let project = self.find_project(handle.id.as_str())?;
        if let Some(why) = crate::sandbox::refusal(&project.sandbox) {
            return Err(Failure::new(ErrorCode::ConfinementUnavailable, why));
        }
        let root = handle.workspace.root().path().to_path_buf();
        let dir = facts_dir(&root, &spec.cwd);
        let mut facts = ProjectFacts::load(&dir);
        facts.pins = sluice_exec::pins::present(&root, &dir);
        let roots: Vec<PathBuf> = self.projects()?.into_iter().map(|p| p.root).collect();
        let trusted = TrustedPath::from_env(&roots);
        let rules: Vec<AllowRule> =
            self.allow_rules(Some(&handle.id))?.into_iter().map(|r| r.rule).collect();
        let policy = Policy { mode: handle.exec, ask_in_project: true, rules: &rules };
        sluice_exec::decide(spec, &facts, &trusted, &policy).map_err(Failure::from)
    }

    /// How to test or build the project (`run_tests` / `run_build`): the command detected from
    /// the manifests of its folder `cwd` (project-relative), which then goes through [`Engine::plan_exec`]
    /// like any other command.
    pub fn detect_toolchain(
        &self,
        handle: &ProjectHandle,
        cwd: &str,
        req: &sluice_exec::detect::DetectRequest<'_>,
    ) -> Result<sluice_exec::detect::Detection, Failure> {
        // Nothing about the project's files is looked at for a project that runs nothing.
        refuse_exec_off(handle)?;
        let root = handle.workspace.root().path().to_path_buf();
        let roots: Vec<PathBuf> = self.projects()?.into_iter().map(|p| p.root).collect();
        sluice_exec::detect::detect(&root, cwd, req, &TrustedPath::from_env(&roots))
            .map_err(Failure::from)
    }

    /// The approval fingerprint of a verdict (the command's BLAKE3 hash).
    pub fn verdict_fingerprint(verdict: &Verdict) -> [u8; 32] {
        blake3::Hash::from_hex(&verdict.fingerprint.0)
            .map(|h| *h.as_bytes())
            .unwrap_or_else(|_| *blake3::hash(verdict.fingerprint.0.as_bytes()).as_bytes())
    }

    /// The network setting of a project's jobs (shown in approval prompts).
    pub fn network_for(&self, handle: &ProjectHandle) -> Result<NetworkSetting, Failure> {
        let project = self.find_project(handle.id.as_str())?;
        Ok(NetworkSetting::of(handle.exec, project.network))
    }

    /// Sets a project's network: `Some(mode)`, or `None` for the execution mode's default. Jobs
    /// started afterwards get it; running ones keep the confinement they started with.
    pub fn set_network(
        &self,
        reference: &str,
        network: Option<NetworkMode>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_network(&p.id, network).map_err(store_failure)?;
        self.after_change("project.network", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    /// The hosts a `registries` network reaches: the user's list, or the default one.
    pub fn registries(&self) -> Result<HostList, Failure> {
        let Some(stored) = self.store.kv_get(KV_REGISTRIES).map_err(store_failure)? else {
            return Ok(HostList::registries());
        };
        let hosts: Vec<String> = serde_json::from_str(&stored).map_err(|_| {
            Failure::new(ErrorCode::Internal, "the stored list of registries is not a list")
        })?;
        HostList::parse(&hosts).map_err(|e| Failure::new(ErrorCode::Internal, e))
    }

    /// Sets the list every `registries` project reaches (`None`: the default list); each entry
    /// is a host name or `*.domain`. Jobs started afterwards get it.
    pub fn set_registries(&self, hosts: Option<Vec<String>>) -> Result<HostList, Failure> {
        match hosts {
            None => {
                self.store.kv_delete(KV_REGISTRIES).map_err(store_failure)?;
            }
            Some(hosts) => {
                let list = HostList::parse(&hosts)
                    .map_err(|e| Failure::new(ErrorCode::InvalidArgument, e))?;
                let json = serde_json::to_string(list.hosts())
                    .map_err(|e| Failure::new(ErrorCode::Internal, e.to_string()))?;
                self.store.kv_set(KV_REGISTRIES, &json).map_err(store_failure)?;
            }
        }
        self.after_change("network.registries", None);
        self.registries()
    }

    /// Everything needed to start the verdict's command in this project: the project's network
    /// setting, Landlock required (never silently weaker), private folders in the data folder,
    /// and the rest of the data folder out of reach. With network off on a kernel that cannot
    /// block it, nothing runs.
    pub fn job_request(
        &self,
        handle: &ProjectHandle,
        verdict: &Verdict,
    ) -> Result<JobRequest, Failure> {
        self.command_request(handle, verdict.resolved.clone())
    }

    /// [`Engine::job_request`] for a command no verdict decided: one Sluice runs on the user's
    /// standing decision (a git hook of a project whose hooks the user allowed).
    pub fn command_request(
        &self,
        handle: &ProjectHandle,
        command: ResolvedCommand,
    ) -> Result<JobRequest, Failure> {
        let root = handle.workspace.root().path().to_path_buf();
        let roots: Vec<PathBuf> = self.projects()?.into_iter().map(|p| p.root).collect();
        let project = self.find_project(handle.id.as_str())?;
        let network = NetworkSetting::of(handle.exec, project.network);
        let confinement = job_confinement();
        if network.mode == NetworkMode::Registries && !confinement.serves_registries() {
            return Err(Failure::new(
                ErrorCode::Forbidden,
                format!(
                    "project {:?} reaches only the package registries (network \"registries\"), \
                     which needs {}, and here {}; so nothing ran. Only the user can change this \
                     project's network to off or on in Sluice.",
                    handle.name,
                    confinement.registries_need(),
                    confinement.summary
                ),
            ));
        }
        if network.mode == NetworkMode::Off {
            let landlock = job_confinement();
            let blocks = landlock.namespaces || landlock.network_rules;
            if !blocks || landlock.status != Enforcement::FullyEnforced {
                return Err(Failure::new(
                    ErrorCode::Forbidden,
                    format!(
                        "network is off for project {:?}, but this system cannot block a job's \
                         network ({}), so nothing ran. Only the user can change this project's \
                         network setting in Sluice.",
                        handle.name, landlock.summary
                    ),
                ));
            }
        }
        Ok(JobRequest {
            project: handle.id.as_str().to_owned(),
            command,
            sandbox: Sandbox {
                project_root: root,
                state_dir: self.state_dir(&handle.id).join("exec"),
                hidden: vec![self.data_dir.clone()],
                network: match network.mode {
                    NetworkMode::Off => Network::Off,
                    NetworkMode::Registries => Network::Registries(Arc::new(self.registries()?)),
                    NetworkMode::On => Network::Allowed,
                },
                policy: SandboxPolicy::Require,
                namespaces: true,
                limits: Default::default(),
                shield: Some(handle.workspace.shield().clone()),
                exposure: crate::sandbox::exposure(&project.sandbox),
            },
            path: TrustedPath::from_env(&roots),
            data_dir: Some(self.data_dir.clone()),
            // A job that reached the keychain (a session bus) could print it; it never leaves.
            secrets: vec![self.secret.stored_form().to_string()],
            owner: None,
            interactive: None,
            publish: Vec::new(),
            checkpoint: None,
            shown_as: None,
        })
    }

    /// Refuses when stopped or paused, and brings the job registry in line with the persisted
    /// stop flag first (a `sluice resume` in another process lifts the registry's stop here).
    pub fn check_exec_start(&self) -> Result<(), Failure> {
        // Under the gate, a stop in this process either completed before this check (which then
        // refuses) or sets the registry's stop after it (and `Jobs::start` refuses or the stop
        // kills what started): it cannot be undone by the resume below.
        let _gate = lock(&self.exec_gate);
        self.check_access()?;
        if self.jobs.is_stopped() {
            self.jobs.resume();
        }
        Ok(())
    }

    // ----- emergency stop ---------------------------------------------------------------------

    pub fn is_stopped(&self) -> Result<bool, Failure> {
        Ok(self.refresh()?.stopped)
    }

    /// Emergency stop: persists the stop (it survives restarts), denies every pending approval,
    /// and kills every job of this engine (blocks until their trees are dead; call it from a
    /// blocking context in async code).
    pub fn emergency_stop(&self) -> Result<StopSummary, Failure> {
        let _gate = lock(&self.exec_gate);
        self.store.set_sealed_flag(KV_STOPPED, true).map_err(store_failure)?;
        {
            let mut cache = lock(&self.cache);
            cache.stopped = true;
            cache.data_version = i64::MIN + 1;
        }
        let report = self.jobs.stop_all();
        let denied = self.deny_pending_for_stop(sluice_store::now_ms());
        crate::paths::nudge(&self.data_dir);
        self.record_human("stop", None, AuditOutcome::Ok, None);
        self.emit(EngineEvent::AccessChanged { paused: true });
        tracing::warn!(
            killed = report.killed_jobs,
            queued = report.cancelled_queued,
            denied,
            "emergency stop"
        );
        Ok(StopSummary {
            killed_jobs: report.killed_jobs,
            cancelled_queued: report.cancelled_queued,
            denied_approvals: denied,
        })
    }

    /// Denies what was pending when the stop was seen, at `seen` (Unix ms): a stop noticed
    /// late (the watcher read it, then the user resumed) must not deny what an assistant asked
    /// after the resume. Nothing can be asked while the stop is in force.
    fn deny_pending_for_stop(&self, seen: i64) -> usize {
        let by = EndedBy::User(EMERGENCY_STOP);
        self.deny_pending(|a| a.created_ms <= seen, "the user pressed the emergency stop", by)
    }

    /// A stop made by another process, read at `seen`: kills every job of this engine and
    /// denies what was pending then.
    pub(crate) fn apply_stop(&self, seen: i64) {
        let report = self.jobs.stop_all();
        let denied = self.deny_pending_for_stop(seen);
        tracing::warn!(killed = report.killed_jobs, denied, "emergency stop noticed");
    }

    /// Denies every pending approval `which` selects, with `reason`, ended `by` the user's act or
    /// the assistant's own; wakes the calls waiting for them and records each in the audit log
    /// on the side that ended it. Returns how many were denied.
    pub(crate) fn deny_pending(
        &self,
        which: impl Fn(&sluice_store::ApprovalRecord) -> bool,
        reason: &str,
        by: EndedBy<'_>,
    ) -> usize {
        let name = match by {
            EndedBy::User(name) | EndedBy::Assistant(name) => name,
        };
        let Ok(all) = self.store.list_approvals(0) else { return 0 };
        let mut denied = 0;
        for a in all.iter().filter(|a| a.state == ApprovalState::Pending && which(a)) {
            let state = ApprovalState::Denied(Some(reason.to_owned()));
            if let Ok(true) = self.store.decide_approval(&a.id, &state, name) {
                denied += 1;
                match (by, self.store.approval(&a.id)) {
                    (EndedBy::User(_), Ok(Some(d))) => {
                        self.record_approval_decision(&d, AuditOutcome::Denied);
                    }
                    (EndedBy::Assistant(_), Ok(Some(d))) => {
                        self.record_approval_audit(
                            &d,
                            "approval.denied",
                            AuditOutcome::Denied,
                            None,
                        );
                    }
                    _ => {}
                }
                self.emit(EngineEvent::ApprovalDecided { id: a.id.clone(), state: "denied" });
            }
        }
        if denied > 0 {
            self.decided.notify_waiters();
        }
        denied
    }

    /// Lifts a pause and an emergency stop.
    pub fn resume(&self) -> Result<(), Failure> {
        let _gate = lock(&self.exec_gate);
        self.store.set_sealed_flag(KV_STOPPED, false).map_err(store_failure)?;
        self.store.set_sealed_flag(KV_PAUSED, false).map_err(store_failure)?;
        {
            let mut cache = lock(&self.cache);
            cache.stopped = false;
            cache.paused = false;
            cache.data_version = i64::MIN + 1;
        }
        self.jobs.resume();
        crate::paths::nudge(&self.data_dir);
        self.record_human("resume", None, AuditOutcome::Ok, None);
        self.emit(EngineEvent::AccessChanged { paused: false });
        Ok(())
    }

    /// Called by the serving engine's watcher: applies a stop made by another process (kills
    /// every job, denies what is pending), lifts the registry's stop after a resume, and kills
    /// the jobs of projects that may no longer run anything (read-only, execution off, disabled,
    /// removed). Blocking.
    pub fn enforce_exec(&self) {
        // Before the read: whatever was asked after a resume this read missed is newer.
        let seen = sluice_store::now_ms();
        let (stopped, projects) = match self.refresh() {
            Ok(cache) => (cache.stopped, cache.projects.clone()),
            Err(_) => return,
        };
        let gate = lock(&self.exec_gate);
        if stopped && !self.jobs.is_stopped() {
            self.apply_stop(seen);
        } else if !stopped && self.jobs.is_stopped() {
            self.jobs.resume();
        }
        drop(gate);
        let mut doomed: Vec<String> = Vec::new();
        for j in self.jobs.list().iter().filter(|j| !j.state.is_final()) {
            let allowed = projects.iter().any(|p| {
                p.id.as_str() == j.project && p.state.is_available() && p.exec != ExecMode::Off
            });
            if !allowed && !doomed.contains(&j.project) {
                doomed.push(j.project.clone());
            }
        }
        for project in doomed {
            let n = self.jobs.kill_project(&project);
            tracing::warn!(
                project,
                killed = n,
                "jobs of a project that may no longer run were killed"
            );
        }
    }

    // ----- allow rules --------------------------------------------------------------------------

    /// Remembers the command behind an approval, so an "always allow" decision (possibly made
    /// by another process) can turn it into a rule, and the prompt can say how risky it is (the
    /// analysis the verdict came from).
    pub fn offer_rule(&self, project: &ProjectId, fingerprint: &[u8; 32], verdict: &Verdict) {
        let rule = AllowRule::from_verdict(verdict);
        let assessed =
            Assessed { risk: verdict.risk, form: verdict.form, reason: verdict.reason.clone() };
        let value =
            serde_json::json!({ "project": project.as_str(), "rule": rule, "assessed": assessed })
                .to_string();
        if let Err(err) = self.store.kv_set(&offered_key(fingerprint), &value) {
            tracing::warn!(%err, "could not record the command behind an approval");
        }
    }

    /// Forgets an offered rule (the call ended).
    pub fn withdraw_rule(&self, fingerprint: &[u8; 32]) {
        let _ = self.store.kv_delete(&offered_key(fingerprint));
    }

    /// The exact command behind approval `record` while its call waits (`None` for other
    /// approvals): what "always allow" would turn into a rule.
    pub fn approval_command(&self, record: &ApprovalRecord) -> Option<AllowRule> {
        self.offered_rule(record).ok()
    }

    /// How risky the action behind approval `record` is, when the engine can say: a command
    /// while its call waits, a change to files from the tally it was asked with; `None`
    /// otherwise.
    pub fn approval_risk(&self, record: &ApprovalRecord) -> Option<ApprovalRisk> {
        if let Ok(Some(Assessed { risk, form, reason })) = self.offered(record).map(|o| o.assessed)
        {
            return Some(ApprovalRisk::Command { risk, form, reason });
        }
        record.tally.clone().map(ApprovalRisk::Change)
    }

    /// The command offered behind approval `record`, as a rule (refused for non-commands).
    pub(crate) fn offered_rule(&self, record: &ApprovalRecord) -> Result<AllowRule, Failure> {
        Ok(self.offered(record)?.rule)
    }

    fn offered(&self, record: &ApprovalRecord) -> Result<Offered, Failure> {
        let Some(value) =
            self.store.kv_get(&offered_key(&record.fingerprint)).map_err(store_failure)?
        else {
            return Err(Failure::invalid(format!(
                "approval {} is not for a command; \"always\" applies to commands only",
                record.id
            )));
        };
        let offered: Offered = serde_json::from_str(&value).map_err(|_| Failure::internal())?;
        if offered.project != record.project_id.as_str() {
            return Err(Failure::internal());
        }
        Ok(offered)
    }

    /// Stores an "always allow" rule the human just granted, with who granted it.
    pub(crate) fn add_allow_rule(
        &self,
        project: &ProjectId,
        rule: &AllowRule,
        origin: &RuleOrigin,
    ) -> Result<(), Failure> {
        let (argv, cwd, env) = to_store(rule);
        self.store
            .insert_allow_rule(project, &argv, &cwd, &env, rule.content.as_deref(), origin)
            .map_err(store_failure)?;
        self.record_human("rule.add", Some(project), AuditOutcome::Ok, None);
        Ok(())
    }

    /// The allow rules of one project, or of all.
    pub fn allow_rules(&self, project: Option<&ProjectId>) -> Result<Vec<RuleInfo>, Failure> {
        Ok(self
            .store
            .list_allow_rules(project)
            .map_err(store_failure)?
            .into_iter()
            .filter_map(from_store)
            .collect())
    }

    pub fn remove_allow_rule(&self, id: i64) -> Result<(), Failure> {
        self.store.delete_allow_rule(id).map_err(store_failure)?;
        self.record_human("rule.remove", None, AuditOutcome::Ok, None);
        Ok(())
    }
}

#[cfg(test)]
#[path = "exec_tests.rs"]
mod tests;
