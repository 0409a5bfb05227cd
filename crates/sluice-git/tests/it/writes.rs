//! Git writes through the public API: a write's undo record, read back from the state folder,
//! is checked like a request, so a record edited there cannot put an option or another ref on
//! git's command line.

use sluice_git::{GitBranchArgs, GitJournal, RefOp};

use crate::support::{TestRepo, shield};

#[test]
fn a_tampered_undo_record_is_refused_before_git_runs() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    let head = t.commit_all("first");
    let repo = t.open();
    let state = tempfile::tempdir().unwrap();
    let journal = GitJournal::open(state.path());
    let args = GitBranchArgs { action: RefOp::Create, name: "side".into(), ..Default::default() };
    let plan = sluice_git::plan_branch(&repo, &args, &shield).unwrap();
    let done = sluice_git::execute(&repo, &plan, &journal, "git_branch", None).unwrap();
    let id = done.operation_id.unwrap();
    // The record as written undoes cleanly to a plan.
    assert!(sluice_git::plan_undo(&repo, &journal, &id, &shield).is_ok());
    let file = state.path().join("git-operations").join(format!("{id}.json"));
    let original = std::fs::read_to_string(&file).unwrap();
    assert!(original.contains("refs/heads/side") && original.contains(&head), "{original}");
    let zero = "0".repeat(40);
    for (from, to) in [
        ("refs/heads/side", "--upload-pack=touch /tmp/x"),
        ("refs/heads/side", "refs/heads/-x"),
        ("refs/heads/side", "refs/remotes/origin/main"),
        ("refs/heads/side", "refs/heads/a/../../config"),
        ("refs/heads/side", "HEAD"),
        (head.as_str(), "--all"),
        (head.as_str(), "HEAD~1"),
        ("\"switch_to\": null", "\"switch_to\": \"--orphan=x\""),
        ("\"before\": null", &format!("\"before\": \"{zero}:x\"")),
    ] {
        assert!(original.contains(from), "{from} in {original}");
        std::fs::write(&file, original.replace(from, to)).unwrap();
        let err = sluice_git::plan_undo(&repo, &journal, &id, &shield).unwrap_err();
        assert_eq!(sluice_core::Coded::code(&err), sluice_core::ErrorCode::InvalidArgument, "{to}");
    }
    // A record saved under another operation's name is no record of this one.
    std::fs::write(&file, &original).unwrap();
    let other = format!("git_{}", "f".repeat(32));
    std::fs::copy(&file, state.path().join("git-operations").join(format!("{other}.json")))
        .unwrap();
    assert!(sluice_git::plan_undo(&repo, &journal, &other, &shield).is_err());
    assert_eq!(t.git(&["rev-parse", "refs/heads/side"]).trim(), head, "nothing moved");
}
