//! Landlock confinement (Linux): read and execute everywhere except in hidden folders (Sluice's
//! own data folder), write only beneath the project root, the job's private folders and
//! `/dev/null`; optionally no outbound TCP; no signals to and no abstract-socket connections
//! with processes outside the job (ABI ≥ 6).
//!
//! Landlock rules are allow-lists beneath paths: there is no "everything except X". To keep a
//! folder out of reach, read access is granted on every *sibling* along the path from `/` down
//! to it instead of on `/` itself ([`read_roots`]). Limits of that construction, all towards
//! refusing: entries created at those levels after the job started are not readable by it; the
//! ancestors themselves cannot be listed (`ls /` fails, `stat` still works); symlinks at those
//! levels are not granted themselves, only what they point to through its own path; a bind
//! mount of the hidden folder elsewhere would stay readable. The engine's open files stay out
//! of reach through `/proc/<pid>/fd` too: Landlock denies ptrace-mode access to processes
//! outside the job's domain (the folder can be listed, no link followed).
//!
//! The ruleset is built in the parent — opening the rule paths allocates — and the child only
//! calls `restrict_self()` between fork and exec. What the kernel really enforces is measured
//! once by applying the same ruleset to a throw-away thread (Landlock and `no_new_privs` apply
//! per thread, so the engine's other threads are unaffected) and reported as it is: callers
//! that need full enforcement refuse to run when it is not available, never silently weaker.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// The measured Landlock state of this system for one kind of ruleset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LandlockReport {
    /// `fully-enforced`, `partially-enforced` or `not-enforced`.
    pub status: Enforcement,
    /// The kernel's Landlock ABI version, when Landlock is available.
    pub abi: Option<i32>,
    /// Whether outbound TCP can be blocked (ABI ≥ 4).
    pub network_rules: bool,
    /// Whether jobs run in their own namespaces (Linux, [`crate::jail`]) as the first layer.
    pub namespaces: bool,
    /// A sentence for `sluice doctor` and the Settings view.
    pub summary: String,
}

impl LandlockReport {
    /// Whether a `registries` network holds here: the job's only way out is Sluice's proxy — in
    /// namespaces of its own (Linux), or as the Windows sandbox account, whose firewall rules
    /// leave it loopback only.
    pub fn serves_registries(&self) -> bool {
        self.namespaces
            || (cfg!(windows) && self.status == Enforcement::FullyEnforced && self.network_rules)
    }

    /// What a `registries` network needs that is missing here, as a phrase.
    pub fn registries_need(&self) -> &'static str {
        if cfg!(windows) {
            "the Windows sandbox account (`sluice sandbox setup`)"
        } else {
            "jobs to run in namespaces of their own"
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    FullyEnforced,
    PartiallyEnforced,
    NotEnforced,
}

/// The Landlock state for a ruleset with (`network_off`) or without TCP rules. Cached: the
/// kernel does not change under a running engine.
pub fn landlock_status(network_off: bool) -> LandlockReport {
    imp::status(network_off)
}

/// What confines a job here, both layers: on Linux the namespaces when the kernel allows them
/// (then a job's network is off through a network namespace of its own, not Landlock's TCP
/// rules), and Landlock (Seatbelt on macOS). `namespaces` says whether the caller asks for them.
pub fn confinement(network_off: bool, namespaces: bool) -> LandlockReport {
    #[cfg(target_os = "linux")]
    {
        let jail = crate::jail::status();
        let jailed = namespaces && jail.available;
        let mut report = landlock_status(network_off && !jailed);
        report.namespaces = jailed;
        report.summary = if jailed {
            format!("{}; second layer: {}", jail.summary, report.summary)
        } else if namespaces {
            format!("{}; {}", jail.summary, report.summary)
        } else {
            report.summary
        };
        report
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = namespaces;
        landlock_status(network_off)
    }
}

/// The folders to grant read access beneath so that everything except `hidden` (and what lies
/// beneath it) is readable: `/` when nothing is hidden; otherwise, walking down from `/` towards
/// each hidden folder, every entry beside the path taken. Symlinks at those levels are left
/// out: opening one would follow it, possibly into a hidden folder, and whatever it points to
/// is reachable through its own path anyway. Unreadable levels yield nothing (never more).
pub fn read_roots(hidden: &[PathBuf]) -> Vec<PathBuf> {
    let hidden: Vec<PathBuf> = hidden
        .iter()
        .map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.clone()))
        .filter(|h| h.is_absolute() && h.parent().is_some())
        .collect();
    if hidden.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let mut out = Vec::new();
    expand(Path::new("/"), &hidden, &mut out);
    out
}

