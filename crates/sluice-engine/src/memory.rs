//! Memory given back to the system once a burst of calls is over.
//!
//! glibc's allocator keeps what requests free for the next ones: it returns memory only from
//! the top of each of its arenas, so after many calls on many threads the engine holds free
//! pages it no longer needs. Measured with `cargo xtask load` (48 000 calls from 32 clients):
//! resident anonymous memory grew 5.7 MiB while the live heap stayed flat (heaptrack), and one
//! `malloc_trim(0)` afterwards gave back all 5.7 MiB. Trimming walks every arena under its lock,
//! so it is not done on a request's path: the watcher's tick asks [`IdleTrim::tick`], which
//! trims when a second passed without a call, and once more when the runtime's idle threads
//! have ended. A steady stream of calls keeps what it reuses; an engine left idle in the tray
//! holds what it needs.
//!
//! The allocators of macOS, Windows and musl return free memory on their own; there
//! [`release`] does nothing. No crate wraps `malloc_trim`; it is one call into glibc.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Quiet this long after a call, the engine gives memory back a first time.
const QUIET: Duration = Duration::from_secs(1);
/// And again this long after: the async runtime ends a blocking thread after 10 s without work,
/// and the memory that thread's allocator cache held is free only then.
const THREADS_GONE: Duration = Duration::from_secs(12);

/// When the engine last gave memory back, counted in calls.
pub(crate) struct IdleTrim {
    state: Mutex<State>,
}

struct State {
    /// The call count when it last changed, and when that was seen.
    calls: u64,
    since: Instant,
    /// Trims since then: one when quiet, one when the idle threads are gone.
    trims: u8,
}

impl Default for IdleTrim {
    fn default() -> IdleTrim {
        IdleTrim { state: Mutex::new(State { calls: 0, since: Instant::now(), trims: 0 }) }
    }
}

impl IdleTrim {
    /// Called on every tick with the number of calls so far. Gives memory back when no call
    /// came for [`QUIET`], and again after [`THREADS_GONE`]; returns whether it was due.
    pub(crate) fn tick(&self, calls: u64) -> bool {
        self.tick_at(calls, Instant::now())
    }

    fn tick_at(&self, calls: u64, now: Instant) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if calls != state.calls {
            *state = State { calls, since: now, trims: 0 };
            return false;
        }
        let quiet = now.saturating_duration_since(state.since);
        let due = match state.trims {
            0 => quiet >= QUIET,
            1 => quiet >= THREADS_GONE,
            _ => false,
        };
        if due {
            state.trims += 1;
            drop(state);
            release();
        }
        due
    }
}

/// Returns the allocator's free pages to the system, where the allocator keeps them.
fn release() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases memory glibc holds free; it takes each arena's lock,
    // so it is safe beside allocations on other threads.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_when_quiet_and_when_idle_threads_are_gone_never_while_busy() {
        let trim = IdleTrim::default();
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        // Calls in every tick: never.
        for (calls, secs) in [(5, 2), (9, 4), (14, 6), (20, 8)] {
            assert!(!trim.tick_at(calls, at(secs)), "busy at {secs} s");
        }
        assert!(trim.tick_at(20, at(10)), "the first quiet tick");
        assert!(!trim.tick_at(20, at(12)), "given back already");
        assert!(!trim.tick_at(20, at(18)), "the idle threads may still run");
        assert!(trim.tick_at(20, at(20)), "12 s after the last call");
        assert!(!trim.tick_at(20, at(60)), "nothing since");
        assert!(!trim.tick_at(21, at(62)), "a call: busy again");
        assert!(trim.tick_at(21, at(64)));
    }

    /// The memory a fragmented heap holds comes back: 64 MiB in 1 KiB blocks, every 64th kept,
    /// leaves whole free pages inside the heap that only a trim returns.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_trim_returns_the_free_pages_inside_the_heap() {
        fn anon_kib() -> u64 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = status.lines().find(|l| l.starts_with("RssAnon:")).unwrap();
            line.split_whitespace().nth(1).unwrap().parse().unwrap()
        }
        // On a thread of its own, in its own arena, so the test's other threads do not mix in.
        std::thread::spawn(|| {
            let blocks: Vec<Vec<u8>> = (0..65536).map(|_| vec![1u8; 1000]).collect();
            let kept: Vec<Vec<u8>> = blocks
                .into_iter()
                .enumerate()
                .filter_map(|(i, b)| (i % 64 == 0).then_some(b))
                .collect();
            let before = anon_kib();
            release();
            let after = anon_kib();
            assert!(
                before.saturating_sub(after) > 32 * 1024,
                "a trim gave back {} KiB of about 63 MiB free",
                before.saturating_sub(after)
            );
            drop(kept);
        })
        .join()
        .unwrap();
    }
}
