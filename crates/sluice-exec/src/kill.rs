//! Killing whole process trees: timeout, cancel, project downgrade and emergency stop must leave
//! nothing of a job running, including descendants that called `setsid` or double-forked.
//!
//! On Linux, process groups alone miss `setsid` children, and a descendant walk misses
//! double-forked ones (re-parented away from the job). So:
//! - every job leader starts its own session (`setsid`), so its pid is also its group and
//!   session id;
//! - every job process carries a **marker**: the job's unique `RLIMIT_RTTIME` hard limit, set
//!   in the leader before exec and inherited by every descendant, whatever it re-parents to or
//!   however it changes session. An unprivileged process can lower a hard limit but never
//!   raise it back, so it cannot shed the marker to look like an ordinary process. (The limit
//!   only affects real-time scheduled processes, which jobs are not; its value is ~185 000
//!   years of CPU time.) `/proc/<pid>/limits` is world-readable, so one `/proc` scan finds
//!   a job's every process;
//! - the engine is a child subreaper ([`init_subreaper`]), so orphans of a job come to the
//!   engine, not to PID 1, and the engine reaps them with `waitpid(pid, WNOHANG)` — only pids
//!   it killed as job members, never anything else (other crates wait on their own children).
//!
//! Killing: `SIGTERM` to the group and every member, a short grace, then rounds of `SIGSTOP`
//! (so nothing can fork while we look) and `SIGKILL` until a scan finds no live member.
//! A cgroup per job would be airtight even against a root job; this is the unprivileged best.
//! macOS: process groups only (untested here). Windows: the direct child only (untested here;
//! Job Objects are the missing piece).

use std::time::Duration;

/// A job's process tree: its leader (also its group and session id) and its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tree {
    pub leader: u32,
    /// `None` when the engine's own `RLIMIT_RTTIME` hard limit is finite and no marker fits.
    pub marker: Option<u64>,
}

/// What a kill achieved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KillReport {
    /// Processes signalled.
    pub signalled: usize,
    /// Pids still alive (not zombies) when the kill gave up; empty on success.
    pub survivors: Vec<u32>,
}

/// Makes the engine a child subreaper (Linux): orphaned job descendants re-parent to it, where
/// they can be found and reaped. Call once, early, from the serving process. Other platforms:
/// nothing to do.
pub fn init_subreaper() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    Ok(())
}

/// Makes the engine's process non-dumpable (Linux): no core dumps of its memory, and its
/// `/proc/<pid>` entries (environment, memory, open files) owned by root, so a process of the
/// same user without `CAP_SYS_PTRACE` — a job that is not in namespaces — cannot read them.
/// Jobs themselves are dumpable again: `execve` resets the flag.
pub fn protect_engine() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
    Ok(())
}

/// Emergency stop: kills every process of every job this engine started (every process that
/// carries one of this engine's markers), with `grace` between TERM and KILL.
pub fn kill_all(grace: Duration) -> KillReport {
    let report = imp::kill_matching(None, grace);
    #[cfg(target_os = "linux")]
    crate::cgroup::remove_all(&imp::cgroup_prefix());
    report
}

/// Kills one job's tree. Blocks for at most `grace` plus the kill rounds (milliseconds).
pub fn kill_tree(tree: &Tree, grace: Duration) -> KillReport {
    let report = imp::kill_matching(Some(*tree), grace);
    release(tree);
    report
}

/// What the job held beyond its processes, once they are gone: on Linux its cgroup (root
/// only, [`crate::cgroup`]). Called after the leader is reaped; a kill calls it too.
pub fn release(tree: &Tree) {
    #[cfg(target_os = "linux")]
    if let Some(marker) = tree.marker {
        crate::cgroup::remove(marker);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = tree;
}

/// A descriptor of the process `pid` (Linux, a pidfd) that polls readable once it has ended:
/// how the engine's threads serving a job ([`crate::egress`], [`crate::publish`]) learn that it
/// ended. A `pid` that is no process id (0, or past `pid_t`) is refused as the kernel would,
/// with `EINVAL`.
#[cfg(target_os = "linux")]
pub(crate) fn pidfd(pid: u32) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::process::{Pid, PidfdFlags, pidfd_open};
    let pid = i32::try_from(pid).ok().and_then(Pid::from_raw).ok_or(rustix::io::Errno::INVAL)?;
    Ok(pidfd_open(pid, PidfdFlags::empty())?)
}

/// The live pids of a job's tree (for resource samples and tests).
pub fn tree_pids(tree: &Tree) -> Vec<u32> {
    imp::tree_pids(tree)
}

#[cfg(target_os = "linux")]
pub(crate) mod imp {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::{Duration, Instant};

