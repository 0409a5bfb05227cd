//! How a target is observed, and how one [`Step`] (`step.rs`, what every mutation is made of)
//! is executed and undone.
//!
//! A plan is a list of [`Step`]s, each carrying the exact state it expects to find ("before":
//! absent, or a file with its (dev, ino) and content hash, a folder with its (dev, ino), a link
//! with its target). Executing a step re-opens the target's folder through the guard, compares
//! the state again and only then renames, unlinks or creates, so a swap between approval and
//! execution aborts instead of acting on something else (AP-01).
//!
//! Undo is state-based and idempotent: it looks at what is there now and puts back the "before"
//! state only when it finds either the "before" or the planned "after" state; anything else is
//! someone else's newer change and is left alone and reported. That makes roll-back after a
//! crash safe without knowing how far the commit got.

use std::io::{Read, Write};

use sluice_guard::{DirHandle, EntryKind, FileId, GuardError, RelPath};

use super::step::{Ident, State, Step};
use super::store::{Blob, Record, Store};
use crate::{RunnerError, Workspace};

/// `blake3:<hex>` (or bare hex) from a client, normalized to lower-case hex.
pub(crate) fn parse_expected(input: &str) -> Result<String, RunnerError> {
    let hex = input.trim().strip_prefix("blake3:").unwrap_or(input.trim()).to_ascii_lowercase();
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RunnerError::invalid(
            "expected_hash must be `blake3:<64 hex digits>` as returned by read_file",
        ));
    }
    Ok(hex)
}

pub(crate) fn rel(path: &str) -> Result<RelPath, RunnerError> {
    Ok(RelPath::parse(path)?)
}

pub(crate) fn conflict(message: String) -> RunnerError {
    RunnerError::Conflict(message)
}

