//! Tier two's language servers: at most one per project and server, each a channel job in the
//! project's sandbox (`sluice_exec::Jobs::start_channel`), so it is listed with the project's
//! jobs and killed by a cancel or the emergency stop like any of them. Starting one is a tool
//! call's business (it asks the human like a build, `sluice-mcp`'s `code_server.rs`); here it is
//! found on the trusted PATH, started, kept warm, and stopped: after [`IDLE`] without a
//! question, while Sluice is paused, and as soon as its project may no longer run it (read-only,
//! a mode other than `project` or `any`, disabled or removed). [`Engine::reap_servers`] runs on
//! the serving engine's watcher tick.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sluice_code::Language;
use sluice_code::lsp::Session;
use sluice_core::{AccessMode, ErrorCode, ExecMode, Failure, ProjectId};
use sluice_exec::{CommandSpec, JobId, JobRequest, LanguageServer, TrustedPath};

use crate::{Engine, ProjectHandle, lock};

/// How long a server waits for a question before it is stopped.
pub const IDLE: Duration = Duration::from_secs(10 * 60);
/// How long a server may take to start (indexing happens after).
const START: Duration = Duration::from_secs(60);

/// A running language server.
pub struct WarmServer {
    pub job: JobId,
    pub server: &'static LanguageServer,
    pub session: Session,
    used: Mutex<Instant>,
}

impl WarmServer {
    fn touch(&self) {
        *lock(&self.used) = Instant::now();
    }
}

