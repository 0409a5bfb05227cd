//! The MCP tool surface. Every `tools/call` passes through [`SluiceServer::call_tool`], the one
//! place that checks access again at the point of execution, runs the tool, and appends the
//! audit record. Tool bodies are thin adapters over the runner and the git crate.

use std::sync::{Arc, LazyLock};
use std::time::Instant;

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::tool::{ToolCallContext, ToolRouter};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, MetaObject, PaginatedRequestParams, ResultType, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sluice_core::{Coded, Failure};
use sluice_engine::{AuditOutcome, Caller, Durability, Engine, ProjectHandle, RequestAudit};
use sluice_runner::{
    FindFilesArgs, FindFilesOutput, ListDirectoryArgs, ListDirectoryOutput, ReadFileArgs,
    ReadFileOutput, SearchTextArgs, SearchTextOutput, StatArgs, StatOutput,
};

use crate::dto;
use crate::task_results::{self, Tasks};

/// Arguments of every project tool: the project, then the tool's own fields.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProjectCall<T> {
    /// The project to work in: its id (`proj_…`) or its display name, as `list_projects` shows.
    pub project: String,
    #[serde(flatten)]
    pub args: T,
}

/// `list_projects`, `server_info` and `system_info` take no arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct NoArgs {}

#[derive(Clone)]
pub struct SluiceServer {
    engine: Arc<Engine>,
    /// [`TOOLS`]: rmcp makes a server per stateless request, so the router is shared.
    tool_router: &'static LazyLock<ToolRouter<SluiceServer>>,
    /// The calls running as MCP tasks, and what ended ones returned (shared the same way).
    tasks: Arc<Tasks>,
}

/// Every tool ([`SluiceServer::all_tools`]), built when a client first needs one and shared by
/// every server in the process. Building it (every tool's schemas) was the largest part of a
/// start, and the schemas stay in the heap: an engine no client has asked yet (the app's,
/// started at login) spends neither, and the first call waits for it once
/// (docs/BENCHMARKS.md, "Where a start's time and memory go").
static TOOLS: LazyLock<ToolRouter<SluiceServer>> = LazyLock::new(SluiceServer::all_tools);

const INSTRUCTIONS: &str = "Sluice gives you access to the projects the user has authorized, \
and nothing else. Start with list_projects; every other tool takes a `project` (id or name) and \
project-relative paths ('.' is the project root). Sensitive files (.env, keys, credentials, .git \
internals) are hidden by the user's shield. Errors carry a stable `code` and a message saying \
how to recover.";

impl SluiceServer {
    /// A server with tasks of its own (one per HTTP listener; rmcp clones it per request).
    pub fn new(engine: Arc<Engine>) -> SluiceServer {
        SluiceServer { engine, tool_router: &TOOLS, tasks: Arc::new(Tasks::default()) }
    }

    /// Every tool Sluice offers, each output schema admitting the tool's refusals too.
    pub fn all_tools() -> ToolRouter<SluiceServer> {
        let mut router = SluiceServer::tool_router()
            + SluiceServer::media_tools()
            + SluiceServer::write_tools()
            + SluiceServer::git_tools()
            + SluiceServer::checkpoint_tools()
            + SluiceServer::code_tools()
            + SluiceServer::code_server_tools()
            + SluiceServer::worktree_tools()
            + SluiceServer::exec_tools()
            + SluiceServer::live_tools()
            + SluiceServer::port_tools();
        for route in router.map.values_mut() {
            if let Some(schema) = &route.attr.output_schema {
                route.attr.output_schema = Some(Arc::new(admit_refusals(schema)));
            }
        }
        router
    }

    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub(crate) fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// Whether `tool` exists and is annotated read-only: it changes nothing and runs nothing,
    /// so it never asks the user and never talks to the client mid-call.
    pub(crate) fn is_read_only(&self, tool: &str) -> bool {
        self.tool_router
            .get(tool)
            .and_then(|t| t.annotations.as_ref())
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false)
    }

    /// Resolves the project for this caller, runs `f` where `work` says, and turns the outcome
    /// into a tool result.
    pub(crate) async fn in_project<T, E, F>(
        &self,
        caller: &Caller,
        project: &str,
        work: Work,
        f: F,
    ) -> Result<CallToolResult, ErrorData>
    where
        T: Serialize + Send + 'static,
        E: Coded + Send + 'static,
        F: FnOnce(&ProjectHandle) -> Result<T, E> + Send + 'static,
    {
        self.in_project_as(caller, project, work, f, |output| succeeded(&output)).await
    }

    /// [`SluiceServer::in_project`] for a tool whose result is more than its structured output
    /// (`read_media`'s picture or bytes): `answer` makes the result of a success.
    pub(crate) async fn in_project_as<T, E, F>(
        &self,
        caller: &Caller,
        project: &str,
        work: Work,
        f: F,
        answer: fn(T) -> CallToolResult,
    ) -> Result<CallToolResult, ErrorData>
    where
        T: Send + 'static,
        E: Coded + Send + 'static,
        F: FnOnce(&ProjectHandle) -> Result<T, E> + Send + 'static,
    {
        // `call_tool` refreshed the engine's state for its access check an instant ago.
        let handle = match self.engine.project_as_loaded(caller, project) {
            Ok(handle) => handle,
            Err(failure) => return Ok(failed(&failure)),
        };
        let run = move || f(&handle).map_err(|e| Failure::new(e.code(), e.to_string()));
        let outcome = match work {
            Work::OneFile => Ok(run()),
            Work::Walk | Work::Decode => tokio::task::spawn_blocking(run).await,
        };
        Ok(match outcome {
            Ok(Ok(output)) => answer(output),
            Ok(Err(failure)) => failed(&failure),
            Err(join) => {
                tracing::error!(%join, "tool task failed");
                failed(&Failure::internal())
            }
        })
    }
}

