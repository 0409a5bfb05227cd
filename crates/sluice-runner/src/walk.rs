//! The directory walker behind `list_directory`, `find_files` and `search_text`.
//!
//! Race safety (SL-03): the walk moves from directory handle to directory handle with
//! [`DirHandle::open_subdir`], which opens a child with `O_NOFOLLOW | O_DIRECTORY` relative to
//! its parent's handle. A directory swapped for a link mid-walk fails to open instead of
//! leading elsewhere; links are reported and never descended; visited directories are
//! remembered by (device, inode) so bind-mount loops end.
//!
//! Filtering, in order: `.git` is always skipped, hidden names on request, shielded entries
//! always (a shielded folder is never entered), `.gitignore`/`.ignore` rules (nested files,
//! deeper ones and `.ignore` take precedence, `!` whitelists), then the caller's exclude globs.
//! Ignore files are read through the same handles; no global or user-level ignore file is read,
//! since that would read outside the project.
//!
//! Concurrency: a LIFO work queue shared by N threads (depth-first keeps few handles open);
//! files are handed out in small batches so two cores share a wide directory. With one
//! thread and breadth-first order the walk is deterministic, which listings use.

use std::collections::{HashSet, VecDeque};
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use globset::GlobSet;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use sluice_guard::{DirHandle, EntryKind, FileId, RelPath, Shield};

/// Ignore files bigger than this are not read (nobody writes a 1 MiB `.gitignore`).
const MAX_IGNORE_FILE: u64 = 1 << 20;
/// Files handed to a worker at a time.
const FILE_BATCH: usize = 16;

/// What to walk and how to filter.
pub(crate) struct WalkConfig<'a> {
    pub shield: &'a Shield,
    pub include_hidden: bool,
    pub respect_gitignore: bool,
    /// Entries deeper than this (children of the start are depth 1) are not visited.
    pub max_depth: usize,
    /// Entries matching these (files and folders) are skipped; folders are not entered.
    pub exclude: Option<&'a GlobSet>,
    pub threads: usize,
    pub breadth_first: bool,
    pub deadline: Option<Instant>,
}

/// One accepted entry, as seen by the visitor.
pub(crate) struct Item<'a> {
    /// The directory holding the entry, for handle-relative opens.
    pub dir: &'a DirHandle,
    pub name: &'a str,
    pub rel: &'a RelPath,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// What a walk does with what it finds. `entry` sees every accepted entry when its directory
/// is read; `file` sees regular files later, possibly on another thread, when
/// [`Visitor::WANTS_FILES`] is set.
pub(crate) trait Visitor: Sync {
    type State;
    const WANTS_FILES: bool = false;
    fn state(&self) -> Self::State;
    fn entry(&self, _state: &mut Self::State, _item: &Item<'_>) -> Flow {
        Flow::Continue
    }
    fn file(&self, _state: &mut Self::State, _item: &Item<'_>) -> Flow {
        Flow::Continue
    }
}

/// How a walk ended.
#[derive(Debug, Default)]
pub(crate) struct WalkReport {
    /// The visitor asked to stop (usually: a result cap was reached).
    pub stopped: bool,
    /// The deadline passed.
    pub timed_out: bool,
}

/// Layered ignore rules: this directory's matchers, then the parent's.
pub(crate) struct Ignores {
    parent: Option<Arc<Ignores>>,
    dir: RelPath,
    /// In increasing precedence: `.gitignore`, then `.ignore`.
    matchers: Vec<Gitignore>,
}

