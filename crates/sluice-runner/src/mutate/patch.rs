//! Patch parsing and application for `apply_patch`, in both forms models produce:
//!
//! - unified diffs as `git diff` prints them: `diff --git` headers with `new file mode`,
//!   `deleted file mode`, `rename from`/`rename to`, `/dev/null`, `a/` and `b/` prefixes,
//!   quoted paths, `\ No newline at end of file`; plain `---`/`+++` diffs too. Hunk lengths come
//!   from the `@@` header counts, so a removed line that starts with `--` is not mistaken for a
//!   header. Mode changes are ignored (files keep their mode, new files get 0644); binary
//!   patches and copies are refused.
//! - the `*** Begin Patch` envelope (`*** Add File:`, `*** Update File:` with `*** Move to:`,
//!   `*** Delete File:`, `@@ [context]` hunks, `*** End of File`, `*** End Patch`).
//!
//! Application is our own instead of a diff library's, because it has to serve both forms
//! (the envelope has no line numbers), keep every untouched line byte-exact (line endings
//! included) and report a precise error. Each hunk's old side (context and removed lines) must
//! match consecutive lines at or after the end of the previous hunk. Matching is exact first;
//! the only fuzz is a second pass that ignores trailing whitespace (models often drop it). No
//! context lines are ever skipped. With line numbers, the match closest to the stated line
//! wins; without, the first one after the `@@` context line. Nothing here panics on any input:
//! errors are strings for the model, with 1-based patch line numbers.

use super::text::{is_crlf, snippet};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    Add { path: String },
    Delete { path: String },
    Update { path: String, move_to: Option<String> },
}

impl FileOp {
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path } | FileOp::Delete { path } | FileOp::Update { path, .. } => path,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Context(String),
    Remove(String),
    Add(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based old line number from a unified header (0 for "before the first line").
    pub old_start: Option<usize>,
    /// The text after `@@ ` in the envelope form: a line to find before the hunk.
    pub anchor: Option<String>,
    pub lines: Vec<Line>,
    /// `*** End of File`: the hunk must match at the end.
    pub eof: bool,
    /// The new side's last line has no newline.
    pub no_newline_new: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    pub op: FileOp,
    pub hunks: Vec<Hunk>,
}

/// Parses either form.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, String> {
    let lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let files = match first {
        Some(idx) if lines[idx].trim() == "*** Begin Patch" => parse_envelope(&lines, idx + 1),
        Some(_) => parse_unified(&lines),
        None => Err("the patch is empty".into()),
    }?;
    // Every form has several ways to spell a path (`+++ b/x`, `diff --git`, `rename to`,
    // `*** Move to:`, quoted or not); whichever was used, an empty one is refused here, once,
    // rather than reaching the project as "the root".
    for (n, file) in files.iter().enumerate() {
        let move_to = match &file.op {
            FileOp::Update { move_to, .. } => move_to.as_deref(),
            _ => None,
        };
        if file.op.path().trim().is_empty() || move_to.is_some_and(|to| to.trim().is_empty()) {
            return Err(format!(
                "file {} of the patch has an empty path; name every file relative to the \
                 project root",
                n + 1
            ));
        }
    }
    Ok(files)
}

