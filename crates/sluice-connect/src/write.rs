//! Connecting and disconnecting a client: plan the exact change of its config file (a preview
//! the user confirms), then apply it — a timestamped backup next to the file first, then an
//! atomic replace (temp file in the same folder, fsync, rename) that keeps the file's
//! permissions. A file that changed since the preview is left alone.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use sluice_core::ErrorCode;

use crate::edit::{self, EditError, Op};
use crate::{Client, Entry, TokenStorage};

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("{0} has no config file Sluice can write; copy its snippet instead")]
    NoConfigFile(&'static str),
    #[error("{path}: {message}. The file was left untouched.")]
    Unparseable { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    UnsafeEdit { path: PathBuf, message: String },
    #[error("{path} changed since the preview; nothing was written, run the command again")]
    Changed { path: PathBuf },
    #[error("{context} ({source})")]
    Io { context: String, source: std::io::Error },
}

impl ConnectError {
    fn io(context: impl Into<String>, source: std::io::Error) -> ConnectError {
        ConnectError::Io { context: context.into(), source }
    }
}

impl sluice_core::Coded for ConnectError {
    fn code(&self) -> ErrorCode {
        match self {
            ConnectError::NoConfigFile(_) => ErrorCode::NoConfigFile,
            ConnectError::Unparseable { .. } => ErrorCode::ConfigUnparseable,
            ConnectError::UnsafeEdit { .. } => ErrorCode::ConfigUnsafeEdit,
            ConnectError::Changed { .. } => ErrorCode::ConfigChanged,
            ConnectError::Io { .. } => ErrorCode::Io,
        }
    }
}

/// The exact change to one config file.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub client: Client,
    /// The file written (a symlink's target: the file the client really reads).
    pub path: PathBuf,
    /// The text now; `None` when the file does not exist yet.
    pub before: Option<String>,
    pub after: String,
    /// Where the token ends up (`None` for a disconnect).
    pub storage: Option<TokenStorage>,
}

impl Change {
    /// Nothing would change.
    pub fn is_noop(&self) -> bool {
        self.before.as_deref().unwrap_or("") == self.after
    }

    /// The change as unified-diff-like text: the lines between the unchanged head and tail.
    pub fn diff(&self) -> String {
        let before = self.before.as_deref().unwrap_or("");
        let old: Vec<&str> = before.lines().collect();
        let new: Vec<&str> = self.after.lines().collect();
        let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let tail = old[head..]
            .iter()
            .rev()
            .zip(new[head..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let mut out = format!(
            "--- {}\n+++ {}\n",
            if self.before.is_some() {
                self.path.display().to_string()
            } else {
                "/dev/null".into()
            },
            self.path.display()
        );
        if self.is_noop() {
            return out;
        }
        let context = 3;
        let from = head.saturating_sub(context);
        let old_end = (old.len() - tail + context).min(old.len());
        let new_end = (new.len() - tail + context).min(new.len());
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            from + 1,
            old_end - from,
            from + 1,
            new_end - from
        ));
        for l in &old[from..head] {
            out.push_str(&format!(" {l}\n"));
        }
        for l in &old[head..old.len() - tail] {
            out.push_str(&format!("-{l}\n"));
        }
        for l in &new[head..new.len() - tail] {
            out.push_str(&format!("+{l}\n"));
        }
        for l in &new[new.len() - tail..new_end] {
            out.push_str(&format!(" {l}\n"));
        }
        out
    }
}

/// The file a change is made to: a symlink is followed, so the client's real file is edited
/// and the link stays a link.
fn resolve(path: &Path) -> Result<PathBuf, ConnectError> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path)
            .map_err(|e| ConnectError::io(format!("cannot follow the link {}", path.display()), e)),
        Ok(m) if !m.is_file() => Err(ConnectError::Unparseable {
            path: path.to_owned(),
            message: "this is not a regular file".into(),
        }),
        _ => Ok(path.to_owned()),
    }
}

fn read(path: &Path) -> Result<Option<String>, ConnectError> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| ConnectError::Unparseable {
            path: path.to_owned(),
            message: "the file is not UTF-8 text".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConnectError::io(format!("cannot read {}", path.display()), e)),
    }
}

