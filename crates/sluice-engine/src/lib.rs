//! The engine: control (authentication, pause, scope, the policy decision point, audit) over the
//! store, the runner and git. One `Engine` serves HTTP, stdio (through HTTP) and the
//! desktop app's tray and window; the CLI drives the same administrative operations.
//!
//! The engine caches projects and tokens and reloads them when another process commits to the
//! database (`PRAGMA data_version`), so `sluice token revoke` or `sluice pause` in a terminal
//! takes effect on the next request without a restart.

mod approvals;
mod audit;
pub mod clients;
pub mod clients_health;
mod events;
mod exec;
mod jobstore;
pub mod logging;
mod paths;
pub mod roots;
pub mod sandbox;
pub mod shutdown;
mod tasks;
mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sluice_core::{
    AccessMode, AutoRunRule, ErrorCode, ExecMode, Failure, ProjectId, ProjectState, SelfLimit,
    TokenId, id::base32, random_bytes,
};
use sluice_runner::{BackupLimits, Mutations, Workspace};
pub use sluice_store::{
    ActorKind, AuditEntry, AuditFilter, ChainReport, Outcome as AuditOutcome, Project,
    SecretPreference, SecretSource, TokenRecord, now_ms,
};
use sluice_store::{AuditRecord, InstallSecret, NewProject, NewToken, RootFingerprint, Store};
pub use sluice_store::{Keychain, connections};
use tokio::sync::broadcast;

pub use approvals::{AskOutcome, AskRequest, DEFAULT_APPROVAL_TTL, Decision};
pub use audit::Durability;
pub use events::EngineEvent;
pub use exec::{
    ApprovalRisk, EMERGENCY_STOP, NetworkSetting, RuleInfo, StopSummary, job_confinement,
};
pub use jobstore::LOST_REASON;
pub use paths::{default_data_dir, engine_file, nudge_file, read_engine_file, write_engine_file};
pub use sluice_exec::{JobLimits, LandlockReport, guarantees};
pub use tasks::{TASK_LOST_REASON, TASK_TTL};
/// What jobs see and never see (for `sluice doctor` and the Settings view).
pub mod job_view {
    pub use sluice_exec::egress::{DEFAULT_REGISTRIES, HostList};
    pub use sluice_exec::hide::credential_stores;
    #[cfg(target_os = "linux")]
    pub use sluice_exec::jail::TOOLCHAINS;
}
pub use sandbox::{HiddenEntry, SOCKET_WARNING, SandboxView, default_hidden};
pub use sluice_core::ChangeTally;
pub use sluice_store::{
    ApprovalRecord, ApprovalState, Channel, JobRow, RuleOrigin, TaskRow, TaskStatus,
};
pub use watch::watch_roots;

/// The default MCP port: fixed, so client configs keep working across restarts.
pub const DEFAULT_PORT: u16 = 7457;

/// How a token is written: `slc_` and 52 base32 characters (256 random bits).
pub const TOKEN_PREFIX: &str = "slc_";
const TOKEN_BODY_LEN: usize = 52;

/// The actor name recorded for decisions made at this computer (CLI, tray, window).
pub const LOCAL_USER: &str = "local user";

/// Where the engine keeps its state and how it finds its secret.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub data_dir: PathBuf,
    pub secret: SecretPreference,
    /// How long an approval waits for the human.
    pub approval_ttl: Duration,
    /// How many jobs run at once, in all and per project, and how many may wait.
    pub job_limits: JobLimits,
}

impl EngineConfig {
    pub fn new(data_dir: PathBuf, secret: SecretPreference) -> EngineConfig {
        EngineConfig {
            data_dir,
            secret,
            approval_ttl: DEFAULT_APPROVAL_TTL,
            job_limits: JobLimits::default(),
        }
    }
}

/// An authenticated MCP client, as the gate found it.
#[derive(Debug, Clone)]
pub struct Caller {
    pub token_id: TokenId,
    pub label: String,
    /// `None`: every project; otherwise only these.
    pub scope: Option<Vec<ProjectId>>,
    /// The limit the token put on itself (`drop_privileges`); a paused token never gets this
    /// far, so here it is at most read-only.
    pub limit: Option<SelfLimit>,
}

impl Caller {
    fn sees(&self, project: &ProjectId) -> bool {
        self.scope.as_ref().is_none_or(|s| s.contains(project))
    }
}

/// What a client may know about a project.
#[derive(Debug, Clone)]
pub struct ProjectSummary {
    pub id: ProjectId,
    pub name: String,
    pub access: AccessMode,
    pub exec: ExecMode,
    pub status: &'static str,
    pub reason: Option<String>,
}

/// A project resolved for one tool call: its modes and an open workspace.
pub struct ProjectHandle {
    pub id: ProjectId,
    pub name: String,
    pub access: AccessMode,
    pub exec: ExecMode,
    /// Deleting or moving files away asks the user first.
    pub ask_deletes: bool,
    /// Creating or changing files asks the user first.
    pub ask_writes: bool,
    /// The caller's token limited itself to read-only (`drop_privileges`): `access` and `exec`
    /// are narrowed to read-only and off whatever the project allows.
    pub self_limited: bool,
    pub workspace: Arc<Workspace>,
}

impl ProjectHandle {
    /// Opens the project's git repository (the project root must be the repository root).
    pub fn repo(&self) -> Result<sluice_git::Repo, sluice_git::GitError> {
        sluice_git::Repo::open(self.workspace.root().path())
    }

