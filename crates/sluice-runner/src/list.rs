//! `list_directory`: what a folder holds, optionally a few levels deep, filtered like the
//! other walks (shield, `.gitignore`, hidden names) and bounded.

use std::sync::Mutex;

use globset::GlobSet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{EntryKind, clamp, compile_globs, plain_integers, rfc3339};
use crate::walk::{self, Flow, Item, Visitor, WalkConfig};
use crate::{RunnerError, Workspace};

const DEFAULT_DEPTH: u32 = 1;
const MAX_DEPTH: u32 = 10;
const DEFAULT_MAX_ENTRIES: u32 = 500;
const MAX_ENTRIES: u32 = 5000;

/// Arguments of `list_directory`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = plain_integers)]
pub struct ListDirectoryArgs {
    /// Folder to list, relative to the project root, with `/` separators. Default: the project
    /// root (`.`).
    pub path: Option<String>,
    /// How many levels to descend: 1 lists only the folder's own entries. Default 1, max 10.
    #[schemars(range(min = 1, max = 10))]
    pub depth: Option<u32>,
    /// Only return entries whose name matches this glob (e.g. `*.rs`); a glob containing `/`
    /// is matched against the project-relative path instead. Folders are still descended.
    pub glob: Option<String>,
    /// Include names starting with a dot. Default true. Sensitive files (`.env`, keys, `.git`)
    /// are hidden regardless.
    pub include_hidden: Option<bool>,
    /// Skip what `.gitignore` / `.ignore` files exclude. Default true.
    pub respect_gitignore: Option<bool>,
    /// Maximum number of entries to return. Default 500, max 5000; `truncated` says when more
    /// existed.
    #[schemars(range(min = 1, max = 5000))]
    pub max_entries: Option<u32>,
}

/// One entry of a listing.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct ListedEntry {
    /// Project-relative path.
    pub path: String,
    pub kind: EntryKind,
    /// Size in bytes (files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Last modification time, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
}

/// Result of `list_directory`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct ListDirectoryOutput {
    /// The listed folder, project-relative (`.` for the root).
    pub path: String,
    /// Entries sorted by path. Symbolic links are listed as `symlink` and not descended.
    pub entries: Vec<ListedEntry>,
    /// True when the entry cap was reached or the time budget ran out before everything was
    /// listed.
    pub truncated: bool,
}

struct Lister<'a> {
    glob: Option<GlobSet>,
    max: usize,
    out: &'a Mutex<Vec<ListedEntry>>,
}

impl Visitor for Lister<'_> {
    type State = ();

    fn state(&self) {}

    fn entry(&self, _: &mut (), item: &Item<'_>) -> Flow {
        if self.glob.as_ref().is_some_and(|g| !g.is_match(item.rel.as_str())) {
            return Flow::Continue;
        }
        let meta = item.dir.entry_meta(item.name).ok();
        let entry = ListedEntry {
            path: item.rel.to_string(),
            kind: item.kind.into(),
            size: meta.as_ref().filter(|m| m.kind == sluice_guard::EntryKind::File).map(|m| m.len),
            modified: rfc3339(meta.and_then(|m| m.modified)),
        };
        let Ok(mut out) = self.out.lock() else { return Flow::Stop };
        if out.len() >= self.max {
            // One more than fits: that is how we know the listing is truncated.
            return Flow::Stop;
        }
        out.push(entry);
        Flow::Continue
    }
}

/// Lists a folder of the project.
pub fn list_directory(
    ws: &Workspace,
    args: &ListDirectoryArgs,
) -> Result<ListDirectoryOutput, RunnerError> {
    let rel = ws.request(args.path.as_deref())?;
    let dir = ws.root().open_dir(&rel)?;
    ws.check_resolved(&rel, dir.rel_path())?;
    let glob = match args.glob.as_deref().map(str::trim).filter(|g| !g.is_empty()) {
        Some(g) => Some(compile_globs(&[g.to_owned()], "filter")?),
        None => None,
    };
    let respect_gitignore = args.respect_gitignore.unwrap_or(true);
    let ignores =
        if respect_gitignore { walk::ancestor_ignores(ws.root(), dir.rel_path()) } else { None };
    let config = WalkConfig {
        shield: ws.shield(),
        include_hidden: args.include_hidden.unwrap_or(true),
        respect_gitignore,
        max_depth: clamp(args.depth, DEFAULT_DEPTH, MAX_DEPTH) as usize,
        exclude: None,
        threads: 1,
        breadth_first: true,
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(10)),
    };
    let out = Mutex::new(Vec::new());
    let max = clamp(args.max_entries, DEFAULT_MAX_ENTRIES, MAX_ENTRIES) as usize;
    let lister = Lister { glob, max, out: &out };
    let report = walk::walk(dir, ignores, &config, &lister);
    let mut entries = out.into_inner().unwrap_or_default();
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ListDirectoryOutput {
        path: rel.to_string(),
        entries,
        truncated: report.stopped || report.timed_out,
    })
}
