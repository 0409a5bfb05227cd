//! `search_text`: ripgrep's engine (`grep-searcher` + `grep-regex`) over the project, in
//! parallel, with the walker's filters, result caps, a time budget, and redacted output.
//!
//! The regex engine is the `regex` crate: matching time is linear in the input, so
//! catastrophic patterns such as `(a+)+$` are harmless (RX-01).
//!
//! How a file is read, and why not with the searcher's own reader: the walk opens each file
//! through its folder's handle (no link followed) and has its size from that open, so a file of
//! up to 256 KiB (all but 400 of the cargo registry's 46 000) is read whole, in one `read`,
//! into the thread's buffer and searched as one slice. The searcher's reader takes three `read`s a file (a 3-byte peek for a byte-order mark, the
//! content, the end) and counts lines through every buffer it rolls past, where a slice has
//! lines counted only up to its matches (perf, searching the cargo registry's 46 000 files: the
//! peek's `read` alone took 8% of the CPU time, counting lines about 4%). The rule for binary
//! files stays the streaming reader's: a NUL byte anywhere makes the file binary and skipped
//! (the searcher looks at a slice's first 64 KiB only, so the whole slice is checked here, and
//! the searcher's own check is off), unless a byte-order mark has the searcher transcode it,
//! when it checks the text as before. Bigger files are streamed as before: a big binary file is
//! then left at its first NUL, and no thread keeps a buffer of megabytes (with 4 MiB, the
//! serving process stayed at 104 MB resident after a few searches of the registry; with
//! 256 KiB, 43 MB, where the streaming reader on 2 threads left 35 MB).
//!
//! Threads: at least 8 (see [`MIN_THREADS`]), since a search on a cold cache waits on the disk.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use globset::GlobSet;
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sluice_guard::{DirHandle, RelPath};

use crate::model::{clamp, compile_globs, plain_integers};
use crate::walk::{self, Flow, Item, Visitor, WalkConfig};
use crate::{RunnerError, Workspace};

const DEFAULT_MAX_RESULTS: u32 = 200;
pub(crate) const MAX_RESULTS: u32 = 2000;
const DEFAULT_MAX_PER_FILE: u32 = 50;
const MAX_CONTEXT: u32 = 10;
const DEFAULT_MAX_FILE_SIZE: u64 = 8 * 1024 * 1024;
const MAX_FILE_SIZE: u64 = 256 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
const MAX_TIMEOUT_MS: u64 = 60_000;
const MAX_PATTERN_LEN: usize = 4096;
/// Longest line text returned, in bytes; longer lines are cut around the match.
const MAX_LINE_BYTES: usize = 400;
/// How much of a long line before the match is kept.
const LEAD_BYTES: usize = 120;
/// Searching threads: one per core, and at least 8 whatever the cores, because on a cold cache a
/// thread waits for the disk most of the time and 8 reads in flight finish about twice as fast
/// as 2 (docs/BENCHMARKS.md); warm, the extra threads cost about 1%.
const MIN_THREADS: usize = 8;
const MAX_THREADS: usize = 16;
/// Files up to this size are read whole, in one `read`, and searched as one slice; bigger ones
/// are streamed through the searcher's buffer (see the module docs).
const WHOLE_READ_MAX: usize = 256 * 1024;

/// How letter case is treated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaseMode {
    Sensitive,
    Insensitive,
    /// Insensitive unless the pattern contains an upper-case letter.
    #[default]
    Smart,
}