/// Reads the state of `name` in `dir` without following a link. With `keep`, the content of a
/// regular file is returned too (up to `max` bytes, else `TooLarge`); without, it is only
/// hashed (also bounded by `max`, the backup budget).
pub(crate) fn observe(
    dir: &DirHandle,
    name: &str,
    keep: bool,
    max: u64,
) -> Result<(State, Option<Vec<u8>>), RunnerError> {
    let path = dir.rel_path().join(name)?;
    let meta = match dir.entry_meta(name) {
        Ok(meta) => meta,
        Err(GuardError::NotFound { .. }) => return Ok((State::Absent, None)),
        Err(e) => return Err(e.into()),
    };
    let id = Ident::from(meta.id);
    match meta.kind {
        EntryKind::Dir => Ok((State::Dir { id, mode: meta.mode }, None)),
        EntryKind::Symlink => Ok((State::Link { id, target: dir.read_link(name)? }, None)),
        EntryKind::Other => Err(RunnerError::Guard(GuardError::WrongKind {
            path: path.to_string(),
            expected: "a regular file, folder or link",
            found: EntryKind::Other.describe(),
        })),
        EntryKind::File => {
            if meta.len > max {
                return Err(RunnerError::TooLarge(format!(
                    "`{path}` is {} bytes, over the {max}-byte limit for files Sluice changes \
                     (and backs up)",
                    meta.len
                )));
            }
            let (mut file, fmeta) = dir.open_file(name)?;
            let opened = file_id(&fmeta);
            if opened != Some(id) && opened.is_some() {
                return Err(conflict(format!("`{path}` changed while it was being read; retry")));
            }
            let mut hasher = blake3::Hasher::new();
            let mut kept = Vec::new();
            let mut buf = vec![0u8; 64 * 1024];
            let mut total = 0u64;
            loop {
                let n = file
                    .read(&mut buf)
                    .map_err(|e| RunnerError::Io { path: path.to_string(), kind: e.kind() })?;
                if n == 0 {
                    break;
                }
                total += n as u64;
                if total > max {
                    return Err(RunnerError::TooLarge(format!(
                        "`{path}` grew past the {max}-byte limit while it was being read"
                    )));
                }
                hasher.update(&buf[..n]);
                if keep {
                    kept.extend_from_slice(&buf[..n]);
                }
            }
            let hash = hasher.finalize().to_hex().to_string();
            let state = State::File { id, size: total, hash, mode: meta.mode };
            Ok((state, keep.then_some(kept)))
        }
    }
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> Option<Ident> {
    use std::os::unix::fs::MetadataExt;
    Some(Ident { dev: meta.dev(), ino: meta.ino() })
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> Option<Ident> {
    None
}

/// Everything a step needs at execution time that is not in the step itself.
pub(crate) struct Exec<'a> {
    pub ws: &'a Workspace,
    pub store: &'a Store,
    pub op: &'a str,
    pub max_file: u64,
}

impl Exec<'_> {
    /// Opens the folder holding `path` and checks it is still the planned one.
    pub fn reopen(
        &self,
        path: &str,
        parent: Option<Ident>,
    ) -> Result<(DirHandle, String), RunnerError> {
        let rel = rel(path)?;
        let changed = |why: String| {
            conflict(format!(
                "the folder holding `{rel}` changed since the change was planned ({why}); \
                 nothing was changed, plan the change again"
            ))
        };
        let (dir, name) = self.ws.root().open_parent(&rel).map_err(|e| changed(e.to_string()))?;
        let expected_parent = rel.parent().unwrap_or_else(RelPath::root);
        if dir.rel_path() != &expected_parent {
            return Err(changed("a folder on the path became a link".into()));
        }
        if let Some(want) = parent {
            let id = Ident::from(dir.id()?);
            if id != want {
                return Err(changed("a folder on the path was replaced".into()));
            }
        }
        Ok((dir, name))
    }

    /// Compares the current state with the planned one, strictly (identity and content).
    pub fn check(&self, dir: &DirHandle, name: &str, want: &State) -> Result<(), RunnerError> {
        let (now, _) = observe(dir, name, false, self.max_file.max(want.size().unwrap_or(0)))?;
        if &now == want {
            return Ok(());
        }
        let path = dir.rel_path().join(name)?;
        let what = match (want, &now) {
            (State::Absent, _) => "something now exists there".to_owned(),
            (_, State::Absent) => "it no longer exists".to_owned(),
            (State::File { .. }, State::File { .. }) => "its content changed".to_owned(),
            (_, State::Link { .. }) => "it was replaced by a symbolic link".to_owned(),
            _ => "it was replaced".to_owned(),
        };
        Err(conflict(format!(
            "`{path}` changed since the change was planned ({what}); nothing was changed — \
             read_file to get the current hash and plan the change again"
        )))
    }

    /// Copies the current content of `name` (expected to be `want`, a file) to a blob.
    pub fn backup(
        &self,
        record: &mut Record,
        step: usize,
        role: &str,
        dir: &DirHandle,
        name: &str,
        want: &State,
    ) -> Result<(), RunnerError> {
        let State::File { id, size, hash, mode } = want else { return Ok(()) };
        let path = dir.rel_path().join(name)?;
        let (mut file, fmeta) = dir.open_file(name)?;
        if file_id(&fmeta).is_some_and(|got| got != *id) {
            return Err(conflict(format!("`{path}` was replaced while it was being backed up")));
        }
        let blob = Store::blob_name(step, role);
        let (got_size, got_hash) =
            self.store.save_blob(self.op, &blob, &mut file, (*size).max(self.max_file))?;
        if got_hash.to_hex().as_str() != hash {
            return Err(conflict(format!(
                "`{path}` changed since the change was planned (its content changed); nothing \
                 was changed — read_file to get the current hash and plan the change again"
            )));
        }
        record.blobs.push(Blob {
            step,
            role: role.to_owned(),
            path: path.to_string(),
            size: got_size,
            hash: hash.clone(),
            mode: *mode,
        });
        Ok(())
    }

    /// Executes one step: backup first, then the change, each re-verified right before.
    pub fn run(
        &self,
        record: &mut Record,
        idx: usize,
        step: &Step,
        content: Option<&[u8]>,
    ) -> Result<(), RunnerError> {
        match step {
            Step::Write { path, parent, before, mode, .. } => {
                let (dir, name) = self.reopen(path, *parent)?;
                self.check(&dir, &name, before)?;
                self.backup(record, idx, "target", &dir, &name, before)?;
                let content = content.ok_or(RunnerError::State(std::io::ErrorKind::InvalidData))?;
                // The identity and hash are checked once more immediately before the rename,
                // inside `write_atomic`, to keep the window as small as the OS allows.
                write_atomic(self, &dir, &name, content, *mode, Some(before))
            }
            Step::Mkdir { path, parent, mode } => {
                let (dir, name) = self.reopen(path, *parent)?;
                self.check(&dir, &name, &State::Absent)?;
                dir.mkdir(&name, *mode).map_err(|e| exists_conflict(e, path))?;
                dir.sync()?;
                Ok(())
            }
            Step::Remove { path, parent, before } => {
                let (dir, name) = self.reopen(path, *parent)?;
                self.check(&dir, &name, before)?;
                self.backup(record, idx, "target", &dir, &name, before)?;
                remove_checked(self, &dir, &name, before)?;
                dir.sync()?;
                Ok(())
            }
            Step::Link { path, parent, target } => {
                let (dir, name) = self.reopen(path, *parent)?;
                self.check(&dir, &name, &State::Absent)?;
                dir.symlink(target, &name).map_err(|e| exists_conflict(e, path))?;
                dir.sync()?;
                Ok(())
            }
            Step::Rename { from, to, from_parent, to_parent, before_from, before_to } => {
                let (fdir, fname) = self.reopen(from, *from_parent)?;
                let (tdir, tname) = self.reopen(to, *to_parent)?;
                self.check(&fdir, &fname, before_from)?;
                self.check(&tdir, &tname, before_to)?;
                self.backup(record, idx, "from", &fdir, &fname, before_from)?;
                self.backup(record, idx, "to", &tdir, &tname, before_to)?;
                let replace = *before_to != State::Absent;
                fdir.rename(&fname, &tdir, &tname, replace).map_err(|e| exists_conflict(e, to))?;
                fdir.sync()?;
                tdir.sync()?;
                Ok(())
            }
            Step::Chmod { path, parent, before, mode } => self.chmod(path, *parent, before, *mode),
        }
    }

    /// Sets `mode` on the entry of a chmod step, after checking it is still `before`.
    fn chmod(
        &self,
        path: &str,
        parent: Option<Ident>,
        before: &State,
        mode: u32,
    ) -> Result<(), RunnerError> {
        let (dir, name) = self.reopen(path, parent)?;
        self.check(&dir, &name, before)?;
        let id = match before {
            State::File { id, .. } | State::Dir { id, .. } => *id,
            _ => return Err(RunnerError::State(std::io::ErrorKind::InvalidData)),
        };
        dir.set_mode(&name, FileId { dev: id.dev, ino: id.ino }, mode)
            .map_err(|e| exists_conflict(e, path))?;
        dir.sync()?;
        Ok(())
    }

    /// Puts back the "before" state of a step, if what is there now is "before" or the
    /// planned "after". Returns the paths left alone because someone else changed them.
    pub fn undo(&self, record: &Record, idx: usize, step: &Step) -> Vec<String> {
        let mut conflicts = Vec::new();
        let mut note = |p: &str| conflicts.push(p.to_owned());
        let look = |path: &str| -> Option<(DirHandle, String, State)> {
            let (dir, name) = self.ws.root().open_parent(&rel(path).ok()?).ok()?;
            let (state, _) = observe(&dir, &name, false, u64::MAX).ok()?;
            Some((dir, name, state))
        };
        match step {
            Step::Write { path, before, new_hash, .. } => {
                let Some((dir, name, now)) = look(path) else {
                    if *before != State::Absent {
                        note(path);
                    }
                    return conflicts;
                };
                remove_temps(&dir, &name);
                if now.same_content(before) {
                    return conflicts;
                }
                let is_new = matches!(&now, State::File { hash, .. } if hash == new_hash);
                if !is_new {
                    note(path);
                } else if *before == State::Absent {
                    if dir.unlink(&name).is_err() {
                        note(path);
                    }
                } else if self.put_back(record, idx, "target", &dir, &name, before).is_err() {
                    note(path);
                }
            }
            Step::Mkdir { path, .. } => {
                if let Some((dir, name, now)) = look(path) {
                    match now {
                        State::Absent => {}
                        State::Dir { .. } if dir.remove_dir(&name).is_ok() => {}
                        _ => note(path),
                    }
                }
            }
            Step::Remove { path, before, .. } => {
                let Some((dir, name, now)) = look(path) else {
                    note(path);
                    return conflicts;
                };
                remove_temps(&dir, &name);
                if now.same_content(before) {
                    return conflicts;
                }
                if now != State::Absent {
                    note(path);
                    return conflicts;
                }
                let ok = match before {
                    State::File { .. } => {
                        self.put_back(record, idx, "target", &dir, &name, before).is_ok()
                    }
                    State::Dir { mode, .. } => dir.mkdir(&name, *mode).is_ok(),
                    State::Link { target, .. } => dir.symlink(target, &name).is_ok(),
                    State::Absent => true,
                };
                if !ok {
                    note(path);
                }
            }
            Step::Link { path, target, .. } => {
                if let Some((dir, name, now)) = look(path) {
                    match &now {
                        State::Absent => {}
                        State::Link { target: t, .. } if t == target => {
                            if dir.unlink(&name).is_err() {
                                note(path);
                            }
                        }
                        _ => note(path),
                    }
                }
            }
            Step::Rename { from, to, before_from, before_to, .. } => {
                let (Some((fdir, fname, fnow)), Some((tdir, tname, tnow))) = (look(from), look(to))
                else {
                    note(from);
                    return conflicts;
                };
                if fnow.same_content(before_from) && tnow.same_content(before_to) {
                    return conflicts;
                }
                let moved = match (&tnow, before_from) {
                    (State::Dir { id: a, .. }, State::Dir { id: b, .. }) => a == b,
                    (now, was) => now.same_content(was),
                };
                if fnow != State::Absent || !moved {
                    note(from);
                    return conflicts;
                }
                if tdir.rename(&tname, &fdir, &fname, false).is_err() {
                    note(from);
                    return conflicts;
                }
                let _ = fdir.sync();
                if matches!(before_to, State::File { .. })
                    && self.put_back(record, idx, "to", &tdir, &tname, before_to).is_err()
                {
                    note(to);
                }
            }
            Step::Chmod { path, before, mode, .. } => {
                let Some((dir, name, now)) = look(path) else {
                    note(path);
                    return conflicts;
                };
                let (was, id) = match (&now, before) {
                    (State::File { id, mode: m, .. }, State::File { .. })
                    | (State::Dir { id, mode: m }, State::Dir { .. })
                        if now.same_content(before) =>
                    {
                        (*m, *id)
                    }
                    _ => {
                        note(path);
                        return conflicts;
                    }
                };
                let old = match before {
                    State::File { mode, .. } | State::Dir { mode, .. } => *mode,
                    _ => was,
                };
                let id = FileId { dev: id.dev, ino: id.ino };
                if was != old && (was != *mode || dir.set_mode(&name, id, old).is_err()) {
                    note(path);
                }
            }
        }
        conflicts
    }

    /// Writes a blob back over (or in place of) `name`.
    fn put_back(
        &self,
        record: &Record,
        idx: usize,
        role: &str,
        dir: &DirHandle,
        name: &str,
        before: &State,
    ) -> Result<(), RunnerError> {
        let State::File { hash, mode, .. } = before else { return Ok(()) };
        let bytes =
            self.store.load_blob(&record.operation_id, &Store::blob_name(idx, role), hash)?;
        write_atomic(self, dir, name, &bytes, *mode, None)
    }
}

