//! The execution tools. Starting a command goes through one path, [`SluiceServer::prepare`]:
//! resolve the project for this token, get the engine's verdict (execution mode, risk class,
//! trusted PATH, the user's exact allow rules), ask the user when the verdict says so, decide
//! again after the approval and refuse if the command differs from what was approved, check
//! pause and emergency stop right before starting, then hand the resolved argv to the job
//! registry. `run_tests` and `run_build` only add a step in front: the engine detects the
//! project's toolchain and builds an ordinary command from it. Jobs belong to their project: a
//! token sees only jobs of projects in its scope, live ones and those remembered in the store.

use std::time::Duration;

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, RequestMetaObject};
use rmcp::{ErrorData, Peer, RoleServer, tool, tool_router};
use sluice_core::{ErrorCode, Failure, NetworkMode};
use sluice_engine::{AskRequest, Caller, Engine};
use sluice_exec::detect::{Action, DetectRequest, Toolchain};
use sluice_exec::{CommandSpec, Interactive, JobId, JobRequest};
use tokio_util::sync::CancellationToken;

use crate::checkpoint::Checkpointed;
use crate::job_wire::{
    CommandArgs, JobArgs, JobLogsArgs, JobLogsOutput, JobOutput, JobStatusArgs, ListJobsArgs,
    ListJobsOutput, RunCommandOutput, StartJobArgs, ToolchainArgs, ToolchainRunOutput, shown,
    state_str,
};
use crate::live::respond;
use crate::progress::Progress;
use crate::server::{ProjectCall, SluiceServer};

/// `run_command` waits at most this long by default, and never longer than the maximum.
pub(crate) const RUN_DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
pub(crate) const RUN_MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// `run_tests` and `run_build` wait this long by default (and at most `RUN_MAX_TIMEOUT`).
const TOOLCHAIN_DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// A job's default and longest time limit.
const JOB_DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
const JOB_MAX_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

impl CommandArgs {
    pub(crate) fn spec(self, default: Duration, max: Duration) -> CommandSpec {
        let timeout = self.timeout_seconds.map_or(default, Duration::from_secs).min(max);
        CommandSpec {
            program: self.program,
            args: self.args,
            cwd: self.cwd.unwrap_or_default(),
            env: self.env.unwrap_or_default().into_iter().collect(),
            timeout: Some(timeout),
        }
    }
}

/// Everything a starting tool knows about its call besides its own arguments.
pub(crate) struct Start {
    pub(crate) caller: Caller,
    pub(crate) project: String,
    tool: &'static str,
    pub(crate) cancel: CancellationToken,
    progress: Progress,
    /// A job the assistant may type into, and ports it publishes (start_job only).
    pub(crate) interactive: Option<Interactive>,
    pub(crate) publish: Vec<u16>,
    /// A language server the engine keeps running for the project (the code tools).
    pub(crate) language_server: bool,
}

impl Start {
    /// The start of a plain command by `tool`.
    pub(crate) fn new(
        caller: Caller,
        project: String,
        tool: &'static str,
        cancel: CancellationToken,
        progress: Progress,
    ) -> Start {
        Start {
            caller,
            project,
            tool,
            cancel,
            progress,
            interactive: None,
            publish: Vec::new(),
            language_server: false,
        }
    }

    /// The same start, of a language server for the code tools (its approval says so).
    pub(crate) fn of_language_server(self) -> Start {
        Start { language_server: true, ..self }
    }
}