/// Arguments of `search_text`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = plain_integers)]
pub struct SearchTextArgs {
    /// What to look for: a regular expression (Rust `regex` syntax, linear time) unless
    /// `literal` is true. Matches are found within single lines.
    pub pattern: String,
    /// Treat `pattern` as a fixed string, not a regex. Default false.
    pub literal: Option<bool>,
    /// `sensitive`, `insensitive` or `smart` (insensitive unless the pattern has an upper-case
    /// letter). Default `smart`.
    pub case: Option<CaseMode>,
    /// Folder (or single file) to search, relative to the project root. Default: the root.
    pub path: Option<String>,
    /// Only search files matching one of these globs (e.g. `*.rs`). A glob without `/` matches
    /// the file name at any depth; with `/`, the project-relative path.
    pub include: Vec<String>,
    /// Skip files and folders matching any of these globs (same rules as `include`).
    pub exclude: Vec<String>,
    /// Lines of context before each match. Default 0, max 10.
    #[schemars(range(min = 0, max = 10))]
    pub context_before: Option<u32>,
    /// Lines of context after each match. Default 0, max 10.
    #[schemars(range(min = 0, max = 10))]
    pub context_after: Option<u32>,
    /// Maximum matches returned in total. Default 200, max 2000.
    #[schemars(range(min = 1, max = 2000))]
    pub max_results: Option<u32>,
    /// Maximum matches returned per file. Default 50, max 2000.
    #[schemars(range(min = 1, max = 2000))]
    pub max_matches_per_file: Option<u32>,
    /// Files bigger than this many bytes are skipped. Default 8388608 (8 MiB), max 268435456
    /// (256 MiB).
    #[schemars(range(min = 1, max = 268435456))]
    pub max_file_size: Option<u64>,
    /// Time budget in milliseconds; the search stops and reports `truncated` when it runs out.
    /// Default 10000, max 60000.
    #[schemars(range(min = 1, max = 60000))]
    pub timeout_ms: Option<u64>,
    /// Search files whose names start with a dot. Default true. Sensitive files are never
    /// searched.
    pub include_hidden: Option<bool>,
    /// Skip what `.gitignore` / `.ignore` files exclude. Default true.
    pub respect_gitignore: Option<bool>,
}

/// One matching line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct SearchMatch {
    /// Project-relative path of the file.
    pub path: String,
    /// Line number, 1-based.
    pub line: u64,
    /// Byte offset of the first match in the line, 1-based.
    pub column: u64,
    /// The line, without its line ending; long lines are cut around the match with a
    /// `[... N bytes cut]` marker, and known secret formats are redacted.
    pub text: String,
    /// Lines just before the match, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_before: Vec<String>,
    /// Lines just after the match.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_after: Vec<String>,
}

/// Result of `search_text`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct SearchTextOutput {
    /// Matches sorted by path and line.
    pub matches: Vec<SearchMatch>,
    /// Files whose contents were searched.
    pub files_searched: u64,
    /// Files with at least one returned match.
    pub files_with_matches: u64,
    /// Files skipped for being bigger than `max_file_size`.
    pub files_skipped_large: u64,
    /// Files skipped because they look binary.
    pub files_skipped_binary: u64,
    /// True when not every match was returned; `truncated_reason` says why.
    pub truncated: bool,
    /// `max_results`, `max_matches_per_file` or `time_budget`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_reason: Option<String>,
}

struct Settings {
    matcher: RegexMatcher,
    include: Option<GlobSet>,
    before: usize,
    after: usize,
    max_results: usize,
    max_per_file: usize,
    max_file_size: u64,
}

#[derive(Default)]
struct Counters {
    results: AtomicUsize,
    files_searched: AtomicU64,
    files_with_matches: AtomicU64,
    skipped_large: AtomicU64,
    skipped_binary: AtomicU64,
    per_file_cap_hit: AtomicU64,
    global_cap_hit: AtomicU64,
}

struct SearchVisitor<'a> {
    settings: &'a Settings,
    counters: &'a Counters,
    out: &'a Mutex<Vec<SearchMatch>>,
}

impl Visitor for SearchVisitor<'_> {
    type State = Scratch;
    const WANTS_FILES: bool = true;

    fn state(&self) -> Scratch {
        Scratch::new(self.settings)
    }

    fn file(&self, scratch: &mut Scratch, item: &Item<'_>) -> Flow {
        if self.settings.include.as_ref().is_some_and(|g| !g.is_match(item.rel.as_str())) {
            return Flow::Continue;
        }
        search_one(self.settings, self.counters, self.out, scratch, item.dir, item.name, item.rel)
    }
}

/// What one searching thread reuses from file to file: its searcher, and the buffer files are
/// read into.
struct Scratch {
    searcher: Searcher,
    buf: Vec<u8>,
}

