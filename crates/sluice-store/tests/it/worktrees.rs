//! Worktree projects at the store (schema 19): made in one sealed write from their parent,
//! never more than it, sealed with their link, and removed with it; the migration adds the
//! link without resealing anything.

use rusqlite::Connection;
use sluice_core::{AccessMode, Coded, ErrorCode, ExecMode};
use sluice_store::FindingKind;

use crate::{add_project, data_dir, open};

fn raw(dir: &std::path::Path) -> Connection {
    Connection::open(dir.join(sluice_store::DB_FILE)).unwrap()
}

fn kinds(s: &sluice_store::Store) -> Vec<FindingKind> {
    s.integrity().unwrap().iter().map(|f| f.kind).collect()
}

#[test]
fn a_worktree_project_copies_its_parent_and_is_sealed_with_its_link() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let parent = add_project(&s, "app");
    s.set_project_modes(&parent.id, None, Some(ExecMode::Safe)).unwrap();
    s.set_project_shield(&parent.id, Some(&["*.secret".to_owned()])).unwrap();
    s.set_project_policy(&parent.id, Some(false), Some(true)).unwrap();
    let root = crate::root("/srv/projects/app.worktrees/try");
    let wt = s.insert_worktree_project(&parent.id, "app@try", &root, None).unwrap();
    assert_eq!(wt.worktree_of.as_ref(), Some(&parent.id));
    assert_eq!((wt.access, wt.exec), (AccessMode::ReadWrite, ExecMode::Safe));
    assert_eq!(wt.shield_patterns, Some(vec!["*.secret".to_owned()]));
    assert!(!wt.ask_deletes && wt.ask_writes);
    assert!(wt.state.is_available());
    assert!(s.integrity().unwrap().is_empty(), "{:?}", s.integrity());
    // Not from a worktree, and not from a project that does not exist.
    let err = s.insert_worktree_project(&wt.id, "app@deeper", &root, None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    let missing = sluice_core::ProjectId::generate();
    let err = s.insert_worktree_project(&missing, "x@y", &root, None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound, "{err}");
    // The link is sealed: cut or redirected outside Sluice, the project is refused.
    raw(&dir)
        .execute("UPDATE projects SET worktree_of = NULL WHERE id = ?1", [wt.id.as_str()])
        .unwrap();
    assert!(!s.project(&wt.id).unwrap().unwrap().state.is_available());
    assert_eq!(kinds(&s), [FindingKind::Project]);
    let other = add_project(&s, "other");
    raw(&dir)
        .execute(
            "UPDATE projects SET worktree_of = ?2 WHERE id = ?1",
            [wt.id.as_str(), other.id.as_str()],
        )
        .unwrap();
    assert!(!s.project(&wt.id).unwrap().unwrap().state.is_available());
    raw(&dir)
        .execute(
            "UPDATE projects SET worktree_of = ?2 WHERE id = ?1",
            [wt.id.as_str(), parent.id.as_str()],
        )
        .unwrap();
    assert!(s.project(&wt.id).unwrap().unwrap().state.is_available(), "undone, it verifies");
    // An ordinary project made a worktree outside Sluice is refused too.
    raw(&dir)
        .execute(
            "UPDATE projects SET worktree_of = ?2 WHERE id = ?1",
            [other.id.as_str(), parent.id.as_str()],
        )
        .unwrap();
    assert!(!s.project(&other.id).unwrap().unwrap().state.is_available());
    raw(&dir)
        .execute("UPDATE projects SET worktree_of = NULL WHERE id = ?1", [other.id.as_str()])
        .unwrap();
    // A parent whose seal fails makes no worktree.
    raw(&dir)
        .execute("UPDATE projects SET exec = 'any' WHERE id = ?1", [parent.id.as_str()])
        .unwrap();
    let err = s
        .insert_worktree_project(&parent.id, "app@two", &crate::root("/srv/two"), None)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Forbidden, "{err}");
    raw(&dir)
        .execute("UPDATE projects SET exec = 'safe' WHERE id = ?1", [parent.id.as_str()])
        .unwrap();
    // Removing the parent removes its worktrees, and the scopes naming them stay sealed.
    let token = s
        .insert_token(&sluice_store::NewToken {
            label: "scoped".into(),
            hash: [9; 32],
            scope: Some(vec![wt.id.clone(), other.id.clone()]),
            expires_ms: None,
            profile: sluice_core::Profile::Full,
        })
        .unwrap();
    s.delete_project(&parent.id).unwrap();
    assert!(s.project(&wt.id).unwrap().is_none());
    assert!(s.integrity().unwrap().is_empty(), "{:?}", s.integrity());
    let read = s.find_token_by_hash(&[9; 32]).unwrap().unwrap();
    assert_eq!(read.id, token.id);
    assert_eq!(read.scope, Some(vec![other.id]));
}

#[test]
fn projects_sealed_before_worktrees_existed_keep_verifying_after_the_migration() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let p = add_project(&s, "a");
    drop(s);
    // Schema 18 as it was: no worktree_of column. Run twice: the step adds it only when missing.
    for _ in 0..2 {
        raw(&dir)
            .execute_batch(
                "ALTER TABLE projects DROP COLUMN worktree_of; PRAGMA user_version = 18;",
            )
            .unwrap();
        let s = open(&dir);
        assert_eq!(s.schema_version().unwrap(), sluice_store::SCHEMA_VERSION);
        assert_eq!(sluice_store::SCHEMA_VERSION, 20);
        assert!(s.integrity().unwrap().is_empty(), "{:?}", s.integrity());
        let read = s.project(&p.id).unwrap().unwrap();
        assert!(read.state.is_available() && read.worktree_of.is_none());
    }
    // Already at the latest with its version put back: migrates again without a change.
    raw(&dir).execute_batch("PRAGMA user_version = 18;").unwrap();
    assert!(open(&dir).integrity().unwrap().is_empty());
    // Its seal was not blessed anew: an edit made before the upgrade still shows.
    raw(&dir)
        .execute_batch(
            "ALTER TABLE projects DROP COLUMN worktree_of; UPDATE projects SET exec = 'safe'; \
             PRAGMA user_version = 18;",
        )
        .unwrap();
    let s = open(&dir);
    assert_eq!(kinds(&s), [FindingKind::Project]);
}
