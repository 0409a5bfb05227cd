//! The engine: control (authentication, pause, scope, the policy decision point, audit) over the
//! store, the runner and git. One `Engine` serves HTTP, stdio (through HTTP) and the
//! desktop app's tray and window; the CLI drives the same administrative operations.
//!
//! The engine caches projects and tokens and reloads them when another process commits to the
//! database (`PRAGMA data_version`), so `sluice token revoke` or `sluice pause` in a terminal
//! takes effect on the next request without a restart.

mod access;
mod approvals;
mod audit;
mod caller;
mod caller_jobs;
mod checkpoints;
pub mod clients;
pub mod clients_health;
pub mod code_servers;
mod events;
mod exec;
mod handle;
mod health_codes;
mod jobstore;
mod live;
pub mod logging;
mod memory;
mod paths;
mod projects;
pub mod reach;
pub mod roots;
pub mod sandbox;
mod sandbox_account;
pub mod shutdown;
mod tasks;
mod tokens;
mod watch;
mod worktrees;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sluice_core::{AccessMode, ErrorCode, ExecMode, Failure, ProjectId, ProjectState, TokenId};
use sluice_runner::{BackupLimits, Mutations, Workspace};
pub use sluice_store::{
    ActorKind, AuditEntry, AuditFilter, ChainReport, FindingKind, IntegrityFinding,
    Outcome as AuditOutcome, Project, SecretPreference, SecretSource, TokenRecord, now_ms,
};
use sluice_store::{AuditRecord, InstallSecret, Store};
pub use sluice_store::{Keychain, connections, fsperm};
use tokio::sync::broadcast;

