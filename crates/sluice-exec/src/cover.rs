//! The sensitive-file shield inside a job's sandbox: which entries of a project its commands must
//! not see ([`covered`]), and which parts of its `.git` they may read but not change
//! ([`git_programs`]).
//!
//! The file, search and git tools ask the shield about every path they touch; a command opens
//! files by itself, so the shield is applied to its view instead: each entry the shield matches
//! when the job starts is covered (a file by an empty read-only file, a folder by an empty
//! read-only folder, so whatever appears in it while the job runs stays out of view too). What a
//! job could do about a cover is nothing: a cover is a mount point it cannot unmount, rename,
//! delete or link to (`EBUSY`, `EXDEV`), and the file beneath is reachable by no other path of
//! its view. The project's other names for a covered file (hard links made before) are covered
//! alike.
//!
//! The walk runs in the engine right before the spawn, over the whole project (dependency and
//! build folders included: a skip list would be a place for a job to move a folder holding a
//! secret so the next job skips it). Every covered entry carries the device and inode it had
//! when walked, and the job's child refuses to cover anything else at that path, so a folder
//! renamed by another job between the walk and the mount makes the spawn fail, never succeed
//! with the secret elsewhere. A folder the walk cannot read is a refusal unless the job could
//! not enter it either. Written by hand: the walk must not follow links, must not skip what it
//! cannot read, and must hand the child inodes, which no walker crate offers together.
//!
//! `.git` is not walked: builds read the commit id from it. Its programs (`config`, which names
//! programs git runs, and `hooks`) are shown read-only, as the auto-run list treats them.

use std::path::{Path, PathBuf};

use sluice_guard::Shield;

use crate::error::ExecError;

/// The most entries one job's view covers: every cover is a mount of the job's own.
pub const MAX_COVERED: usize = 4096;

/// The most folders the walk reads before it gives up (refusing the job).
const MAX_FOLDERS: usize = 200_000;

/// One entry a job must not see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Covered {
    /// Absolute, beneath the project root (canonical).
    pub path: PathBuf,
    pub dir: bool,
    /// Device and inode when walked: nothing else is covered at this path.
    pub id: (u64, u64),
}

/// What of a project its jobs must not see: the project's shield, less the files or folders
/// the user granted to the project's commands (absolute paths; those beneath the project are
/// shown read-only, with everything beneath a granted folder).
#[derive(Debug, Clone, Copy)]
pub struct ShieldCover<'a> {
    pub shield: &'a Shield,
    pub granted: &'a [PathBuf],
}

impl ShieldCover<'_> {
    /// Whether `path` (absolute) is granted, or lies beneath a granted folder.
    pub fn is_granted(&self, path: &Path) -> bool {
        self.granted.iter().any(|g| path.starts_with(g))
    }
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino(), meta.nlink())
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> (u64, u64, u64) {
    (0, 0, 1)
}

/// Whether a folder the walk could not read is one the job could not look into either: not
/// searchable by this user, and not theirs to `chmod`.
#[cfg(unix)]
fn closed_to_jobs(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let ours = std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.uid() == rustix::process::geteuid().as_raw());
    !ours && rustix::fs::access(dir, rustix::fs::Access::EXEC_OK).is_err()
}

#[cfg(not(unix))]
fn closed_to_jobs(_: &Path) -> bool {
    false
}

