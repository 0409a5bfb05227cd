//! Tests of the redactor: each secret format, the anchors, and streaming across chunk boundaries.

use super::{mask_bytes, redact};

/// Plain base64 of `bytes` (standard alphabet, padded): the tests' independent encoder.
fn b64(bytes: &[u8]) -> String {
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for j in 0..4 {
            if j <= chunk.len() {
                out.push(char::from(table[((n >> (18 - 6 * j)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn utf16(text: &str, little_endian: bool) -> String {
    text.chars().flat_map(|c| if little_endian { [c, '\0'] } else { ['\0', c] }).collect()
}

/// OR-01: a Sluice token hex- or base64-encoded (inside a longer encoded text, at each
/// alignment) or as UTF-16 is still found.
#[test]
fn encoded_sluice_tokens_are_redacted() {
    let token = format!("slc_{}", "k3x9".repeat(13));
    let mut cases = vec![hex(token.as_bytes()), hex(token.as_bytes()).to_uppercase()];
    for prefix in ["", "a", "ab", "user:", "Authorization: "] {
        cases.push(b64(format!("{prefix}{token}").as_bytes()));
        cases.push(b64(format!("{prefix}{token}").as_bytes()).replace('+', "-").replace('/', "_"));
    }
    cases.push(utf16(&token, true));
    cases.push(utf16(&token, false));
    for case in cases {
        let text = format!("out: {case} end");
        let out = redact(&text);
        assert!(out.contains("[redacted:sluice-token]"), "{case} -> {out}");
    }
    assert!(matches!(redact("c2xjX and NsY1 and 736c635f alone"), std::borrow::Cow::Borrowed(_)));
}

/// OR-01: the engine's own secret, raw or encoded, wherever it appears in a stream.
#[test]
fn secrets_are_redacted_in_their_encodings_too() {
    use super::StreamRedactor;
    let secret = "f00dfacecafe0451beef";
    let mut forms = vec![
        secret.to_owned(),
        format!("{secret}xyz"),
        hex(secret.as_bytes()),
        hex(secret.as_bytes()).to_uppercase(),
        utf16(secret, true),
        utf16(secret, false),
    ];
    for prefix in ["", "k", "ke", "key=", "The secret is "] {
        let text = format!("{prefix}{secret} and more");
        forms.push(b64(text.as_bytes()));
        forms.push(b64(text.as_bytes()).replace('+', "-").replace('/', "_"));
    }
    for form in forms {
        let text = format!("before {form} after\n");
        for split in [1, 3, 64] {
            let mut r = StreamRedactor::default().with_secret(secret, "[redacted:secret]");
            let mut out = String::new();
            for chunk in text.as_bytes().chunks(split) {
                out.push_str(&r.push(std::str::from_utf8(chunk).unwrap()));
            }
            out.push_str(&r.finish());
            assert!(out.contains("[redacted:secret]"), "{form:?} split {split}: {out:?}");
            assert!(!out.contains(secret), "{form:?} split {split}: {out:?}");
        }
    }
}

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

/// The anchor scan only skips work: on text with and without secrets, near misses and
/// non-ASCII text, every rule's match begins where its anchor matches, and [`redact`] gives
/// what running each rule gives.
#[test]
fn anchors_skip_only_text_no_rule_matches() {
    use super::{ANCHORS, RULES, SOURCES, redact_each};
    let token = format!("slc_{}", "k3x9".repeat(13));
    let mut texts = vec![
        String::new(),
        "0123456789abcdef\n".repeat(64),
        "plain prose, a task-list, an AKIA, ghp_ short, sk- and bearer alone".to_owned(),
        "café ☕ naïve — ünïcödé text with no secret".to_owned(),
        format!("token {token}, hex {}", hex(token.as_bytes())),
        format!("b64 {} utf16 {}", b64(token.as_bytes()), utf16(&token, false)),
        "-----BEGIN EC PRIVATE KEY-----\nabc\n-----END EC PRIVATE KEY-----".to_owned(),
        format!("ghp_{} github_pat_{}", "A".repeat(36), "b_".repeat(20)),
        format!("xoxb-{} sk-proj-{} AKIA{}", "1".repeat(10), "x".repeat(20), "Z".repeat(16)),
        "eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl and BEARER abcdefghijklmnopqrstu".to_owned(),
        format!("ünï ghp_{} café Bearer {}", "9".repeat(40), "t".repeat(20)),
    ];
    texts.push(texts.concat());
    for text in &texts {
        for (rule, (_, anchor, _)) in RULES.iter().zip(SOURCES) {
            let anchor = regex::Regex::new(anchor).unwrap();
            for m in rule.re.find_iter(text) {
                for anchors in [&anchor, &*ANCHORS] {
                    assert!(
                        anchors.find_at(text, m.start()).is_some_and(|a| a.start() == m.start()),
                        "{} matched {:?} without its anchor",
                        rule.kind,
                        m.as_str()
                    );
                }
            }
        }
        assert_eq!(redact(text), redact_each(text), "{text}");
    }
}

/// The streaming redactor skips the rules when [`super::ANCHORS`] finds nothing in the text it
/// holds, and then also for any prefix of that text it emits: that holds while an anchor's only
/// look-around is a `\b` at its start (one at its end could match at the end of a prefix and not
/// in the whole text).
#[test]
fn anchors_look_around_only_at_their_start() {
    for (kind, anchor, _) in super::SOURCES {
        let rest = anchor.trim_start_matches("(?i)").trim_start_matches(r"\b");
        for look in [r"\b", r"\B", "^", "$", r"\A", r"\z", "(?m"] {
            assert!(!rest.contains(look), "{kind} anchor {anchor:?} has {look}");
        }
        // An anchor's `\b` comes before an ASCII letter or digit, where [`super::ANCHORS`]'
        // ASCII boundary holds wherever a Unicode one does.
        if let Some(after) = anchor.trim_start_matches("(?i)").strip_prefix(r"\b") {
            let next = after.trim_start_matches('(').chars().next().unwrap_or(' ');
            assert!(next.is_ascii_alphanumeric(), "{kind} anchor {anchor:?}");
        }
    }
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

#[test]
fn mask_bytes_overwrites_secrets_in_binary_in_place() {
    let token = format!("slc_{}", "a1".repeat(16));
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----";
    let mut bytes = vec![0u8, 0xff, 0x89];
    bytes.extend_from_slice(token.as_bytes());
    bytes.extend_from_slice(&[0, 0xfe]);
    bytes.extend_from_slice(key.as_bytes());
    bytes.push(0xc3);
    let len = bytes.len();
    assert!(mask_bytes(&mut bytes));
    assert_eq!(bytes.len(), len);
    assert_eq!(&bytes[..3], &[0, 0xff, 0x89]);
    assert!(bytes[3..3 + token.len()].iter().all(|&b| b == b'*'));
    assert_eq!(&bytes[3 + token.len()..5 + token.len()], &[0, 0xfe]);
    assert!(!String::from_utf8_lossy(&bytes).contains("MIIB"));
    assert_eq!(bytes[len - 1], 0xc3);

    let mut clean = vec![0x89, b'P', b'N', b'G', 0, 1, 2, 0xff];
    assert!(!mask_bytes(&mut clean));
    assert_eq!(clean, [0x89, b'P', b'N', b'G', 0, 1, 2, 0xff]);
}

/// A pause releases a prompt without a trailing space, and holds whatever could still begin a
/// secret or a literal.
#[test]
fn a_pause_shows_a_prompt_and_holds_what_could_begin_a_secret() {
    use super::StreamRedactor;
    let fresh = || {
        StreamRedactor::default()
            .with_literal("/home/u/proj", ".")
            .with_secret("f00dfacecafe0451beef", "[redacted:secret]")
    };
    for prompt in ["name?", "Continue? [Y/n]", ">>>", "Password:", "(Pdb)", "ok\nnext:", "é☕"] {
        let mut r = fresh();
        let mut out = r.push(prompt);
        r.flush_idle_into(&mut out);
        assert_eq!(out, prompt, "{prompt:?} is held while the program waits");
        assert!(!r.holding());
    }
    for (text, shown) in [
        ("token: ghp_", "token: "),
        ("ghp_abc", ""),
        ("key=sk-", ""),
        ("id AKIA", "id "),
        ("Authorization: Bearer ", "Authorization: "),
        ("x -----BEGIN ", "x "),
        ("jwt eyJhbGciOi", "jwt "),
        ("slc_k3x9", ""),
        ("xoxb-12", ""),
        ("c2xjX", ""),
        ("at /home/u/pr", "at "),
        ("s=f00dface", ""),
    ] {
        let mut r = fresh();
        let mut out = r.push(text);
        r.flush_idle_into(&mut out);
        assert_eq!(out, shown, "{text:?}: only what cannot begin a secret is released");
        assert!(r.holding(), "{text:?}");
    }
    // What was held is redacted whole once the rest comes.
    let mut r = fresh();
    let mut out = r.push("token: ghp_");
    r.flush_idle_into(&mut out);
    out += &r.push(&format!("{} done\n", "A".repeat(36)));
    out += &r.finish();
    assert_eq!(out, "token: [redacted:github-token] done\n");
}

/// Text released mid-word by a pause is continued, not restarted: a rule's `\b` sees the word
/// go on, so the release changes no match (here a `bearer` glued to the word before is no
/// keyword, and the real one after it still hides its token).
#[test]
fn a_pause_in_the_middle_of_a_word_changes_no_match() {
    use super::StreamRedactor;
    let rest = format!("bearer abcdefghijklmnop/Bearer {}\n", "t".repeat(20));
    let mut plain = StreamRedactor::default();
    let whole = plain.push(&format!("user{rest}")) + &plain.finish();
    let mut paused = StreamRedactor::default();
    let mut out = paused.push("user");
    paused.flush_idle_into(&mut out);
    assert_eq!(out, "user", "the word so far is shown while the program waits");
    out += &paused.push(&rest);
    out += &paused.finish();
    assert_eq!(out, whole);
    assert!(!out.contains("tttt"), "{out}");
}

/// The anchor scan's word boundaries are ASCII ones, the rules' Unicode ones: a secret after a
/// non-ASCII letter is still judged by its rule (not a word start there), after non-ASCII
/// punctuation it is redacted, and the two scans agree on each.
#[test]
fn anchors_with_ascii_boundaries_miss_nothing_the_rules_find() {
    let key = "sk-proj-abcdefghijklmnopqrstuvwx";
    assert_eq!(redact(&format!("key—{key}")), "key—[redacted:openai-key]");
    assert_eq!(redact(&format!("clé{key}")), format!("clé{key}"));
    assert_eq!(redact("«Bearer abcdefghijklmnopqrstu»"), "«[redacted:bearer]»");
    for text in [format!("é{key}"), format!("—{key}"), format!("日本{key}")] {
        assert_eq!(super::redact_each(&text), redact(&text), "{text}");
    }
}
