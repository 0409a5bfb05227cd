//! The output pipeline's fast paths against the byte-at-a-time versions they replaced (kept
//! here as references): the stripper's runs of plain bytes, the decoder's one validation, the
//! ring's push; and sequences, characters and secrets split at every offset.

use std::path::Path;

use super::{AnsiStripper, Esc, LogRing, MAX_ESCAPE_LEN, OutputPipeline, Utf8Stream, plain_run};

/// The stripper as it was: every byte through the state machine.
#[derive(Default)]
struct ReferenceStripper {
    state: Esc,
    seq_len: usize,
}

impl ReferenceStripper {
    fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
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

/// The decoder as it was: the pending bytes and the chunk joined, decoded character by
/// character.
#[derive(Default)]
struct ReferenceUtf8 {
    pending: Vec<u8>,
}

impl ReferenceUtf8 {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    visible(&mut out, s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    visible(&mut out, std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{FFFD}');
                            rest = &bad[n.min(bad.len())..];
                        }
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
}

fn visible(out: &mut String, s: &str) {
    out.extend(s.chars().filter(|c| !('\u{80}'..='\u{9f}').contains(c)));
}

/// The ring's push as it was.
fn reference_push(buf: &mut std::collections::VecDeque<u8>, cap: usize, text: &str) {
    buf.extend(text.as_bytes());
    let excess = buf.len().saturating_sub(cap);
    buf.drain(..excess);
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

/// Terminal output as programs write it, and its edge cases: every kind of sequence, whole and
/// cut short, controls, DEL, C1 controls (as characters and as raw bytes), invalid and cut-short
/// UTF-8, and plain runs of every length around a word's eight bytes.
fn pieces() -> Vec<Vec<u8>> {
    let mut p: Vec<Vec<u8>> = [
        &b"\x1b[31m"[..],
        b"\x1b[0m",
        b"\x1b[",
        b"\x1b[1;3",
        b"\x1b]0;title\x07",
        b"\x1b]8;;http://x\x1b\\",
        b"\x1bPq#0;2;0;0;0\x1b\\",
        b"\x1b_app\x1b\\",
        b"\x1b(B",
        b"\x1b ",
        b"\x1b",
        b"\x1b]",
        b"\r\n",
        b"\r",
        b"\n",
        b"\t",
        b"\x07",
        b"\x08",
        b"\x00",
        b"\x7f",
        b"\x9b",
        "\u{85}".as_bytes(),
        "\u{9f}x".as_bytes(),
        b"\xc2",
        b"\xff",
        b"\xe2\x82",
        b"\xf0\x9f\x98",
        b"\xed\xa0\x80",
        "é".as_bytes(),
        "€".as_bytes(),
        "😀".as_bytes(),
        "©°".as_bytes(),
    ]
    .iter()
    .map(|b| b.to_vec())
    .collect();
    for n in 0..18 {
        p.push(b"abcdefghijklmnopqrstuvwxyz"[..n].to_vec());
    }
    p
}

fn generate(rng: &mut Rng, pieces: &[Vec<u8>], count: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    for _ in 0..count {
        bytes.extend_from_slice(&pieces[rng.below(pieces.len())]);
    }
    bytes
}

/// Feeds `bytes` cut at `cuts` to the stripper and decoder and to their references: each chunk
/// must give the same bytes and the same text.
fn same_on(bytes: &[u8], cuts: &[usize]) {
    let (mut strip, mut utf8) = (AnsiStripper::default(), Utf8Stream::default());
    let (mut ref_strip, mut ref_utf8) = (ReferenceStripper::default(), ReferenceUtf8::default());
    let mut from = 0;
    for &at in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let chunk = &bytes[from..at];
        let (mut plain, mut ref_plain) = (Vec::new(), Vec::new());
        strip.push(chunk, &mut plain);
        ref_strip.push(chunk, &mut ref_plain);
        assert_eq!(plain, ref_plain, "{bytes:?} cut at {cuts:?}, {at}");
        assert_eq!(utf8.push(&plain), ref_utf8.push(&plain), "{bytes:?} cut at {cuts:?}, {at}");
        from = at;
    }
    assert_eq!(utf8.finish().is_empty(), ref_utf8.pending.is_empty());
}

#[test]
fn stripping_and_decoding_equal_the_byte_at_a_time_versions_at_every_offset() {
    let pieces = pieces();
    let mut rng = Rng(0x0a51_0451);
    for _ in 0..300 {
        let bytes = generate(&mut rng, &pieces, 10);
        for at in 0..=bytes.len() {
            same_on(&bytes, &[at]);
        }
    }
}

#[test]
fn stripping_and_decoding_equal_the_byte_at_a_time_versions_on_random_streams() {
    let pieces = pieces();
    let mut rng = Rng(0xdec0de);
    for round in 0..200 {
        let mut bytes = generate(&mut rng, &pieces, 400);
        // Now and then a sequence longer than the stripper follows.
        if round % 10 == 0 {
            let at = rng.below(bytes.len());
            let long: Vec<u8> =
                [&b"\x1b]0;"[..], &vec![b'x'; MAX_ESCAPE_LEN + 3], b"\x07tail"].concat();
            bytes.splice(at..at, long);
        }
        let mut cuts = Vec::new();
        let mut at = 0;
        loop {
            at += 1 + rng.below(if round % 2 == 0 { 9 } else { 700 });
            if at >= bytes.len() {
                break;
            }
            cuts.push(at);
        }
        same_on(&bytes, &cuts);
    }
}

/// The decoder alone, on raw bytes (C1 controls, invalid bytes and characters cut short,
/// without a stripper before it), cut at every offset.
#[test]
fn decoding_raw_bytes_equals_the_reference_with_characters_cut_at_every_offset() {
    let text = "a é € 😀 \u{85} \u{9f}\u{a0} ©° end".as_bytes();
    let mut bytes = text.to_vec();
    bytes.extend_from_slice(b"\xff\xc2\x80\xe2\x82x\xf0\x9f\x98\xed\xa0\x80\xc0\xaf");
    bytes.extend_from_slice(text);
    for i in 0..=bytes.len() {
        for j in i..=bytes.len() {
            let (mut utf8, mut reference) = (Utf8Stream::default(), ReferenceUtf8::default());
            let mut got = String::new();
            for chunk in [&bytes[..i], &bytes[i..j], &bytes[j..]] {
                let part = utf8.push(chunk);
                assert_eq!(part, reference.push(chunk), "cut at {i}, {j}");
                got.push_str(&part);
            }
            assert_eq!(got, ReferenceUtf8::default().push(&bytes), "cut at {i}, {j}");
        }
    }
}

/// Every kind of sequence, cut into two at every offset, strips as it does whole.
#[test]
fn an_escape_sequence_cut_at_every_offset_is_still_stripped() {
    let bytes =
        b"a\x1b[1;31mb\x1b]0;title\x07c\x1b]8;;http://x\x1b\\d\x1bPq\x1b\\e\x1b(Bf\r\ng\x07h\x7fi";
    for at in 0..=bytes.len() {
        let mut strip = AnsiStripper::default();
        let mut got = Vec::new();
        strip.push(&bytes[..at], &mut got);
        strip.push(&bytes[at..], &mut got);
        assert_eq!(got, b"abcdef\nghi", "cut at {at}");
    }
}

#[test]
fn a_plain_run_ends_at_the_first_control_byte_or_del_wherever_it_is() {
    for len in 0..26 {
        let plain: Vec<u8> = (0..len).map(|i| [b'a', b'\n', b'\t', 0xc3, b' '][i % 5]).collect();
        assert_eq!(plain_run(&plain), len);
        for at in 0..len {
            for special in [0x00, 0x07, 0x0d, 0x1b, 0x1f, 0x7f] {
                let mut bytes = plain.clone();
                bytes[at] = special;
                assert_eq!(plain_run(&bytes), at, "{bytes:?}");
            }
        }
    }
}

#[test]
fn the_ring_keeps_what_it_kept_before() {
    let mut rng = Rng(0x21_9e);
    for cap in [1, 5, 64, 1000] {
        let mut ring = LogRing::new(cap);
        let mut reference = std::collections::VecDeque::new();
        let mut total = 0;
        for _ in 0..300 {
            let text = "0123456789é€😀\n".repeat(rng.below(3)) + &"x".repeat(rng.below(2 * cap));
            ring.push(&text);
            reference_push(&mut reference, cap, &text);
            total += text.len() as u64;
            assert_eq!(ring.total(), total);
            assert_eq!(ring.dropped(), total - reference.len() as u64);
            assert!(ring.buf.iter().eq(reference.iter()));
        }
    }
}

/// A secret and a path, behind escape sequences, cut at every offset of the bytes: the
/// pipeline's text is the same as for the whole, and neither comes out.
#[test]
fn a_secret_cut_at_every_offset_is_redacted_through_the_pipeline() {
    let secret = "canary-secret-0451";
    let token = format!("ghp_{}", "Z".repeat(40));
    let text = format!(
        "\x1b[1m{token}\x1b[0m at /data/proj/src/main.rs: {secret} é\n\x1b]0;t\x07AKIAABCDEFGHIJKLMNOP\r\n"
    );
    let pipeline = || {
        let redactor = super::redactor_for(
            Path::new("/data/proj"),
            Path::new("/st"),
            None,
            &[secret.to_owned()],
        );
        OutputPipeline::new(redactor)
    };
    let whole = {
        let mut p = pipeline();
        p.push(text.as_bytes()) + &p.finish()
    };
    assert_eq!(
        whole,
        "[redacted:github-token] at ./src/main.rs: [redacted:secret] é\n[redacted:aws-access-key]\n"
    );
    for at in 0..=text.len() {
        let mut p = pipeline();
        let mut got = String::new();
        p.push_into(&text.as_bytes()[..at], &mut got);
        p.push_into(&text.as_bytes()[at..], &mut got);
        got.push_str(&p.finish());
        assert_eq!(got, whole, "cut at {at}");
    }
}
