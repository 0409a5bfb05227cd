//! `git_commit`: stage and commit, built from plumbing so that what runs is what was approved.
//!
//! The plan stages into a copy of the index and writes its tree; the commit takes git's index
//! lock, stages again into the locked copy, refuses unless the tree is the approved one, makes
//! the commit object (`commit-tree`), moves the branch with compare-and-swap, and only then
//! makes the built index the repository's. No hook runs (there is no `git commit` to run one),
//! unless the user allowed the project's hooks: then [`hooks`](crate::hooks) finds them and the
//! caller runs each as a job in the project's sandbox, in git's order, with the lock held.

use serde::Deserialize;

use crate::exec::Invocation;
use crate::hooks::{self, HookRun, HookRunner};
use crate::write::{
    self, GitPlan, GitWriteOutput, IndexLock, RefMove, Run, SMALL_CAP, State, Undo, short,
};
use crate::{GitError, Repo, files};

/// Most files one commit stages.
const MAX_STAGED: usize = 10_000;

/// Arguments of `git_commit`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GitCommitArgs {
    /// The commit message: a short first line, then a blank line and details if useful.
    pub message: String,
    /// Stage these project-relative files or folders first (new, changed and deleted files
    /// under them). Files already staged are committed too.
    pub paths: Vec<String>,
    /// Stage every changed and new file first (like `git add --all`; .gitignore is honoured,
    /// and files the sensitive-file shield protects are never staged).
    pub all: bool,
}

pub(crate) struct CommitAction {
    branch: String,
    parent: Option<String>,
    tree: String,
    stage: Vec<String>,
    message: String,
    files: Vec<String>,
    hidden_files: u32,
}