impl Scratch {
    fn new(settings: &Settings) -> Scratch {
        let searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(settings.before)
            .after_context(settings.after)
            .binary_detection(quit_on_nul())
            .build();
        Scratch { searcher, buf: Vec::new() }
    }
}

/// A NUL byte makes a file binary: the search of it stops, and the file is skipped.
fn quit_on_nul() -> BinaryDetection {
    BinaryDetection::quit(b'\x00')
}

/// Searches one file opened through `dir` (no link followed). Returns `Stop` once the global
/// result cap is reached.
fn search_one(
    settings: &Settings,
    counters: &Counters,
    out: &Mutex<Vec<SearchMatch>>,
    scratch: &mut Scratch,
    dir: &DirHandle,
    name: &str,
    rel: &RelPath,
) -> Flow {
    let Ok((file, meta)) = dir.open_file(name) else { return Flow::Continue };
    search_file(settings, counters, out, scratch, &file, meta.len(), rel)
}

fn search_file(
    settings: &Settings,
    counters: &Counters,
    out: &Mutex<Vec<SearchMatch>>,
    scratch: &mut Scratch,
    file: &std::fs::File,
    size: u64,
    rel: &RelPath,
) -> Flow {
    if size > settings.max_file_size {
        counters.skipped_large.fetch_add(1, Ordering::Relaxed);
        return Flow::Continue;
    }
    counters.files_searched.fetch_add(1, Ordering::Relaxed);
    let mut sink = FileSink {
        settings,
        counters,
        path: rel,
        matches: Vec::new(),
        recent: VecDeque::new(),
        binary: false,
        global_cap: false,
    };
    let Scratch { searcher, buf } = scratch;
    match usize::try_from(size).ok().filter(|&n| n <= WHOLE_READ_MAX) {
        Some(size) => {
            // A read error ends that file; what was read before it is searched.
            let data = read_whole(file, size, buf);
            if data.is_empty() {
                return Flow::Continue;
            }
            let bom = has_bom(data);
            if !bom && memchr::memchr(0, data).is_some() {
                // What the searcher's own check would find, over the whole file (it looks at
                // a slice's first 64 KiB only).
                counters.skipped_binary.fetch_add(1, Ordering::Relaxed);
                return Flow::Continue;
            }
            // Checked above, unless the searcher transcodes the file: then it checks the text.
            searcher.set_binary_detection(if bom {
                quit_on_nul()
            } else {
                BinaryDetection::none()
            });
            let _ = searcher.search_slice(&settings.matcher, data, &mut sink);
        }
        // A read error mid-file just ends that file; what was found so far is kept.
        None => {
            searcher.set_binary_detection(quit_on_nul());
            let _ = searcher.search_file(&settings.matcher, file, &mut sink);
        }
    }
    if sink.binary {
        counters.skipped_binary.fetch_add(1, Ordering::Relaxed);
        counters.results.fetch_sub(sink.matches.len(), Ordering::Relaxed);
        return Flow::Continue;
    }
    if !sink.matches.is_empty() {
        counters.files_with_matches.fetch_add(1, Ordering::Relaxed);
        if sink.matches.len() >= settings.max_per_file {
            counters.per_file_cap_hit.fetch_add(1, Ordering::Relaxed);
        }
        match out.lock() {
            Ok(mut all) => all.append(&mut sink.matches),
            Err(_) => return Flow::Stop,
        }
    }
    if sink.global_cap { Flow::Stop } else { Flow::Continue }
}

