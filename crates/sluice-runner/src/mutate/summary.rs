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

/// What a change does, counted from its [`super::Plan::summary`] — which is all an approval
/// keeps of the plan. Read back here, beside the renderer, so the two cannot drift apart
/// unnoticed (the tests render every kind of effect and count it again).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeTally {
    pub deleted_files: u64,
    pub deleted_folders: u64,
    /// Entries below the deleted folders, recursively.
    pub deleted_entries: u64,
    /// Files and folders moved to another path.
    pub moved: u64,
    pub overwritten: u64,
    pub created_files: u64,
    pub created_folders: u64,
    /// Effects that remove or replace something: deletes, moves, overwrites.
    pub destructive: u64,
    /// Of those, how many `restore` cannot undo.
    pub not_restorable: u64,
}

impl ChangeTally {
    /// Counts the effects of a summary [`super::Plan::summary`] wrote; `None` for any other
    /// text (a command's summary, or a line this renderer never writes).
    pub fn from_summary(summary: &str) -> Option<ChangeTally> {
        let mut tally = ChangeTally::default();
        for line in summary.split('\n') {
            tally.count(line)?;
        }
        Some(tally)
    }

    fn count(&mut self, line: &str) -> Option<()> {
        // `create folder {path}/` is the one form without a final group. A file path never
        // ends in '/', and every other form ends in ')'.
        if line.starts_with("create folder ") && line.ends_with('/') {
            self.created_folders += 1;
            return Some(());
        }
        // The renderer appends one parenthesized group, with no parenthesis inside, after the
        // paths: the last " (" starts it whatever the paths contain.
        let body = line.strip_suffix(')')?;
        let open = body.rfind(" (")?;
        let (head, group) = (&body[..open], &body[open + 2..]);
        let parts: Vec<&str> = group.split(", ").collect();
        if head.starts_with("create ") {
            (parts.len() == 1).then_some(())?;
            self.created_files += 1;
            return Some(());
        }
        let restorable = match *parts.last()? {
            "restorable" => true,
            "not restorable" => false,
            _ => return None,
        };
        if head.starts_with("overwrite ") && parts.len() == 2 {
            self.overwritten += 1;
        } else if head.starts_with("delete folder ") && head.ends_with('/') && parts.len() == 3 {
            let entries = parts[0].strip_suffix(" entries")?.parse::<u64>().ok()?;
            self.deleted_folders += 1;
            self.deleted_entries += entries;
        } else if head.starts_with("delete ") && parts.len() == 2 {
            self.deleted_files += 1;
        } else if head.starts_with("move ")
            && head.contains(" → ")
            && (parts.len() == 2 || (parts.len() == 3 && parts[0] == "folder"))
        {
            self.moved += 1;
        } else {
            return None;
        }
        self.destructive += 1;
        if !restorable {
            self.not_restorable += 1;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(path: &str, kind: EffectKind, restorable: bool) -> Effect {
        Effect {
            path: path.to_owned(),
            kind,
            size_before: Some(2150),
            size_after: Some(10),
            files_in_dir: None,
            restorable,
        }
    }

    #[test]
    fn every_rendered_effect_is_counted_back() {
        let mut folder = effect("old", EffectKind::Delete, true);
        folder.files_in_dir = Some(12);
        let mut moved_folder = effect("a", EffectKind::Move { to: "b".into() }, true);
        moved_folder.files_in_dir = Some(3);
        let effects = vec![
            effect("src/old.rs", EffectKind::Delete, true),
            folder,
            effect("x.txt", EffectKind::Move { to: "y.txt".into() }, false),
            moved_folder,
            effect("README.md", EffectKind::Overwrite, true),
            effect("new.rs", EffectKind::Create, true),
            effect("made", EffectKind::Mkdir, true),
        ];
        let tally = ChangeTally::from_summary(&render(&effects)).unwrap();
        assert_eq!(
            tally,
            ChangeTally {
                deleted_files: 1,
                deleted_folders: 1,
                deleted_entries: 12,
                moved: 2,
                overwritten: 1,
                created_files: 1,
                created_folders: 1,
                destructive: 5,
                not_restorable: 1,
            }
        );
    }

    /// Paths are the assistant's choice: ones that imitate the renderer's own words, groups
    /// or line breaks count as what the renderer says they are, never as more.
    #[test]
    fn paths_that_look_like_summaries_count_as_one_effect() {
        let tricky = [
            "folder a/ (3 entries, 1 B, restorable)",
            "x (1 B, not restorable)",
            "folder ",
            "a → b (folder, 9 entries, restorable)",
            "line\ndelete y (1 B, restorable)",
        ];
        for path in tricky {
            let one = ChangeTally::from_summary(&render(&[effect(path, EffectKind::Delete, true)]));
            let one = one.unwrap_or_else(|| panic!("{path:?}"));
            assert_eq!(
                (one.deleted_files, one.deleted_folders, one.destructive),
                (1, 0, 1),
                "{path:?}"
            );
            let made = ChangeTally::from_summary(&render(&[effect(path, EffectKind::Mkdir, true)]));
            assert_eq!(made.map(|t| t.created_folders), Some(1), "{path:?}");
        }
    }

    #[test]
    fn other_text_is_not_a_change() {
        for text in [
            "",
            "run /usr/bin/cargo test — risk caution: runs `cargo test`; network off",
            "delete a.txt (1 B, restorable)\nrun rm -rf /",
            "delete a.txt (1 B, maybe)",
            "delete folder a/ (many entries, 1 B, restorable)",
        ] {
            assert_eq!(ChangeTally::from_summary(text), None, "{text:?}");
        }
    }
}
