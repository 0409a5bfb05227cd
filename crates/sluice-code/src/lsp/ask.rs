//! The tools' questions to a language server, and its answers made safe to return: a question
//! names a line of a file and the name on it (models give lines and names, not columns); the
//! file is read as `read_file` reads it (the shield applies) and synced to the server first.
//! An answer keeps only places inside the project (the rest are counted, never shown with
//! their physical paths), each with its line as `search_text` shows lines (trimmed, secrets
//! redacted), and is bounded. A rename is a preview patch, never an edit.

use std::collections::HashMap;
use std::time::Duration;

use lsp_types::{
    DocumentChanges, GotoDefinitionResponse, Hover, HoverContents, Location, MarkedString,
    NumberOrString, OneOf, WorkspaceEdit,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sluice_runner::{RunnerError, Workspace};

use super::patch::{self, Edit};
use super::session::{LspError, Session};
use crate::index::{definitions, line_text};
use crate::lang::Language;
use crate::tools::{DefinitionOutput, Located, Reference, ReferencesOutput, Symbol, read_source};

/// Which tier answered: `server` is the project's language server, run in its sandbox.
pub const SERVER_TIER: &str = "server";

const MAX_PLACES: usize = 200;
const MAX_HOVER: usize = 4096;
const MAX_DIAGNOSTICS: usize = 500;
const MAX_MESSAGE: usize = 1000;
/// How long a question waits for the server to finish loading the project first.
const SETTLE: Duration = Duration::from_secs(30);

/// A name where it appears: the file, the line, and which of the name's appearances on that
/// line (the first, unless `occurrence` says otherwise).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct Spot {
    /// The file, relative to the project root.
    pub path: String,
    /// 1-based line on which the name appears.
    #[schemars(range(min = 1))]
    pub line: u32,
    /// The identifier, as written on that line.
    pub name: String,
    /// Which appearance of `name` on the line, 1-based (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub occurrence: Option<u32>,
}

/// A place in the project a server pointed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Place {
    pub path: String,
    /// 1-based line and column (in bytes) where it starts.
    pub line: u64,
    pub column: u64,
    /// The line, trimmed (secrets redacted, long lines cut).
    pub text: String,
}

#[derive(Debug, Clone)]
struct PlacesOutput {
    pub places: Vec<Place>,
    /// Places outside the project (libraries, the standard library) or in files the shield
    /// keeps out, not shown.
    pub outside: u64,
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HoverOutput {
    /// The type and documentation the server shows for the name (secrets redacted).
    pub text: String,
    pub truncated: bool,
    pub tier: &'static str,
}

/// A problem the server reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct Diagnostic {
    pub path: String,
    pub line: u64,
    pub column: u64,
    /// `error`, `warning`, `information` or `hint`.
    pub severity: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What produced it (`Pyright`, `typescript`, `rustc`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiagnosticsOutput {
    pub diagnostics: Vec<Diagnostic>,
    /// Whether the server finished checking every file asked about within the wait.
    pub complete: bool,
    pub truncated: bool,
    pub tier: &'static str,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct RenamePreview {
    /// A unified diff to pass to `apply_patch` as it is (nothing has changed yet).
    pub patch: String,
    pub files: Vec<String>,
    pub edits: u64,
    pub tier: &'static str,
}

/// A failed question: the file's (a path, a shield refusal) or the server's.
#[derive(Debug)]
pub enum AskError {
    File(RunnerError),
    Server(LspError),
}

impl From<RunnerError> for AskError {
    fn from(e: RunnerError) -> AskError {
        AskError::File(e)
    }
}

impl From<LspError> for AskError {
    fn from(e: LspError) -> AskError {
        AskError::Server(e)
    }
}

fn invalid(msg: impl Into<String>) -> AskError {
    AskError::File(RunnerError::InvalidArgument(msg.into()))
}

/// LSP's name for a language's documents.
pub fn language_id(language: Language) -> &'static str {
    match language {
        Language::Rust => "rust",
        Language::Python => "python",
        Language::Javascript => "javascript",
        Language::Typescript => "typescript",
        Language::Tsx => "typescriptreact",
        Language::Go => "go",
        Language::C => "c",
        Language::Cpp => "cpp",
        Language::Java => "java",
    }
}

/// Reads `path` through the workspace and makes the server's copy match it: its text.
pub(super) fn open(
    session: &Session,
    ws: &Workspace,
    path: &str,
) -> Result<(String, String), AskError> {
    let language = Language::of(path)
        .ok_or_else(|| invalid(format!("`{path}` is not a source file of a known language")))?;
    let (rel, bytes) = read_source(ws, path)?;
    let text = String::from_utf8(bytes).map_err(|_| invalid(format!("`{rel}` is not UTF-8")))?;
    session.sync(&rel, language_id(language), &text)?;
    Ok((rel, text))
}

/// The text document and position of a spot, with the spot's file synced.
fn position(session: &Session, ws: &Workspace, spot: &Spot) -> Result<(String, Value), AskError> {
    let name = spot.name.trim();
    if name.is_empty() || name.len() > 256 || name.contains(['\n', '\r', '\0']) {
        return Err(invalid("`name` must be an identifier of 1 to 256 bytes"));
    }
    let (rel, text) = open(session, ws, &spot.path)?;
    let line_no = spot.line.max(1);
    let line = text
        .split('\n')
        .nth(line_no as usize - 1)
        .ok_or_else(|| invalid(format!("`{rel}` has no line {line_no}")))?
        .trim_end_matches('\r');
    let nth = spot.occurrence.unwrap_or(1).max(1) as usize;
    let byte = whole_words(line, name).nth(nth - 1).ok_or_else(|| {
        invalid(format!("line {line_no} of `{rel}` has no {} `{name}`", ordinal(nth)))
    })?;
    let chars = line[..byte].chars().count();
    let column = session.encoding().column(line, chars);
    session.settle(&rel, SETTLE);
    let uri = session.uri(&rel)?;
    Ok((
        rel,
        json!({"textDocument": {"uri": uri}, "position": {"line": line_no - 1, "character": column}}),
    ))
}

fn ordinal(n: usize) -> String {
    match n {
        1 => "appearance of".into(),
        n => format!("{n} appearances of"),
    }
}

/// Byte offsets in `line` where `name` appears as a whole word.
fn whole_words<'a>(line: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    line.match_indices(name).map(|(i, _)| i).filter(move |&i| {
        !line[..i].chars().next_back().is_some_and(word)
            && !line[i + name.len()..].chars().next().is_some_and(word)
    })
}

