//! Locks on the paths a commit changes, so commits into unrelated files of one project run side
//! by side (their `fsync`s then share the filesystem's journal commits) while commits that touch
//! the same file, or a folder and something inside it, still run one after the other.
//!
//! A lock covers a set of paths; two sets conflict when a path of one is equal to, inside or
//! above a path of the other. The empty path (the project's root) conflicts with everything: it
//! is how recovery and [`super::Mutations::exclusive`] hold the whole project. Requests are served
//! in arrival order among those that conflict — a request waits for every earlier request it
//! conflicts with, granted or still waiting — so a whole-project request is never starved by a
//! stream of small ones, and since a request only ever waits for earlier ones there is no cycle.
//!
//! Names are compared as a case-insensitive, normalizing filesystem might see them, erring on the
//! side of a conflict: ASCII letters without case, trailing dots and spaces dropped (Windows), and
//! a name with anything outside ASCII, or a `~` (an 8.3 short name), conflicts with every name at
//! its depth. A conflict too many only makes two commits wait for each other; one too few could
//! let two commits change one file at once.
//!
//! Hand-written: no maintained crate locks hierarchical path prefixes with this fairness, and the
//! whole of it is a list and a condition variable.

use std::sync::{Condvar, Mutex, MutexGuard};

/// One path's key: its names as compared for conflicts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Name {
    Plain(String),
    /// Matches every name.
    Any,
}

fn key(path: &str) -> Vec<Name> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(|c| {
            let c = c.trim_end_matches(['.', ' ']);
            if !c.is_ascii() || c.contains('~') || c.is_empty() {
                Name::Any
            } else {
                Name::Plain(c.to_ascii_lowercase())
            }
        })
        .collect()
}

/// True when one path is equal to, inside or above the other.
fn related(a: &[Name], b: &[Name]) -> bool {
    a.iter().zip(b).all(|(x, y)| matches!((x, y), (Name::Any, _) | (_, Name::Any)) || x == y)
}

/// What one lock covers.
#[derive(Debug, Clone)]
pub(crate) struct Footprint(Vec<Vec<Name>>);

impl Footprint {
    /// The whole project.
    pub fn whole() -> Footprint {
        Footprint(vec![Vec::new()])
    }

    /// The given project-relative paths (`/`-separated); none means the whole project.
    pub fn paths<'a>(paths: impl IntoIterator<Item = &'a str>) -> Footprint {
        let mut keys: Vec<_> = paths.into_iter().map(key).collect();
        if keys.is_empty() {
            return Footprint::whole();
        }
        // A path inside another one of the set adds nothing (a folder covers its contents),
        // and sorted, it follows it: a deleted tree of 10 000 entries is one key.
        keys.sort();
        keys.dedup_by(|inner, outer| inner.starts_with(outer));
        Footprint(keys)
    }

    fn conflicts(&self, other: &Footprint) -> bool {
        self.0.iter().any(|a| other.0.iter().any(|b| related(a, b)))
    }
}

struct Entry {
    ticket: u64,
    footprint: Footprint,
}

#[derive(Default)]
struct Table {
    next: u64,
    /// Granted and waiting requests, in arrival order.
    entries: Vec<Entry>,
}

/// The locks of one project.
#[derive(Default)]
pub(crate) struct PathLocks {
    table: Mutex<Table>,
    changed: Condvar,
}

/// A granted lock; released on drop.
pub(crate) struct PathGuard<'a> {
    locks: &'a PathLocks,
    ticket: u64,
}

