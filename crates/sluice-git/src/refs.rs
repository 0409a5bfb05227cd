//! `git_refs` (branches, tags and stash entries), `git_branch` and `git_tag`: creating and
//! deleting refs. Each ref moves with compare-and-swap; a deletion keeps what the ref pointed
//! at in its undo record, so `restore` re-creates it.

use serde::{Deserialize, Serialize};

use crate::exec::Invocation;
use crate::write::{self, GitPlan, GitWriteOutput, RefMove, Run, SMALL_CAP, State, Undo, short};
use crate::{GitError, HookRunner, Repo};

/// Most refs of each kind `git_refs` lists.
const MAX_LISTED: usize = 500;

/// What to do with a branch or a tag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefOp {
    #[default]
    Create,
    Delete,
}

/// Arguments of `git_branch`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GitBranchArgs {
    /// `create` (at `start_point`, HEAD by default; the current branch stays checked out) or
    /// `delete` (asks the user; refused for the checked-out branch and, unless `force`, for a
    /// branch whose commits are not in HEAD).
    pub action: RefOp,
    /// The branch name, e.g. `feature/login`.
    pub name: String,
    /// Where a new branch starts: a branch, tag or commit id.
    pub start_point: Option<String>,
    /// Delete even if the branch's commits are not merged into HEAD.
    pub force: bool,
}

/// Arguments of `git_tag`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GitTagArgs {
    /// `create` or `delete` (asks the user).
    pub action: RefOp,
    /// The tag name, e.g. `v1.2.0`.
    pub name: String,
    /// The commit to tag (HEAD by default).
    pub target: Option<String>,
    /// With a message the tag is annotated (by the user's git identity); without, lightweight.
    pub message: Option<String>,
}

pub(crate) struct RefAction {
    kind: &'static str,
    name: String,
    full: String,
    create: Option<String>,
    annotate: Option<String>,
    delete: Option<String>,
}