/// Turns the server's locations into places: inside the project, readable, each with its line.
pub(super) struct Placer<'a> {
    session: &'a Session,
    ws: &'a Workspace,
    files: HashMap<String, Option<Vec<u8>>>,
}

impl<'a> Placer<'a> {
    pub(super) fn new(session: &'a Session, ws: &'a Workspace) -> Placer<'a> {
        Placer { session, ws, files: HashMap::new() }
    }

    pub(super) fn place(&mut self, uri: &str, line: u32, character: u32) -> Option<Place> {
        let rel = self.session.relative(uri)?;
        let (ws, rel2) = (self.ws, rel.clone());
        let bytes = self
            .files
            .entry(rel.clone())
            .or_insert_with(|| read_source(ws, &rel2).ok().map(|(_, b)| b))
            .as_deref()?;
        let start: usize =
            bytes.split_inclusive(|b| *b == b'\n').take(line as usize).map(<[u8]>::len).sum();
        let rest = &bytes[start.min(bytes.len())..];
        let end = start + rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
        let raw = String::from_utf8_lossy(&bytes[start.min(end)..end]);
        let byte = self.session.encoding().byte(raw.trim_end_matches('\r'), character);
        Some(Place {
            path: rel,
            line: u64::from(line) + 1,
            column: byte as u64 + 1,
            text: line_text(bytes, start.min(end)..end),
        })
    }

    fn places(&mut self, locations: Vec<(String, u32, u32)>) -> PlacesOutput {
        let mut out = PlacesOutput { places: Vec::new(), outside: 0, truncated: false };
        for (uri, line, character) in locations {
            match self.place(&uri, line, character) {
                Some(p) if out.places.len() < MAX_PLACES => {
                    if !out.places.contains(&p) {
                        out.places.push(p);
                    }
                }
                Some(_) => out.truncated = true,
                None => out.outside += 1,
            }
        }
        out
    }
}

pub(super) fn parse<T: serde::de::DeserializeOwned>(
    session: &Session,
    value: Value,
    what: &str,
) -> Result<T, AskError> {
    serde_json::from_value(value).map_err(|e| {
        let e = LspError::Protocol(format!("{what} is not as LSP says: {e}"));
        AskError::Server(session.unrooted_error(e))
    })
}

