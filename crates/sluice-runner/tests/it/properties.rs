//! "Patch, then restore, gives back the original bytes", as a property: random files, a random
//! multi-file patch of updates, additions and deletions (Codex's format), applied and then
//! undone through `restore`; the project is byte for byte what it was.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use sluice_guard::Shield;
use sluice_runner::*;

use crate::rig::rig;

/// A file's lines: plain text that never reads as a patch marker.
fn lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z0-9 ]{0,12}", 1..6)
}

/// One file's lines before and after; `None` where it is absent.
type Change = (Option<Vec<String>>, Option<Vec<String>>);

/// What happens to each of four files: absent before and/or after, else its lines.
fn plan() -> impl Strategy<Value = Vec<Change>> {
    prop::collection::vec((prop::option::of(lines()), prop::option::of(lines())), 4)
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_file() {
            out.insert(
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            );
        }
    }
    out
}

fn patch(changes: &[Change]) -> Option<String> {
    let mut text = String::from("*** Begin Patch\n");
    let mut any = false;
    for (i, (before, after)) in changes.iter().enumerate() {
        let name = format!("p/f{i}.txt");
        match (before, after) {
            (Some(old), Some(new)) if old != new => {
                text += &format!("*** Update File: {name}\n@@\n");
                text.extend(old.iter().map(|l| format!("-{l}\n")));
                text.extend(new.iter().map(|l| format!("+{l}\n")));
            }
            (None, Some(new)) => {
                text += &format!("*** Add File: {name}\n");
                text.extend(new.iter().map(|l| format!("+{l}\n")));
            }
            (Some(_), None) => text += &format!("*** Delete File: {name}\n"),
            _ => continue,
        }
        any = true;
    }
    any.then(|| text + "*** End Patch\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn patch_then_restore_gives_back_the_original_bytes(changes in plan()) {
        let rig = rig();
        let dir = rig.proj.join("p");
        std::fs::create_dir_all(&dir).unwrap();
        for (i, (before, _)) in changes.iter().enumerate() {
            if let Some(lines) = before {
                std::fs::write(dir.join(format!("f{i}.txt")), lines.join("\n") + "\n").unwrap();
            }
        }
        let Some(text) = patch(&changes) else { return Ok(()) };
        let original = files(&dir);
        let ws = Arc::new(Workspace::open(&rig.proj, &Shield::default_patterns()).unwrap());
        let m = Mutations::open(ws, &rig.base.join("state"), BackupLimits::default()).unwrap();
        let plan = m.plan_apply_patch(&ApplyPatchArgs { patch: text.clone() }).unwrap();
        let done = m.commit(&plan).unwrap();
        for (i, (_, after)) in changes.iter().enumerate() {
            let now = std::fs::read_to_string(dir.join(format!("f{i}.txt"))).ok();
            prop_assert_eq!(now, after.as_ref().map(|l| l.join("\n") + "\n"), "{}", text);
        }
        let restore = m.plan_restore(&RestoreArgs { operation_id: done.operation_id }).unwrap();
        m.commit(&restore).unwrap();
        prop_assert_eq!(files(&dir), original, "{}", text);
    }
}