/// [`read_roots`], with each granted store (canonical) readable again where it lies beneath a
/// hidden folder: a rule of its own, or — when hidden folders lie beneath it in turn — its
/// entries one by one, as for `/`. A granted store elsewhere is readable already.
pub fn read_roots_with(hidden: &[PathBuf], granted: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = read_roots(hidden);
    let hidden: Vec<PathBuf> =
        hidden.iter().map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.clone())).collect();
    for g in granted {
        if std::fs::symlink_metadata(g).is_err() || !hidden.iter().any(|h| g.starts_with(h)) {
            continue;
        }
        if hidden.iter().any(|h| h.starts_with(g) && h != g) {
            expand(g, &hidden, &mut out);
        } else {
            out.push(g.clone());
        }
    }
    out
}

/// Whether every layer holds: on Linux the namespaces and Landlock fully enforced, on macOS
/// Seatbelt, on Windows the sandbox account; nowhere else.
pub fn is_full(report: &LandlockReport) -> bool {
    let layer = report.status == Enforcement::FullyEnforced;
    if cfg!(target_os = "linux") {
        report.namespaces && layer
    } else {
        // Windows: fully enforced only when jobs run as the sandbox account
        // (`crate::winsandbox::status`).
        (cfg!(target_os = "macos") || cfg!(windows)) && layer
    }
}

/// One promise the sandbox makes, and whether it holds here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Guarantee {
    pub what: &'static str,
    pub holds: bool,
}

/// What holds for a job confined as `report` says (`sluice doctor`, Settings, approvals).
/// Whether a job's view covers what its project's shield hides ([`crate::cover`]): in Linux
/// namespaces, and under Seatbelt on macOS; not under Landlock alone, nor on Windows.
pub fn covers_shield(report: &LandlockReport) -> bool {
    let layer = report.status == Enforcement::FullyEnforced;
    report.namespaces || (cfg!(target_os = "macos") && layer)
}

pub fn guarantees(report: &LandlockReport) -> Vec<Guarantee> {
    let layer = report.status == Enforcement::FullyEnforced;
    if cfg!(windows) {
        return crate::winsandbox::status::guarantees(layer);
    }
    let ns = report.namespaces;
    let linux = cfg!(target_os = "linux");
    let seatbelt = cfg!(target_os = "macos") && layer;
    let scoped = report.abi.is_some_and(|abi| abi >= 6);
    let g = |what, holds| Guarantee { what, holds };
    vec![
        g("writes only in the project and the job's private folders", ns || layer),
        g("Sluice's data folder and the hidden credential stores unreadable", ns || layer),
        g("the rest of the machine out of sight (other projects, the rest of the home)", ns),
        g(
            "files the project's shield hides covered (but those granted), its git hooks and \
             configuration read-only",
            covers_shield(report),
        ),
        g(
            "no host Unix socket (session bus, Docker, X11, agents) but those opted in",
            ns || seatbelt,
        ),
        g("other processes invisible", ns),
        g("no signal to a process outside the job", ns || (linux && layer && scoped)),
        g("a private /tmp and /dev/shm", ns),
        g("network off means no connection out", ns || report.network_rules),
        g("no capabilities, only stdin, stdout and stderr inherited", linux),
    ]
}

/// Adds the readable entries of `dir`, an ancestor of at least one hidden folder.
fn expand(dir: &Path, hidden: &[PathBuf], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for entry in entries {
        if hidden.contains(&entry) {
            continue;
        }
        if hidden.iter().any(|h| h.starts_with(&entry)) {
            expand(&entry, hidden, out);
            continue;
        }
        let is_link = std::fs::symlink_metadata(&entry).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            out.push(entry);
        }
    }
}