pub use approvals::{AskOutcome, AskRequest, DEFAULT_APPROVAL_TTL, Decision};
pub use audit::Durability;
pub use caller::{Caller, RemoteCaller, RequestAudit};
pub use events::EngineEvent;
pub use exec::{
    ApprovalRisk, EMERGENCY_STOP, NetworkSetting, RuleInfo, StopSummary, job_confinement,
};
pub use handle::ProjectHandle;
pub use jobstore::LOST_REASON;
pub use paths::{default_data_dir, engine_file, nudge_file, read_engine_file, write_engine_file};
use projects::find_id_for;
pub use projects::{default_autorun_rules, default_shield_patterns};
pub use sandbox_account::SetupOutcome;
pub use sluice_exec::{JobLimits, LandlockReport, guarantees};
pub use tasks::{TASK_LOST_REASON, TASK_TTL};
pub use worktrees::{NewWorktree, WorktreeRemoval};
/// What jobs see and never see (for `sluice doctor` and the Settings view).
pub mod job_view {
    pub use sluice_exec::egress::{DEFAULT_REGISTRIES, HostList};
    pub use sluice_exec::hide::credential_stores;
    #[cfg(target_os = "linux")]
    pub use sluice_exec::places::TOOLCHAINS;
}
pub use sandbox::{HiddenEntry, SOCKET_WARNING, SandboxView, default_hidden};
pub use sluice_core::ChangeTally;
pub use sluice_store::{
    ApprovalRecord, ApprovalState, Channel, JobRow, OAuthDecision, OAuthRequest, RuleOrigin,
    TaskRow, TaskStatus,
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

struct Cache {
    data_version: i64,
    /// When the last completed check of `data_version` began ([`Engine::refresh`]).
    checked: Option<Instant>,
    projects: Vec<Project>,
    tokens: HashMap<[u8; 32], TokenRecord>,
    paused: bool,
    /// The emergency stop (persisted; only an explicit resume lifts it).
    stopped: bool,
    /// What the integrity findings were about at the last reload, to tell the window when
    /// they change (a reseal or a fix from the CLI).
    findings: Vec<(FindingKind, String)>,
    /// Reach from the web while it is on (read on every remote request).
    reach: Option<reach::Reach>,
}

pub struct Engine {
    data_dir: PathBuf,
    store: Arc<Store>,
    secret: Arc<InstallSecret>,
    secret_source: SecretSource,
    /// Why the secret is not in the keychain, when it is not.
    secret_reason: Option<String>,
    cache: Mutex<Cache>,
    /// Held while one request checks the database for changes, so the requests that wait for
    /// it take its answer ([`Engine::refresh`]).
    checking: Mutex<()>,
    workspaces: Mutex<HashMap<ProjectId, (i64, Arc<Workspace>)>>,
    /// Each project's syntax index, built on its first code query.
    code_indexes: Mutex<HashMap<ProjectId, Arc<sluice_code::CodeIndex>>>,
    /// The projects' language servers (tier two), while they run.
    servers: code_servers::Servers,
    /// One `Mutations` per project: it serializes that project's changes.
    mutations: Mutex<HashMap<ProjectId, Arc<Mutations>>>,
    approval_ttl: Duration,
    /// Woken when a decision is made in this process.
    decided: tokio::sync::Notify,
    /// Held while this engine serves, so two engines never serve one data folder.
    serving_lock: Mutex<Option<std::fs::File>>,
    touched: Mutex<HashMap<TokenId, Instant>>,
    /// Where reach's waiting requests and registrations came from (`reach::budget`).
    reach_sources: Mutex<reach::Sources>,
    events: broadcast::Sender<EngineEvent>,
    /// Every job this engine runs.
    jobs: sluice_exec::Jobs,
    /// Serializes the emergency stop against the last check before a job starts (PE-02).
    exec_gate: Mutex<()>,
    /// Appends to the audit log, batching what may wait ([`audit`]).
    audit: audit::AuditWriter,
    /// Gives memory back once a burst of calls is over ([`Engine::tick_memory`]).
    idle_trim: memory::IdleTrim,
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
        // Sealed state is read and written only with the secret's seal key (PC-02).
        store.attach_secret(&loaded.secret).map_err(store_failure)?;
        let secret = Arc::new(loaded.secret);
        let engine = Engine {
            data_dir: store.data_dir().to_path_buf(),
            audit: audit::AuditWriter::new(store.clone(), secret.clone()),
            idle_trim: memory::IdleTrim::default(),
            store,
            secret,
            secret_source: loaded.source,
            secret_reason: loaded.reason,
            cache: Mutex::new(Cache {
                data_version: i64::MIN,
                checked: None,
                projects: vec![],
                tokens: HashMap::new(),
                paused: false,
                stopped: false,
                findings: Vec::new(),
                reach: None,
            }),
            checking: Mutex::new(()),
            workspaces: Mutex::new(HashMap::new()),
            code_indexes: Mutex::new(HashMap::new()),
            servers: code_servers::Servers::default(),
            mutations: Mutex::new(HashMap::new()),
            approval_ttl: config.approval_ttl,
            decided: tokio::sync::Notify::new(),
            serving_lock: Mutex::new(None),
            touched: Mutex::new(HashMap::new()),
            reach_sources: Mutex::default(),
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
        // The WAL's checkpoints (disk flushes) leave the connection every request reads through;
        // the watcher's tick runs them ([`Engine::checkpoint_wal`]).
        if let Err(err) = self.store.checkpoint_apart() {
            tracing::warn!(%err, "checkpoints stay on the main database connection");
        }
        #[cfg(target_os = "linux")]
        if let Err(err) = sluice_exec::init_subreaper() {
            tracing::warn!(%err, "cannot become a child subreaper; orphaned job processes may escape");
        }
        #[cfg(target_os = "linux")]
        if let Err(err) = sluice_exec::protect_engine() {
            tracing::warn!(%err, "cannot make the engine non-dumpable");
        }
        self.install_sandbox_password();
        if self.is_stopped()? {
            // A stop survives restarts: nothing may start until the user resumes.
            self.jobs.stop_all();
            tracing::warn!(
                "the emergency stop is on; AI access stays locked until `sluice resume`"
            );
        }
        match self.integrity() {
            Ok(found) if !found.is_empty() => {
                // Codes and ids only: the messages quote names and commands from the database.
                for f in &found {
                    tracing::warn!(code = f.kind.code(), subject = %f.subject, "integrity finding");
                }
                tracing::warn!(
                    findings = found.len(),
                    "state was changed in the database outside Sluice; it is held to less \
                     privilege until the user acts (`sluice doctor`)"
                );
            }
            Ok(_) => {}
            Err(f) => tracing::error!(code = %f.code, "cannot check the state's seals"),
        }
        self.recover_jobs();
        self.recover_tasks();
        let aborted = self.store.abort_pending_approvals().map_err(store_failure)?;
        if aborted > 0 {
            tracing::warn!(aborted, "approvals left pending by a previous run were aborted");
        }
        // Only projects with a journal are opened now: the rest open on their first call, so a
        // start does not compile every project's patterns.
        for p in self.projects()?.iter().filter(|p| p.state.is_available()) {
            if !Mutations::needs_recovery(&self.state_dir(&p.id)) {
                continue;
            }
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

    pub(crate) fn mutations_for(&self, project: &Project) -> Result<Arc<Mutations>, Failure> {
        let mut cache = lock(&self.mutations);
        if let Some(m) = cache.get(&project.id) {
            return Ok(m.clone());
        }
        let workspace = self.workspace(project)?;
        let m = Mutations::open(workspace, &self.state_dir(&project.id), BackupLimits::default())
            .map_err(|e| {
            tracing::error!(project = %project.id, err = %e, "cannot open the change manager");
            Failure::internal()
        })?;
        #[cfg(debug_assertions)]
        let m = checkpoints::failpoint(m);
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

    /// Checkpoints the database's WAL when it has grown enough, on a connection no request
    /// uses (see `Store::checkpoint_apart`). Blocking.
    pub fn checkpoint_wal(&self) {
        if let Err(err) = self.store.checkpoint_if_due() {
            tracing::warn!(%err, "could not checkpoint the database's log");
        }
    }

    /// Returns the allocator's free memory to the system once calls have stopped: a second
    /// after the last, and again when the runtime's idle threads have ended (see `memory`).
    /// Blocking; returns whether a release was due (only glibc's allocator needs one).
    pub fn tick_memory(&self) -> bool {
        self.idle_trim.tick(self.audit.appended())
    }

    /// Refuses a change or a command start that could not be audited now (the database held
    /// locked by another program past the busy timeout, or refusing writes): nothing has been
    /// done yet, so the refusal is the whole truth. A lock taken between this check and the
    /// entry's append still loses the entry (logged); the window is one change long.
    pub fn check_auditable(&self) -> Result<(), Failure> {
        self.audit.ready().map_err(|err| {
            tracing::error!(%err, "the audit log cannot be written; refusing a change");
            Failure::new(
                ErrorCode::Io,
                "Sluice cannot write its audit log right now (its database is locked by another \
                 program or refuses writes), so nothing was changed; try again in a moment",
            )
        })
    }

    /// Appends one MCP request to the audit chain, its `durability` saying whether it must be
    /// on disk before this returns ([`Durability`]). Failures are logged, never surfaced to the
    /// client: the request itself already happened.
    pub fn audit_request(&self, request: RequestAudit<'_>) {
        let RequestAudit {
            caller,
            action,
            project_ref,
            outcome,
            error_code,
            duration_ms,
            params,
            durability,
        } = request;
        // The request path refreshed the cache moments ago; naming the project needs no newer.
        let project_id = project_ref.and_then(|r| find_id_for(&lock(&self.cache), caller, r));
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
            // `to_vec` writes the same bytes as `Value`'s `Display`, without `fmt`'s overhead.
            params_hash: params.map(|p| {
                sluice_store::params_hash(&self.secret, &serde_json::to_vec(p).unwrap_or_default())
            }),
            detail: caller
                .remote
                .as_ref()
                .map(|r| format!("remote, through {}; OAuth client {}", r.via, r.client_id)),
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

    /// What in the database does not carry Sluice's seal (changed without the install secret),
    /// each with what Sluice does about it: empty when everything verifies.
    pub fn integrity(&self) -> Result<Vec<IntegrityFinding>, Failure> {
        self.store.integrity().map_err(store_failure)
    }

    /// The human's "accept the database as it is now" (`sluice doctor --reseal`): seals every
    /// project, rule and token again as they stand (a stop or pause without a good record is
    /// kept on) and records in the audit log what was accepted. Returns the accepted findings.
    pub fn reseal(&self) -> Result<Vec<IntegrityFinding>, Failure> {
        let accepted = self.store.reseal().map_err(store_failure)?;
        self.invalidate();
        let detail = accepted.iter().map(|f| f.kind.code()).collect::<Vec<_>>().join(", ");
        self.record_human_detail(
            "integrity.reseal",
            None,
            AuditOutcome::Ok,
            None,
            Some(if detail.is_empty() { "nothing to accept".into() } else { detail }),
        );
        self.flush_audit();
        Ok(accepted)
    }

    /// Pauses AI access, or (with `false`) resumes it — which lifts an emergency stop too.
    pub fn set_paused(&self, paused: bool) -> Result<(), Failure> {
        if !paused {
            return self.resume();
        }
        self.store.set_sealed_flag(KV_PAUSED, paused).map_err(store_failure)?;
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
