//! Parsers for git's NUL-separated machine formats (`--raw -z`, `--numstat -z`, porcelain v2
//! `-z`, and our own `--format` with `%x00` separators). NUL separation means any file name —
//! spaces, newlines, quotes, non-UTF-8 bytes — parses unambiguously.

use serde::Serialize;

use crate::GitError;

/// A cursor over NUL-terminated tokens.
pub(crate) struct Tokens<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Tokens<'a> {
        Tokens { buf, pos: 0 }
    }

    /// The next NUL-terminated token. An unterminated tail (truncated output) is not a token.
    pub(crate) fn next_token(&mut self) -> Option<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        let end = rest.iter().position(|b| *b == 0)?;
        self.pos += end + 1;
        Some(&rest[..end])
    }

    pub(crate) fn peek(&self) -> Option<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        rest.iter().position(|b| *b == 0).map(|end| &rest[..end])
    }

    /// Everything not consumed yet, NULs included.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

pub(crate) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub(crate) fn malformed() -> GitError {
    GitError::GitFailed("git produced output Sluice could not parse".into())
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
    Copied,
    TypeChanged,
    Unmerged,
    Unknown,
}

impl FileStatus {
    fn from_letter(c: u8) -> FileStatus {
        match c {
            b'A' => FileStatus::Added,
            b'M' => FileStatus::Modified,
            b'D' => FileStatus::Deleted,
            b'R' => FileStatus::Renamed,
            b'C' => FileStatus::Copied,
            b'T' => FileStatus::TypeChanged,
            b'U' => FileStatus::Unmerged,
            _ => FileStatus::Unknown,
        }
    }
}

/// One `--raw` record.
#[derive(Debug, Clone)]
pub(crate) struct RawEntry {
    pub(crate) path: Vec<u8>,
    pub(crate) old_path: Option<Vec<u8>>,
    pub(crate) status: FileStatus,
}

/// Whether the next token starts a `--raw` record (git may put a newline before the first).
pub(crate) fn is_raw_start(tok: &[u8]) -> bool {
    tok.strip_prefix(b"\n").unwrap_or(tok).starts_with(b":")
}

/// Reads one `--raw -z` record: `:<modes> <ids> <status>\0<path>\0[<path>\0]`.
pub(crate) fn raw_entry(t: &mut Tokens<'_>) -> Result<RawEntry, GitError> {
    let meta = t.next_token().ok_or_else(malformed)?;
    let meta = meta.strip_prefix(b"\n").unwrap_or(meta);
    let status_field = meta.rsplit(|b| *b == b' ').next().ok_or_else(malformed)?;
    let letter = *status_field.first().ok_or_else(malformed)?;
    let status = FileStatus::from_letter(letter);
    let first = t.next_token().ok_or_else(malformed)?.to_vec();
    if matches!(status, FileStatus::Renamed | FileStatus::Copied) {
        let second = t.next_token().ok_or_else(malformed)?.to_vec();
        Ok(RawEntry { path: second, old_path: Some(first), status })
    } else {
        Ok(RawEntry { path: first, old_path: None, status })
    }
}

/// One `--numstat -z` record: `None` counts mean binary.
pub(crate) struct NumStat {
    pub(crate) counts: Option<(u32, u32)>,
}

/// Reads one `--numstat -z` record: `<add>\t<del>\t<path>\0` or, for renames and copies,
/// `<add>\t<del>\t\0<old>\0<new>\0`.
pub(crate) fn numstat_entry(t: &mut Tokens<'_>) -> Result<NumStat, GitError> {
    let tok = t.next_token().ok_or_else(malformed)?;
    let mut fields = tok.splitn(3, |b| *b == b'\t');
    let add = fields.next().ok_or_else(malformed)?;
    let del = fields.next().ok_or_else(malformed)?;
    let path = fields.next().ok_or_else(malformed)?;
    if path.is_empty() {
        t.next_token().ok_or_else(malformed)?;
        t.next_token().ok_or_else(malformed)?;
    }
    let num = |b: &[u8]| std::str::from_utf8(b).ok().and_then(|s| s.parse::<u32>().ok());
    let counts = match (num(add), num(del)) {
        (Some(a), Some(d)) => Some((a, d)),
        _ => None,
    };
    Ok(NumStat { counts })
}

