//! What every git write shares: the plan a tool shows before it runs, the user's identity and
//! signing choice, the state of HEAD, ref names, and the index lock.
//!
//! A write is two-phase like the file tools: `plan_*` looks at the repository and returns a
//! [`GitPlan`] (a summary for the approval, a fingerprint of the exact action and of the state it
//! starts from, the working-tree files it would write); `execute` re-plans, refuses with
//! `Conflict` if the fingerprint changed, and runs. Refs move with compare-and-swap
//! (`update-ref <ref> <new> <old>`), so a ref that moved in between is never overwritten.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::exec::Invocation;
use crate::status::GitStatusArgs;
use crate::{GitError, HookRunner, Repo, validate};

/// Output cap for the small plumbing commands a write runs.
pub(crate) const SMALL_CAP: usize = 4 * 1024 * 1024;
/// Longest commit, tag or stash message.
const MAX_MESSAGE: usize = 64 * 1024;

/// A git write, planned: what the user is shown and what binds the approval.
pub struct GitPlan {
    /// One line per effect, for the approval.
    pub summary: String,
    /// Covers the request and the repository state it acts on.
    pub fingerprint: [u8; 32],
    /// It writes files in the working tree or moves a branch forward (a write-policy matter).
    pub writes: bool,
    /// It removes something or rewrites history (asks like a delete).
    pub deletes: bool,
    /// Working-tree files it would write or remove (for the auto-run list).
    pub touched: Vec<String>,
    /// How many of `touched` the sensitive-file shield protects (they are not listed; a write
    /// that changes one asks the user).
    pub hidden_touched: u32,
    pub(crate) action: Box<dyn Run>,
}

/// What a planned write does when it runs. Each tool's action (`commit.rs`, `refs.rs`,
/// `switch.rs`, and the undo in `undo.rs`) carries what it needs and runs itself, so a plan
/// knows no tool and no tool knows another.
pub(crate) trait Run: Send + Sync {
    /// Runs it; returns what it did and, where git can undo it, how.
    fn run(
        &self,
        repo: &Repo,
        hooks: Option<&dyn HookRunner>,
    ) -> Result<(GitWriteOutput, Option<Undo>), GitError>;
}

impl std::fmt::Debug for GitPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitPlan").field("summary", &self.summary).finish_non_exhaustive()
    }
}

/// What a git write tool returns.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitWriteOutput {
    /// What was done, in one line.
    pub done: String,
    /// The checked-out branch afterwards, or null when HEAD is detached.
    pub branch: Option<String>,
    /// HEAD's commit afterwards.
    pub head: Option<String>,
    /// The commit, tag or stash entry made, if any.
    pub created: Option<String>,
    /// Files committed or changed in the working tree (project-relative).
    pub files: Vec<String>,
    /// How many such files the sensitive-file shield keeps out of `files`.
    pub hidden_files: u32,
    /// Pass to `restore` to undo this (a commit undone to its parent with the files kept, a
    /// deleted branch or tag re-created, …); null where git cannot undo it safely.
    pub operation_id: Option<String>,
    /// The repository's hooks that ran, each as a job in the project's sandbox (only in a
    /// project whose user allowed its git hooks).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<crate::HookRun>,
}

/// Who a commit or an annotated tag is by, from the user's git configuration.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    author: (String, String),
    committer: (String, String),
}

impl Identity {
    pub(crate) fn apply(&self, inv: &mut Invocation<'_>) {
        inv.env("GIT_AUTHOR_NAME", &self.author.0)
            .env("GIT_AUTHOR_EMAIL", &self.author.1)
            .env("GIT_COMMITTER_NAME", &self.committer.0)
            .env("GIT_COMMITTER_EMAIL", &self.committer.1);
    }

    /// The `tagger` line of an annotated tag: the committer, now.
    pub(crate) fn tagger_line(&self) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        format!("{} <{}> {now} +0000", self.committer.0, self.committer.1)
    }
}

/// What a write needs of the user's configuration.
pub(crate) struct UserSettings {
    identity: Option<Identity>,
    missing: &'static str,
    sign_commits: bool,
    sign_tags: bool,
    hooks_path: Option<String>,
}

impl UserSettings {
    pub(crate) fn read(repo: &Repo) -> Result<UserSettings, GitError> {
        let listing = Invocation::user_config(repo).run()?;
        if listing.truncated {
            return Err(GitError::LimitExceeded("the git configuration is too large".into()));
        }
        Ok(UserSettings::parse(&listing.stdout))
    }

