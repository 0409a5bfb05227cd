//! Redaction of known secret formats in text that leaves Sluice (log lines, error messages,
//! command output). Replaces each match with `[redacted:<kind>]`.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, Input, MatchKind};
use memchr::memmem::Finder;
use regex::Regex;

/// One secret format: a name for the placeholder and the pattern that finds it.
struct Rule {
    kind: &'static str,
    /// Its anchor (see [`SOURCES`]), then the rest of its pattern.
    re: Regex,
}

/// Each secret format as (kind, anchor, rest): a rule is its anchor followed by the rest of its
/// pattern, so the anchor can never drift from the pattern it stands for. An anchor is one group
/// (no top-level `|`).
const SOURCES: &[(&str, &str, &str)] = &[
    ("sluice-token", "slc_", "[0-9a-z]{20,}"),
    // The same token hex-encoded (each body byte is a digit or a lowercase letter),
    // base64-encoded at any of the three alignments (the characters that depend only on
    // `slc_`, then the rest), and as UTF-16 text.
    ("sluice-token", "(?i)736c635f", "(?:3[0-9]|6[1-9a-f]|7[0-9a]){20,}"),
    ("sluice-token", "(?:c2xjX|NsY1|zbGNf)", "[A-Za-z0-9+/_-]{26,}={0,2}"),
    ("sluice-token", r"s\x00l\x00c\x00_", r"\x00(?:[0-9a-z]\x00){20,}"),
    ("sluice-token", r"\x00s\x00l\x00c\x00_", r"(?:\x00[0-9a-z]){20,}"),
    (
        "private-key",
        "-----BEGIN ",
        r"[A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)",
    ),
    ("aws-access-key", r"\b(AKIA|ASIA)", r"[0-9A-Z]{16}\b"),
    // Two rules for GitHub's two formats, so each has its own anchor. Both match whole
    // words only, so they never overlap and the order of the passes cannot matter.
    ("github-token", r"\bgh[pousr]_", r"[A-Za-z0-9]{36,}\b"),
    ("github-token", r"\bgithub_pat_", r"[A-Za-z0-9_]{40,}\b"),
    ("slack-token", r"\bxox[abposr]-", "[A-Za-z0-9-]{10,}"),
    ("openai-key", r"\bsk-", "(proj-|ant-)?[A-Za-z0-9_-]{20,}"),
    ("jwt", r"\beyJ", r"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("bearer", r"(?i)\bbearer", r"\s+[A-Za-z0-9._~+/=-]{16,}"),
];

/// The rules, compiled the first time text holds an anchor (most text never does: a process that
/// only logs its own messages never compiles them).
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    SOURCES
        .iter()
        .map(|&(kind, anchor, rest)| Rule {
            kind,
            re: Regex::new(&format!("{anchor}{rest}")).expect("redaction pattern"),
        })
        .collect()
});

