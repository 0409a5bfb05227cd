//! Windows implementation of [`Root`] and [`DirHandle`].
//!
//! Windows has no `openat` with no-follow semantics in `std`, so this walks the path one
//! component at a time below the canonical root, treating every name-surrogate reparse point
//! (symlinks and junctions) as a link that it resolves itself. Relative targets continue the
//! walk; absolute targets (junctions always have one) are accepted only if they canonicalize to
//! a path that is component-wise below the root. Files are opened with
//! `FILE_FLAG_OPEN_REPARSE_POINT` and refused if the handle turns out to be a reparse point, so
//! a link swapped in after the walk is not followed. Short 8.3 names (`GIT~1`) are replaced by
//! their long names before the shield sees them.
//!
//! This is weaker than the Linux `openat2` path against a local process racing directory swaps
//! (a directory above the final component can still be swapped between the walk and the open).

use std::collections::VecDeque;
use std::fmt;
use std::fs::{self, File, Metadata, OpenOptions};
use std::hash::{Hash, Hasher};
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use super::{DirEntry, EntryKind, EntryMeta, FileId, MAX_LINK_HOPS};
use crate::{GuardError, RelPath};

const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x0000_0400;
const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
const FILE_READ_ATTRIBUTES: u32 = 0x0080;
const FILE_WRITE_ATTRIBUTES: u32 = 0x0100;

/// An authorized project folder, identified by its canonical path.
pub struct Root {
    canonical: PathBuf,
}

impl fmt::Debug for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Root { .. }")
    }
}

impl Root {
    pub fn open(path: &Path) -> Result<Root, GuardError> {
        let canonical = fs::canonicalize(path)
            .map_err(|e| GuardError::RootUnavailable { reason: e.kind().to_string() })?;
        let meta = fs::metadata(&canonical)
            .map_err(|e| GuardError::RootUnavailable { reason: e.kind().to_string() })?;
        if !meta.is_dir() {
            return Err(GuardError::RootUnavailable { reason: "it is not a folder".to_owned() });
        }
        Ok(Root { canonical })
    }

    /// The canonical physical path of the root, for in-process consumers that need one (the
    /// git library, the folder watcher). Never put it in a message, log or tool output.
    pub fn path(&self) -> &Path {
        &self.canonical
    }

    /// No `openat2` here; kept so tests compile on every platform.
    #[doc(hidden)]
    pub fn set_openat2(&self, _enabled: bool) {}

    pub fn open_file(&self, rel: &RelPath) -> Result<(File, Metadata), GuardError> {
        self.open_file_resolved(rel).map(|(file, meta, _)| (file, meta))
    }

    pub fn open_file_resolved(
        &self,
        rel: &RelPath,
    ) -> Result<(File, Metadata, RelPath), GuardError> {
        let (path, resolved) = self.walk(rel, true)?;
        let (file, meta) = open_no_reparse(&path, rel)?;
        Ok((file, meta, resolved))
    }

