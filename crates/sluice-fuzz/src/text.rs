//! The one rendering of untrusted text for human eyes (`sluice_core::text`), which approval
//! summaries, the audit log, the CLI, the tray and the window all go through.
//!
//! Properties, on any UTF-8 text: `visible` leaves no control character, no bidi control and
//! no other deceptive character (`is_hidden`) in its output, which is one line; it changes
//! nothing when there was nothing to show, and is idempotent. `visible_lines` keeps exactly the
//! text's line breaks and makes each line `visible`.

use sluice_core::text::{is_hidden, visible, visible_lines};

/// Bidi controls, named here rather than taken from the code under test: embeddings,
/// overrides, isolates, marks and the Arabic letter mark.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

pub fn visible_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let shown = visible(&text);
    for c in shown.chars() {
        assert!(!c.is_control() && !is_bidi(c) && !is_hidden(c), "{c:?} left in {shown:?}");
    }
    if !text.contains(is_hidden) {
        assert_eq!(shown, text, "changed text with nothing hidden in it");
    }
    assert_eq!(visible(&shown), shown, "not idempotent");

    let lines = visible_lines(&text);
    assert_eq!(lines.split('\n').count(), text.split('\n').count(), "line breaks changed");
    for (line, original) in lines.split('\n').zip(text.split('\n')) {
        assert_eq!(line, visible(original), "a line rendered differently");
    }
}