/// The entries of the project at `root` (canonical) that `cover`'s shield hides and its grants
/// do not expose, as they are now; links are never followed (a link to a covered file shows the
/// cover; one out of the project shows nothing). A refusal says why the job cannot start.
pub fn covered(root: &Path, cover: ShieldCover<'_>) -> Result<Vec<Covered>, ExecError> {
    let mut out = Vec::new();
    // Files with other names (hard links), inside or outside covered folders.
    let mut linked: Vec<(u64, u64)> = Vec::new();
    let mut folders = 0usize;
    let mut stack = vec![(root.to_path_buf(), String::new(), Walk::Matching)];
    while let Some((dir, rel, walk)) = stack.pop() {
        folders += 1;
        if folders > MAX_FOLDERS {
            return Err(too_large(format!("more than {MAX_FOLDERS} folders")));
        }
        let Some(entries) = read_folder(root, &dir)? else { continue };
        for entry in entries {
            let entry = entry.map_err(|e| unreadable(root, &dir, e))?;
            let name = entry.file_name();
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_symlink() || cover.is_granted(&path) {
                continue;
            }
            let rel = if rel.is_empty() {
                name.to_string_lossy().into_owned()
            } else {
                format!("{rel}/{}", name.to_string_lossy())
            };
            if walk == Walk::Matching && name == ".git" {
                continue;
            }
            let shielded = match walk {
                Walk::Matching => cover.shield.matches_text(&rel),
                Walk::Shielded => true,
                Walk::Covered => false,
            };
            let (dev, ino, links) = if shielded || walk == Walk::Covered {
                match std::fs::symlink_metadata(&path) {
                    Ok(meta) => identity(&meta),
                    Err(_) => continue,
                }
            } else {
                (0, 0, 1)
            };
            if kind.is_file() && links > 1 {
                linked.push((dev, ino));
            }
            let next = if !shielded {
                if walk == Walk::Covered { Walk::Covered } else { Walk::Matching }
            } else if kind.is_dir() && cover.granted.iter().any(|g| g.starts_with(&path)) {
                // A grant beneath a shielded folder: cover its other entries one by one.
                Walk::Shielded
            } else {
                out.push(Covered { path: path.clone(), dir: kind.is_dir(), id: (dev, ino) });
                Walk::Covered
            };
            if kind.is_dir() {
                stack.push((path, rel, next));
            }
        }
        if out.len() > MAX_COVERED {
            return Err(too_large(format!("more than {MAX_COVERED} shielded files or folders")));
        }
    }
    if !linked.is_empty() {
        other_names(root, cover, &linked, &mut out)?;
    }
    if out.len() > MAX_COVERED {
        return Err(too_large(format!("more than {MAX_COVERED} shielded files or folders")));
    }
    Ok(out)
}

/// The entries of `dir`, or `None` for a folder gone meanwhile or closed to jobs as well.
fn read_folder(root: &Path, dir: &Path) -> Result<Option<std::fs::ReadDir>, ExecError> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(Some(entries)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) if closed_to_jobs(dir) => Ok(None),
        Err(e) => Err(unreadable(root, dir, e)),
    }
}

/// How the walk treats a folder's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Each is covered when the shield matches it.
    Matching,
    /// Each is covered (a shielded folder with a grant beneath it).
    Shielded,
    /// Already covered: looked at only for other names of its files.
    Covered,
}

/// Covers every other name of the files in `linked` that the first walk did not cover.
fn other_names(
    root: &Path,
    cover: ShieldCover<'_>,
    linked: &[(u64, u64)],
    out: &mut Vec<Covered>,
) -> Result<(), ExecError> {
    let done: std::collections::HashSet<PathBuf> = out.iter().map(|c| c.path.clone()).collect();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Some(entries) = read_folder(root, &dir)? else { continue };
        for entry in entries {
            let entry = entry.map_err(|e| unreadable(root, &dir, e))?;
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if done.contains(&path) || cover.is_granted(&path) {
                continue;
            }
            if kind.is_dir() && entry.file_name() != ".git" {
                stack.push(path);
            } else if kind.is_file()
                && let Ok(meta) = std::fs::symlink_metadata(&path)
            {
                let (dev, ino, _) = identity(&meta);
                if linked.contains(&(dev, ino)) {
                    out.push(Covered { path, dir: false, id: (dev, ino) });
                }
            }
        }
    }
    Ok(())
}

