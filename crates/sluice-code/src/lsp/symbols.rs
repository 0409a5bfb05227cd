//! Symbols from the language server: a file's outline (`textDocument/documentSymbol`) and the
//! project's symbols by name (`workspace/symbol`), in the syntax tier's shapes and kinds, each
//! with its line read through the shield; places outside the project are left out.

use std::time::Duration;

use lsp_types::{
    DocumentSymbol, DocumentSymbolResponse, OneOf, SymbolInformation, SymbolKind,
    WorkspaceSymbolResponse,
};
use serde_json::json;
use sluice_runner::Workspace;

use super::ask::{AskError, Placer, SERVER_TIER, open, parse};
use super::session::Session;
use crate::lang::Language;
use crate::tools::{Located, OutlineOutput, Symbol, SymbolsArgs, SymbolsOutput};

const MAX_OUTLINE: usize = 2000;

/// A symbol as a server names it, before it is placed in the project.
struct Found {
    name: String,
    uri: String,
    line: u32,
    end: u32,
    kind: &'static str,
    container: Option<String>,
}

impl Found {
    fn of(s: SymbolInformation) -> Found {
        let at = s.location.range;
        Found {
            name: s.name,
            uri: s.location.uri.as_str().to_owned(),
            line: at.start.line,
            end: at.end.line,
            kind: kind(s.kind),
            container: s.container_name,
        }
    }
}

/// The syntax tier's word for an LSP symbol kind.
fn kind(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::FUNCTION => "function",
        SymbolKind::METHOD | SymbolKind::CONSTRUCTOR => "method",
        SymbolKind::CLASS | SymbolKind::STRUCT | SymbolKind::ENUM => "class",
        SymbolKind::INTERFACE => "interface",
        SymbolKind::MODULE | SymbolKind::NAMESPACE | SymbolKind::PACKAGE => "module",
        SymbolKind::CONSTANT | SymbolKind::ENUM_MEMBER => "constant",
        SymbolKind::TYPE_PARAMETER => "type",
        SymbolKind::VARIABLE => "variable",
        SymbolKind::FIELD | SymbolKind::PROPERTY => "field",
        _ => "other",
    }
}

/// `code_outline` from the server: the file's symbols in source order, nested ones with their
/// container.
pub fn outline(
    session: &Session,
    ws: &Workspace,
    path: &str,
    timeout: Duration,
) -> Result<OutlineOutput, AskError> {
    let (rel, _) = open(session, ws, path)?;
    session.settle(&rel, timeout);
    let uri = session.uri(&rel)?;
    let answer = session.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
        timeout,
    )?;
    let found: Option<DocumentSymbolResponse> = parse(session, answer, "the outline")?;
    let mut flat: Vec<Found> = Vec::new();
    match found {
        None => {}
        Some(DocumentSymbolResponse::Flat(list)) => flat.extend(list.into_iter().map(Found::of)),
        Some(DocumentSymbolResponse::Nested(list)) => nest(&list, &uri, None, &mut flat),
    }
    // Source order, a container before what it holds.
    flat.sort_by_key(|s| (s.line, std::cmp::Reverse(s.end)));
    flat.truncate(MAX_OUTLINE);
    let mut placer = Placer::new(session, ws);
    let symbols = flat
        .into_iter()
        .filter_map(|f| {
            let place = placer.place(&uri, f.line, 0)?;
            Some(Symbol {
                name: f.name,
                kind: f.kind.to_owned(),
                line: place.line,
                end_line: u64::from(f.end) + 1,
                container: f.container,
                text: place.text,
            })
        })
        .collect();
    let language = Language::of(&rel).ok_or_else(|| {
        AskError::File(sluice_runner::RunnerError::InvalidArgument(format!(
            "`{rel}` is not a source file of a known language"
        )))
    })?;
    Ok(OutlineOutput { path: rel, language, symbols, tier: SERVER_TIER })
}

fn nest(list: &[DocumentSymbol], uri: &str, container: Option<&str>, out: &mut Vec<Found>) {
    for s in list {
        if out.len() >= MAX_OUTLINE {
            return;
        }
        out.push(Found {
            name: s.name.clone(),
            uri: uri.to_owned(),
            line: s.selection_range.start.line,
            end: s.range.end.line,
            kind: kind(s.kind),
            container: container.map(str::to_owned),
        });
        if let Some(children) = &s.children {
            nest(children, uri, Some(&s.name), out);
        }
    }
}

/// `code_symbols` from the server: the project's symbols whose name contains the query
/// (exact names first, then prefixes, then the rest, as the syntax tier ranks them), within
/// `path` and of `kind` when given.
pub fn workspace_symbols(
    session: &Session,
    ws: &Workspace,
    args: &SymbolsArgs,
    max: usize,
    timeout: Duration,
) -> Result<SymbolsOutput, AskError> {
    let answer = session.request("workspace/symbol", json!({"query": args.query}), timeout)?;
    let found: Option<WorkspaceSymbolResponse> = parse(session, answer, "the symbols")?;
    let mut raw: Vec<Found> = Vec::new();
    match found {
        None => {}
        Some(WorkspaceSymbolResponse::Flat(list)) => raw.extend(list.into_iter().map(Found::of)),
        Some(WorkspaceSymbolResponse::Nested(list)) => {
            raw.extend(list.into_iter().filter_map(|s| match s.location {
                OneOf::Left(l) => Some(Found {
                    name: s.name,
                    uri: l.uri.as_str().to_owned(),
                    line: l.range.start.line,
                    end: l.range.end.line,
                    kind: kind(s.kind),
                    container: s.container_name,
                }),
                OneOf::Right(_) => None,
            }));
        }
    }
    let query = args.query.to_lowercase();
    let mut placer = Placer::new(session, ws);
    let mut ranked: Vec<(u8, Located)> = Vec::new();
    let mut seen: std::collections::HashSet<(String, u64)> = Default::default();
    let mut truncated = false;
    for Found { name, uri, line, end, kind, container } in raw {
        let lower = name.to_lowercase();
        let rank = match () {
            () if lower == query => 0,
            () if lower.starts_with(&query) => 1,
            () if lower.contains(&query) => 2,
            () => continue,
        };
        if args.kind.as_ref().is_some_and(|k| !k.eq_ignore_ascii_case(kind)) {
            continue;
        }
        let Some(place) = placer.place(&uri, line, 0) else { continue };
        let within = args.path.as_deref().map(|p| p.trim_end_matches('/'));
        if within.is_some_and(|p| {
            !p.is_empty() && place.path != p && !place.path.starts_with(&format!("{p}/"))
        }) {
            continue;
        }
        if !seen.insert((place.path.clone(), place.line)) {
            continue;
        }
        if ranked.len() >= 4 * max {
            truncated = true;
            break;
        }
        let symbol = Symbol {
            name,
            kind: kind.to_owned(),
            line: place.line,
            end_line: u64::from(end) + 1,
            container,
            text: place.text,
        };
        ranked.push((rank, Located { path: place.path, symbol }));
    }
    ranked
        .sort_by(|a, b| (a.0, &a.1.path, a.1.symbol.line).cmp(&(b.0, &b.1.path, b.1.symbol.line)));
    truncated |= ranked.len() > max;
    ranked.truncate(max);
    Ok(SymbolsOutput {
        symbols: ranked.into_iter().map(|(_, l)| l).collect(),
        truncated,
        files_indexed: 0,
        tier: SERVER_TIER,
    })
}