    /// Whether the sensitive-file shield hides `path` (project-relative). Unparseable paths are
    /// hidden: when in doubt, keep it out.
    pub fn is_hidden(&self, path: &str) -> bool {
        sluice_guard::RelPath::parse(path).map_or(true, |p| self.workspace.shield().is_shielded(&p))
    }
}

struct Cache {
    data_version: i64,
    projects: Vec<Project>,
    tokens: HashMap<[u8; 32], TokenRecord>,
    paused: bool,
    /// The emergency stop (persisted; only an explicit resume lifts it).
    stopped: bool,
}

pub struct Engine {
    data_dir: PathBuf,
    store: Arc<Store>,
    secret: Arc<InstallSecret>,
    secret_source: SecretSource,
    /// Why the secret is not in the keychain, when it is not.
    secret_reason: Option<String>,
    cache: Mutex<Cache>,
    workspaces: Mutex<HashMap<ProjectId, (i64, Arc<Workspace>)>>,
    /// One `Mutations` per project: it serializes that project's changes.
    mutations: Mutex<HashMap<ProjectId, Arc<Mutations>>>,
    approval_ttl: Duration,
    /// Woken when a decision is made in this process.
    decided: tokio::sync::Notify,
    /// Held while this engine serves, so two engines never serve one data folder.
    serving_lock: Mutex<Option<std::fs::File>>,
    touched: Mutex<HashMap<TokenId, Instant>>,
    events: broadcast::Sender<EngineEvent>,
    /// Every job this engine runs.
    jobs: sluice_exec::Jobs,
    /// Serializes the emergency stop against the last check before a job starts (PE-02).
    exec_gate: Mutex<()>,
    /// Appends to the audit log, batching what may wait ([`audit`]).
    audit: audit::AuditWriter,
}

/// `last_used` is written at most this often per token, so a busy client does not turn every
/// read into a database write.
const TOUCH_INTERVAL: Duration = Duration::from_secs(30);

const KV_PAUSED: &str = "paused";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn store_failure(err: sluice_store::StoreError) -> Failure {
    if matches!(err.to_failure().code, ErrorCode::Internal) {
        tracing::error!(%err, "store operation failed");
    }
    err.to_failure()
}

fn status_of(state: &ProjectState) -> (&'static str, Option<String>) {
    match state {
        ProjectState::Available => ("available", None),
        ProjectState::Disabled => ("disabled", Some("disabled by the user".to_owned())),
        ProjectState::RootLost(reason) => ("root-lost", Some(reason.clone())),
    }
}

