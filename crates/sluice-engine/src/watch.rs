//! Watches project roots so a folder that is moved, deleted or replaced makes its project
//! unavailable at once (and the window can say so). inotify reports a renamed root only as an
//! event on the old path and a deleted one as the watch dying, so every event
//! and a slow periodic tick both lead to the same check: re-resolve the root and compare its
//! identity with the one recorded at authorization.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::Engine;

/// How often roots are re-checked even without an event (also picks up new projects).
const TICK: Duration = Duration::from_secs(2);

/// The file name of `paths::nudge_file`.
const NUDGE_NAME: &str = "nudge";

/// Runs until the engine is dropped by everyone else. Must be called inside a tokio runtime.
pub fn watch_roots(engine: Arc<Engine>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut events = match RootEvents::new(engine.data_dir()) {
            Ok(events) => Some(events),
            Err(err) => {
                tracing::warn!(%err, "file watching unavailable; checking project roots periodically");
                None
            }
        };
        let mut watched: HashSet<PathBuf> = HashSet::new();
        let mut tick = tokio::time::interval(TICK);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                () = next_event(&mut events) => {}
            }
            if Arc::strong_count(&engine) == 1 {
                return;
            }
            let check = engine.clone();
            let roots = tokio::task::spawn_blocking(move || {
                check.enforce_exec();
                check.reap_servers();
                check.checkpoint_wal();
                check.tick_memory();
                check.check_roots();
                check.available_roots()
            })
            .await
            .unwrap_or_default();
            if let Some(events) = events.as_mut() {
                let wanted: HashSet<PathBuf> = roots.into_iter().map(|(_, r)| r).collect();
                for gone in watched.difference(&wanted).cloned().collect::<Vec<_>>() {
                    events.unwatch(&gone);
                    watched.remove(&gone);
                }
                for new in wanted.difference(&watched).cloned().collect::<Vec<_>>() {
                    if events.watch(&new) {
                        watched.insert(new);
                    }
                }
            }
        }
    })
}

/// The next root event, or never when watching is unavailable (the tick still runs).
async fn next_event(events: &mut Option<RootEvents>) {
    match events {
        Some(events) => events.next().await,
        None => std::future::pending().await,
    }
}

/// Linux: inotify asking only for what happens to the root folder itself (moved, deleted,
/// permissions changed, unmounted). A general-purpose watcher also subscribes to every open,
/// close and write of the root's entries, which would wake the engine twice for each file an
/// assistant reads. Plus the data folder's nudge file (`paths::nudge_file`), rewritten by
/// another process after an emergency stop or a project change.
#[cfg(target_os = "linux")]
struct RootEvents {
    inotify: tokio::io::unix::AsyncFd<inotify::Inotify>,
    watches: inotify::Watches,
    descriptors: std::collections::HashMap<PathBuf, inotify::WatchDescriptor>,
    /// The data folder's watch: of its events only the nudge file's count.
    data: Option<inotify::WatchDescriptor>,
    buffer: Vec<u8>,
}

#[cfg(target_os = "linux")]
impl RootEvents {
    fn new(data_dir: &std::path::Path) -> std::io::Result<RootEvents> {
        use inotify::WatchMask;
        // `init` opens the descriptor non-blocking, as AsyncFd needs.
        let inotify = inotify::Inotify::init()?;
        let mut watches = inotify.watches();
        // The database is written constantly but never closed or renamed into place, so these
        // two events in the data folder are rare; the nudge file is filtered by name below.
        let data = watches
            .add(data_dir, WatchMask::CLOSE_WRITE | WatchMask::MOVED_TO | WatchMask::ONLYDIR)
            .inspect_err(|err| tracing::warn!(%err, "cannot watch the data folder for nudges"))
            .ok();
        // SAFETY: the descriptor belongs to `inotify`, which the AsyncFd owns from here on: it
        // stays open and the same until the AsyncFd deregisters it and drops it.
        let inotify = unsafe { tokio::io::unix::AsyncFd::register(inotify) }?;
        Ok(RootEvents {
            inotify,
            watches,
            descriptors: std::collections::HashMap::new(),
            data,
            buffer: vec![0; 4096],
        })
    }

    fn watch(&mut self, root: &std::path::Path) -> bool {
        use inotify::WatchMask;
        let mask = WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::ATTRIB
            | WatchMask::ONLYDIR
            | WatchMask::DONT_FOLLOW;
        match self.watches.add(root, mask) {
            Ok(wd) => {
                self.descriptors.insert(root.to_path_buf(), wd);
                true
            }
            Err(_) => false,
        }
    }

    fn unwatch(&mut self, root: &std::path::Path) {
        if let Some(wd) = self.descriptors.remove(root) {
            // Fails harmlessly when the kernel already dropped the watch (root deleted).
            let _ = self.watches.remove(wd);
        }
    }

    /// Waits until at least one event arrived and drains what is queued.
    async fn next(&mut self) {
        loop {
            let Ok(mut ready) = self.inotify.readable_mut().await else {
                return std::future::pending().await;
            };
            let (buffer, data) = (&mut self.buffer, &self.data);
            let relevant = |fd: &mut tokio::io::unix::AsyncFd<inotify::Inotify>| {
                let events = fd.get_mut().read_events(buffer)?;
                Ok(events
                    .filter(|e| {
                        Some(&e.wd) != data.as_ref() || e.name.is_some_and(|n| n == NUDGE_NAME)
                    })
                    .count())
            };
            match ready.try_io(relevant) {
                Ok(Ok(n)) if n > 0 => return,
                Ok(Ok(_)) | Err(_) => continue,
                Ok(Err(err)) => {
                    tracing::warn!(%err, "reading root events failed; checking periodically");
                    return std::future::pending().await;
                }
            }
        }
    }
}

/// Elsewhere: the platform watcher through `notify`, keeping only non-access events.
#[cfg(not(target_os = "linux"))]
struct RootEvents {
    watcher: notify::RecommendedWatcher,
    rx: tokio::sync::mpsc::UnboundedReceiver<()>,
}

#[cfg(not(target_os = "linux"))]
impl RootEvents {
    fn new(data_dir: &std::path::Path) -> notify::Result<RootEvents> {
        use notify::Watcher;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let data = data_dir.to_path_buf();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                // Access events (open/close) arrive constantly and say nothing about the root; in
                // the data folder (the database is written constantly) only the nudge file counts.
                if let Ok(ev) = res
                    && !matches!(ev.kind, notify::EventKind::Access(_))
                    && ev.paths.iter().any(|p| {
                        p.parent() != Some(data.as_path())
                            || p.file_name().is_some_and(|n| n == NUDGE_NAME)
                    })
                {
                    let _ = tx.send(());
                }
            })?;
        if let Err(err) = watcher.watch(data_dir, notify::RecursiveMode::NonRecursive) {
            tracing::warn!(%err, "cannot watch the data folder for nudges");
        }
        Ok(RootEvents { watcher, rx })
    }

    fn watch(&mut self, root: &std::path::Path) -> bool {
        use notify::Watcher;
        self.watcher.watch(root, notify::RecursiveMode::NonRecursive).is_ok()
    }

    fn unwatch(&mut self, root: &std::path::Path) {
        use notify::Watcher;
        let _ = self.watcher.unwatch(root);
    }

    async fn next(&mut self) {
        if self.rx.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}
