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
    /// A worktree Sluice made: its parent's `.git`, verified at open ([`Repo::open_worktree`]),
    /// handed to git as `GIT_COMMON_DIR` so git never follows the `commondir` file itself.
    common_dir: Option<PathBuf>,
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
        Ok(Repo { root: project_root.to_path_buf(), git_dir, common_dir: None })
    }

    /// Opens a linked worktree Sluice made of the repository at `parent_root` (a registered
    /// worktree project), and no other: the parent must pass [`Repo::open`]; `<root>/.git`
    /// must be a regular file holding `gitdir: <P>/.git/worktrees/<id>` with no link on the
    /// way; that folder's `commondir` must lead back to the parent's `.git` and its `gitdir`
    /// file to `<root>/.git`. Anything else — a `.git` file rewritten to point at another
    /// repository, a worktree of another repository — is refused as [`Repo::open`] refuses
    /// every `.git` file.
    pub fn open_worktree(project_root: &Path, parent_root: &Path) -> Result<Repo, GitError> {
        let refused = || {
            GitError::NotAGitRepository(
                "refused: the project's .git file does not lead to the worktree Sluice made of                  its parent project's repository (it was changed, or the worktree was not made                  by Sluice)"
                    .to_owned(),
            )
        };
        if !project_root.is_absolute() {
            return Err(GitError::invalid("the project root must be an absolute path"));
        }
        let parent = Repo::open(parent_root)?;
        let common = std::fs::canonicalize(&parent.git_dir).map_err(|_| refused())?;
        if common != parent.git_dir {
            return Err(refused());
        }
        let root = std::fs::canonicalize(project_root).map_err(|_| refused())?;
        if root != project_root {
            return Err(refused());
        }
        let dot_git = root.join(".git");
        let pointer = read_small_file(&dot_git).ok_or_else(refused)?;
        let gitdir = pointer
            .strip_prefix("gitdir: ")
            .map(|p| p.trim_end_matches(['\n', '\r']))
            .filter(|p| !p.is_empty() && !p.contains(['\n', '\r']))
            .ok_or_else(refused)?;
        // git writes the path absolute, or relative to the worktree with
        // `worktree.useRelativePaths`; either way it must already be canonical.
        let written = root.join(gitdir);
        let git_dir = std::fs::canonicalize(&written).map_err(|_| refused())?;
        let lexical: PathBuf = written.components().collect();
        if git_dir != lexical || git_dir.parent() != Some(&common.join("worktrees")) {
            return Err(refused());
        }
        match std::fs::symlink_metadata(&git_dir) {
            Ok(m) if m.is_dir() => {}
            _ => return Err(refused()),
        }
        let commondir = read_small_file(&git_dir.join("commondir")).ok_or_else(refused)?;
        let commondir = git_dir.join(commondir.trim_end_matches(['\n', '\r']));
        if std::fs::canonicalize(commondir).ok().as_ref() != Some(&common) {
            return Err(refused());
        }
        let back = read_small_file(&git_dir.join("gitdir")).ok_or_else(refused)?;
        let back = git_dir.join(back.trim_end_matches(['\n', '\r']));
        if std::fs::canonicalize(back).ok().as_ref() != Some(&dot_git) {
            return Err(refused());
        }
        Ok(Repo { root, git_dir, common_dir: Some(common) })
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The repository's git directory: `.git`, or a worktree's own folder in its parent's
    /// `.git/worktrees` (its HEAD and index).
    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The verified parent `.git` of a worktree Sluice made.
    pub(crate) fn common_dir(&self) -> Option<&Path> {
        self.common_dir.as_deref()
    }
}

/// A small regular file (not a link) as text, or `None`: a `.git` file and a worktree's
/// `commondir` and `gitdir` hold one path each.
fn read_small_file(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
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