/// Where a tool's synchronous file work runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Work {
    /// One file or folder entry, bounded by the tool's size caps: microseconds on a local disk,
    /// less than handing it to another thread and back costs, so it runs on the request's task.
    OneFile,
    /// Walks, searches and git: unbounded in time, so on a blocking thread.
    Walk,
    /// Decoding and scaling an image: bounded, but up to a second of CPU for a large one, so on
    /// a blocking thread too — where a decoder bug that panics ends only its own task (the call
    /// is refused as `internal`), never the server.
    Decode,
}

/// Who answers: `initialize`'s `serverInfo`, and the same in every result's `_meta`.
fn implementation() -> Implementation {
    Implementation::new("sluice", env!("CARGO_PKG_VERSION"))
        .with_title("Sluice")
        .with_description("Authorized projects on this computer, guarded by Sluice")
}

/// The `_meta` of every result: `io.modelcontextprotocol/serverInfo`, which 2026-07-28 asks
/// servers to include so a client can tell who answered without any connection state.
pub(crate) fn result_meta() -> MetaObject {
    static META: LazyLock<MetaObject> = LazyLock::new(|| {
        let mut meta = MetaObject::default();
        let info = serde_json::to_value(implementation()).unwrap_or_default();
        meta.0.insert("io.modelcontextprotocol/serverInfo".to_owned(), info);
        meta
    });
    META.clone()
}

pub(crate) fn succeeded<T: Serialize>(output: &T) -> CallToolResult {
    // `CallToolResult::structured`, with the text written by `to_string` (the same bytes as
    // `Value`'s `Display`, which goes through `fmt` and cost a few percent of a read's CPU).
    match serde_json::to_value(output).and_then(|v| Ok((serde_json::to_string(&v)?, v))) {
        Ok((text, value)) => {
            let mut result = CallToolResult::structured(Value::Null);
            result.content = vec![ContentBlock::text(text)];
            result.structured_content = Some(value);
            result.meta = Some(result_meta());
            result
        }
        Err(err) => {
            tracing::error!(%err, "tool output did not serialize");
            failed(&Failure::internal())
        }
    }
}

/// `schema` (a tool's output) widened to also admit what [`failed`] puts in an error result's
/// structured content, `{code, message}`. A result with `isError` need not match the output
/// schema, but the TypeScript SDK v1 — what most clients embed — checks an error's structured
/// content against it anyway and throws on a mismatch, so the model would never see Sluice's
/// code and recovery message. `$defs` stay at the top, where the output's `$ref`s point.
fn admit_refusals(schema: &rmcp::model::JsonObject) -> rmcp::model::JsonObject {
    let mut output = schema.clone();
    let mut top = rmcp::model::JsonObject::new();
    for key in ["$schema", "$defs", "title"] {
        if let Some(v) = output.remove(key) {
            top.insert(key.to_owned(), v);
        }
    }
    top.insert("type".to_owned(), json!("object"));
    let refusal = json!({
        "type": "object",
        "description": "A refusal (the result has `isError`): a stable code to act on and a \
                        message saying how to recover.",
        "properties": {
            "code": { "type": "string", "description": "Stable: match on it, never on the message." },
            "message": { "type": "string", "description": "For the reader: what to do next." },
        },
        "required": ["code", "message"],
        "additionalProperties": false,
    });
    top.insert("anyOf".to_owned(), json!([Value::Object(output), refusal]));
    top
}

pub(crate) fn failed(failure: &Failure) -> CallToolResult {
    let message = sluice_core::redact::redact(&failure.message);
    let content = json!({ "code": failure.code.as_str(), "message": message });
    let mut result = CallToolResult::structured_error(content);
    result.meta = Some(result_meta());
    result
}