/// A project and a server program.
type Key = (ProjectId, &'static str);

/// The engine's language servers, by project and program.
#[derive(Default)]
pub(crate) struct Servers {
    running: Mutex<HashMap<Key, Arc<WarmServer>>>,
    /// Held while a server is asked for and started, so questions racing to start the same
    /// one ask the user once.
    starting: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
}

/// Why `handle` may not run its language server, if it may not: its commands may run only in
/// `project` or `any` mode and not read-only, and (for now) only on Linux and macOS.
pub fn server_refusal(handle: &ProjectHandle) -> Option<String> {
    if cfg!(windows) {
        return Some(
            "language servers run as jobs Sluice talks to over a pipe, which this version of \
             Sluice runs on Linux and macOS only; the syntax tier answers code_definition and \
             code_references by name"
                .to_owned(),
        );
    }
    let runs = matches!(handle.exec, ExecMode::Project | ExecMode::Any);
    if runs && handle.access != AccessMode::ReadOnly {
        return None;
    }
    Some(format!(
        "project {:?} does not run its language server: that needs execution mode `project` or \
         `any` and write access (it is {} with execution `{}` for this token); only the user \
         can change that in Sluice",
        handle.name, handle.access, handle.exec
    ))
}

impl Engine {
    /// The running server for `language` in this project, if there is one and it still runs.
    pub fn warm_server(
        &self,
        handle: &ProjectHandle,
        language: Language,
    ) -> Option<Arc<WarmServer>> {
        let mut running = lock(&self.servers.running);
        let key = running
            .keys()
            .find(|(p, program)| {
                *p == handle.id
                    && sluice_exec::servers_for(language.as_str()).any(|s| s.program == *program)
            })?
            .clone();
        let warm = running.get(&key)?.clone();
        if warm.session.ended() || self.jobs.status(&warm.job).is_ok_and(|s| s.state.is_final()) {
            running.remove(&key);
            return None;
        }
        warm.touch();
        Some(warm)
    }

    /// The gate a start of `language`'s server in this project goes through: whoever holds it
    /// looks for a running server again before asking to start one.
    pub fn server_start_gate(
        &self,
        handle: &ProjectHandle,
        language: Language,
    ) -> Arc<tokio::sync::Mutex<()>> {
        let program = sluice_exec::servers_for(language.as_str()).next().map_or("", |s| s.program);
        let mut starting = lock(&self.servers.starting);
        starting.retain(|_, gate| Arc::strong_count(gate) > 1);
        starting.entry((handle.id.clone(), program)).or_default().clone()
    }

    /// Every server running for this project (those that still run).
    pub fn warm_servers(&self, handle: &ProjectHandle) -> Vec<Arc<WarmServer>> {
        let running: Vec<Arc<WarmServer>> = lock(&self.servers.running)
            .iter()
            .filter(|((p, _), _)| *p == handle.id)
            .map(|(_, w)| w.clone())
            .collect();
        running
            .into_iter()
            .filter(|w| {
                !w.session.ended() && self.jobs.status(&w.job).is_ok_and(|s| !s.state.is_final())
            })
            .inspect(|w| w.touch())
            .collect()
    }

    /// The server that would answer for `language` here, found on the trusted PATH, and the
    /// command that starts it; or why none can run.
    pub fn server_command(
        &self,
        handle: &ProjectHandle,
        language: Language,
    ) -> Result<(&'static LanguageServer, CommandSpec), Failure> {
        if let Some(why) = server_refusal(handle) {
            return Err(Failure::new(ErrorCode::Forbidden, why));
        }
        let roots: Vec<PathBuf> = self.projects()?.into_iter().map(|p| p.root).collect();
        let trusted = TrustedPath::from_env(&roots);
        let mut candidates = sluice_exec::servers_for(language.as_str()).peekable();
        if candidates.peek().is_none() {
            return Err(Failure::new(
                ErrorCode::LanguageServerMissing,
                format!("Sluice knows no language server for {}", language.as_str()),
            ));
        }
        let mut tried = Vec::new();
        for server in candidates {
            if trusted.resolve(server.program).is_ok() {
                let spec = CommandSpec {
                    program: server.program.to_owned(),
                    args: server.args.iter().map(|a| (*a).to_owned()).collect(),
                    cwd: String::new(),
                    env: Vec::new(),
                    timeout: None,
                };
                return Ok((server, spec));
            }
            tried.push(format!("{} ({})", server.program, server.install));
        }
        Err(Failure::new(
            ErrorCode::LanguageServerMissing,
            format!(
                "no language server for {} is on the PATH Sluice runs programs from; install one \
                 of: {}. The syntax tier still answers code_definition and code_references by name",
                language.as_str(),
                tried.join("; ")
            ),
        ))
    }

    /// Starts `server` as a channel job from `request` (made by the caller after asking) and
    /// initializes it. Blocking: up to [`START`] for the server to answer.
    pub fn start_server(
        &self,
        handle: &ProjectHandle,
        server: &'static LanguageServer,
        mut request: JobRequest,
    ) -> Result<Arc<WarmServer>, Failure> {
        request.shown_as = Some(format!("language server: {}", request.command.display()));
        let root = handle.workspace.root().path().to_path_buf();
        let (job, channel) = self.jobs.start_channel(request).map_err(Failure::from)?;
        let session =
            match Session::start(channel.input, channel.output, &root, server.program, START) {
                Ok(session) => session,
                Err(e) => {
                    let _ = self.jobs.cancel(&job);
                    return Err(Failure::new(
                        ErrorCode::LanguageServerFailed,
                        format!(
                            "the language server {} did not start ({e}); its job {job} has its \
                         output",
                            server.program
                        ),
                    ));
                }
            };
        let warm = Arc::new(WarmServer { job, server, session, used: Mutex::new(Instant::now()) });
        let key = (handle.id.clone(), server.program);
        let replaced = lock(&self.servers.running).insert(key, warm.clone());
        if let Some(old) = replaced {
            self.stop_server(&old);
        }
        Ok(warm)
    }

    fn stop_server(&self, warm: &WarmServer) {
        warm.session.shutdown();
        let _ = self.jobs.cancel(&warm.job);
    }

    /// Stops the servers that idled for [`IDLE`], whose project may no longer run them, or all
    /// of them while Sluice is paused; forgets those that ended. Blocking (a stop waits for the
    /// job's tree to die).
    pub fn reap_servers(&self) {
        let (paused, projects) = match self.refresh() {
            Ok(cache) => (cache.paused, cache.projects.clone()),
            Err(_) => return,
        };
        let doomed: Vec<Arc<WarmServer>> = {
            let mut running = lock(&self.servers.running);
            let mut doomed = Vec::new();
            running.retain(|(project, _), warm| {
                let allowed = projects.iter().any(|p| {
                    p.id == *project
                        && p.state.is_available()
                        && p.access != AccessMode::ReadOnly
                        && matches!(p.exec, ExecMode::Project | ExecMode::Any)
                });
                let idle = lock(&warm.used).elapsed() >= IDLE;
                let keep = allowed && !paused && !idle && !warm.session.ended();
                if !keep {
                    doomed.push(warm.clone());
                }
                keep
            });
            doomed
        };
        for warm in doomed {
            self.stop_server(&warm);
        }
    }
}