fn parse_envelope(lines: &[&str], mut i: usize) -> Result<Vec<FilePatch>, String> {
    let mut out = Vec::new();
    let err = |i: usize, what: &str| format!("patch line {}: {what}", i + 1);
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line == "*** End Patch" {
            return Ok(out);
        }
        if line.is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            i += 1;
            let mut hunk = Hunk::default();
            while i < lines.len() && !lines[i].starts_with("*** ") {
                match lines[i].strip_prefix('+') {
                    Some(rest) => hunk.lines.push(Line::Add(rest.to_owned())),
                    None if lines[i].is_empty() => {}
                    None => return Err(err(i, "every line of an added file must start with `+`")),
                }
                i += 1;
            }
            out.push(FilePatch {
                op: FileOp::Add { path: path.trim().to_owned() },
                hunks: vec![hunk],
            });
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            out.push(FilePatch {
                op: FileOp::Delete { path: path.trim().to_owned() },
                hunks: vec![],
            });
            i += 1;
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            let start = i;
            i += 1;
            let mut move_to = None;
            if let Some(dest) = lines.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
                move_to = Some(dest.trim().to_owned());
                i += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            while i < lines.len() {
                let l = lines[i];
                if l.trim_end() == "*** End of File" {
                    match hunks.last_mut() {
                        Some(h) => h.eof = true,
                        None => return Err(err(i, "`*** End of File` before any hunk")),
                    }
                    i += 1;
                    continue;
                }
                if l.starts_with("*** ") {
                    break;
                }
                if let Some(rest) = l.strip_prefix("@@") {
                    let anchor = rest.trim();
                    let anchor = (!anchor.is_empty()).then(|| anchor.to_owned());
                    hunks.push(Hunk { anchor, ..Hunk::default() });
                    i += 1;
                    continue;
                }
                if hunks.is_empty() {
                    hunks.push(Hunk::default());
                }
                let hunk = hunks.last_mut().ok_or_else(|| err(i, "no hunk"))?;
                let parsed = match l.chars().next() {
                    Some(' ') => Line::Context(l[1..].to_owned()),
                    Some('-') => Line::Remove(l[1..].to_owned()),
                    Some('+') => Line::Add(l[1..].to_owned()),
                    None => Line::Context(String::new()),
                    Some(_) => {
                        return Err(err(
                            i,
                            "hunk lines must start with a space, `-` or `+` (or `@@` for a new \
                             hunk)",
                        ));
                    }
                };
                hunk.lines.push(parsed);
                i += 1;
            }
            hunks.retain(|h| !h.lines.is_empty());
            if hunks.is_empty() && move_to.is_none() {
                return Err(err(start, "`*** Update File:` without any hunk"));
            }
            out.push(FilePatch {
                op: FileOp::Update { path: path.trim().to_owned(), move_to },
                hunks,
            });
        } else {
            return Err(err(
                i,
                "expected `*** Add File:`, `*** Update File:`, `*** Delete File:` or `*** End \
                 Patch`",
            ));
        }
    }
    Err("the patch has no `*** End Patch` line".into())
}

#[derive(Default)]
struct GitHeader {
    a: Option<String>,
    b: Option<String>,
    new_file: bool,
    deleted: bool,
    rename_from: Option<String>,
    rename_to: Option<String>,
}

fn parse_unified(lines: &[&str]) -> Result<Vec<FilePatch>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    let err = |i: usize, what: &str| format!("patch line {}: {what}", i + 1);
    while i < lines.len() {
        let line = lines[i];
        let git = line.starts_with("diff --git ");
        let plain =
            line.starts_with("--- ") && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ "));
        if !git && !plain {
            if line.starts_with("@@ ") {
                return Err(err(i, "a hunk without `---`/`+++` file headers"));
            }
            // Commit messages, `index` lines of plain diffs and other prose are skipped.
            i += 1;
            continue;
        }
        let start = i;
        let mut h = GitHeader::default();
        if git {
            let (a, b) = split_git_paths(&line["diff --git ".len()..]);
            h.a = a;
            h.b = b;
            i += 1;
            while i < lines.len() {
                let l = lines[i];
                if l.starts_with("diff --git ") || l.starts_with("--- ") || l.starts_with("@@ ") {
                    break;
                }
                if l.starts_with("new file mode") {
                    h.new_file = true;
                } else if l.starts_with("deleted file mode") {
                    h.deleted = true;
                } else if let Some(p) = l.strip_prefix("rename from ") {
                    h.rename_from = Some(unquote(p)?);
                } else if let Some(p) = l.strip_prefix("rename to ") {
                    h.rename_to = Some(unquote(p)?);
                } else if l.starts_with("copy from ") || l.starts_with("copy to ") {
                    return Err(err(i, "copies are not supported; add the new file instead"));
                } else if l.starts_with("GIT binary patch") || l.starts_with("Binary files ") {
                    return Err(err(
                        i,
                        "binary patches are not supported; apply_patch changes text",
                    ));
                }
                i += 1;
            }
        }
        let (mut old, mut new) = (None, None);
        let mut has_headers = false;
        if lines.get(i).is_some_and(|l| l.starts_with("--- ")) {
            if !lines.get(i + 1).is_some_and(|l| l.starts_with("+++ ")) {
                return Err(err(i + 1, "`---` must be followed by `+++`"));
            }
            old = file_path(&lines[i][4..], "a/")?;
            new = file_path(&lines[i + 1][4..], "b/")?;
            has_headers = true;
            i += 2;
        }
        let mut hunks = Vec::new();
        while lines.get(i).is_some_and(|l| l.starts_with("@@")) {
            hunks.push(parse_hunk(lines, &mut i)?);
        }
        let op = if has_headers {
            match (old, new) {
                (None, None) => return Err(err(start, "both sides are /dev/null")),
                (None, Some(path)) => FileOp::Add { path },
                (Some(path), None) => FileOp::Delete { path },
                (Some(a), Some(b)) if h.new_file => {
                    let _ = a;
                    FileOp::Add { path: b }
                }
                (Some(a), Some(_)) if h.deleted => FileOp::Delete { path: a },
                (Some(a), Some(b)) => {
                    let move_to = (a != b).then_some(b);
                    FileOp::Update { path: a, move_to }
                }
            }
        } else {
            // A git section without `---`/`+++`: a pure rename, an empty new or deleted file,
            // or a mode change (ignored).
            let a = h.rename_from.clone().or(h.a.clone());
            let b = h.rename_to.clone().or(h.b.clone());
            match (a, b) {
                (_, Some(b)) if h.new_file => FileOp::Add { path: b },
                (Some(a), _) if h.deleted => FileOp::Delete { path: a },
                (Some(a), Some(b)) if a != b => FileOp::Update { path: a, move_to: Some(b) },
                _ => continue,
            }
        };
        let op = match op {
            FileOp::Update { path, move_to: None } if h.rename_to.is_some() => FileOp::Update {
                path: h.rename_from.clone().unwrap_or(path),
                move_to: h.rename_to.clone(),
            },
            op => op,
        };
        if matches!(op, FileOp::Update { move_to: None, .. }) && hunks.is_empty() {
            return Err(err(start, "a file section without hunks"));
        }
        out.push(FilePatch { op, hunks });
    }
    Ok(out)
}