#[cfg(target_os = "linux")]
pub(crate) mod imp {
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;

    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus,
        RestrictionStatus, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
        Scope, path_beneath_rules,
    };

    use super::{Enforcement, LandlockReport};
    use crate::error::ExecError;

    /// The newest ABI this code asks for; older kernels get what they support (best effort)
    /// and the measured status says so.
    const TARGET: ABI = ABI::V6;

    fn base(network_off: bool) -> Result<Ruleset, landlock::RulesetError> {
        let mut rs = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(TARGET))?
            .scope(Scope::from_all(TARGET))?;
        if network_off {
            rs = rs.handle_access(AccessNet::ConnectTcp)?;
        }
        Ok(rs)
    }

    /// Builds the ruleset for one job: read beneath `readable`, full access beneath `writable`,
    /// and with `network_off` no outbound TCP. Paths must exist.
    pub(crate) fn ruleset(
        readable: &[PathBuf],
        writable: &[&Path],
        network_off: bool,
    ) -> Result<RulesetCreated, ExecError> {
        let err = |e: landlock::RulesetError| {
            ExecError::Unconfinable(format!("cannot build the Landlock ruleset: {e}"))
        };
        base(network_off)
            .and_then(|rs| rs.create())
            .and_then(|rs| rs.add_rules(path_beneath_rules(readable, AccessFs::from_read(TARGET))))
            .and_then(|rs| rs.add_rules(path_beneath_rules(writable, AccessFs::from_all(TARGET))))
            .and_then(|rs| {
                rs.add_rules(path_beneath_rules(["/dev/null"], AccessFs::from_file(TARGET)))
            })
            .map_err(err)
    }

    fn measure(network_off: bool) -> LandlockReport {
        let probe = std::thread::spawn(move || -> Result<RestrictionStatus, String> {
            let rs = base(network_off)
                .and_then(|rs| rs.create())
                .and_then(|rs| rs.add_rules(path_beneath_rules(["/"], AccessFs::from_all(TARGET))))
                .map_err(|e| e.to_string())?;
            rs.restrict_self().map_err(|e| e.to_string())
        })
        .join();
        let status = match probe {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => return report(Enforcement::NotEnforced, None, false, e),
            Err(_) => {
                return report(Enforcement::NotEnforced, None, false, "probe failed".into());
            }
        };
        let abi = match status.landlock {
            LandlockStatus::Available { effective_abi, kernel_abi } => {
                Some(kernel_abi.unwrap_or(effective_abi as i32))
            }
            _ => None,
        };
        let network_rules = abi.is_some_and(|a| a >= 4);
        let enforcement = match status.ruleset {
            RulesetStatus::FullyEnforced => Enforcement::FullyEnforced,
            RulesetStatus::PartiallyEnforced => Enforcement::PartiallyEnforced,
            RulesetStatus::NotEnforced => Enforcement::NotEnforced,
        };
        let detail = match status.landlock {
            LandlockStatus::NotEnabled => "Landlock is built into the kernel but not enabled",
            LandlockStatus::NotImplemented => "the kernel has no Landlock",
            LandlockStatus::Available { .. } => "",
        };
        report(enforcement, abi, network_rules, detail.to_owned())
    }

    fn report(
        status: Enforcement,
        abi: Option<i32>,
        network_rules: bool,
        detail: String,
    ) -> LandlockReport {
        let summary = match status {
            Enforcement::FullyEnforced => format!(
                "Landlock ABI {}: jobs write only inside the project and their private folders{}",
                abi.unwrap_or(0),
                if network_rules { "; outbound TCP can be blocked" } else { "" }
            ),
            Enforcement::PartiallyEnforced => format!(
                "Landlock ABI {} enforces only part of the rules (older kernel); {}",
                abi.unwrap_or(0),
                "jobs are confined less than configured"
            ),
            Enforcement::NotEnforced => format!("jobs are not confined by Landlock: {detail}"),
        };
        LandlockReport { status, abi, network_rules, namespaces: false, summary }
    }

    pub(crate) fn status(network_off: bool) -> LandlockReport {
        static WITH_NET: OnceLock<LandlockReport> = OnceLock::new();
        static WITHOUT_NET: OnceLock<LandlockReport> = OnceLock::new();
        let cell = if network_off { &WITH_NET } else { &WITHOUT_NET };
        cell.get_or_init(|| measure(network_off)).clone()
    }

    /// In the child between fork and exec: only the `restrict_self` system calls, no
    /// allocation. A status weaker than `required` fails the spawn.
    pub(crate) fn apply(ruleset: RulesetCreated, required: Enforcement) -> std::io::Result<()> {
        match ruleset.restrict_self() {
            Ok(status) => {
                let got = match status.ruleset {
                    RulesetStatus::FullyEnforced => 2,
                    RulesetStatus::PartiallyEnforced => 1,
                    RulesetStatus::NotEnforced => 0,
                };
                let need = match required {
                    Enforcement::FullyEnforced => 2,
                    Enforcement::PartiallyEnforced => 1,
                    Enforcement::NotEnforced => 0,
                };
                if got >= need { Ok(()) } else { Err(rustix::io::Errno::PERM.into()) }
            }
            Err(_) => Err(rustix::io::Errno::PERM.into()),
        }
    }
}

