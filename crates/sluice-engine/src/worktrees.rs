//! Worktree projects: linked worktrees of a project's repository that Sluice made (the
//! `git_worktree` tool) and authorized as projects of their own, named `<parent>@<name>`, with
//! the parent's modes and lists (copied by the store in one sealed write) and a sealed link to
//! it (`worktree_of`). Who sees one is decided with its parent (`Caller::sees`); its repository
//! opens only as that worktree of that parent (`sluice_git::Repo::open_worktree`).
//!
//! The folder is `<parent's folder>/<root name>.worktrees/<name>`, beside the project, so it
//! never overlaps a project nor lies in Sluice's data folder (checked with the root rules, as
//! any project folder), and nothing is left half done: a worktree whose project cannot be
//! authorized is removed again.

use std::path::{Path, PathBuf};

use sluice_core::{Coded, ErrorCode, Failure, ProjectState};
use sluice_git::{GitError, Repo};
use sluice_store::{Project, RootFingerprint};

use crate::{Engine, ProjectHandle, lock, paths, roots, store_failure};

fn git_failure(e: GitError) -> Failure {
    Failure::new(e.code(), e.to_string())
}

/// What to make: the worktree's name, and its branch (new at HEAD, or existing and checked out
/// nowhere).
#[derive(Debug, Clone)]
pub struct NewWorktree<'a> {
    pub name: &'a str,
    pub branch: &'a str,
    pub create_branch: bool,
}

impl NewWorktree<'_> {
    /// What an approval of making it binds: the parent and the request.
    pub fn fingerprint(&self, parent: &ProjectHandle) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(b"git_worktree create\0");
        for part in [parent.id.as_str(), self.name, self.branch] {
            h.update(part.as_bytes());
            h.update(b"\0");
        }
        h.update(&[u8::from(self.create_branch)]);
        *h.finalize().as_bytes()
    }
}

/// A worktree project that may be removed: its branch, and what an approval binds (the project
/// and the worktree's HEAD).
#[derive(Debug, Clone)]
pub struct WorktreeRemoval {
    pub branch: String,
    pub fingerprint: [u8; 32],
}

impl Engine {
    /// The root of a worktree project's parent, which must be available; `None` for any other
    /// project.
    pub(crate) fn parent_root(&self, project: &Project) -> Result<Option<PathBuf>, Failure> {
        let Some(parent_id) = &project.worktree_of else { return Ok(None) };
        let parent = lock(&self.cache).projects.iter().find(|p| &p.id == parent_id).cloned();
        match parent {
            Some(p) if p.state == ProjectState::Available => Ok(Some(p.root)),
            _ => Err(Failure::new(
                ErrorCode::ProjectUnavailable,
                format!(
                    "project {:?} is a worktree of a project that is unavailable now",
                    project.name
                ),
            )),
        }
    }

    /// Makes a linked worktree of `parent` (a read-write project the caller holds) and
    /// authorizes it as a project.
    pub fn create_worktree(
        &self,
        parent: &ProjectHandle,
        new: &NewWorktree<'_>,
    ) -> Result<Project, Failure> {
        if parent.parent_root.is_some() {
            return Err(Failure::invalid(
                "this project is itself a worktree; make worktrees from its parent project",
            ));
        }
        sluice_git::worktree_name(new.name).map_err(git_failure)?;
        let project_name =
            crate::projects::validate_name(&format!("{}@{}", parent.name, new.name))?;
        let projects = self.projects()?;
        if projects.iter().any(|p| p.name.eq_ignore_ascii_case(&project_name)) {
            return Err(Failure::new(
                ErrorCode::Conflict,
                format!("a project named {project_name:?} already exists"),
            ));
        }
        let parent_root = parent.workspace.root().path().to_path_buf();
        let repo = parent.repo().map_err(git_failure)?;
        let target = worktree_folder(&parent_root, new.name).ok_or_else(|| {
            Failure::invalid("this project's folder has no parent folder to keep worktrees in")
        })?;
        make_folder(&target, &parent.name, new.name)?;
        let existing = projects.iter().map(|p| (p.name.clone(), p.root.clone())).collect();
        let ctx =
            roots::RootContext { home: paths::home_dir(), data_dir: &self.data_dir, existing };
        let root = match roots::check_root(&target, &ctx) {
            Ok(root) => root,
            Err(f) => {
                tracing::warn!(why = %f.message, "a worktree folder fails the root rules");
                let _ = std::fs::remove_dir(&target);
                return Err(Failure::new(
                    f.code,
                    format!(
                        "the worktree folder for project {:?} fails Sluice's rules for project \
                         folders (it would overlap another project or Sluice's data folder)",
                        parent.name
                    ),
                ));
            }
        };
        // Under the project's change lock, as its other git writes are.
        let mutations = self.mutations(parent)?;
        let added = mutations
            .exclusive(|| sluice_git::add_worktree(&repo, &root, new.branch, new.create_branch));
        if let Err(e) = added {
            let _ = std::fs::remove_dir(&root);
            return Err(git_failure(e));
        }
        let created = new.create_branch.then_some(new.branch);
        let authorized =
            Repo::open_worktree(&root, &parent_root).map_err(git_failure).and_then(|_| {
                let fingerprint = RootFingerprint::of(&root).ok().flatten();
                self.store
                    .insert_worktree_project(&parent.id, &project_name, &root, fingerprint)
                    .map_err(store_failure)
            });
        match authorized {
            Ok(project) => {
                self.after_change("project.worktree-add", Some(&project.id));
                Ok(project)
            }
            Err(f) => {
                mutations.exclusive(|| sluice_git::discard_worktree(&repo, &root, created));
                Err(f)
            }
        }
    }

