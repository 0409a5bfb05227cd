//! Code intelligence from the project's language server (tier two, `sluice_code::lsp`):
//! `code_hover`, `code_diagnostics` and `code_rename`, and the server's answer to
//! `code_definition` and `code_references` when they name a line and the server runs.
//!
//! A server is started the way every command is ([`SluiceServer::prepare`]: the verdict, the
//! user's approval, the decision again, pause and stop), as a channel job the engine keeps warm
//! (`sluice_engine::code_servers`). Only these three tools start one, and they need the agent
//! profile; `code_definition` and `code_references` stay read-only and use a server only while
//! one runs, the syntax index answering otherwise.

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, RequestMetaObject};
use rmcp::{ErrorData, Peer, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use sluice_code::Language;
use sluice_code::lsp::{self, AskError, DiagnosticsOutput, HoverOutput, RenamePreview, Spot};
use sluice_core::{Coded, ErrorCode, Failure};
use sluice_engine::code_servers::{WarmServer, server_refusal};
use sluice_engine::{Caller, Engine, ProjectHandle};
use sluice_runner::Workspace;
use tokio_util::sync::CancellationToken;

use crate::exec::Start;
use crate::live::respond;
use crate::progress::Progress;
use crate::server::{ProjectCall, SluiceServer};

/// How long one question may take (a server answers in milliseconds once it has indexed; the
/// first question after a start waits for that).
const QUESTION: Duration = Duration::from_secs(60);
const DEFAULT_WAIT: u64 = 30;
const MAX_WAIT: u64 = 120;
const MAX_FILES: usize = 50;

/// Arguments of `code_diagnostics`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct DiagnosticsArgs {
    /// The source files to check (1 to 50), relative to the project root; all of one language
    /// server's languages.
    pub paths: Vec<String>,
    /// How long to wait for the server to check them (default 30, max 120 seconds).
    #[schemars(range(min = 1, max = 120))]
    pub wait_seconds: Option<u64>,
}

/// Arguments of `code_rename`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RenameArgs {
    #[serde(flatten)]
    pub at: Spot,
    /// The new name.
    pub new_name: String,
}

/// The project's running language server for `path`'s language, if this caller may use it;
/// never starts one.
pub(crate) fn running_server(
    engine: &Engine,
    handle: &ProjectHandle,
    path: &str,
) -> Option<Arc<WarmServer>> {
    let language = Language::of(path)?;
    server_refusal(handle).is_none().then(|| engine.warm_server(handle, language))?
}

impl SluiceServer {
    /// Asks the project's language server for `path`'s language, starting it first (after
    /// asking the user) when none runs.
    async fn ask_server<T: Send + 'static>(
        &self,
        start: Start,
        path: &str,
        question: impl FnOnce(&lsp::Session, &Workspace) -> Result<T, AskError> + Send + 'static,
    ) -> Result<T, Failure> {
        let engine = self.engine().clone();
        let handle = engine.project(&start.caller, &start.project)?;
        let language = Language::of(path).ok_or_else(|| {
            Failure::new(
                ErrorCode::InvalidArgument,
                format!("`{path}` is not a source file of a language Sluice has a server for"),
            )
        })?;
        // A file the question cannot be about (missing, shielded, outside) is refused before
        // anything is asked or started.
        sluice_runner::open_source(&handle.workspace, path)
            .map_err(|e| Failure::new(e.code(), e.to_string()))?;
        let gate = engine.server_start_gate(&handle, language);
        let held = gate.lock().await;
        let warm = match running_server(&engine, &handle, path) {
            Some(warm) => warm,
            None => {
                let (server, spec) = engine.server_command(&handle, language)?;
                let start = start.of_language_server();
                let (request, taken) = self.prepare(start, spec).await?;
                let (starter, handle2) = (engine.clone(), handle.clone());
                let warm = tokio::task::spawn_blocking(move || {
                    starter.start_server(&handle2, server, request)
                })
                .await
                .map_err(|_| Failure::internal())??;
                taken.started(&warm.job.0);
                warm
            }
        };
        drop(held);
        let program = warm.server.program;
        let workspace = handle.workspace.clone();
        tokio::task::spawn_blocking(move || question(&warm.session, &workspace))
            .await
            .map_err(|_| Failure::internal())?
            .map_err(|e| asked(e, program))
    }
}

