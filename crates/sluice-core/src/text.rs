//! Text that reaches a human's eyes: the one rendering every surface uses for anything an
//! assistant, a project or a job chose (a program, each argument, an environment name and
//! value, a folder, a path, a label), so that the CLI, `--json`, the tray, the window, a
//! notification and the audit log all show the same characters.
//!
//! A character is shown as its code point (`⟨U+202E⟩`) when a screen or a terminal could act on
//! it or draw it as something else: every control character (C0, DEL, C1: terminal escapes and
//! line breaks) and every [deceptive](is_deceptive) character. The set comes from Unicode's own
//! properties (through ICU4X, already in the build for URL handling), not from a hand-made list,
//! so a character Unicode adds to one of those classes is covered when the data is updated.

use std::borrow::Cow;
use std::fmt::Write;

use icu_properties::props::{BidiControl, DefaultIgnorableCodePoint, GeneralCategory};
use icu_properties::{CodePointMapData, CodePointSetData};

/// A character that changes how the text around it is displayed, or that has no fixed look of
/// its own: format characters (`Cf`: bidi embeddings and isolates, zero-width joiners, the BOM,
/// the soft hyphen, tag characters), line and paragraph separators (`Zl`, `Zp`),
/// default-ignorable code points (variation selectors, Hangul fillers, reserved ignorables),
/// bidi controls, private-use code points (`Co`, drawn as whatever a font puts there) and
/// unassigned ones (`Cn`). Control characters are checked apart ([`char::is_control`]).
pub fn is_deceptive(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    let category = CodePointMapData::<GeneralCategory>::new().get(c);
    matches!(
        category,
        GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
    ) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointSetData::new::<BidiControl>().contains(c)
}

/// Whether [`visible`] would change `c`.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || is_deceptive(c)
}

/// `s` with every control and deceptive character shown as its code point (`⟨U+202E⟩`);
/// borrowed when nothing needed it. A newline is a control character too: the result is always
/// one line.
pub fn visible(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(is_hidden) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if is_hidden(c) {
            let _ = write!(out, "⟨U+{:04X}⟩", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`visible`] as an owned `String`, for the fields of shapes that leave Sluice (DTOs, plan
/// summaries).
pub fn visible_owned(s: &str) -> String {
    visible(s).into_owned()
}

/// Text made of lines (an approval's summary: one line per effect): each line [`visible`], the
/// line breaks between them kept. A carriage return or another line break inside a line is shown
/// as its code point, so the lines a reader sees are exactly the ones the text was built from.
pub fn visible_lines(s: &str) -> Cow<'_, str> {
    if !s.split('\n').any(|line| line.contains(is_hidden)) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.split('\n').map(visible).collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for s in ["", "cargo test --release", "café/naïve.rs", "日本語 ファイル", "a\u{301}"]
        {
            assert!(matches!(visible(s), Cow::Borrowed(t) if t == s), "{s:?}");
        }
    }

    #[test]
    fn controls_and_terminal_escapes_become_code_points() {
        assert_eq!(visible("a\nb"), "a⟨U+000A⟩b");
        assert_eq!(visible("\u{1b}]52;c;cGF3bmVk\u{7}"), "⟨U+001B⟩]52;c;cGF3bmVk⟨U+0007⟩");
        assert_eq!(visible("\u{9b}31m"), "⟨U+009B⟩31m");
        assert_eq!(visible("tab\there"), "tab⟨U+0009⟩here");
    }

    /// The class, not a list: characters no earlier hand-made list named are caught because of
    /// the Unicode property that makes them deceptive.
    #[test]
    fn every_class_of_deceptive_character_is_caught_by_its_property() {
        let cases = [
            ('\u{202E}', "bidi override (Cf, Bidi_Control)"),
            ('\u{2067}', "right-to-left isolate"),
            ('\u{061C}', "Arabic letter mark"),
            ('\u{200B}', "zero-width space"),
            ('\u{200D}', "zero-width joiner"),
            ('\u{00AD}', "soft hyphen"),
            ('\u{FEFF}', "byte order mark"),
            ('\u{180E}', "Mongolian vowel separator (Cf)"),
            ('\u{2028}', "line separator (Zl)"),
            ('\u{2029}', "paragraph separator (Zp)"),
            ('\u{FE0F}', "variation selector (default ignorable)"),
            ('\u{E0100}', "variation selector supplement"),
            ('\u{3164}', "Hangul filler (default ignorable)"),
            ('\u{115F}', "Hangul choseong filler"),
            ('\u{E0041}', "tag letter A (Cf)"),
            ('\u{1D173}', "musical symbol begin beam (Cf)"),
            ('\u{E000}', "private use (Co)"),
            ('\u{10FFFD}', "supplementary private use"),
            ('\u{0378}', "unassigned (Cn)"),
            ('\u{E0FFF}', "reserved default ignorable"),
        ];
        for (c, what) in cases {
            assert!(is_deceptive(c), "{what}: U+{:04X}", c as u32);
            assert_eq!(visible(&format!("x{c}y")), format!("x⟨U+{:04X}⟩y", c as u32), "{what}");
        }
    }

    #[test]
    fn lines_keep_their_breaks_and_nothing_else() {
        assert!(matches!(visible_lines("delete a\ncreate b"), Cow::Borrowed(_)));
        assert_eq!(
            visible_lines("run x with A='1\u{2028}  action: rm'\r\ncreate \u{202E}b"),
            "run x with A='1⟨U+2028⟩  action: rm'⟨U+000D⟩\ncreate ⟨U+202E⟩b"
        );
    }

    #[test]
    fn ordinary_letters_marks_and_symbols_stay() {
        for c in ['é', 'ß', 'Ω', 'ж', '中', 'ア', '\u{301}', '€', '→', '✓', '😀', ' ', '\u{3000}']
        {
            assert!(!is_hidden(c), "U+{:04X}", c as u32);
        }
    }
}
