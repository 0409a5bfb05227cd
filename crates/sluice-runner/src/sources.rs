//! A project's files as an index over the project sees them (`sluice-code`): the same walk as
//! `search_text` (the shield, `.gitignore`, no link followed, on several threads; hidden files
//! and folders left out, as a virtual environment in `.venv` is not the project's code), each
//! file handed over open with what identifies its content's version, and one file opened as
//! `read_file` opens it.

use std::fs::{File, Metadata};
use std::io::Read;
use std::time::{Duration, Instant};

use sluice_guard::RelPath;

use crate::walk::{self, Flow, Item, Visitor, WalkConfig};
use crate::{RunnerError, Workspace};

const MAX_DEPTH: usize = 64;
const THREADS: usize = 8;

/// What changes when a file's content may have: its size, modification time and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub len: u64,
    pub modified_ns: i128,
    pub inode: u64,
}

impl Stamp {
    fn of(meta: &Metadata) -> Stamp {
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let inode = 0;
        Stamp { len: meta.len(), modified_ns, inode }
    }
}

/// One file of the walk, open (no link followed).
pub struct Source<'a> {
    pub path: &'a RelPath,
    pub stamp: Stamp,
    file: File,
}

impl Source<'_> {
    /// The file's bytes, at most `max`.
    pub fn read(self, max: u64) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.stamp.len.min(max)).unwrap_or(0));
        self.file.take(max).read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

/// How a walk over the sources ended.
#[derive(Debug, Clone, Copy, Default)]
pub struct SourcesReport {
    /// The time budget ran out before every file was seen.
    pub timed_out: bool,
}

/// Hands every regular file beneath `path` (default: the root) whose project-relative path
/// `wanted` accepts to `visit`, on several threads, within `budget`.
pub fn each_source(
    ws: &Workspace,
    path: Option<&str>,
    budget: Duration,
    wanted: &(dyn Fn(&str) -> bool + Sync),
    visit: &(dyn Fn(Source<'_>) + Sync),
) -> Result<SourcesReport, RunnerError> {
    let rel = ws.request(path)?;
    let dir = ws.root().open_dir(&rel)?;
    ws.check_resolved(&rel, dir.rel_path())?;
    let ignores = walk::ancestor_ignores(ws.root(), dir.rel_path());
    let config = WalkConfig {
        shield: ws.shield(),
        include_hidden: false,
        respect_gitignore: true,
        max_depth: MAX_DEPTH,
        exclude: None,
        threads: THREADS,
        breadth_first: false,
        deadline: Some(Instant::now() + budget),
    };
    let report = walk::walk(dir, ignores, &config, &Sources { wanted, visit });
    Ok(SourcesReport { timed_out: report.timed_out })
}

/// One file of the project, opened as `read_file` opens it (the shield checked on the path
/// asked and on where it led), with its stamp.
pub fn open_source(ws: &Workspace, path: &str) -> Result<(RelPath, Stamp, File), RunnerError> {
    let rel = ws.request(Some(path))?;
    if rel.is_root() {
        return Err(RunnerError::invalid("a file path is needed, not the project's root"));
    }
    let (file, meta, resolved) = ws.root().open_file_resolved(&rel)?;
    ws.check_resolved(&rel, &resolved)?;
    Ok((rel, Stamp::of(&meta), file))
}

struct Sources<'a> {
    wanted: &'a (dyn Fn(&str) -> bool + Sync),
    visit: &'a (dyn Fn(Source<'_>) + Sync),
}

impl Visitor for Sources<'_> {
    type State = ();
    const WANTS_FILES: bool = true;

    fn state(&self) {}

    fn file(&self, _: &mut (), item: &Item<'_>) -> Flow {
        if (self.wanted)(item.rel.as_str())
            && let Ok((file, meta)) = item.dir.open_file(item.name)
        {
            (self.visit)(Source { path: item.rel, stamp: Stamp::of(&meta), file });
        }
        Flow::Continue
    }
}
