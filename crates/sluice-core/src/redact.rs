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
}