fn location_triples(locations: Vec<Location>) -> Vec<(String, u32, u32)> {
    locations
        .into_iter()
        .map(|l| (l.uri.as_str().to_owned(), l.range.start.line, l.range.start.character))
        .collect()
}

/// The server's definitions of the name at `spot`, as places. A definition that is an alias
/// in the same file (an `import { x }`, which is where tsserver's definition of an imported
/// name lands) is replaced by what the name is bound to.
fn definition_places(
    session: &Session,
    ws: &Workspace,
    spot: &Spot,
    timeout: Duration,
) -> Result<PlacesOutput, AskError> {
    let (rel, params) = position(session, ws, spot)?;
    let mut triples =
        definition_triples(session, "textDocument/definition", params.clone(), timeout)?;
    let here = session.uri(&rel)?;
    // tsserver answers an imported name's definition with its import (and the import's with
    // itself); what the name is bound to is then its implementation, in another file.
    if let [(uri, line, _)] = triples.as_slice()
        && *uri == here
        && *line + 1 != spot.line
    {
        let bound = definition_triples(session, "textDocument/implementation", params, timeout);
        if let Ok(bound) = bound
            && !bound.is_empty()
            && bound.iter().all(|(u, _, _)| *u != here)
        {
            triples = bound;
        }
    }
    Ok(Placer::new(session, ws).places(triples))
}

/// The locations a definition-like request (`definition`, `implementation`) answers.
fn definition_triples(
    session: &Session,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Vec<(String, u32, u32)>, AskError> {
    let answer = session.request(method, params, timeout)?;
    let found: Option<GotoDefinitionResponse> = parse(session, answer, "the definition")?;
    Ok(match found {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(l)) => location_triples(vec![l]),
        Some(GotoDefinitionResponse::Array(ls)) => location_triples(ls),
        Some(GotoDefinitionResponse::Link(links)) => links
            .into_iter()
            .map(|l| {
                let at = l.target_selection_range.start;
                (l.target_uri.as_str().to_owned(), at.line, at.character)
            })
            .collect(),
    })
}

/// The most files sent to a server that knows only what it is sent, before a question about
/// uses.
const MAX_SENT: usize = 300;
/// How long, in all, a question about uses waits for the files it sent to be checked.
const SEND_WAIT: Duration = Duration::from_secs(20);

/// For a server that knows only the files it was sent: sends it the project's files of the
/// languages of `path` (the C family together), so uses and renames cover them. Best effort:
/// a file that cannot be read is skipped.
fn send_project(session: &Session, ws: &Workspace, path: &str) {
    let Some(language) = Language::of(path).filter(|_| session.knows_only_open()) else { return };
    let family = |l: Language| match l {
        Language::C | Language::Cpp => 0,
        Language::Javascript | Language::Typescript | Language::Tsx => 1,
        other => 2 + other as usize,
    };
    let files = std::sync::Mutex::new(Vec::new());
    let wanted = |p: &str| Language::of(p).is_some_and(|l| family(l) == family(language));
    let visit = |source: sluice_runner::Source<'_>| {
        let mut files = files.lock().unwrap_or_else(|p| p.into_inner());
        if files.len() < MAX_SENT {
            files.push(source.path.to_string());
        }
    };
    if sluice_runner::each_source(ws, None, Duration::from_secs(5), &wanted, &visit).is_err() {
        return;
    }
    let files = files.into_inner().unwrap_or_else(|p| p.into_inner());
    let sent: Vec<String> =
        files.into_iter().filter_map(|f| open(session, ws, &f).ok().map(|(rel, _)| rel)).collect();
    // The server indexes a file as it checks it: its diagnostics say it is done.
    let deadline = std::time::Instant::now() + SEND_WAIT;
    for rel in sent {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if session.diagnostics(&rel, left).is_err() {
            return;
        }
    }
}