fn exists_conflict(e: GuardError, path: &str) -> RunnerError {
    match e {
        GuardError::Io { kind: std::io::ErrorKind::AlreadyExists, .. } => conflict(format!(
            "`{path}` appeared since the change was planned; nothing was overwritten — look at \
             it and plan the change again"
        )),
        e => e.into(),
    }
}

/// The temp-file pattern: a new file with a random name in the same folder (`O_EXCL |
/// O_NOFOLLOW`), content, mode, fsync, then `rename` over the target and fsync of the folder.
/// The target's inode is never written to, so a hard link shared with a file outside the
/// project keeps its bytes. With `expect`, the target's state is compared right before the
/// rename; without (undo), an existing file is replaced.
pub(crate) fn write_atomic(
    exec: &Exec<'_>,
    dir: &DirHandle,
    name: &str,
    content: &[u8],
    mode: u32,
    expect: Option<&State>,
) -> Result<(), RunnerError> {
    let path = dir.rel_path().join(name)?.to_string();
    let io = |e: std::io::Error| RunnerError::WriteFailed { path: path.clone(), kind: e.kind() };
    let (mut file, tmp) = dir.create_temp(name, 0o600)?;
    let result = (|| {
        file.write_all(content).map_err(io)?;
        set_mode(&file, mode).map_err(io)?;
        file.sync_all().map_err(io)?;
        drop(file);
        let replace = match expect {
            Some(want) => {
                exec.check(dir, name, want)?;
                *want != State::Absent
            }
            None => true,
        };
        dir.rename(&tmp, dir, name, replace).map_err(|e| exists_conflict(e, &path))?;
        dir.sync()?;
        Ok(())
    })();
    if result.is_err() {
        let _ = dir.unlink(&tmp);
    }
    result
}

