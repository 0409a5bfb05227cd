//! The syntax tier's four answers: a file's outline, the project's symbols by name, where a
//! name is defined, and where it is used. Every answer is project-relative, bounded and small
//! (a location with its line, never a whole file), and says it came from the syntax index: a
//! best effort by name, which a language server's answer (where commands may run) refines.

use std::collections::HashSet;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sluice_runner::{RunnerError, Workspace};

use crate::index::{CodeIndex, MAX_FILE_BYTES, WALK_BUDGET, definitions, line_text};
use crate::lang::Language;
use crate::refs::identifiers_named;
pub use crate::symbol::Symbol;

const DEFAULT_SYMBOLS: u32 = 50;
const MAX_SYMBOLS: u32 = 500;
const DEFAULT_DEFINITIONS: u32 = 20;
const MAX_DEFINITIONS: u32 = 200;
const DEFAULT_REFERENCES: u32 = 100;
const MAX_REFERENCES: u32 = 1000;
const MAX_NAME: usize = 256;

/// Which tier answered: `syntax` is the tree-sitter index (definitions and uses matched by
/// name, no types).
pub const SYNTAX_TIER: &str = "syntax";

/// Arguments of `code_outline`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct OutlineArgs {
    /// The file, relative to the project root.
    pub path: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct OutlineOutput {
    pub path: String,
    pub language: Language,
    /// The file's definitions in source order.
    pub symbols: Vec<Symbol>,
    pub tier: &'static str,
}

/// Arguments of `code_symbols`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct SymbolsArgs {
    /// Part of the name, matched without regard to case (exact matches first, then names that
    /// start with it, then the rest).
    pub query: String,
    /// Only this kind (`function`, `method`, `class`, `interface`, `module`, …).
    pub kind: Option<String>,
    /// Only beneath this folder (or in this file), relative to the project root.
    pub path: Option<String>,
    /// Default 50, max 500.
    #[schemars(range(min = 1, max = 500))]
    pub max_results: Option<u32>,
}

/// A definition somewhere in the project.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct Located {
    pub path: String,
    #[serde(flatten)]
    pub symbol: Symbol,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct SymbolsOutput {
    pub symbols: Vec<Located>,
    /// More matched than were returned, or the walk ran out of time.
    pub truncated: bool,
    pub files_indexed: u64,
    pub tier: &'static str,
}

/// Arguments of `code_definition`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct DefinitionArgs {
    /// The name to find, as written where it is used: `start`, or qualified with its container
    /// (`Engine::start`, `Engine.start`) to keep only definitions inside it.
    pub name: String,
    /// The file where the name is used: definitions in it, then in the modules it imports,
    /// then in its folder, come first.
    pub path: Option<String>,
    /// With `path`: the 1-based line of it where `name` is used. While the project's language
    /// server runs (code_hover, code_diagnostics or code_rename start it), it answers with the
    /// one definition that use means (tier `server`); otherwise the syntax index answers.
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// Which appearance of `name` on `line`, 1-based (default 1).
    #[schemars(range(min = 1))]
    pub occurrence: Option<u32>,
    /// Default 20, max 200.
    #[schemars(range(min = 1, max = 200))]
    pub max_results: Option<u32>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct DefinitionOutput {
    /// Every definition of the name, nearest to `path` first (in it, in what it imports, in
    /// its folder, elsewhere).
    pub definitions: Vec<Located>,
    pub truncated: bool,
    pub tier: &'static str,
    /// Why the language server did not answer when `line` asked for it, or what its answer
    /// leaves out (definitions outside the project).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Arguments of `code_references`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ReferencesArgs {
    /// The identifier whose uses to find (code only: comments and strings are not uses).
    pub name: String,
    /// Only beneath this folder (or in this file), relative to the project root; with `line`,
    /// the file where `name` appears.
    pub path: Option<String>,
    /// With `path` naming a file: the 1-based line of it where `name` appears. While the
    /// project's language server runs, it finds the uses of that very symbol in the whole
    /// project (tier `server`); otherwise the syntax index answers by name.
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// Which appearance of `name` on `line`, 1-based (default 1).
    #[schemars(range(min = 1))]
    pub occurrence: Option<u32>,
    /// Default 100, max 1000.
    #[schemars(range(min = 1, max = 1000))]
    pub max_results: Option<u32>,
}

/// One use of an identifier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct Reference {
    pub path: String,
    /// 1-based line and column (in bytes).
    pub line: u64,
    pub column: u64,
    /// The line, trimmed (secrets redacted, long lines cut).
    pub text: String,
    /// Whether a definition of the name starts on this line.
    pub is_definition: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ReferencesOutput {
    pub references: Vec<Reference>,
    pub truncated: bool,
    pub files_searched: u64,
    pub tier: &'static str,
    /// Why the language server did not answer when `line` asked for it, or what its answer
    /// leaves out (uses outside the project).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn clamp(value: Option<u32>, default: u32, max: u32) -> usize {
    value.unwrap_or(default).clamp(1, max) as usize
}