/// What a job of the project at `root` sees read-only over its writable project: the programs
/// of its `.git` ([`git_programs`]) and the shielded files or folders granted to its commands (a
/// granted folder the shield does not hide only leaves the walk, and stays writable).
pub fn read_only(root: &Path, cover: ShieldCover<'_>) -> Vec<PathBuf> {
    let mut out = git_programs(root);
    for g in cover.granted {
        let Ok(rel) = g.strip_prefix(root) else { continue };
        let rel = rel.to_string_lossy();
        let shielded = match sluice_guard::RelPath::parse(&rel) {
            Ok(r) => !r.is_root() && cover.shield.is_shielded(&r),
            Err(_) => cover.shield.matches_text(&rel),
        };
        if shielded {
            out.push(g.clone());
        }
    }
    out
}

/// The parts of the project's `.git` folder that name programs git runs: its configuration and
/// its hooks (the repository's own and its submodules'), which a job sees read-only. A missing
/// `hooks` folder is created empty first, as `git init` does, so a job cannot add one.
pub fn git_programs(root: &Path) -> Vec<PathBuf> {
    let git = root.join(".git");
    if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut dirs = vec![git.clone()];
    let modules = git.join("modules");
    let mut walked = 0;
    while let Some(dir) = dirs.pop() {
        for name in ["config", "config.worktree"] {
            let p = dir.join(name);
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
                out.push(p);
            }
        }
        let hooks = dir.join("hooks");
        if std::fs::symlink_metadata(&hooks).is_err() {
            let _ = std::fs::create_dir(&hooks);
        }
        if std::fs::symlink_metadata(&hooks).is_ok_and(|m| m.is_dir()) {
            out.push(hooks);
        }
        // Submodules keep their git folders beneath `.git/modules`, nested as they are.
        let below = if dir == git { modules.clone() } else { dir.join("modules") };
        for entry in std::fs::read_dir(&below).into_iter().flatten().flatten() {
            walked += 1;
            if walked < 1000 && entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(entry.path());
            }
        }
    }
    out
}

fn too_large(what: String) -> ExecError {
    ExecError::Unconfinable(format!(
        "the project holds {what}, too many to cover in a command's sandbox, so nothing ran; \
         the user can narrow the project's sensitive-file shield or grant a folder to its \
         commands in Sluice"
    ))
}

