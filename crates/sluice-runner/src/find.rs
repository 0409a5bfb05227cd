//! `find_files`: paths matching globs, anywhere below a folder, bounded and filtered like
//! every walk (shield, `.gitignore`, hidden names).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use globset::GlobSet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{EntryKind, clamp, compile_globs, plain_integers};
use crate::walk::{self, Flow, Item, Visitor, WalkConfig};
use crate::{RunnerError, Workspace};

const DEFAULT_MAX_RESULTS: u32 = 500;
const MAX_RESULTS: u32 = 5000;
const MAX_DEPTH: usize = 64;
const TIME_BUDGET: Duration = Duration::from_secs(10);

/// Arguments of `find_files`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(transform = plain_integers)]
pub struct FindFilesArgs {
    /// Globs to match, e.g. `["*.rs", "docs/**/*.md"]`. A glob without `/` matches a file name
    /// at any depth; one with `/` matches the project-relative path. Case-sensitive. Empty or
    /// absent: every file.
    pub globs: Vec<String>,
    /// Folder to search below, relative to the project root. Default: the project root.
    pub path: Option<String>,
    /// Also return folders (and links) whose path matches. Default false: files only.
    pub include_dirs: Option<bool>,
    /// Include names starting with a dot. Default true. Sensitive files are hidden regardless.
    pub include_hidden: Option<bool>,
    /// Skip what `.gitignore` / `.ignore` files exclude. Default true.
    pub respect_gitignore: Option<bool>,
    /// Maximum number of paths to return. Default 500, max 5000.
    #[schemars(range(min = 1, max = 5000))]
    pub max_results: Option<u32>,
}

/// One match of `find_files`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct FoundEntry {
    /// Project-relative path.
    pub path: String,
    pub kind: EntryKind,
}

/// Result of `find_files`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct FindFilesOutput {
    /// Matches sorted by path.
    pub matches: Vec<FoundEntry>,
    /// True when the result cap or the time budget stopped the search early.
    pub truncated: bool,
}

struct Finder<'a> {
    globs: GlobSet,
    include_dirs: bool,
    max: usize,
    out: &'a Mutex<Vec<FoundEntry>>,
}

impl Visitor for Finder<'_> {
    type State = ();

    fn state(&self) {}

    fn entry(&self, _: &mut (), item: &Item<'_>) -> Flow {
        let is_file = item.kind == sluice_guard::EntryKind::File;
        if !is_file && !self.include_dirs {
            return Flow::Continue;
        }
        if !self.globs.is_empty() && !self.globs.is_match(item.rel.as_str()) {
            return Flow::Continue;
        }
        let Ok(mut out) = self.out.lock() else { return Flow::Stop };
        if out.len() >= self.max {
            return Flow::Stop;
        }
        out.push(FoundEntry { path: item.rel.to_string(), kind: item.kind.into() });
        Flow::Continue
    }
}

/// Finds files (and optionally folders) by glob.
pub fn find_files(ws: &Workspace, args: &FindFilesArgs) -> Result<FindFilesOutput, RunnerError> {
    let rel = ws.request(args.path.as_deref())?;
    let globs = compile_globs(&args.globs, "file")?;
    let dir = ws.root().open_dir(&rel)?;
    ws.check_resolved(&rel, dir.rel_path())?;
    let respect_gitignore = args.respect_gitignore.unwrap_or(true);
    let ignores =
        if respect_gitignore { walk::ancestor_ignores(ws.root(), dir.rel_path()) } else { None };
    let config = WalkConfig {
        shield: ws.shield(),
        include_hidden: args.include_hidden.unwrap_or(true),
        respect_gitignore,
        max_depth: MAX_DEPTH,
        exclude: None,
        threads: 1,
        breadth_first: true,
        deadline: Some(Instant::now() + TIME_BUDGET),
    };
    let out = Mutex::new(Vec::new());
    let finder = Finder {
        globs,
        include_dirs: args.include_dirs.unwrap_or(false),
        max: clamp(args.max_results, DEFAULT_MAX_RESULTS, MAX_RESULTS) as usize,
        out: &out,
    };
    let report = walk::walk(dir, ignores, &config, &finder);
    let mut matches = out.into_inner().unwrap_or_default();
    matches.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(FindFilesOutput { matches, truncated: report.stopped || report.timed_out })
}