/// Where the name at `spot` is defined, as the server resolves it; each definition described
/// by the syntax index where it knows it (kind, extent, container).
pub fn definition(
    session: &Session,
    ws: &Workspace,
    spot: &Spot,
    timeout: Duration,
) -> Result<DefinitionOutput, AskError> {
    send_project(session, ws, &spot.path);
    let found = definition_places(session, ws, spot, timeout)?;
    let mut outlines: HashMap<String, Vec<Symbol>> = HashMap::new();
    let definitions = found
        .places
        .into_iter()
        .map(|place| {
            let symbols = outlines.entry(place.path.clone()).or_insert_with(|| {
                let language = Language::of(&place.path);
                match (language, read_source(ws, &place.path)) {
                    (Some(language), Ok((_, bytes))) => definitions(language, &bytes),
                    _ => Vec::new(),
                }
            });
            let known = symbols.iter().find(|s| s.line == place.line && s.name == spot.name.trim());
            let symbol = known.cloned().unwrap_or_else(|| Symbol {
                name: spot.name.trim().to_owned(),
                kind: "definition".into(),
                line: place.line,
                end_line: place.line,
                container: None,
                text: place.text.clone(),
            });
            Located { path: place.path, symbol }
        })
        .collect();
    Ok(DefinitionOutput {
        definitions,
        truncated: found.truncated,
        tier: SERVER_TIER,
        note: (found.outside > 0)
            .then(|| format!("{} definition(s) outside the project are not shown", found.outside)),
    })
}

/// Every use of the name at `spot` in the project, as the server resolves it (its definitions
/// marked).
pub fn references(
    session: &Session,
    ws: &Workspace,
    spot: &Spot,
    timeout: Duration,
) -> Result<ReferencesOutput, AskError> {
    send_project(session, ws, &spot.path);
    let defined = definition_places(session, ws, spot, timeout)?.places;
    let (_, mut params) = position(session, ws, spot)?;
    params["context"] = json!({"includeDeclaration": true});
    let answer = session.request("textDocument/references", params, timeout)?;
    let found: Option<Vec<Location>> = parse(session, answer, "the references")?;
    let mut triples = location_triples(found.unwrap_or_default());
    triples.sort();
    let found = Placer::new(session, ws).places(triples);
    let files: std::collections::HashSet<&str> =
        found.places.iter().map(|p| p.path.as_str()).collect();
    Ok(ReferencesOutput {
        files_searched: files.len() as u64,
        references: found
            .places
            .iter()
            .map(|p| Reference {
                path: p.path.clone(),
                line: p.line,
                column: p.column,
                text: p.text.clone(),
                is_definition: defined.iter().any(|d| d.path == p.path && d.line == p.line),
            })
            .collect(),
        truncated: found.truncated,
        tier: SERVER_TIER,
        note: (found.outside > 0)
            .then(|| format!("{} use(s) outside the project are not shown", found.outside)),
    })
}

/// The type and documentation of the name at `spot`.
pub fn hover(
    session: &Session,
    ws: &Workspace,
    spot: &Spot,
    timeout: Duration,
) -> Result<HoverOutput, AskError> {
    let (_, params) = position(session, ws, spot)?;
    let answer = session.request("textDocument/hover", params, timeout)?;
    let found: Option<Hover> = parse(session, answer, "the hover")?;
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => l.value,
    };
    let text = match found.map(|h| h.contents) {
        None => String::new(),
        Some(HoverContents::Scalar(m)) => marked(m),
        Some(HoverContents::Array(ms)) => {
            ms.into_iter().map(marked).collect::<Vec<_>>().join("\n\n")
        }
        Some(HoverContents::Markup(m)) => m.value,
    };
    let (text, truncated) = shown(session, &text, MAX_HOVER);
    Ok(HoverOutput { text, truncated, tier: SERVER_TIER })
}