/// A name as the tools accept it: not empty, one line, not too long.
fn check_name(name: &str, what: &str) -> Result<(), RunnerError> {
    if name.trim().is_empty() || name.len() > MAX_NAME || name.contains(['\n', '\r', '\0']) {
        return Err(RunnerError::InvalidArgument(format!(
            "`{what}` must be a name of 1 to {MAX_NAME} bytes on one line"
        )));
    }
    Ok(())
}

/// `code_outline`: one file's definitions.
pub fn outline(ws: &Workspace, args: &OutlineArgs) -> Result<OutlineOutput, RunnerError> {
    let Some(language) = Language::of(&args.path) else {
        let known: Vec<&str> = Language::ALL.iter().map(|l| l.as_str()).collect();
        return Err(RunnerError::InvalidArgument(format!(
            "`{}` is not in a language the syntax index reads ({}); read_file shows it",
            args.path,
            known.join(", ")
        )));
    };
    let (path, bytes) = read_source(ws, &args.path)?;
    Ok(OutlineOutput { path, language, symbols: definitions(language, &bytes), tier: SYNTAX_TIER })
}

/// One file of the project as `read_file` opens it, whole, within the index's size bound: its
/// project-relative path and its bytes.
pub(crate) fn read_source(ws: &Workspace, path: &str) -> Result<(String, Vec<u8>), RunnerError> {
    let (rel, stamp, file) = sluice_runner::open_source(ws, path)?;
    let path = rel.to_string();
    if stamp.len > MAX_FILE_BYTES {
        return Err(RunnerError::TooLarge(format!(
            "`{path}` is over the 1 MiB the syntax index reads; search_text finds its lines"
        )));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_FILE_BYTES), &mut bytes)
        .map_err(|e| RunnerError::Io { path: path.clone(), kind: e.kind() })?;
    Ok((path, bytes))
}

/// Definitions by rank (lower first), then path and line; at most `max`, and whether more
/// matched or the walk ran out of time.
fn ranked(mut found: Vec<(u8, Located)>, max: usize, timed_out: bool) -> (Vec<Located>, bool) {
    found.sort_by(|a, b| (a.0, &a.1.path, a.1.symbol.line).cmp(&(b.0, &b.1.path, b.1.symbol.line)));
    let truncated = found.len() > max || timed_out;
    found.truncate(max);
    (found.into_iter().map(|(_, l)| l).collect(), truncated)
}

/// `code_symbols`: the project's definitions whose name contains `query`.
pub fn symbols(
    ws: &Workspace,
    index: &CodeIndex,
    args: &SymbolsArgs,
) -> Result<SymbolsOutput, RunnerError> {
    check_name(&args.query, "query")?;
    let max = clamp(args.max_results, DEFAULT_SYMBOLS, MAX_SYMBOLS);
    let snapshot = index.refresh(ws, args.path.as_deref())?;
    let query = args.query.to_lowercase();
    let mut found: Vec<(u8, Located)> = Vec::new();
    for (path, file) in &snapshot.files {
        for symbol in &file.symbols {
            if args.kind.as_ref().is_some_and(|k| !k.eq_ignore_ascii_case(&symbol.kind)) {
                continue;
            }
            let name = symbol.name.to_lowercase();
            let rank = if name == query {
                0
            } else if name.starts_with(&query) {
                1
            } else if name.contains(&query) {
                2
            } else {
                continue;
            };
            found.push((rank, Located { path: path.clone(), symbol: symbol.clone() }));
        }
    }
    let (symbols, truncated) = ranked(found, max, snapshot.timed_out);
    Ok(SymbolsOutput {
        symbols,
        truncated,
        files_indexed: snapshot.files.len() as u64,
        tier: SYNTAX_TIER,
    })
}

/// `code_definition`: every definition of a name, nearest to where it is used first.
pub fn definition(
    ws: &Workspace,
    index: &CodeIndex,
    args: &DefinitionArgs,
) -> Result<DefinitionOutput, RunnerError> {
    check_name(&args.name, "name")?;
    let max = clamp(args.max_results, DEFAULT_DEFINITIONS, MAX_DEFINITIONS);
    let (container, name) = split_qualified(args.name.trim());
    let snapshot = index.refresh(ws, None)?;
    let from = args.path.as_deref().unwrap_or("");
    let folder = folder_of(from);
    let mut imported = if from.is_empty() { HashSet::new() } else { imported_modules(ws, from) };
    // The name itself is on its import line (`use net::tunnel::open`): a file named like it is
    // no evidence.
    imported.remove(name);
    let mut found: Vec<(u8, Located)> = Vec::new();
    for (path, file) in &snapshot.files {
        for symbol in file.symbols.iter().filter(|s| s.name == name) {
            if container.is_some_and(|c| symbol.container.as_deref() != Some(c)) {
                continue;
            }
            let near = if path == from {
                0
            } else if imported.contains(module_of(path)) {
                1
            } else if folder_of(path) == folder {
                2
            } else {
                3
            };
            found.push((near, Located { path: path.clone(), symbol: symbol.clone() }));
        }
    }
    let (definitions, truncated) = ranked(found, max, snapshot.timed_out);
    Ok(DefinitionOutput { definitions, truncated, tier: SYNTAX_TIER, note: None })
}

fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The module name a file is imported by: its name without the extension, or its folder's for
/// a folder's own file (`mod.rs`, `lib.rs`, `index.ts`, `__init__.py`).
fn module_of(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    match stem {
        "mod" | "lib" | "index" | "__init__" => {
            folder_of(path).rsplit('/').next().filter(|f| !f.is_empty()).unwrap_or(stem)
        }
        _ => stem,
    }
}

/// The words of the import lines of the file at `from` (`use`, `import`, `from`, `#include`,
/// `require(`): the modules it uses, by name. Nothing when it cannot be read.
fn imported_modules(ws: &Workspace, from: &str) -> HashSet<String> {
    let mut words = HashSet::new();
    let Ok((_, bytes)) = read_source(ws, from) else { return words };
    for line in String::from_utf8_lossy(&bytes).lines().map(str::trim_start) {
        let import = ["use ", "pub use ", "import ", "from ", "#include", "mod ", "pub mod "]
            .iter()
            .any(|start| line.starts_with(start))
            || line.contains("require(");
        if import {
            let word = |c: char| !(c.is_alphanumeric() || c == '_' || c == '-');
            words.extend(line.split(word).filter(|w| !w.is_empty()).map(str::to_owned));
        }
    }
    words
}

/// `Engine::start` or `Engine.start`: the container and the name; a plain name has none.
fn split_qualified(name: &str) -> (Option<&str>, &str) {
    let cut = name.rfind("::").map(|i| (i, 2)).or_else(|| name.rfind('.').map(|i| (i, 1)));
    match cut {
        Some((i, len)) if i > 0 && i + len < name.len() => {
            let container = &name[..i];
            let container = container.rsplit(['.', ':']).next().unwrap_or(container);
            (Some(container), &name[i + len..])
        }
        _ => (None, name),
    }
}

/// `code_references`: every use of an identifier in the project's code.
pub fn references(
    ws: &Workspace,
    index: &CodeIndex,
    args: &ReferencesArgs,
) -> Result<ReferencesOutput, RunnerError> {
    check_name(&args.name, "name")?;
    let name = args.name.trim();
    let max = clamp(args.max_results, DEFAULT_REFERENCES, MAX_REFERENCES);
    let found = Mutex::new(Vec::new());
    let searched = std::sync::atomic::AtomicU64::new(0);
    let wanted = |p: &str| Language::of(p).is_some();
    let report =
        sluice_runner::each_source(ws, args.path.as_deref(), WALK_BUDGET, &wanted, &|source| {
            let path = source.path.as_str().to_owned();
            let Some(language) = Language::of(&path) else { return };
            if source.stamp.len > MAX_FILE_BYTES {
                return;
            }
            let stamp = source.stamp;
            let Ok(bytes) = source.read(MAX_FILE_BYTES) else { return };
            searched.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if memchr::memmem::find(&bytes, name.as_bytes()).is_none() {
                return;
            }
            // The file's definitions from the index when it holds this version (one parse less).
            let file = index
                .cached(&path, stamp)
                .unwrap_or_else(|| index.store(&path, stamp, definitions(language, &bytes)));
            let defined: Vec<u64> =
                file.symbols.iter().filter(|s| s.name == name).map(|s| s.line).collect();
            let uses = identifiers_named(language, &bytes, name);
            let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
            for (line, column, range) in uses {
                found.push(Reference {
                    path: path.clone(),
                    line,
                    column,
                    text: line_text(&bytes, range),
                    is_definition: defined.contains(&line),
                });
            }
        })?;
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    found.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    let truncated = found.len() > max || report.timed_out;
    found.truncate(max);
    Ok(ReferencesOutput {
        references: found,
        truncated,
        files_searched: searched.into_inner(),
        tier: SYNTAX_TIER,
        note: None,
    })
}

#[cfg(test)]
mod tests {
    use super::split_qualified;

    #[test]
    fn qualified_names_split_at_their_last_separator() {
        assert_eq!(split_qualified("start"), (None, "start"));
        assert_eq!(split_qualified("Engine::start"), (Some("Engine"), "start"));
        assert_eq!(split_qualified("sluice::Engine::start"), (Some("Engine"), "start"));
        assert_eq!(split_qualified("self.start"), (Some("self"), "start"));
        assert_eq!(split_qualified("::start"), (None, "::start"));
        assert_eq!(split_qualified("start."), (None, "start."));
    }
}