fn is_ignored(mut node: Option<&Ignores>, rel: &RelPath, is_dir: bool) -> bool {
    while let Some(n) = node {
        let sub = rel.strip_prefix(&n.dir).unwrap_or(rel.as_str());
        for m in n.matchers.iter().rev() {
            match m.matched(sub, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        node = n.parent.as_deref();
    }
    false
}

/// Reads `.gitignore` and `.ignore` in `dir` (through its handle) into a new layer, or returns
/// the parent layer unchanged when there are none.
fn load_ignores(
    dir: &DirHandle,
    names: &[&str],
    parent: Option<Arc<Ignores>>,
) -> Option<Arc<Ignores>> {
    let mut matchers = Vec::new();
    for file_name in [".gitignore", ".ignore"] {
        if !names.contains(&file_name) {
            continue;
        }
        let Ok((file, meta)) = dir.open_file(file_name) else { continue };
        if meta.len() > MAX_IGNORE_FILE {
            continue;
        }
        let mut text = String::new();
        if file.take(MAX_IGNORE_FILE).read_to_string(&mut text).is_err() {
            continue;
        }
        let mut builder = GitignoreBuilder::new(".");
        for line in text.lines() {
            // A bad line is skipped, as git does.
            let _ = builder.add_line(None, line);
        }
        if let Some(gi) = builder.build().ok().filter(|g| !g.is_empty()) {
            matchers.push(gi);
        }
    }
    if matchers.is_empty() {
        return parent;
    }
    Some(Arc::new(Ignores { parent, dir: dir.rel_path().clone(), matchers }))
}

/// The ignore layers that apply at `start`: those of its ancestors, root first.
pub(crate) fn ancestor_ignores(root: &sluice_guard::Root, start: &RelPath) -> Option<Arc<Ignores>> {
    let mut layers = None;
    let mut chain = vec![RelPath::root()];
    chain.extend(start.ancestors().filter_map(|a| RelPath::parse(a).ok()));
    for rel in chain {
        let Ok(dir) = root.open_dir(&rel) else { break };
        let Ok(entries) = dir.entries() else { break };
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        layers = load_ignores(&dir, &names, layers);
    }
    layers
}

enum Job {
    /// Read this directory (already opened) and queue what it holds.
    Dir { dir: DirHandle, depth: usize, ignores: Option<Arc<Ignores>> },
    /// Open the child folder `name` of `parent`, then read it.
    Subdir { parent: Arc<DirHandle>, name: String, depth: usize, ignores: Option<Arc<Ignores>> },
    /// Regular files of `dir` for [`Visitor::file`].
    Files { dir: Arc<DirHandle>, files: Vec<(String, RelPath)> },
}

struct Queue {
    state: Mutex<QueueState>,
    cv: Condvar,
    stop: AtomicBool,
    timed_out: AtomicBool,
}

struct QueueState {
    jobs: VecDeque<Job>,
    active: usize,
}

/// Walks below `start` (an opened directory) and calls `visitor`. `ignores` are the layers of
/// the start's ancestors (see [`ancestor_ignores`]).
pub(crate) fn walk<V: Visitor>(
    start: DirHandle,
    ignores: Option<Arc<Ignores>>,
    config: &WalkConfig<'_>,
    visitor: &V,
) -> WalkReport {
    let queue = Queue {
        state: Mutex::new(QueueState {
            jobs: VecDeque::from([Job::Dir { dir: start, depth: 0, ignores }]),
            active: 0,
        }),
        cv: Condvar::new(),
        stop: AtomicBool::new(false),
        timed_out: AtomicBool::new(false),
    };
    let visited = Mutex::new(HashSet::new());
    let threads = config.threads.max(1);
    if threads == 1 {
        worker(&queue, &visited, config, visitor);
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| worker(&queue, &visited, config, visitor));
            }
        });
    }
    WalkReport {
        stopped: queue.stop.load(Ordering::Relaxed) && !queue.timed_out.load(Ordering::Relaxed),
        timed_out: queue.timed_out.load(Ordering::Relaxed),
    }
}

fn worker<V: Visitor>(
    queue: &Queue,
    visited: &Mutex<HashSet<FileId>>,
    config: &WalkConfig<'_>,
    visitor: &V,
) {
    let walk = Walk { visited, config, visitor };
    let mut state = visitor.state();
    loop {
        let job = {
            let Ok(mut q) = queue.state.lock() else { return };
            loop {
                if queue.stop.load(Ordering::Relaxed) {
                    queue.cv.notify_all();
                    return;
                }
                let next =
                    if config.breadth_first { q.jobs.pop_front() } else { q.jobs.pop_back() };
                if let Some(job) = next {
                    q.active += 1;
                    break job;
                }
                if q.active == 0 {
                    queue.cv.notify_all();
                    return;
                }
                q = match queue.cv.wait(q) {
                    Ok(q) => q,
                    Err(_) => return,
                };
            }
        };
        if config.deadline.is_some_and(|d| Instant::now() >= d) {
            queue.timed_out.store(true, Ordering::Relaxed);
            queue.stop.store(true, Ordering::Relaxed);
        }
        let mut new_jobs = Vec::new();
        if !queue.stop.load(Ordering::Relaxed) {
            let flow = walk.run_job(job, &mut state, &mut new_jobs);
            if flow == Flow::Stop {
                queue.stop.store(true, Ordering::Relaxed);
            }
        }
        let Ok(mut q) = queue.state.lock() else { return };
        q.active -= 1;
        let pushed = !new_jobs.is_empty();
        q.jobs.extend(new_jobs);
        let done = q.active == 0 && q.jobs.is_empty();
        drop(q);
        // Wake waiters for new work, for a stop, and for the "all done" condition.
        if pushed || done || queue.stop.load(Ordering::Relaxed) {
            queue.cv.notify_all();
        }
    }
}