    /// See the Unix implementation: the directory holding `rel` and the final name.
    pub fn open_parent(&self, rel: &RelPath) -> Result<(DirHandle, String), GuardError> {
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Err(GuardError::invalid("the project root itself cannot be changed"));
        };
        let dir = self.open_dir(&parent).map_err(|e| match e {
            GuardError::WrongKind { .. } => GuardError::NotFound { path: rel.to_string() },
            e => e.for_path(rel),
        })?;
        Ok((dir, name.to_owned()))
    }

    pub fn open_dir(&self, rel: &RelPath) -> Result<DirHandle, GuardError> {
        let (path, resolved) = self.walk(rel, true)?;
        let meta = fs::symlink_metadata(&path).map_err(|e| map_io(e, rel))?;
        if is_reparse(&meta) {
            return Err(GuardError::OutsideProject { path: rel.to_string() });
        }
        if !meta.is_dir() {
            return Err(GuardError::WrongKind {
                path: rel.to_string(),
                expected: "a directory",
                found: kind_of(&meta).describe(),
            });
        }
        Ok(DirHandle { path, rel: resolved })
    }

    pub fn metadata(&self, rel: &RelPath) -> Result<EntryMeta, GuardError> {
        self.lstat_resolved(rel).map(|(meta, _)| meta)
    }

    pub fn lstat_resolved(&self, rel: &RelPath) -> Result<(EntryMeta, RelPath), GuardError> {
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            let meta = fs::symlink_metadata(&self.canonical).map_err(|e| map_io(e, rel))?;
            return Ok((entry_meta(&meta, &self.canonical), RelPath::root()));
        };
        let (ppath, presolved) = self.walk(&parent, true).map_err(|e| e.for_path(rel))?;
        let path = ppath.join(name);
        let meta = fs::symlink_metadata(&path).map_err(|e| map_io(e, rel))?;
        Ok((entry_meta(&meta, &path), presolved.join(&long_name(&path, name))?))
    }

    pub fn resolve(&self, rel: &RelPath) -> Result<RelPath, GuardError> {
        self.walk(rel, true).map(|(_, resolved)| resolved)
    }

    fn physical(&self, names: &[String]) -> PathBuf {
        let mut path = self.canonical.clone();
        for name in names {
            path.push(name);
        }
        path
    }

    /// Resolves `rel` below the root, following links that stay inside it.
    fn walk(&self, rel: &RelPath, follow_last: bool) -> Result<(PathBuf, RelPath), GuardError> {
        let outside = || GuardError::OutsideProject { path: rel.to_string() };
        let mut pending: VecDeque<String> = rel.components().map(str::to_owned).collect();
        let mut names: Vec<String> = Vec::new();
        let mut hops = 0usize;
        while let Some(comp) = pending.pop_front() {
            match comp.as_str() {
                "" | "." => continue,
                ".." => {
                    if names.pop().is_none() {
                        return Err(outside());
                    }
                    continue;
                }
                _ => {}
            }
            let candidate = self.physical(&names).join(&comp);
            let meta = fs::symlink_metadata(&candidate).map_err(|e| map_io(e, rel))?;
            let is_last = pending.is_empty();
            if is_reparse(&meta) && (!is_last || follow_last) {
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(GuardError::LinkLoop { path: rel.to_string() });
                }
                let target = fs::read_link(&candidate).map_err(|_| outside())?;
                let mut parts = Vec::new();
                if target.has_root() {
                    // Junctions always store absolute targets: accept them only when they land
                    // component-wise inside the root.
                    let canon = fs::canonicalize(&target).map_err(|_| outside())?;
                    let rest = canon.strip_prefix(&self.canonical).map_err(|_| outside())?;
                    names.clear();
                    for c in rest.components() {
                        match c {
                            Component::Normal(s) => parts.push(
                                s.to_str()
                                    .ok_or_else(|| GuardError::invalid("non-Unicode link target"))?
                                    .to_owned(),
                            ),
                            _ => return Err(outside()),
                        }
                    }
                } else {
                    for c in target.components() {
                        match c {
                            Component::Normal(s) => parts.push(
                                s.to_str()
                                    .ok_or_else(|| GuardError::invalid("non-Unicode link target"))?
                                    .to_owned(),
                            ),
                            Component::ParentDir => parts.push("..".to_owned()),
                            Component::CurDir => {}
                            Component::Prefix(_) | Component::RootDir => return Err(outside()),
                        }
                    }
                }
                for part in parts.into_iter().rev() {
                    pending.push_front(part);
                }
                continue;
            }
            if !is_last && !meta.is_dir() {
                return Err(GuardError::NotFound { path: rel.to_string() });
            }
            names.push(long_name(&candidate, &comp));
        }
        let resolved = RelPath::parse(&names.join("/"))?;
        Ok((self.physical(&names), resolved))
    }
}

/// A directory reached through a validated walk, for listing.
pub struct DirHandle {
    path: PathBuf,
    rel: RelPath,
}

impl fmt::Debug for DirHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirHandle").field("rel", &self.rel).finish_non_exhaustive()
    }
}

impl DirHandle {
    pub fn rel_path(&self) -> &RelPath {
        &self.rel
    }

