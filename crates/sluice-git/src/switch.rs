//! `git_switch` and `git_stash`: the writes that change working-tree files. Both need tracked
//! files to be clean (nothing of the user's is mixed in or reverted), both name every file they
//! will write so the caller can ask for the auto-run list and the shield, and a stash pop that
//! does not apply cleanly is rolled back to the clean tree it started from.

use serde::Deserialize;

use crate::exec::Invocation;
use crate::hooks::{self, HookRunner};
use crate::refs::shown;
use crate::write::{self, GitPlan, GitWriteOutput, RefMove, Run, SMALL_CAP, State, Undo, short};
use crate::{GitError, Repo, files};

/// Arguments of `git_switch`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GitSwitchArgs {
    /// The branch to check out.
    pub branch: String,
    /// Create the branch first (at `start_point`, HEAD by default).
    pub create: bool,
    /// Where a created branch starts: a branch, tag or commit id.
    pub start_point: Option<String>,
}

/// What `git_stash` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StashOp {
    /// Save the changes to tracked files and revert them (untracked files stay).
    #[default]
    Push,
    /// Apply a stash entry to the clean working tree and drop it.
    Pop,
}

/// Arguments of `git_stash`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitStashArgs {
    /// `push` (the default) or `pop`.
    pub action: StashOp,
    /// A description for `push`.
    pub message: Option<String>,
    /// Which entry `pop` applies (0, the newest, by default; see git_refs).
    pub index: u32,
}

pub(crate) struct SwitchAction {
    branch: String,
    create_at: Option<String>,
    from: Option<String>,
    files: Vec<String>,
    hidden_files: u32,
}

pub(crate) struct StashAction {
    pop: Option<(u32, String)>,
    message: Option<String>,
    paths: Vec<String>,
    files: Vec<String>,
    hidden_files: u32,
}

