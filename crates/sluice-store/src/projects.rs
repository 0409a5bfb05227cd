//! Authorized projects: their identity, root folder, modes and state.
//!
//! The mode rule lives here as well as in a CHECK constraint: execution `project` or `any` can
//! change files, so it needs `read-write`; dropping to `read-only` forces execution `off`.

use std::path::{Path, PathBuf};

use rusqlite::types::Type;
use rusqlite::{OptionalExtension, Row, params};
use sluice_core::{
    AccessMode, AutoRunRule, ExecMode, GitEmails, GitHooks, HostPath, NetworkMode, ProjectId,
    ProjectState, SandboxSettings,
};

use crate::error::unique_violation;
use crate::seal::{Before, PROJECTS, TOKENS};
use crate::{Store, StoreError, now_ms};

/// The state of a project whose seal does not match. Assistants read it (`list_projects`): it
/// names no path.
pub(crate) const TAMPERED: &str = "its settings were changed outside Sluice (their seal does \
                                   not match); see `sluice doctor`";

/// Device and inode of a project's root when it was authorized. A folder deleted and recreated
/// at the same path gets a new inode: the project must not silently follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootFingerprint {
    pub dev: u64,
    pub ino: u64,
}

impl RootFingerprint {
    /// The fingerprint of an existing folder (unix); `None` where the platform has no inode.
    pub fn of(path: &Path) -> std::io::Result<Option<RootFingerprint>> {
        let meta = std::fs::metadata(path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Ok(Some(RootFingerprint { dev: meta.dev(), ino: meta.ino() }))
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            Ok(None)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub id: ProjectId,
    pub name: String,
    /// Canonical physical path. Never sent to an AI client.
    pub root: PathBuf,
    pub access: AccessMode,
    pub exec: ExecMode,
    pub state: ProjectState,
    /// `None`: the default shield list; otherwise the user's own list.
    pub shield_patterns: Option<Vec<String>>,
    /// `None`: the default auto-run list; otherwise the user's own list.
    pub autorun_rules: Option<Vec<AutoRunRule>>,
    pub fingerprint: Option<RootFingerprint>,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// Whether deleting (or moving away) files asks the user first. Default: yes.
    pub ask_deletes: bool,
    /// Whether creating or changing files asks the user first. Default: no.
    pub ask_writes: bool,
    /// Outbound network for the project's jobs: `None` follows the execution mode's default,
    /// `Some` is the user's explicit choice.
    pub network: Option<NetworkMode>,
    /// What the project changed of the default sandbox of its jobs.
    pub sandbox: SandboxSettings,
    /// Whether its git tools show the e-mail addresses of its history. Default: hidden.
    pub git_emails: GitEmails,
    /// The project this one is a linked worktree of (made by Sluice's `git_worktree`).
    pub worktree_of: Option<ProjectId>,
    /// Whether its git writes run the repository's hooks (in its sandbox). Default: off.
    pub git_hooks: GitHooks,
}

/// What [`Store::insert_project`] needs; the id and timestamps are assigned by the store.
#[derive(Debug, Clone)]
pub struct NewProject {
    pub name: String,
    /// Must already be canonical (the caller resolved and vetted it).
    pub root: PathBuf,
    pub access: AccessMode,
    pub exec: ExecMode,
    pub fingerprint: Option<RootFingerprint>,
}

/// The modes after [`Store::set_project_modes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModeChange {
    pub access: AccessMode,
    pub exec: ExecMode,
    /// Execution was on and the drop to read-only turned it off: the caller stops the jobs.
    pub exec_forced_off: bool,
}

pub(crate) const COLUMNS: &str = "id, name, root, access, exec, state, state_reason, shield_patterns, \
                       root_dev, root_ino, created_ms, updated_ms, ask_deletes, ask_writes, \
                       network_mode, autorun_rules, hide_paths, unhide_paths, grants, \
                       sockets, require_full, git_emails, worktree_of, git_hooks";

const MAX_NAME_CHARS: usize = 80;

impl Store {
    pub fn insert_project(&self, new: &NewProject) -> Result<Project, StoreError> {
        let name = validate_name(&new.name)?;
        let root = root_text(&new.root)?;
        check_modes(new.access, new.exec)?;
        let now = now_ms();
        let project = Project {
            id: ProjectId::generate(),
            name: name.to_owned(),
            root: new.root.clone(),
            access: new.access,
            exec: new.exec,
            state: ProjectState::Available,
            shield_patterns: None,
            autorun_rules: None,
            fingerprint: new.fingerprint,
            created_ms: now,
            updated_ms: now,
            // The column defaults: deletes ask, writes do not.
            ask_deletes: true,
            ask_writes: false,
            network: None,
            sandbox: SandboxSettings::default(),
            git_emails: GitEmails::Hide,
            worktree_of: None,
            git_hooks: GitHooks::Off,
        };

        let (dev, ino) = fingerprint_columns(new.fingerprint);
        self.write_sealed(&PROJECTS, project.id.as_str(), Before::Any, |tx| {
            tx.execute(
                "INSERT INTO projects (id, name, root, access, exec, state, root_dev, root_ino,
                                       created_ms, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'available', ?6, ?7, ?8, ?8)",
                params![
                    project.id.as_str(),
                    name,
                    root,
                    new.access.as_str(),
                    new.exec.as_str(),
                    dev,
                    ino,
                    now
                ],
            )
            .map_err(|e| project_conflict(e, name))
        })?;
        Ok(project)
    }

