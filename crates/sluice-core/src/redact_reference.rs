//! The streaming redactor as it was before its shortcuts (one scan per rule and per literal,
//! each literal replaced over the whole text), kept as the reference the fast one must equal:
//! the same text out of every `push` and of `finish`, on generated streams cut at every offset
//! and at random.

use super::{
    BEARER_TAIL, PEM_BEGIN, PEM_END, RULES, STREAM_MAX_CARRY, STREAM_WINDOW, StreamRedactor,
    encoded_forms, floor_boundary, redact,
};

#[derive(Default)]
struct Reference {
    carry: String,
    literals: Vec<(String, String, bool)>,
    in_private_key: bool,
}

impl Reference {
    fn with_literal(self, needle: &str, replacement: &str) -> Reference {
        self.add(needle, replacement, true)
    }

    fn with_secret(mut self, secret: &str, replacement: &str) -> Reference {
        if secret.len() < 8 {
            return self;
        }
        for form in encoded_forms(secret.as_bytes()) {
            self = self.add(&form, replacement, false);
        }
        self.add(secret, replacement, false)
    }

    fn add(mut self, needle: &str, replacement: &str, whole: bool) -> Reference {
        if !needle.is_empty() && needle.len() < STREAM_WINDOW {
            self.literals.push((needle.to_owned(), replacement.to_owned(), whole));
            self.literals.sort_by_key(|l| std::cmp::Reverse(l.0.len()));
        }
        self
    }

    fn push(&mut self, chunk: &str) -> String {
        self.carry.push_str(chunk);
        let mut out = String::new();
        loop {
            if self.in_private_key {
                if let Some(end) = PEM_END.find(&self.carry) {
                    self.carry.drain(..end.end());
                    self.in_private_key = false;
                    continue;
                }
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

    fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.carry);
        if std::mem::take(&mut self.in_private_key) {
            return String::new();
        }
        self.apply(&rest)
    }

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
        for (needle, _, _) in &self.literals {
            for (k, _) in needle.char_indices().filter(|&(k, _)| k > 0) {
                if text.ends_with(&needle[..k]) && text.len() - k < cut {
                    cut = text.len() - k;
                    break;
                }
            }
        }
        floor_boundary(text, cut)
    }

    fn spans(&self) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        for rule in RULES.iter() {
            spans.extend(rule.re.find_iter(&self.carry).map(|m| (m.start(), m.end())));
        }
        for (needle, _, _) in &self.literals {
            spans.extend(self.carry.match_indices(needle.as_str()).map(|(s, n)| (s, s + n.len())));
        }
        spans
    }

    fn apply(&self, text: &str) -> String {
        let mut out = redact(text).into_owned();
        for (needle, replacement, whole) in &self.literals {
            out = if *whole {
                replace_whole(&out, needle, replacement)
            } else {
                out.replace(needle.as_str(), replacement)
            };
        }
        out
    }
}

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

/// xorshift64*: the tests' own reproducible generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SECRET: &str = "f00dfacecafe0451beef";

/// The configurations compared: 0, paths (one inside another, one a prefix of a sibling's
/// name, one with a space) and a secret, as `redactor_for` builds them; 1, none; 2, a needle holding a newline
/// (the whole-text way of replacing).
const CONFIGS: usize = 3;

fn fresh(config: usize) -> (StreamRedactor, Reference) {
    let mut literals: Vec<(&str, &str)> = match config {
        0 => vec![
            ("/data/proj", "."),
            ("/data", "<sluice-data>"),
            ("/home/u", "~"),
            ("/home/u/My Project", "<p>"),
        ],
        1 => vec![],
        _ => vec![("/odd\npath", "<odd>"), ("/data", ".")],
    };
    let (mut fast, mut reference) = (StreamRedactor::default(), Reference::default());
    for (needle, replacement) in literals.drain(..) {
        fast = fast.with_literal(needle, replacement);
        reference = reference.with_literal(needle, replacement);
    }
    if config == 0 {
        fast = fast.with_secret(SECRET, "[redacted:secret]");
        reference = reference.with_secret(SECRET, "[redacted:secret]");
    }
    (fast, reference)
}