impl SluiceServer {
    /// Decides, asks when the verdict says so, re-decides, checks access; returns the request
    /// to start. Nothing runs unless this returns `Ok`.
    pub(crate) async fn prepare(
        &self,
        start: Start,
        spec: CommandSpec,
    ) -> Result<(JobRequest, Checkpointed), Failure> {
        let Start {
            caller,
            project,
            tool,
            cancel,
            progress,
            interactive,
            publish,
            language_server,
        } = start;
        let engine = self.engine();
        let handle = engine.project(&caller, &project)?;
        let verdict = engine.plan_exec(&handle, &spec)?;
        // Typing into a program, or opening its server to this computer, is more than running it
        // once: such a start always asks, whatever rule or mode would let it run, offering none.
        let live = interactive.is_some() || !publish.is_empty();
        if verdict.ask || live {
            let fingerprint = Engine::verdict_fingerprint(&verdict);
            let network = engine.network_for(&handle)?;
            let mut summary = format!(
                "run {} — risk {}: {}; writes confined to the project, network {}",
                verdict.resolved.describe(),
                verdict.risk,
                sluice_core::text::visible(&verdict.reason),
                match network.mode {
                    NetworkMode::Off => "off",
                    NetworkMode::Registries => "only the package registries",
                    NetworkMode::On => "on",
                }
            );
            // The shield's files it will see (granted, or all where nothing can cover them).
            let line = {
                let (engine, handle) = (engine.clone(), handle.clone());
                tokio::task::spawn_blocking(move || engine.shielded_in_view(&handle))
                    .await
                    .map_err(|_| Failure::internal())?
            };
            if let Some(line) = line {
                summary.push('\n');
                summary.push_str(&line);
            }
            if let Some(kind) = interactive {
                summary.push('\n');
                summary.push_str(&interactive_line(kind));
            }
            if !publish.is_empty() {
                summary.push('\n');
                summary.push_str(&crate::ports::publish_line(&publish));
            }
            if language_server {
                summary.push('\n');
                summary.push_str(SERVER_LINE);
            }
            if !live {
                engine.offer_rule(&handle.id, &fingerprint, &verdict);
            }
            let request = AskRequest {
                caller: &caller,
                project: &handle,
                tool,
                summary: summary.clone(),
                tally: None,
                asked_because: match verdict.form {
                    _ if interactive.is_some() => {
                        "an interactive job always asks: the assistant will type into it".to_owned()
                    }
                    _ if live => "a job that publishes ports always asks".to_owned(),
                    sluice_exec::Form::Inspection => {
                        "the project picks the program this inspection runs".to_owned()
                    }
                    _ => format!(
                        "execution mode `{}` asks before a command no allow rule covers",
                        handle.exec
                    ),
                },
                fingerprint,
            };
            let outcome = progress.ask(engine, request, cancel).await;
            engine.withdraw_rule(&fingerprint);
            if let Some(refusal) = outcome?.refusal() {
                return Err(refusal);
            }
            // What runs must be exactly what was approved: decide again and compare.
            let again = engine.plan_exec(&handle, &spec)?;
            if again.fingerprint != verdict.fingerprint {
                return Err(Failure::new(
                    ErrorCode::Conflict,
                    "the command resolved differently after the user approved it, so nothing \
                     ran; retry",
                ));
            }
        }
        // A pause or an emergency stop that landed while deciding or waiting stops it here.
        engine.check_exec_start()?;
        // A run is audited before its result goes back: refuse now if that could not be.
        let auditable = engine.clone();
        tokio::task::spawn_blocking(move || auditable.check_auditable())
            .await
            .map_err(|_| Failure::internal())??;
        let mut request = engine.job_request(&handle, &verdict)?;
        request.owner = Some(caller.token_id.as_str().to_owned());
        request.interactive = interactive;
        request.publish = publish;
        let taken = self.checkpoint_before(&handle, &shown(&request.command.display())).await;
        request.checkpoint = taken.id.clone();
        Ok((request, taken))
    }

