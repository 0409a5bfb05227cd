//! `read_file`: a text file or a range of its lines, with encoding detection, binary
//! refusal, size caps and a content hash for later conditional writes.

use std::io::Read;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{plain_integers, rfc3339};
use crate::{RunnerError, Workspace};

const DEFAULT_MAX_BYTES: u64 = 256 * 1024;
pub(crate) const MAX_BYTES: u64 = 4 * 1024 * 1024;
/// Files above this are never loaded, even for a line range (a range still needs the whole file
/// for `total_lines` and the hash). Guards against huge and sparse files (RX-01).
const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;
/// How much of the start of a file is checked for NUL bytes.
const BINARY_SNIFF: usize = 8 * 1024;

/// Arguments of `read_file`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = plain_integers)]
pub struct ReadFileArgs {
    /// File to read, relative to the project root, with `/` separators.
    pub path: String,
    /// First line to return, 1-based. Default 1.
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// Maximum number of lines to return. Default: as many as fit in `max_bytes`.
    #[schemars(range(min = 1))]
    pub max_lines: Option<u64>,
    /// Maximum bytes of content to return. Default 262144 (256 KiB), max 4194304 (4 MiB). A
    /// file larger than this must be read by line range.
    #[schemars(range(min = 1, max = 4194304))]
    pub max_bytes: Option<u64>,
}

/// Result of `read_file`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct ReadFileOutput {
    /// The file, project-relative.
    pub path: String,
    /// The returned lines, with their original line endings. Known secret formats (API keys,
    /// tokens, private keys) are replaced by `[redacted:<kind>]`.
    pub content: String,
    /// `utf-8`, `utf-8-bom`, `utf-16le` or `utf-16be` (by byte-order mark).
    pub encoding: String,
    /// True when invalid byte sequences were replaced by U+FFFD.
    pub lossy: bool,
    /// True when `content` had secrets replaced.
    pub redacted: bool,
    /// Lines in the whole file.
    pub total_lines: u64,
    /// First returned line, 1-based.
    pub start_line: u64,
    /// Last returned line (inclusive); `start_line - 1` when nothing was returned.
    pub end_line: u64,
    /// True when the byte cap cut the requested range short.
    pub truncated: bool,
    /// Where to continue reading, when lines remain after `end_line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_line: Option<u64>,
    /// File size in bytes.
    pub size: u64,
    /// Last modification time, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// `blake3:<hex>` of the file's raw bytes; write tools take it as the expected hash.
    pub hash: String,
}

/// Reads a text file of the project.
pub fn read_file(ws: &Workspace, args: &ReadFileArgs) -> Result<ReadFileOutput, RunnerError> {
    let rel = ws.request(Some(&args.path))?;
    if rel.is_root() {
        return Err(RunnerError::invalid(
            "read_file needs a file path; use list_directory to see the project's files",
        ));
    }
    let (file, meta, resolved) = ws.root().open_file_resolved(&rel)?;
    ws.check_resolved(&rel, &resolved)?;
    let path = rel.to_string();
    let size = meta.len();
    if size > MAX_FILE_SIZE {
        return Err(RunnerError::TooLarge(format!(
            "`{path}` is {} which is over the {} limit of read_file; use search_text to find \
             the lines you need",
            human(size),
            human(MAX_FILE_SIZE)
        )));
    }
    let mut raw = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_FILE_SIZE)
        .read_to_end(&mut raw)
        .map_err(|e| RunnerError::Io { path: path.clone(), kind: e.kind() })?;
    let hash = format!("blake3:{}", blake3::hash(&raw).to_hex());

    let (text, encoding, lossy) =
        decode(raw).ok_or(RunnerError::BinaryFile { path: path.clone() })?;
    let total_lines = text.split_inclusive('\n').count() as u64;

    let max_bytes = args.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).clamp(1, MAX_BYTES);
    let ranged = args.start_line.is_some() || args.max_lines.is_some();
    if !ranged && text.len() as u64 > max_bytes {
        return Err(RunnerError::TooLarge(format!(
            "`{path}` is {} ({total_lines} lines), over the {} read limit; read it in parts with \
             start_line and max_lines (e.g. start_line=1, max_lines=400), or use search_text",
            human(text.len() as u64),
            human(max_bytes)
        )));
    }
    let start = args.start_line.unwrap_or(1).max(1);
    if start > total_lines.max(1) {
        return Err(RunnerError::invalid(format!(
            "start_line {start} is past the end of `{path}`, which has {total_lines} lines"
        )));
    }
    let (content, end_line, truncated) = if ranged {
        line_range(&text, start, args.max_lines, max_bytes)
    } else {
        // The whole file, which fits (checked above): as decoded, no copy.
        (text, total_lines, false)
    };
    let next_start_line = (end_line < total_lines).then_some(end_line + 1);

    let rewritten = match sluice_core::redact::redact(&content) {
        std::borrow::Cow::Owned(text) => Some(text),
        std::borrow::Cow::Borrowed(_) => None,
    };
    let redacted = rewritten.is_some();
    let content = rewritten.unwrap_or(content);
    Ok(ReadFileOutput {
        path,
        content,
        encoding: encoding.to_owned(),
        lossy,
        redacted,
        total_lines,
        start_line: start,
        end_line,
        truncated,
        next_start_line,
        size,
        modified: rfc3339(meta.modified().ok()),
        hash,
    })
}

