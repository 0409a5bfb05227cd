//! `git_log`: commit history with metadata and, optionally, each commit's changed files.

use serde::{Deserialize, Serialize};
use sluice_core::GitEmails;

use crate::exec::Invocation;
use crate::parse::{self, FileStatus, Tokens};
use crate::validate::{self, RevKind};
use crate::{GitError, Repo, files, privacy};

/// Default and largest number of commits.
const DEFAULT_MAX_COUNT: u32 = 20;
const MAX_MAX_COUNT: u32 = 500;
/// Largest `skip`; deeper paging belongs to a narrower range.
const MAX_SKIP: u32 = 1_000_000;
/// Cap on git's log output.
const LOG_OUTPUT_CAP: usize = 16 * 1024 * 1024;

/// Arguments of `git_log`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitLogArgs {
    /// Most commits to return, newest first. Default 20, at most 500.
    pub max_count: Option<u32>,
    /// Number of commits to skip first, for paging.
    pub skip: Option<u32>,
    /// Only commits that touched this project-relative file or folder.
    pub path: Option<String>,
    /// Where to start: a branch, tag or commit id (default HEAD), or a range such as
    /// `main..feature` (commits on feature not on main).
    pub rev: Option<String>,
    /// List each commit's changed files (compared with its first parent). Default true.
    pub include_files: Option<bool>,
}

/// A page of history.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitLogOutput {
    /// Commits, newest first.
    pub commits: Vec<Commit>,
    /// True when more commits follow; ask again with a larger `skip`.
    pub has_more: bool,
    /// How many changed-file entries were left out because the sensitive-file shield hides them.
    pub hidden_files: u32,
    /// True when the output was cut at Sluice's size limit.
    pub truncated: bool,
}

/// One commit.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Commit {
    /// Full commit id.
    pub id: String,
    /// Abbreviated commit id.
    pub short_id: String,
    /// Parent commit ids (two or more for a merge, none for a root commit).
    pub parents: Vec<String>,
    /// Author name. While e-mail addresses are hidden, one written inside the name reads
    /// `[email hidden]`.
    pub author_name: String,
    /// Author e-mail address. Absent unless the user lets assistants see the e-mail addresses
    /// in this project's history (they are hidden by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author_email: Option<String>,
    /// Author date, RFC 3339 (e.g. `2024-05-01T12:30:00+02:00`).
    pub time: String,
    /// First line of the message (secrets redacted).
    pub subject: String,
    /// The rest of the message, if any (secrets redacted).
    pub body: Option<String>,
    /// Files changed compared with the first parent; null when not requested.
    pub files: Option<Vec<ChangedFile>>,
}

/// A file changed by a commit.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChangedFile {
    /// Project-relative path (the new path of a rename).
    pub path: String,
    /// The previous path of a rename or copy.
    pub old_path: Option<String>,
    /// How the file changed.
    pub status: FileStatus,
}

/// Runs `git log` for `repo`, dropping changed files the shield hides and, unless `emails`
/// shows them, e-mail addresses (see the `privacy` module).
pub fn log(
    repo: &Repo,
    args: &GitLogArgs,
    hidden: &dyn Fn(&str) -> bool,
    emails: GitEmails,
) -> Result<GitLogOutput, GitError> {
    if let Some(rev) = &args.rev {
        validate::rev(rev, RevKind::SingleOrRange)?;
    }
    let paths = files::checked_paths(args.path.iter(), hidden)?;
    let max_count = args.max_count.unwrap_or(DEFAULT_MAX_COUNT).clamp(1, MAX_MAX_COUNT);
    let skip = args.skip.unwrap_or(0).min(MAX_SKIP);
    let include_files = args.include_files.unwrap_or(true);
    let mut inv = Invocation::new(repo, LOG_OUTPUT_CAP)?;
    // Not `--no-abbrev`: that makes `%h` the full id too. Nothing reads the raw lines' blob ids.
    inv.args(["log", "-z", privacy::commit_format(emails), "--no-notes", "--no-color"]);
    // One extra commit tells whether there is a next page.
    inv.arg(format!("--max-count={}", u64::from(max_count) + 1)).arg(format!("--skip={skip}"));
    if include_files {
        inv.args(["--raw", "--find-renames", "--diff-merges=first-parent", "--no-ext-diff"]);
        inv.arg("--no-textconv");
    }
    inv.arg("--end-of-options");
    if let Some(rev) = &args.rev {
        inv.arg(rev);
    }
    inv.arg("--").args(&paths);
    let out = match inv.run() {
        Ok(out) => out,
        // A repository without commits has an empty history, not an error.
        Err(GitError::GitFailed(msg)) if msg.contains("does not have any commits yet") => {
            return Ok(GitLogOutput {
                commits: Vec::new(),
                has_more: false,
                hidden_files: 0,
                truncated: false,
            });
        }
        Err(e) => return Err(e),
    };
    let mut t = Tokens::new(&out.stdout);
    let mut commits = Vec::new();
    let mut hidden_files = 0;
    while !t.at_end() {
        let Some(mut commit) = read_commit(&mut t, emails)? else { break };
        if include_files {
            let mut list = Vec::new();
            while t.peek().is_some_and(parse::is_raw_start) {
                let Ok(entry) = parse::raw_entry(&mut t) else { break };
                if files::is_hidden(&entry, hidden) {
                    hidden_files += 1;
                    continue;
                }
                list.push(ChangedFile {
                    path: parse::lossy(&entry.path),
                    old_path: entry.old_path.as_deref().map(parse::lossy),
                    status: entry.status,
                });
            }
            commit.files = Some(list);
        }
        commits.push(commit);
    }
    let has_more = commits.len() > max_count as usize;
    commits.truncate(max_count as usize);
    Ok(GitLogOutput { commits, has_more, hidden_files, truncated: out.truncated })
}

/// Reads one commit written with [`privacy::commit_format`]; `None` at a truncated tail.
pub(crate) fn read_commit(
    t: &mut Tokens<'_>,
    emails: GitEmails,
) -> Result<Option<Commit>, GitError> {
    let mut fields = Vec::with_capacity(7);
    for _ in 0..7 {
        match t.next_token() {
            Some(f) => fields.push(f),
            None => return Ok(None),
        }
    }
    let id = fields[0].strip_prefix(b"\n").unwrap_or(fields[0]);
    if !parse::is_object_id(id) {
        return Err(parse::malformed());
    }
    let message = String::from_utf8_lossy(fields[6]);
    let message = sluice_core::redact::redact(&message);
    let (subject, body) = match message.split_once('\n') {
        Some((s, b)) => (s.to_owned(), b.trim_matches('\n').to_owned()),
        None => (message.trim_end().to_owned(), String::new()),
    };
    Ok(Some(Commit {
        id: parse::lossy(id),
        short_id: parse::lossy(fields[1]),
        parents: parse::lossy(fields[2]).split_whitespace().map(str::to_owned).collect(),
        author_name: privacy::author_name(parse::lossy(fields[3]), emails),
        author_email: privacy::author_email(parse::lossy(fields[4]), emails),
        time: parse::lossy(fields[5]),
        subject,
        body: (!body.is_empty()).then_some(body),
        files: None,
    }))
}
