//! Running a planned write, and undoing it later by its operation id.
//!
//! Every write that git can undo leaves a record in the project's Sluice state folder (never in
//! the project): the refs it moved, from what to what, and the branch to switch back to. An undo
//! moves each ref back only if it is still where the write left it (compare-and-swap), so
//! nothing that happened since is lost; it is itself recorded, so an undo can be undone.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::switch;
use crate::write::{self, GitPlan, GitWriteOutput, RefMove, Run, State, Undo, short};
use crate::{GitError, HookRunner, Repo};

/// Records kept per project; the oldest go first.
const MAX_RECORDS: usize = 500;
const PREFIX: &str = "git_";

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    version: u32,
    operation_id: String,
    tool: String,
    created_ms: u64,
    undo: Undo,
}

pub(crate) struct UndoAction {
    id: String,
    undo: Undo,
}

/// The project's records of git writes, in a folder of Sluice's state folder.
#[derive(Debug)]
pub struct GitJournal {
    dir: PathBuf,
}

/// Whether `id` names a git write (`restore` takes both kinds of operation id).
pub fn is_git_operation(id: &str) -> bool {
    id.starts_with(PREFIX)
}

fn valid_id(id: &str) -> bool {
    id.strip_prefix(PREFIX)
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl GitJournal {
    /// `state_dir` is the project's folder in Sluice's data folder.
    pub fn open(state_dir: &Path) -> GitJournal {
        GitJournal { dir: state_dir.join("git-operations") }
    }

    fn save(&self, tool: &str, undo: Undo) -> Result<String, GitError> {
        let failed = |_| GitError::Internal("cannot record the git operation".into());
        std::fs::create_dir_all(&self.dir).map_err(failed)?;
        let hex: String =
            sluice_core::random_bytes::<16>().iter().map(|b| format!("{b:02x}")).collect();
        let id = format!("{PREFIX}{hex}");
        let created_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let record = Record {
            version: 1,
            operation_id: id.clone(),
            tool: tool.to_owned(),
            created_ms,
            undo,
        };
        let text = serde_json::to_vec_pretty(&record)
            .map_err(|_| GitError::Internal("cannot record the git operation".into()))?;
        let tmp = self.dir.join(format!("{id}.tmp"));
        std::fs::write(&tmp, text).map_err(failed)?;
        std::fs::rename(&tmp, self.dir.join(format!("{id}.json"))).map_err(failed)?;
        self.prune();
        Ok(id)
    }

    fn load(&self, id: &str) -> Result<Record, GitError> {
        let unknown = || {
            GitError::invalid(format!(
                "no git operation {:?} to undo in this project",
                id.chars().take(80).collect::<String>()
            ))
        };
        if !valid_id(id) {
            return Err(unknown());
        }
        let text = std::fs::read(self.dir.join(format!("{id}.json"))).map_err(|_| unknown())?;
        let record: Record = serde_json::from_slice(&text).map_err(|_| unknown())?;
        if record.operation_id != id || record.version != 1 || !record.undo.well_formed() {
            return Err(unknown());
        }
        Ok(record)
    }

    /// Keeps the newest records (ids are random, so by the time each was written).
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        let mut all: Vec<(SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if all.len() <= MAX_RECORDS {
            return;
        }
        all.sort();
        for (_, path) in &all[..all.len() - MAX_RECORDS] {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Plans undoing the git write `id`: every ref it moved must still be where it left it.
pub fn plan_undo(
    repo: &Repo,
    journal: &GitJournal,
    id: &str,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitPlan, GitError> {
    let record = journal.load(id)?;
    let state = State::read(repo, hidden)?;
    let mut h = blake3::Hasher::new();
    h.update(b"restore\0");
    h.update(id.as_bytes());
    state.hash_into(&mut h);
    let mut lines = vec![format!("undo {} ({})", record.undo.what, record.tool)];
    let mut deletes = false;
    for m in &record.undo.moves {
        let now = current(repo, &m.name)?;
        if now != m.after {
            return Err(GitError::Refused(format!(
                "{} has changed since {} (it is at {}), so it cannot be undone without losing \
                 what happened since",
                display_ref(&m.name),
                record.undo.what,
                now.as_deref().map_or("nothing", short)
            )));
        }
        h.update(m.name.as_bytes());
        h.update(now.as_deref().unwrap_or("").as_bytes());
        lines.push(match (&m.before, &m.after) {
            (None, _) => format!("delete {}", display_ref(&m.name)),
            (Some(b), None) => format!("re-create {} at {}", display_ref(&m.name), short(b)),
            (Some(b), Some(a)) => {
                format!("move {} back from {} to {}", display_ref(&m.name), short(a), short(b))
            }
        });
        // Deleting a ref or moving one back rewrites history: it asks like a delete.
        deletes |= m.after.is_some();
    }
    let mut touched = Vec::new();
    if let Some(branch) = &record.undo.switch_to {
        state.require_clean("undoing a switch")?;
        let target = write::commit_of(repo, &format!("refs/heads/{branch}"))?;
        touched = switch::changed_between(repo, state.head.as_deref(), &target)?;
        lines.insert(
            1,
            format!("switch back to branch {}", sluice_core::text::visible_owned(branch)),
        );
    }
    if record.tool == "git_commit" {
        lines.push("the commit's changes stay in the working tree, staged".into());
    }
    let (shown, hidden_touched) = write::visible(touched, hidden);
    Ok(GitPlan {
        summary: lines.join("\n"),
        fingerprint: *h.finalize().as_bytes(),
        writes: true,
        deletes,
        touched: shown,
        hidden_touched,
        action: Box::new(UndoAction { id: id.to_owned(), undo: record.undo }),
    })
}

/// Runs a planned write, recording how to undo it where git can. With `hooks`, a commit runs
/// the repository's commit hooks through it, and a switch its `post-checkout` (the project
/// allows them).
pub fn execute(
    repo: &Repo,
    plan: &GitPlan,
    journal: &GitJournal,
    tool: &str,
    hooks: Option<&dyn HookRunner>,
) -> Result<GitWriteOutput, GitError> {
    let (mut output, undo) = plan.action.run(repo, hooks)?;
    if let Some(undo) = undo {
        output.operation_id = Some(journal.save(tool, undo)?);
    }
    Ok(output)
}

impl Run for UndoAction {
    fn run(
        &self,
        repo: &Repo,
        _hooks: Option<&dyn HookRunner>,
    ) -> Result<(GitWriteOutput, Option<Undo>), GitError> {
        undo(repo, self).map(|(o, u)| (o, Some(u)))
    }
}

fn undo(repo: &Repo, a: &UndoAction) -> Result<(GitWriteOutput, Undo), GitError> {
    let mut switched_from = None;
    if let Some(branch) = &a.undo.switch_to {
        switched_from = switch::switch_back(repo, branch)?;
    }
    let mut reverse = Vec::new();
    for m in &a.undo.moves {
        write::move_ref(
            repo,
            &m.name,
            m.before.as_deref(),
            m.after.as_deref(),
            &format!("restore (sluice): undo {}", a.id),
        )?;
        reverse.push(RefMove {
            name: m.name.clone(),
            before: m.after.clone(),
            after: m.before.clone(),
        });
    }
    let state = State::read(repo, &|_| false)?;
    let output = GitWriteOutput {
        done: format!("undid {}", a.undo.what),
        branch: state.branch,
        head: state.head,
        ..GitWriteOutput::default()
    };
    let redo = Undo {
        what: format!("the undo of {}", a.undo.what),
        moves: reverse,
        switch_to: switched_from,
    };
    Ok((output, redo))
}

fn current(repo: &Repo, full: &str) -> Result<Option<String>, GitError> {
    if write::ref_exists(repo, full)? { write::object_of(repo, full).map(Some) } else { Ok(None) }
}

fn display_ref(full: &str) -> String {
    let shown = full
        .strip_prefix("refs/heads/")
        .map(|b| format!("branch {b}"))
        .or_else(|| full.strip_prefix("refs/tags/").map(|t| format!("tag {t}")))
        .unwrap_or_else(|| full.to_owned());
    sluice_core::text::visible_owned(&shown)
}
