//! OR-01 as a property: a secret in process output, cut into two or three chunks at every
//! possible pair of boundaries, never comes out of the streaming redactor whole — for each
//! known format and for the engine's own secret in its encodings.

use sluice_core::redact::StreamRedactor;

/// Feeds `text` in the pieces that `cuts` (ascending byte offsets) make.
fn streamed(mut r: StreamRedactor, text: &str, cuts: &[usize]) -> String {
    let mut out = String::new();
    let mut from = 0;
    for &at in cuts.iter().chain(std::iter::once(&text.len())) {
        out.push_str(&r.push(&text[from..at]));
        from = at;
    }
    out + &r.finish()
}

/// Secrets of every known format, each with a part that must never appear in the output.
fn known() -> Vec<(String, String)> {
    let token = format!("slc_{}", "7k2m".repeat(13));
    vec![
        (token.clone(), token[4..30].to_owned()),
        ("AKIAIOSFODNN7EXAMPLE".into(), "IOSFODNN7EXAMPLE".into()),
        ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB".into(), "0123456789abcdefghijklmnop".into()),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE \
             KEY-----"
                .into(),
            "b3BlbnNzaC1rZXktdjEAAAAA".into(),
        ),
    ]
}

#[test]
fn or01_a_known_secret_cut_at_every_pair_of_boundaries_never_passes() {
    for (secret, core) in known() {
        let text = format!("log: {secret} done\n");
        let n = text.len();
        for i in 1..n {
            for j in (i..n).step_by(3) {
                let cuts: Vec<usize> = if i == j { vec![i] } else { vec![i, j] };
                let out = streamed(StreamRedactor::default(), &text, &cuts);
                assert!(!out.contains(&core), "{secret:?} cut at {cuts:?}: {out:?}");
                assert!(out.contains("[redacted:"), "{secret:?} cut at {cuts:?}: {out:?}");
            }
        }
    }
}

#[test]
fn or01_the_engines_secret_cut_at_every_boundary_never_passes_in_any_encoding() {
    use base64::Engine;
    let secret = "e3b0c44298fc1c149afbf4c8996fb924";
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("key={secret}"));
    for form in [secret.to_owned(), hex.clone(), hex.to_uppercase(), b64] {
        let text = format!("before {form} after\n");
        for i in 1..text.len() {
            let r = StreamRedactor::default().with_secret(secret, "[redacted:secret]");
            let out = streamed(r, &text, &[i]);
            assert!(!out.contains(secret) && !out.contains(&hex), "{form} cut at {i}: {out:?}");
            assert!(out.contains("[redacted:secret]"), "{form} cut at {i}: {out:?}");
        }
    }
}
