//! The human one-liners of [`super::Plan::summary`] and the counts of [`super::Plan::tally`],
//! both from the plan's effects. The lines are built only from project-relative paths and sizes;
//! every character that could hide or disguise text on a screen or in a terminal is shown as its
//! code point, and nothing is truncated.

use sluice_core::ChangeTally;
use sluice_core::text::visible_owned as visible;

use super::args::{Effect, EffectKind};

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
        EffectKind::Chmod { mode } => format!("set the mode of {path} to {mode:o}"),
    }
}

/// What `effects` do, counted from the effects themselves (never from their rendering).
pub(crate) fn tally(effects: &[Effect]) -> ChangeTally {
    let mut t = ChangeTally::default();
    for e in effects {
        match (&e.kind, e.files_in_dir) {
            (EffectKind::Create, _) => t.created_files += 1,
            (EffectKind::Mkdir, _) => t.created_folders += 1,
            (EffectKind::Overwrite, _) => t.overwritten += 1,
            (EffectKind::Delete, Some(n)) => {
                t.deleted_folders += 1;
                t.deleted_entries += n;
            }
            (EffectKind::Delete, None) => t.deleted_files += 1,
            (EffectKind::Move { .. }, _) => t.moved += 1,
            // The tally has no column of its own for it: an existing file changes.
            (EffectKind::Chmod { .. }, _) => t.overwritten += 1,
        }
        if matches!(e.kind, EffectKind::Overwrite | EffectKind::Delete | EffectKind::Move { .. }) {
            t.destructive += 1;
            if !e.restorable {
                t.not_restorable += 1;
            }
        }
    }
    t
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
    fn every_kind_of_effect_is_counted() {
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
        assert_eq!(
            tally(&effects),
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

    /// Paths are the assistant's choice: ones that imitate the renderer's own words, groups or
    /// line breaks change nothing in the count, which never looks at the rendered text.
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
            let one = tally(&[effect(path, EffectKind::Delete, true)]);
            assert_eq!(
                (one.deleted_files, one.deleted_folders, one.destructive),
                (1, 0, 1),
                "{path:?}"
            );
            let made = tally(&[effect(path, EffectKind::Mkdir, true)]);
            assert_eq!((made.created_folders, made.destructive), (1, 0), "{path:?}");
            // The rendering shows the line break as a code point: still one line.
            assert_eq!(render(&[effect(path, EffectKind::Delete, true)]).lines().count(), 1);
        }
    }
}
