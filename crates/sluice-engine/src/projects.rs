//! Projects, as the engine keeps them: resolving one for a caller (scope, state, a root that
//! moved or no longer passes the root rules), and the user's operations on them (authorize,
//! modes, policy, git e-mails, shield, auto-run list, rename, disable, remove).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_core::{
    AccessMode, AutoRunRule, ErrorCode, ExecMode, Failure, GitEmails, GitHooks, ProjectId,
    ProjectState, TokenId,
};
use sluice_runner::Workspace;
use sluice_store::{NewProject, Project, RootFingerprint};

use crate::{
    AuditOutcome, Cache, Caller, Engine, EngineEvent, ProjectHandle, ProjectSummary, lock, paths,
    roots, status_of, store_failure,
};

impl Engine {
    /// The projects as stored, each available root checked again against the rules
    /// [`Engine::add_project`] applies. The database can be edited behind Sluice's back (PC-02):
    /// a root that no longer passes — a filesystem root, the home folder or one holding it,
    /// Sluice's data folder, a system folder, an overlap with another project, or a path that is
    /// not its own canonical form — makes its project unavailable, whatever the row says, and
    /// every surface says why. A root that is gone is left to [`root_changed`].
    pub(crate) fn revalidated(&self, mut projects: Vec<Project>) -> Vec<Project> {
        let roots: Vec<(String, PathBuf)> =
            projects.iter().map(|p| (p.name.clone(), p.root.clone())).collect();
        let home = paths::home_dir();
        for (i, project) in projects.iter_mut().enumerate() {
            if !project.state.is_available() {
                continue;
            }
            let existing =
                roots.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, r)| r.clone()).collect();
            let ctx = roots::RootContext { home: home.clone(), data_dir: &self.data_dir, existing };
            let why = match roots::check_root(&project.root, &ctx) {
                Ok(canonical) if canonical == project.root => continue,
                Ok(canonical) => format!(
                    "its stored root {} is not its own canonical path ({})",
                    project.root.display(),
                    canonical.display()
                ),
                Err(f) if f.code == ErrorCode::NotFound || f.code == ErrorCode::WrongKind => {
                    continue;
                }
                Err(f) => f.message,
            };
            // The reason reaches assistants (list_projects): it names no path; the log does.
            tracing::warn!(project = %project.id, %why, "a stored project root fails the root rules");
            project.state = ProjectState::RootLost(
                "the root stored for it fails Sluice's rules for project folders (the database \
                 was changed outside Sluice); remove the project and add its folder again"
                    .to_owned(),
            );
        }
        clamp_worktrees(&mut projects);
        projects
    }

    /// The projects this caller may see (a scoped token sees only its own).
    pub fn visible_projects(&self, caller: &Caller) -> Vec<ProjectSummary> {
        let Ok(cache) = self.refresh() else { return vec![] };
        cache
            .projects
            .iter()
            .filter(|p| caller.sees(p))
            .map(|p| {
                let (status, reason) = status_of(&p.state);
                // A token that limited itself sees what it may still do.
                let limited = caller.limit.is_some();
                ProjectSummary {
                    id: p.id.clone(),
                    name: p.name.clone(),
                    access: if limited || caller.read_only || !caller.may_change() {
                        AccessMode::ReadOnly
                    } else {
                        p.access
                    },
                    exec: exec_for(caller, p.exec),
                    status,
                    reason,
                }
            })
            .collect()
    }

    /// Resolves `reference` (id or name) for this caller and opens its workspace. A project
    /// outside the caller's scope is reported exactly like one that does not exist.
    pub fn project(&self, caller: &Caller, reference: &str) -> Result<ProjectHandle, Failure> {
        let project = find_for(&*self.refresh()?, caller, reference);
        self.open_project(project, reference, caller)
    }

    /// [`Engine::project`] against the state the last refresh loaded, for a lookup that
    /// directly follows one in the same request (a tool call, after its access check).
    pub fn project_as_loaded(
        &self,
        caller: &Caller,
        reference: &str,
    ) -> Result<ProjectHandle, Failure> {
        let project = find_for(&lock(&self.cache), caller, reference);
        self.open_project(project, reference, caller)
    }

    fn open_project(
        &self,
        project: Option<Project>,
        reference: &str,
        caller: &Caller,
    ) -> Result<ProjectHandle, Failure> {
        let Some(project) = project else {
            return Err(Failure::new(
                ErrorCode::ProjectNotFound,
                format!("no project {reference:?} is available to this token; call list_projects"),
            ));
        };
        match &project.state {
            ProjectState::Available => {}
            ProjectState::Disabled => {
                return Err(Failure::new(
                    ErrorCode::ProjectUnavailable,
                    format!("project {:?} is disabled by the user", project.name),
                ));
            }
            ProjectState::RootLost(reason) => {
                return Err(Failure::new(
                    ErrorCode::ProjectUnavailable,
                    format!("project {:?} is unavailable: {reason}", project.name),
                ));
            }
        }
        if let Some(reason) = root_changed(&project) {
            self.mark_root_lost(&project, &reason);
            return Err(Failure::new(
                ErrorCode::ProjectUnavailable,
                format!("project {:?} is unavailable: {reason}", project.name),
            ));
        }
        let parent_root = self.parent_root(&project)?;
        let workspace = self.workspace(&project)?;
        let code = lock(&self.code_indexes).entry(project.id.clone()).or_default().clone();
        let self_limited = caller.limit.is_some();
        Ok(ProjectHandle {
            id: project.id,
            name: project.name,
            access: if self_limited || caller.read_only || !caller.may_change() {
                AccessMode::ReadOnly
            } else {
                project.access
            },
            exec: exec_for(caller, project.exec),
            ask_deletes: project.ask_deletes,
            ask_writes: project.ask_writes,
            git_emails: project.git_emails,
            git_hooks: project.git_hooks,
            self_limited,
            workspace,
            code,
            parent_root,
        })
    }

    pub(crate) fn workspace(&self, project: &Project) -> Result<Arc<Workspace>, Failure> {
        let mut cache = lock(&self.workspaces);
        if let Some((at, ws)) = cache.get(&project.id)
            && *at == project.updated_ms
        {
            return Ok(ws.clone());
        }
        let patterns = project.shield_patterns.clone().unwrap_or_else(default_shield_patterns);
        let autorun = project.autorun_rules.clone().unwrap_or_else(default_autorun_rules);
        let ws = Workspace::open_with(&project.root, &patterns, &autorun).map_err(|e| {
            tracing::warn!(project = %project.id, err = %e, "cannot open project root");
            Failure::new(
                ErrorCode::ProjectUnavailable,
                format!("project {:?} cannot be opened right now", project.name),
            )
        })?;
        let ws = Arc::new(ws);
        cache.insert(project.id.clone(), (project.updated_ms, ws.clone()));
        Ok(ws)
    }

    /// Marks a project whose root moved, vanished or was replaced; tools refuse it until the
    /// user re-enables it.
    pub(crate) fn mark_root_lost(&self, project: &Project, reason: &str) {
        let state = ProjectState::RootLost(reason.to_owned());
        if let Err(err) = self.store.set_project_state(&project.id, &state) {
            tracing::error!(%err, "could not record a lost project root");
        }
        lock(&self.workspaces).remove(&project.id);
        self.invalidate();
        tracing::warn!(project = %project.id, "project root lost");
        self.emit(EngineEvent::ProjectRootLost {
            id: project.id.clone(),
            reason: reason.to_owned(),
        });
        self.record_human("project.root-lost", Some(&project.id), AuditOutcome::Error, None);
    }

    /// Checks every available project's root now (called by the watcher).
    pub fn check_roots(&self) {
        let projects = match self.refresh() {
            Ok(cache) => cache.projects.clone(),
            Err(_) => return,
        };
        for p in projects.iter().filter(|p| p.state.is_available()) {
            if let Some(reason) = root_changed(p) {
                self.mark_root_lost(p, &reason);
            }
        }
    }

    /// Roots of available projects, for the watcher.
    pub(crate) fn available_roots(&self) -> Vec<(ProjectId, PathBuf)> {
        match self.refresh() {
            Ok(cache) => cache
                .projects
                .iter()
                .filter(|p| p.state.is_available())
                .map(|p| (p.id.clone(), p.root.clone()))
                .collect(),
            Err(_) => vec![],
        }
    }

    pub fn projects(&self) -> Result<Vec<Project>, Failure> {
        Ok(self.refresh()?.projects.clone())
    }

    /// The project's folder in Sluice's data folder: its backups, journal, checkpoints and the
    /// records of its git writes.
    pub(crate) fn state_dir(&self, id: &ProjectId) -> PathBuf {
        self.data_dir.join("projects").join(id.as_str())
    }

    /// The record of a project's git writes, which `restore` undoes by operation id.
    pub fn git_journal(&self, handle: &ProjectHandle) -> sluice_git::GitJournal {
        sluice_git::GitJournal::open(&self.state_dir(&handle.id))
    }

    pub fn find_project(&self, reference: &str) -> Result<Project, Failure> {
        let cache = self.refresh()?;
        find(&cache.projects, reference).cloned().ok_or_else(|| {
            Failure::new(ErrorCode::ProjectNotFound, format!("no project {reference:?}"))
        })
    }

    /// Authorizes a folder. Refuses dangerous roots and overlaps (see [`roots::check_root`]).
    pub fn add_project(
        &self,
        path: &Path,
        name: Option<&str>,
        access: AccessMode,
        exec: ExecMode,
    ) -> Result<Project, Failure> {
        if exec.needs_read_write() && access == AccessMode::ReadOnly {
            return Err(Failure::invalid(format!(
                "execution mode {exec} needs read-write access; add --access read-write"
            )));
        }
        let existing = self.projects()?.into_iter().map(|p| (p.name, p.root)).collect::<Vec<_>>();
        let ctx =
            roots::RootContext { home: paths::home_dir(), data_dir: &self.data_dir, existing };
        let root = roots::check_root(path, &ctx)?;
        let name = match name {
            Some(n) => validate_name(n)?,
            None => validate_name(
                &root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            )?,
        };
        let fingerprint = RootFingerprint::of(&root).ok().flatten();
        let project = self
            .store
            .insert_project(&NewProject { name, root, access, exec, fingerprint })
            .map_err(store_failure)?;
        self.after_change("project.add", Some(&project.id));
        Ok(project)
    }

    /// Changes modes. Dropping to read-only forces execution off.
    pub fn set_modes(
        &self,
        reference: &str,
        access: Option<AccessMode>,
        exec: Option<ExecMode>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_modes(&p.id, access, exec).map_err(store_failure)?;
        self.after_change("project.set-modes", Some(&p.id));
        // Its worktree projects follow it down (`clamp_worktrees`), their jobs too.
        for now in self.projects()? {
            let mine = now.id == p.id || now.worktree_of.as_ref() == Some(&p.id);
            if mine && now.exec == ExecMode::Off {
                self.jobs.kill_project(now.id.as_str());
            }
        }
        self.find_project(p.id.as_str())
    }

    /// Sets which changes ask first; `None` keeps a setting.
    pub fn set_policy(
        &self,
        reference: &str,
        ask_deletes: Option<bool>,
        ask_writes: Option<bool>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_policy(&p.id, ask_deletes, ask_writes).map_err(store_failure)?;
        self.after_change("project.policy", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    /// Sets whether the project's git tools show the e-mail addresses of its history. Only the
    /// user sets it (the CLI, the window); no tool does.
    pub fn set_git_emails(&self, reference: &str, emails: GitEmails) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_git_emails(&p.id, emails).map_err(store_failure)?;
        self.after_change("project.git-emails", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    /// Sets whether the project's `git_commit` runs its hooks, each as a job in its sandbox.
    /// Only the user sets it (the CLI, the window); no tool does.
    pub fn set_git_hooks(&self, reference: &str, hooks: GitHooks) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_git_hooks(&p.id, hooks).map_err(store_failure)?;
        self.after_change("project.git-hooks", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    pub fn rename_project(&self, reference: &str, name: &str) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        let name = validate_name(name)?;
        self.store.rename_project(&p.id, &name).map_err(store_failure)?;
        self.after_change("project.rename", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    pub fn disable_project(&self, reference: &str) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        self.store.set_project_state(&p.id, &ProjectState::Disabled).map_err(store_failure)?;
        self.after_change("project.disable", Some(&p.id));
        self.jobs.kill_project(p.id.as_str());
        self.find_project(p.id.as_str())
    }

    /// Re-enables a disabled or root-lost project after checking its folder again; the folder's
    /// identity is re-recorded, since the user is vouching for what is there now.
    pub fn enable_project(&self, reference: &str) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        let canonical = std::fs::canonicalize(&p.root).ok().filter(|c| c == &p.root && c.is_dir());
        let Some(root) = canonical else {
            return Err(Failure::new(
                ErrorCode::NotFound,
                format!(
                    "the folder of project {:?} ({}) is missing or moved; remove the project and \
                     authorize the folder again",
                    p.name,
                    p.root.display()
                ),
            ));
        };
        let fingerprint = RootFingerprint::of(&root).ok().flatten();
        self.store.set_project_fingerprint(&p.id, fingerprint).map_err(store_failure)?;
        self.store.set_project_state(&p.id, &ProjectState::Available).map_err(store_failure)?;
        self.after_change("project.enable", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    /// Unauthorizes a project. A worktree project's worktree goes too ([`Engine::remove_worktree`]);
    /// a parent's worktree projects are unauthorized with it (their folders stay).
    pub fn remove_project(&self, reference: &str) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        if p.worktree_of.is_some() {
            self.remove_worktree(&p, false)?;
            return Ok(p);
        }
        let children: Vec<ProjectId> = (self.projects()?.into_iter())
            .filter(|c| c.worktree_of.as_ref() == Some(&p.id))
            .map(|c| c.id)
            .collect();
        self.store.delete_project(&p.id).map_err(store_failure)?;
        self.after_change("project.remove", Some(&p.id));
        self.jobs.kill_project(p.id.as_str());
        for child in &children {
            lock(&self.workspaces).remove(child);
            lock(&self.mutations).remove(child);
            self.jobs.kill_project(child.as_str());
        }
        Ok(p)
    }

    /// Replaces the shield list (`None` restores the defaults).
    pub fn set_shield(
        &self,
        reference: &str,
        patterns: Option<Vec<String>>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        if let Some(patterns) = &patterns {
            sluice_guard::Shield::new(patterns).map_err(|e| Failure::invalid(e.to_string()))?;
        }
        self.store.set_project_shield(&p.id, patterns.as_deref()).map_err(store_failure)?;
        self.after_change("project.shield", Some(&p.id));
        self.find_project(p.id.as_str())
    }

    /// Replaces the auto-run list (`None` restores the defaults). Every pattern must compile,
    /// and the program and consequence are shown on approvals: printable, one line, bounded.
    pub fn set_autorun(
        &self,
        reference: &str,
        rules: Option<Vec<AutoRunRule>>,
    ) -> Result<Project, Failure> {
        let p = self.find_project(reference)?;
        if let Some(rules) = &rules {
            check_autorun(rules)?;
        }
        self.store.set_project_autorun(&p.id, rules.as_deref()).map_err(store_failure)?;
        self.after_change("project.autorun", Some(&p.id));
        self.find_project(p.id.as_str())
    }
}

/// A worktree project never allows more than its parent does now: its modes as stored (the
/// parent's when it was made) are narrowed to the parent's current ones wherever it is read.
fn clamp_worktrees(projects: &mut [Project]) {
    let parents: Vec<(ProjectId, AccessMode, ExecMode)> =
        projects.iter().map(|p| (p.id.clone(), p.access, p.exec)).collect();
    for p in projects.iter_mut() {
        let Some(parent) = &p.worktree_of else { continue };
        match parents.iter().find(|(id, _, _)| id == parent) {
            Some((_, access, exec)) => {
                if *access == AccessMode::ReadOnly {
                    p.access = AccessMode::ReadOnly;
                }
                p.exec = p.exec.min(*exec);
            }
            None => {
                p.access = AccessMode::ReadOnly;
                p.exec = ExecMode::Off;
            }
        }
    }
}

fn find<'a>(projects: &'a [Project], reference: &str) -> Option<&'a Project> {
    projects
        .iter()
        .find(|p| p.id.as_str() == reference)
        .or_else(|| projects.iter().find(|p| p.name.eq_ignore_ascii_case(reference)))
}

/// The default sensitive-file patterns, for display and as the base of a custom list.
pub fn default_shield_patterns() -> Vec<String> {
    sluice_guard::Shield::DEFAULT_PATTERNS.iter().map(|s| (*s).to_owned()).collect()
}

/// The default auto-run list, for display and as the base of a custom list.
pub fn default_autorun_rules() -> Vec<AutoRunRule> {
    sluice_guard::AutoRun::default_rules()
}

/// Most entries a project's auto-run list may hold, and the longest text of one.
const MAX_AUTORUN_RULES: usize = 500;
const MAX_AUTORUN_TEXT: usize = 300;

fn check_autorun(rules: &[AutoRunRule]) -> Result<(), Failure> {
    if rules.len() > MAX_AUTORUN_RULES {
        return Err(Failure::invalid(format!(
            "an auto-run list holds at most {MAX_AUTORUN_RULES} entries"
        )));
    }
    for r in rules {
        for (what, text) in
            [("pattern", &r.pattern), ("program", &r.program), ("consequence", &r.consequence)]
        {
            if text.trim().is_empty() || text.chars().count() > MAX_AUTORUN_TEXT {
                return Err(Failure::invalid(format!(
                    "each auto-run entry needs a {what} of 1 to {MAX_AUTORUN_TEXT} characters"
                )));
            }
            if text.chars().any(sluice_core::text::is_hidden) {
                return Err(Failure::invalid(format!(
                    "an auto-run {what} may not contain control, bidirectional or zero-width \
                     characters"
                )));
            }
        }
    }
    sluice_guard::AutoRun::new(rules).map_err(|e| Failure::invalid(e.to_string()))?;
    Ok(())
}

/// Names and labels are shown everywhere (tray, prompts, client configs): printable, short.
pub(crate) fn validate_name(name: &str) -> Result<String, Failure> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(Failure::invalid("a name must be 1 to 64 characters"));
    }
    if name.chars().any(sluice_core::text::is_hidden) {
        return Err(Failure::invalid(
            "a name may not contain control, bidirectional or zero-width characters",
        ));
    }
    if ProjectId::parse(name).is_some() || TokenId::parse(name).is_some() {
        return Err(Failure::invalid("a name may not look like an id (proj_…, tok_…)"));
    }
    Ok(name.to_owned())
}