/// Splits patch text into per-file sections. Every section starts with a `diff ` header at the
/// start of a line; content lines inside hunks always start with ` `, `+`, `-` or `\`, so the
/// split cannot be fooled by file contents.
pub(crate) fn split_patch(text: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new();
    let mut line_start = 0;
    while line_start < text.len() {
        let line = &text[line_start..];
        if line.starts_with(b"diff --git ") || line.starts_with(b"diff --cc ") {
            starts.push(line_start);
        }
        match line.iter().position(|b| *b == b'\n') {
            Some(nl) => line_start += nl + 1,
            None => break,
        }
    }
    let mut sections = Vec::with_capacity(starts.len());
    for (i, start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        sections.push(&text[*start..end]);
    }
    sections
}

/// The header line git writes for an entry, used to check that a patch section belongs to the
/// entry we attribute it to (a mismatch must never show one file's content under another name).
pub(crate) fn expected_headers(entry: &RawEntry) -> [Vec<u8>; 2] {
    let old = entry.old_path.as_deref().unwrap_or(&entry.path);
    let mut git = b"diff --git ".to_vec();
    git.extend(quote_path(b"a/", old));
    git.push(b' ');
    git.extend(quote_path(b"b/", &entry.path));
    let mut cc = b"diff --cc ".to_vec();
    cc.extend(quote_path(b"", &entry.path));
    [git, cc]
}

/// git's C-style quoting with `core.quotePath=true` (quote.c `quote_c_style`).
pub(crate) fn quote_path(prefix: &[u8], path: &[u8]) -> Vec<u8> {
    let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f;
    let mut full = prefix.to_vec();
    full.extend_from_slice(path);
    if !full.iter().any(|b| needs(*b)) {
        return full;
    }
    let mut out = vec![b'"'];
    for &b in &full {
        match b {
            0x07 => out.extend(b"\\a"),
            0x08 => out.extend(b"\\b"),
            b'\t' => out.extend(b"\\t"),
            b'\n' => out.extend(b"\\n"),
            0x0b => out.extend(b"\\v"),
            0x0c => out.extend(b"\\f"),
            b'\r' => out.extend(b"\\r"),
            b'"' => out.extend(b"\\\""),
            b'\\' => out.extend(b"\\\\"),
            b if needs(b) => out.extend(format!("\\{b:03o}").as_bytes()),
            b => out.push(b),
        }
    }
    out.push(b'"');
    out
}

/// Whether `id` looks like a full object id (SHA-1 or SHA-256).
pub(crate) fn is_object_id(id: &[u8]) -> bool {
    (id.len() == 40 || id.len() == 64) && id.iter().all(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests {
    use super::{
        FileStatus, RawEntry, Tokens, expected_headers, quote_path, raw_entry, split_patch,
    };

    #[test]
    fn quoting_matches_git() {
        assert_eq!(quote_path(b"a/", b"plain name.txt"), b"a/plain name.txt");
        assert_eq!(quote_path(b"a/", b"new\nline"), br#""a/new\nline""#);
        assert_eq!(quote_path(b"b/", "ü".as_bytes()), br#""b/\303\274""#);
        assert_eq!(quote_path(b"", b"q\"t"), br#""q\"t""#);
    }

    #[test]
    fn raw_records_and_patch_sections() {
        let buf = b"\n:100644 100644 a b R090\0old name\0new\nname\0:000000 100644 0 b A\0x\0";
        let mut t = Tokens::new(buf);
        let e = raw_entry(&mut t).unwrap();
        assert_eq!(e.status, FileStatus::Renamed);
        assert_eq!(e.old_path.as_deref(), Some(&b"old name"[..]));
        assert_eq!(e.path, b"new\nname");
        let e2 = raw_entry(&mut t).unwrap();
        assert_eq!((e2.status, e2.path.as_slice()), (FileStatus::Added, &b"x"[..]));
        assert!(t.at_end());
        let [h, _] = expected_headers(&RawEntry {
            path: b"new\nname".to_vec(),
            old_path: Some(b"old name".to_vec()),
            status: FileStatus::Renamed,
        });
        assert_eq!(h, br#"diff --git a/old name "b/new\nname""#);

        let patch =
            b"diff --git a/x b/x\n+diff --git a/y b/y\n diff --git c\ndiff --git a/z b/z\n-q\n";
        let s = split_patch(patch);
        assert_eq!(s.len(), 2);
        assert!(s[1].starts_with(b"diff --git a/z"));
    }
}
