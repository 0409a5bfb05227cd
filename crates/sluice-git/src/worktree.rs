//! Linked worktrees Sluice makes of a project's repository (`git_worktree`): added on a new
//! branch or on one checked out nowhere, and removed only when clean, keeping the branch. git
//! runs through [`Invocation::for_write`], so no hook (`post-checkout`), filter or other
//! repository-controlled program runs while the files are checked out.

use std::path::Path;

use crate::exec::Invocation;
use crate::write::{self, SMALL_CAP};
use crate::{GitError, GitStatusArgs, Repo};

/// The longest worktree name: it becomes a folder name and part of a project name.
const MAX_NAME: usize = 48;

/// Checks a worktree's name: one folder name of letters, digits, `.`, `_` and `-`, not
/// starting with `.` or `-`.
pub fn worktree_name(name: &str) -> Result<(), GitError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with(['.', '-'])
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(GitError::invalid(format!(
            "invalid worktree name {:?}: use 1 to {MAX_NAME} letters, digits, '.', '_' or '-', \
             not starting with '.' or '-'",
            name.chars().take(80).collect::<String>()
        )))
    }
}

/// Adds a linked worktree of `repo` at `path` (an empty folder or none), on `branch`: created
/// at HEAD when `create_branch`, otherwise an existing branch that no worktree has checked out.
pub fn add_worktree(
    repo: &Repo,
    path: &Path,
    branch: &str,
    create_branch: bool,
) -> Result<(), GitError> {
    let full = write::ref_name("branch", branch)?;
    let exists = write::ref_exists(repo, &full)?;
    let shown = crate::refs::shown(branch);
    match (create_branch, exists) {
        (true, true) => {
            return Err(GitError::Refused(format!(
                "branch {shown} already exists; leave out create_branch to use it"
            )));
        }
        (false, false) => {
            return Err(GitError::Refused(format!(
                "there is no branch {shown}; set create_branch to create it at HEAD"
            )));
        }
        (false, true) if checked_out_anywhere(repo, &full)? => {
            return Err(GitError::Refused(format!(
                "branch {shown} is checked out in another worktree (or the project itself); \
                 choose another branch or create a new one"
            )));
        }
        _ => {}
    }
    // A new branch starts at HEAD, which must be a commit.
    let start = if create_branch {
        Some(write::commit_of(repo, "HEAD").map_err(|_| {
            GitError::Refused("the repository has no commit yet to start a branch at".into())
        })?)
    } else {
        None
    };
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    inv.args(["worktree", "add", "--quiet"]);
    match &start {
        Some(start) => inv.args(["--no-track", "-b", branch, "--"]).arg(path).arg(start),
        None => inv.arg("--").arg(path).arg(branch),
    };
    let added = inv.run().map(|_| ());
    if added.is_err()
        && let Some(start) = &start
    {
        // git may have made the branch before the checkout failed: nothing is left half done
        // (it goes only if it is still where it was made).
        let _ = write::move_ref(repo, &full, None, Some(start), "git_worktree (sluice): undo");
    }
    added
}

/// Refuses a worktree with uncommitted changes (tracked or untracked files), which removing
/// it would lose.
pub fn require_clean_worktree(worktree: &Repo) -> Result<(), GitError> {
    let status = crate::status(worktree, &GitStatusArgs::default(), &|_| false)?;
    if status.truncated || !status.entries.is_empty() {
        return Err(GitError::Refused(
            "the worktree has uncommitted changes (or untracked files); commit, stash or delete \
             them first, so nothing is lost"
                .into(),
        ));
    }
    Ok(())
}

/// Removes the clean linked worktree `worktree` of `repo` (its folder and git's record of it);
/// its branch stays.
pub fn remove_worktree(repo: &Repo, worktree: &Repo) -> Result<(), GitError> {
    require_clean_worktree(worktree)?;
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    inv.args(["worktree", "remove", "--"]).arg(worktree.root());
    inv.run().map(|_| ())
}

/// Undoes an [`add_worktree`] whose project could not be authorized: the worktree goes, even
/// though files were checked out into it (they are the branch's), and a branch it created.
pub fn discard_worktree(repo: &Repo, path: &Path, created_branch: Option<&str>) {
    let mut inv = match Invocation::for_write(repo, SMALL_CAP) {
        Ok(inv) => inv,
        Err(_) => return,
    };
    inv.args(["worktree", "remove", "--force", "--"]).arg(path);
    let _ = inv.run();
    if let Some(branch) = created_branch
        && let Ok(full) = write::ref_name("branch", branch)
        && let Ok(at) = write::object_of(repo, &full)
    {
        let _ = write::move_ref(repo, &full, None, Some(&at), "git_worktree (sluice): undo");
    }
}

/// Whether any worktree of the repository (the main one included) has `full` checked out.
fn checked_out_anywhere(repo: &Repo, full: &str) -> Result<bool, GitError> {
    let mut inv = Invocation::new(repo, SMALL_CAP)?;
    inv.args(["worktree", "list", "--porcelain", "-z"]);
    let out = inv.run()?;
    let line = format!("branch {full}");
    Ok(out.stdout.split(|b| *b == 0).any(|l| l == line.as_bytes()))
}