fn plan(client: Client, path: &Path, op: Op<'_>) -> Result<Change, ConnectError> {
    let format = client.format().ok_or(ConnectError::NoConfigFile(client.title()))?;
    let path = resolve(path)?;
    let before = read(&path)?;
    let storage = match op {
        Op::Set(entry) => Some(entry.storage),
        Op::Remove => None,
    };
    let after = match (&before, op) {
        (None, Op::Remove) => String::new(),
        (None, Op::Set(entry)) => crate::document(entry),
        (Some(text), op) => {
            edit::edit(format, client.servers_key(), text, op).map_err(|e| match e {
                EditError::Unparseable(message) => {
                    ConnectError::Unparseable { path: path.clone(), message }
                }
                EditError::Unsafe(message) => {
                    ConnectError::UnsafeEdit { path: path.clone(), message }
                }
            })?
        }
    };
    Ok(Change { client, path, before, after, storage })
}

/// The change that adds (or replaces) Sluice's entry in the config file at `path`.
pub fn plan_connect(entry: &Entry, path: &Path) -> Result<Change, ConnectError> {
    plan(entry.client, path, Op::Set(entry))
}

/// The change that removes Sluice's entry (and only it) from the config file at `path`.
pub fn plan_disconnect(client: Client, path: &Path) -> Result<Change, ConnectError> {
    plan(client, path, Op::Remove)
}

/// What applying a change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub path: PathBuf,
    /// The copy of the previous file, next to it (`None` when there was no file).
    pub backup: Option<PathBuf>,
}

/// `name.bak-YYYYMMDDTHHMMSSZ` next to `path` (with `-2`, `-3`… on a clash).
fn backup_path(path: &Path, attempt: u32) -> PathBuf {
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .replace(['-', ':'], "");
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let suffix = if attempt > 1 { format!("-{attempt}") } else { String::new() };
    path.with_file_name(format!("{name}.bak-{stamp}{suffix}"))
}

/// Copies `path` to a new backup file next to it, with the same permissions.
fn backup(path: &Path, text: &str) -> Result<PathBuf, ConnectError> {
    let perms = fs::metadata(path)
        .map_err(|e| ConnectError::io(format!("cannot inspect {}", path.display()), e))?
        .permissions();
    for attempt in 1..100 {
        let target = backup_path(path, attempt);
        let mut file = match OpenOptions::new().write(true).create_new(true).open(&target) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(ConnectError::io(format!("cannot create {}", target.display()), e));
            }
        };
        // Permissions first: the copy may hold a token and must not be readable by more people
        // than the original, even for a moment.
        file.set_permissions(perms.clone())
            .and_then(|()| file.write_all(text.as_bytes()))
            .and_then(|()| file.sync_all())
            .map_err(|e| ConnectError::io(format!("cannot write {}", target.display()), e))?;
        return Ok(target);
    }
    Err(ConnectError::io(
        "cannot name a backup file",
        std::io::Error::new(std::io::ErrorKind::AlreadyExists, "too many backups this second"),
    ))
}

/// Applies a planned change: refuses if the file changed since the plan, backs the old file up
/// next to it, then replaces it atomically keeping its permissions — except that a file which
/// will hold the token in plain text loses its group and other bits, and a new file is created
/// owner-only. Missing parent folders are created.
pub fn apply(change: &Change) -> Result<Applied, ConnectError> {
    let path = &change.path;
    if read(path)? != change.before {
        return Err(ConnectError::Changed { path: path.clone() });
    }
    if change.is_noop() {
        return Ok(Applied { path: path.clone(), backup: None });
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir)
        .map_err(|e| ConnectError::io(format!("cannot create {}", dir.display()), e))?;
    let backup = match &change.before {
        Some(text) => Some(backup(path, text)?),
        None => None,
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut tmp =
        tempfile::Builder::new().prefix(&format!(".{name}.sluice-")).tempfile_in(dir).map_err(
            |e| ConnectError::io(format!("cannot create a temp file in {}", dir.display()), e),
        )?;
    if change.before.is_some() {
        #[allow(unused_mut)]
        let mut perms = fs::metadata(path)
            .map_err(|e| ConnectError::io(format!("cannot inspect {}", path.display()), e))?
            .permissions();
        // A file that will hold a token in plain text becomes owner-only (the other bits
        // are kept otherwise).
        #[cfg(unix)]
        if change.storage.is_some_and(TokenStorage::plain_text) {
            use std::os::unix::fs::PermissionsExt;
            perms.set_mode(perms.mode() & !0o077);
        }
        tmp.as_file()
            .set_permissions(perms)
            .map_err(|e| ConnectError::io("cannot set the temp file's permissions", e))?;
    }
    tmp.write_all(change.after.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| ConnectError::io("cannot write the temp file", e))?;
    tmp.persist(path)
        .map_err(|e| ConnectError::io(format!("cannot replace {}", path.display()), e.error))?;
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(Applied { path: path.clone(), backup })
}