    /// Every project, by name.
    pub fn list_projects(&self) -> Result<Vec<Project>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare(&format!("SELECT {COLUMNS} FROM projects ORDER BY name, id"))?;
        let rows = stmt.query_map([], project_from_row)?;
        let mut projects: Vec<Project> = rows.collect::<Result<_, _>>()?;
        for p in &mut projects {
            self.mark_if_tampered(&conn, p)?;
        }
        Ok(projects)
    }

    pub fn project(&self, id: &ProjectId) -> Result<Option<Project>, StoreError> {
        let conn = self.conn();
        let sql = format!("SELECT {COLUMNS} FROM projects WHERE id = ?1");
        let mut found = conn.query_row(&sql, [id.as_str()], project_from_row).optional()?;
        if let Some(p) = &mut found {
            self.mark_if_tampered(&conn, p)?;
        }
        Ok(found)
    }

    /// By id (`proj_…`) or by name (case-insensitive). Names can never look like ids, so the
    /// two never collide.
    pub fn find_project(&self, id_or_name: &str) -> Result<Option<Project>, StoreError> {
        if let Some(id) = ProjectId::parse(id_or_name) {
            return self.project(&id);
        }
        let conn = self.conn();
        let sql = format!("SELECT {COLUMNS} FROM projects WHERE name = ?1");
        let mut found = conn.query_row(&sql, [id_or_name.trim()], project_from_row).optional()?;
        if let Some(p) = &mut found {
            self.mark_if_tampered(&conn, p)?;
        }
        Ok(found)
    }

    /// Changes the access and/or execution mode. Asking for execution `project`/`any` on a
    /// read-only project is refused; dropping to read-only without naming an execution mode
    /// turns execution off (reported in [`ModeChange::exec_forced_off`]).
    pub fn set_project_modes(
        &self,
        id: &ProjectId,
        access: Option<AccessMode>,
        exec: Option<ExecMode>,
    ) -> Result<ModeChange, StoreError> {
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            set_modes(tx, id, access, exec)
        })
    }

    /// Sets which changes ask the user first; `None` leaves a setting as it is.
    pub fn set_project_policy(
        &self,
        id: &ProjectId,
        ask_deletes: Option<bool>,
        ask_writes: Option<bool>,
    ) -> Result<(), StoreError> {
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET ask_deletes = coalesce(?2, ask_deletes),
                                 ask_writes = coalesce(?3, ask_writes), updated_ms = ?4
             WHERE id = ?1",
                params![
                    id.as_str(),
                    ask_deletes.map(i64::from),
                    ask_writes.map(i64::from),
                    now_ms()
                ],
            )?;
            expect_one(n, id)
        })
    }

    /// Sets the network of the project's jobs: `None` restores the mode's default.
    pub fn set_project_network(
        &self,
        id: &ProjectId,
        network: Option<NetworkMode>,
    ) -> Result<(), StoreError> {
        let value = network.map(NetworkMode::as_str);
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET network_mode = ?2, updated_ms = ?3 WHERE id = ?1",
                params![id.as_str(), value, now_ms()],
            )?;
            expect_one(n, id)
        })
    }

    /// Sets whether the project's git tools show e-mail addresses (the user's decision).
    pub fn set_project_git_emails(
        &self,
        id: &ProjectId,
        emails: GitEmails,
    ) -> Result<(), StoreError> {
        if self.schema < crate::schema::GIT_EMAILS_SCHEMA {
            return Err(StoreError::Invalid(
                "this database predates the git e-mail setting".into(),
            ));
        }
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET git_emails = ?2, updated_ms = ?3 WHERE id = ?1",
                params![id.as_str(), emails.as_str(), now_ms()],
            )?;
            expect_one(n, id)
        })
    }

    /// Sets whether the project's git writes run its hooks in its sandbox (the user's decision).
    pub fn set_project_git_hooks(&self, id: &ProjectId, hooks: GitHooks) -> Result<(), StoreError> {
        if self.schema < crate::schema::GIT_HOOKS_SCHEMA {
            return Err(StoreError::Invalid("this database predates the git hooks setting".into()));
        }
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET git_hooks = ?2, updated_ms = ?3 WHERE id = ?1",
                params![id.as_str(), hooks.as_str(), now_ms()],
            )?;
            expect_one(n, id)
        })
    }

    pub fn rename_project(&self, id: &ProjectId, name: &str) -> Result<(), StoreError> {
        let name = validate_name(name)?;
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx
                .execute(
                    "UPDATE projects SET name = ?2, updated_ms = ?3 WHERE id = ?1",
                    params![id.as_str(), name, now_ms()],
                )
                .map_err(|e| project_conflict(e, name))?;
            expect_one(n, id)
        })
    }

    pub fn set_project_state(
        &self,
        id: &ProjectId,
        state: &ProjectState,
    ) -> Result<(), StoreError> {
        let (state, reason) = match state {
            ProjectState::Available => ("available", None),
            ProjectState::Disabled => ("disabled", None),
            ProjectState::RootLost(reason) => ("root-lost", Some(reason.as_str())),
        };
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET state = ?2, state_reason = ?3, updated_ms = ?4 WHERE id = ?1",
                params![id.as_str(), state, reason, now_ms()],
            )?;
            expect_one(n, id)
        })
    }

    /// `None` restores the default shield list.
    pub fn set_project_shield(
        &self,
        id: &ProjectId,
        patterns: Option<&[String]>,
    ) -> Result<(), StoreError> {
        let json = match patterns {
            None => None,
            Some(p) => Some(
                serde_json::to_string(p)
                    .map_err(|e| StoreError::Invalid(format!("bad shield patterns: {e}")))?,
            ),
        };
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET shield_patterns = ?2, updated_ms = ?3 WHERE id = ?1",
                params![id.as_str(), json, now_ms()],
            )?;
            expect_one(n, id)
        })
    }

    /// `None` restores the default auto-run list.
    pub fn set_project_autorun(
        &self,
        id: &ProjectId,
        rules: Option<&[AutoRunRule]>,
    ) -> Result<(), StoreError> {
        let json = match rules {
            None => None,
            Some(r) => Some(
                serde_json::to_string(r)
                    .map_err(|e| StoreError::Invalid(format!("bad auto-run rules: {e}")))?,
            ),
        };
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET autorun_rules = ?2, updated_ms = ?3 WHERE id = ?1",
                params![id.as_str(), json, now_ms()],
            )?;
            expect_one(n, id)
        })
    }

    /// Replaces the project's sandbox settings (the engine checked them).
    pub fn set_project_sandbox(
        &self,
        id: &ProjectId,
        settings: &SandboxSettings,
    ) -> Result<(), StoreError> {
        let json = |paths: &[HostPath]| {
            serde_json::to_string(paths)
                .map_err(|e| StoreError::Invalid(format!("bad sandbox paths: {e}")))
        };
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET hide_paths = ?2, unhide_paths = ?3, grants = ?4, sockets = ?5,
                                 require_full = ?6, updated_ms = ?7
             WHERE id = ?1",
                params![
                    id.as_str(),
                    json(&settings.hide)?,
                    json(&settings.unhide)?,
                    json(&settings.grants)?,
                    json(&settings.sockets)?,
                    i64::from(settings.require_full),
                    now_ms()
                ],
            )?;
            expect_one(n, id)
        })
    }

    /// Records a new fingerprint, e.g. after the user confirmed a replaced root is theirs.
    pub fn set_project_fingerprint(
        &self,
        id: &ProjectId,
        fingerprint: Option<RootFingerprint>,
    ) -> Result<(), StoreError> {
        let (dev, ino) = fingerprint_columns(fingerprint);
        self.write_sealed(&PROJECTS, id.as_str(), Before::MustVerify, |tx| {
            let n = tx.execute(
                "UPDATE projects SET root_dev = ?2, root_ino = ?3, updated_ms = ?4 WHERE id = ?1",
                params![id.as_str(), dev, ino, now_ms()],
            )?;
            expect_one(n, id)
        })
    }

    /// Removes the project (and the worktree projects made from it), their allow rules, and
    /// their place in every token scope (a token scoped only to removed projects then sees
    /// nothing; it never widens to "all projects").
    pub fn delete_project(&self, id: &ProjectId) -> Result<(), StoreError> {
        let key = self.sealing()?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let children: Vec<String> = if self.schema >= crate::schema::WORKTREE_SCHEMA {
            tx.prepare("SELECT id FROM projects WHERE worktree_of = ?1")?
                .query_map([id.as_str()], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let mut doomed = children.clone();
        doomed.push(id.as_str().to_owned());
        // The tokens whose scope loses these projects: resealed after, if they verified before
        // (one edited outside Sluice stays refused).
        let mut reseal = Vec::new();
        for project in &doomed {
            let scoped: Vec<String> = tx
                .prepare("SELECT token_id FROM token_scopes WHERE project_id = ?1")?
                .query_map([project], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for token in scoped {
                if !reseal.contains(&token)
                    && key.map_or(Ok(false), |key| TOKENS.verify(&tx, key, &token))?
                {
                    reseal.push(token);
                }
            }
        }
        for child in &children {
            tx.execute("DELETE FROM projects WHERE id = ?1", [child])?;
        }
        let n = tx.execute("DELETE FROM projects WHERE id = ?1", [id.as_str()])?;
        expect_one(n, id)?;
        if let Some(key) = key {
            for token in &reseal {
                TOKENS.reseal(&tx, key, token)?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// A project whose seal does not match is unavailable, whatever its row says.
    pub(crate) fn mark_if_tampered(
        &self,
        conn: &rusqlite::Connection,
        project: &mut Project,
    ) -> Result<(), StoreError> {
        if !self.row_sealed(conn, &PROJECTS, &project.id.as_str())? {
            project.state = ProjectState::RootLost(TAMPERED.to_owned());
        }
        Ok(())
    }
}

fn set_modes(
    tx: &rusqlite::Transaction<'_>,
    id: &ProjectId,
    access: Option<AccessMode>,
    exec: Option<ExecMode>,
) -> Result<ModeChange, StoreError> {
    let current: Option<(String, String)> = tx
        .query_row("SELECT access, exec FROM projects WHERE id = ?1", [id.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((cur_access, cur_exec)) = current else {
        return Err(project_not_found(id.as_str()));
    };
    let cur_access: AccessMode = cur_access.parse().map_err(StoreError::Corrupt)?;
    let cur_exec: ExecMode = cur_exec.parse().map_err(StoreError::Corrupt)?;
    let new_access = access.unwrap_or(cur_access);
    let mut new_exec = exec.unwrap_or(cur_exec);
    let mut exec_forced_off = false;
    // Read-only means nothing the assistant starts may write: even `safe` inspections stop
    // at a downgrade until the user turns execution on again.
    let downgraded = new_access == AccessMode::ReadOnly && cur_access == AccessMode::ReadWrite;
    if downgraded && exec.is_none() && new_exec != ExecMode::Off {
        new_exec = ExecMode::Off;
        exec_forced_off = true;
    }
    check_modes(new_access, new_exec)?;
    tx.execute(
        "UPDATE projects SET access = ?2, exec = ?3, updated_ms = ?4 WHERE id = ?1",
        params![id.as_str(), new_access.as_str(), new_exec.as_str(), now_ms()],
    )?;
    Ok(ModeChange { access: new_access, exec: new_exec, exec_forced_off })
}

fn check_modes(access: AccessMode, exec: ExecMode) -> Result<(), StoreError> {
    if access == AccessMode::ReadOnly && exec.needs_read_write() {
        return Err(StoreError::Forbidden(format!(
            "execution mode {exec} needs read-write access; this project is read-only"
        )));
    }
    Ok(())
}

pub(crate) fn validate_name(name: &str) -> Result<&str, StoreError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(StoreError::Invalid("the project name is empty".into()));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(StoreError::Invalid(format!(
            "the project name is longer than {MAX_NAME_CHARS} characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(StoreError::Invalid("the project name contains control characters".into()));
    }
    if name.to_ascii_lowercase().starts_with(ProjectId::PREFIX) {
        return Err(StoreError::Invalid(format!(
            "a project name cannot start with {:?}: that is how project ids look",
            ProjectId::PREFIX
        )));
    }
    Ok(name)
}

pub(crate) fn root_text(root: &Path) -> Result<&str, StoreError> {
    if !root.is_absolute() {
        return Err(StoreError::Invalid("the project root must be an absolute path".into()));
    }
    // Roots are stored as text; a non-UTF-8 folder name could not be shown in the UI either.
    root.to_str().ok_or_else(|| StoreError::Invalid("the project root is not valid UTF-8".into()))
}

/// SQLite integers are signed: store the fingerprint's bits unchanged.
pub(crate) fn fingerprint_columns(fp: Option<RootFingerprint>) -> (Option<i64>, Option<i64>) {
    match fp {
        Some(fp) => (Some(fp.dev as i64), Some(fp.ino as i64)),
        None => (None, None),
    }
}

pub(crate) fn project_conflict(err: rusqlite::Error, name: &str) -> StoreError {
    match unique_violation(&err) {
        Some("projects.name") => {
            StoreError::Conflict(format!("a project named {name:?} already exists"))
        }
        Some("projects.root") => {
            StoreError::Conflict("that folder is already authorized as another project".into())
        }
        _ => err.into(),
    }
}

pub(crate) fn project_not_found(id_or_name: &str) -> StoreError {
    StoreError::NotFound(format!("no project {id_or_name:?}"))
}

fn expect_one(n: usize, id: &ProjectId) -> Result<(), StoreError> {
    if n == 0 { Err(project_not_found(id.as_str())) } else { Ok(()) }
}

pub(crate) fn decode_error(idx: usize, msg: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, msg.into())
}

pub(crate) fn project_from_row(r: &Row<'_>) -> rusqlite::Result<Project> {
    let id: String = r.get(0)?;
    let id = ProjectId::parse(&id).ok_or_else(|| decode_error(0, format!("bad id {id:?}")))?;
    let access: String = r.get(3)?;
    let exec: String = r.get(4)?;
    let state: String = r.get(5)?;
    let reason: Option<String> = r.get(6)?;
    let state = match state.as_str() {
        "available" => ProjectState::Available,
        "disabled" => ProjectState::Disabled,
        "root-lost" => ProjectState::RootLost(reason.unwrap_or_default()),
        other => return Err(decode_error(5, format!("bad state {other:?}"))),
    };
    let shield: Option<String> = r.get(7)?;
    let shield_patterns = match shield {
        None => None,
        Some(json) => Some(
            serde_json::from_str(&json)
                .map_err(|e| decode_error(7, format!("bad shield patterns: {e}")))?,
        ),
    };
    let autorun: Option<String> = r.get(15)?;
    let autorun_rules = match autorun {
        None => None,
        Some(json) => Some(
            serde_json::from_str(&json)
                .map_err(|e| decode_error(15, format!("bad auto-run rules: {e}")))?,
        ),
    };
    let paths = |idx: usize| -> rusqlite::Result<Vec<HostPath>> {
        let json: String = r.get(idx)?;
        serde_json::from_str(&json)
            .map_err(|e| decode_error(idx, format!("bad sandbox paths: {e}")))
    };
    let sandbox = SandboxSettings {
        hide: paths(16)?,
        unhide: paths(17)?,
        grants: paths(18)?,
        sockets: paths(19)?,
        require_full: r.get::<_, i64>(20)? != 0,
    };
    let dev: Option<i64> = r.get(8)?;
    let ino: Option<i64> = r.get(9)?;
    Ok(Project {
        id,
        name: r.get(1)?,
        root: PathBuf::from(r.get::<_, String>(2)?),
        access: access.parse().map_err(|e| decode_error(3, e))?,
        exec: exec.parse().map_err(|e| decode_error(4, e))?,
        state,
        shield_patterns,
        autorun_rules,
        fingerprint: match (dev, ino) {
            (Some(dev), Some(ino)) => Some(RootFingerprint { dev: dev as u64, ino: ino as u64 }),
            _ => None,
        },
        created_ms: r.get(10)?,
        updated_ms: r.get(11)?,
        ask_deletes: r.get::<_, i64>(12)? != 0,
        ask_writes: r.get::<_, i64>(13)? != 0,
        network: match r.get::<_, Option<String>>(14)? {
            None => None,
            Some(mode) => Some(mode.parse().map_err(|e: String| decode_error(14, e))?),
        },
        sandbox,
        git_emails: r.get::<_, String>(21)?.parse().map_err(|e: String| decode_error(21, e))?,
        worktree_of: match r.get::<_, Option<String>>(22)? {
            None => None,
            Some(id) => Some(
                ProjectId::parse(&id).ok_or_else(|| decode_error(22, format!("bad id {id:?}")))?,
            ),
        },
        git_hooks: r.get::<_, String>(23)?.parse().map_err(|e: String| decode_error(23, e))?,
    })
}
