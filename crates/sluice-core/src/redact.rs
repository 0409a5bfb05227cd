//! Redaction of known secret formats in text that leaves Sluice (log lines, error messages,
//! command output). Replaces each match with `[redacted:<kind>]`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// One secret format: a name for the placeholder and the pattern that finds it.
struct Rule {
    kind: &'static str,
    /// The beginning of `re`: every match of `re` starts with a match of it (see [`ANCHORS`]).
    anchor: &'static str,
    re: Regex,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    // A rule is its anchor followed by the rest of its pattern, so the anchor can never drift
    // from the pattern it stands for. An anchor is one group (no top-level `|`).
    let rule = |kind, anchor: &'static str, rest: &str| Rule {
        kind,
        anchor,
        re: Regex::new(&format!("{anchor}{rest}")).expect("redaction pattern"),
    };
    vec![
        rule("sluice-token", "slc_", "[0-9a-z]{20,}"),
        // The same token hex-encoded (each body byte is a digit or a lowercase letter),
        // base64-encoded at any of the three alignments (the characters that depend only on
        // `slc_`, then the rest), and as UTF-16 text.
        rule("sluice-token", "(?i)736c635f", "(?:3[0-9]|6[1-9a-f]|7[0-9a]){20,}"),
        rule("sluice-token", "(?:c2xjX|NsY1|zbGNf)", "[A-Za-z0-9+/_-]{26,}={0,2}"),
        rule("sluice-token", r"s\x00l\x00c\x00_", r"\x00(?:[0-9a-z]\x00){20,}"),
        rule("sluice-token", r"\x00s\x00l\x00c\x00_", r"(?:\x00[0-9a-z]){20,}"),
        rule(
            "private-key",
            "-----BEGIN ",
            r"[A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)",
        ),
        rule("aws-access-key", r"\b(AKIA|ASIA)", r"[0-9A-Z]{16}\b"),
        // Two rules for GitHub's two formats, so each has its own anchor. Both match whole
        // words only, so they never overlap and the order of the passes cannot matter.
        rule("github-token", r"\bgh[pousr]_", r"[A-Za-z0-9]{36,}\b"),
        rule("github-token", r"\bgithub_pat_", r"[A-Za-z0-9_]{40,}\b"),
        rule("slack-token", r"\bxox[abposr]-", "[A-Za-z0-9-]{10,}"),
        rule("openai-key", r"\bsk-", "(proj-|ant-)?[A-Za-z0-9_-]{20,}"),
        rule("jwt", r"\beyJ", r"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        rule("bearer", r"(?i)\bbearer", r"\s+[A-Za-z0-9._~+/=-]{16,}"),
    ]
});

/// Any rule's anchor. Text it does not match holds nothing any rule matches, and that is known
/// after one scan instead of one per rule (most text that leaves Sluice holds no secret).
static ANCHORS: LazyLock<Regex> = LazyLock::new(|| {
    let any: Vec<String> = RULES.iter().map(|r| format!("(?:{})", r.anchor)).collect();
    Regex::new(&any.join("|")).expect("redaction anchors")
});

/// Replaces every known secret format in `text`. Borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    if !ANCHORS.is_match(text) {
        return Cow::Borrowed(text);
    }
    redact_each(text)
}

/// [`redact`] for bytes that are not text (a range of a binary file): every known secret format
/// found in the bytes' ASCII is overwritten in place with `*`, so the length and every offset
/// stay what they were. Bytes outside ASCII count as a character no rule matches. True when
/// something was masked.
pub fn mask_bytes(bytes: &mut [u8]) -> bool {
    // Every byte becomes one ASCII character, so a match's byte range in `view` is its byte
    // range in `bytes`.
    let view: String =
        bytes.iter().map(|&b| if b.is_ascii() { char::from(b) } else { '\x7f' }).collect();
    if !ANCHORS.is_match(&view) {
        return false;
    }
    let mut masked = false;
    for rule in RULES.iter() {
        for m in rule.re.find_iter(&view) {
            bytes[m.range()].fill(b'*');
            masked = true;
        }
    }
    masked
}

/// [`redact`] without the anchor scan: each rule in turn.
fn redact_each(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for rule in RULES.iter() {
        if rule.re.is_match(&out) {
            let replaced = rule.re.replace_all(&out, format!("[redacted:{}]", rule.kind).as_str());
            out = Cow::Owned(replaced.into_owned());
        }
    }
    out
}

/// How many bytes the streaming redactor holds back between chunks: a secret shorter than this
/// that arrives split across chunk boundaries is still caught whole.
pub const STREAM_WINDOW: usize = 4096;