/// A seccomp filter for jobs whose network is off. Landlock blocks TCP `connect` only; this
/// makes `socket()` fail with EACCES for IPv4 and IPv6, so no UDP (DNS included), raw or other
/// IP socket can be made either, and refuses `io_uring_setup` (io_uring can create sockets
/// itself) and every system call of another ABI (x32, i386), through which `socket` would have
/// other numbers. Unix sockets and everything else stay.
///
/// The program is libc's `sock_filter`s, with the kernel's numbers from libc too: rustix has no
/// seccomp types and no system-call numbers (its errno and address-family values would do, but
/// one source for the whole table reads better).
#[cfg(target_os = "linux")]
pub(crate) struct NoIpSockets(Vec<libc::sock_filter>);

#[cfg(target_os = "linux")]
impl NoIpSockets {
    /// `None` on an architecture this filter does not know (the job is then refused).
    pub(crate) fn new() -> Option<NoIpSockets> {
        #[cfg(target_arch = "x86_64")]
        const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
        #[cfg(target_arch = "aarch64")]
        const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        return None;
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        {
            // Classic BPF over `struct seccomp_data`: nr at 0, arch at 4, args[0] at 16 (its
            // low 32 bits, little-endian).
            const LD_W_ABS: u16 = 0x20;
            const JEQ_K: u16 = 0x15;
            const JGE_K: u16 = 0x35;
            const RET_K: u16 = 0x06;
            const ALLOW: u32 = 0x7fff_0000;
            const EACCES: u32 = 0x0005_0000 | libc::EACCES as u32;
            const X32_BIT: u32 = 0x4000_0000;
            let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
            let prog = vec![
                op(LD_W_ABS, 0, 0, 4),
                op(JEQ_K, 1, 0, ARCH),   // native ABI: go on
                op(RET_K, 0, 0, EACCES), // another ABI: refused
                op(LD_W_ABS, 0, 0, 0),
                op(JGE_K, 5, 0, X32_BIT), // x32 system calls: refused
                op(JEQ_K, 4, 0, libc::SYS_io_uring_setup as u32),
                op(JEQ_K, 0, 4, libc::SYS_socket as u32),
                op(LD_W_ABS, 0, 0, 16),
                op(JEQ_K, 1, 0, libc::AF_INET as u32),
                op(JEQ_K, 0, 1, libc::AF_INET6 as u32),
                op(RET_K, 0, 0, EACCES),
                op(RET_K, 0, 0, ALLOW),
            ];
            Some(NoIpSockets(prog))
        }
    }

    /// In the child between fork and exec: two `prctl`s, no allocation.
    pub(crate) fn apply(&self) -> std::io::Result<()> {
        rustix::thread::set_no_new_privs(true)?;
        let prog = libc::sock_fprog {
            len: self.0.len() as libc::c_ushort,
            filter: self.0.as_ptr() as *mut libc::sock_filter,
        };
        // libc: rustix has no `PR_SET_SECCOMP` (nor `seccomp()`) taking a filter program.
        // SAFETY: `prog` points at `self.0`, a whole BPF program of `len` instructions; both
        // outlive the call, the kernel only reads them (it copies the program) and keeps no
        // pointer; the other arguments are integers.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog as libc::c_ulong,
                0,
                0,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) mod imp {
    #[cfg(not(windows))]
    use super::Enforcement;
    use super::LandlockReport;

    /// macOS: Seatbelt (`crate::seatbelt`, untested here) when `sandbox-exec` exists, which
    /// blocks outbound network too. Windows: what holds of the sandbox account
    /// (`crate::winsandbox`). Elsewhere nothing confines jobs, so jobs that require
    /// confinement are refused.
    #[cfg(windows)]
    pub(crate) fn status(_network_off: bool) -> LandlockReport {
        crate::winsandbox::current_status().report()
    }

    #[cfg(not(windows))]
    pub(crate) fn status(_network_off: bool) -> LandlockReport {
        #[cfg(target_os = "macos")]
        if crate::seatbelt::available() {
            return LandlockReport {
                status: Enforcement::FullyEnforced,
                abi: None,
                network_rules: true,
                namespaces: false,
                summary: "Seatbelt (sandbox-exec) confines every job: writes only in the project \
                          and its own folders, Sluice's data folder hidden, outbound network \
                          blocked when off"
                    .into(),
            };
        }
        LandlockReport {
            status: Enforcement::NotEnforced,
            abi: None,
            network_rules: false,
            namespaces: false,
            summary: "Landlock exists only on Linux; jobs here are not confined by it".into(),
        }
    }
}