/// Plans `git_switch`.
pub fn plan_switch(
    repo: &Repo,
    args: &GitSwitchArgs,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitPlan, GitError> {
    let full = write::ref_name("branch", &args.branch)?;
    let state = State::read(repo, hidden)?;
    state.conflicts()?;
    state.require_clean("switching branches")?;
    if state.branch.as_deref() == Some(args.branch.as_str()) {
        return Err(GitError::Refused(format!(
            "branch {} is already checked out",
            shown(&args.branch)
        )));
    }
    let exists = write::ref_exists(repo, &full)?;
    let (target, create_at) = match (args.create, exists) {
        (true, true) => {
            return Err(GitError::Refused(format!(
                "branch {} already exists",
                shown(&args.branch)
            )));
        }
        (true, false) => {
            let at = write::commit_of(repo, args.start_point.as_deref().unwrap_or("HEAD"))?;
            (at.clone(), Some(at))
        }
        (false, false) => {
            return Err(GitError::invalid(format!(
                "there is no branch {}; pass `create` to make it",
                shown(&args.branch)
            )));
        }
        (false, true) => (write::commit_of(repo, &full)?, None),
    };
    let changed = changed_between(repo, state.head.as_deref(), &target)?;
    let (files, hidden_files) = write::visible(changed.clone(), hidden);
    let mut h = blake3::Hasher::new();
    h.update(format!("switch {full} {target} {}\0", create_at.is_some()).as_bytes());
    state.hash_into(&mut h);
    let mut summary = format!(
        "switch to {}branch {} at {} — {} file{} in the working tree change",
        if create_at.is_some() { "new " } else { "" },
        shown(&args.branch),
        short(&target),
        changed.len(),
        if changed.len() == 1 { "" } else { "s" }
    );
    list_into(&mut summary, &files, hidden_files);
    Ok(GitPlan {
        summary,
        fingerprint: *h.finalize().as_bytes(),
        writes: true,
        deletes: false,
        touched: files.clone(),
        hidden_touched: hidden_files,
        action: Box::new(SwitchAction {
            branch: args.branch.clone(),
            create_at,
            from: state.branch.clone(),
            files,
            hidden_files,
        }),
    })
}

/// Switches; the undo switches back, which needs a branch to go back to (none from a detached
/// HEAD).
impl Run for SwitchAction {
    fn run(
        &self,
        repo: &Repo,
        hooks: Option<&dyn HookRunner>,
    ) -> Result<(GitWriteOutput, Option<Undo>), GitError> {
        switch(repo, self, hooks)
    }
}

impl Run for StashAction {
    fn run(
        &self,
        repo: &Repo,
        _hooks: Option<&dyn HookRunner>,
    ) -> Result<(GitWriteOutput, Option<Undo>), GitError> {
        Ok((stash(repo, self)?, None))
    }
}

fn switch(
    repo: &Repo,
    a: &SwitchAction,
    runner: Option<&dyn HookRunner>,
) -> Result<(GitWriteOutput, Option<Undo>), GitError> {
    // Where hooks run, a hooks folder the sandbox cannot see refuses before anything moves.
    let hooks = match runner {
        Some(runner) => {
            let settings = write::UserSettings::read(repo)?;
            hooks::hooks_dir(repo, settings.hooks_path())?.map(|dir| (runner, dir))
        }
        None => None,
    };
    let before = State::read(repo, &|_| false)?.head;
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    inv.args(["switch", "--quiet", "--no-guess"]);
    match &a.create_at {
        Some(at) => inv.args(["--no-track", "--create", &a.branch, at]),
        // `switch` takes no `--end-of-options`; `ref_name` refused a leading '-'.
        None => inv.arg(&a.branch),
    };
    inv.run()?;
    let state = State::read(repo, &|_| false)?;
    // As in git, post-checkout only reports: the switch stands whatever it does.
    let mut ran = Vec::new();
    if let Some((runner, dir)) = &hooks
        && let Some(program) = hooks::find(dir, "post-checkout")
    {
        let zero = "0".repeat(40);
        let call = hooks::HookCall {
            name: "post-checkout",
            program,
            args: vec![
                before.clone().unwrap_or_else(|| zero.clone()),
                state.head.clone().unwrap_or(zero),
                "1".into(),
            ],
            env: Vec::new(),
        };
        if let Ok(run) = runner.run(&call) {
            ran.push(run);
        }
    }
    let full = format!("refs/heads/{}", a.branch);
    let undo = a.from.as_ref().map(|from| Undo {
        what: format!("the switch to {}", a.branch),
        moves: a
            .create_at
            .iter()
            .map(|at| RefMove { name: full.clone(), before: None, after: Some(at.clone()) })
            .collect(),
        switch_to: Some(from.clone()),
    });
    let output = GitWriteOutput {
        done: format!("switched to {}", a.branch),
        branch: state.branch,
        head: state.head,
        files: a.files.clone(),
        hidden_files: a.hidden_files,
        hooks: ran,
        ..GitWriteOutput::default()
    };
    Ok((output, undo))
}

/// Switches back to `branch` for an undo; returns the branch it left.
pub(crate) fn switch_back(repo: &Repo, branch: &str) -> Result<Option<String>, GitError> {
    let state = State::read(repo, &|_| false)?;
    state.require_clean("undoing a switch")?;
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    inv.args(["switch", "--quiet", "--no-guess", branch]);
    inv.run()?;
    Ok(state.branch)
}

/// The files that differ between two commits (every file of `to` when there is no `from`).
pub(crate) fn changed_between(
    repo: &Repo,
    from: Option<&str>,
    to: &str,
) -> Result<Vec<String>, GitError> {
    let mut inv = Invocation::new(repo, files::GIT_OUTPUT_CAP)?;
    match from {
        Some(from) => inv.args(["diff-tree", "-r", "--no-renames", "--name-only", "-z", from, to]),
        None => inv.args(["ls-tree", "-r", "--name-only", "-z", to]),
    };
    let out = inv.run()?;
    if out.truncated {
        return Err(GitError::LimitExceeded("too many files differ".into()));
    }
    Ok(write::names(&out.stdout))
}

/// Plans `git_stash`.
pub fn plan_stash(
    repo: &Repo,
    args: &GitStashArgs,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitPlan, GitError> {
    let settings = write::UserSettings::read(repo)?;
    settings.identity()?;
    let state = State::read(repo, hidden)?;
    state.conflicts()?;
    let mut h = blake3::Hasher::new();
    state.hash_into(&mut h);
    let (summary, action, changed) = match args.action {
        StashOp::Push => {
            if let Some(m) = &args.message {
                write::message(m, "stash")?;
            }
            // Only what the caller can see: a protected file's changes stay where they are.
            let paths: Vec<String> =
                state.tracked_changes().filter(|e| !e.hidden).map(|e| e.path.clone()).collect();
            if paths.is_empty() {
                return Err(GitError::Refused("no changes to tracked files to stash".into()));
            }
            h.update(format!("stash push {}\0", args.message.as_deref().unwrap_or("")).as_bytes());
            let summary =
                format!("stash the changes of {} tracked file(s) and revert them", paths.len());
            let action = StashAction {
                pop: None,
                message: args.message.clone(),
                paths: paths.clone(),
                files: Vec::new(),
                hidden_files: 0,
            };
            (summary, action, paths)
        }
        StashOp::Pop => {
            state.require_clean("popping a stash")?;
            if args.index > 1000 {
                return Err(GitError::invalid("there is no such stash entry"));
            }
            let entry = format!("stash@{{{}}}", args.index);
            let id = write::object_of(repo, &entry)
                .map_err(|_| GitError::invalid(format!("there is no stash entry {entry}")))?;
            let mut changed = changed_between(repo, Some(&format!("{id}^1")), &id)?;
            if let Ok(untracked) = write::object_of(repo, &format!("{id}^3")) {
                changed.extend(changed_between(repo, None, &untracked)?);
            }
            h.update(format!("stash pop {entry} {id}\0").as_bytes());
            let summary = format!(
                "apply and drop {entry} ({}) — {} file(s) change",
                short(&id),
                changed.len()
            );
            let action = StashAction {
                pop: Some((args.index, id)),
                message: None,
                paths: Vec::new(),
                files: Vec::new(),
                hidden_files: 0,
            };
            (summary, action, changed)
        }
    };
    let (files, hidden_files) = write::visible(changed, hidden);
    let mut summary = summary;
    list_into(&mut summary, &files, hidden_files);
    Ok(GitPlan {
        summary,
        fingerprint: *h.finalize().as_bytes(),
        writes: true,
        deletes: false,
        touched: files.clone(),
        hidden_touched: hidden_files,
        action: Box::new(StashAction { files, hidden_files, ..action }),
    })
}

fn stash(repo: &Repo, a: &StashAction) -> Result<GitWriteOutput, GitError> {
    let settings = write::UserSettings::read(repo)?;
    let identity = settings.identity()?;
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    identity.apply(&mut inv);
    let done = match &a.pop {
        None => {
            inv.args(["stash", "push", "--quiet"]);
            if let Some(m) = &a.message {
                inv.args(["--message", m]);
            }
            inv.arg("--").args(&a.paths);
            inv.run()?;
            "stashed the changes".to_owned()
        }
        Some((index, id)) => {
            let entry = format!("stash@{{{index}}}");
            if write::object_of(repo, &entry).ok().as_deref() != Some(id.as_str()) {
                return Err(GitError::Refused(format!("{entry} changed since this was planned")));
            }
            let before = untracked(repo)?;
            inv.args(["stash", "pop", "--quiet", &entry]);
            if let Err(e) = inv.run() {
                roll_back(repo, &before)?;
                return Err(GitError::Refused(format!(
                    "{entry} does not apply cleanly, so nothing was changed and the entry is kept \
                     ({e})"
                )));
            }
            format!("applied and dropped {entry}")
        }
    };
    let state = State::read(repo, &|_| false)?;
    let created = if a.pop.is_none() { write::object_of(repo, "refs/stash").ok() } else { None };
    Ok(GitWriteOutput {
        done,
        branch: state.branch,
        head: state.head,
        created,
        files: a.files.clone(),
        hidden_files: a.hidden_files,
        ..GitWriteOutput::default()
    })
}

/// Untracked, not ignored files.
fn untracked(repo: &Repo) -> Result<std::collections::HashSet<String>, GitError> {
    let mut inv = Invocation::new(repo, files::GIT_OUTPUT_CAP)?;
    inv.args(["ls-files", "--others", "--exclude-standard", "-z"]);
    let out = inv.run()?;
    if out.truncated {
        return Err(GitError::LimitExceeded("too many untracked files".into()));
    }
    Ok(write::names(&out.stdout).into_iter().collect())
}

/// Back to the clean tree a failed pop started from: tracked files to HEAD, and the untracked
/// files the pop added removed (the ones that were there stay).
fn roll_back(repo: &Repo, before: &std::collections::HashSet<String>) -> Result<(), GitError> {
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    inv.args(["reset", "--hard", "--quiet", "HEAD"]);
    inv.run()?;
    for added in untracked(repo)?.difference(before) {
        let rel = std::path::Path::new(added);
        let normal = rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        // Never through a link: every folder on the way must be a real one.
        let linked =
            rel.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()).any(|a| {
                std::fs::symlink_metadata(repo.root().join(a)).map_or(true, |m| !m.is_dir())
            });
        if normal && !linked {
            let _ = std::fs::remove_file(repo.root().join(rel));
        }
    }
    Ok(())
}

fn list_into(summary: &mut String, files: &[String], hidden: u32) {
    for f in files.iter().take(20) {
        summary.push_str(&format!("\n  {}", sluice_core::text::visible_owned(f)));
    }
    if files.len() > 20 {
        summary.push_str(&format!("\n  … and {} more", files.len() - 20));
    }
    if hidden > 0 {
        summary.push_str(&format!("\n  and {hidden} file(s) the sensitive-file shield protects"));
    }
}
