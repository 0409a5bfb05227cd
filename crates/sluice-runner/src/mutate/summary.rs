//! The human one-liners of [`super::Plan::summary`]. Built only from project-relative paths and
//! sizes; every character that could hide or disguise text on a screen or in a terminal is
//! shown as its code point, and nothing is truncated.

use super::args::{Effect, EffectKind};

/// `s` with control characters (terminal escapes included), bidi overrides and zero-width
/// characters replaced by a visible `⟨U+202E⟩`.
pub(crate) fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || sluice_core::redact::is_deceptive(c) {
            out.push_str(&format!("⟨U+{:04X}⟩", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else if b < KB * KB * KB {
        format!("{:.1} MB", b / KB / KB)
    } else {
        format!("{:.1} GB", b / KB / KB / KB)
    }
}

pub(crate) fn render(effects: &[Effect]) -> String {
    effects.iter().map(line).collect::<Vec<_>>().join("\n")
}

fn line(e: &Effect) -> String {
    let path = visible(&e.path);
    let restorable = if e.restorable { "restorable" } else { "not restorable" };
    let sz = |s: Option<u64>| s.map(size).unwrap_or_else(|| "?".into());
    match &e.kind {
        EffectKind::Create => format!("create {path} ({})", sz(e.size_after)),
        EffectKind::Overwrite => {
            format!("overwrite {path} ({} → {}, {restorable})", sz(e.size_before), sz(e.size_after))
        }
        EffectKind::Delete => match e.files_in_dir {
            Some(n) => {
                format!("delete folder {path}/ ({n} entries, {}, {restorable})", sz(e.size_before))
            }
            None => format!("delete {path} ({}, {restorable})", sz(e.size_before)),
        },
        EffectKind::Move { to } => {
            let what = match e.files_in_dir {
                Some(n) => format!("folder, {n} entries"),
                None => sz(e.size_before),
            };
            format!("move {path} → {} ({what}, {restorable})", visible(to))
        }
        EffectKind::Mkdir => format!("create folder {path}/"),
    }
}