    /// Prepares `spec`, runs it and waits for the end.
    async fn run_to_end(
        &self,
        start: Start,
        spec: CommandSpec,
    ) -> Result<RunCommandOutput, Failure> {
        let cancel = start.cancel.clone();
        let (req, taken) = self.prepare(start, spec).await?;
        let command = shown(&req.command.display());
        let jobs = self.engine().jobs();
        let id = jobs.start(req).map_err(Failure::from)?;
        taken.started(&id.0);
        // A closed response stream (or `notifications/cancelled`) cancels the request's token:
        // the command approved for this call stops with it, it does not run on unseen.
        let out = tokio::select! {
            out = jobs.output(&id) => out.map_err(Failure::from)?,
            () = cancel.cancelled() => {
                let (jobs, id) = (jobs.clone(), id.clone());
                // Cancelling waits for the whole tree to die.
                let _ = tokio::task::spawn_blocking(move || jobs.cancel(&id)).await;
                return Err(Failure::new(
                    ErrorCode::Cancelled,
                    "the client cancelled the request, so the command was stopped",
                ));
            }
        };
        Ok(RunCommandOutput {
            command,
            state: state_str(out.state),
            exit_code: out.exit_code,
            signal: out.signal,
            stdout: out.stdout,
            stderr: out.stderr,
            truncated: out.truncated,
            duration_ms: out.duration.as_millis() as u64,
            timed_out: out.timed_out,
            checkpoint_id: taken.id,
            checkpoint_skipped: taken.skipped,
        })
    }

    async fn run_command_with(
        &self,
        start: Start,
        args: CommandArgs,
    ) -> Result<RunCommandOutput, Failure> {
        self.run_to_end(start, args.spec(RUN_DEFAULT_TIMEOUT, RUN_MAX_TIMEOUT)).await
    }

    async fn start_job_with(
        &self,
        mut start: Start,
        args: StartJobArgs,
    ) -> Result<JobOutput, Failure> {
        start.interactive = args.interactive.map(Interactive::from);
        start.publish = args.publish.clone();
        let ready = crate::ports::Ready::of(args.ready.as_ref(), &args.publish)?;
        let cancel = start.cancel.clone();
        let spec = args.command.spec(JOB_DEFAULT_TIMEOUT, JOB_MAX_TIMEOUT);
        let (req, taken) = self.prepare(start, spec).await?;
        let jobs = self.engine().jobs();
        let id = jobs.start(req).map_err(Failure::from)?;
        taken.started(&id.0);
        let waited = match ready {
            Some(ready) => Some(self.wait_ready(&id, ready, cancel).await?),
            None => None,
        };
        let mut out = JobOutput::from(jobs.status(&id).map_err(Failure::from)?);
        out.ready = waited.map(str::to_owned);
        out.checkpoint_skipped = taken.skipped;
        Ok(out)
    }

    async fn run_tests_with(
        &self,
        start: Start,
        args: ToolchainArgs,
    ) -> Result<ToolchainRunOutput, Failure> {
        self.run_detected(start, args, Action::Test).await
    }

    async fn run_build_with(
        &self,
        start: Start,
        args: ToolchainArgs,
    ) -> Result<ToolchainRunOutput, Failure> {
        self.run_detected(start, args, Action::Build).await
    }

    /// Detects the toolchain in the folder, then runs its command like `run_command`.
    async fn run_detected(
        &self,
        start: Start,
        args: ToolchainArgs,
        action: Action,
    ) -> Result<ToolchainRunOutput, Failure> {
        let toolchain = match args.toolchain.as_deref() {
            Some(name) => Some(Toolchain::parse(name).map_err(Failure::from)?),
            None => None,
        };
        let detection = {
            let engine = self.engine();
            let handle = engine.project(&start.caller, &start.project)?;
            let req = DetectRequest {
                action,
                toolchain,
                filter: args.filter.as_deref(),
                args: &args.args,
            };
            engine.detect_toolchain(&handle, args.path.as_deref().unwrap_or(""), &req)?
        };
        let timeout = args
            .timeout_seconds
            .map_or(TOOLCHAIN_DEFAULT_TIMEOUT, Duration::from_secs)
            .min(RUN_MAX_TIMEOUT);
        let spec = CommandSpec {
            env: args.env.unwrap_or_default().into_iter().collect(),
            timeout: Some(timeout),
            ..detection.spec
        };
        let path = spec.cwd.clone();
        let run = self.run_to_end(start, spec).await?;
        Ok(ToolchainRunOutput {
            toolchain: detection.toolchain.as_str().to_owned(),
            detected_from: detection.detected_from,
            path,
            run,
        })
    }
}

