//! `git_diff`: unstaged (working tree vs index) or staged (index vs HEAD) changes, per file,
//! with counts and redacted patch text.

use serde::{Deserialize, Serialize};

use crate::exec::Invocation;
use crate::files::{self, DIFF_FLAGS, DiffFile};
use crate::parse::Tokens;
use crate::{GitError, Repo};

/// Arguments of `git_diff`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitDiffArgs {
    /// Show staged changes (index vs HEAD, what the next commit would contain) instead of
    /// unstaged ones (working tree vs index). Default false.
    pub staged: bool,
    /// Limit the diff to this one project-relative file or folder.
    pub path: Option<String>,
    /// Limit the diff to these project-relative files or folders (combined with `path`).
    pub paths: Vec<String>,
    /// Lines of context around each change. Default 3, at most 100.
    pub context_lines: Option<u32>,
    /// Most bytes of patch text returned over all files (default 262144, at most 8388608);
    /// beyond it patches are cut and `truncated` is set. Per-file counts are always complete.
    pub max_bytes: Option<u32>,
}

/// Changed files with their patches.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitDiffOutput {
    /// One entry per changed file, in path order.
    pub files: Vec<DiffFile>,
    /// How many changed files were left out because the sensitive-file shield hides them.
    pub hidden_files: u32,
    /// True when patch text was cut at `max_bytes` or at Sluice's output limit.
    pub truncated: bool,
}

/// Runs `git diff` for `repo`, dropping files the shield hides.
pub fn diff(
    repo: &Repo,
    args: &GitDiffArgs,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitDiffOutput, GitError> {
    let paths = files::checked_paths(args.path.iter().chain(&args.paths), hidden)?;
    let context = args.context_lines.unwrap_or(files::DEFAULT_CONTEXT).min(files::MAX_CONTEXT);
    let max_bytes = args.max_bytes.unwrap_or(files::DEFAULT_MAX_BYTES).min(files::MAX_MAX_BYTES);
    let mut inv = Invocation::new(repo, files::GIT_OUTPUT_CAP)?;
    inv.arg("diff").args(DIFF_FLAGS).arg(format!("--unified={context}"));
    inv.arg("--ignore-submodules=all");
    if args.staged {
        inv.arg("--cached");
    }
    inv.arg("--end-of-options").arg("--").args(&paths);
    let out = inv.run()?;
    let mut t = Tokens::new(&out.stdout);
    let parsed = files::parse_files(&mut t, out.truncated, max_bytes, hidden)?;
    Ok(GitDiffOutput {
        files: parsed.files,
        hidden_files: parsed.hidden_files,
        truncated: parsed.truncated,
    })
}
