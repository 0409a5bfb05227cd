//! `apply_patch`'s two formats (unified diffs and the `*** Begin Patch` envelope), parsed and
//! applied to a file's text in memory.
//!
//! Input: the patch, then optionally a NUL byte and the current content of the file(s) it
//! changes. Properties: parsing and applying never panic; a parsed patch names a non-empty path
//! for every file; and whenever a file's hunks apply,
//! - the same hunks with every change undone (removed lines kept as context, added lines
//!   dropped) apply too and give back the old text byte for byte: untouched lines, line
//!   endings and the final newline are never altered;
//! - the new text has exactly as many lines as the old one, minus the removed lines, plus the
//!   added ones (an added empty last line without a newline being no line).

use sluice_runner::patch::{FileOp, Hunk, Line, apply, new_file_content, parse};

pub fn patch(data: &[u8]) {
    let (patch, old) = match data.iter().position(|&b| b == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (data, &b""[..]),
    };
    let (Ok(patch), Ok(old)) = (std::str::from_utf8(patch), std::str::from_utf8(old)) else {
        return;
    };
    let Ok(files) = parse(patch) else { return };
    for file in &files {
        assert!(!file.op.path().is_empty(), "a file without a path: {:?}", file.op);
        if let FileOp::Update { move_to: Some(to), .. } = &file.op {
            assert!(!to.is_empty(), "a move without a destination");
        }
        match &file.op {
            FileOp::Add { .. } => {
                if let Ok(content) = new_file_content(&file.hunks) {
                    let added = count(&file.hunks, |l| matches!(l, Line::Add(_)));
                    let n = lines(&content);
                    assert!(
                        n == added || n + slack(&file.hunks) == added,
                        "a new file of {added} lines has {n}"
                    );
                }
            }
            FileOp::Update { .. } | FileOp::Delete { .. } => check_apply(old, &file.hunks),
        }
    }
}

fn check_apply(old: &str, hunks: &[Hunk]) {
    let Ok(new) = apply(old, hunks) else { return };
    let undone: Vec<Hunk> = hunks
        .iter()
        .map(|h| Hunk {
            lines: h
                .lines
                .iter()
                .filter_map(|l| match l {
                    Line::Context(t) | Line::Remove(t) => Some(Line::Context(t.clone())),
                    Line::Add(_) => None,
                })
                .collect(),
            no_newline_new: false,
            ..h.clone()
        })
        .collect();
    assert_eq!(
        apply(old, &undone).as_deref(),
        Ok(old),
        "the hunks with their changes undone do not give back the old text"
    );
    let removed = count(hunks, |l| matches!(l, Line::Remove(_)));
    let added = count(hunks, |l| matches!(l, Line::Add(_)));
    let (after, before) = (lines(&new) + removed, lines(old) + added);
    assert!(
        after == before || after + slack(hunks) == before,
        "{removed} lines removed and {added} added, yet {old:?} became {new:?}"
    );
}

fn count(hunks: &[Hunk], which: impl Fn(&Line) -> bool) -> usize {
    hunks.iter().flat_map(|h| &h.lines).filter(|l| which(l)).count()
}

/// An empty last line without a newline is no line at all: the one line `\ No newline at end
/// of file` may make vanish.
fn slack(hunks: &[Hunk]) -> usize {
    usize::from(hunks.iter().any(|h| h.no_newline_new))
}

/// Lines as a reader counts them: a final line without a newline counts.
fn lines(text: &str) -> usize {
    text.split_inclusive('\n').count()
}