/// A failed question as the tool's refusal: the file's own code, or the server's, naming it.
pub(crate) fn asked(e: AskError, program: &str) -> Failure {
    match e {
        AskError::File(e) => Failure::new(e.code(), e.to_string()),
        AskError::Server(e) => Failure::new(
            ErrorCode::LanguageServerFailed,
            format!("{program} (the language server tier): {e}"),
        ),
    }
}

fn progress(peer: Peer<RoleServer>, meta: RequestMetaObject) -> Progress {
    Progress { peer, meta }
}

#[tool_router(router = code_server_tools, vis = "pub(crate)")]
impl SluiceServer {
    #[tool(
        description = "The type and documentation of a name where it is used, as the project's \
        language server shows them (pyright, typescript-language-server, rust-analyzer, gopls, \
        clangd…): give the file, the line and the name on it. The server runs in the project's \
        sandbox: its first start asks the user, like a build, then it stays running.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<HoverOutput>()
    )]
    async fn code_hover(
        &self,
        Extension(caller): Extension<Caller>,
        cancel: CancellationToken,
        peer: Peer<RoleServer>,
        meta: RequestMetaObject,
        Parameters(call): Parameters<ProjectCall<Spot>>,
    ) -> Result<CallToolResult, ErrorData> {
        let start = Start::new(caller, call.project, "code_hover", cancel, progress(peer, meta));
        let (spot, path) = (call.args.clone(), call.args.path);
        let asked = self.ask_server(start, &path, move |s, ws| lsp::hover(s, ws, &spot, QUESTION));
        respond(asked.await)
    }

    #[tool(
        description = "Errors and warnings the project's language server reports for source \
        files (type errors, unresolved names, wrong arguments…), each with file, line, column, \
        severity and message: check a change without running a build. The server runs in the \
        project's sandbox: its first start asks the user, like a build.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<DiagnosticsOutput>()
    )]
    async fn code_diagnostics(
        &self,
        Extension(caller): Extension<Caller>,
        cancel: CancellationToken,
        peer: Peer<RoleServer>,
        meta: RequestMetaObject,
        Parameters(call): Parameters<ProjectCall<DiagnosticsArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = call.args;
        let Some(first) = args.paths.first().cloned() else {
            return respond::<DiagnosticsOutput>(Err(Failure::new(
                ErrorCode::InvalidArgument,
                "`paths` must name 1 to 50 source files",
            )));
        };
        let server = |path: &str| {
            let language = Language::of(path)?;
            sluice_exec::servers_for(language.as_str()).next().map(|s| s.program)
        };
        if let Some(other) = args.paths.iter().find(|p| server(p) != server(&first)) {
            return respond::<DiagnosticsOutput>(Err(Failure::new(
                ErrorCode::InvalidArgument,
                format!(
                    "`{other}` is not checked by the same language server as `{first}`; ask \
                     about each language's files in a call of its own"
                ),
            )));
        }
        if args.paths.len() > MAX_FILES {
            return respond::<DiagnosticsOutput>(Err(Failure::new(
                ErrorCode::InvalidArgument,
                format!("`paths` names {} files; at most {MAX_FILES}", args.paths.len()),
            )));
        }
        let wait =
            Duration::from_secs(args.wait_seconds.unwrap_or(DEFAULT_WAIT).clamp(1, MAX_WAIT));
        let start =
            Start::new(caller, call.project, "code_diagnostics", cancel, progress(peer, meta));
        let paths = args.paths;
        let asked =
            self.ask_server(start, &first, move |s, ws| lsp::diagnostics(s, ws, &paths, wait));
        respond(asked.await)
    }

    #[tool(
        description = "Preview renaming a symbol everywhere it is used, as the project's \
        language server resolves it (not by text): give the file, the line and the name on it, \
        and the new name. Returns a patch and changes nothing: pass it to apply_patch, so the \
        change gets its approval, backup and undo like any other.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<RenamePreview>()
    )]
    async fn code_rename(
        &self,
        Extension(caller): Extension<Caller>,
        cancel: CancellationToken,
        peer: Peer<RoleServer>,
        meta: RequestMetaObject,
        Parameters(call): Parameters<ProjectCall<RenameArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let start = Start::new(caller, call.project, "code_rename", cancel, progress(peer, meta));
        let RenameArgs { at, new_name } = call.args;
        let path = at.path.clone();
        let asked = self.ask_server(start, &path, move |s, ws| {
            lsp::rename_preview(s, ws, &at, &new_name, QUESTION)
        });
        respond(asked.await)
    }
}