    /// `std` on Windows exposes no stable file index, so identity is the canonical path; the
    /// walkers never follow links, so no loop can form anyway.
    pub fn id(&self) -> Result<FileId, GuardError> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.path.hash(&mut h);
        Ok(FileId { dev: 0, ino: h.finish() })
    }

    pub fn entries(&self) -> Result<Vec<DirEntry>, GuardError> {
        let mut out = Vec::new();
        for entry in fs::read_dir(&self.path).map_err(|e| map_io(e, &self.rel))? {
            let entry = entry.map_err(|e| map_io(e, &self.rel))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            let kind = entry.file_type().ok().map(|t| {
                if t.is_symlink() {
                    EntryKind::Symlink
                } else if t.is_dir() {
                    EntryKind::Dir
                } else if t.is_file() {
                    EntryKind::File
                } else {
                    EntryKind::Other
                }
            });
            out.push(DirEntry { name, kind });
        }
        Ok(out)
    }

    pub fn open_subdir(&self, name: &str) -> Result<DirHandle, GuardError> {
        let rel = self.rel.join(name)?;
        let path = self.path.join(name);
        let meta = fs::symlink_metadata(&path).map_err(|e| map_io(e, &rel))?;
        if is_reparse(&meta) || !meta.is_dir() {
            return Err(GuardError::WrongKind {
                path: rel.to_string(),
                expected: "a directory",
                found: kind_of(&meta).describe(),
            });
        }
        Ok(DirHandle { path, rel })
    }

    pub fn open_file(&self, name: &str) -> Result<(File, Metadata), GuardError> {
        let rel = self.rel.join(name)?;
        open_no_reparse(&self.path.join(name), &rel)
    }

    pub fn entry_meta(&self, name: &str) -> Result<EntryMeta, GuardError> {
        let rel = self.rel.join(name)?;
        let path = self.path.join(name);
        let meta = fs::symlink_metadata(&path).map_err(|e| map_io(e, &rel))?;
        Ok(entry_meta(&meta, &path))
    }
}

/// Opens without following a reparse point and insists on a regular file.
/// Mutations relative to a walked directory. Windows has no handle-relative rename or unlink
/// in `std`, so these use the directory's validated physical path plus one plain name, and
/// refuse a reparse point at the name; a directory above it swapped after the walk is the
/// residual race documented at the top of this file.
impl DirHandle {
    pub fn create_temp(&self, stem: &str, _mode: u32) -> Result<(File, String), GuardError> {
        for _ in 0..16 {
            let mut short: String = stem.chars().take(40).collect();
            short.retain(|c| c != '/' && c != '\\');
            let random = sluice_core::id::base32(&sluice_core::random_bytes::<12>());
            let name = format!(".{short}.sluice-tmp-{random}");
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
                .open(self.path.join(&name))
            {
                Ok(file) => return Ok((file, name)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(map_io(e, &self.rel)),
            }
        }
        Err(GuardError::Io { path: self.rel.to_string(), kind: std::io::ErrorKind::AlreadyExists })
    }

    pub fn rename(
        &self,
        from: &str,
        to_dir: &DirHandle,
        to: &str,
        replace: bool,
    ) -> Result<(), GuardError> {
        let rel = to_dir.rel.join(to)?;
        let target = to_dir.path.join(to);
        match fs::symlink_metadata(&target) {
            Ok(meta) if !replace || (is_reparse(&meta) && meta.is_dir()) => {
                return Err(GuardError::Io {
                    path: rel.to_string(),
                    kind: std::io::ErrorKind::AlreadyExists,
                });
            }
            _ => {}
        }
        fs::rename(self.path.join(from), target).map_err(|e| map_io(e, &rel))
    }

    pub fn unlink(&self, name: &str) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        let path = self.path.join(name);
        let meta = fs::symlink_metadata(&path).map_err(|e| map_io(e, &rel))?;
        // A directory junction or symlink is removed with `remove_dir`, which deletes the
        // link itself and never its target.
        if meta.is_dir() {
            fs::remove_dir(&path).map_err(|e| map_io(e, &rel))
        } else {
            fs::remove_file(&path).map_err(|e| map_io(e, &rel))
        }
    }

