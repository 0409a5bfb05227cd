//! `git_status`: the branch and the changed, untracked and conflicted files, from
//! `git status --porcelain=v2 -z`.

use serde::{Deserialize, Serialize};

use crate::exec::Invocation;
use crate::parse::{self, Tokens};
use crate::{GitError, Repo, files};

/// Cap on git's status output.
const STATUS_OUTPUT_CAP: usize = 16 * 1024 * 1024;

/// Arguments of `git_status`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GitStatusArgs {
    /// Limit the status to these project-relative files or folders (e.g. `["src/", "README.md"]`).
    /// Empty means the whole project.
    pub paths: Vec<String>,
}

/// The working tree's state relative to the index and HEAD.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(transform = crate::schema::plain_integers)]
pub struct GitStatusOutput {
    /// The checked-out branch, or null when HEAD is detached.
    pub branch: Option<String>,
    /// The commit id of HEAD, or null before the first commit.
    pub head: Option<String>,
    /// The upstream branch (e.g. `origin/main`), when one is configured.
    pub upstream: Option<String>,
    /// Commits on the branch and not on its upstream.
    pub ahead: Option<u32>,
    /// Commits on the upstream and not on the branch.
    pub behind: Option<u32>,
    /// Changed, untracked and conflicted files. Clean and ignored files are not listed.
    pub entries: Vec<StatusEntry>,
    /// How many changed files were left out because the sensitive-file shield hides them.
    pub hidden_files: u32,
    /// True when the output was cut at Sluice's size limit; narrow the request with `paths`.
    pub truncated: bool,
}

/// One file in `git_status`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StatusEntry {
    /// Project-relative path.
    pub path: String,
    /// The previous path of a staged rename or copy.
    pub orig_path: Option<String>,
    /// Staged state (index vs HEAD): `.` unchanged, `M` modified, `T` type changed, `A` added,
    /// `D` deleted, `R` renamed, `C` copied, `U` unmerged (conflict), `?` untracked.
    pub index_status: String,
    /// Unstaged state (working tree vs index), same letters as `index_status`.
    pub worktree_status: String,
}

/// Runs `git status` for `repo`, dropping files the shield hides.
pub fn status(
    repo: &Repo,
    args: &GitStatusArgs,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitStatusOutput, GitError> {
    let paths = files::checked_paths(&args.paths, hidden)?;
    let mut inv = Invocation::new(repo, STATUS_OUTPUT_CAP)?;
    inv.args([
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        // Every untracked file is listed individually so the shield can judge each one.
        "--untracked-files=all",
        "--ignore-submodules=all",
        "--renames",
        "--",
    ])
    .args(&paths);
    let out = inv.run()?;
    parse_status(&out.stdout, out.truncated, hidden)
}

fn parse_status(
    buf: &[u8],
    truncated: bool,
    hidden: &dyn Fn(&str) -> bool,
) -> Result<GitStatusOutput, GitError> {
    let mut res = GitStatusOutput {
        branch: None,
        head: None,
        upstream: None,
        ahead: None,
        behind: None,
        entries: Vec::new(),
        hidden_files: 0,
        truncated,
    };
    let mut t = Tokens::new(buf);
    while let Some(tok) = t.next_token() {
        let line = tok;
        match line.first() {
            Some(b'#') => header(&parse::lossy(line), &mut res),
            Some(b'1') => {
                // 1 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <path>
                let f: Vec<&[u8]> = line.splitn(9, |b| *b == b' ').collect();
                let (xy, path) = (f.get(1).ok_or_else(parse::malformed)?, f.get(8));
                push(&mut res, hidden, xy, path.ok_or_else(parse::malformed)?, None);
            }
            Some(b'2') => {
                // 2 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <Xscore> <path>\0<origPath>
                let f: Vec<&[u8]> = line.splitn(10, |b| *b == b' ').collect();
                let xy = f.get(1).ok_or_else(parse::malformed)?;
                let path = f.get(9).ok_or_else(parse::malformed)?;
                let Some(orig) = t.next_token() else { break };
                push(&mut res, hidden, xy, path, Some(orig));
            }
            Some(b'u') => {
                // u <XY> <sub> <m1> <m2> <m3> <mW> <h1> <h2> <h3> <path>
                let f: Vec<&[u8]> = line.splitn(11, |b| *b == b' ').collect();
                let xy = f.get(1).ok_or_else(parse::malformed)?;
                push(&mut res, hidden, xy, f.get(10).ok_or_else(parse::malformed)?, None);
            }
            Some(b'?') => {
                let path = line.get(2..).ok_or_else(parse::malformed)?;
                push(&mut res, hidden, b"??", path, None);
            }
            // Ignored files (`!`) are not requested; anything else is a format we do not know.
            Some(b'!') => {}
            _ => return Err(parse::malformed()),
        }
    }
    Ok(res)
}

fn header(line: &str, res: &mut GitStatusOutput) {
    let mut words = line.split(' ').skip(1);
    match (words.next(), words.next()) {
        (Some("branch.oid"), Some(oid)) if oid != "(initial)" => res.head = Some(oid.to_owned()),
        (Some("branch.head"), Some(head)) if head != "(detached)" => {
            res.branch = line.strip_prefix("# branch.head ").map(str::to_owned);
        }
        (Some("branch.upstream"), Some(_)) => {
            res.upstream = line.strip_prefix("# branch.upstream ").map(str::to_owned);
        }
        (Some("branch.ab"), Some(ahead)) => {
            res.ahead = ahead.strip_prefix('+').and_then(|n| n.parse().ok());
            res.behind =
                words.next().and_then(|b| b.strip_prefix('-')).and_then(|n| n.parse().ok());
        }
        _ => {}
    }
}

fn push(
    res: &mut GitStatusOutput,
    hidden: &dyn Fn(&str) -> bool,
    xy: &[u8],
    path: &[u8],
    orig: Option<&[u8]>,
) {
    let path = parse::lossy(path);
    let orig_path = orig.map(parse::lossy);
    if hidden(&path) || orig_path.as_deref().is_some_and(hidden) {
        res.hidden_files += 1;
        return;
    }
    let letter = |i: usize| xy.get(i).map(|c| (*c as char).to_string()).unwrap_or_default();
    res.entries.push(StatusEntry {
        path,
        orig_path,
        index_status: letter(0),
        worktree_status: letter(1),
    });
}
