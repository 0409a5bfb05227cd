//! Author, committer and tagger e-mail addresses stay out of every tool's output unless the
//! project shows them; a commit message keeps its own (it is the commit's content).

use sluice_git::{
    EMAIL_HIDDEN, GitDiffArgs, GitEmails, GitLogArgs, GitShowArgs, GitStatusArgs, Repo,
};

use crate::support::{TestRepo, nothing_hidden};

const AUTHOR: &str = "ada.author-7f3e@authors.example.org";
const COMMITTER: &str = "cy.committer-91b2@committers.example.net";
const TAGGER: &str = "tess.tagger-c05d@taggers.example.com";
const IN_NAME: &str = "name.holds-4a1d@names.example.org";
const TRAILER: &str = "sam.signoff-e88a@trailers.example.org";

/// A history whose every commit has a distinctive author and committer address: a root, a
/// side branch merged back, an annotated tag with its own tagger, an author whose name holds
/// an address, and a message with a `Signed-off-by:` trailer.
fn history() -> TestRepo {
    let t = TestRepo::new();
    let commit = |message: &str, author: &str, email: &str| {
        t.git(&["add", "-A"]);
        let out = t
            .git_command(&["commit", "-q", "--no-verify", "-m", message])
            .env("GIT_AUTHOR_NAME", author)
            .env("GIT_AUTHOR_EMAIL", email)
            .env("GIT_COMMITTER_NAME", "Cy Committer")
            .env("GIT_COMMITTER_EMAIL", COMMITTER)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    t.write("a.txt", "one\n");
    commit("root", "Ada Author", AUTHOR);
    let tag = t
        .git_command(&["tag", "-a", "v1", "-m", "first release"])
        .env("GIT_COMMITTER_EMAIL", TAGGER)
        .output()
        .unwrap();
    assert!(tag.status.success());
    t.git(&["checkout", "-q", "-b", "side"]);
    t.write("side.txt", "side\n");
    commit(&format!("side work\n\nSigned-off-by: Sam <{TRAILER}>"), "Ada Author", AUTHOR);
    t.git(&["checkout", "-q", "main"]);
    t.write("a.txt", "two\n");
    commit("main work", &format!("Nick <{IN_NAME}>"), AUTHOR);
    let merge = t
        .git_command(&["merge", "-q", "--no-edit", "side"])
        .env("GIT_COMMITTER_EMAIL", COMMITTER)
        .env("GIT_AUTHOR_EMAIL", AUTHOR)
        .output()
        .unwrap();
    assert!(merge.status.success());
    t.write("a.txt", "three\n");
    t.write("new.txt", "untracked\n");
    t
}

/// Everything every git tool says about `repo`, as one text.
fn every_output(repo: &Repo, emails: GitEmails) -> String {
    let h = &nothing_hidden;
    let mut all = vec![
        format!("{:?}", sluice_git::status(repo, &GitStatusArgs::default(), h)),
        format!("{:?}", sluice_git::diff(repo, &GitDiffArgs::default(), h)),
    ];
    for rev in [None, Some("v1"), Some("main..side"), Some("HEAD@{0}")] {
        let args = GitLogArgs { rev: rev.map(str::to_owned), ..Default::default() };
        let log = sluice_git::log(repo, &args, h, emails).unwrap();
        all.push(serde_json::to_string(&log).unwrap());
    }
    for rev in ["HEAD", "HEAD^2", "HEAD~1", "v1", "HEAD~2", "no-such-rev"] {
        let args = GitShowArgs { rev: rev.into(), ..Default::default() };
        all.push(match sluice_git::show(repo, &args, h, emails) {
            Ok(shown) => serde_json::to_string(&shown).unwrap(),
            Err(err) => err.to_string(),
        });
    }
    all.join("\n")
}

#[test]
fn hidden_by_default_no_address_leaves_any_tool() {
    let t = history();
    let all = every_output(&t.open(), GitEmails::default());
    for address in [AUTHOR, COMMITTER, TAGGER, IN_NAME] {
        let (local, domain) = address.split_once('@').unwrap();
        assert!(!all.contains(local) && !all.contains(domain), "{address} leaked:\n{all}");
    }
    assert!(!all.contains("author_email"), "no field pretends to hold one:\n{all}");
    assert!(all.contains(&format!("Nick {EMAIL_HIDDEN}")), "{all}");
    // A trailer is the message's content, and stays.
    assert!(all.contains(TRAILER), "{all}");
}

#[test]
fn shown_when_the_project_allows_it() {
    let t = history();
    let repo = t.open();
    let log =
        sluice_git::log(&repo, &GitLogArgs::default(), &nothing_hidden, GitEmails::Show).unwrap();
    assert!(log.commits.iter().all(|c| c.author_email.as_deref() == Some(AUTHOR)), "{log:?}");
    // git keeps no angle brackets in a name: `Nick <…>` is stored as `Nick …`.
    assert!(log.commits.iter().any(|c| c.author_name == format!("Nick {IN_NAME}")));
    let args = GitShowArgs { rev: "HEAD~1".into(), ..Default::default() };
    let shown = sluice_git::show(&repo, &args, &nothing_hidden, GitEmails::Show).unwrap();
    assert_eq!(shown.commit.author_email.as_deref(), Some(AUTHOR));
    // Committer and tagger addresses have no field at all, shown or not.
    let all = every_output(&repo, GitEmails::Show);
    assert!(!all.contains(COMMITTER) && !all.contains(TAGGER), "{all}");
}
