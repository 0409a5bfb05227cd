//! Stores granted to a project (`Exposure::granted`): checked for links before a job starts,
//! and linked from the job's private HOME where tools look for them.

#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;

#[cfg(unix)]
use super::Sandbox;
use crate::error::ExecError;

/// A granted store must be reached through no link at all: one that appeared since the grant
/// (planted by whoever can write along its path) could point anywhere, so the job does not
/// start. A store that is gone is simply absent from the job's view.
pub(super) fn check_grants(granted: &[PathBuf]) -> Result<(), ExecError> {
    for g in granted {
        if std::fs::symlink_metadata(g).is_err() {
            continue;
        }
        if std::fs::canonicalize(g).ok().as_deref() != Some(g.as_path()) {
            return Err(ExecError::Refused(
                "a store granted to this project is now reached through a symbolic link, which \
                 could point at another file; nothing ran. The user can review the project's \
                 grants in Sluice."
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Links each granted store beneath the user's home from the job's private HOME
/// (`$HOME/.npmrc -> /home/u/.npmrc`), where tools look for it; the store itself is visible
/// at its real path (bound there in namespaces). Best effort: the job's HOME is the job's, so
/// whatever it planted there is replaced, through `*at` calls that follow no link.
#[cfg(unix)]
pub(super) fn link_grants_in_home(sandbox: &Sandbox) {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute()) else {
        return;
    };
    let job_home = sandbox.state_dir.join("home");
    for g in &sandbox.exposure.granted {
        let Ok(rel) = g.strip_prefix(&home) else { continue };
        if rel.as_os_str().is_empty() || std::fs::symlink_metadata(g).is_err() {
            continue;
        }
        let _ = link_beneath(&job_home, rel, g);
    }
}

/// Creates `dir/rel` as a symlink to `target`, making the folders along `rel` (never following
/// a link) and replacing a file or link already there.
#[cfg(unix)]
fn link_beneath(dir: &Path, rel: &Path, target: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    use rustix::fs::{
        AtFlags, FileType, Mode, OFlags, mkdirat, openat, statat, symlinkat, unlinkat,
    };
    use rustix::io::Errno;

    let c = |p: &std::ffi::OsStr| CString::new(p.as_bytes()).map_err(|_| Errno::INVAL.into());
    let names: Vec<CString> = rel
        .components()
        .map(|part| match part {
            std::path::Component::Normal(n) => c(n),
            _ => Err(Errno::INVAL.into()),
        })
        .collect::<std::io::Result<_>>()?;
    let Some((last, parents)) = names.split_last() else { return Ok(()) };
    let mut fd = std::os::fd::OwnedFd::from(std::fs::File::open(dir)?);
    for name in parents {
        // Already there is fine: the open that follows refuses anything but a real folder.
        let _ = mkdirat(&fd, name.as_c_str(), Mode::RWXU);
        let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY;
        fd = openat(&fd, name.as_c_str(), flags, Mode::empty())?;
    }
    let target = c(target.as_os_str())?;
    if let Ok(st) = statat(&fd, last.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
        if FileType::from_raw_mode(st.st_mode).is_dir() {
            return Err(Errno::ISDIR.into());
        }
        // Best effort: if it stays, the symlink below fails and says so.
        let _ = unlinkat(&fd, last.as_c_str(), AtFlags::empty());
    }
    symlinkat(target.as_c_str(), &fd, last.as_c_str())?;
    Ok(())
}
