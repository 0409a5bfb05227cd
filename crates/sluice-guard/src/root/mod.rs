//! [`Root`]: an authorized folder, held open, and every way to reach a file below it.
//!
//! The platform code lives in `unix.rs` (Linux `openat2(RESOLVE_BENEATH)` with a no-follow
//! `openat` walk as fallback, which is also the macOS implementation) and `windows.rs`
//! (canonical, component-wise containment with reparse points treated as links). Both expose
//! the same methods; this module holds the types they share.

use std::time::SystemTime;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{DirHandle, Root};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{DirHandle, Root};

/// Symbolic links followed while resolving one path before giving up (Linux uses 40 too).
pub(crate) const MAX_LINK_HOPS: usize = 40;

/// What a directory entry is, without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    File,
    Dir,
    /// A symbolic link, or on Windows any name-surrogate reparse point (junction).
    Symlink,
    /// FIFOs, sockets, devices: never opened by the tools.
    Other,
}

impl EntryKind {
    /// A short noun for messages ("a directory").
    pub fn describe(self) -> &'static str {
        match self {
            EntryKind::File => "a regular file",
            EntryKind::Dir => "a directory",
            EntryKind::Symlink => "a symbolic link",
            EntryKind::Other => "a special file (FIFO, socket or device)",
        }
    }
}

/// A file's identity on its volume, used to detect loops and swaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

/// The `lstat`-like facts the tools report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryMeta {
    pub kind: EntryKind,
    /// Size in bytes (for a link, the length of its target text).
    pub len: u64,
    pub modified: Option<SystemTime>,
    /// No write permission bit at all (Unix) or the read-only attribute (Windows).
    pub readonly: bool,
    pub id: FileId,
    /// Permission bits (`0o7777` on Unix); on Windows `0o444` or `0o666` from the read-only
    /// attribute.
    pub mode: u32,
    /// Hard links to the inode (1 where the platform does not say).
    pub nlink: u64,
    /// When the inode last changed (`ctime`: content, mode, links), where the platform says;
    /// no process can set it back, which is why a stat cache trusts it.
    pub changed: Option<SystemTime>,
}

/// One name read from a directory. Names that are not valid UTF-8 are skipped by the reader:
/// they cannot be expressed as a [`crate::RelPath`], so no tool could address them anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    /// `None` when the directory did not say and a stat is needed.
    pub kind: Option<EntryKind>,
}