impl Engine {
    /// Opens the data folder, its database and the install secret.
    pub fn open(config: &EngineConfig) -> Result<Engine, Failure> {
        let store = Arc::new(Store::open(&config.data_dir).map_err(store_failure)?);
        let loaded = store.load_install_secret(config.secret).map_err(store_failure)?;
        let (events, _) = broadcast::channel(256);
        // Every job's state changes are recorded, so status and lists survive a restart.
        let jobs = sluice_exec::Jobs::with_observer(
            config.job_limits.clone(),
            jobstore::observer(store.clone()),
        );
        let secret = Arc::new(loaded.secret);
        let engine = Engine {
            data_dir: store.data_dir().to_path_buf(),
            audit: audit::AuditWriter::new(store.clone(), secret.clone()),
            store,
            secret,
            secret_source: loaded.source,
            secret_reason: loaded.reason,
            cache: Mutex::new(Cache {
                data_version: i64::MIN,
                projects: vec![],
                tokens: HashMap::new(),
                paused: false,
                stopped: false,
            }),
            workspaces: Mutex::new(HashMap::new()),
            mutations: Mutex::new(HashMap::new()),
            approval_ttl: config.approval_ttl,
            decided: tokio::sync::Notify::new(),
            serving_lock: Mutex::new(None),
            touched: Mutex::new(HashMap::new()),
            events,
            jobs,
            exec_gate: Mutex::new(()),
        };
        drop(engine.refresh()?);
        Ok(engine)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Called once by the process that serves clients (`sluice serve`, the desktop app), never
    /// by short CLI commands: takes the data folder's serving lock, marks approvals left pending
    /// by a previous process as aborted (they are never acted on), and rolls back any multi-file
    /// change that a crash interrupted.
    pub fn start_serving(&self) -> Result<(), Failure> {
        let lock_path = self.data_dir.join("engine.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| {
                Failure::new(
                    ErrorCode::Internal,
                    format!("cannot open {}: {e}", lock_path.display()),
                )
            })?;
        // A child this process forked shares the lock's open file description until it execs
        // or closes it (a job's sandbox setup takes milliseconds), so a lock released by an
        // engine that ran in this process can look held for a moment; another engine holds it
        // for good. Wait out the first, never the second.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while file.try_lock().is_err() {
            if std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(25));
                continue;
            }
            return Err(Failure::new(
                ErrorCode::Conflict,
                format!("another Sluice engine is already serving {}", self.data_dir.display()),
            ));
        }
        *lock(&self.serving_lock) = Some(file);
        #[cfg(target_os = "linux")]
        if let Err(err) = sluice_exec::init_subreaper() {
            tracing::warn!(%err, "cannot become a child subreaper; orphaned job processes may escape");
        }
        #[cfg(target_os = "linux")]
        if let Err(err) = sluice_exec::protect_engine() {
            tracing::warn!(%err, "cannot make the engine non-dumpable");
        }
        if self.is_stopped()? {
            // A stop survives restarts: nothing may start until the user resumes.
            self.jobs.stop_all();
            tracing::warn!(
                "the emergency stop is on; AI access stays locked until `sluice resume`"
            );
        }
        self.recover_jobs();
        self.recover_tasks();
        let aborted = self.store.abort_pending_approvals().map_err(store_failure)?;
        if aborted > 0 {
            tracing::warn!(aborted, "approvals left pending by a previous run were aborted");
        }
        for p in self.projects()?.iter().filter(|p| p.state.is_available()) {
            let Ok(m) = self.mutations_for(p) else { continue };
            match m.recover() {
                Ok(report) if !report.rolled_back.is_empty() || !report.conflicts.is_empty() => {
                    tracing::warn!(
                        project = %p.id,
                        rolled_back = report.rolled_back.len(),
                        conflicts = report.conflicts.len(),
                        "an interrupted change was rolled back"
                    );
                    self.record_human("recover", Some(&p.id), AuditOutcome::Ok, None);
                }
                Ok(_) => {}
                Err(err) => tracing::error!(project = %p.id, %err, "recovery failed"),
            }
        }
        Ok(())
    }

    /// The project's change manager (plans, commits, backups), created on first use.
    pub fn mutations(&self, handle: &ProjectHandle) -> Result<Arc<Mutations>, Failure> {
        let project = self.find_project(handle.id.as_str())?;
        self.mutations_for(&project)
    }

    fn mutations_for(&self, project: &Project) -> Result<Arc<Mutations>, Failure> {
        let mut cache = lock(&self.mutations);
        if let Some(m) = cache.get(&project.id) {
            return Ok(m.clone());
        }
        let workspace = self.workspace(project)?;
        let state_dir = self.data_dir.join("projects").join(project.id.as_str());
        let m = Mutations::open(workspace, &state_dir, BackupLimits::default()).map_err(|e| {
            tracing::error!(project = %project.id, err = %e, "cannot open the change manager");
            Failure::internal()
        })?;
        let m = Arc::new(m);
        cache.insert(project.id.clone(), m.clone());
        Ok(m)
    }

    /// Where the install secret lives, and why not in the keychain when it is not.
    pub fn secret_source(&self) -> (&SecretSource, Option<&str>) {
        (&self.secret_source, self.secret_reason.as_deref())
    }

    /// Engine events for the desktop app (and tests) to follow.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.events.subscribe()
    }

    fn emit(&self, event: EngineEvent) {
        // No subscribers is normal for the headless engine.
        let _ = self.events.send(event);
    }

    /// Reloads the cache if another connection committed since the last look.
    fn refresh(&self) -> Result<MutexGuard<'_, Cache>, Failure> {
        let version = self.store.data_version().map_err(store_failure)?;
        let mut cache = lock(&self.cache);
        if cache.data_version != version {
            let projects = self.revalidated(self.store.list_projects().map_err(store_failure)?);
            let tokens = self.store.list_tokens().map_err(store_failure)?;
            let paused = self.store.kv_get_bool(KV_PAUSED).map_err(store_failure)?.unwrap_or(false);
            let stopped =
                self.store.kv_get_bool(exec::KV_STOPPED).map_err(store_failure)?.unwrap_or(false);
            if (paused || stopped) != (cache.paused || cache.stopped)
                && cache.data_version != i64::MIN
            {
                self.emit(EngineEvent::AccessChanged { paused: paused || stopped });
            }
            cache.stopped = stopped;
            cache.projects = projects;
            cache.tokens = tokens.into_iter().map(|t| (t.hash, t)).collect();
            cache.paused = paused;
            cache.data_version = version;
        }
        Ok(cache)
    }

    /// The projects as stored, each available root checked again against the rules
    /// [`Engine::add_project`] applies. The database can be edited behind Sluice's back (PC-02):
    /// a root that no longer passes — a filesystem root, the home folder or one holding it,
    /// Sluice's data folder, a system folder, an overlap with another project, or a path that is
    /// not its own canonical form — makes its project unavailable, whatever the row says, and
    /// every surface says why. A root that is gone is left to [`root_changed`].
    fn revalidated(&self, mut projects: Vec<Project>) -> Vec<Project> {
        let roots: Vec<(String, PathBuf)> =
            projects.iter().map(|p| (p.name.clone(), p.root.clone())).collect();
        let home = paths::home_dir();
        for (i, project) in projects.iter_mut().enumerate() {
            if !project.state.is_available() {
                continue;
            }
            let existing =
                roots.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, r)| r.clone()).collect();
            let ctx = roots::RootContext { home: home.clone(), data_dir: &self.data_dir, existing };
            let why = match roots::check_root(&project.root, &ctx) {
                Ok(canonical) if canonical == project.root => continue,
                Ok(canonical) => format!(
                    "its stored root {} is not its own canonical path ({})",
                    project.root.display(),
                    canonical.display()
                ),
                Err(f) if f.code == ErrorCode::NotFound || f.code == ErrorCode::WrongKind => {
                    continue;
                }
                Err(f) => f.message,
            };
            // The reason reaches assistants (list_projects): it names no path; the log does.
            tracing::warn!(project = %project.id, %why, "a stored project root fails the root rules");
            project.state = ProjectState::RootLost(
                "the root stored for it fails Sluice's rules for project folders (the database \
                 was changed outside Sluice); remove the project and add its folder again"
                    .to_owned(),
            );
        }
        projects
    }

    /// Forces a reload after this engine itself wrote (data_version only moves for commits made
    /// by other connections).
    fn invalidate(&self) {
        lock(&self.cache).data_version = i64::MIN + 1;
    }

    // ----- the request path -------------------------------------------------------------

    /// Checks a presented bearer token. Constant-time where it matters: the token is hashed
    /// with the install secret first, so lookups reveal nothing about the plaintext.
    pub fn authenticate(&self, presented: &str) -> Result<Caller, Failure> {
        let unauthorized = |m: &str| Failure::new(ErrorCode::Unauthorized, m);
        let well_formed = presented.strip_prefix(TOKEN_PREFIX).is_some_and(|body| {
            body.len() == TOKEN_BODY_LEN
                && body.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        });
        if !well_formed {
            return Err(unauthorized("malformed token; Sluice tokens look like slc_…"));
        }
        let hash = sluice_store::token_hash(&self.secret, presented);
        let record = {
            let cache = self.refresh()?;
            cache.tokens.get(&hash).cloned()
        };
        let Some(record) = record else {
            return Err(unauthorized("unknown token; create one in Sluice and update your client"));
        };
        let now = sluice_store::now_ms();
        if record.revoked_ms.is_some() {
            return Err(unauthorized("this token was revoked in Sluice"));
        }
        if record.expires_ms.is_some_and(|e| e <= now) {
            return Err(unauthorized("this token has expired; create a new one in Sluice"));
        }
        let limit = record.self_limit.map(|(limit, _)| limit);
        if limit == Some(SelfLimit::Paused) {
            return Err(Failure::new(
                ErrorCode::Paused,
                "this token paused itself (drop_privileges); only the user can restore it in \
                 Sluice",
            ));
        }
        self.touch(&record.id, now);
        Ok(Caller { token_id: record.id, label: record.label, scope: record.scope, limit })
    }

    fn touch(&self, id: &TokenId, now_ms: i64) {
        let due = {
            let mut touched = lock(&self.touched);
            let due = touched.get(id).is_none_or(|at| at.elapsed() >= TOUCH_INTERVAL);
            if due {
                touched.insert(id.clone(), Instant::now());
            }
            due
        };
        if due && let Err(err) = self.store.touch_token(id, now_ms) {
            tracing::warn!(%err, "could not record token use");
        }
    }

    /// `Err(Stopped)` after an emergency stop, `Err(Paused)` while the user has paused AI access.
    pub fn check_access(&self) -> Result<(), Failure> {
        access_of(&*self.refresh()?)
    }

    /// [`Engine::check_access`] against the state the last refresh loaded, for a check that
    /// directly follows one in the same request (the HTTP gate, after [`Engine::authenticate`]):
    /// a refresh costs a database read transaction, and every request already makes one.
    pub fn check_access_as_loaded(&self) -> Result<(), Failure> {
        access_of(&lock(&self.cache))
    }

    /// Whether AI access is paused (or stopped: a stop pauses too).
    pub fn is_paused(&self) -> Result<bool, Failure> {
        let cache = self.refresh()?;
        Ok(cache.paused || cache.stopped)
    }

    /// The projects this caller may see (a scoped token sees only its own).
    pub fn visible_projects(&self, caller: &Caller) -> Vec<ProjectSummary> {
        let Ok(cache) = self.refresh() else { return vec![] };
        cache
            .projects
            .iter()
            .filter(|p| caller.sees(&p.id))
            .map(|p| {
                let (status, reason) = status_of(&p.state);
                // A token that limited itself sees what it may still do.
                let limited = caller.limit.is_some();
                ProjectSummary {
                    id: p.id.clone(),
                    name: p.name.clone(),
                    access: if limited { AccessMode::ReadOnly } else { p.access },
                    exec: if limited { ExecMode::Off } else { p.exec },
                    status,
                    reason,
                }
            })
            .collect()
    }

    /// Resolves `reference` (id or name) for this caller and opens its workspace. A project
    /// outside the caller's scope is reported exactly like one that does not exist.
    pub fn project(&self, caller: &Caller, reference: &str) -> Result<ProjectHandle, Failure> {
        let project = find_for(&*self.refresh()?, caller, reference);
        self.open_project(project, reference, caller)
    }

    /// [`Engine::project`] against the state the last refresh loaded, for a lookup that
    /// directly follows one in the same request (a tool call, after its access check).
    pub fn project_as_loaded(
        &self,
        caller: &Caller,
        reference: &str,
    ) -> Result<ProjectHandle, Failure> {
        let project = find_for(&lock(&self.cache), caller, reference);
        self.open_project(project, reference, caller)
    }

    fn open_project(
        &self,
        project: Option<Project>,
        reference: &str,
        caller: &Caller,
    ) -> Result<ProjectHandle, Failure> {
        let Some(project) = project else {
            return Err(Failure::new(
                ErrorCode::ProjectNotFound,
                format!("no project {reference:?} is available to this token; call list_projects"),
            ));
        };
        match &project.state {
            ProjectState::Available => {}
            ProjectState::Disabled => {
                return Err(Failure::new(
                    ErrorCode::ProjectUnavailable,
                    format!("project {:?} is disabled by the user", project.name),
                ));
            }
            ProjectState::RootLost(reason) => {
                return Err(Failure::new(
                    ErrorCode::ProjectUnavailable,
                    format!("project {:?} is unavailable: {reason}", project.name),
                ));
            }
        }
        if let Some(reason) = root_changed(&project) {
            self.mark_root_lost(&project, &reason);
            return Err(Failure::new(
                ErrorCode::ProjectUnavailable,
                format!("project {:?} is unavailable: {reason}", project.name),
            ));
        }
        let workspace = self.workspace(&project)?;
        let self_limited = caller.limit.is_some();
        Ok(ProjectHandle {
            id: project.id,
            name: project.name,
            access: if self_limited { AccessMode::ReadOnly } else { project.access },
            exec: if self_limited { ExecMode::Off } else { project.exec },
            ask_deletes: project.ask_deletes,
            ask_writes: project.ask_writes,
            self_limited,
            workspace,
        })
    }

    fn workspace(&self, project: &Project) -> Result<Arc<Workspace>, Failure> {
        let mut cache = lock(&self.workspaces);
        if let Some((at, ws)) = cache.get(&project.id)
            && *at == project.updated_ms
        {
            return Ok(ws.clone());
        }
        let patterns = project.shield_patterns.clone().unwrap_or_else(default_shield_patterns);
        let autorun = project.autorun_rules.clone().unwrap_or_else(default_autorun_rules);
        let ws = Workspace::open_with(&project.root, &patterns, &autorun).map_err(|e| {
            tracing::warn!(project = %project.id, err = %e, "cannot open project root");
            Failure::new(
                ErrorCode::ProjectUnavailable,
                format!("project {:?} cannot be opened right now", project.name),
            )
        })?;
        let ws = Arc::new(ws);
        cache.insert(project.id.clone(), (project.updated_ms, ws.clone()));
        Ok(ws)
    }

    /// Marks a project whose root moved, vanished or was replaced; tools refuse it until the
    /// user re-enables it.
    pub(crate) fn mark_root_lost(&self, project: &Project, reason: &str) {
        let state = ProjectState::RootLost(reason.to_owned());
        if let Err(err) = self.store.set_project_state(&project.id, &state) {
            tracing::error!(%err, "could not record a lost project root");
        }
        lock(&self.workspaces).remove(&project.id);
        self.invalidate();
        tracing::warn!(project = %project.id, "project root lost");
        self.emit(EngineEvent::ProjectRootLost {
            id: project.id.clone(),
            reason: reason.to_owned(),
        });
        self.record_human("project.root-lost", Some(&project.id), AuditOutcome::Error, None);
    }

    /// Checks every available project's root now (called by the watcher).
    pub fn check_roots(&self) {
        let projects = match self.refresh() {
            Ok(cache) => cache.projects.clone(),
            Err(_) => return,
        };
        for p in projects.iter().filter(|p| p.state.is_available()) {
            if let Some(reason) = root_changed(p) {
                self.mark_root_lost(p, &reason);
            }
        }
    }

    /// Roots of available projects, for the watcher.
    pub(crate) fn available_roots(&self) -> Vec<(ProjectId, PathBuf)> {
        match self.refresh() {
            Ok(cache) => cache
                .projects
                .iter()
                .filter(|p| p.state.is_available())
                .map(|p| (p.id.clone(), p.root.clone()))
                .collect(),
            Err(_) => vec![],
        }
    }

    /// Appends one MCP request to the audit chain, `durability` saying whether it must be on
    /// disk before this returns ([`Durability`]). Failures are logged, never surfaced to the
    /// client: the request itself already happened.
    #[allow(clippy::too_many_arguments)]
    pub fn audit_request(
        &self,
        caller: &Caller,
        action: &str,
        project_ref: Option<&str>,
        outcome: AuditOutcome,
        error_code: Option<&str>,
        duration_ms: u64,
        params: Option<&serde_json::Value>,
        durability: Durability,
    ) {
        // The request path refreshed the cache moments ago; naming the project needs no newer.
        let project_id =
            project_ref.and_then(|r| find_for(&lock(&self.cache), caller, r)).map(|p| p.id);
        let record = AuditRecord {
            time_ms: sluice_store::now_ms(),
            actor: caller.label.clone(),
            actor_kind: ActorKind::Mcp,
            token_id: Some(caller.token_id.clone()),
            action: audit_action(action),
            project_id,
            outcome,
            error_code: error_code.map(str::to_owned),
            duration_ms: Some(duration_ms),
            params_hash: params
                .map(|p| sluice_store::params_hash(&self.secret, p.to_string().as_bytes())),
            detail: None,
        };
        // A refusal is worth a commit of its own: it may be someone probing.
        let durability = if outcome == AuditOutcome::Denied { Durability::Now } else { durability };
        self.audit.append(record, durability);
    }

    fn record_human(
        &self,
        action: &str,
        project: Option<&ProjectId>,
        outcome: AuditOutcome,
        error_code: Option<&str>,
    ) {
        self.record_human_detail(action, project, outcome, error_code, None);
    }

    /// [`Engine::record_human`] with a detail line (see [`AuditRecord::detail`]).
    fn record_human_detail(
        &self,
        action: &str,
        project: Option<&ProjectId>,
        outcome: AuditOutcome,
        error_code: Option<&str>,
        detail: Option<String>,
    ) {
        let record = AuditRecord {
            time_ms: sluice_store::now_ms(),
            actor: LOCAL_USER.to_owned(),
            actor_kind: ActorKind::Human,
            token_id: None,
            action: action.to_owned(),
            project_id: project.cloned(),
            outcome,
            error_code: error_code.map(str::to_owned),
            duration_ms: None,
            params_hash: None,
            detail,
        };
        self.audit.append(record, Durability::Now);
    }

    // ----- the human's operations (CLI, tray, window) ----------------------------------------

    pub fn projects(&self) -> Result<Vec<Project>, Failure> {
        Ok(self.refresh()?.projects.clone())
    }

    pub fn find_project(&self, reference: &str) -> Result<Project, Failure> {
        let cache = self.refresh()?;
        find(&cache.projects, reference).cloned().ok_or_else(|| {
            Failure::new(ErrorCode::ProjectNotFound, format!("no project {reference:?}"))
        })
    }

    /// Authorizes a folder. Refuses dangerous roots and overlaps (see [`roots::check_root`]).
    pub fn add_project(
        &self,
        path: &Path,
        name: Option<&str>,
        access: AccessMode,
        exec: ExecMode,
    ) -> Result<Project, Failure> {
        if exec.needs_read_write() && access == AccessMode::ReadOnly {
            return Err(Failure::invalid(format!(
                "execution mode {exec} needs read-write access; add --access read-write"
            )));
        }
        let existing = self.projects()?.into_iter().map(|p| (p.name, p.root)).collect::<Vec<_>>();
        let ctx =
            roots::RootContext { home: paths::home_dir(), data_dir: &self.data_dir, existing };
        let root = roots::check_root(path, &ctx)?;
        let name = match name {
            Some(n) => validate_name(n)?,
            None => validate_name(
                &root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            )?,
        };
        let fingerprint = RootFingerprint::of(&root).ok().flatten();
        let project = self
            .store
            .insert_project(&NewProject { name, root, access, exec, fingerprint })
            .map_err(store_failure)?;
        self.after_change("project.add", Some(&project.id));
        Ok(project)
    }

    /// Changes modes. Dropping to read-only forces execution off.
    pub fn set_modes(
        &self,
        reference: &str,
        access: Option<AccessMode>,
        exec: Option<ExecMode>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_modes(&p.id, access, exec).map_err(store_failure)?;
        self.after_change("project.set-modes", Some(&p.id));
        let now = self.find_project(p.id.as_str())?;
        if now.exec == ExecMode::Off {
            self.jobs.kill_project(p.id.as_str());
        }
        self.find_project(p.id.as_str())
    }

    /// Sets which changes ask first; `None` keeps a setting.
    pub fn set_policy(
        &self,
        reference: &str,
        ask_deletes: Option<bool>,
        ask_writes: Option<bool>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_policy(&p.id, ask_deletes, ask_writes).map_err(store_failure)?;
        self.after_change("project.policy", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    pub fn rename_project(&self, reference: &str, name: &str) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        let name = validate_name(name)?;
        self.store.rename_project(&p.id, &name).map_err(store_failure)?;
        self.after_change("project.rename", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    pub fn disable_project(&self, reference: &str) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_state(&p.id, &ProjectState::Disabled).map_err(store_failure)?;
        self.after_change("project.disable", Some(&p.id));
        self.jobs.kill_project(p.id.as_str());
        self.find_project(p.id.as_str())
    }

    /// Re-enables a disabled or root-lost project after checking its folder again; the folder's
    /// identity is re-recorded, since the user is vouching for what is there now.
    pub fn enable_project(&self, reference: &str) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        let canonical = std::fs::canonicalize(&p.root).ok().filter(|c| c == &p.root && c.is_dir());
        let Some(root) = canonical else {
            return Err(Failure::new(
                ErrorCode::NotFound,
                format!(
                    "the folder of project {:?} ({}) is missing or moved; remove the project and \
                     authorize the folder again",
                    p.name,
                    p.root.display()
                ),
            ));
        };
        let fingerprint = RootFingerprint::of(&root).ok().flatten();
        self.store.set_project_fingerprint(&p.id, fingerprint).map_err(store_failure)?;
        self.store.set_project_state(&p.id, &ProjectState::Available).map_err(store_failure)?;
        self.after_change("project.enable", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    pub fn remove_project(&self, reference: &str) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.delete_project(&p.id).map_err(store_failure)?;
        self.after_change("project.remove", Some(&p.id));
        self.jobs.kill_project(p.id.as_str());
        Ok(p)
    }

    /// Replaces the shield list (`None` restores the defaults).
    pub fn set_shield(
        &self,
        reference: &str,
        patterns: Option<Vec<String>>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        if let Some(patterns) = &patterns {
            sluice_guard::Shield::new(patterns).map_err(|e| Failure::invalid(e.to_string()))?;
        }
        self.store.set_project_shield(&p.id, patterns.as_deref()).map_err(store_failure)?;
        self.after_change("project.shield", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    /// Replaces the auto-run list (`None` restores the defaults). Every pattern must compile,
    /// and the program and consequence are shown on approvals: printable, one line, bounded.
    pub fn set_autorun(
        &self,
        reference: &str,
        rules: Option<Vec<AutoRunRule>>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        if let Some(rules) = &rules {
            check_autorun(rules)?;
        }
        self.store.set_project_autorun(&p.id, rules.as_deref()).map_err(store_failure)?;
        self.after_change("project.autorun", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    /// Creates a token and returns it with its plaintext, which exists only in this return
    /// value: the store keeps a keyed hash.
    pub fn create_token(
        &self,
        label: &str,
        scope: Option<Vec<String>>,
        expires_in: Option<Duration>,
    ) -> Result<(TokenRecord, String), Failure> {
        let label = validate_name(label)?;
        let scope = match scope {
            None => None,
            Some(refs) => {
                let mut ids = Vec::new();
                for r in refs {
                    ids.push(self.find_project(&r)?.id);
                }
                Some(ids)
            }
        };
        let plaintext = format!("{TOKEN_PREFIX}{}", base32(&random_bytes::<32>()));
        let hash = sluice_store::token_hash(&self.secret, &plaintext);
        let expires_ms = expires_in.map(|d| {
            sluice_store::now_ms().saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        });
        let record = self
            .store
            .insert_token(&NewToken { label, hash, scope, expires_ms })
            .map_err(store_failure)?;
        self.after_change("token.create", None);
        Ok((record, plaintext))
    }

    pub fn tokens(&self) -> Result<Vec<TokenRecord>, Failure> {
        self.store.list_tokens().map_err(store_failure)
    }

    pub fn revoke_token(&self, reference: &str) -> Result<TokenRecord, Failure> {
        let t =
            self.store.find_token(reference).map_err(store_failure)?.ok_or_else(|| {
                Failure::new(ErrorCode::NotFound, format!("no token {reference:?}"))
            })?;
        let t = self.store.revoke_token(&t.id).map_err(store_failure)?;
        // What the token asked for dies with it (TA-03): its calls waiting for the user end
        // with this denial, and later requests get 401.
        let by = exec::EndedBy::User("token revoked");
        self.deny_pending(|a| a.token_id == t.id, "the token was revoked", by);
        self.after_change("token.revoke", None);
        Ok(t)
    }

    /// An assistant lowers its own token's privileges (`drop_privileges`): to read-only (it may
    /// still read and search, but changes and runs nothing) or paused (every request refused);
    /// never back up, since a limit already as strict is kept. What the token was waiting for is
    /// denied and its running jobs are cancelled (this blocks until they are dead: call it from
    /// a blocking context in async code). Recorded in the audit log with the reason it
    /// gave; only the user lifts it ([`Engine::lift_token_limit`]).
    pub fn drop_privileges(
        &self,
        caller: &Caller,
        limit: SelfLimit,
        reason: Option<&str>,
    ) -> Result<TokenRecord, Failure> {
        let t = self.store.limit_token(&caller.token_id, limit).map_err(store_failure)?;
        let in_force = t.self_limit.map_or(limit, |(l, _)| l);
        let why = format!("the assistant limited its own token to {in_force}");
        self.deny_pending(|a| a.token_id == t.id, &why, exec::EndedBy::Assistant(&caller.label));
        self.jobs.kill_owned(t.id.as_str());
        self.invalidate();
        paths::nudge(&self.data_dir);
        let reason = reason.map(clean_reason).filter(|r| !r.is_empty());
        let detail = match &reason {
            Some(r) => format!("{in_force}: {r}"),
            None => in_force.to_string(),
        };
        self.audit.append(
            AuditRecord {
                time_ms: sluice_store::now_ms(),
                actor: caller.label.clone(),
                actor_kind: ActorKind::Mcp,
                token_id: Some(caller.token_id.clone()),
                action: "token.self_limit".into(),
                project_id: None,
                outcome: AuditOutcome::Ok,
                error_code: None,
                duration_ms: Some(0),
                params_hash: None,
                detail: Some(sluice_core::text::visible(&detail).into_owned()),
            },
            Durability::Now,
        );
        self.emit(EngineEvent::TokensChanged);
        Ok(t)
    }

    /// Lifts the limit a token put on itself: the user's decision.
    pub fn lift_token_limit(&self, reference: &str) -> Result<TokenRecord, Failure> {
        let t =
            self.store.find_token(reference).map_err(store_failure)?.ok_or_else(|| {
                Failure::new(ErrorCode::NotFound, format!("no token {reference:?}"))
            })?;
        if t.self_limit.is_none() {
            return Err(Failure::invalid(format!(
                "token {} has no limit of its own to lift",
                sluice_core::text::visible(&t.label)
            )));
        }
        let t = self.store.lift_token_limit(&t.id).map_err(store_failure)?;
        self.after_change("token.lift_limit", None);
        Ok(t)
    }

    /// Pauses AI access, or (with `false`) resumes it — which lifts an emergency stop too.
    pub fn set_paused(&self, paused: bool) -> Result<(), Failure> {
        if !paused {
            return self.resume();
        }
        self.store.kv_set_bool(KV_PAUSED, paused).map_err(store_failure)?;
        {
            // Update the cached flag too, so the reload that `invalidate` forces does not
            // announce this same change a second time.
            let mut cache = lock(&self.cache);
            cache.paused = paused;
            cache.data_version = i64::MIN + 1;
        }

        self.record_human(if paused { "pause" } else { "resume" }, None, AuditOutcome::Ok, None);
        self.emit(EngineEvent::AccessChanged { paused });
        Ok(())
    }

    pub fn audit_list(
        &self,
        filter: &AuditFilter,
        limit: usize,
        before_seq: Option<u64>,
    ) -> Result<Vec<AuditEntry>, Failure> {
        self.audit.flush();
        self.store.audit_list(filter, limit, before_seq).map_err(store_failure)
    }

    /// Writes the audit entries still queued ([`Durability::Soon`]); for a clean shutdown.
    pub fn flush_audit(&self) {
        self.audit.flush();
    }

    pub fn audit_verify(&self) -> Result<ChainReport, Failure> {
        self.audit.flush();
        self.store.audit_verify(&self.secret).map_err(store_failure)
    }

    fn after_change(&self, action: &str, project: Option<&ProjectId>) {
        self.invalidate();
        // A serving engine in another process applies what this means for running jobs now.
        paths::nudge(&self.data_dir);
        if let Some(id) = project {
            lock(&self.workspaces).remove(id);
            // The shield and the auto-run list live in the workspace the change manager holds;
            // a removed project's manager must go too. Other settings leave it in place, since
            // it serializes changes.
            if matches!(action, "project.shield" | "project.autorun" | "project.remove") {
                lock(&self.mutations).remove(id);
            }
        }
        self.record_human(action, project, AuditOutcome::Ok, None);
        self.emit(if action.starts_with("token") {
            EngineEvent::TokensChanged
        } else {
            EngineEvent::ProjectsChanged
        });
    }
}

fn find<'a>(projects: &'a [Project], reference: &str) -> Option<&'a Project> {
    projects
        .iter()
        .find(|p| p.id.as_str() == reference)
        .or_else(|| projects.iter().find(|p| p.name.eq_ignore_ascii_case(reference)))
}

/// The default sensitive-file patterns, for display and as the base of a custom list.
pub fn default_shield_patterns() -> Vec<String> {
    sluice_guard::Shield::DEFAULT_PATTERNS.iter().map(|s| (*s).to_owned()).collect()
}

/// The default auto-run list, for display and as the base of a custom list.
pub fn default_autorun_rules() -> Vec<AutoRunRule> {
    sluice_guard::AutoRun::default_rules()
}

/// Most entries a project's auto-run list may hold, and the longest text of one.
const MAX_AUTORUN_RULES: usize = 500;
const MAX_AUTORUN_TEXT: usize = 300;

fn check_autorun(rules: &[AutoRunRule]) -> Result<(), Failure> {
    if rules.len() > MAX_AUTORUN_RULES {
        return Err(Failure::invalid(format!(
            "an auto-run list holds at most {MAX_AUTORUN_RULES} entries"
        )));
    }
    for r in rules {
        for (what, text) in
            [("pattern", &r.pattern), ("program", &r.program), ("consequence", &r.consequence)]
        {
            if text.trim().is_empty() || text.chars().count() > MAX_AUTORUN_TEXT {
                return Err(Failure::invalid(format!(
                    "each auto-run entry needs a {what} of 1 to {MAX_AUTORUN_TEXT} characters"
                )));
            }
            if text.chars().any(sluice_core::text::is_hidden) {
                return Err(Failure::invalid(format!(
                    "an auto-run {what} may not contain control, bidirectional or zero-width \
                     characters"
                )));
            }
        }
    }
    sluice_guard::AutoRun::new(rules).map_err(|e| Failure::invalid(e.to_string()))?;
    Ok(())
}

/// Action names can come from the client (a tool or method name): short and printable before
/// they are stored, so an odd name is still recorded rather than refused by the store.
fn audit_action(action: &str) -> String {
    let clean: String =
        action.chars().take(64).map(|c| if c.is_ascii_graphic() { c } else { '?' }).collect();
    if clean.is_empty() { "?".to_owned() } else { clean }
}

/// A denial reason goes back to the assistant and into the audit log: printable, bounded.
pub(crate) fn clean_reason(reason: &str) -> String {
    reason
        .chars()
        .filter(|c| !sluice_core::text::is_hidden(*c))
        .take(500)
        .collect::<String>()
        .trim()
        .to_owned()
}

/// Names and labels are shown everywhere (tray, prompts, client configs): printable, short.
fn validate_name(name: &str) -> Result<String, Failure> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(Failure::invalid("a name must be 1 to 64 characters"));
    }
    if name.chars().any(sluice_core::text::is_hidden) {
        return Err(Failure::invalid(
            "a name may not contain control, bidirectional or zero-width characters",
        ));
    }
    if ProjectId::parse(name).is_some() || TokenId::parse(name).is_some() {
        return Err(Failure::invalid("a name may not look like an id (proj_…, tok_…)"));
    }
    Ok(name.to_owned())
}

/// The project `reference` names, if this caller may see it.
fn find_for(cache: &Cache, caller: &Caller, reference: &str) -> Option<Project> {
    find(&cache.projects, reference).filter(|p| caller.sees(&p.id)).cloned()
}

/// `Err(Stopped)` after an emergency stop, `Err(Paused)` while the user has paused AI access.
fn access_of(cache: &Cache) -> Result<(), Failure> {
    if cache.stopped {
        return Err(Failure::new(
            ErrorCode::Stopped,
            "AI access is stopped: the user pressed Sluice's emergency stop; nothing was done. \
             Nothing runs until they resume it.",
        ));
    }
    if cache.paused {
        return Err(Failure::new(
            ErrorCode::Paused,
            "AI access is paused by the user in Sluice; nothing was done. Try again after they \
             resume it.",
        ));
    }
    Ok(())
}

/// Why the project's root is no longer the folder the user authorized, if it is not.
fn root_changed(project: &Project) -> Option<String> {
    // Every tool call checks: the time is only formatted when something changed.
    let noticed = |what: &str| {
        let when = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
        Some(format!("{what} (noticed {when})"))
    };
    match std::fs::canonicalize(&project.root) {
        Err(_) => noticed("the folder was moved or deleted"),
        Ok(c) if c != project.root => noticed("the folder path now leads elsewhere"),
        Ok(_) => match (RootFingerprint::of(&project.root).ok().flatten(), project.fingerprint) {
            (Some(now), Some(then)) if now != then => {
                noticed("the folder was replaced by another one")
            }
            (None, _) => noticed("the folder is no longer readable"),
            _ => None,
        },
    }
}