/// Pieces of generated text: words, whitespace, non-ASCII, the literals and their near misses,
/// the secret's encodings, every rule's format and pieces of them.
fn pieces() -> Vec<String> {
    let mut p: Vec<String> = [
        "word",
        "Compiling",
        " ",
        " ",
        "\n",
        "\n",
        "\t",
        "é",
        "☕",
        "😀",
        "(",
        ")",
        ":",
        "=",
        "/",
        "/data/proj",
        "/data/proj/src/a.rs",
        "/data/project2",
        "/data/proj-x",
        "/data/proj.",
        "/data",
        "/data/",
        "/datum",
        "/home/u",
        "/home/u/.cargo",
        "/home/user",
        "/data/pr",
        "/odd\npath",
        "/odd",
        "/home/u/My Project",
        "/home/u/My ",
        "Project",
        "ghp_",
        "AKIAABCDEFGHIJKLMNOP",
        "AKIA",
        "slc_",
        "sk-",
        "Bearer",
        "bearer ",
        "bearer\n",
        "eyJ",
        "xoxb-",
        "-----BEGIN ",
        "-----BEGIN RSA PRIV",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "-----END",
        "MIIB",
        SECRET,
        "f00dface",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    p.push(format!("ghp_{}", "A".repeat(36)));
    p.push(format!("slc_{}", "k3x9".repeat(6)));
    p.push(format!("Bearer {}", "t".repeat(20)));
    p.push("eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl".to_owned());
    p.push(format!("xoxb-{}", "1".repeat(12)));
    p.push(format!("sk-proj-{}", "x".repeat(24)));
    p.extend(encoded_forms(SECRET.as_bytes()));
    p
}

fn generate(rng: &mut Rng, pieces: &[String], count: usize) -> String {
    let mut text = String::new();
    for _ in 0..count {
        text.push_str(&pieces[rng.below(pieces.len())]);
    }
    text
}

/// Feeds `text` cut at `cuts` (char boundaries, ascending) to both; every output must agree.
fn same_on(fast: &mut StreamRedactor, reference: &mut Reference, text: &str, cuts: &[usize]) {
    let mut from = 0;
    for &at in cuts.iter().chain(std::iter::once(&text.len())) {
        let chunk = &text[from..at];
        assert_eq!(fast.push(chunk), reference.push(chunk), "{text:?} cut at {cuts:?}, {at}");
        from = at;
    }
    assert_eq!(fast.finish(), reference.finish(), "{text:?} cut at {cuts:?}: finish");
}

#[test]
fn the_fast_redactor_equals_the_reference_cut_at_every_offset() {
    let pieces = pieces();
    let mut rng = Rng(0x5eed_0451);
    for config in 0..CONFIGS {
        for _ in 0..25 {
            let text = generate(&mut rng, &pieces, 12);
            for at in (0..=text.len()).filter(|&at| text.is_char_boundary(at)) {
                let (mut fast, mut reference) = fresh(config);
                same_on(&mut fast, &mut reference, &text, &[at]);
            }
        }
    }
}

#[test]
fn the_fast_redactor_equals_the_reference_on_random_streams() {
    let pieces = pieces();
    let mut rng = Rng(0x0dd_ba11);
    for config in 0..CONFIGS {
        for round in 0..60 {
            let mut text = generate(&mut rng, &pieces, 200);
            // Now and then (in large chunks) a run without whitespace longer than the window,
            // or than the most the redactor holds back.
            if round % 4 == 1 {
                let at = floor_boundary(&text, rng.below(text.len()));
                let run = if round % 8 == 1 { STREAM_MAX_CARRY + 100 } else { STREAM_WINDOW + 7 };
                text.insert_str(at, &"x".repeat(run));
            }
            let mut cuts = Vec::new();
            let mut at = 0;
            loop {
                at += 1 + rng.below(if round % 2 == 0 { 16 } else { 3000 });
                if at >= text.len() {
                    break;
                }
                cuts.push(floor_boundary(&text, at));
            }
            cuts.dedup();
            let (mut fast, mut reference) = fresh(config);
            same_on(&mut fast, &mut reference, &text, &cuts);
        }
    }
}

/// Many lines with literals near each other and far apart, in large chunks: the replacement
/// over runs of lines.
#[test]
fn the_fast_redactor_equals_the_reference_on_path_heavy_lines() {
    let mut rng = Rng(0xfeed);
    let lines = [
        "   Compiling a v0.1.0 (/data/proj)\n",
        "error: at /data/proj/src/a.rs:1:2 and /data/project2/b.rs\n",
        "plain build output without any path in it at all, a longer line of text\n",
        "/home/u/.cargo/registry and /data/ and /data.\n",
        "café ☕ /data/proj-x/😀\n",
    ];
    for _ in 0..20 {
        let mut text = String::new();
        for _ in 0..400 {
            match lines.get(rng.below(lines.len() + 1)) {
                Some(line) => text.push_str(line),
                None => {
                    text.push_str(&"filler without paths ".repeat(rng.below(300)));
                    text.push('\n');
                }
            }
        }
        let cuts: Vec<usize> = (1..text.len() / 5000)
            .map(|i| floor_boundary(&text, i * 5000 + rng.below(100)))
            .collect();
        let (mut fast, mut reference) = fresh(0);
        same_on(&mut fast, &mut reference, &text, &cuts);
    }
}

/// A stream that pauses (an idle release after chunks, at random) reveals nothing the same
/// stream without pauses hides: no secret, none of its encodings, no token body, no physical
/// path, whole or begun in one release and finished in the next.
#[test]
fn releases_while_idle_reveal_nothing_the_stream_hides() {
    let pieces = pieces();
    let mut hidden: Vec<String> = vec![
        SECRET.to_owned(),
        "A".repeat(36),
        "k3x9".repeat(6),
        "t".repeat(20),
        "1".repeat(12),
        "x".repeat(24),
        "c2lnbmF0dXJl".to_owned(),
        "AKIAABCDEFGHIJKLMNOP".to_owned(),
        "MIIB".to_owned(),
        "/data".to_owned(),
        "/home/u".to_owned(),
    ];
    hidden.extend(encoded_forms(SECRET.as_bytes()));
    let mut rng = Rng(0x1d1e);
    let mut released = 0;
    for config in 0..CONFIGS {
        for round in 0..300 {
            let text = generate(&mut rng, &pieces, 40);
            let (mut paused, _) = fresh(config);
            let (mut plain, _) = fresh(config);
            let (mut with_pauses, mut without) = (String::new(), String::new());
            let mut from = 0;
            while from < text.len() {
                let at = floor_boundary(&text, (from + 1 + rng.below(12)).min(text.len()));
                let at = if at <= from { text.len() } else { at };
                with_pauses.push_str(&paused.push(&text[from..at]));
                without.push_str(&plain.push(&text[from..at]));
                if round % 3 != 0 || rng.below(2) == 0 {
                    let before = with_pauses.len();
                    paused.flush_idle_into(&mut with_pauses);
                    released += usize::from(with_pauses.len() > before);
                }
                from = at;
            }
            with_pauses.push_str(&paused.finish());
            without.push_str(&plain.finish());
            for h in &hidden {
                if !without.contains(h.as_str()) {
                    assert!(
                        !with_pauses.contains(h.as_str()),
                        "{h:?} revealed by pauses in {text:?}: {with_pauses:?} (without: {without:?})"
                    );
                }
            }
        }
    }
    assert!(released > 1000, "pauses released text only {released} times: the test tests nothing");
}
