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
    let c = |p: &std::ffi::OsStr| {
        CString::new(p.as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
    };
    let names: Vec<CString> = rel
        .components()
        .map(|part| match part {
            std::path::Component::Normal(n) => c(n),
            _ => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
        })
        .collect::<Result<_, _>>()?;
    let Some((last, parents)) = names.split_last() else { return Ok(()) };
    let dir = std::fs::File::open(dir)?;
    let mut fd = std::os::fd::OwnedFd::from(dir);
    for name in parents {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: *at calls on an owned descriptor and NUL-terminated names.
        unsafe {
            libc::mkdirat(fd.as_raw_fd(), name.as_ptr(), 0o700);
            let next = libc::openat(
                fd.as_raw_fd(),
                name.as_ptr(),
                libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_RDONLY,
            );
            if next < 0 {
                return Err(std::io::Error::last_os_error());
            }
            fd = std::os::fd::OwnedFd::from_raw_fd(next);
        }
    }
    let target = c(target.as_os_str())?;
    use std::os::fd::AsRawFd;
    // SAFETY: *at calls on an owned descriptor and NUL-terminated strings.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstatat(fd.as_raw_fd(), last.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) == 0 {
            if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
            }
            libc::unlinkat(fd.as_raw_fd(), last.as_ptr(), 0);
        }
        if libc::symlinkat(target.as_ptr(), fd.as_raw_fd(), last.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