/// Any rule's anchor. Text it does not match holds nothing any rule matches, and that is known
/// after one scan instead of one per rule (most text that leaves Sluice holds no secret). Its word
/// boundaries are ASCII ones, cheaper to build and to run: every anchor's `\b` comes before an
/// ASCII letter, where a Unicode boundary is also an ASCII one, so this matches wherever the
/// rules' anchors do (and sometimes more, which the rules then decide).
static ANCHORS: LazyLock<Regex> = LazyLock::new(|| {
    let any: Vec<String> = SOURCES
        .iter()
        .map(|(_, anchor, _)| format!("(?:{})", anchor.replace(r"\b", r"(?-u:\b)")))
        .collect();
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

/// Every rule as one lazy DFA, searched anchored from a given position: stepping it over held-back
/// text says whether some continuation could still make a secret start there (its state is not
/// dead). Each position is tried as if a text began there, and word boundaries are ASCII ones:
/// both only make it answer "could" more often. `None` if it cannot be built: then nothing is
/// released early.
static VIABLE: LazyLock<Option<regex_automata::hybrid::dfa::DFA>> = LazyLock::new(|| {
    let patterns: Vec<String> =
        RULES.iter().map(|r| r.re.as_str().replace(r"\b", r"(?-u:\b)")).collect();
    regex_automata::hybrid::dfa::DFA::new_many(&patterns).ok()
});

/// The most held-back text released when the stream pauses ([`StreamRedactor::flush_idle_into`]):
/// a prompt is short; a longer run without whitespace waits for more, as before.
const IDLE_MAX_HELD: usize = 512;

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
/// What every [`PEM_BEGIN`] match starts with, and what an unfinished header is held back from.
static BEGIN_MARKER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("-----BEGIN"));

/// [`redact`] over a stream of text chunks (process output), plus exact literal replacements
/// (physical paths, the engine's own secrets). Text is held back by [`STREAM_WINDOW`] bytes so a
/// secret split across two chunks is seen whole; a private key block whose end has not arrived
/// yet is swallowed until its end marker.
///
/// Most output holds no secret and no literal: one scan for any rule's anchor ([`ANCHORS`]) and
/// one scan of an automaton over every literal find that out, and the text is then passed on
/// as it is. Where they find something, the same replacements as always are made, over as
/// little text as gives the same result (see [`Needles::Lines`]).
#[derive(Debug, Default, Clone)]
pub struct StreamRedactor {
    carry: String,
    /// Longest needle first, so a longer path wins over its parent.
    literals: Vec<Literal>,
    /// The needles of `literals`, for one scan.
    needles: Needles,
    in_private_key: bool,
    /// The last character of text a pause released in the middle of a word: the next text
    /// released is redacted as the continuation of that word (see `release`).
    context: Option<char>,
}

/// How the literals are looked for.
#[derive(Debug, Default, Clone)]
enum Needles {
    /// There are none.
    #[default]
    None,
    /// No needle and no replacement holds a newline, so no occurrence spans one, at any step of
    /// the replacements: replacing them in a text gives the same as replacing them in each of
    /// its lines (or runs of whole lines). A line none of them occurs in is left as it is (a
    /// replacement elsewhere cannot make one appear in it). The automaton (leftmost-first: it
    /// finds the occurrence that starts first) tells whether and where any occurs.
    Lines(AhoCorasick),
    /// Some needle or replacement holds a newline (or the automaton could not be built): each
    /// literal in turn over the whole text.
    Whole,
    /// Literals were added since: built on the next chunk (once, not on every addition).
    Unbuilt,
}

impl Needles {
    fn build(literals: &[Literal]) -> Needles {
        if literals.is_empty() {
            return Needles::None;
        }
        let multiline =
            literals.iter().any(|l| l.needle.contains('\n') || l.replacement.contains('\n'));
        // A needle given twice (a path and its canonical form, the same) is looked for once.
        let mut needles: Vec<&str> = literals.iter().map(|l| l.needle.as_str()).collect();
        needles.sort_unstable();
        needles.dedup();
        let automaton = AhoCorasick::builder().match_kind(MatchKind::LeftmostFirst).build(needles);
        match automaton {
            Ok(automaton) if !multiline => Needles::Lines(automaton),
            _ => Needles::Whole,
        }
    }
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
                finder: Finder::new(needle).into_owned(),
                replacement: replacement.to_owned(),
                whole,
            });
            self.literals.sort_by_key(|l| std::cmp::Reverse(l.needle.len()));
            self.needles = Needles::Unbuilt;
        }
        self
    }

    /// Feeds one chunk; returns the text that is now safe to show (possibly empty).
    pub fn push(&mut self, chunk: &str) -> String {
        let mut out = String::new();
        self.push_into(chunk, &mut out);
        out
    }

    /// [`StreamRedactor::push`], appending the text that is now safe to show to `out`.
    pub fn push_into(&mut self, chunk: &str, out: &mut String) {
        self.prepare();
        self.carry.push_str(chunk);
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
                return;
            }
            if BEGIN_MARKER.find(self.carry.as_bytes()).is_some()
                && let Some(begin) = PEM_BEGIN.find(&self.carry)
                && !PEM_END.is_match(&self.carry[begin.end()..])
            {
                let (start, end) = (begin.start(), begin.end());
                self.release(start, true, out);
                self.context = None;
                out.push_str("[redacted:private-key]");
                self.carry.drain(..end - start);
                self.in_private_key = true;
                continue;
            }
            break;
        }
        // Without any rule's anchor in the held-back text, no rule matches in it, nor in any
        // prefix of it (an anchor's only look-around, `\b`, is at its start).
        let anchored = ANCHORS.is_match(&self.carry);
        let mut cut = self.keep_matches_whole(self.safe_prefix_len(), anchored);
        if cut == 0 && self.carry.len() > STREAM_MAX_CARRY {
            cut = floor_boundary(&self.carry, self.carry.len() - STREAM_WINDOW);
        }
        self.release(cut, anchored, out);
    }

    /// Whether text is held back (a trailing word, an unfinished marker).
    pub fn holding(&self) -> bool {
        !self.carry.is_empty() && !self.in_private_key
    }

    /// The stream has paused: releases the held-back text when no secret format and no literal
    /// could begin in it, whatever came next, and none occurs in it, so a prompt without a
    /// trailing space (`y/n?`, `name:`) shows while the program waits for its answer. Timing
    /// plays no part: what could begin a secret stays held. Text that follows is redacted as
    /// the continuation of the released word (`context`), so releasing mid-word changes no
    /// match. At most [`IDLE_MAX_HELD`] bytes are looked at.
    pub fn flush_idle_into(&mut self, out: &mut String) {
        self.prepare();
        let text = self.carry.as_str();
        let quiet = self.holding()
            && text.len() <= IDLE_MAX_HELD
            && !ANCHORS.is_match(text)
            && self.literal_spans(text, 0..text.len()).is_empty()
            && self.literal_prefix_cut(text, text.len()) == text.len()
            && first_viable_start(text).is_none();
        if quiet {
            let last = text.chars().next_back();
            self.release(text.len(), false, out);
            self.context = last;
        }
    }

    /// Appends `carry[..upto]` redacted to `out` and drops it from the carry. After a pause
    /// released part of a word, the text is redacted with that word's last character before
    /// it (then cut off), as it would have been had nothing been released: a rule's `\b` at
    /// its start sees the word go on. That character is in no match (nothing could begin
    /// where it is, and it was released from a text where nothing occurred).
    fn release(&mut self, upto: usize, rules_may_match: bool, out: &mut String) {
        if upto == 0 {
            return;
        }
        match self.context.take() {
            None => self.apply_into(&self.carry[..upto], rules_may_match, out),
            Some(c) => {
                let mut glued = String::with_capacity(upto + c.len_utf8());
                glued.push(c);
                glued.push_str(&self.carry[..upto]);
                let mut done = String::new();
                self.apply_into(&glued, true, &mut done);
                match done.strip_prefix(c) {
                    Some(rest) => out.push_str(rest),
                    None => self.apply_into(&self.carry[..upto], true, out),
                }
            }
        }
        self.carry.drain(..upto);
    }

    /// Ends the stream: returns whatever was held back, redacted.
    pub fn finish(&mut self) -> String {
        self.prepare();
        if std::mem::take(&mut self.in_private_key) {
            self.carry.clear();
            return String::new();
        }
        let mut out = String::new();
        self.release(self.carry.len(), true, &mut out);
        self.context = None;
        out
    }

    fn prepare(&mut self) {
        if let Needles::Unbuilt = self.needles {
            self.needles = Needles::build(&self.literals);
        }
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
        // The last marker (forward: the vectorized direction; it cannot overlap itself).
        if let Some(idx) = BEGIN_MARKER.find_iter(text.as_bytes()).last()
            && !PEM_BEGIN.is_match(&text[idx..])
        {
            cut = cut.min(idx.max(min_cut));
        }
        floor_boundary(text, self.literal_prefix_cut(text, cut))
    }

    /// `cut`, moved back to where the longest tail of `text` that begins a literal starts.
    fn literal_prefix_cut(&self, text: &str, mut cut: usize) -> usize {
        if let Some(&last) = text.as_bytes().last() {
            for Literal { needle, .. } in &self.literals {
                // The longest proper prefix of the needle that the text ends with (char
                // boundaries after the first character), if it moves the cut back; only a
                // prefix ending with the text's last byte can be one.
                let ends = memchr::memchr_iter(last, needle.as_bytes()).rev().map(|i| i + 1);
                for k in ends.filter(|&k| k < needle.len() && needle.is_char_boundary(k)) {
                    if text.ends_with(&needle[..k]) && text.len() - k < cut {
                        cut = text.len() - k;
                        break;
                    }
                }
            }
        }
        cut
    }

    /// Moves `cut` back until no match of a rule or a literal in the held-back text starts
    /// before it and ends after it: the largest such position at or below `cut` (moving it to
    /// the start of a straddling match may make it split another, so this repeats). `anchored`:
    /// whether [`ANCHORS`] matches the held-back text; when it does not, only literals can
    /// match, and with [`Needles::Lines`] only in the line around the cut, where the text's
    /// occurrences of each needle are those of the line alone.
    fn keep_matches_whole(&self, mut cut: usize, anchored: bool) -> usize {
        let text = self.carry.as_str();
        if cut == 0 || cut >= text.len() {
            return cut;
        }
        let spans = match &self.needles {
            _ if anchored => self.spans(),
            Needles::None => return cut,
            Needles::Whole | Needles::Unbuilt => self.spans(),
            Needles::Lines(automaton) => {
                let bytes = text.as_bytes();
                let from = memchr::memrchr(b'\n', &bytes[..cut]).map_or(0, |i| i + 1);
                let to = memchr::memchr(b'\n', &bytes[cut..]).map_or(text.len(), |i| cut + i);
                if from == cut || automaton.find(&text[from..to]).is_none() {
                    return cut;
                }
                self.literal_spans(text, from..to)
            }
        };
        loop {
            let moved = spans.iter().find(|&&(s, e)| s < cut && e > cut).map(|&(s, _)| s);
            match moved {
                Some(s) => cut = s,
                None => return cut,
            }
        }
    }

    /// Every match of every rule and literal in the held-back text, as byte spans.
    fn spans(&self) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        for rule in RULES.iter() {
            spans.extend(rule.re.find_iter(&self.carry).map(|m| (m.start(), m.end())));
        }
        spans.extend(self.literal_spans(&self.carry, 0..self.carry.len()));
        spans
    }

    /// Each literal's occurrences in `text[range]`, as byte spans of `text`.
    fn literal_spans(&self, text: &str, range: Range<usize>) -> Vec<(usize, usize)> {
        let (base, part) = (range.start, &text[range]);
        let mut spans = Vec::new();
        for Literal { needle, finder, .. } in &self.literals {
            spans.extend(
                finder.find_iter(part.as_bytes()).map(|s| (base + s, base + s + needle.len())),
            );
        }
        spans
    }

    /// Appends `text` redacted to `out`: the rules (unless `rules_may_match` is false, known
    /// from a scan of a text `text` is a prefix of), then each literal in turn.
    fn apply_into(&self, text: &str, rules_may_match: bool, out: &mut String) {
        let text = if rules_may_match { redact(text) } else { Cow::Borrowed(text) };
        match &self.needles {
            Needles::None => out.push_str(&text),
            Needles::Whole | Needles::Unbuilt => out.push_str(&self.replace_literals(&text)),
            Needles::Lines(automaton) => {
                let bytes = text.as_bytes();
                let line_end = |at: usize| {
                    memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1)
                };
                let find_from = |at: usize| automaton.find(Input::new(bytes).range(at..));
                let mut done = 0;
                let mut next = find_from(0);
                while let Some(m) = next {
                    // The lines from the one it occurs in, through those of the next occurrences
                    // less than a window away: replaced in one pass.
                    let from = memchr::memrchr(b'\n', &bytes[done..m.start()])
                        .map_or(done, |i| done + i + 1);
                    let mut to = line_end(m.end());
                    next = find_from(to);
                    while let Some(m) = next
                        && m.start() - to < STREAM_WINDOW
                    {
                        to = line_end(m.end());
                        next = find_from(to);
                    }
                    out.push_str(&text[done..from]);
                    out.push_str(&self.replace_literals(&text[from..to]));
                    done = to;
                }
                out.push_str(&text[done..]);
            }
        }
    }

    /// Each literal in turn, longest first, over the whole of `text` (each on the text the
    /// previous ones left).
    fn replace_literals<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for l in &self.literals {
            if l.finder.find(out.as_bytes()).is_some() {
                out = Cow::Owned(l.replace(&out));
            }
        }
        out
    }
}