/// The line a language server's start adds to the user's approval card.
const SERVER_LINE: &str = "a language server for the code tools: it stays running for this \
    project, in the same sandbox, until it idles for 10 minutes, Sluice is paused or stopped, or \
    the project may no longer run commands";

/// The line an interactive start adds to the user's approval card.
fn interactive_line(kind: Interactive) -> String {
    format!(
        "interactive ({}): the assistant will be able to type into this program while it runs \
         (text, Enter, Ctrl-C, …); an interpreter or shell started this way runs anything it is \
         sent, inside the same sandbox",
        kind.as_str()
    )
}

/// The tools that start a command differ only in their name, description, arguments, output
/// and handler: one macro writes their rmcp methods (it must emit the whole `#[tool_router]`
/// impl so the router sees them), with the job tools alongside.
macro_rules! exec_tools {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident($args:ty) -> $out:ty = $handler:ident;
    )*) => {
        #[tool_router(router = exec_tools, vis = "pub(crate)")]
        impl SluiceServer {
            $(
                #[tool(
                    description = concat!($($doc, " "),*),
                    annotations(
                        read_only_hint = false,
                        destructive_hint = true,
                        idempotent_hint = false,
                        open_world_hint = false
                    ),
                    output_schema = schema_for_output::<$out>()
                )]
                async fn $name(
                    &self,
                    Extension(caller): Extension<Caller>,
                    cancel: CancellationToken,
                    peer: Peer<RoleServer>,
                    meta: RequestMetaObject,
                    Parameters(call): Parameters<ProjectCall<$args>>,
                ) -> Result<CallToolResult, ErrorData> {
                    let progress = Progress { peer, meta };
                    let start =
                        Start::new(caller, call.project, stringify!($name), cancel, progress);
                    respond(self.$handler(start, call.args).await)
                }
            )*

            #[tool(
                description = "The state of a job: running or finished, exit code, output \
                sizes, CPU and memory. Jobs are remembered across Sluice restarts (a job that \
                was running when Sluice stopped is `lost`).",
                annotations(read_only_hint = true, open_world_hint = false),
                output_schema = schema_for_output::<JobOutput>()
            )]
            async fn job_status(
                &self,
                Extension(caller): Extension<Caller>,
                cancel: CancellationToken,
                Parameters(args): Parameters<JobStatusArgs>,
            ) -> Result<CallToolResult, ErrorData> {
                respond(self.status_waiting(&caller, &args, cancel).await)
            }

            #[tool(
                description = "Read a job's output a page at a time: start at cursor 0 and pass \
                each page's `next_cursor` to read on. Works while it runs and after it finished \
                (output is kept in memory only: not after a Sluice restart).",
                annotations(read_only_hint = true, open_world_hint = false),
                output_schema = schema_for_output::<JobLogsOutput>()
            )]
            async fn job_logs(
                &self,
                Extension(caller): Extension<Caller>,
                cancel: CancellationToken,
                Parameters(args): Parameters<JobLogsArgs>,
            ) -> Result<CallToolResult, ErrorData> {
                respond(self.logs_waiting(&caller, &args, cancel).await)
            }

            #[tool(
                description = "Cancel a job: its whole process tree is killed (queued jobs \
                never start). Returns the final state.",
                annotations(
                    read_only_hint = false,
                    destructive_hint = true,
                    idempotent_hint = true,
                    open_world_hint = false
                ),
                output_schema = schema_for_output::<JobOutput>()
            )]
            async fn cancel_job(
                &self,
                Extension(caller): Extension<Caller>,
                Parameters(args): Parameters<JobArgs>,
            ) -> Result<CallToolResult, ErrorData> {
                respond(self.cancel(&caller, &args.job_id).await)
            }

            #[tool(
                description = "List the jobs of your projects (running, recently finished, and \
                past ones remembered across restarts), optionally of one project.",
                annotations(read_only_hint = true, open_world_hint = false),
                output_schema = schema_for_output::<ListJobsOutput>()
            )]
            async fn list_jobs(
                &self,
                Extension(caller): Extension<Caller>,
                Parameters(args): Parameters<ListJobsArgs>,
            ) -> Result<CallToolResult, ErrorData> {
                respond(self.jobs_listing(&caller, &args))
            }
        }
    };
}