/// A folder the walk could not read: the job could, so covering what the shield hides in it
/// cannot be promised. The message names the folder relative to the project only.
fn unreadable(root: &Path, dir: &Path, e: std::io::Error) -> ExecError {
    let rel = dir.strip_prefix(root).unwrap_or(Path::new("?"));
    let rel = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
    ExecError::Unconfinable(format!(
        "Sluice could not look into the project's folder {} ({}) to cover the files its shield \
         hides, so nothing ran",
        sluice_core::text::visible(&rel.to_string_lossy()),
        e.kind()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered_in(root: &Path, granted: &[PathBuf]) -> Result<Vec<Covered>, ExecError> {
        covered(root, ShieldCover { shield: &Shield::default(), granted })
    }

    fn rels(root: &Path, v: &[Covered]) -> Vec<String> {
        let mut out: Vec<String> = v
            .iter()
            // Written with `/` on every system, as the shield's patterns are.
            .map(|c| c.path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_walk_covers_what_the_shield_hides_at_any_depth_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for dir in ["src/config", ".ssh", "node_modules/pkg", ".git/hooks", "docs"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            ".env",
            "src/config/.ENV.local",
            "src/main.rs",
            ".ssh/id_ed25519",
            "node_modules/pkg/server.key",
            ".git/config",
            "docs/readme.md",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join(".env"), root.join("notes.env")).unwrap();
        let found = covered_in(&root, &[]).unwrap();
        assert_eq!(
            rels(&root, &found),
            [".env", ".ssh", "node_modules/pkg/server.key", "src/config/.ENV.local"]
        );
        assert!(found.iter().find(|c| c.path.ends_with(".ssh")).unwrap().dir);
        // A granted file, or everything beneath a granted folder, is left in view.
        let found = covered_in(&root, &[root.join(".env"), root.join("node_modules")]).unwrap();
        assert_eq!(rels(&root, &found), [".ssh", "src/config/.ENV.local"]);
        // A grant beneath a shielded folder leaves the folder's other entries covered.
        std::fs::create_dir_all(root.join(".ssh/keys")).unwrap();
        std::fs::write(root.join(".ssh/known_hosts"), "x").unwrap();
        let found = covered_in(&root, &[root.join(".ssh/known_hosts")]).unwrap();
        assert_eq!(
            rels(&root, &found),
            [
                ".env",
                ".ssh/id_ed25519",
                ".ssh/keys",
                "node_modules/pkg/server.key",
                "src/config/.ENV.local"
            ]
        );
    }

    #[test]
    fn a_granted_shielded_file_is_read_only_and_a_granted_plain_folder_stays_writable() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".venv/certifi")).unwrap();
        std::fs::write(root.join(".venv/certifi/cacert.pem"), "x").unwrap();
        std::fs::write(root.join(".env"), "x").unwrap();
        let granted = [root.join(".env"), root.join(".venv")];
        let shield = Shield::default();
        let cover = ShieldCover { shield: &shield, granted: &granted };
        assert_eq!(read_only(&root, cover), [root.join(".env")]);
        assert!(covered(&root, cover).unwrap().is_empty(), "nothing granted is covered");
    }

    #[cfg(unix)]
    #[test]
    fn other_names_of_a_covered_file_are_covered_too() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".aws")).unwrap();
        std::fs::create_dir_all(root.join("backup")).unwrap();
        std::fs::write(root.join(".env"), "SECRET=1").unwrap();
        std::fs::write(root.join(".aws/credentials"), "k").unwrap();
        std::fs::hard_link(root.join(".env"), root.join("backup/env.txt")).unwrap();
        std::fs::hard_link(root.join(".aws/credentials"), root.join("backup/aws.txt")).unwrap();
        let found = covered_in(&root, &[]).unwrap();
        assert_eq!(rels(&root, &found), [".aws", ".env", "backup/aws.txt", "backup/env.txt"]);
    }

    #[test]
    fn too_many_shielded_files_refuse_the_job() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for i in 0..=MAX_COVERED {
            std::fs::write(root.join(format!("{i}.pem")), "").unwrap();
        }
        let err = covered_in(&root, &[]).unwrap_err();
        assert!(matches!(err, ExecError::Unconfinable(_)), "{err}");
        assert!(err.to_string().contains("too many to cover"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_the_walk_cannot_read_refuses_the_job_when_the_job_could_open_it() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("locked")).unwrap();
        std::fs::write(root.join("locked/.env"), "SECRET=1").unwrap();
        std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o311))
            .unwrap();
        let result = covered_in(&root, &[]);
        std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        // Root reads it anyway and covers the file; anyone else is refused (the folder is
        // theirs, so a job could open it again), never handed a view without the cover.
        match result {
            Ok(found) => assert_eq!(rels(&root, &found), ["locked/.env"]),
            Err(e) => assert!(e.to_string().contains("could not look into"), "{e}"),
        }
    }

    #[cfg(unix)]
    #[test]
    fn git_programs_are_its_config_and_hooks_also_of_submodules() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/modules/lib")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::write(root.join(".git/modules/lib/config"), "").unwrap();
        let mut found = git_programs(&root);
        found.sort();
        let want =
            [".git/config", ".git/hooks", ".git/modules/lib/config", ".git/modules/lib/hooks"];
        assert_eq!(found, want.iter().map(|p| root.join(p)).collect::<Vec<_>>());
        assert!(root.join(".git/hooks").is_dir(), "a missing hooks folder is made empty");
        assert!(git_programs(tmp.path().join("none").as_path()).is_empty());
    }
}
