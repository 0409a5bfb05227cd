//! Opening a project as a repository, with the checks that keep git pointed at exactly the
//! project's own `.git` directory.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{GitError, exec};

/// A project whose root is a git repository root. Holds physical paths, so its `Debug` output
/// hides them.
pub struct Repo {
    root: PathBuf,
    git_dir: PathBuf,
}

impl fmt::Debug for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Repo").finish_non_exhaustive()
    }
}

impl Repo {
    /// Opens the repository rooted exactly at `project_root`.
    ///
    /// `<root>/.git` must be a real directory: a `.git` *file* (linked worktrees, submodule
    /// checkouts) or symlink can point at any repository on the machine, and a `commondir` file
    /// inside `.git` can do the same. Parent directories are never searched: git always gets
    /// `GIT_DIR` and `GIT_WORK_TREE` explicitly.
    pub fn open(project_root: &Path) -> Result<Repo, GitError> {
        if !project_root.is_absolute() {
            return Err(GitError::invalid("the project root must be an absolute path"));
        }
        let git_dir = project_root.join(".git");
        let not_repo = |why: &str| Err(GitError::NotAGitRepository(why.to_owned()));
        match std::fs::symlink_metadata(&git_dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return not_repo(
                    "the project is not a git repository: there is no .git directory at the \
                     project root (repositories in parent folders are never used)",
                );
            }
            Err(_) => return not_repo("the project's .git directory cannot be read"),
            Ok(m) if m.file_type().is_symlink() => {
                return not_repo(
                    "refused: the project's .git is a symbolic link, which could point at any \
                     repository on this machine",
                );
            }
            Ok(m) if m.is_file() => {
                return not_repo(
                    "refused: the project's .git is a file (a linked worktree or submodule \
                     checkout), which could point at any repository on this machine; authorize \
                     the main repository folder instead",
                );
            }
            Ok(m) if !m.is_dir() => {
                return not_repo("refused: the project's .git is not a directory");
            }
            Ok(_) => {}
        }
        if std::fs::symlink_metadata(git_dir.join("commondir")).is_ok() {
            return not_repo(
                "refused: the project's .git has a commondir file, which redirects git to \
                 another repository",
            );
        }
        exec::tool()?;
        Ok(Repo { root: project_root.to_path_buf(), git_dir })
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }
}

/// The version of the git Sluice runs (e.g. `2.47.3`), or why it cannot run git.
pub fn git_version() -> Result<String, GitError> {
    exec::tool().map(|t| t.version.clone())
}