/// Plans `git_branch`.
pub fn plan_branch(
    repo: &Repo,
    args: &GitBranchArgs,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitPlan, GitError> {
    let full = write::ref_name("branch", &args.name)?;
    let state = State::read(repo, hidden)?;
    match args.action {
        RefOp::Create => {
            plan_create(repo, &state, "branch", &args.name, full, args.start_point.as_deref(), None)
        }
        RefOp::Delete => {
            if state.branch.as_deref() == Some(args.name.as_str()) {
                return Err(GitError::Refused(format!(
                    "branch {} is checked out; switch to another branch first",
                    shown(&args.name)
                )));
            }
            if checked_out_elsewhere(repo, &full)? {
                return Err(GitError::Refused(format!(
                    "branch {} is checked out in another worktree",
                    shown(&args.name)
                )));
            }
            let at = existing(repo, "branch", &args.name, &full)?;
            if !args.force && !merged(repo, &full)? {
                return Err(GitError::Refused(format!(
                    "branch {} has commits that are not in HEAD; pass `force` to delete it \
                     anyway (restore can re-create it)",
                    shown(&args.name)
                )));
            }
            Ok(plan_delete(&state, "branch", &args.name, full, at))
        }
    }
}

/// Plans `git_tag`.
pub fn plan_tag(
    repo: &Repo,
    args: &GitTagArgs,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitPlan, GitError> {
    let full = write::ref_name("tag", &args.name)?;
    let state = State::read(repo, hidden)?;
    match args.action {
        RefOp::Create => {
            if let Some(message) = &args.message {
                write::message(message, "tag")?;
                let settings = write::UserSettings::read(repo)?;
                settings.identity()?;
                settings.check_unsigned(true)?;
            }
            plan_create(
                repo,
                &state,
                "tag",
                &args.name,
                full,
                args.target.as_deref(),
                args.message.clone(),
            )
        }
        RefOp::Delete => {
            let at = existing(repo, "tag", &args.name, &full)?;
            Ok(plan_delete(&state, "tag", &args.name, full, at))
        }
    }
}

fn plan_create(
    repo: &Repo,
    state: &State,
    kind: &'static str,
    name: &str,
    full: String,
    start: Option<&str>,
    annotate: Option<String>,
) -> Result<GitPlan, GitError> {
    if write::ref_exists(repo, &full)? {
        return Err(GitError::Refused(format!("{kind} {} already exists", shown(name))));
    }
    let at = write::commit_of(repo, start.unwrap_or("HEAD"))?;
    let mut h = blake3::Hasher::new();
    h.update(format!("create {full} {at}\0").as_bytes());
    h.update(annotate.as_deref().unwrap_or("").as_bytes());
    state.hash_into(&mut h);
    let summary = match &annotate {
        Some(m) => format!(
            "create annotated {kind} {} at {}: \"{}\"",
            shown(name),
            short(&at),
            write::subject(m)
        ),
        None => format!("create {kind} {} at {}", shown(name), short(&at)),
    };
    Ok(GitPlan {
        summary,
        fingerprint: *h.finalize().as_bytes(),
        writes: true,
        deletes: false,
        touched: Vec::new(),
        hidden_touched: 0,
        action: Box::new(RefAction {
            kind,
            name: name.to_owned(),
            full,
            create: Some(at),
            annotate,
            delete: None,
        }),
    })
}

fn plan_delete(state: &State, kind: &'static str, name: &str, full: String, at: String) -> GitPlan {
    let mut h = blake3::Hasher::new();
    h.update(format!("delete {full} {at}\0").as_bytes());
    state.hash_into(&mut h);
    GitPlan {
        summary: format!(
            "delete {kind} {} (at {}; restore can re-create it)",
            shown(name),
            short(&at)
        ),
        fingerprint: *h.finalize().as_bytes(),
        writes: true,
        deletes: true,
        touched: Vec::new(),
        hidden_touched: 0,
        action: Box::new(RefAction {
            kind,
            name: name.to_owned(),
            full,
            create: None,
            annotate: None,
            delete: Some(at),
        }),
    }
}

impl Run for RefAction {
    fn run(
        &self,
        repo: &Repo,
        _hooks: Option<&dyn HookRunner>,
    ) -> Result<(GitWriteOutput, Option<Undo>), GitError> {
        execute(repo, self).map(|(o, u)| (o, Some(u)))
    }
}

fn execute(repo: &Repo, a: &RefAction) -> Result<(GitWriteOutput, Undo), GitError> {
    let (done, before, after) = match (&a.create, &a.delete) {
        (Some(at), _) => {
            let object = match &a.annotate {
                Some(message) => annotated_tag(repo, &a.name, at, message)?,
                None => at.clone(),
            };
            let reason = format!("{} (sluice): created at {}", a.kind, short(at));
            write::move_ref(repo, &a.full, Some(&object), None, &reason)?;
            (format!("created {} {} at {}", a.kind, a.name, short(at)), None, Some(object))
        }
        (None, Some(at)) => {
            write::move_ref(
                repo,
                &a.full,
                None,
                Some(at),
                &format!("{} (sluice): deleted", a.kind),
            )?;
            (
                format!("deleted {} {} (was at {})", a.kind, a.name, short(at)),
                Some(at.clone()),
                None,
            )
        }
        (None, None) => return Err(GitError::Internal("an empty ref action".into())),
    };
    let state = State::read(repo, &|_| false)?;
    let output = GitWriteOutput {
        done: done.clone(),
        branch: state.branch,
        head: state.head,
        created: after.clone(),
        ..GitWriteOutput::default()
    };
    let undo = Undo {
        what: done.replacen("created", "the creation of", 1).replacen(
            "deleted",
            "the deletion of",
            1,
        ),
        moves: vec![RefMove { name: a.full.clone(), before, after }],
        switch_to: None,
    };
    Ok((output, undo))
}

/// Makes an annotated tag object (not yet a ref) with the user's identity as tagger.
fn annotated_tag(repo: &Repo, name: &str, at: &str, message: &str) -> Result<String, GitError> {
    let settings = write::UserSettings::read(repo)?;
    settings.check_unsigned(true)?;
    let identity = settings.identity()?;
    let body = format!(
        "object {at}\ntype commit\ntag {name}\ntagger {}\n\n{}\n",
        identity.tagger_line(),
        message.trim_end()
    );
    let scratch = tempfile::NamedTempFile::new()
        .map_err(|_| GitError::Internal("cannot write the tag".into()))?;
    std::fs::write(scratch.path(), body)
        .map_err(|_| GitError::Internal("cannot write the tag".into()))?;
    let mut inv = Invocation::for_write(repo, SMALL_CAP)?;
    inv.args(["hash-object", "-t", "tag", "-w", "--"]).arg(scratch.path());
    let id = String::from_utf8_lossy(&inv.run()?.stdout).trim().to_owned();
    if !crate::parse::is_object_id(id.as_bytes()) {
        return Err(GitError::Internal("git did not report the new tag".into()));
    }
    Ok(id)
}

fn existing(repo: &Repo, kind: &str, name: &str, full: &str) -> Result<String, GitError> {
    if !write::ref_exists(repo, full)? {
        return Err(GitError::invalid(format!("there is no {kind} {}", shown(name))));
    }
    write::object_of(repo, full)
}

/// Whether every commit of `full` is in HEAD.
fn merged(repo: &Repo, full: &str) -> Result<bool, GitError> {
    let mut inv = Invocation::new(repo, SMALL_CAP)?;
    inv.args(["for-each-ref", "--merged=HEAD", "--format=%(refname)", "--end-of-options", full]);
    Ok(String::from_utf8_lossy(&inv.run()?.stdout).lines().any(|l| l == full))
}

/// Whether a linked worktree of this repository has `full` checked out.
fn checked_out_elsewhere(repo: &Repo, full: &str) -> Result<bool, GitError> {
    let mut inv = Invocation::new(repo, SMALL_CAP)?;
    inv.args(["worktree", "list", "--porcelain", "-z"]);
    let out = inv.run()?;
    let line = format!("branch {full}");
    Ok(out.stdout.split(|b| *b == 0).skip(1).any(|l| l == line.as_bytes()))
}

pub(crate) fn shown(name: &str) -> String {
    sluice_core::text::visible_owned(name)
}

/// Arguments of `git_refs`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GitRefsArgs {}

/// A project's branches, tags and stash entries.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GitRefsOutput {
    /// The checked-out branch, or null when HEAD is detached.
    pub current: Option<String>,
    pub branches: Vec<RefEntry>,
    pub tags: Vec<RefEntry>,
    /// Stash entries, newest first (`index` 0 is what `git_stash` pops by default).
    pub stashes: Vec<RefEntry>,
    /// True when a list was cut at 500 entries.
    pub truncated: bool,
}

/// One branch, tag or stash entry.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RefEntry {
    /// The branch or tag name, or `stash@{N}`.
    pub name: String,
    /// The commit it points at.
    pub commit: String,
    /// The first line of that commit's message (a stash entry's description).
    pub subject: String,
}