fn parse_hunk(lines: &[&str], i: &mut usize) -> Result<Hunk, String> {
    let err = |i: usize, what: &str| format!("patch line {}: {what}", i + 1);
    let header = lines[*i];
    let (old_start, mut old_left, mut new_left) =
        parse_hunk_header(header).ok_or_else(|| err(*i, "malformed `@@ -a,b +c,d @@` header"))?;
    let mut hunk = Hunk { old_start: Some(old_start), ..Hunk::default() };
    *i += 1;
    // (old side, new side) of the last line, for `\ No newline at end of file`.
    let mut last_sides = (false, false);
    while (old_left > 0 || new_left > 0) && *i < lines.len() {
        let l = lines[*i];
        let (line, sides) = match l.chars().next() {
            Some(' ') => (Line::Context(l[1..].to_owned()), (true, true)),
            None => (Line::Context(String::new()), (true, true)),
            Some('-') => (Line::Remove(l[1..].to_owned()), (true, false)),
            Some('+') => (Line::Add(l[1..].to_owned()), (false, true)),
            Some('\\') => {
                if last_sides.1 {
                    hunk.no_newline_new = true;
                }
                *i += 1;
                continue;
            }
            Some(_) => return Err(err(*i, "the hunk is shorter than its `@@` header says")),
        };
        if (sides.0 && old_left == 0) || (sides.1 && new_left == 0) {
            return Err(err(*i, "the hunk is longer than its `@@` header says"));
        }
        old_left -= usize::from(sides.0);
        new_left -= usize::from(sides.1);
        last_sides = sides;
        hunk.lines.push(line);
        *i += 1;
    }
    if old_left > 0 || new_left > 0 {
        return Err(err(*i, "the patch ends inside a hunk"));
    }
    while lines.get(*i).is_some_and(|l| l.starts_with('\\')) {
        if last_sides.1 {
            hunk.no_newline_new = true;
        }
        *i += 1;
    }
    Ok(hunk)
}