#[derive(Debug, Clone)]
struct Literal {
    needle: String,
    finder: Finder<'static>,
    replacement: String,
    /// Only where it is not continued by another name character (paths: `/a/proj` inside
    /// `/a/project2` is another name); a secret is replaced wherever it appears.
    whole: bool,
}

impl Literal {
    /// `text` with each occurrence replaced, left to right, an occurrence never overlapping the
    /// previous one (as `str::replace`); when `whole`, only those not continued by another name
    /// character.
    fn replace(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut from = 0;
        for at in self.finder.find_iter(text.as_bytes()) {
            let end = at + self.needle.len();
            let continues = self.whole
                && text[end..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if !continues {
                out.push_str(&text[from..at]);
                out.push_str(&self.replacement);
                from = end;
            }
        }
        out.push_str(&text[from..]);
        out
    }
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

/// The first position in `text` where a secret could start, given more text after it (see
/// [`VIABLE`]); `Some(0)` when that cannot be told.
fn first_viable_start(text: &str) -> Option<usize> {
    use regex_automata::{Anchored, util::start};
    let Some(dfa) = VIABLE.as_ref() else { return Some(0) };
    let mut cache = dfa.create_cache();
    let bytes = text.as_bytes();
    // Each position is tried as the start of a text: a leading `\b` holds there whatever came
    // before, since a replacement made before it in the same pass can put a boundary there.
    let config = start::Config::new().anchored(Anchored::Yes);
    let may_begin = |cache: &mut regex_automata::hybrid::dfa::Cache, at: usize| {
        let Ok(mut state) = dfa.start_state(cache, &config) else { return true };
        for &b in &bytes[at..] {
            match dfa.next_state(cache, state, b) {
                Ok(next) if next.is_dead() => return false,
                Ok(next) if !next.is_quit() => state = next,
                _ => return true,
            }
        }
        true
    };
    (0..bytes.len()).filter(|&i| text.is_char_boundary(i)).find(|&i| may_begin(&mut cache, i))
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

#[cfg(test)]
#[path = "redact_reference.rs"]
mod reference;