/// The project `reference` names, if this caller may see it.
/// The commands a caller may run in a project whose mode is `exec`: none for a token that
/// limited itself, that reach exposes read-only or whose profile is below `agent`, and none in
/// `any` mode for a hosted assistant's token.
fn exec_for(caller: &Caller, exec: ExecMode) -> ExecMode {
    if caller.limit.is_some()
        || caller.read_only
        || !caller.may_run()
        || (caller.is_remote() && exec == ExecMode::Any)
    {
        ExecMode::Off
    } else {
        exec
    }
}

pub(crate) fn find_for(cache: &Cache, caller: &Caller, reference: &str) -> Option<Project> {
    find(&cache.projects, reference).filter(|p| caller.sees(p)).cloned()
}

/// [`find_for`]'s project id alone, without copying the project.
pub(crate) fn find_id_for(cache: &Cache, caller: &Caller, reference: &str) -> Option<ProjectId> {
    find(&cache.projects, reference).filter(|p| caller.sees(p)).map(|p| p.id.clone())
}

/// Why the project's root is no longer the folder the user authorized, if it is not.
fn root_changed(project: &Project) -> Option<String> {
    // Every tool call asks, so the usual answer takes one `stat`: the path still leads to the
    // very folder authorized (its device and inode). That is what matters — the tools reach the
    // project through the folder's own handle, and a path that leads there through a new link
    // still leads to it. Anything else is explained below.
    if let (Some(then), Ok(Some(now))) = (project.fingerprint, RootFingerprint::of(&project.root))
        && now == then
    {
        return None;
    }
    // Every tool call checks: the time is only formatted when something changed.
    let noticed = |what: &str| {
        let when = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
        Some(format!("{what} (noticed {when})"))
    };
    match std::fs::canonicalize(&project.root) {
        Err(_) => noticed("the folder was moved or deleted"),
        Ok(c) if c != project.root => noticed("the folder path now leads elsewhere"),
        Ok(_) => match (RootFingerprint::of(&project.root), project.fingerprint) {
            (Ok(Some(now)), Some(then)) if now != then => {
                noticed("the folder was replaced by another one")
            }
            (Err(_), _) => noticed("the folder is no longer readable"),
            // `Ok(None)`: the system has no inode (Windows); the canonical path, checked
            // above, still leads to the folder.
            _ => None,
        },
    }
}