/// Plans a commit: what would be staged and committed, on which branch, as one tree.
pub fn plan_commit(
    repo: &Repo,
    args: &GitCommitArgs,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitPlan, GitError> {
    write::message(&args.message, "commit")?;
    let settings = write::UserSettings::read(repo)?;
    settings.identity()?;
    settings.check_unsigned(false)?;
    let state = State::read(repo, hidden)?;
    let branch = state.branch()?.to_owned();
    state.conflicts()?;
    let requested = files::checked_paths(&args.paths, hidden)?;
    let under = |path: &str| {
        requested.iter().any(|r| {
            let r = r.trim_end_matches('/');
            path == r || path.strip_prefix(r).is_some_and(|rest| rest.starts_with('/'))
        })
    };
    let stage: Vec<String> = state
        .entries
        .iter()
        .filter(|e| !e.hidden && (args.all || under(&e.path)))
        // A staged rename's old path is already out of the index and the tree.
        .map(|e| e.path.clone())
        .collect();
    if stage.len() > MAX_STAGED {
        return Err(GitError::LimitExceeded(format!(
            "more than {MAX_STAGED} files to stage; commit in smaller steps with `paths`"
        )));
    }
    let scratch = tempfile::Builder::new()
        .prefix("sluice-index-")
        .tempfile_in(repo.git_dir())
        .map_err(|_| GitError::Internal("cannot make a scratch index".into()))?;
    copy_index(repo, scratch.path())?;
    let tree = stage_and_write_tree(repo, scratch.path(), &stage)?;
    drop(scratch);
    let parent = state.head.clone();
    let changed = changed_files(repo, parent.as_deref(), &tree)?;
    if changed.is_empty() {
        return Err(GitError::Refused(if stage.is_empty() && !args.all && args.paths.is_empty() {
            "nothing to commit: nothing is staged; pass `paths` or `all` to stage changes".into()
        } else {
            "nothing to commit: the staged tree is the same as HEAD's".into()
        }));
    }
    let (files, hidden_files) = write::visible(changed, hidden);
    let mut summary = format!(
        "commit to branch {}: \"{}\" — {} file{}",
        sluice_core::text::visible_owned(&branch),
        write::subject(&args.message),
        files.len() + hidden_files as usize,
        if files.len() + hidden_files as usize == 1 { "" } else { "s" }
    );
    for f in files.iter().take(20) {
        summary.push_str(&format!("\n  {}", sluice_core::text::visible_owned(f)));
    }
    if files.len() > 20 {
        summary.push_str(&format!("\n  … and {} more", files.len() - 20));
    }
    if hidden_files > 0 {
        summary.push_str(&format!("\n  and {hidden_files} file(s) the shield protects"));
    }
    let mut h = blake3::Hasher::new();
    h.update(b"git_commit\0");
    h.update(args.message.as_bytes());
    h.update(b"\0");
    h.update(tree.as_bytes());
    state.hash_into(&mut h);
    Ok(GitPlan {
        summary,
        fingerprint: *h.finalize().as_bytes(),
        writes: true,
        deletes: false,
        touched: Vec::new(),
        hidden_touched: 0,
        action: Box::new(CommitAction {
            branch,
            parent,
            tree,
            stage,
            message: args.message.clone(),
            files,
            hidden_files,
        }),
    })
}

impl Run for CommitAction {
    fn run(
        &self,
        repo: &Repo,
        hooks: Option<&dyn HookRunner>,
    ) -> Result<(GitWriteOutput, Option<Undo>), GitError> {
        commit(repo, self, hooks).map(|(o, u)| (o, Some(u)))
    }
}

fn commit(
    repo: &Repo,
    a: &CommitAction,
    runner: Option<&dyn HookRunner>,
) -> Result<(GitWriteOutput, Undo), GitError> {
    let settings = write::UserSettings::read(repo)?;
    let identity = settings.identity()?;
    settings.check_unsigned(false)?;
    let hooks = match runner {
        Some(runner) => hooks::hooks_dir(repo, settings.hooks_path())?.map(|dir| (runner, dir)),
        None => None,
    };
    let lock = IndexLock::take(repo)?;
    let tree = stage_and_write_tree(repo, lock.file(), &a.stage)?;
    if tree != a.tree {
        return Err(GitError::Refused(
            "the files changed after this commit was planned, so nothing was committed; look \
             again and retry"
                .into(),
        ));
    }
    let mut ran = Vec::new();
    let message = match &hooks {
        Some((runner, dir)) => before_commit(repo, *runner, dir, &lock, a, &mut ran)?,
        None => a.message.clone(),
    };
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    inv.args(["commit-tree", &a.tree]);
    if let Some(parent) = &a.parent {
        inv.args(["-p", parent]);
    }
    inv.arg("-m").arg(&message);
    identity.apply(&mut inv);
    let made = String::from_utf8_lossy(&inv.run()?.stdout).trim().to_owned();
    if !crate::parse::is_object_id(made.as_bytes()) {
        return Err(GitError::Internal("git did not report the new commit".into()));
    }
    let full = format!("refs/heads/{}", a.branch);
    let reason = format!("commit (sluice): {}", write::subject(&message));
    write::move_ref(repo, &full, Some(&made), a.parent.as_deref(), &reason)?;
    lock.commit()?;
    // As in git, post-commit only reports: the commit stands whatever it does.
    if let Some((runner, dir)) = &hooks
        && let Some(program) = hooks::find(dir, "post-commit")
    {
        let call =
            hooks::HookCall { name: "post-commit", program, args: Vec::new(), env: Vec::new() };
        if let Ok(run) = runner.run(&call) {
            ran.push(run);
        }
    }
    let output = GitWriteOutput {
        done: format!("committed {} to {}", short(&made), a.branch),
        branch: Some(a.branch.clone()),
        head: Some(made.clone()),
        created: Some(made.clone()),
        files: a.files.clone(),
        hidden_files: a.hidden_files,
        operation_id: None,
        hooks: ran,
    };
    let undo = Undo {
        what: format!("the commit {} on {}", short(&made), a.branch),
        moves: vec![RefMove { name: full, before: a.parent.clone(), after: Some(made) }],
        switch_to: None,
    };
    Ok((output, undo))
}

/// Runs `pre-commit`, `prepare-commit-msg` and `commit-msg` as git does, with the index lock
/// held and the staged index as `GIT_INDEX_FILE`; returns the message the hooks left. A hook
/// that fails, or a `pre-commit` that changes what is staged (the tree planned, and approved
/// where it asked), stops the commit with nothing committed.
fn before_commit(
    repo: &Repo,
    runner: &dyn HookRunner,
    dir: &std::path::Path,
    lock: &IndexLock,
    a: &CommitAction,
    ran: &mut Vec<HookRun>,
) -> Result<String, GitError> {
    let env = vec![
        ("GIT_INDEX_FILE".to_owned(), lock.file().to_string_lossy().into_owned()),
        ("GIT_EDITOR".to_owned(), ":".to_owned()),
    ];
    hooks::run_required(runner, dir, "pre-commit", Vec::new(), &env, ran)?;
    if stage_and_write_tree(repo, lock.file(), &[])? != a.tree {
        return Err(GitError::Hook(
            sluice_core::ErrorCode::HookFailed,
            "the pre-commit hook changed what is staged, so nothing was committed (a commit \
             holds exactly the files it was planned, and approved, with); what the hook changed \
             is in the working tree: look at git_status and commit again"
                .into(),
        ));
    }
    let file = repo.git_dir().join("COMMIT_EDITMSG");
    std::fs::write(&file, &a.message)
        .map_err(|_| GitError::Internal("cannot write the commit message for its hooks".into()))?;
    let path = file.to_string_lossy().into_owned();
    hooks::run_required(
        runner,
        dir,
        "prepare-commit-msg",
        vec![path.clone(), "message".into()],
        &env,
        ran,
    )?;
    hooks::run_required(runner, dir, "commit-msg", vec![path], &env, ran)?;
    let edited = std::fs::read(&file)
        .map_err(|_| GitError::Internal("cannot read the commit message back".into()))?;
    let message = cleanup(&String::from_utf8_lossy(&edited));
    if message.is_empty() {
        return Err(GitError::Hook(
            sluice_core::ErrorCode::HookFailed,
            "the commit message hooks left an empty message, so nothing was committed".into(),
        ));
    }
    write::message(&message, "commit")?;
    Ok(message)
}

/// git's `whitespace` cleanup of a message: trailing spaces and leading and trailing blank
/// lines go.
fn cleanup(message: &str) -> String {
    let lines: Vec<&str> = message.lines().map(str::trim_end).collect();
    let start = lines.iter().position(|l| !l.is_empty()).unwrap_or(lines.len());
    let end = lines.iter().rposition(|l| !l.is_empty()).map_or(start, |i| i + 1);
    lines[start..end].join("\n")
}

fn copy_index(repo: &Repo, to: &std::path::Path) -> Result<(), GitError> {
    match std::fs::copy(repo.git_dir().join("index"), to) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => Err(GitError::Internal("cannot copy the repository's index".into())),
    }
}

