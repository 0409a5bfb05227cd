//! The syntax index of one project: each source file's definitions, from tree-sitter's tagging
//! queries, kept per file with the stamp of the content they came from. Every query walks the
//! project first (cheap: one open per file) and tags again only the files whose stamp changed,
//! so answers follow the files as they change without a watcher, and a file that went away is
//! forgotten.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_runner::{RunnerError, Stamp, Workspace};
use tree_sitter_tags::TagsContext;

use crate::lang::Language;
use crate::symbol::Symbol;

/// Files bigger than this are not indexed (generated code, bundles).
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;
/// How long one walk over the project may take.
pub(crate) const WALK_BUDGET: Duration = Duration::from_secs(10);
/// The longest line text an answer carries, in bytes.
pub(crate) const MAX_TEXT: usize = 200;

/// One file's definitions, from the content with `stamp`.
pub(crate) struct FileSymbols {
    pub stamp: Stamp,
    pub symbols: Vec<Symbol>,
}

/// A project's syntax index: kept by the engine per project, shared by every caller.
#[derive(Default)]
pub struct CodeIndex {
    files: Mutex<HashMap<String, Arc<FileSymbols>>>,
}

/// What a walk over the index found.
pub(crate) struct Snapshot {
    pub files: Vec<(String, Arc<FileSymbols>)>,
    pub timed_out: bool,
}

impl CodeIndex {
    pub fn new() -> CodeIndex {
        CodeIndex::default()
    }

    /// How many files the index holds.
    pub fn len(&self) -> usize {
        self.files.lock().map_or(0, |f| f.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A file's definitions, if the index holds them for this version of its content.
    pub(crate) fn cached(&self, path: &str, stamp: Stamp) -> Option<Arc<FileSymbols>> {
        let files = self.files.lock().ok()?;
        files.get(path).filter(|entry| entry.stamp == stamp).cloned()
    }

    /// Keeps a file's definitions for this version of its content.
    pub(crate) fn store(&self, path: &str, stamp: Stamp, symbols: Vec<Symbol>) -> Arc<FileSymbols> {
        let entry = Arc::new(FileSymbols { stamp, symbols });
        if let Ok(mut files) = self.files.lock() {
            files.insert(path.to_owned(), entry.clone());
        }
        entry
    }

    /// The index brought up to date beneath `path` (default: the whole project), and what it
    /// holds there, sorted by path.
    pub(crate) fn refresh(
        &self,
        ws: &Workspace,
        path: Option<&str>,
    ) -> Result<Snapshot, RunnerError> {
        let seen = Mutex::new(Vec::new());
        let wanted = |p: &str| Language::of(p).is_some();
        let report = sluice_runner::each_source(ws, path, WALK_BUDGET, &wanted, &|source| {
            let key = source.path.as_str().to_owned();
            let Some(language) = Language::of(&key) else { return };
            let entry = match self.cached(&key, source.stamp) {
                Some(entry) => entry,
                None => {
                    let stamp = source.stamp;
                    if stamp.len > MAX_FILE_BYTES {
                        return;
                    }
                    let Ok(bytes) = source.read(MAX_FILE_BYTES) else { return };
                    self.store(&key, stamp, definitions(language, &bytes))
                }
            };
            if let Ok(mut seen) = seen.lock() {
                seen.push((key, entry));
            }
        })?;
        let mut files = seen.into_inner().unwrap_or_default();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        // A whole, finished walk knows every file: what it did not see is gone.
        if path.is_none_or(str::is_empty)
            && !report.timed_out
            && let Ok(mut cached) = self.files.lock()
        {
            let present: std::collections::HashSet<&str> =
                files.iter().map(|(p, _)| p.as_str()).collect();
            cached.retain(|p, _| present.contains(p.as_str()));
        }
        Ok(Snapshot { files, timed_out: report.timed_out })
    }
}

thread_local! {
    static TAGS: RefCell<TagsContext> = RefCell::new(TagsContext::new());
}

/// The definitions of one file, in source order, each with the definition it is nested in.
pub(crate) fn definitions(language: Language, source: &[u8]) -> Vec<Symbol> {
    let Some(config) = language.tags() else { return Vec::new() };
    TAGS.with(|ctx| {
        let mut ctx = ctx.borrow_mut();
        let Ok((tags, _)) = ctx.generate_tags(config, source, None) else { return Vec::new() };
        // Definitions, and the blocks that hold them without being one (a Rust `impl`).
        let mut found: Vec<(Symbol, std::ops::Range<usize>, bool)> = Vec::new();
        // One definition per name: a binding whose value is a function is tagged both as a
        // function (the grammar's query) and as a constant (ours); the function stays.
        let mut named: std::collections::HashMap<usize, usize> = Default::default();
        for tag in tags.flatten() {
            let kind = config.syntax_type_name(tag.syntax_type_id);
            let holds = kind == "implementation";
            if !tag.is_definition && !holds {
                continue;
            }
            let Some(name) = source.get(tag.name_range.clone()) else { continue };
            let Ok(name) = std::str::from_utf8(name) else { continue };
            // `span` is the name's; the definition's last line is where its node ends.
            let line = tag.span.start.row as u64 + 1;
            let body = source.get(tag.name_range.start..tag.range.end.saturating_sub(1));
            let below = body.map_or(0, |b| memchr::memchr_iter(b'\n', b).count() as u64);
            let symbol = Symbol {
                name: name.to_owned(),
                kind: kind.to_owned(),
                line,
                end_line: line + below,
                container: None,
                text: line_text(source, tag.line_range.clone()),
            };
            match named.get(&tag.name_range.start) {
                Some(&at) if tag.is_definition => {
                    if found[at].0.kind == "constant" {
                        found[at] = (symbol, tag.range.clone(), true);
                    }
                }
                _ => {
                    if tag.is_definition {
                        named.insert(tag.name_range.start, found.len());
                    }
                    found.push((symbol, tag.range.clone(), tag.is_definition));
                }
            }
        }
        found.sort_by_key(|(_, range, _)| (range.start, std::cmp::Reverse(range.end)));
        let mut out = Vec::new();
        let mut open: Vec<(String, usize)> = Vec::new();
        for (mut symbol, range, is_definition) in found {
            open.retain(|(_, end)| *end > range.start);
            symbol.container = open.last().map(|(name, _)| name.clone());
            open.push((symbol.name.clone(), range.end));
            if is_definition {
                out.push(symbol);
            }
        }
        out
    })
}

/// A line of source as an answer shows it: trimmed, known secret formats redacted (as
/// `search_text` returns lines; before the cut, so no part of a secret is left), at most
/// [`MAX_TEXT`] bytes.
pub(crate) fn line_text(source: &[u8], range: std::ops::Range<usize>) -> String {
    let line = source.get(range).unwrap_or_default();
    let text = String::from_utf8_lossy(line);
    let text = sluice_core::redact::redact(text.trim()).into_owned();
    if text.len() <= MAX_TEXT {
        return text;
    }
    let mut cut = MAX_TEXT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}
