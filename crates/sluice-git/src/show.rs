//! `git_show`: one commit's metadata and its changes against its first parent (or against the
//! empty tree for a root commit).

use serde::{Deserialize, Serialize};
use sluice_core::GitEmails;

use crate::exec::Invocation;
use crate::files::{self, DIFF_FLAGS, DiffFile};
use crate::log::{Commit, read_commit};
use crate::parse::{self, Tokens};
use crate::validate::{self, RevKind};
use crate::{GitError, Repo, privacy};

/// Arguments of `git_show`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitShowArgs {
    /// The commit to show: a commit id, branch, tag or expression like `HEAD~1`. Tags are
    /// followed to their commit.
    pub rev: String,
    /// Only show changes to this project-relative file or folder.
    #[serde(default)]
    pub path: Option<String>,
    /// Most bytes of patch text returned over all files (default 262144, at most 8388608);
    /// beyond it patches are cut and `truncated` is set.
    #[serde(default)]
    pub max_bytes: Option<u32>,
}

/// One commit with its changes.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitShowOutput {
    /// The commit's metadata (its `files` is null: see `files` here).
    pub commit: Commit,
    /// Changed files with patches, compared with the first parent (for merges: what the merge
    /// brought into the first parent's line).
    pub files: Vec<DiffFile>,
    /// How many changed files were left out because the sensitive-file shield hides them.
    pub hidden_files: u32,
    /// True when patch text was cut at `max_bytes` or at Sluice's output limit.
    pub truncated: bool,
}

/// Runs `git show` for `repo`, dropping files the shield hides and, unless `emails` shows
/// them, e-mail addresses (see the `privacy` module).
pub fn show(
    repo: &Repo,
    args: &GitShowArgs,
    hidden: &dyn Fn(&str) -> bool,
    emails: GitEmails,
) -> Result<GitShowOutput, GitError> {
    validate::rev(&args.rev, RevKind::Single)?;
    let paths = files::checked_paths(args.path.iter(), hidden)?;
    let max_bytes = args.max_bytes.unwrap_or(files::DEFAULT_MAX_BYTES).min(files::MAX_MAX_BYTES);
    let mut inv = Invocation::new(repo, files::GIT_OUTPUT_CAP)?;
    inv.args(["show", privacy::commit_format(emails), "--no-notes", "--diff-merges=first-parent"])
        .arg("--root")
        .args(DIFF_FLAGS)
        .arg(format!("--unified={}", files::DEFAULT_CONTEXT))
        // A commit's own gitlink updates are shown; `dirty` keeps git from ever looking at a
        // submodule's working tree (which would run git inside it, under its own config).
        .arg("--ignore-submodules=dirty")
        .arg("--end-of-options")
        // Peeling to a commit makes tags show their commit instead of the tag object, and makes
        // trees or blobs an error instead of file content.
        .arg(format!("{}^{{commit}}", args.rev))
        .arg("--")
        .args(&paths);
    let out = inv.run()?;
    let mut t = Tokens::new(&out.stdout);
    let commit = read_commit(&mut t, emails)?.ok_or_else(parse::malformed)?;
    let parsed = files::parse_files(&mut t, out.truncated, max_bytes, hidden)?;
    Ok(GitShowOutput {
        commit,
        files: parsed.files,
        hidden_files: parsed.hidden_files,
        truncated: parsed.truncated,
    })
}