/// Beyond this much held-back text (a giant unterminated match), the streaming redactor emits
/// anyway: memory stays bounded and the emitted prefix is still redacted as a partial match.
const STREAM_MAX_CARRY: usize = 16 * STREAM_WINDOW;

static PEM_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-----BEGIN [A-Z ]*PRIVATE KEY-----").expect("pem begin"));
static BEARER_TAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\bbearer\s+$").expect("bearer tail"));
static PEM_END: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-----END [A-Z ]*PRIVATE KEY-----").expect("pem end"));

/// [`redact`] over a stream of text chunks (process output), plus exact literal replacements
/// (physical paths, the engine's own secrets). Text is held back by [`STREAM_WINDOW`] bytes so a
/// secret split across two chunks is seen whole; a private key block whose end has not arrived
/// yet is swallowed until its end marker.
#[derive(Debug, Default)]
pub struct StreamRedactor {
    carry: String,
    /// Longest needle first, so a longer path wins over its parent.
    literals: Vec<Literal>,
    in_private_key: bool,
}

impl StreamRedactor {
    /// Replaces every occurrence of `needle` with `replacement`, unless the occurrence continues
    /// as a longer name (`/a/proj` inside `/a/project2` is left alone). Empty needles are ignored.
    pub fn with_literal(self, needle: &str, replacement: &str) -> StreamRedactor {
        self.add(needle, replacement, true)
    }

    /// Replaces `secret` wherever it appears, and in its common encodings too: hex (either
    /// case), base64 (standard and URL-safe, at any alignment inside a longer encoded text) and
    /// UTF-16 (either byte order). Secrets shorter than 8 bytes are ignored: their encodings
    /// would match ordinary text.
    pub fn with_secret(mut self, secret: &str, replacement: &str) -> StreamRedactor {
        if secret.len() < 8 {
            return self;
        }
        for form in encoded_forms(secret.as_bytes()) {
            self = self.add(&form, replacement, false);
        }
        self.add(secret, replacement, false)
    }

    fn add(mut self, needle: &str, replacement: &str, whole: bool) -> StreamRedactor {
        if !needle.is_empty() && needle.len() < STREAM_WINDOW {
            self.literals.push(Literal {
                needle: needle.to_owned(),
                replacement: replacement.to_owned(),
                whole,
            });
            self.literals.sort_by_key(|l| std::cmp::Reverse(l.needle.len()));
        }
        self
    }

    /// Feeds one chunk; returns the text that is now safe to show (possibly empty).
    pub fn push(&mut self, chunk: &str) -> String {
        self.carry.push_str(chunk);
        let mut out = String::new();
        loop {
            if self.in_private_key {
                if let Some(end) = PEM_END.find(&self.carry) {
                    self.carry.drain(..end.end());
                    self.in_private_key = false;
                    continue;
                }
                // Keep only a tail long enough to hold an end marker split across chunks.
                let keep_from = floor_boundary(&self.carry, self.carry.len().saturating_sub(64));
                self.carry.drain(..keep_from);
                return out;
            }
            if let Some(begin) = PEM_BEGIN.find(&self.carry)
                && !PEM_END.is_match(&self.carry[begin.end()..])
            {
                out.push_str(&self.apply(&self.carry[..begin.start()]));
                out.push_str("[redacted:private-key]");
                self.carry.drain(..begin.end());
                self.in_private_key = true;
                continue;
            }
            break;
        }
        let mut cut = self.safe_prefix_len();
        // A match that starts before the cut and ends after it must stay whole: move the cut to
        // its start, and repeat because the earlier cut may now split another match.
        let spans = self.spans();
        loop {
            let moved = spans.iter().find(|&&(s, e)| s < cut && e > cut).map(|&(s, _)| s);
            match moved {
                Some(s) => cut = s,
                None => break,
            }
        }
        if cut == 0 && self.carry.len() > STREAM_MAX_CARRY {
            cut = floor_boundary(&self.carry, self.carry.len() - STREAM_WINDOW);
        }
        out.push_str(&self.apply(&self.carry[..cut]));
        self.carry.drain(..cut);
        out
    }

