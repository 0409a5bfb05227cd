//! What a process prints, on its way to an assistant: terminal escape sequences stripped (CSI,
//! OSC, DCS and friends, other control characters), bytes decoded as UTF-8 across chunk
//! boundaries, secrets and physical paths redacted by `sluice_core`'s streaming redactor, and
//! the result kept in a bounded ring buffer read through cursors, with the dropped bytes
//! counted.

use std::collections::VecDeque;
use std::path::Path;

use serde::Serialize;
use sluice_core::redact::StreamRedactor;

/// Longest escape string (OSC title, DCS payload) followed before giving up on it: an
/// unterminated sequence must not swallow the rest of the output.
const MAX_ESCAPE_LEN: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Esc {
    #[default]
    Ground,
    Escape,
    Intermediate,
    Csi,
    Str,
    StrEscape,
}

/// Removes ANSI/VT escape sequences and control characters except newline and tab, over a
/// stream of byte chunks (a sequence may be split between chunks).
#[derive(Debug, Default)]
pub struct AnsiStripper {
    state: Esc,
    seq_len: usize,
}

impl AnsiStripper {
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &b in input {
            self.seq_len += 1;
            self.state = match self.state {
                Esc::Ground => {
                    self.seq_len = 0;
                    match b {
                        0x1b => Esc::Escape,
                        b'\n' | b'\t' => {
                            out.push(b);
                            Esc::Ground
                        }
                        0..=0x1f | 0x7f => Esc::Ground,
                        _ => {
                            out.push(b);
                            Esc::Ground
                        }
                    }
                }
                Esc::Escape => match b {
                    b'[' => Esc::Csi,
                    b']' | b'P' | b'X' | b'^' | b'_' => Esc::Str,
                    0x20..=0x2f => Esc::Intermediate,
                    _ => Esc::Ground,
                },
                Esc::Intermediate => match b {
                    0x20..=0x2f if self.seq_len < MAX_ESCAPE_LEN => Esc::Intermediate,
                    _ => Esc::Ground,
                },
                Esc::Csi => match b {
                    0x20..=0x3f if self.seq_len < MAX_ESCAPE_LEN => Esc::Csi,
                    _ => Esc::Ground,
                },
                Esc::Str => match b {
                    0x07 => Esc::Ground,
                    0x1b => Esc::StrEscape,
                    _ if self.seq_len >= MAX_ESCAPE_LEN => Esc::Ground,
                    _ => Esc::Str,
                },
                Esc::StrEscape => Esc::Ground,
            };
        }
    }
}

/// Decodes UTF-8 across chunk boundaries; invalid bytes become U+FFFD. C1 control characters
/// (U+0080–U+009F, which some terminals treat as escape introducers) are dropped.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::with_capacity(self.pending.len());
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    push_visible(&mut out, s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    push_visible(&mut out, std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{FFFD}');
                            rest = &bad[n.min(bad.len())..];
                        }
                        // An incomplete character at the end: wait for the next chunk.
                        None => {
                            rest = bad;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        out
    }

    pub fn finish(&mut self) -> String {
        let had = !self.pending.is_empty();
        self.pending.clear();
        if had { "\u{FFFD}".to_owned() } else { String::new() }
    }
}

fn push_visible(out: &mut String, s: &str) {
    out.extend(s.chars().filter(|c| !('\u{80}'..='\u{9f}').contains(c)));
}