/// `@@ -a[,b] +c[,d] @@ …` → (a, b, d).
fn parse_hunk_header(line: &str) -> Option<(usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((s, n)) => Some((s.parse().ok()?, n.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (_, d) = range(new)?;
    // Bound the counts: a header claiming billions of lines must not drive anything.
    (b <= 10_000_000 && d <= 10_000_000).then_some((a, b, d))
}

/// A `---`/`+++` path: `/dev/null` is `None`; a tab starts a timestamp; quotes are C-style.
fn file_path(raw: &str, prefix: &str) -> Result<Option<String>, String> {
    let raw = raw.split('\t').next().unwrap_or(raw).trim_end();
    if raw == "/dev/null" {
        return Ok(None);
    }
    let path = unquote(raw)?;
    Ok(Some(path.strip_prefix(prefix).map(str::to_owned).unwrap_or(path)))
}

/// The two paths of `diff --git a/x b/y` (for sections without `---`/`+++`).
fn split_git_paths(rest: &str) -> (Option<String>, Option<String>) {
    if rest.starts_with('"') {
        let mut parts = Vec::new();
        let mut cur = rest;
        while let Some(stripped) = cur.trim_start().strip_prefix('"') {
            let Some(end) = find_closing_quote(stripped) else { break };
            parts.push(format!("\"{}\"", &stripped[..end]));
            cur = &stripped[end + 1..];
        }
        let mut it = parts.into_iter().filter_map(|p| unquote(&p).ok());
        let a = it.next().map(|p| p.strip_prefix("a/").map(str::to_owned).unwrap_or(p));
        let b = it.next().map(|p| p.strip_prefix("b/").map(str::to_owned).unwrap_or(p));
        return (a, b);
    }
    match rest.rfind(" b/") {
        Some(idx) => {
            let a = &rest[..idx];
            let b = &rest[idx + 3..];
            (Some(a.strip_prefix("a/").unwrap_or(a).to_owned()), Some(b.to_owned()))
        }
        None => (None, None),
    }
}

fn find_closing_quote(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut idx = 0;
    while idx < bytes.len() {
        match bytes[idx] {
            b'\\' => idx += 2,
            b'"' => return Some(idx),
            _ => idx += 1,
        }
    }
    None
}

/// Git's C-style quoting: `"a\tb\303\251"`. Unquoted input is returned as is.
fn unquote(s: &str) -> Result<String, String> {
    let s = s.trim_end();
    let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return Ok(s.to_owned());
    };
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut idx = 0;
    while idx < bytes.len() {
        let b = bytes[idx];
        if b != b'\\' {
            out.push(b);
            idx += 1;
            continue;
        }
        let next = *bytes.get(idx + 1).ok_or("a quoted path ends with `\\`")?;
        idx += 2;
        out.push(match next {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'a' => 7,
            b'b' => 8,
            b'f' => 12,
            b'v' => 11,
            b'0'..=b'7' => {
                let digits = bytes.get(idx - 1..idx + 2).ok_or("a bad octal escape in a path")?;
                let text = std::str::from_utf8(digits).map_err(|_| "a bad octal escape")?;
                idx += 1;
                u8::from_str_radix(text, 8).map_err(|_| "a bad octal escape in a path")?
            }
            other => other,
        });
    }
    String::from_utf8(out).map_err(|_| "a quoted path is not UTF-8".to_owned())
}

/// The content of an added file.
pub fn new_file_content(hunks: &[Hunk]) -> Result<String, String> {
    let mut out = String::new();
    for hunk in hunks {
        for line in &hunk.lines {
            match line {
                Line::Add(text) => {
                    out.push_str(text);
                    out.push('\n');
                }
                _ => return Err("a new file's hunk may only add lines".into()),
            }
        }
    }
    if hunks.last().is_some_and(|h| h.no_newline_new) {
        out.pop();
    }
    Ok(out)
}

/// Applies `hunks` to `old`; see the module docs for the matching rules.
pub fn apply(old: &str, hunks: &[Hunk]) -> Result<String, String> {
    let eol = if is_crlf(old) { "\r\n" } else { "\n" };
    let file: Vec<&str> = old.split_inclusive('\n').collect();
    let bare: Vec<&str> = file
        .iter()
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut out: Vec<String> = Vec::with_capacity(file.len());
    let push = |out: &mut Vec<String>, line: String| {
        if let Some(last) = out.last_mut()
            && !last.ends_with('\n')
        {
            last.push_str(eol);
        }
        out.push(line);
    };
    let mut cursor = 0usize;
    for (n, hunk) in hunks.iter().enumerate() {
        let want: Vec<&str> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(t) | Line::Remove(t) => Some(t.as_str()),
                Line::Add(_) => None,
            })
            .collect();
        let mut from = cursor;
        if let Some(anchor) = &hunk.anchor {
            let found = seek(&bare, &[anchor.as_str()], from, None, false);
            match found {
                // When the anchor is itself the first context line, the hunk starts there.
                Some(pos) if want.first().is_some_and(|w| w.trim() == anchor.trim()) => from = pos,
                Some(pos) => from = pos + 1,
                None => {
                    return Err(format!(
                        "hunk {} : the context line \"{}\" was not found; read_file and \
                         regenerate the patch",
                        n + 1,
                        snippet(anchor)
                    ));
                }
            }
        }
        let pos = if want.is_empty() {
            match hunk.old_start {
                Some(s) => s.min(bare.len()).max(from),
                None if hunk.anchor.is_some() => from,
                None => bare.len(),
            }
        } else {
            let hint = hunk.old_start.map(|s| s.saturating_sub(1));
            seek(&bare, &want, from, hint, hunk.eof).ok_or_else(|| {
                format!(
                    "hunk {} (starting \"{}\") does not match the file's current content; \
                     read_file and regenerate the patch",
                    n + 1,
                    snippet(want[0])
                )
            })?
        };
        for line in &file[cursor..pos] {
            push(&mut out, (*line).to_owned());
        }
        let mut at = pos;
        for line in &hunk.lines {
            match line {
                Line::Context(_) => {
                    push(&mut out, file.get(at).map(|l| (*l).to_owned()).unwrap_or_default());
                    at += 1;
                }
                Line::Remove(_) => at += 1,
                Line::Add(text) => push(&mut out, format!("{text}{eol}")),
            }
        }
        cursor = at;
        if hunk.no_newline_new
            && let Some(last) = out.last_mut()
        {
            let trimmed = last.trim_end_matches(['\n', '\r']).len();
            last.truncate(trimmed);
        }
    }
    for line in &file[cursor.min(file.len())..] {
        push(&mut out, (*line).to_owned());
    }
    Ok(out.concat())
}