impl PathLocks {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until no earlier request conflicts with `footprint`, then holds it.
    pub fn lock(&self, footprint: Footprint) -> PathGuard<'_> {
        let mut table = self.table();
        let ticket = table.next;
        table.next += 1;
        table.entries.push(Entry { ticket, footprint });
        loop {
            let blocked = match table.entries.iter().position(|e| e.ticket == ticket) {
                Some(at) => {
                    let (earlier, rest) = table.entries.split_at(at);
                    earlier.iter().any(|e| e.footprint.conflicts(&rest[0].footprint))
                }
                // Only this request's guard removes its entry, so it is there.
                None => false,
            };
            if !blocked {
                return PathGuard { locks: self, ticket };
            }
            table = self.changed.wait(table).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for PathGuard<'_> {
    fn drop(&mut self) {
        let mut table = self.locks.table();
        table.entries.retain(|e| e.ticket != self.ticket);
        drop(table);
        self.locks.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc::channel;
    use std::time::Duration;

    use super::*;

    fn conflict(a: &[&str], b: &[&str]) -> bool {
        Footprint::paths(a.iter().copied()).conflicts(&Footprint::paths(b.iter().copied()))
    }

    #[test]
    fn a_path_conflicts_with_itself_its_folders_and_its_contents_only() {
        assert!(conflict(&["out/a.txt"], &["out/a.txt"]));
        assert!(conflict(&["out"], &["out/a.txt"]));
        assert!(conflict(&["out/deep/x"], &["out"]));
        assert!(conflict(&[""], &["anything/at/all"]));
        assert!(Footprint::whole().conflicts(&Footprint::paths(["a"])));
        assert!(conflict(&["x", "out/a.txt"], &["out"]));
        assert!(!conflict(&["out/a.txt"], &["out/b.txt"]));
        assert!(!conflict(&["out/a"], &["out/ab"]));
        assert!(!conflict(&["src/a.rs"], &["out/a.rs"]));
    }

    #[test]
    fn a_folder_in_the_set_stands_for_everything_inside_it() {
        let fp = Footprint::paths(["build/a/b/f", "build/a/b", "build", "build/top", "out/x"]);
        assert_eq!(fp.0, [key("build"), key("out/x")]);
        assert!(fp.conflicts(&Footprint::paths(["build/a/other"])));
        assert!(!fp.conflicts(&Footprint::paths(["buildx"])));
    }

    #[test]
    fn names_a_case_insensitive_or_normalizing_system_might_merge_conflict() {
        // Case (macOS, Windows).
        assert!(conflict(&["Out/README.md"], &["out/readme.md"]));
        // Trailing dots and spaces (Windows drops them).
        assert!(conflict(&["a.txt."], &["a.txt"]));
        assert!(conflict(&["dir /x"], &["dir/x"]));
        // An 8.3 short name may be any long one.
        assert!(conflict(&["PROGRA~1/x"], &["program files/x"]));
        // NFC against NFD, and a Kelvin sign against `k`: anything outside ASCII is anyone.
        assert!(conflict(&["caf\u{e9}"], &["cafe\u{301}"]));
        assert!(conflict(&["\u{212a}.txt"], &["k.txt"]));
        // But only at its depth, and only along the same folders.
        assert!(!conflict(&["src/\u{e9}"], &["out/x"]));
    }

    #[test]
    fn commits_on_unrelated_files_run_together_and_on_one_file_in_turn() {
        let locks = Arc::new(PathLocks::default());
        let a = locks.lock(Footprint::paths(["out/a"]));
        // Another file: granted while `a` is held.
        drop(locks.lock(Footprint::paths(["out/b"])));
        // The same file: waits until `a` is released.
        let (tx, rx) = channel();
        let waiter = {
            let locks = locks.clone();
            std::thread::spawn(move || {
                let _g = locks.lock(Footprint::paths(["out/a"]));
                tx.send(()).unwrap();
            })
        };
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        drop(a);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
    }

    #[test]
    fn a_waiting_whole_project_request_is_served_before_later_small_ones() {
        let locks = Arc::new(PathLocks::default());
        let first = locks.lock(Footprint::paths(["out/a"]));
        let order = Arc::new(Mutex::new(Vec::new()));
        let spawn = |name: &'static str, fp: Footprint, delay: u64| {
            let (locks, order) = (locks.clone(), order.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(delay));
                let _g = locks.lock(fp);
                order.lock().unwrap().push(name);
            })
        };
        let whole = spawn("whole", Footprint::whole(), 0);
        // Wait until the whole-project request is queued behind `first`.
        while locks.table().entries.len() < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        // A later request on an unrelated file does not jump the queue past `whole`.
        let small = spawn("small", Footprint::paths(["out/b"]), 0);
        while locks.table().entries.len() < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(first);
        whole.join().unwrap();
        small.join().unwrap();
        assert_eq!(*order.lock().unwrap(), ["whole", "small"]);
    }

    #[test]
    fn no_two_holders_of_one_file_overlap_under_contention() {
        let locks = Arc::new(PathLocks::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (locks, inside) = (locks.clone(), inside.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        // Half lock the file, half its folder: every pair conflicts.
                        let fp = if i % 2 == 0 {
                            Footprint::paths(["out/shared"])
                        } else {
                            Footprint::paths(["OUT"])
                        };
                        let _g = locks.lock(fp);
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(locks.table().entries.is_empty());
    }
}
