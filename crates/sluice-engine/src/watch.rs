//! Watches project roots so a folder that is moved, deleted or replaced makes its project
//! unavailable at once (and the window can say so). inotify reports a renamed root only as an
//! event on the old path and a deleted one as the watch dying (PLATFORM-NOTES), so every event
//! and a slow periodic tick both lead to the same check: re-resolve the root and compare its
//! identity with the one recorded at authorization.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::Engine;

/// How often roots are re-checked even without an event (also picks up new projects).
const TICK: Duration = Duration::from_secs(2);

/// Runs until the engine is dropped by everyone else. Must be called inside a tokio runtime.
pub fn watch_roots(engine: Arc<Engine>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let (tx, mut rx) = mpsc::unbounded_channel::<()>();
        let mut watcher = match notify::recommended_watcher(
            move |res: notify::Result<notify::Event>| {
                // Access events (open/close) arrive constantly and say nothing about the root.
                if let Ok(ev) = res
                    && !matches!(ev.kind, notify::EventKind::Access(_))
                {
                    let _ = tx.send(());
                }
            },
        ) {
            Ok(w) => Some(w),
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
                Some(()) = rx.recv() => {}
            }
            if Arc::strong_count(&engine) == 1 {
                return;
            }
            let check = engine.clone();
            let roots = tokio::task::spawn_blocking(move || {
                check.enforce_exec();
                check.check_roots();
                check.available_roots()
            })
            .await
            .unwrap_or_default();
            if let Some(w) = watcher.as_mut() {
                let wanted: HashSet<PathBuf> = roots.into_iter().map(|(_, r)| r).collect();
                for gone in watched.difference(&wanted).cloned().collect::<Vec<_>>() {
                    let _ = w.unwatch(&gone);
                    watched.remove(&gone);
                }
                for new in wanted.difference(&watched).cloned().collect::<Vec<_>>() {
                    if w.watch(&new, RecursiveMode::NonRecursive).is_ok() {
                        watched.insert(new);
                    }
                }
            }
        }
    })
}