/// Stages `paths` into the index at `index` and writes its tree.
fn stage_and_write_tree(
    repo: &Repo,
    index: &std::path::Path,
    paths: &[String],
) -> Result<String, GitError> {
    let index = index.to_string_lossy().into_owned();
    if !paths.is_empty() {
        let mut add = Invocation::for_write(repo, SMALL_CAP)?;
        add.args(["add", "--all", "--"]).args(paths).env("GIT_INDEX_FILE", index.clone());
        add.run()?;
    }
    let mut tree = Invocation::for_write(repo, SMALL_CAP)?;
    tree.arg("write-tree").env("GIT_INDEX_FILE", index);
    let id = String::from_utf8_lossy(&tree.run()?.stdout).trim().to_owned();
    if !crate::parse::is_object_id(id.as_bytes()) {
        return Err(GitError::Internal("git did not report the staged tree".into()));
    }
    Ok(id)
}

/// The files that differ between `parent`'s tree (nothing, for a first commit) and `tree`.
fn changed_files(repo: &Repo, parent: Option<&str>, tree: &str) -> Result<Vec<String>, GitError> {
    let mut inv = Invocation::new(repo, files::GIT_OUTPUT_CAP)?;
    match parent {
        Some(parent) => {
            inv.args(["diff-tree", "-r", "--no-renames", "--name-only", "-z", parent, tree])
        }
        None => inv.args(["ls-tree", "-r", "--name-only", "-z", tree]),
    };
    let out = inv.run()?;
    if out.truncated {
        return Err(GitError::LimitExceeded("the commit lists too many files".into()));
    }
    Ok(write::names(&out.stdout))
}
