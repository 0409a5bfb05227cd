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
        if let Err(why) = own_objects(&git_dir.join("objects")) {
            return not_repo(why);
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

/// Whether the object store is the repository's own. Git reads objects wherever the store
/// leads — `objects/info/alternates` (what `clone --shared` or `--reference` write) lists other
/// repositories to read from, and a link in place of the store, of a fan-out folder or of a pack
/// brings another repository's objects in — and `git_show` would then show any commit of any
/// repository on the machine, by id or by a short prefix tried one after another. A job may
/// write `.git` like any folder of its project, so this is checked at every open. (A link to a
/// single loose object would need that object's id, which only someone who can already read the
/// other repository knows.)
fn own_objects(objects: &Path) -> Result<(), &'static str> {
    match std::fs::symlink_metadata(objects) {
        Err(_) => return Ok(()), // no store yet: git finds nothing to show
        Ok(m) if m.file_type().is_symlink() || !m.is_dir() => {
            return Err("refused: the project's .git/objects is not a folder of its own (a link \
                        could lead to any repository on this machine)");
        }
        Ok(_) => {}
    }
    for borrowed in ["info/alternates", "info/http-alternates"] {
        if std::fs::symlink_metadata(objects.join(borrowed)).is_ok() {
            return Err("refused: the project's repository borrows objects from another \
                        repository (.git/objects/info/alternates); make it self-contained with \
                        `git repack -a -d` and delete that file, then try again");
        }
    }
    for dir in [objects.to_path_buf(), objects.join("pack"), objects.join("info")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let linked = entry.and_then(|e| e.file_type()).map(|t| t.is_symlink());
            if !matches!(linked, Ok(false)) {
                return Err("refused: the project's .git/objects holds a link (or an entry that \
                            cannot be read), which could bring in another repository's objects");
            }
        }
    }
    Ok(())
}

/// The version of the git Sluice runs (e.g. `2.47.3`), or why it cannot run git.
pub fn git_version() -> Result<String, GitError> {
    exec::tool().map(|t| t.version.clone())
}
