//! Process output on its way to an assistant: the ANSI stripper, the UTF-8 decoder and the
//! streaming redactor (`sluice_exec::output`, `sluice_core::redact`).
//!
//! `redact_stream` input: a selector byte, three chunking bytes, then the text before a secret,
//! a NUL, and the text after it. A known secret (a Sluice token, a GitHub token, an AWS key, a
//! private key, the install secret and its hex, base64 and UTF-16 forms) is put between them,
//! set apart by blank lines (a secret glued to a word is not a word-bounded format's match;
//! an input whose own text spells the secret's beginning is skipped for the same reason),
//! and the bytes are fed to the output pipeline in chunks, one boundary falling inside the
//! secret. Property: the secret never comes out whole, in the streamed output nor from the
//! one-shot `redact` of the same text.
//!
//! `ansi_strip` input: a chunking byte, then bytes. Properties: the stripper's and the
//! decoder's output is the same however the bytes are chunked, and the text holds no escape,
//! no C0 control but newline and tab, no DEL and no C1 control.

use sluice_core::redact::{StreamRedactor, redact};
use sluice_exec::output::{AnsiStripper, OutputPipeline, Utf8Stream};

/// The engine's install secret, as `redactor_for` is given it.
const INSTALL_SECRET: &str = "install-Secret-7f3a9c21e0";

/// The secrets, each with whether `redact` alone knows its format (the install secret is
/// known only to the streaming redactor it was given to).
fn secrets() -> Vec<(String, bool)> {
    let hex: String = INSTALL_SECRET.bytes().map(|b| format!("{b:02x}")).collect();
    let utf16: String = INSTALL_SECRET.chars().flat_map(|c| [c, '\0']).collect();
    vec![
        ("slc_0123456789abcdefghijklmnopqrstuv".to_owned(), true),
        ("ghp_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ".to_owned(), true),
        ("AKIAABCDEFGHIJKLMNOP".to_owned(), true),
        ("xoxb-1234567890-abcdefghij".to_owned(), true),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n\
             -----END OPENSSH PRIVATE KEY-----"
                .to_owned(),
            true,
        ),
        (INSTALL_SECRET.to_owned(), false),
        (hex.to_uppercase(), false),
        (hex, false),
        (base64(INSTALL_SECRET.as_bytes()), false),
        (utf16, false),
    ]
}

fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let mut n = 0u32;
        for (i, b) in group.iter().enumerate() {
            n |= u32::from(*b) << (16 - 8 * i);
        }
        for j in 0..=group.len() {
            out.push(char::from(ABC[((n >> (18 - 6 * j)) & 63) as usize]));
        }
    }
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

pub fn redact_stream(data: &[u8]) {
    let [sel, inside, step_a, step_b, rest @ ..] = data else { return };
    let (before, after) = match rest.iter().position(|&b| b == 0) {
        Some(nul) => (&rest[..nul], &rest[nul + 1..]),
        None => (rest, &b""[..]),
    };
    let secrets = secrets();
    let (secret, known_format) = &secrets[usize::from(*sel) % secrets.len()];
    // The text around the secret may spell (part of) it too, glued to a word where a
    // word-bounded format rightly does not match: the property is about the secret put in.
    let head: String = secret.chars().take(8).collect();
    if [before, after].iter().any(|b| {
        String::from_utf8_lossy(b).contains(&head) || strip(b, b.len().max(1)).contains(&head)
    }) {
        return;
    }
    let mut stream = before.to_vec();
    stream.extend_from_slice(b"\n\n");
    let start = stream.len();
    stream.extend_from_slice(secret.as_bytes());
    stream.extend_from_slice(b"\n\n");
    stream.extend_from_slice(after);

    let mut pipeline = OutputPipeline::new(
        StreamRedactor::default().with_secret(INSTALL_SECRET, "[redacted:secret]"),
    );
    let mut out = String::new();
    let cut = start + usize::from(*inside) % secret.len();
    for (part, step) in [(&stream[..cut], *step_a), (&stream[cut..], *step_b)] {
        for chunk in part.chunks(usize::from(step % 64) + 1) {
            out.push_str(&pipeline.push(chunk));
        }
    }
    out.push_str(&pipeline.finish());
    assert!(!out.contains(secret.as_str()), "{secret:?} came out whole: {out:?}");

    // The one-shot redaction (log lines, error messages) of the same text, as text.
    let text = String::from_utf8_lossy(&stream);
    let once = redact(&text);
    if *known_format {
        assert!(!once.contains(secret.as_str()), "redact let {secret:?} through: {once:?}");
    }
}

pub fn ansi_strip(data: &[u8]) {
    let [step, bytes @ ..] = data else { return };
    let whole = strip(bytes, bytes.len().max(1));
    let chunked = strip(bytes, usize::from(*step % 16) + 1);
    assert_eq!(whole, chunked, "chunking changed the output");
    for c in whole.chars() {
        let allowed = c == '\n' || c == '\t' || !c.is_control();
        assert!(allowed, "{c:?} left in {whole:?}");
    }
}

fn strip(bytes: &[u8], step: usize) -> String {
    let (mut stripper, mut utf8) = (AnsiStripper::default(), Utf8Stream::default());
    let mut out = String::new();
    for chunk in bytes.chunks(step) {
        let mut plain = Vec::new();
        stripper.push(chunk, &mut plain);
        assert!(
            plain.iter().all(|&b| b == b'\n' || b == b'\t' || (b >= 0x20 && b != 0x7f)),
            "a control byte left in {plain:?}"
        );
        out.push_str(&utf8.push(&plain));
    }
    out.push_str(&utf8.finish());
    out
}