    use rustix::process::{
        Pid, Resource, Signal, WaitOptions, kill_process, kill_process_group, waitpid,
    };

    use super::{KillReport, Tree};

    /// The top byte of every marker: `0x51` ('Q'), then 24 bits of the engine's pid, then a
    /// 32-bit sequence number.
    const TAG: u64 = 0x51 << 56;
    const TAG_MASK: u64 = 0xff << 56;
    const ENGINE_MASK: u64 = 0xff_ffff << 32;

    fn engine_bits() -> u64 {
        (u64::from(std::process::id()) & 0xff_ffff) << 32
    }

    /// How the names of this engine's job cgroups begin (`job-` and the marker's top half).
    pub(crate) fn cgroup_prefix() -> String {
        format!("job-{:08x}", (TAG | engine_bits()) >> 32)
    }

    /// Markers need room below the engine's own hard limit; normally it is unlimited.
    fn marking_available() -> bool {
        static OK: OnceLock<bool> = OnceLock::new();
        *OK.get_or_init(|| {
            // `None`: unlimited.
            rustix::process::getrlimit(Resource::Rttime).maximum.is_none()
        })
    }

    /// A fresh marker for a new job, unique within this engine.
    pub(crate) fn next_marker() -> Option<u64> {
        static SEQ: AtomicU32 = AtomicU32::new(1);
        marking_available()
            .then(|| TAG | engine_bits() | u64::from(SEQ.fetch_add(1, Ordering::Relaxed)))
    }

    #[derive(Debug, Clone)]
    pub(crate) struct Proc {
        pub pid: u32,
        pub ppid: u32,
        pub pgid: u32,
        pub sid: u32,
        pub zombie: bool,
        pub marker: Option<u64>,
    }

