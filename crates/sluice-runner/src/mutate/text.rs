//! Text handling for `edit_file` and `apply_patch`: decode a file by its byte-order mark, edit
//! the text, and encode it back the same way, keeping the file's line-ending style.
//!
//! Policies (also in the tool descriptions):
//! - Encodings: UTF-8, UTF-8 with BOM, UTF-16 LE/BE with BOM round-trip unchanged. A file with
//!   NUL bytes (binary) or invalid sequences is refused rather than "repaired": a lossy decode
//!   would silently rewrite bytes the model never saw. `write_file` can still replace it.
//! - Line endings: a file whose every line ends in CRLF is a CRLF file; the model's `\n` in
//!   `old_text`/`new_text` (and its patch lines) then mean CRLF, both for matching and writing,
//!   so edits never produce mixed endings. LF and mixed files are matched and written exactly
//!   as given.

use crate::RunnerError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Utf8,
    Utf8Bom,
    Utf16Le,
    Utf16Be,
}

/// Decodes a file's bytes strictly; the error is a reason for the message.
pub(crate) fn decode(raw: &[u8], path: &str) -> Result<(String, Encoding), RunnerError> {
    let bad = |why: &str| {
        RunnerError::invalid(format!(
            "`{path}` {why}; edit_file and apply_patch only change text files without decoding \
             errors, use write_file to replace it entirely"
        ))
    };
    let utf16 = |bytes: &[u8], word: fn([u8; 2]) -> u16| {
        if !bytes.len().is_multiple_of(2) {
            return Err(bad("is not valid UTF-16 (odd length)"));
        }
        let units = bytes.chunks_exact(2).map(|c| word([c[0], c[1]]));
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map_err(|_| bad("is not valid UTF-16"))
    };
    if let Some(rest) = raw.strip_prefix(&[0xFF, 0xFE]) {
        return Ok((utf16(rest, u16::from_le_bytes)?, Encoding::Utf16Le));
    }
    if let Some(rest) = raw.strip_prefix(&[0xFE, 0xFF]) {
        return Ok((utf16(rest, u16::from_be_bytes)?, Encoding::Utf16Be));
    }
    let (body, enc) = match raw.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        Some(rest) => (rest, Encoding::Utf8Bom),
        None => (raw, Encoding::Utf8),
    };
    if body.contains(&0) {
        return Err(bad("looks binary (it contains NUL bytes)"));
    }
    let text = std::str::from_utf8(body).map_err(|_| bad("is not valid UTF-8"))?;
    Ok((text.to_owned(), enc))
}

pub(crate) fn encode(text: &str, enc: Encoding) -> Vec<u8> {
    match enc {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf8Bom => [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat(),
        Encoding::Utf16Le => {
            let mut out = vec![0xFF, 0xFE];
            text.encode_utf16().for_each(|u| out.extend_from_slice(&u.to_le_bytes()));
            out
        }
        Encoding::Utf16Be => {
            let mut out = vec![0xFE, 0xFF];
            text.encode_utf16().for_each(|u| out.extend_from_slice(&u.to_be_bytes()));
            out
        }
    }
}

/// True when the text has line breaks and every one of them is CRLF.
pub(crate) fn is_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf == text.matches('\n').count()
}

/// `s` with every line break as CRLF (existing CRLFs are kept, not doubled).
pub(crate) fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// At most 60 characters of `s`, with invisible characters made visible, for messages.
pub(crate) fn snippet(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if s.chars().count() > 60 {
        out.push('…');
    }
    sluice_core::text::visible_owned(&out)
}

/// Applies `edit_file`'s edits in order to `text`. Errors name the edit (1-based).
pub(crate) fn apply_edits(
    path: &str,
    text: &str,
    edits: &[super::args::TextEdit],
) -> Result<String, RunnerError> {
    let crlf = is_crlf(text);
    let mut cur = text.to_owned();
    for (idx, edit) in edits.iter().enumerate() {
        let n = idx + 1;
        if edit.old_text.is_empty() {
            return Err(RunnerError::invalid(format!(
                "edit {n}: old_text is empty; give the exact text to replace"
            )));
        }
        let (old, new) = if crlf {
            (to_crlf(&edit.old_text), to_crlf(&edit.new_text))
        } else {
            (edit.old_text.clone(), edit.new_text.clone())
        };
        let positions: Vec<usize> = cur.match_indices(old.as_str()).map(|(i, _)| i).collect();
        match positions.len() {
            0 => {
                return Err(RunnerError::invalid(format!(
                    "edit {n}: old_text \"{}\" was not found in `{path}`{}; read_file to see \
                     the current text (whitespace and indentation must match exactly)",
                    snippet(&edit.old_text),
                    if idx > 0 { " (after applying the earlier edits)" } else { "" }
                )));
            }
            1 => {}
            count if !edit.replace_all => {
                let lines: Vec<String> = positions
                    .iter()
                    .take(10)
                    .map(|&p| (cur[..p].matches('\n').count() + 1).to_string())
                    .collect();
                return Err(RunnerError::invalid(format!(
                    "edit {n}: old_text \"{}\" occurs {count} times in `{path}` (lines {}{}); \
                     add surrounding lines to make it unique, or set replace_all",
                    snippet(&edit.old_text),
                    lines.join(", "),
                    if count > 10 { ", …" } else { "" }
                )));
            }
            _ => {}
        }
        cur = cur.replace(old.as_str(), &new);
    }
    Ok(cur)
}
