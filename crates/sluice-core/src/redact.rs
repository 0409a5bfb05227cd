//! Redaction of known secret formats in text that leaves Sluice (log lines, error messages,
//! later: command output). Replaces each match with `[redacted:<kind>]`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// One secret format: a name for the placeholder and the pattern that finds it.
struct Rule {
    kind: &'static str,
    re: Regex,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |kind, pat: &str| Rule { kind, re: Regex::new(pat).expect("redaction pattern") };
    vec![
        rule("sluice-token", r"slc_[0-9a-z]{20,}"),
        rule(
            "private-key",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)",
        ),
        rule("aws-access-key", r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
        rule("github-token", r"\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b"),
        rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        rule("openai-key", r"\bsk-(proj-|ant-)?[A-Za-z0-9_-]{20,}"),
        rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        rule("bearer", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"),
    ]
});

/// Replaces every known secret format in `text`. Borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
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
    /// `(needle, replacement)`, longest needle first so a longer path wins over its parent.
    literals: Vec<(String, String)>,
    in_private_key: bool,
}

impl StreamRedactor {
    /// Replaces every occurrence of `needle` with `replacement`, unless the occurrence continues
    /// as a longer name (`/a/proj` inside `/a/project2` is left alone). Empty needles are ignored.
    pub fn with_literal(mut self, needle: &str, replacement: &str) -> StreamRedactor {
        if !needle.is_empty() && needle.len() < STREAM_WINDOW {
            self.literals.push((needle.to_owned(), replacement.to_owned()));
            self.literals.sort_by_key(|l| std::cmp::Reverse(l.0.len()));
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
        for (needle, _) in &self.literals {
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
        for (needle, _) in &self.literals {
            spans.extend(self.carry.match_indices(needle.as_str()).map(|(s, n)| (s, s + n.len())));
        }
        spans
    }

    fn apply(&self, text: &str) -> String {
        let mut out = redact(text).into_owned();
        for (needle, replacement) in &self.literals {
            out = replace_whole(&out, needle, replacement);
        }
        out
    }
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

/// Characters that change how surrounding text is displayed without being visible themselves:
/// bidirectional overrides and isolates, zero-width characters, and the BOM. Names and
/// summaries shown to the human must never contain them silently.
pub fn is_deceptive(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{061C}'
            | '\u{00AD}'
    )
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn known_formats_are_redacted() {
        let token = format!("slc_{}", "a".repeat(52));
        let cases = [
            (format!("auth {token} end"), "auth [redacted:sluice-token] end"),
            ("key AKIAABCDEFGHIJKLMNOP".to_owned(), "key [redacted:aws-access-key]"),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----".to_owned(),
                "[redacted:private-key]",
            ),
            (
                "Authorization: Bearer abcdefghijklmnopqrstuv".to_owned(),
                "Authorization: [redacted:bearer]",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact(&input), want);
        }
        assert!(matches!(redact("nothing here"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn stream_catches_secrets_split_across_chunks() {
        use super::StreamRedactor;
        let token = format!("ghp_{}", "A".repeat(40));
        let text = format!("{}start {token} middle /data/proj/src/a.rs end", "x".repeat(5000));
        for split in [1, 7, 4096, 5003, 5010, 5030] {
            let mut r = StreamRedactor::default().with_literal("/data/proj", ".");
            let mut out = String::new();
            for chunk in text.as_bytes().chunks(split) {
                out.push_str(&r.push(std::str::from_utf8(chunk).unwrap()));
            }
            out.push_str(&r.finish());
            assert!(!out.contains("ghp_"), "split {split}");
            assert!(out.contains("[redacted:github-token] middle ./src/a.rs end"), "split {split}");
        }
        let mut r = StreamRedactor::default();
        let mut out = r.push("a -----BEGIN RSA PRIVATE KEY-----\nAAAA");
        out.push_str(&r.push("BBBB\n-----END RSA PRI"));
        out.push_str(&r.push("VATE KEY-----\nafter"));
        out.push_str(&r.finish());
        assert_eq!(out, "a [redacted:private-key]\nafter");
    }
}