/// Collects one file's matches with their context.
struct FileSink<'a> {
    settings: &'a Settings,
    counters: &'a Counters,
    /// Rendered only when the file has a match: most searched files have none.
    path: &'a RelPath,
    matches: Vec<SearchMatch>,
    /// Recent context lines, to fill `context_before` of a match that follows closely after
    /// another (the searcher reports such lines once, as "after" context of the first).
    recent: VecDeque<(u64, String)>,
    binary: bool,
    global_cap: bool,
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let line = m.line_number().unwrap_or(0);
        let bytes = trim_eol(m.bytes());
        let start = match self.settings.matcher.find(bytes) {
            Ok(Some(found)) => found.start(),
            _ => 0,
        };
        let taken = self.counters.results.fetch_add(1, Ordering::Relaxed);
        if taken >= self.settings.max_results {
            self.counters.results.fetch_sub(1, Ordering::Relaxed);
            self.counters.global_cap_hit.fetch_add(1, Ordering::Relaxed);
            self.global_cap = true;
            return Ok(false);
        }
        let low = line.saturating_sub(self.settings.before as u64);
        let context_before = self
            .recent
            .iter()
            .filter(|(n, _)| *n >= low && *n < line)
            .map(|(_, t)| t.clone())
            .collect();
        self.matches.push(SearchMatch {
            path: self.path.to_string(),
            line,
            column: start as u64 + 1,
            text: display_line(bytes, start),
            context_before,
            context_after: Vec::new(),
        });
        Ok(self.matches.len() < self.settings.max_per_file)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        let Some(line) = c.line_number() else { return Ok(true) };
        let text = display_line(trim_eol(c.bytes()), 0);
        let after_last = self.matches.last_mut().filter(|last| {
            *c.kind() == SinkContextKind::After
                && line > last.line
                && line <= last.line + self.settings.after as u64
        });
        if let Some(last) = after_last {
            last.context_after.push(text.clone());
        }
        if self.settings.before > 0 {
            self.recent.push_back((line, text));
            while self.recent.len() > self.settings.before {
                self.recent.pop_front();
            }
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, std::io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// Reads `file` (of `size` bytes when it was opened) into `buf`, in one `read` when the file
/// has not changed since: the bytes read. Growth after the open is not searched; a file that
/// shrank gives what it still holds. A read error ends the file where it happened.
fn read_whole<'b>(file: &std::fs::File, size: usize, buf: &'b mut Vec<u8>) -> &'b [u8] {
    buf.clear();
    buf.reserve(size);
    // `Take` stops at `size` without another system call; the spare capacity is read into
    // without being zeroed first; on an error, what was read before it stays in `buf`.
    let _ = file.take(size as u64).read_to_end(buf);
    buf
}

/// A byte-order mark the searcher transcodes from (UTF-8, UTF-16LE or BE): such a file is
/// searched as its text, so its NUL bytes (every other byte in UTF-16) do not make it binary.
fn has_bom(data: &[u8]) -> bool {
    data.starts_with(b"\xEF\xBB\xBF")
        || data.starts_with(b"\xFF\xFE")
        || data.starts_with(b"\xFE\xFF")
}