    /// From `git config --list -z`: the last value of a key wins, as in git.
    fn parse(listing: &[u8]) -> UserSettings {
        let mut last = std::collections::HashMap::new();
        let mut hooks_paths = Vec::new();
        for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let record = String::from_utf8_lossy(record);
            // A key with no `=` at all is a boolean true.
            let (key, value) = record.split_once('\n').unwrap_or((&record, "true"));
            if key == "core.hookspath" {
                hooks_paths.push(value.to_owned());
            }
            last.insert(key.to_owned(), value.to_owned());
        }
        // The listing ends with the command line's scope, where Sluice's own override of
        // core.hooksPath (which keeps git from running any hook) is the last value: the one
        // before it is the user's.
        hooks_paths.pop();
        let get = |k: &str| last.get(k).filter(|v| !v.trim().is_empty()).cloned();
        let truthy = |k: &str| {
            last.get(k).is_some_and(|v| {
                matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1")
            })
        };
        let who = |role: &str| {
            Some((
                get(&format!("{role}.name")).or_else(|| get("user.name"))?,
                get(&format!("{role}.email")).or_else(|| get("user.email"))?,
            ))
        };
        // git strips these from identities; a tag object written by hand must not hold them.
        let clean = |p: (String, String)| {
            let bad = |s: &str| s.contains(['<', '>', '\n', '\0']);
            (!bad(&p.0) && !bad(&p.1)).then_some(p)
        };
        let (author, committer) = (who("author").and_then(clean), who("committer").and_then(clean));
        let missing = if get("user.name").is_none() && get("author.name").is_none() {
            "user.name"
        } else {
            "user.email"
        };
        UserSettings {
            identity: author
                .zip(committer)
                .map(|(author, committer)| Identity { author, committer }),
            missing,
            sign_commits: truthy("commit.gpgsign"),
            sign_tags: truthy("tag.gpgsign") || truthy("tag.forcesignannotated"),
            hooks_path: hooks_paths.pop().filter(|v| !v.trim().is_empty()),
        }
    }

    /// The identity a commit needs, never invented: git's own fallback (user@hostname) is
    /// not used.
    pub(crate) fn identity(&self) -> Result<&Identity, GitError> {
        self.identity.as_ref().ok_or_else(|| {
            GitError::Refused(format!(
                "git has no {} configured, so Sluice will not invent an author; set it with \
                 `git config --global {} …` (or in this repository) and try again",
                self.missing, self.missing
            ))
        })
    }

    /// Refuses when the user's configuration asks for signatures: Sluice never runs a signing
    /// program, and it will not make an unsigned commit the user asked to be signed.
    /// `core.hooksPath` as configured, unexpanded.
    pub(crate) fn hooks_path(&self) -> Option<&str> {
        self.hooks_path.as_deref()
    }

    pub(crate) fn check_unsigned(&self, tag: bool) -> Result<(), GitError> {
        let (on, key) = if tag {
            (self.sign_tags, "tag.gpgSign")
        } else {
            (self.sign_commits, "commit.gpgSign")
        };
        if on {
            return Err(GitError::Forbidden(format!(
                "this repository's git configuration signs {} ({key}), and Sluice never runs a \
                 signing program; make this one in your own terminal, or turn {key} off for \
                 this repository",
                if tag { "tags" } else { "commits" }
            )));
        }
        Ok(())
    }
}

/// The repository's HEAD and working tree, as `git status` sees them: every changed file,
/// shielded ones included (a write must not stash, revert or overwrite a protected file the
/// caller cannot see), each marked so outputs can leave it out.
pub(crate) struct State {
    pub(crate) branch: Option<String>,
    pub(crate) head: Option<String>,
    pub(crate) entries: Vec<Entry>,
}

pub(crate) struct Entry {
    pub(crate) path: String,
    pub(crate) index: String,
    pub(crate) worktree: String,
    pub(crate) hidden: bool,
}

impl Entry {
    pub(crate) fn untracked(&self) -> bool {
        self.index == "?"
    }
}

impl State {
    pub(crate) fn read(repo: &Repo, hidden: &dyn Fn(&str) -> bool) -> Result<State, GitError> {
        let status = crate::status(repo, &GitStatusArgs::default(), &|_| false)?;
        if status.truncated {
            return Err(GitError::LimitExceeded(
                "the working tree has too many changes for a git write; commit or stash in \
                 smaller steps from your own terminal"
                    .into(),
            ));
        }
        let entries = status
            .entries
            .into_iter()
            .map(|e| Entry {
                hidden: hidden(&e.path) || e.orig_path.as_deref().is_some_and(hidden),
                path: e.path,
                index: e.index_status,
                worktree: e.worktree_status,
            })
            .collect();
        Ok(State { branch: status.branch, head: status.head, entries })
    }

