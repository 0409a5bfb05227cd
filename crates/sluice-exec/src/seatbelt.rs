//! macOS confinement with Seatbelt, the counterpart of Landlock on Linux: read everywhere,
//! write only beneath the project and the job's private folders, and (network off) no outbound
//! IP traffic. The job runs as `/usr/bin/sandbox-exec -p PROFILE PROGRAM ARGS…`; the sandbox
//! is applied by `sandbox-exec` before it execs the program and is inherited by every
//! descendant, which cannot lift it.
//!
//! UNTESTED on macOS: Sluice is developed on Linux and this machine cannot build for Apple
//! targets. The profile text and the argv are pure string code, compiled and unit-tested on
//! every platform (escaping included); nothing here has been run under a real Seatbelt.
//! `sandbox-exec` is deprecated by Apple but still shipped (it is what Chromium's and Codex's
//! macOS sandboxes use).
//!
//! Paths must be canonical (`/private/var/…`, not `/var/…`): Seatbelt matches the resolved
//! path of the file, so a path through a link would never match and the job could write
//! nowhere. The caller canonicalizes; [`profile`] refuses relative paths.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::ExecError;

/// The program that applies a profile and execs the job.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Device files a job may write besides its folders (output to `/dev/null`, `/dev/stdout` …).
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/dtracehelper"];

/// What a job's profile is made of (canonical paths).
#[derive(Debug, Clone, Copy, Default)]
pub struct Profile<'a> {
    /// The project and the job's private folders.
    pub writable: &'a [&'a Path],
    /// Sluice's data folder and the project's credential stores.
    pub hidden: &'a [&'a Path],
    /// Stores granted to the project: readable, also beneath a hidden folder.
    pub granted: &'a [&'a Path],
    /// Host sockets the project opted in to.
    pub sockets: &'a [&'a Path],
    /// What the project's shield hides beneath it ([`crate::cover::covered`]): neither read
    /// nor written, a folder with everything that appears in it.
    pub covered: &'a [crate::cover::Covered],
    /// Beneath the project, never written: the programs of its `.git` and the shielded files
    /// granted to its commands ([`crate::cover::read_only`]).
    pub read_only: &'a [&'a Path],
    pub network_off: bool,
}

/// [`profile_with`] without grants or sockets.
pub fn profile(
    writable: &[&Path],
    hidden: &[&Path],
    network_off: bool,
) -> Result<String, ExecError> {
    profile_with(&Profile { writable, hidden, network_off, ..Profile::default() })
}