fn trim_eol(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

/// The line as returned to the model: cut around the match when long, then redacted.
fn display_line(bytes: &[u8], match_start: usize) -> String {
    if bytes.len() <= MAX_LINE_BYTES {
        return sluice_core::redact::redact(&String::from_utf8_lossy(bytes)).into_owned();
    }
    let mut from = match_start.saturating_sub(LEAD_BYTES).min(bytes.len());
    // Start and end on UTF-8 boundaries (skip continuation bytes), so no character is split.
    while from < bytes.len() && (bytes[from] & 0xC0) == 0x80 {
        from += 1;
    }
    let mut to = (from + MAX_LINE_BYTES).min(bytes.len());
    while to < bytes.len() && to > from && (bytes[to] & 0xC0) == 0x80 {
        to -= 1;
    }
    let window = String::from_utf8_lossy(&bytes[from..to]);
    let mut text = String::new();
    if from > 0 {
        text.push_str(&format!("[... {from} bytes cut] "));
    }
    text.push_str(&sluice_core::redact::redact(&window));
    if to < bytes.len() {
        text.push_str(&format!(" [... {} bytes cut]", bytes.len() - to));
    }
    text
}

fn build_matcher(args: &SearchTextArgs) -> Result<RegexMatcher, RunnerError> {
    if args.pattern.is_empty() {
        return Err(RunnerError::invalid("`pattern` is required and must not be empty"));
    }
    if args.pattern.len() > MAX_PATTERN_LEN {
        return Err(RunnerError::invalid(format!(
            "`pattern` is longer than {MAX_PATTERN_LEN} bytes"
        )));
    }
    let mut builder = RegexMatcherBuilder::new();
    match args.case.unwrap_or_default() {
        CaseMode::Sensitive => {}
        CaseMode::Insensitive => {
            builder.case_insensitive(true);
        }
        CaseMode::Smart => {
            builder.case_smart(true);
        }
    }
    builder
        .fixed_strings(args.literal.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        // Bounds compile-time memory for hostile patterns (`a{1000}{1000}`).
        .size_limit(16 * 1024 * 1024)
        .dfa_size_limit(32 * 1024 * 1024);
    builder.build(&args.pattern).map_err(|e| {
        RunnerError::invalid(format!(
            "invalid regex: {e}; set literal=true to search for the text as written"
        ))
    })
}

/// Searches file contents for a pattern.
pub fn search_text(ws: &Workspace, args: &SearchTextArgs) -> Result<SearchTextOutput, RunnerError> {
    let rel = ws.request(args.path.as_deref())?;
    let matcher = build_matcher(args)?;
    let include =
        if args.include.is_empty() { None } else { Some(compile_globs(&args.include, "include")?) };
    let exclude =
        if args.exclude.is_empty() { None } else { Some(compile_globs(&args.exclude, "exclude")?) };
    let max_results = clamp(args.max_results, DEFAULT_MAX_RESULTS, MAX_RESULTS) as usize;
    let settings = Settings {
        matcher,
        include,
        before: args.context_before.unwrap_or(0).min(MAX_CONTEXT) as usize,
        after: args.context_after.unwrap_or(0).min(MAX_CONTEXT) as usize,
        max_results,
        max_per_file: clamp(args.max_matches_per_file, DEFAULT_MAX_PER_FILE, MAX_RESULTS) as usize,
        max_file_size: clamp(args.max_file_size, DEFAULT_MAX_FILE_SIZE, MAX_FILE_SIZE),
    };
    let timeout = clamp(args.timeout_ms, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
    let deadline = Instant::now() + Duration::from_millis(timeout);
    let counters = Counters::default();
    let out = Mutex::new(Vec::new());

    let mut timed_out = false;
    // A single file can be searched directly; anything else must be a folder.
    match ws.root().open_dir(&rel) {
        Ok(dir) => {
            ws.check_resolved(&rel, dir.rel_path())?;
            let respect_gitignore = args.respect_gitignore.unwrap_or(true);
            let ignores = if respect_gitignore {
                walk::ancestor_ignores(ws.root(), dir.rel_path())
            } else {
                None
            };
            let threads = std::thread::available_parallelism()
                .map_or(MIN_THREADS, |n| n.get())
                .clamp(MIN_THREADS, MAX_THREADS);
            let config = WalkConfig {
                shield: ws.shield(),
                include_hidden: args.include_hidden.unwrap_or(true),
                respect_gitignore,
                max_depth: usize::MAX,
                exclude: exclude.as_ref(),
                threads,
                breadth_first: false,
                deadline: Some(deadline),
            };
            let visitor = SearchVisitor { settings: &settings, counters: &counters, out: &out };
            timed_out = walk::walk(dir, ignores, &config, &visitor).timed_out;
        }
        Err(sluice_guard::GuardError::WrongKind { .. }) => {
            let (file, meta, resolved) = ws.root().open_file_resolved(&rel)?;
            ws.check_resolved(&rel, &resolved)?;
            let mut scratch = Scratch::new(&settings);
            search_file(&settings, &counters, &out, &mut scratch, &file, meta.len(), &rel);
        }
        Err(e) => return Err(e.into()),
    }

    let mut matches = out.into_inner().unwrap_or_default();
    matches.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    let truncated_reason = if counters.global_cap_hit.load(Ordering::Relaxed) > 0 {
        Some("max_results")
    } else if timed_out {
        Some("time_budget")
    } else if counters.per_file_cap_hit.load(Ordering::Relaxed) > 0 {
        Some("max_matches_per_file")
    } else {
        None
    };
    Ok(SearchTextOutput {
        matches,
        files_searched: counters.files_searched.load(Ordering::Relaxed),
        files_with_matches: counters.files_with_matches.load(Ordering::Relaxed),
        files_skipped_large: counters.skipped_large.load(Ordering::Relaxed),
        files_skipped_binary: counters.skipped_binary.load(Ordering::Relaxed),
        truncated: truncated_reason.is_some(),
        truncated_reason: truncated_reason.map(str::to_owned),
    })
}