/// Builds the redactor for one job's output: secrets in every known format, the engine's own
/// secrets given as `literals` (also hex-, base64- and UTF-16-encoded), the project root rewritten to `.` and the job's private folder
/// and Sluice's data folder to placeholders (physical paths never leave the machine).
pub fn redactor_for(
    project_root: &Path,
    state_dir: &Path,
    data_dir: Option<&Path>,
    literals: &[String],
) -> StreamRedactor {
    let mut r = StreamRedactor::default();
    let mut add = |path: &Path, placeholder: &str| {
        let forms = [Some(path.to_path_buf()), std::fs::canonicalize(path).ok()];
        for form in forms.into_iter().flatten() {
            if let Some(s) = form.to_str()
                && s.len() > 1
            {
                r = std::mem::take(&mut r).with_literal(s, placeholder);
            }
        }
    };
    add(project_root, ".");
    add(state_dir, "<job-private>");
    #[cfg(target_os = "linux")]
    add(Path::new(crate::jail::JOB_VIEW), "<job-private>");
    if let Some(data) = data_dir {
        add(data, "<sluice-data>");
    }
    // The engine user's home (e.g. where RUSTUP_HOME points) names the user: shorten it.
    if let Some(home) = std::env::var_os("HOME") {
        add(Path::new(&home), "~");
    }
    for secret in literals {
        r = r.with_secret(secret, "[redacted:secret]");
    }
    r
}

/// Bytes → stripped → decoded → redacted text, for one stream.
#[derive(Debug)]
pub struct OutputPipeline {
    strip: AnsiStripper,
    utf8: Utf8Stream,
    redactor: StreamRedactor,
    scratch: Vec<u8>,
}

impl OutputPipeline {
    pub fn new(redactor: StreamRedactor) -> OutputPipeline {
        OutputPipeline {
            strip: AnsiStripper::default(),
            utf8: Utf8Stream::default(),
            redactor,
            scratch: Vec::new(),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.scratch.clear();
        self.strip.push(bytes, &mut self.scratch);
        let text = self.utf8.push(&self.scratch);
        self.redactor.push(&text)
    }

    pub fn finish(&mut self) -> String {
        let tail = self.utf8.finish();
        let mut out = self.redactor.push(&tail);
        out.push_str(&self.redactor.finish());
        out
    }
}

/// One page of a log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogPage {
    pub text: String,
    /// Where this page starts (≥ the requested cursor when older bytes were dropped).
    pub cursor: u64,
    /// Pass this as the next cursor.
    pub next_cursor: u64,
    /// Bytes between the requested cursor and `cursor` that the ring no longer holds.
    pub dropped_bytes: u64,
    /// Everything written so far has been read (the stream may still grow while running).
    pub at_end: bool,
}

/// A bounded log: keeps the newest `cap` bytes; positions are absolute byte offsets since the
/// start of the stream, so a cursor stays meaningful after older bytes are dropped.
#[derive(Debug)]
pub struct LogRing {
    buf: VecDeque<u8>,
    cap: usize,
    total: u64,
}

impl LogRing {
    pub fn new(cap: usize) -> LogRing {
        LogRing { buf: VecDeque::new(), cap: cap.max(1), total: 0 }
    }

    pub fn push(&mut self, text: &str) {
        self.buf.extend(text.as_bytes());
        self.total += text.len() as u64;
        let excess = self.buf.len().saturating_sub(self.cap);
        self.buf.drain(..excess);
    }

    /// Total bytes ever written.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes written but no longer held.
    pub fn dropped(&self) -> u64 {
        self.total - self.buf.len() as u64
    }

    /// Up to `max_bytes` from `cursor`, cut on character boundaries.
    pub fn read(&self, cursor: u64, max_bytes: usize) -> LogPage {
        let start = self.dropped();
        let from = cursor.clamp(start, self.total);
        let mut lo = (from - start) as usize;
        // Never start or end inside a UTF-8 character (a drop may have cut one).
        while lo < self.buf.len() && (self.buf[lo] & 0xc0) == 0x80 {
            lo += 1;
        }
        let mut hi = lo.saturating_add(max_bytes).min(self.buf.len());
        if hi < self.buf.len() {
            while hi > lo && (self.buf[hi] & 0xc0) == 0x80 {
                hi -= 1;
            }
        }
        let bytes: Vec<u8> = self.buf.range(lo..hi).copied().collect();
        LogPage {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            cursor: start + lo as u64,
            next_cursor: start + hi as u64,
            dropped_bytes: (start + lo as u64).saturating_sub(cursor.min(self.total)),
            at_end: hi == self.buf.len(),
        }
    }

    /// Everything held, as text.
    pub fn contents(&self) -> String {
        self.read(0, usize::MAX).text
    }
}
