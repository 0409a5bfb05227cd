//! Code intelligence as tools, from the syntax index every project has (`sluice-code`): a
//! file's outline, symbols by name, go to definition, find references. Read-only; nothing runs.
//! While the project's language server runs (`code_server.rs` starts it), it answers the
//! outline and the symbols, and definition and references given a line; otherwise the index
//! does, with a note saying why when a line asked for the server.

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, tool, tool_router};
use sluice_code::{
    DefinitionArgs, DefinitionOutput, OutlineArgs, OutlineOutput, ReferencesArgs, ReferencesOutput,
    SymbolsArgs, SymbolsOutput,
};
use std::sync::Arc;
use std::time::Duration;

use sluice_code::lsp::{self, Spot};
use sluice_core::Failure;
use sluice_engine::code_servers::{WarmServer, server_refusal};
use sluice_engine::{Caller, Engine, ProjectHandle};

use crate::code_server::{asked, running_server};
use crate::server::{ProjectCall, SluiceServer, Work};

#[tool_router(router = code_tools, vis = "pub(crate)")]
impl SluiceServer {
    #[tool(
        description = "Outline of one source file: its functions, classes, methods, types and \
        modules with their first and last lines and what each is nested in, without reading \
        the whole file. From the project's language server while one runs (tier `server`), \
        else from its syntax index (tree-sitter: Rust, Python, JavaScript, TypeScript, Go, C, \
        C++, Java).",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<OutlineOutput>()
    )]
    async fn code_outline(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<OutlineArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let (args, engine) = (call.args, self.engine().clone());
        self.in_project(&caller, &call.project, Work::Decode, move |p| {
            match running_server(&engine, p, &args.path) {
                Some(warm) => lsp::outline(&warm.session, &p.workspace, &args.path, QUESTION)
                    .map_err(|e| asked(e, warm.server.program)),
                None => sluice_code::outline(&p.workspace, &args).map_err(coded),
            }
        })
        .await
    }

    #[tool(
        description = "Find definitions across a project by part of their name (functions, \
        classes, methods, types…), with file, line and kind: exact names first. From the \
        project's language servers while they run (tier `server`), else its syntax index; use \
        code_definition for one name's definition.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SymbolsOutput>()
    )]
    async fn code_symbols(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<SymbolsArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let (args, engine) = (call.args, self.engine().clone());
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            // The running servers that see the whole project answer; else the syntax index.
            let servers: Vec<_> = match server_refusal(p) {
                None => engine.warm_servers(p),
                Some(_) => Vec::new(),
            };
            let servers: Vec<_> =
                servers.into_iter().filter(|w| !w.session.knows_only_open()).collect();
            let max = args.max_results.unwrap_or(50).clamp(1, 500) as usize;
            let mut merged: Option<SymbolsOutput> = None;
            for warm in servers {
                let Ok(out) =
                    lsp::workspace_symbols(&warm.session, &p.workspace, &args, max, QUESTION)
                else {
                    continue;
                };
                match merged.as_mut() {
                    None => merged = Some(out),
                    Some(all) => {
                        all.truncated |= out.truncated;
                        all.symbols.extend(out.symbols);
                    }
                }
            }
            match merged {
                Some(mut out) => {
                    out.truncated |= out.symbols.len() > max;
                    out.symbols.truncate(max);
                    Ok(out)
                }
                None => sluice_code::symbols(&p.workspace, &p.code, &args).map_err(coded),
            }
        })
        .await
    }

    #[tool(
        description = "Go to definition: where a name is defined in the project (`start`, or \
        `Engine::start` for the one inside `Engine`), nearest to the file you name first, each \
        as file, lines and its first line of code. Matched by name in the syntax index, so \
        a common name may have several.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<DefinitionOutput>()
    )]
    async fn code_definition(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<DefinitionArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let (args, engine) = (call.args, self.engine().clone());
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            let Some((warm, spot)) =
                server_spot(&engine, p, &args.path, args.line, args.occurrence, &args.name)
            else {
                let mut out =
                    sluice_code::definition(&p.workspace, &p.code, &args).map_err(coded)?;
                out.note = syntax_note(args.line);
                return Ok(out);
            };
            sluice_code::lsp::definition(&warm.session, &p.workspace, &spot, QUESTION)
                .map_err(|e| asked(e, warm.server.program))
        })
        .await
    }

    #[tool(
        description = "Find references: every use of an identifier in the project's code \
        (not in comments or strings, not as part of a longer name), with file, line, column, \
        the line's text and whether it is a definition. By name, from the syntax tree.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ReferencesOutput>()
    )]
    async fn code_references(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(call): Parameters<ProjectCall<ReferencesArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let (mut args, engine) = (call.args, self.engine().clone());
        self.in_project(&caller, &call.project, Work::Walk, move |p| {
            let Some((warm, spot)) =
                server_spot(&engine, p, &args.path, args.line, args.occurrence, &args.name)
            else {
                // A line names the file of one use: the uses are looked for everywhere.
                if args.line.is_some() {
                    args.path = None;
                }
                let mut out =
                    sluice_code::references(&p.workspace, &p.code, &args).map_err(coded)?;
                out.note = syntax_note(args.line);
                return Ok(out);
            };
            sluice_code::lsp::references(&warm.session, &p.workspace, &spot, QUESTION)
                .map_err(|e| asked(e, warm.server.program))
        })
        .await
    }
}

/// How long a question to a running server may take.
const QUESTION: Duration = Duration::from_secs(60);

/// The running language server and the spot to ask it about, when a line was given and a
/// server runs for the file's language.
fn server_spot(
    engine: &Engine,
    p: &ProjectHandle,
    path: &Option<String>,
    line: Option<u32>,
    occurrence: Option<u32>,
    name: &str,
) -> Option<(Arc<WarmServer>, Spot)> {
    let (path, line) = (path.as_deref()?, line?);
    let warm = running_server(engine, p, path)?;
    Some((warm, Spot { path: path.to_owned(), line, name: name.to_owned(), occurrence }))
}

/// The note of a syntax answer to a question that named a line.
fn syntax_note(line: Option<u32>) -> Option<String> {
    line.map(|_| {
        "answered by the syntax index (by name): no language server runs for this file's \
         language here; code_hover, code_diagnostics or code_rename start one where the project \
         may run commands"
            .to_owned()
    })
}

fn coded(e: sluice_runner::RunnerError) -> Failure {
    Failure::new(sluice_core::Coded::code(&e), e.to_string())
}