    /// Ends the stream: returns whatever was held back, redacted.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.carry);
        if std::mem::take(&mut self.in_private_key) {
            return String::new();
        }
        self.apply(&rest)
    }

    /// How much of the held-back text cannot be the beginning of a secret still arriving.
    /// Secrets contain no whitespace, so only the trailing run of non-whitespace (at most
    /// [`STREAM_WINDOW`] bytes) is held — plus a `bearer ` before it, an unfinished private-key
    /// header, and a tail that could begin a literal. Output thus flows line by line without
    /// waiting for a full window, and a secret split anywhere inside itself is still held whole.
    fn safe_prefix_len(&self) -> usize {
        let text = self.carry.as_str();
        let min_cut = floor_boundary(text, text.len().saturating_sub(STREAM_WINDOW));
        let mut cut = text.len();
        for (idx, c) in text.char_indices().rev() {
            if c.is_whitespace() || idx < min_cut {
                break;
            }
            cut = idx;
        }
        cut = cut.max(min_cut);
        if let Some(m) = BEARER_TAIL.find(&text[..cut]) {
            cut = m.start().max(min_cut);
        }
        if let Some(idx) = text.rfind("-----BEGIN")
            && !PEM_BEGIN.is_match(&text[idx..])
        {
            cut = cut.min(idx.max(min_cut));
        }
        for Literal { needle, .. } in &self.literals {
            // Every proper prefix of the needle that the text ends with (char boundaries after
            // the first character).
            for (k, _) in needle.char_indices().filter(|&(k, _)| k > 0) {
                if text.ends_with(&needle[..k]) && text.len() - k < cut {
                    cut = text.len() - k;
                    break;
                }
            }
        }
        floor_boundary(text, cut)
    }

    /// Every match of every rule and literal in the held-back text, as byte spans.
    fn spans(&self) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        for rule in RULES.iter() {
            spans.extend(rule.re.find_iter(&self.carry).map(|m| (m.start(), m.end())));
        }
        for Literal { needle, .. } in &self.literals {
            spans.extend(self.carry.match_indices(needle.as_str()).map(|(s, n)| (s, s + n.len())));
        }
        spans
    }

    fn apply(&self, text: &str) -> String {
        let mut out = redact(text).into_owned();
        for l in &self.literals {
            out = if l.whole {
                replace_whole(&out, &l.needle, &l.replacement)
            } else {
                out.replace(&l.needle, &l.replacement)
            };
        }
        out
    }
}

#[derive(Debug)]
struct Literal {
    needle: String,
    replacement: String,
    /// Only where it is not continued by another name character (paths: `/a/proj` inside
    /// `/a/project2` is another name); a secret is replaced wherever it appears.
    whole: bool,
}

/// `secret`'s hex, base64 and UTF-16 forms, as they would appear in text.
fn encoded_forms(secret: &[u8]) -> Vec<String> {
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let mut forms = vec![hex.to_uppercase(), hex];
    for alphabet in [BASE64, BASE64_URL] {
        for offset in 0..3 {
            forms.push(base64_core(secret, offset, alphabet));
        }
    }
    if let Ok(text) = std::str::from_utf8(secret) {
        let le: String = text.chars().flat_map(|c| [c, '\0']).collect();
        forms.push(le.trim_end_matches('\0').to_owned());
        forms.push(text.chars().flat_map(|c| ['\0', c]).collect());
    }
    forms.retain(|f| f.len() >= 8);
    forms
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The base64 characters that encode only `secret`'s bits when it starts `offset` bytes into a
/// 3-byte group of a longer encoded text: the first and last characters, which share bits with
/// the unknown bytes around it, are left out.
fn base64_core(secret: &[u8], offset: usize, alphabet: &[u8; 64]) -> String {
    let mut bytes = vec![0u8; offset];
    bytes.extend_from_slice(secret);
    let (start_bit, end_bit) = (8 * offset, 8 * (offset + secret.len()));
    bytes.resize(bytes.len().div_ceil(3) * 3, 0);
    let mut out = String::new();
    for (i, group) in bytes.chunks(3).enumerate() {
        let n = (u32::from(group[0]) << 16) | (u32::from(group[1]) << 8) | u32::from(group[2]);
        for j in 0..4 {
            let first_bit = 24 * i + 6 * j;
            if first_bit >= start_bit && first_bit + 6 <= end_bit {
                out.push(char::from(alphabet[((n >> (18 - 6 * j)) & 63) as usize]));
            }
        }
    }
    out
}

/// Replaces `needle` where it is not immediately continued by another name character.
fn replace_whole(text: &str, needle: &str, replacement: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(idx) = rest.find(needle) {
        let after = &rest[idx + needle.len()..];
        let continues = after
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
        out.push_str(&rest[..idx]);
        out.push_str(if continues { needle } else { replacement });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The largest char boundary at or below `idx`.
fn floor_boundary(s: &str, mut idx: usize) -> usize {
    idx = idx.min(s.len());
    while idx > 0 && !s.is_char_boundary(idx) {
        idx -= 1;
    }
    idx
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
