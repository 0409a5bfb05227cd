//! A language server's edits to one file, applied to its text in memory and shown as a unified
//! diff that `apply_patch` takes: the server never writes, the assistant applies the preview,
//! and the change gets its approval, backup and undo like any other.
//!
//! The diff is built here because it needs no general algorithm: a rename keeps the file's
//! lines, so the changed lines are those that differ, each hunk with up to [`CONTEXT`] lines
//! around it; when an edit adds or removes lines, one hunk spans from the first line that
//! differs to the last.

use super::session::Encoding;

const CONTEXT: usize = 2;

/// One edit: a range in server columns (0-based lines) and its new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: (u32, u32),
    pub end: (u32, u32),
    pub text: String,
}

/// `text` with `edits` applied, or why they cannot be (overlapping, out of the file).
pub fn apply(text: &str, edits: &[Edit], encoding: Encoding) -> Result<String, String> {
    let starts: Vec<usize> =
        std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let offset = |(line, column): (u32, u32)| -> Result<usize, String> {
        let start = *starts.get(line as usize).ok_or("an edit past the file's end")?;
        let end = starts.get(line as usize + 1).map_or(text.len(), |e| e - 1);
        let line_text = text[start..end].trim_end_matches('\r');
        Ok(start + encoding.byte(line_text, column))
    };
    let mut spans = edits
        .iter()
        .map(|e| Ok((offset(e.start)?, offset(e.end)?, e.text.as_str())))
        .collect::<Result<Vec<_>, String>>()?;
    spans.sort_by_key(|s| (s.0, s.1));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new) in spans {
        if start < at || end < start {
            return Err("the server's edits overlap".into());
        }
        out.push_str(&text[at..start]);
        out.push_str(new);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The unified diff (`--- a/path`, `+++ b/path`, hunks) from `old` to `new`; empty when equal.
pub fn diff(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let (a, b) = (lines(old), lines(new));
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    if a.len() == b.len() {
        let differing: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        for (s, e) in group(&differing) {
            let (from, to) = (s.saturating_sub(CONTEXT), (e + CONTEXT).min(a.len()));
            out.push_str(&format!("@@ -{0},{1} +{0},{1} @@\n", from + 1, to - from));
            let mut i = from;
            while i < to {
                let run = (i..to).take_while(|&j| a[j] != b[j]).count();
                if run == 0 {
                    push(&mut out, ' ', a[i]);
                    i += 1;
                    continue;
                }
                a[i..i + run].iter().for_each(|l| push(&mut out, '-', l));
                b[i..i + run].iter().for_each(|l| push(&mut out, '+', l));
                i += run;
            }
        }
        return out;
    }
    let first = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let last = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let last = last.min(a.len() - first).min(b.len() - first);
    let (from, a_end, b_end) = (first.saturating_sub(CONTEXT), a.len() - last, b.len() - last);
    let (a_to, b_to) = ((a_end + CONTEXT).min(a.len()), (b_end + CONTEXT).min(b.len()));
    let (old_n, new_n) = (a_to - from, b_to - from);
    out.push_str(&format!(
        "@@ -{},{old_n} +{},{new_n} @@\n",
        start_no(from, old_n),
        start_no(from, new_n)
    ));
    a[from..first].iter().for_each(|l| push(&mut out, ' ', l));
    a[first..a_end].iter().for_each(|l| push(&mut out, '-', l));
    b[first..b_end].iter().for_each(|l| push(&mut out, '+', l));
    a[a_end..a_to].iter().for_each(|l| push(&mut out, ' ', l));
    out
}

/// A hunk's first line number as unified diffs write it (the line before, for an empty side).
fn start_no(from: usize, n: usize) -> usize {
    if n == 0 { from } else { from + 1 }
}

/// Lines with their endings (`\n`, `\r\n`, or none at the end of the file).
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

fn push(out: &mut String, sign: char, line: &str) {
    out.push(sign);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

/// Runs of changed lines, merged when their contexts would touch: `(first, past the last)`.
fn group(differing: &[usize]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &i in differing {
        match runs.last_mut() {
            Some(run) if i <= run.1 + 2 * CONTEXT => run.1 = i + 1,
            _ => runs.push((i, i + 1)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(line: u32, from: u32, to: u32, text: &str) -> Edit {
        Edit { start: (line, from), end: (line, to), text: text.into() }
    }

    #[test]
    fn edits_apply_in_place_and_overlaps_are_refused() {
        let text = "def old():\n    return old\r\nold()";
        let edits = [edit(0, 4, 7, "new"), edit(1, 11, 14, "new"), edit(2, 0, 3, "new")];
        let out = apply(text, &edits, Encoding::Utf16).expect("apply");
        assert_eq!(out, "def new():\n    return new\r\nnew()");
        assert!(apply(text, &[edit(0, 4, 7, "a"), edit(0, 5, 6, "b")], Encoding::Utf8).is_err());
        assert!(apply(text, &[edit(9, 0, 1, "a")], Encoding::Utf8).is_err());
    }

    #[test]
    fn the_diff_has_a_hunk_per_changed_run_and_marks_a_missing_final_newline() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect::<String>() + "end";
        let new = old
            .replace("line 3\n", "LINE 3\n")
            .replace("line 15\n", "LINE 15\n")
            .replace("end", "END");
        let d = diff("src/a.py", &old, &new);
        assert!(d.starts_with("--- a/src/a.py\n+++ b/src/a.py\n@@ -1,5 +1,5 @@\n line 1\n"), "{d}");
        assert!(d.contains("@@ -13,5 +13,5 @@\n line 13\n line 14\n-line 15\n+LINE 15\n"), "{d}");
        assert!(
            d.ends_with("-end\n\\ No newline at end of file\n+END\n\\ No newline at end of file\n"),
            "{d}"
        );
        assert_eq!(diff("a", "same\n", "same\n"), "");
    }

    #[test]
    fn an_edit_that_adds_lines_is_one_hunk() {
        let d = diff("a", "a\nb\nc\n", "a\nb1\nb2\nc\n");
        assert_eq!(d, "--- a/a\n+++ b/a\n@@ -1,3 +1,4 @@\n a\n-b\n+b1\n+b2\n c\n");
    }
}