/// Where `want` occurs in `lines` at or after `from`: exact first, then ignoring trailing
/// whitespace. With a hint, the occurrence nearest to it; with `eof`, only at the very end.
fn seek(
    lines: &[&str],
    want: &[&str],
    from: usize,
    hint: Option<usize>,
    eof: bool,
) -> Option<usize> {
    if want.len() > lines.len() || from > lines.len() - want.len() {
        return None;
    }
    let last = lines.len() - want.len();
    let exact = |a: &str, b: &str| a == b;
    let loose = |a: &str, b: &str| a.trim_end() == b.trim_end();
    for eq in [&exact as &dyn Fn(&str, &str) -> bool, &loose] {
        let matches_at = |pos: usize| want.iter().enumerate().all(|(k, w)| eq(lines[pos + k], w));
        if eof {
            if matches_at(last) {
                return Some(last);
            }
            continue;
        }
        let mut best: Option<usize> = None;
        for pos in from..=last {
            if matches_at(pos) {
                match hint {
                    None => return Some(pos),
                    Some(h) => {
                        if best.is_none_or(|b| pos.abs_diff(h) < b.abs_diff(h)) {
                            best = Some(pos);
                        }
                        if pos >= h {
                            break;
                        }
                    }
                }
            }
        }
        if best.is_some() {
            return best;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply_one(old: &str, patch: &str) -> Result<String, String> {
        let files = parse(patch)?;
        apply(old, &files[0].hunks)
    }

    #[test]
    fn unified_update_keeps_crlf_and_no_newline() {
        let patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+B\n+c\n\\ No newline at end of file\n";
        assert_eq!(apply_one("a\r\nb", patch).unwrap(), "a\r\nB\r\nc");
        assert_eq!(apply_one("a\nb", patch).unwrap(), "a\nB\nc");
    }

    #[test]
    fn envelope_with_anchor_and_trailing_space_fuzz() {
        let patch =
            "*** Begin Patch\n*** Update File: f\n@@ fn two\n-    x  \n+    y\n*** End Patch\n";
        let old = "fn one\n    x\nfn two\n    x\n";
        assert_eq!(apply_one(old, patch).unwrap(), "fn one\n    x\nfn two\n    y\n");
    }

    #[test]
    fn envelope_appends_after_last_line_without_newline() {
        let patch = "*** Begin Patch\n*** Update File: f\n@@\n b\n+c\n*** End Patch";
        assert_eq!(apply_one("a\nb", patch).unwrap(), "a\nb\nc\n");
    }

    #[test]
    fn headers_and_renames() {
        let patch = "diff --git a/old.rs b/new.rs\nsimilarity index 90%\nrename from old.rs\nrename to new.rs\n";
        assert_eq!(
            parse(patch).unwrap()[0].op,
            FileOp::Update { path: "old.rs".into(), move_to: Some("new.rs".into()) }
        );
        let quoted = "diff --git \"a/sp ace\" \"b/sp ace\"\nnew file mode 100644\n";
        assert_eq!(parse(quoted).unwrap()[0].op, FileOp::Add { path: "sp ace".into() });
        assert!(parse("*** Begin Patch\n*** Frobnicate: x\n*** End Patch").is_err());
    }

    #[test]
    fn an_empty_path_is_refused_in_every_spelling() {
        for patch in [
            "--- a/f\n+++ \n@@ -1 +1 @@\n-x\n+y\n",
            "--- a/f\n+++ b/\n@@ -1 +1 @@\n-x\n+y\n",
            "diff --git a/f b/\nrename from f\nrename to \n",
            "*** Begin Patch\n*** Update File: f\n*** Move to:  \n@@\n-x\n+y\n*** End Patch",
        ] {
            let err = parse(patch).unwrap_err();
            assert!(err.contains("empty path"), "{patch:?}: {err}");
        }
    }
}