/// Text from the server as an answer shows it: the project's physical folder replaced by `.`,
/// secrets redacted, control characters made visible, at most `max` bytes.
fn shown(session: &Session, text: &str, max: usize) -> (String, bool) {
    let text = session.unrooted(text);
    let text = sluice_core::redact::redact(&text);
    let mut text = sluice_core::text::visible_lines(&text).into_owned();
    if text.len() <= max {
        return (text, false);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push('…');
    (text, true)
}

/// The problems the server reports for `paths` (each synced first), waiting up to `wait` for
/// it to check them.
pub fn diagnostics(
    session: &Session,
    ws: &Workspace,
    paths: &[String],
    wait: Duration,
) -> Result<DiagnosticsOutput, AskError> {
    let mut opened = Vec::new();
    for path in paths {
        opened.push(open(session, ws, path)?);
    }
    let deadline = std::time::Instant::now() + wait;
    let mut out = DiagnosticsOutput {
        diagnostics: Vec::new(),
        complete: true,
        truncated: false,
        tier: SERVER_TIER,
    };
    for (rel, text) in opened {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let Some(items) = session.diagnostics(&rel, left)? else {
            out.complete = false;
            continue;
        };
        let lines: Vec<&str> = text.split('\n').collect();
        for item in items {
            let Ok(d) = serde_json::from_value::<lsp_types::Diagnostic>(item) else { continue };
            if out.diagnostics.len() >= MAX_DIAGNOSTICS {
                out.truncated = true;
                break;
            }
            let line =
                lines.get(d.range.start.line as usize).map_or("", |l| l.trim_end_matches('\r'));
            let severity = match d.severity {
                Some(lsp_types::DiagnosticSeverity::WARNING) => "warning",
                Some(lsp_types::DiagnosticSeverity::INFORMATION) => "information",
                Some(lsp_types::DiagnosticSeverity::HINT) => "hint",
                _ => "error",
            };
            out.diagnostics.push(Diagnostic {
                path: rel.clone(),
                line: u64::from(d.range.start.line) + 1,
                column: session.encoding().chars(line, d.range.start.character) as u64 + 1,
                severity: severity.into(),
                message: shown(session, &d.message, MAX_MESSAGE).0,
                code: d.code.map(|c| match c {
                    NumberOrString::Number(n) => n.to_string(),
                    NumberOrString::String(s) => shown(session, &s, 100).0,
                }),
                source: d.source.map(|s| shown(session, &s, 100).0),
            });
        }
    }
    Ok(out)
}

/// What renaming the name at `spot` to `new_name` would change, as a patch for `apply_patch`.
/// Refused whole when the server would touch a file outside the project, one the shield keeps
/// out, or rename or delete files.
pub fn rename_preview(
    session: &Session,
    ws: &Workspace,
    spot: &Spot,
    new_name: &str,
    timeout: Duration,
) -> Result<RenamePreview, AskError> {
    if new_name.trim().is_empty() || new_name.len() > 256 || new_name.chars().any(char::is_control)
    {
        return Err(invalid("`new_name` must be a name of 1 to 256 bytes, no control characters"));
    }
    send_project(session, ws, &spot.path);
    let (_, mut params) = position(session, ws, spot)?;
    params["newName"] = json!(new_name);
    let answer = session.request("textDocument/rename", params, timeout)?;
    let edit: Option<WorkspaceEdit> = parse(session, answer, "the rename")?;
    let mut by_file: Vec<(String, Vec<Edit>)> = Vec::new();
    let edit = edit.unwrap_or_default();
    let mut add = |uri: &str, edits: Vec<Edit>| -> Result<(), AskError> {
        let rel = session.relative(uri).ok_or_else(|| {
            invalid("the rename would change files outside the project, so no preview is offered")
        })?;
        match by_file.iter_mut().find(|(p, _)| *p == rel) {
            Some((_, list)) => list.extend(edits),
            None => by_file.push((rel, edits)),
        }
        Ok(())
    };
    let convert = |e: lsp_types::TextEdit| Edit {
        start: (e.range.start.line, e.range.start.character),
        end: (e.range.end.line, e.range.end.character),
        text: e.new_text,
    };
    if let Some(changes) = edit.changes {
        for (uri, edits) in changes {
            add(uri.as_str(), edits.into_iter().map(convert).collect())?;
        }
    }
    match edit.document_changes {
        None => {}
        Some(DocumentChanges::Edits(docs)) => {
            for doc in docs {
                let edits = doc.edits.into_iter().map(|e| match e {
                    OneOf::Left(e) => convert(e),
                    OneOf::Right(a) => convert(a.text_edit),
                });
                add(doc.text_document.uri.as_str(), edits.collect())?;
            }
        }
        Some(DocumentChanges::Operations(_)) => {
            return Err(invalid(
                "the rename would create, rename or delete files, so no preview is offered",
            ));
        }
    }
    by_file.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out =
        RenamePreview { patch: String::new(), files: Vec::new(), edits: 0, tier: SERVER_TIER };
    for (rel, edits) in by_file {
        let (_, bytes) = read_source(ws, &rel)?;
        let text =
            String::from_utf8(bytes).map_err(|_| invalid(format!("`{rel}` is not UTF-8")))?;
        let new = patch::apply(&text, &edits, session.encoding())
            .map_err(|e| AskError::Server(LspError::Protocol(e)))?;
        let diff = patch::diff(&rel, &text, &new);
        if !diff.is_empty() {
            out.patch.push_str(&diff);
            out.files.push(rel);
            out.edits += edits.len() as u64;
        }
    }
    Ok(out)
}