    /// The checked-out branch, refusing a detached HEAD.
    pub(crate) fn branch(&self) -> Result<&str, GitError> {
        self.branch.as_deref().ok_or_else(|| {
            GitError::Refused(
                "HEAD is detached (no branch is checked out); switch to a branch first".into(),
            )
        })
    }

    /// Files with staged or unstaged changes to tracked content.
    pub(crate) fn tracked_changes(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| !e.untracked())
    }

    pub(crate) fn conflicts(&self) -> Result<(), GitError> {
        if self.entries.iter().any(|e| e.index == "U" || e.worktree == "U") {
            return Err(GitError::Refused(
                "the repository has unresolved conflicts; resolve them first".into(),
            ));
        }
        Ok(())
    }

    /// Refuses when tracked files have changes, which a switch or a stash pop would mix in
    /// (or, on a failure, have to revert).
    pub(crate) fn require_clean(&self, what: &str) -> Result<(), GitError> {
        let dirty: Vec<&Entry> = self.tracked_changes().collect();
        if dirty.is_empty() {
            return Ok(());
        }
        let named = dirty.iter().find(|e| !e.hidden).map_or_else(
            || "a file the sensitive-file shield protects".to_owned(),
            |e| e.path.clone(),
        );
        Err(GitError::Refused(format!(
            "{what} needs a clean working tree, and {} tracked file{} changed ({named}{}); \
             commit or stash them first",
            dirty.len(),
            if dirty.len() == 1 { " has" } else { "s have" },
            if dirty.len() > 1 { ", …" } else { "" },
        )))
    }

    /// Feeds what the fingerprint must cover of the repository's state.
    pub(crate) fn hash_into(&self, h: &mut blake3::Hasher) {
        for part in [&self.branch, &self.head] {
            h.update(part.as_deref().unwrap_or("\0").as_bytes());
            h.update(b"\0");
        }
        for e in &self.entries {
            for part in [e.path.as_str(), &e.index, &e.worktree] {
                h.update(part.as_bytes());
                h.update(b"\0");
            }
        }
    }
}

/// Splits paths into those the caller may see and a count of the others.
pub(crate) fn visible(
    paths: impl IntoIterator<Item = String>,
    hidden: &dyn Fn(&str) -> bool,
) -> (Vec<String>, u32) {
    let (mut shown, mut count) = (Vec::new(), 0u32);
    for p in paths {
        if hidden(&p) {
            count += 1;
        } else {
            shown.push(p);
        }
    }
    (shown, count)
}

/// NUL-separated names from a git command's output.
pub(crate) fn names(out: &[u8]) -> Vec<String> {
    out.split(|b| *b == 0).filter(|n| !n.is_empty()).map(crate::parse::lossy).collect()
}

/// The commit a revision names, as a full id.
pub(crate) fn commit_of(repo: &Repo, rev: &str) -> Result<String, GitError> {
    validate::rev(rev, validate::RevKind::Single)?;
    object_of(repo, &format!("{rev}^{{commit}}"))
        .map_err(|_| GitError::invalid(format!("no commit is named {rev:?} in this repository")))
}

/// The object a full ref or revision names, or `GitFailed` when there is none.
pub(crate) fn object_of(repo: &Repo, rev: &str) -> Result<String, GitError> {
    let mut inv = Invocation::new(repo, SMALL_CAP)?;
    inv.args(["rev-parse", "--verify", "--quiet", "--end-of-options", rev]);
    let out = inv.run()?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !crate::parse::is_object_id(id.as_bytes()) {
        return Err(GitError::GitFailed(format!("{rev:?} names nothing")));
    }
    Ok(id)
}

/// Whether a full ref exists.
pub(crate) fn ref_exists(repo: &Repo, full: &str) -> Result<bool, GitError> {
    let mut inv = Invocation::new(repo, SMALL_CAP)?;
    inv.args(["for-each-ref", "--format=%(refname)", "--end-of-options", full]);
    let out = inv.run()?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().any(|l| l == full))
}