#[tool_router]
impl SluiceServer {
    #[tool(
        description = "List the projects you may use: id, name, access mode (read-only or \
        read-write), execution mode, and whether each is available right now.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<dto::ProjectList>()
    )]
    async fn list_projects(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(_): Parameters<NoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(succeeded(&dto::ProjectList::from(self.engine.visible_projects(&caller))))
    }

    #[tool(
        description = "Describe this Sluice server: version, protocol, whether AI access is \
        paused, the limits that apply to reads and searches, and which token you are using.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<dto::ServerInfo>()
    )]
    async fn server_info(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(_): Parameters<NoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(succeeded(&dto::ServerInfo::new(&self.engine, &caller)))
    }

    #[tool(
        description = "Lower your own privileges, for instance when you are unsure what you are \
        doing or something went wrong: `agent` (files and commands, no more), `edit` (read and \
        change files, run nothing), `read-only` (keep reading and searching, but change no file \
        and run nothing) or `paused` (every later request with this token is refused). A lower \
        rung already in force is kept. Whatever this token was waiting for is denied and, below \
        `agent`, the commands it started are stopped. You cannot undo it: only the user can \
        restore the token in Sluice.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<dto::DroppedPrivileges>()
    )]
    async fn drop_privileges(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(args): Parameters<dto::DropPrivilegesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.engine.clone();
        // Cancelling the token's jobs waits for their trees to die.
        let dropped = tokio::task::spawn_blocking(move || args.apply(&engine, &caller)).await;
        Ok(match dropped {
            Ok(Ok(token)) => succeeded(&dto::DroppedPrivileges::new(&token)),
            Ok(Err(failure)) => failed(&failure),
            Err(join) => {
                tracing::error!(%join, "drop_privileges failed");
                failed(&Failure::internal())
            }
        })
    }

    #[tool(
        description = "Describe the computer: operating system, CPU, memory. Contains no paths \
        and no user or host names.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<dto::SystemInfo>()
    )]
    async fn system_info(
        &self,
        Parameters(_): Parameters<NoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let info = tokio::task::spawn_blocking(dto::SystemInfo::collect)
            .await
            .map_err(|_| ErrorData::internal_error("system_info failed", None))?;
        Ok(succeeded(&info))
    }

    #[tool(
        description = "List a folder of a project (recursively up to `depth`), honouring \
        .gitignore. Hidden sensitive files never appear.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ListDirectoryOutput>()
    )]
    async fn list_directory(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<ListDirectoryArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            sluice_runner::list_directory(&p.workspace, &args)
        })
        .await
    }

    #[tool(
        description = "Metadata of one path in a project: kind, size, modification time, and \
        where an in-project symbolic link points.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<StatOutput>()
    )]
    async fn stat(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<StatArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::OneFile, move |p| {
            sluice_runner::stat(&p.workspace, &args)
        })
        .await
    }

    #[tool(
        description = "Read a text file of a project (source, config, SVG, …), whole or a \
        range of lines. Returns the text, the line range, the total line count and a content \
        hash. For images and other binary files use read_media.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ReadFileOutput>()
    )]
    async fn read_file(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<ReadFileArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::OneFile, move |p| {
            sluice_runner::read_file(&p.workspace, &args)
        })
        .await
    }

    #[tool(
        description = "Find files in a project by glob pattern (e.g. `**/*.rs`), honouring \
        .gitignore.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<FindFilesOutput>()
    )]
    async fn find_files(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<FindFilesArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            sluice_runner::find_files(&p.workspace, &args)
        })
        .await
    }

    #[tool(
        description = "Search the text of a project's files with a regular expression or a \
        literal string (ripgrep's engine: linear time), with globs, context lines and caps.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SearchTextOutput>()
    )]
    async fn search_text(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<SearchTextArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            sluice_runner::search_text(&p.workspace, &args)
        })
        .await
    }

    #[tool(
        description = "Git status of a project: branch and changed, staged and untracked files.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<sluice_git::GitStatusOutput>()
    )]
    async fn git_status(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<sluice_git::GitStatusArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            let repo = p.repo()?;
            sluice_git::status(&repo, &args, &|path| p.is_hidden(path))
        })
        .await
    }

    #[tool(
        description = "Git diff of a project: unstaged changes (working tree against the \
        index) or, with `staged`, staged changes (index against HEAD); optionally one file.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<sluice_git::GitDiffOutput>()
    )]
    async fn git_diff(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<sluice_git::GitDiffArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            let repo = p.repo()?;
            sluice_git::diff(&repo, &args, &|path| p.is_hidden(path))
        })
        .await
    }

    #[tool(
        description = "Git history of a project: recent commits, optionally of one path or a \
        revision range.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<sluice_git::GitLogOutput>()
    )]
    async fn git_log(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<sluice_git::GitLogArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            let repo = p.repo()?;
            sluice_git::log(&repo, &args, &|path| p.is_hidden(path), p.git_emails)
        })
        .await
    }

    #[tool(
        description = "Show one git commit of a project: its metadata and its changes.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<sluice_git::GitShowOutput>()
    )]
    async fn git_show(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<sluice_git::GitShowArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            let repo = p.repo()?;
            sluice_git::show(&repo, &args, &|path| p.is_hidden(path), p.git_emails)
        })
        .await
    }
}

