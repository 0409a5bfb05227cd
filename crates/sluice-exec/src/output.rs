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
        let mut i = 0;
        while i < input.len() {
            if self.state == Esc::Ground {
                // Printable bytes, newlines and tabs pass as they are: copied as one run.
                let run = plain_run(&input[i..]);
                if run > 0 {
                    out.extend_from_slice(&input[i..i + run]);
                    self.seq_len = 0;
                    i += run;
                    continue;
                }
            }
            self.step(input[i], out);
            i += 1;
        }
    }

    /// One byte through the state machine.
    fn step(&mut self, b: u8, out: &mut Vec<u8>) {
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

/// How many bytes at the start of `bytes` the ground state passes on as they are: all but the
/// C0 controls other than newline and tab, and DEL. Whole blocks are checked without stopping
/// at the first such byte (a loop the compiler vectorizes), then the block that has one byte by
/// byte.
fn plain_run(bytes: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let stops = |b: u8| (b < 0x20) & (b != b'\n') & (b != b'\t') | (b == 0x7f);
    let mut i = 0;
    for block in bytes.chunks_exact(BLOCK) {
        if block.iter().fold(false, |any, &b| any | stops(b)) {
            break;
        }
        i += BLOCK;
    }
    i + bytes[i..].iter().position(|&b| stops(b)).unwrap_or(bytes.len() - i)
}

/// Decodes UTF-8 across chunk boundaries; invalid bytes become U+FFFD. C1 control characters
/// (U+0080–U+009F, which some terminals treat as escape introducers) are dropped.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    /// The beginning of a character the last chunk ended inside.
    pending: Vec<u8>,
}

impl Utf8Stream {
    pub fn push(&mut self, bytes: &[u8]) -> String {
        let mut out = String::new();
        self.push_into(bytes, &mut out);
        out
    }

    /// [`Utf8Stream::push`], appending to `out`.
    pub fn push_into(&mut self, bytes: &[u8], out: &mut String) {
        if self.pending.is_empty() {
            let tail = decode(bytes, out);
            self.pending.extend_from_slice(tail);
        } else {
            // The character split by the last chunk: decode it with this one.
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(bytes);
            let tail = decode(&joined, out);
            self.pending = tail.to_vec();
        }
    }

    pub fn finish(&mut self) -> String {
        let had = !self.pending.is_empty();
        self.pending.clear();
        if had { "\u{FFFD}".to_owned() } else { String::new() }
    }
}

/// Appends `bytes` decoded to `out` (each invalid sequence a U+FFFD, C1 controls dropped) and
/// returns the incomplete character they end with, if any, undecoded.
fn decode<'a>(bytes: &'a [u8], out: &mut String) -> &'a [u8] {
    // Valid text, perhaps cut inside its last character: one validation.
    let split = cut_short_at(bytes);
    if let Ok(text) = std::str::from_utf8(&bytes[..split]) {
        push_visible(out, text);
        return &bytes[split..];
    }
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                push_visible(out, s);
                return &[];
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                push_visible(out, std::str::from_utf8(good).unwrap_or_default());
                match e.error_len() {
                    Some(n) => {
                        out.push('\u{FFFD}');
                        rest = &bad[n.min(bad.len())..];
                    }
                    // An incomplete character at the end: wait for the next chunk.
                    None => return bad,
                }
            }
        }
    }
}

/// Where the character `bytes` ends inside begins (the beginning of a longer one, cut short),
/// or `bytes.len()`.
fn cut_short_at(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let at = bytes.len() - back;
        // The last byte that is not a continuation byte begins the last character.
        if bytes[at] & 0xc0 != 0x80 {
            return match std::str::from_utf8(&bytes[at..]) {
                Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => at,
                _ => bytes.len(),
            };
        }
    }
    bytes.len()
}

/// Appends `s` without its C1 control characters (U+0080–U+009F, encoded `C2 80`–`C2 9F`).
fn push_visible(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut from = 0;
    for at in memchr::memchr_iter(0xc2, bytes) {
        // In valid UTF-8, 0xC2 begins a two-byte character.
        if (0x80..=0x9f).contains(&bytes[at + 1]) {
            out.push_str(&s[from..at]);
            from = at + 2;
        }
    }
    out.push_str(&s[from..]);
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
    add(Path::new(crate::places::JOB_VIEW), "<job-private>");
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

/// Bytes → stripped → decoded → redacted text, for one stream. Its buffers are kept from one
/// chunk to the next.
#[derive(Debug)]
pub struct OutputPipeline {
    strip: AnsiStripper,
    utf8: Utf8Stream,
    redactor: StreamRedactor,
    /// A chunk stripped.
    scratch: Vec<u8>,
    /// A chunk stripped and decoded.
    text: String,
}

impl OutputPipeline {
    pub fn new(redactor: StreamRedactor) -> OutputPipeline {
        OutputPipeline {
            strip: AnsiStripper::default(),
            utf8: Utf8Stream::default(),
            redactor,
            scratch: Vec::new(),
            text: String::new(),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) -> String {
        let mut out = String::new();
        self.push_into(bytes, &mut out);
        out
    }

    /// [`OutputPipeline::push`], appending to `out`.
    pub fn push_into(&mut self, bytes: &[u8], out: &mut String) {
        self.scratch.clear();
        self.strip.push(bytes, &mut self.scratch);
        self.text.clear();
        self.utf8.push_into(&self.scratch, &mut self.text);
        self.redactor.push_into(&self.text, out);
    }

    /// Whether text is held back, for [`OutputPipeline::flush_idle_into`].
    pub fn holding(&self) -> bool {
        self.redactor.holding()
    }

    /// The program has paused: appends the held-back text that can be shown now (a prompt
    /// waiting for its answer) to `out` (see [`StreamRedactor::flush_idle_into`]).
    pub fn flush_idle_into(&mut self, out: &mut String) {
        self.redactor.flush_idle_into(out);
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
        let bytes = text.as_bytes();
        self.total += bytes.len() as u64;
        // Only the newest `cap` bytes of what was held and what comes stay.
        let keep = &bytes[bytes.len().saturating_sub(self.cap)..];
        let excess = (self.buf.len() + keep.len()).saturating_sub(self.cap);
        self.buf.drain(..excess);
        self.buf.extend(keep);
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

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