/// The Seatbelt profile of a job. Rules are evaluated last-match-wins: allow everything, then
/// deny every write, then allow writes beneath `writable` again; then deny reading and writing
/// beneath `hidden` (Sluice's data folder, the credential stores), allow reading the granted
/// stores, deny again what is hidden beneath a granted folder, and allow `writable` once more
/// for the job's own folders that lie inside a hidden one; last, deny what the project's shield
/// hides and writes to its `.git` programs.
pub fn profile_with(p: &Profile<'_>) -> Result<String, ExecError> {
    let (writable, hidden, network_off) = (p.writable, p.hidden, p.network_off);
    let mut out = String::from(
        "(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n    \
         (subpath \"/dev/fd\")\n",
    );
    for dev in WRITABLE_DEVICES {
        out.push_str(&format!("    (literal {})\n", quote(Path::new(dev))?));
    }
    for dir in writable {
        out.push_str(&format!("    (subpath {})\n", quote(absolute(dir)?)?));
    }
    out.push_str(")\n");
    if !hidden.is_empty() {
        out.push_str("(deny file-read* file-write*\n");
        for dir in hidden {
            out.push_str(&format!("    (subpath {})\n", quote(absolute(dir)?)?));
        }
        out.push_str(")\n");
        if !p.granted.is_empty() {
            out.push_str("(allow file-read*\n");
            for g in p.granted {
                out.push_str(&format!("    (subpath {})\n", quote(absolute(g)?)?));
            }
            out.push_str(")\n");
            let beneath: Vec<&&Path> = hidden
                .iter()
                .filter(|h| p.granted.iter().any(|g| h.starts_with(g) && **h != *g))
                .collect();
            if !beneath.is_empty() {
                out.push_str("(deny file-read* file-write*\n");
                for h in beneath {
                    out.push_str(&format!("    (subpath {})\n", quote(h)?));
                }
                out.push_str(")\n");
            }
        }
        out.push_str("(allow file-read* file-write*\n");
        for dir in writable {
            out.push_str(&format!("    (subpath {})\n", quote(dir)?));
        }
        out.push_str(")\n");
    }
    if !p.covered.is_empty() {
        out.push_str("(deny file-read* file-write*\n");
        for c in p.covered {
            let kind = if c.dir { "subpath" } else { "literal" };
            out.push_str(&format!("    ({kind} {})\n", quote(absolute(&c.path)?)?));
        }
        out.push_str(")\n");
    }
    if !p.read_only.is_empty() {
        out.push_str("(deny file-write*\n");
        for r in p.read_only {
            out.push_str(&format!("    (subpath {})\n", quote(absolute(r)?)?));
        }
        out.push_str(")\n");
    }
    if network_off {
        // Stricter than Landlock's TCP-only rule: UDP to any address is denied too.
        out.push_str("(deny network-outbound (remote ip \"*:*\"))\n");
    }
    // No host IPC: no Unix socket outside the job's own folders (the user's agents, Docker,
    // the window server's helpers), but the resolver's (DNS goes through it) when the network
    // is on, and those the project opted in to. Mach services stay reachable: see
    // docs/SANDBOX.md.
    out.push_str("(deny network-outbound (remote unix-socket))\n(allow network-outbound\n");
    for dir in writable {
        out.push_str(&format!("    (remote unix-socket (subpath {}))\n", quote(dir)?));
    }
    for socket in p.sockets {
        out.push_str(&format!(
            "    (remote unix-socket (path-literal {}))\n",
            quote(absolute(socket)?)?
        ));
    }
    if !network_off {
        out.push_str(
            "    (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\"))\n",
        );
    }
    out.push_str(")\n");
    Ok(out)
}

fn absolute(dir: &Path) -> Result<&Path, ExecError> {
    if dir.is_absolute() {
        Ok(dir)
    } else {
        Err(ExecError::Unconfinable(
            "a folder of the Seatbelt profile is not an absolute path".into(),
        ))
    }
}

/// A path as an SBPL string literal: `\` and `"` escaped. Paths with control characters or
/// that are not UTF-8 are refused rather than escaped: a newline or a lone byte in a profile
/// is not something to get subtly wrong in code that cannot be run here.
fn quote(path: &Path) -> Result<String, ExecError> {
    let text = path.to_str().filter(|t| !t.chars().any(char::is_control)).ok_or_else(|| {
        ExecError::Unconfinable(
            "a folder name contains characters a Seatbelt profile cannot express".into(),
        )
    })?;
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if matches!(c, '\\' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// The program and arguments that run `program args` under `profile`. `program` must be
/// absolute: `sandbox-exec` stops parsing options at the first operand (BSD `getopt`), so an
/// absolute program path also guarantees that nothing of the job's argv is read as an option.
pub fn command_line(
    profile: &str,
    program: &Path,
    args: &[OsString],
) -> Result<(PathBuf, Vec<OsString>), ExecError> {
    if !program.is_absolute() {
        return Err(ExecError::Invalid("the program must be resolved to an absolute path".into()));
    }
    let mut argv: Vec<OsString> = vec!["-p".into(), profile.into(), program.into()];
    argv.extend(args.iter().cloned());
    Ok((PathBuf::from(SANDBOX_EXEC), argv))
}

/// Whether Seatbelt can be used here: `sandbox-exec` exists (macOS only; false elsewhere).
pub fn available() -> bool {
    cfg!(target_os = "macos") && Path::new(SANDBOX_EXEC).is_file()
}

// macOS paths are Unix paths: on Windows none of them is absolute, and the profile refuses it.
#[cfg(all(test, unix))]
#[path = "seatbelt_tests.rs"]
mod tests;