/// The caller the HTTP gate authenticated, carried in the request's HTTP parts.
pub(crate) fn caller_of(context: &RequestContext<RoleServer>) -> Option<Caller> {
    context.extensions.get::<axum::http::request::Parts>()?.extensions.get::<Caller>().cloned()
}

fn error_code_of(result: &Result<CallToolResponse, ErrorData>) -> (AuditOutcome, Option<String>) {
    match result {
        Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
            let code = r
                .structured_content
                .as_ref()
                .and_then(|v| v.get("code"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            (AuditOutcome::Error, code)
        }
        Ok(_) => (AuditOutcome::Ok, None),
        Err(e) => (AuditOutcome::Error, Some(format!("jsonrpc:{}", e.code.0))),
    }
}

impl ServerHandler for SluiceServer {
    fn get_info(&self) -> ServerConfig {
        let mut config =
            ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
                .with_server_info(implementation())
                .with_instructions(INSTRUCTIONS);
        // `initialize` and `server/discover` answers carry it in `_meta` too.
        config.meta = Some(result_meta());
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let Some(caller) = caller_of(&context) else {
            return Err(ErrorData::invalid_request("unauthenticated request", None));
        };
        self.engine.audit_request(RequestAudit {
            caller: &caller,
            action: "tools/list",
            project_ref: None,
            outcome: AuditOutcome::Ok,
            error_code: None,
            duration_ms: 0,
            params: None,
            durability: Durability::Soon,
        });
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            // Each token is shown only the tools of its profile.
            tools: (self.tool_router.list_all().into_iter())
                .filter(|t| crate::profile::offers(&caller, &t.name))
                .collect(),
            meta: Some(result_meta()),
            next_cursor: None,
            cache_scope: None,
            ttl_ms: None,
        })
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(caller) = caller_of(&context) else {
            return Err(ErrorData::invalid_request("unauthenticated request", None));
        };
        // A client that declared the Tasks extension gets a task for a call that may take a
        // while — unless it would be refused at once (paused, unknown project), which it hears
        // now, as any client would.
        if task_results::TASK_TOOLS.contains(&request.name.as_ref())
            && task_results::declared(&context)
            && crate::profile::offers(&caller, &request.name)
        {
            let project = request.arguments.as_ref().and_then(|a| a.get("project"));
            let handle = match (self.engine.check_access(), project.and_then(Value::as_str)) {
                (Ok(()), Some(project)) => self.engine.project_as_loaded(&caller, project).ok(),
                _ => None,
            };
            if let Some(handle) = handle {
                return Ok(self.start_task(caller, &handle, request, context));
            }
        }
        self.call_now(caller, request, context).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.get_task_now(request, context).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancel_task_now(request, context)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.update_task_now(request, context)
    }
}

impl SluiceServer {
    /// Runs a tool call to its end and audits it: the whole of a call, whether its client
    /// waits for the answer or polls a task for it.
    pub(crate) async fn call_now(
        &self,
        caller: Caller,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let tool = request.name.to_string();
        let arguments = request.arguments.clone().map(Value::Object).unwrap_or(Value::Null);
        let project = arguments.get("project").and_then(Value::as_str).map(str::to_owned);
        // The gate checked access when the request arrived; a call that waited since (a slow
        // body, a task run later) checks again where the action starts, so a pause that landed
        // in between still stops it. Then the token's profile.
        let allowed = self
            .engine
            .check_access_for(&caller)
            .and_then(|()| crate::profile::check(&caller, &tool));
        let result = match allowed {
            Err(failure) => Ok(CallToolResponse::Complete(failed(&failure))),
            Ok(()) => {
                context.extensions.insert(caller.clone());
                let tcc = ToolCallContext::new(self, request, context);
                self.tool_router.call(tcc).await
            }
        };
        let (outcome, code) = error_code_of(&result);
        // A read may share a commit with its neighbours; a change or an execution is on disk
        // before its result goes back.
        let read_only = self.is_read_only(&tool);
        self.engine.audit_request(RequestAudit {
            caller: &caller,
            action: &tool,
            project_ref: project.as_deref(),
            outcome,
            error_code: code.as_deref(),
            duration_ms: started.elapsed().as_millis() as u64,
            params: Some(&arguments),
            durability: if read_only { Durability::Soon } else { Durability::Now },
        });
        result
    }
}
