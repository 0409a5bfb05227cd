//! Which folders may become a project root. Authorizing a folder hands an assistant everything
//! inside it, so the check refuses folders that hold far more than one project (the filesystem
//! root, the home folder, system folders), Sluice's own state, and overlaps with other projects.

use std::path::{Path, PathBuf};

use sluice_core::{ErrorCode, Failure};

/// Folders that are never a project and never contain one.
#[cfg(unix)]
const SYSTEM_TREES: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/run",
    "/sbin",
    "/sys",
    "/usr",
    "/var/lib",
    "/var/log",
    "/var/run",
    "/var/cache",
    "/var/spool",
    "/snap",
    "/System",
    "/Library",
    "/Applications",
    "/private/etc",
    "/private/var/db",
    "/private/var/root",
    "/cores",
];

/// Folders that may contain projects but are far too broad to be one.
#[cfg(unix)]
const BROAD_FOLDERS: &[&str] =
    &["/home", "/Users", "/tmp", "/var", "/opt", "/srv", "/mnt", "/media", "/root", "/private/tmp"];

#[cfg(windows)]
const SYSTEM_TREES: &[&str] = &[
    r"C:\Windows",
    r"C:\Program Files",
    r"C:\Program Files (x86)",
    r"C:\ProgramData",
    r"C:\$Recycle.Bin",
    r"C:\System Volume Information",
];

#[cfg(windows)]
const BROAD_FOLDERS: &[&str] = &[r"C:\Users", r"C:\Users\Public"];

/// What the check needs to know besides the candidate.
pub struct RootContext<'a> {
    pub home: Option<PathBuf>,
    pub data_dir: &'a Path,
    /// Roots of the projects already authorized, with their display names.
    pub existing: Vec<(String, PathBuf)>,
}

fn refuse(message: String) -> Failure {
    Failure::new(ErrorCode::Forbidden, message)
}

/// `p` canonicalized, or as given when it cannot be (missing, unreadable).
pub(crate) fn canonical_or_self(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Canonicalizes `candidate` and returns it if it may be authorized, or a refusal that says why.
pub fn check_root(candidate: &Path, ctx: &RootContext<'_>) -> Result<PathBuf, Failure> {
    let root = std::fs::canonicalize(candidate).map_err(|_| {
        Failure::new(ErrorCode::NotFound, format!("{} does not exist", candidate.display()))
    })?;
    if !root.is_dir() {
        return Err(Failure::new(
            ErrorCode::WrongKind,
            format!("{} is not a folder", root.display()),
        ));
    }
    if root.parent().is_none() {
        return Err(refuse(format!(
            "{} is the root of a filesystem; authorize a project folder inside it",
            root.display()
        )));
    }
    for tree in SYSTEM_TREES {
        let tree = canonical_or_self(Path::new(tree));
        if root.starts_with(&tree) {
            return Err(refuse(format!(
                "{} is a system folder (under {}); Sluice does not authorize those",
                root.display(),
                tree.display()
            )));
        }
    }
    for broad in BROAD_FOLDERS {
        if root == canonical_or_self(Path::new(broad)) {
            return Err(refuse(format!(
                "{} holds far more than one project; authorize a project folder inside it",
                root.display()
            )));
        }
    }
    if let Some(home) = ctx.home.as_deref().map(canonical_or_self) {
        if root == home {
            return Err(refuse(format!(
                "{} is your home folder; authorize a project folder inside it",
                root.display()
            )));
        }
        if home.starts_with(&root) {
            return Err(refuse(format!("{} contains your home folder", root.display())));
        }
    }
    let data = canonical_or_self(ctx.data_dir);
    if root.starts_with(&data) || data.starts_with(&root) {
        return Err(refuse(format!(
            "{} overlaps Sluice's own data folder ({}), which assistants may never reach",
            root.display(),
            data.display()
        )));
    }
    for (name, other) in &ctx.existing {
        if &root == other {
            return Err(Failure::new(
                ErrorCode::Conflict,
                format!("{} is already authorized as project {name:?}", root.display()),
            ));
        }
        if root.starts_with(other) || other.starts_with(&root) {
            return Err(Failure::new(
                ErrorCode::Conflict,
                format!(
                    "{} overlaps project {name:?} ({}); projects may not be nested",
                    root.display(),
                    other.display()
                ),
            ));
        }
    }
    Ok(root)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn refuses_dangerous_roots_with_reasons() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let data = home.join(".local/share/sluice");
        let proj = home.join("code/app");
        let evil = home.join("code/app_evil");
        for d in [&data, &proj, &evil] {
            std::fs::create_dir_all(d).unwrap();
        }
        let ctx = RootContext {
            home: Some(home.clone()),
            data_dir: &data,
            existing: vec![("app".into(), std::fs::canonicalize(&proj).unwrap())],
        };
        let check = |p: &Path| check_root(p, &ctx).map_err(|f| (f.code, f.message));
        assert!(check(Path::new("/")).unwrap_err().1.contains("root of a filesystem"));
        assert!(check(Path::new("/etc")).unwrap_err().1.contains("system folder"));
        assert!(check(Path::new("/usr/share")).unwrap_err().1.contains("system folder"));
        assert!(check(Path::new("/tmp")).unwrap_err().1.contains("far more than one project"));
        assert!(check(&home).unwrap_err().1.contains("home folder"));
        assert!(check(&home.join(".local")).unwrap_err().1.contains("data folder"));
        assert!(check(&data).unwrap_err().1.contains("data folder"));
        assert_eq!(check(&proj).unwrap_err().0, ErrorCode::Conflict);
        assert!(check(&proj.join("sub")).is_err());
        assert!(check(&home.join("code")).unwrap_err().1.contains("nested"));
        // A sibling whose name starts with the project's name is not inside it.
        assert_eq!(check(&evil).unwrap(), std::fs::canonicalize(&evil).unwrap());
        assert_eq!(check(&home.join("missing")).unwrap_err().0, ErrorCode::NotFound);
    }
}