/// Checks a new or existing branch or tag name: git's own rules (`check-ref-format`), and no
/// leading `-`, which an option parser could take for an option.
pub(crate) fn ref_name(kind: &str, name: &str) -> Result<String, GitError> {
    let bad = |why: &str| {
        Err(GitError::invalid(format!(
            "invalid {kind} name {:?}: {why}",
            name.chars().take(80).collect::<String>()
        )))
    };
    if name.is_empty() || name.len() > 200 {
        return bad("it must have 1 to 200 characters");
    }
    if name.starts_with('-') || name == "HEAD" || name.contains("@{") {
        return bad("it cannot start with '-', be HEAD or contain '@{'");
    }
    let full = format!("refs/{}/{name}", if kind == "tag" { "tags" } else { "heads" });
    if !well_formed(&full) {
        return bad("git does not accept it as a ref name (no spaces, '..', '~', '^', ':', '?', \
                    '*', '[', '\\\\', control characters, or a trailing '.lock' or '/')");
    }
    Ok(full)
}

/// git's ref-name rules (`git help check-ref-format`), checked here so no process runs for a
/// name that would be refused anyway.
pub(crate) fn well_formed(full: &str) -> bool {
    if full.ends_with('/') || full.ends_with('.') || full.contains("//") || full.contains("..") {
        return false;
    }
    let deceptive = |c: char| sluice_core::text::is_deceptive(c) || sluice_core::text::is_hidden(c);
    if full.chars().any(|c| c.is_control() || deceptive(c) || " ~^:?*[\\".contains(c)) {
        return false;
    }
    full.split('/')
        .all(|part| !part.is_empty() && !part.starts_with('.') && !part.ends_with(".lock"))
}

/// `.git/index.lock`, held while a write builds and replaces the index: git's own protocol, so
/// no other git process changes the index in between. Removed on drop unless committed.
pub(crate) struct IndexLock {
    path: PathBuf,
    index: PathBuf,
    done: bool,
}