    pub fn remove_dir(&self, name: &str) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        fs::remove_dir(self.path.join(name)).map_err(|e| map_io(e, &rel))
    }

    pub fn mkdir(&self, name: &str, _mode: u32) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        fs::create_dir(self.path.join(name)).map_err(|e| map_io(e, &rel))
    }

    pub fn read_link(&self, name: &str) -> Result<String, GuardError> {
        let rel = self.rel.join(name)?;
        let target = fs::read_link(self.path.join(name)).map_err(|e| map_io(e, &rel))?;
        target
            .into_os_string()
            .into_string()
            .map_err(|_| GuardError::invalid("a link has a non-UTF-8 target"))
    }

    /// Creating links needs a privilege on Windows; restoring a deleted link is unsupported.
    pub fn symlink(&self, _target: &str, name: &str) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        Err(GuardError::Io { path: rel.to_string(), kind: std::io::ErrorKind::Unsupported })
    }

    /// Sets the read-only attribute from the write bits of `mode`, through a handle opened on
    /// the entry itself (a reparse point is never followed), if it is still `expect`.
    pub fn set_mode(&self, name: &str, expect: FileId, mode: u32) -> Result<(), GuardError> {
        let rel = self.rel.join(name)?;
        let meta = self.entry_meta(name)?;
        if meta.id != expect || !matches!(meta.kind, EntryKind::File | EntryKind::Dir) {
            return Err(GuardError::Io {
                path: rel.to_string(),
                kind: std::io::ErrorKind::AlreadyExists,
            });
        }
        // A folder opens only with backup semantics; attributes need no data access.
        let file = OpenOptions::new()
            .access_mode(FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
            .open(self.path.join(name))
            .map_err(|e| map_io(e, &rel))?;
        let mut perms = file.metadata().map_err(|e| map_io(e, &rel))?.permissions();
        perms.set_readonly(mode & 0o222 == 0);
        file.set_permissions(perms).map_err(|e| map_io(e, &rel))
    }

    /// Windows cannot flush a directory through `std`; NTFS journals its metadata.
    pub fn sync(&self) -> Result<(), GuardError> {
        Ok(())
    }

    pub fn free_space(&self) -> Option<u64> {
        None
    }
}

fn open_no_reparse(path: &Path, rel: &RelPath) -> Result<(File, Metadata), GuardError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
        .map_err(|e| map_io(e, rel))?;
    let meta = file.metadata().map_err(|e| map_io(e, rel))?;
    if meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(GuardError::OutsideProject { path: rel.to_string() });
    }
    if !meta.is_file() {
        return Err(GuardError::WrongKind {
            path: rel.to_string(),
            expected: "a regular file",
            found: kind_of(&meta).describe(),
        });
    }
    Ok((file, meta))
}

/// The long name for a component typed as an 8.3 short name (`GIT~1` → `.git`).
fn long_name(path: &Path, typed: &str) -> String {
    if !typed.contains('~') {
        return typed.to_owned();
    }
    fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .unwrap_or_else(|| typed.to_owned())
}

fn is_reparse(meta: &Metadata) -> bool {
    meta.file_type().is_symlink() || meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

fn kind_of(meta: &Metadata) -> EntryKind {
    if is_reparse(meta) {
        EntryKind::Symlink
    } else if meta.is_dir() {
        EntryKind::Dir
    } else if meta.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

fn entry_meta(meta: &Metadata, path: &Path) -> EntryMeta {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut h);
    EntryMeta {
        kind: kind_of(meta),
        len: meta.len(),
        modified: meta.modified().ok(),
        readonly: meta.permissions().readonly(),
        id: FileId { dev: 0, ino: h.finish() },
        mode: if meta.permissions().readonly() { 0o444 } else { 0o666 },
        nlink: 1,
        changed: None,
    }
}

fn map_io(e: std::io::Error, rel: &RelPath) -> GuardError {
    let path = rel.to_string();
    match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
            GuardError::NotFound { path }
        }
        std::io::ErrorKind::PermissionDenied => GuardError::PermissionDenied { path },
        kind => GuardError::Io { path, kind },
    }
}
