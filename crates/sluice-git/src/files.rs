//! The per-file part shared by `git_diff` and `git_show`: `--raw`, `--numstat` and patch
//! output from one git invocation, joined into [`DiffFile`]s, with shielded files dropped and
//! patches redacted and budgeted.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use crate::parse::{self, FileStatus, Tokens};
use crate::{GitError, validate};

/// One changed file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct DiffFile {
    /// Project-relative path (the new path of a rename).
    pub path: String,
    /// The previous path of a rename or copy.
    pub old_path: Option<String>,
    /// How the file changed.
    pub status: FileStatus,
    /// Added lines; null for binary files.
    pub additions: Option<u32>,
    /// Deleted lines; null for binary files.
    pub deletions: Option<u32>,
    /// True for binary files, which have no patch text.
    pub binary: bool,
    /// Unified diff of this file (secrets redacted); null for binary files or past the byte
    /// limit.
    pub patch: Option<String>,
}

/// Default and largest `max_bytes` for patch text.
pub(crate) const DEFAULT_MAX_BYTES: u32 = 256 * 1024;
pub(crate) const MAX_MAX_BYTES: u32 = 8 * 1024 * 1024;
/// Hard cap on what git may write for one diff or show, hidden files' patches included.
pub(crate) const GIT_OUTPUT_CAP: usize = 32 * 1024 * 1024;
/// Default and largest context lines.
pub(crate) const DEFAULT_CONTEXT: u32 = 3;
pub(crate) const MAX_CONTEXT: u32 = 100;

/// The diff options every diff-producing invocation uses: never an external diff or textconv
/// program, no colour, deterministic prefixes and rename detection.
pub(crate) const DIFF_FLAGS: &[&str] = &[
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--find-renames",
    "--raw",
    "--numstat",
    "--patch",
    "-z",
    "--no-abbrev",
];

/// Validates request paths, refusing shielded ones outright (a request naming a shielded file
/// gets a clear refusal rather than a silently empty answer).
pub(crate) fn checked_paths<'a>(
    paths: impl IntoIterator<Item = &'a String>,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<Vec<&'a str>, GitError> {
    let mut out = Vec::new();
    for p in paths {
        validate::path(p)?;
        if hidden(p.trim_end_matches('/')) {
            return Err(GitError::PathShielded(format!(
                "{p:?} is protected by the sensitive-file shield"
            )));
        }
        out.push(p.as_str());
    }
    if out.len() > 1000 {
        return Err(GitError::invalid("at most 1000 paths per request"));
    }
    Ok(out)
}

/// Whether a raw entry touches a shielded file (either side of a rename or copy).
pub(crate) fn is_hidden(entry: &parse::RawEntry, hidden: &dyn Fn(&str) -> bool) -> bool {
    hidden(&parse::lossy(&entry.path))
        || entry.old_path.as_ref().is_some_and(|p| hidden(&parse::lossy(p)))
}

/// The files of a diff, starting at `t` (raw records, numstat records, a separator, patches).
pub(crate) struct Files {
    pub(crate) files: Vec<DiffFile>,
    pub(crate) hidden_files: u32,
    pub(crate) truncated: bool,
}

pub(crate) fn parse_files(
    t: &mut Tokens<'_>,
    output_truncated: bool,
    max_bytes: u32,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<Files, GitError> {
    let mut entries = Vec::new();
    while t.peek().is_some_and(parse::is_raw_start) {
        entries.push(parse::raw_entry(t)?);
    }
    let mut stats = Vec::with_capacity(entries.len());
    for _ in &entries {
        match parse::numstat_entry(t) {
            Ok(s) => stats.push(Some(s)),
            // Truncated output may end inside the numstat block; counts are then unknown.
            Err(_) if output_truncated => break,
            Err(e) => return Err(e),
        }
    }
    // The empty record git puts between the summaries and the patches.
    if !entries.is_empty() && t.peek() == Some(b"") {
        t.next_token();
    }
    let sections = if entries.is_empty() { Vec::new() } else { parse::split_patch(t.rest()) };
    // Sections are matched to entries by their exact header, never by position alone, so a
    // shielded file's patch can never be shown under another file's name.
    let mut by_header: HashMap<&[u8], VecDeque<&[u8]>> = HashMap::new();
    for s in &sections {
        let first = s.split(|b| *b == b'\n').next().unwrap_or_default();
        by_header.entry(first).or_default().push_back(s);
    }

    let mut files = Vec::new();
    let mut hidden_files = 0u32;
    let mut budget = max_bytes as usize;
    let mut truncated = output_truncated;
    for (idx, entry) in entries.iter().enumerate() {
        let headers = parse::expected_headers(entry);
        let section = headers.iter().find_map(|h| by_header.get_mut(h.as_slice())?.pop_front());
        if is_hidden(entry, hidden) {
            hidden_files += 1;
            continue;
        }
        let counts = stats.get(idx).and_then(|s| s.as_ref()).map(|s| s.counts);
        let binary = matches!(counts, Some(None));
        let (additions, deletions) = match counts {
            Some(Some((a, d))) => (Some(a), Some(d)),
            _ => (None, None),
        };
        let patch = match section {
            Some(s) if !binary => {
                let text = String::from_utf8_lossy(s);
                let text = sluice_core::redact::redact(&text).into_owned();
                if text.len() <= budget {
                    budget -= text.len();
                    Some(text)
                } else {
                    truncated = true;
                    let cut = cut_at_line(&text, budget);
                    budget = 0;
                    (!cut.is_empty()).then(|| cut.to_owned())
                }
            }
            _ => None,
        };
        files.push(DiffFile {
            path: parse::lossy(&entry.path),
            old_path: entry.old_path.as_deref().map(parse::lossy),
            status: entry.status,
            additions,
            deletions,
            binary,
            patch,
        });
    }
    Ok(Files { files, hidden_files, truncated })
}

/// The longest prefix of `text` of at most `limit` bytes that ends at a line break.
fn cut_at_line(text: &str, limit: usize) -> &str {
    let mut end = limit.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(nl) => &text[..=nl],
        None => "",
    }
}