/// What every job of one walk works with: the folders already read (by identity), the walk's
/// settings and its visitor.
struct Walk<'a, 'c, V> {
    visited: &'a Mutex<HashSet<FileId>>,
    config: &'a WalkConfig<'c>,
    visitor: &'a V,
}

impl<V: Visitor> Walk<'_, '_, V> {
    fn run_job(&self, job: Job, state: &mut V::State, out: &mut Vec<Job>) -> Flow {
        let visitor = self.visitor;
        match job {
            Job::Dir { dir, depth, ignores } => self.read_dir(dir, depth, ignores, state, out),
            Job::Subdir { parent, name, depth, ignores } => {
                // Never follows a link: a folder swapped for a link since it was listed is skipped.
                let Ok(dir) = parent.open_subdir(&name) else { return Flow::Continue };
                drop(parent);
                self.read_dir(dir, depth, ignores, state, out)
            }
            Job::Files { dir, files } => {
                for (name, rel) in &files {
                    let item = Item { dir: &dir, name, rel, kind: EntryKind::File };
                    if visitor.file(state, &item) == Flow::Stop {
                        return Flow::Stop;
                    }
                }
                Flow::Continue
            }
        }
    }

    fn read_dir(
        &self,
        dir: DirHandle,
        depth: usize,
        ignores: Option<Arc<Ignores>>,
        state: &mut V::State,
        out: &mut Vec<Job>,
    ) -> Flow {
        let Walk { visited, config, visitor } = self;
        if let Ok(id) = dir.id() {
            match visited.lock() {
                Ok(mut seen) => {
                    if !seen.insert(id) {
                        return Flow::Continue;
                    }
                }
                Err(_) => return Flow::Stop,
            }
        }
        let Ok(mut entries) = dir.entries() else { return Flow::Continue };
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        let ignores = if config.respect_gitignore {
            let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
            load_ignores(&dir, &names, ignores)
        } else {
            None
        };

        let child_depth = depth + 1;
        let mut subdirs = Vec::new();
        let mut files = Vec::new();
        for entry in &entries {
            let name = entry.name.as_str();
            if name == ".git" || (!config.include_hidden && name.starts_with('.')) {
                continue;
            }
            // Names that are not valid project-relative components (`:` and the like) cannot be
            // addressed by any tool, so they are not shown either.
            let Ok(rel) = dir.rel_path().join(name) else { continue };
            if config.shield.matches_entry(&rel) {
                continue;
            }
            let kind = match entry.kind {
                Some(kind) => kind,
                None => match dir.entry_meta(name) {
                    Ok(meta) => meta.kind,
                    Err(_) => continue,
                },
            };
            let is_dir = kind == EntryKind::Dir;
            if ignores.is_some() && is_ignored(ignores.as_deref(), &rel, is_dir) {
                continue;
            }
            if config.exclude.is_some_and(|ex| ex.is_match(rel.as_str())) {
                continue;
            }
            let item = Item { dir: &dir, name, rel: &rel, kind };
            if visitor.entry(state, &item) == Flow::Stop {
                return Flow::Stop;
            }
            if is_dir && child_depth < config.max_depth {
                subdirs.push(name.to_owned());
            } else if kind == EntryKind::File && V::WANTS_FILES {
                files.push((name.to_owned(), rel));
            }
        }

        let dir = Arc::new(dir);
        // Depth-first pops from the back: push folders first so this folder's files go first and
        // its handle is released early; reverse so names come out in order.
        if !config.breadth_first {
            subdirs.reverse();
        }
        for name in subdirs {
            out.push(Job::Subdir {
                parent: Arc::clone(&dir),
                name,
                depth: child_depth,
                ignores: ignores.clone(),
            });
        }
        let mut batches: Vec<Vec<(String, RelPath)>> = Vec::new();
        let mut files = files.into_iter().peekable();
        while files.peek().is_some() {
            batches.push(files.by_ref().take(FILE_BATCH).collect());
        }
        for batch in batches.into_iter().rev() {
            out.push(Job::Files { dir: Arc::clone(&dir), files: batch });
        }
        Flow::Continue
    }
}