impl IndexLock {
    pub(crate) fn take(repo: &Repo) -> Result<IndexLock, GitError> {
        let index = repo.git_dir().join("index");
        let path = repo.git_dir().join("index.lock");
        let mut file = match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(GitError::Refused(
                    "another git process is using this repository (.git/index.lock exists); \
                     wait for it to finish and try again"
                        .into(),
                ));
            }
            Err(_) => return Err(GitError::Internal("cannot lock the repository's index".into())),
        };
        let lock = IndexLock { path, index, done: false };
        copy_index(&lock.index, &mut file)?;
        Ok(lock)
    }

    /// The lock file, which holds a copy of the index to build on (`GIT_INDEX_FILE`).
    pub(crate) fn file(&self) -> &Path {
        &self.path
    }

    /// Makes the built index the repository's.
    pub(crate) fn commit(mut self) -> Result<(), GitError> {
        std::fs::rename(&self.path, &self.index)
            .map_err(|_| GitError::Internal("cannot replace the repository's index".into()))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn copy_index(index: &Path, into: &mut File) -> Result<(), GitError> {
    match File::open(index) {
        Ok(mut from) => std::io::copy(&mut from, into).map(|_| ()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
    .and_then(|()| into.sync_all())
    .map_err(|_| GitError::Internal("cannot copy the repository's index".into()))
}

/// Checks a commit, tag or stash message.
pub(crate) fn message(value: &str, what: &str) -> Result<(), GitError> {
    if value.trim().is_empty() {
        return Err(GitError::invalid(format!("the {what} message is empty")));
    }
    if value.len() > MAX_MESSAGE {
        return Err(GitError::invalid(format!("the {what} message is longer than 64 KiB")));
    }
    if value.contains('\0') {
        return Err(GitError::invalid(format!("the {what} message contains a NUL character")));
    }
    Ok(())
}

/// The first line of a message, short, for summaries.
/// A commit id as the summaries show it: its first 12 hex digits.
pub(crate) fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

pub(crate) fn subject(message: &str) -> String {
    let line = message.trim().lines().next().unwrap_or_default();
    let mut s: String = sluice_core::text::visible_owned(line).chars().take(72).collect();
    if line.chars().count() > 72 {
        s.push('…');
    }
    s
}

/// Serialisable state of a ref before and after a write, for the undo record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RefMove {
    pub(crate) name: String,
    /// `None`: the ref did not exist.
    pub(crate) before: Option<String>,
    pub(crate) after: Option<String>,
}

/// Moves `full` from `old` to `new` (`None`: absent) only if it is still at `old`.
pub(crate) fn move_ref(
    repo: &Repo,
    full: &str,
    new: Option<&str>,
    old: Option<&str>,
    reason: &str,
) -> Result<(), GitError> {
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    inv.args(["update-ref", "-m", reason]);
    match new {
        Some(new) => inv.args(["--end-of-options", full, new, old.unwrap_or("")]),
        None => inv.args(["-d", "--end-of-options", full]).args(old),
    };
    inv.run().map(|_| ()).map_err(|e| match e {
        GitError::GitFailed(why) => GitError::Refused(format!(
            "{} changed since this was planned, so nothing was changed ({why})",
            sluice_core::text::visible_owned(full)
        )),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::{UserSettings, well_formed};

    #[test]
    fn identity_comes_from_config_and_is_never_invented() {
        let s = UserSettings::parse(b"user.name\nAda\0user.email\nada@example.org\0");
        let id = s.identity().unwrap();
        assert_eq!(id.author, ("Ada".to_owned(), "ada@example.org".to_owned()));
        assert_eq!(id.committer, id.author);
        // The last value wins; author.* beats user.* for the author only.
        let s = UserSettings::parse(
            b"user.name\nOld\0user.name\nAda\0user.email\na@x\0author.name\nAuthor\0",
        );
        let id = s.identity().unwrap();
        assert_eq!(id.author.0, "Author");
        assert_eq!(id.committer.0, "Ada");
        for bad in [
            &b"user.name\nAda\0"[..],
            b"user.email\na@x\0",
            b"",
            b"user.name\n \0user.email\na@x\0",
        ] {
            let err = UserSettings::parse(bad).identity().unwrap_err().to_string();
            assert!(err.contains("will not invent"), "{err}");
        }
        // A name that would forge a tag's or commit's header is no identity.
        let s = UserSettings::parse(b"user.name\nA> 0 +0000\nx\0user.email\na@x\0");
        assert!(s.identity().is_err());
    }

    #[test]
    fn signing_the_user_asked_for_refuses() {
        let s = UserSettings::parse(b"user.name\nA\0user.email\na@x\0commit.gpgsign\0");
        assert!(s.check_unsigned(false).is_err(), "a key without a value is true");
        assert!(s.check_unsigned(true).is_ok());
        let s = UserSettings::parse(b"tag.forcesignannotated\nyes\0commit.gpgsign\nfalse\0");
        assert!(s.check_unsigned(true).is_err());
        assert!(s.check_unsigned(false).is_ok());
    }

    #[test]
    fn the_hooks_path_is_the_users_not_sluices_override() {
        let s = UserSettings::parse(b"core.hookspath\n.husky/_\0core.hookspath\n/dev/null\0");
        assert_eq!(s.hooks_path(), Some(".husky/_"));
        let s = UserSettings::parse(b"user.name\nA\0core.hookspath\n/dev/null\0");
        assert_eq!(s.hooks_path(), None, "only the override: git's own .git/hooks");
    }

    #[test]
    fn ref_names() {
        for ok in
            ["refs/heads/main", "refs/heads/feature/login", "refs/tags/v1.2.3", "refs/heads/ü"]
        {
            assert!(well_formed(ok), "{ok}");
        }
        for bad in [
            "refs/heads/a..b",
            "refs/heads/a b",
            "refs/heads/x:y",
            "refs/heads/.hidden",
            "refs/heads/end.lock",
            "refs/heads/trailing/",
            "refs/heads/dot.",
            "refs/heads/a//b",
            "refs/heads/\u{202e}evil",
            "refs/heads/zero\u{200b}width",
            "refs/heads/a\\b",
            "refs/heads/a*",
        ] {
            assert!(!well_formed(bad), "{bad:?}");
        }
    }
}

/// How to undo a write: refs to move back, then (for a switch) the branch to return to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Undo {
    /// What the write did, for the undo's summary ("the commit 1a2b3c on main").
    pub(crate) what: String,
    pub(crate) moves: Vec<RefMove>,
    /// Switch to this branch before moving refs back (undoing a switch).
    pub(crate) switch_to: Option<String>,
}

impl Undo {
    /// Whether every value that reaches git's command line is what a write records: the state
    /// folder is Sluice's, but a record is read back from a file, so it is checked like a request.
    pub(crate) fn well_formed(&self) -> bool {
        let id = |v: &Option<String>| {
            v.as_deref().is_none_or(|v| crate::parse::is_object_id(v.as_bytes()))
        };
        let name = |n: &str| {
            (n.strip_prefix("refs/heads/").or_else(|| n.strip_prefix("refs/tags/")))
                .is_some_and(|short| !short.starts_with('-'))
                && well_formed(n)
        };
        self.moves.iter().all(|m| name(&m.name) && id(&m.before) && id(&m.after))
            && self.switch_to.as_deref().is_none_or(|b| ref_name("branch", b).is_ok())
    }
}