/// Lists branches, tags and stash entries.
pub fn refs_list(repo: &Repo, _args: &GitRefsArgs) -> Result<GitRefsOutput, GitError> {
    let state = State::read(repo, &|_| false)?;
    let mut truncated = false;
    let mut list = |pattern: &str| -> Result<Vec<RefEntry>, GitError> {
        let mut inv = Invocation::new(repo, SMALL_CAP)?;
        inv.args([
            "for-each-ref",
            "--sort=-creatordate",
            "--format=%(refname:short)%00%(objectname)%00%(*objectname)%00%(contents:subject)",
            &format!("--count={}", MAX_LISTED + 1),
            "--end-of-options",
            pattern,
        ]);
        let out = inv.run()?;
        let mut entries = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<&str> = line.split('\0').collect();
            if let [name, id, peeled, subject] = f[..] {
                entries.push(RefEntry {
                    name: name.to_owned(),
                    commit: if peeled.is_empty() { id } else { peeled }.to_owned(),
                    subject: sluice_core::redact::redact(subject).into_owned(),
                });
            }
        }
        if entries.len() > MAX_LISTED {
            entries.truncate(MAX_LISTED);
            truncated = true;
        }
        Ok(entries)
    };
    let branches = list("refs/heads")?;
    let tags = list("refs/tags")?;
    let stashes = stash_list(repo)?;
    Ok(GitRefsOutput { current: state.branch, branches, tags, stashes, truncated })
}

/// The stash entries, newest first.
fn stash_list(repo: &Repo) -> Result<Vec<RefEntry>, GitError> {
    if !write::ref_exists(repo, "refs/stash")? {
        return Ok(Vec::new());
    }
    let mut inv = Invocation::new(repo, SMALL_CAP)?;
    inv.args([
        "log",
        "--walk-reflogs",
        "--max-count=500",
        "--format=%gd%x00%H%x00%gs",
        "refs/stash",
        "--",
    ]);
    let out = inv.run()?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\0').collect();
            match f[..] {
                [name, commit, subject] => Some(RefEntry {
                    name: name.to_owned(),
                    commit: commit.to_owned(),
                    subject: sluice_core::redact::redact(subject).into_owned(),
                }),
                _ => None,
            }
        })
        .collect())
}