exec_tools! {
    /// Run a command in a project and wait for it (up to `timeout_seconds`, default 60, at most
    /// 600): a program and an argument array, never a shell string. The project's execution
    /// mode decides what may run; some commands wait for the user's approval. Runs confined:
    /// writes only inside the project, outbound network only as the project allows it (off
    /// unless the user chose otherwise; in project mode only HTTPS to the package registries,
    /// through a proxy the environment names), a cleared environment.
    /// For long builds and tests use start_job.
    run_command(CommandArgs) -> RunCommandOutput = run_command_with;
    /// Start a command as a background job in a project and return its id at once (same rules
    /// as run_command; default time limit 30 minutes). The job keeps running if you disconnect;
    /// follow it with job_status and job_logs, stop it with cancel_job.
    /// With `interactive` (`terminal` or `pipe`) the job takes input: type into it with
    /// write_job_input and read its answers with job_logs and `wait`; the user is always asked.
    start_job(StartJobArgs) -> JobOutput = start_job_with;
    /// Run the project's tests and wait (default 300 s, at most 600): the toolchain is detected
    /// from the files of `path` (Cargo.toml, package.json scripts with its lockfile's package
    /// manager, go.mod, build.gradle, pom.xml, .sln/.csproj, pytest configuration, Makefile or
    /// justfile `test` target). Same rules, approvals and confinement as run_command; the result
    /// says which toolchain ran and the exact command.
    run_tests(ToolchainArgs) -> ToolchainRunOutput = run_tests_with;
    /// Build the project and wait (default 300 s, at most 600), detecting the toolchain like
    /// run_tests (`cargo build`, the package.json `build` script, `go build ./...`, `gradle
    /// assemble`, `mvn compile`, `dotnet build`, a Makefile or justfile `build` target).
    run_build(ToolchainArgs) -> ToolchainRunOutput = run_build_with;
}

impl SluiceServer {
    async fn cancel(&self, caller: &Caller, job_id: &str) -> Result<JobOutput, Failure> {
        let engine = self.engine().clone();
        let status = engine.job_to_cancel(caller, job_id)?;
        if status.state.is_final() {
            // Finished (or remembered from before a restart): nothing to kill.
            return Ok(JobOutput::from(status));
        }
        let id: JobId = status.id;
        let done = tokio::task::spawn_blocking(move || {
            engine.jobs().cancel(&id).map_err(Failure::from)?;
            engine.jobs().status(&id).map_err(Failure::from)
        })
        .await
        .map_err(|_| Failure::internal())??;
        Ok(JobOutput::from(done))
    }

    fn jobs_listing(
        &self,
        caller: &Caller,
        args: &ListJobsArgs,
    ) -> Result<ListJobsOutput, Failure> {
        let engine = self.engine();
        let only = match &args.project {
            Some(p) => Some(engine.project(caller, p)?.id),
            None => None,
        };
        let jobs = engine
            .jobs_for(caller)
            .into_iter()
            .filter(|j| only.as_ref().is_none_or(|p| p.as_str() == j.project))
            .map(JobOutput::from)
            .collect();
        Ok(ListJobsOutput { jobs })
    }
}