#[cfg(unix)]
fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    let mut perms = file.metadata()?.permissions();
    perms.set_readonly(mode & 0o222 == 0);
    file.set_permissions(perms)
}

/// Removes `name` after moving it aside to a random name and checking that what was moved is
/// still the planned entry; an entry swapped in at the last moment is put back, not deleted.
fn remove_checked(
    exec: &Exec<'_>,
    dir: &DirHandle,
    name: &str,
    before: &State,
) -> Result<(), RunnerError> {
    if let State::Dir { .. } = before {
        return dir.remove_dir(name).map_err(|e| match e {
            GuardError::Io { kind: std::io::ErrorKind::DirectoryNotEmpty, path } => conflict(
                format!("`{path}` gained new entries since the change was planned; plan again"),
            ),
            e => e.into(),
        });
    }
    let (placeholder, aside) = dir.create_temp(name, 0o600)?;
    drop(placeholder);
    dir.rename(name, dir, &aside, true)?;
    let (now, _) = observe(dir, &aside, false, exec.max_file.max(before.size().unwrap_or(0)))?;
    if &now != before {
        dir.rename(&aside, dir, name, false)?;
        let path = dir.rel_path().join(name)?;
        return Err(conflict(format!("`{path}` was replaced at the last moment; plan again")));
    }
    dir.unlink(&aside)?;
    Ok(())
}

/// Deletes temp files Sluice left next to `name` when it was interrupted.
fn remove_temps(dir: &DirHandle, name: &str) {
    let stem: String = name.chars().take(40).collect();
    let prefix = format!(".{stem}.sluice-tmp-");
    if let Ok(entries) = dir.entries() {
        for entry in entries.iter().filter(|e| e.name.starts_with(&prefix)) {
            if entry.kind == Some(EntryKind::File) {
                let _ = dir.unlink(&entry.name);
            }
        }
    }
}