    fn read_proc(pid: u32) -> Option<Proc> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name may contain spaces and parentheses: fields start after the last ')'.
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_ascii_whitespace();
        let state = fields.next()?;
        let ppid = fields.next()?.parse().ok()?;
        let pgid = fields.next()?.parse().ok()?;
        let sid = fields.next()?.parse().ok()?;
        let marker = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok().and_then(|l| {
            let line = l.lines().find(|l| l.starts_with("Max realtime timeout"))?;
            let hard = line.split_ascii_whitespace().nth(4)?;
            hard.parse::<u64>().ok().filter(|m| m & TAG_MASK == TAG)
        });
        Some(Proc { pid, ppid, pgid, sid, zombie: state == "Z" || state == "X", marker })
    }

    pub(crate) fn scan() -> Vec<Proc> {
        let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(read_proc)
            .collect()
    }

    /// The members of `tree` (or of every job of this engine when `None`) among `procs`:
    /// marked, in the leader's session or group, or descended from a member.
    pub(crate) fn members(procs: &[Proc], tree: Option<Tree>) -> Vec<Proc> {
        let me = std::process::id();
        let seed = |p: &Proc| match tree {
            Some(t) => {
                p.pid == t.leader
                    || p.sid == t.leader
                    || p.pgid == t.leader
                    || (t.marker.is_some() && p.marker == t.marker)
            }
            None => p.marker.is_some_and(|m| m & ENGINE_MASK == engine_bits()),
        };
        let mut set: Vec<Proc> = procs.iter().filter(|p| seed(p)).cloned().collect();
        loop {
            let before = set.len();
            for p in procs {
                if !set.iter().any(|m| m.pid == p.pid) && set.iter().any(|m| m.pid == p.ppid) {
                    set.push(p.clone());
                }
            }
            if set.len() == before {
                break;
            }
        }
        set.retain(|p| p.pid > 1 && p.pid != me);
        set
    }

    pub(crate) fn tree_pids(tree: &Tree) -> Vec<u32> {
        members(&scan(), Some(*tree)).into_iter().filter(|p| !p.zombie).map(|p| p.pid).collect()
    }

    /// A pid above 1 (never init, never "every process").
    fn target(pid: u32) -> Option<Pid> {
        i32::try_from(pid).ok().filter(|p| *p > 1).and_then(Pid::from_raw)
    }

    fn signal(pid: u32, sig: Signal) {
        if let Some(pid) = target(pid) {
            let _ = kill_process(pid, sig);
        }
    }

    fn signal_group(pgid: u32, sig: Signal) {
        if let Some(pgid) = target(pgid) {
            let _ = kill_process_group(pgid, sig);
        }
    }

    /// Reaps members that are our zombie children — except the leader, which its supervisor
    /// waits for through `std::process::Child`.
    fn reap(procs: &[Proc], leader: Option<u32>) {
        let me = std::process::id();
        for p in procs.iter().filter(|p| p.zombie && p.ppid == me && Some(p.pid) != leader) {
            if let Some(pid) = i32::try_from(p.pid).ok().and_then(Pid::from_raw) {
                let _ = waitpid(Some(pid), WaitOptions::NOHANG);
            }
        }
    }

    pub(crate) fn kill_matching(tree: Option<Tree>, grace: Duration) -> KillReport {
        let leader = tree.map(|t| t.leader);
        let mut report = KillReport::default();
        let live = |procs: &[Proc]| -> Vec<Proc> {
            members(procs, tree).into_iter().filter(|p| !p.zombie).collect()
        };

        let first = live(&scan());
        if let Some(l) = leader {
            signal_group(l, Signal::TERM);
        }
        for p in &first {
            signal(p.pid, Signal::TERM);
            // A stopped process would not act on TERM until continued.
            signal(p.pid, Signal::CONT);
        }
        report.signalled = first.len();

        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if live(&scan()).is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }

        // Freeze, look again (a process forked before the freeze is found now), kill.
        let hard_deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let procs = scan();
            let members_now = live(&procs);
            reap(&members(&procs, tree), leader);
            if members_now.is_empty() {
                report.survivors.clear();
                break;
            }
            if Instant::now() > hard_deadline {
                report.survivors = members_now.iter().map(|p| p.pid).collect();
                break;
            }
            for p in &members_now {
                signal(p.pid, Signal::STOP);
            }
            let frozen = live(&scan());
            if let Some(l) = leader {
                signal_group(l, Signal::KILL);
            }
            for p in members_now.iter().chain(frozen.iter()) {
                signal(p.pid, Signal::KILL);
            }
            report.signalled = report.signalled.max(frozen.len());
            std::thread::sleep(Duration::from_millis(2));
        }
        // Members killed last may have become our zombies only now.
        let end = Instant::now() + Duration::from_millis(200);
        loop {
            let procs = members(&scan(), tree);
            reap(&procs, leader);
            let me = std::process::id();
            let pending = procs.iter().any(|p| p.zombie && p.ppid == me && Some(p.pid) != leader);
            if !pending || Instant::now() > end {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        report
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) mod imp {
    use std::time::{Duration, Instant};

    use super::{KillReport, Tree};

    pub(crate) fn next_marker() -> Option<u64> {
        None
    }

    pub(crate) fn tree_pids(tree: &Tree) -> Vec<u32> {
        vec![tree.leader]
    }

    /// macOS (untested here): the process group only; `setsid` descendants escape.
    pub(crate) fn kill_matching(tree: Option<Tree>, grace: Duration) -> KillReport {
        let Some(tree) = tree else { return KillReport::default() };
        use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
        let Some(pgid) = i32::try_from(tree.leader).ok().and_then(Pid::from_raw) else {
            return KillReport::default();
        };
        let _ = kill_process_group(pgid, Signal::TERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && test_kill_process_group(pgid).is_ok() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = kill_process_group(pgid, Signal::KILL);
        KillReport { signalled: 1, survivors: Vec::new() }
    }
}

#[cfg(not(unix))]
pub(crate) mod imp {
    use std::time::Duration;

    use super::{KillReport, Tree};

    pub(crate) fn next_marker() -> Option<u64> {
        None
    }

    pub(crate) fn tree_pids(tree: &Tree) -> Vec<u32> {
        vec![tree.leader]
    }

    /// Windows (untested here): each job's processes live in its Job Object (`winjob`),
    /// created at spawn and kept here by the leader's pid; terminating it ends the whole tree,
    /// and dropping it closes the last handle, which kills whatever is left (kill on close).
    #[cfg(windows)]
    static JOBS: std::sync::Mutex<std::collections::BTreeMap<u32, crate::winjob::JobObject>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());

    #[cfg(windows)]
    pub(crate) fn adopt(leader: u32, job: crate::winjob::JobObject) {
        JOBS.lock().unwrap_or_else(|p| p.into_inner()).insert(leader, job);
    }

    /// `tree`: that job's tree; `None`: every job's.
    pub(crate) fn kill_matching(tree: Option<Tree>, _grace: Duration) -> KillReport {
        #[cfg(windows)]
        {
            let doomed: Vec<crate::winjob::JobObject> = {
                let mut jobs = JOBS.lock().unwrap_or_else(|p| p.into_inner());
                match tree {
                    Some(t) => jobs.remove(&t.leader).into_iter().collect(),
                    None => std::mem::take(&mut *jobs).into_values().collect(),
                }
            };
            let signalled = doomed.len();
            for job in doomed {
                let _ = job.terminate(1);
            }
            KillReport { signalled, survivors: Vec::new() }
        }
        #[cfg(not(windows))]
        {
            let _ = tree;
            KillReport::default()
        }
    }
}