/// Lines `start..` of `text` (1-based), at most `max_lines` of them and `max_bytes` in all: the
/// content, the last line included and whether the byte cap cut the range short.
fn line_range(
    text: &str,
    start: u64,
    max_lines: Option<u64>,
    max_bytes: u64,
) -> (String, u64, bool) {
    let want = max_lines.unwrap_or(u64::MAX).max(1);
    let first = usize::try_from(start - 1).unwrap_or(usize::MAX);
    let mut content = String::new();
    let mut end_line = start - 1;
    let mut truncated = false;
    let mut lines = text.split_inclusive('\n').enumerate();
    if first > 0 {
        // Past the lines before `start`.
        lines.nth(first - 1);
    }
    for (idx, line) in lines {
        if end_line - (start - 1) >= want {
            break;
        }
        if (content.len() + line.len()) as u64 > max_bytes {
            truncated = true;
            if content.is_empty() {
                // A single line longer than the cap: return its beginning.
                content.push_str(floor_char(line, max_bytes as usize));
                end_line = idx as u64 + 1;
            }
            break;
        }
        content.push_str(line);
        end_line = idx as u64 + 1;
    }
    (content, end_line, truncated)
}

/// Whether a file starting with `head` is text as [`read_file`] sees it: a UTF-16 byte-order
/// mark, or no NUL byte in its first [`BINARY_SNIFF`] bytes (after a UTF-8 byte-order mark).
pub(crate) fn is_text(head: &[u8]) -> bool {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return true;
    }
    let body = head.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(head);
    !body[..body.len().min(BINARY_SNIFF)].contains(&0)
}

/// Decodes by BOM; `None` for binary (a NUL byte near the start of a non-UTF-16 file).
fn decode(raw: Vec<u8>) -> Option<(String, &'static str, bool)> {
    if let Some(rest) = raw.strip_prefix(&[0xFF, 0xFE]) {
        return Some(decode_utf16(rest, u16::from_le_bytes, "utf-16le"));
    }
    if let Some(rest) = raw.strip_prefix(&[0xFE, 0xFF]) {
        return Some(decode_utf16(rest, u16::from_be_bytes, "utf-16be"));
    }
    let (mut body, encoding) = match raw.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        Some(rest) => (rest.to_vec(), "utf-8-bom"),
        None => (raw, "utf-8"),
    };
    if body[..body.len().min(BINARY_SNIFF)].contains(&0) {
        return None;
    }
    // Valid UTF-8 (nearly every text file) becomes the string without a copy.
    match String::from_utf8(std::mem::take(&mut body)) {
        Ok(s) => Some((s, encoding, false)),
        Err(e) => Some((String::from_utf8_lossy(e.as_bytes()).into_owned(), encoding, true)),
    }
}

fn decode_utf16(
    bytes: &[u8],
    word: fn([u8; 2]) -> u16,
    name: &'static str,
) -> (String, &'static str, bool) {
    let chunks = bytes.chunks_exact(2);
    let mut lossy = !chunks.remainder().is_empty();
    let units = chunks.map(|c| word([c[0], c[1]]));
    let text: String = char::decode_utf16(units)
        .map(|r| {
            r.unwrap_or_else(|_| {
                lossy = true;
                char::REPLACEMENT_CHARACTER
            })
        })
        .collect();
    (text, name, lossy)
}

/// The longest prefix of `s` that is at most `max` bytes and ends on a char boundary.
pub(crate) fn floor_char(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

pub(crate) fn human(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else if bytes >= KIB {
        format!("{:.1} KiB", bytes as f64 / KIB as f64)
    } else {
        format!("{bytes} bytes")
    }
}