    /// The worktree project `name` of `parent` (by its folder, so renaming either project
    /// does not lose it).
    pub fn worktree_project(&self, parent: &ProjectHandle, name: &str) -> Result<Project, Failure> {
        let folder = worktree_folder(parent.workspace.root().path(), name);
        self.projects()?
            .into_iter()
            .find(|p| {
                p.worktree_of.as_ref() == Some(&parent.id) && Some(&p.root) == folder.as_ref()
            })
            .ok_or_else(|| {
                Failure::new(
                    ErrorCode::ProjectNotFound,
                    format!("project {:?} has no worktree named {name:?}", parent.name),
                )
            })
    }

    /// Checks a worktree project can be removed now (its worktree verifies and is clean).
    pub fn worktree_removal(&self, project: &Project) -> Result<WorktreeRemoval, Failure> {
        let (_, worktree) = self.worktree_repos(project)?;
        sluice_git::require_clean_worktree(&worktree).map_err(git_failure)?;
        let status =
            sluice_git::status(&worktree, &Default::default(), &|_| false).map_err(git_failure)?;
        let mut h = blake3::Hasher::new();
        h.update(b"git_worktree remove\0");
        h.update(project.id.as_str().as_bytes());
        h.update(b"\0");
        h.update(status.head.as_deref().unwrap_or("").as_bytes());
        Ok(WorktreeRemoval {
            branch: status.branch.unwrap_or_else(|| "(detached HEAD)".to_owned()),
            fingerprint: *h.finalize().as_bytes(),
        })
    }

    /// Removes a worktree project: its jobs are stopped, the clean worktree goes (`git worktree
    /// remove`; the branch stays), and the project is unauthorized. `strict` (a tool) refuses
    /// a worktree that is gone, no longer verifies or whose parent is unavailable; otherwise
    /// (the user) only the authorization goes then, and the folder is left as it is. A
    /// worktree with uncommitted changes is refused either way.
    pub fn remove_worktree(&self, project: &Project, strict: bool) -> Result<(), Failure> {
        match self.worktree_repos(project) {
            Ok((repo, worktree)) => {
                sluice_git::require_clean_worktree(&worktree).map_err(git_failure)?;
                self.jobs.kill_project(project.id.as_str());
                let parent =
                    self.find_project(project.worktree_of.as_ref().map_or("", |p| p.as_str()))?;
                let mutations = self.mutations_for(&parent)?;
                mutations
                    .exclusive(|| sluice_git::remove_worktree(&repo, &worktree))
                    .map_err(git_failure)?;
                // The folder of worktrees goes with its last one (it is left if anything is in it).
                if let Some(container) = project.root.parent() {
                    let _ = std::fs::remove_dir(container);
                }
            }
            Err(f) if strict => return Err(f),
            Err(f) => {
                tracing::warn!(project = %project.id, why = %f.message, "unauthorizing a worktree project without removing its folder");
            }
        }
        self.store.delete_project(&project.id).map_err(store_failure)?;
        self.after_change("project.remove", Some(&project.id));
        self.jobs.kill_project(project.id.as_str());
        Ok(())
    }

    /// The parent's repository and the verified worktree of a worktree project.
    fn worktree_repos(&self, project: &Project) -> Result<(Repo, Repo), Failure> {
        let parent_root = self.parent_root(project)?.ok_or_else(|| {
            Failure::invalid(format!("project {:?} is not a worktree", project.name))
        })?;
        let repo = Repo::open(&parent_root).map_err(git_failure)?;
        let worktree = Repo::open_worktree(&project.root, &parent_root).map_err(git_failure)?;
        Ok((repo, worktree))
    }
}

/// `<parent's folder>/<root name>.worktrees/<name>`.
fn worktree_folder(parent_root: &Path, name: &str) -> Option<PathBuf> {
    let folder = parent_root.file_name()?;
    let mut container = folder.to_os_string();
    container.push(".worktrees");
    Some(parent_root.parent()?.join(container).join(name))
}

/// Creates the worktree's empty folder (and the folder of worktrees, a real folder, not a
/// link); a folder already there is refused, so nothing of the user's is checked out over.
fn make_folder(target: &Path, parent: &str, name: &str) -> Result<(), Failure> {
    let failed = || {
        Failure::new(
            ErrorCode::Internal,
            format!("cannot create the folder for worktree {name:?} of project {parent:?}"),
        )
    };
    let container = target.parent().ok_or_else(failed)?;
    std::fs::create_dir_all(container).map_err(|_| failed())?;
    match std::fs::symlink_metadata(container) {
        Ok(m) if m.is_dir() => {}
        _ => {
            return Err(Failure::new(
                ErrorCode::Forbidden,
                format!("the folder of worktrees of project {parent:?} is not a plain folder"),
            ));
        }
    }
    std::fs::create_dir(target).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Failure::new(
            ErrorCode::Conflict,
            format!("project {parent:?} already has a worktree folder named {name:?}"),
        ),
        _ => failed(),
    })
}
