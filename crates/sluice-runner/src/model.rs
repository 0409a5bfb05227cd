//! Small pieces shared by the tools' wire types: entry kinds, timestamps, argument clamping,
//! globs, and the schema transform that keeps integer schemas plain.

use std::time::SystemTime;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::Serialize;

use crate::RunnerError;

/// What an entry is. Links are reported as links and never followed by walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// FIFO, socket or device; never read.
    Other,
}

impl From<sluice_guard::EntryKind> for EntryKind {
    fn from(kind: sluice_guard::EntryKind) -> EntryKind {
        match kind {
            sluice_guard::EntryKind::File => EntryKind::File,
            sluice_guard::EntryKind::Dir => EntryKind::Dir,
            sluice_guard::EntryKind::Symlink => EntryKind::Symlink,
            sluice_guard::EntryKind::Other => EntryKind::Other,
        }
    }
}

/// RFC 3339 in UTC with second precision, e.g. `2026-05-01T12:00:00Z`.
pub(crate) fn rfc3339(time: Option<SystemTime>) -> Option<String> {
    time.map(|t| humantime::format_rfc3339_seconds(t).to_string())
}

/// `value` or `default`, clamped to `1..=cap`.
pub(crate) fn clamp<T: Ord + Copy + From<u8>>(value: Option<T>, default: T, cap: T) -> T {
    value.unwrap_or(default).clamp(T::from(1), cap)
}

/// The shared transform that keeps integer schemas plain (no `format: uint*`).
pub(crate) use sluice_core::schema::plain_integers;

/// Compiles client globs with the shield's rule: no `/` means "this name at any depth".
pub(crate) fn compile_globs(patterns: &[String], what: &str) -> Result<GlobSet, RunnerError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        if pattern.len() > 1000 {
            return Err(RunnerError::invalid(format!("a {what} glob is longer than 1000 bytes")));
        }
        let body = pattern.strip_prefix('/').unwrap_or(pattern);
        // With a `/` (or an explicit `**/`) the glob is a path glob; without, a name glob.
        let full = if pattern.contains('/') { body.to_owned() } else { format!("**/{body}") };
        let glob = GlobBuilder::new(&full).literal_separator(true).build().map_err(|e| {
            RunnerError::invalid(format!("invalid {what} glob {pattern:?}: {}", e.kind()))
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| RunnerError::invalid(format!("invalid {what} globs: {e}")))
}
