//! `stat`: facts about one path, without following a final link (but saying where an
//! in-project link leads).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sluice_guard::GuardError;

use crate::model::{EntryKind, plain_integers, rfc3339};
use crate::{RunnerError, Workspace};

/// Arguments of `stat`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct StatArgs {
    /// File or folder to inspect, relative to the project root, with `/` separators.
    pub path: String,
}

/// Result of `stat`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(transform = plain_integers)]
pub struct StatOutput {
    /// The inspected path, project-relative.
    pub path: String,
    /// What the path itself is (a link is `symlink`).
    pub kind: EntryKind,
    /// Size in bytes (for a link: of the file it leads to, if any).
    pub size: u64,
    /// Last modification time, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// True when nobody has write permission.
    pub readonly: bool,
    pub is_symlink: bool,
    /// For a link: the project-relative path it resolves to. Absent for a dangling link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// For a link: the kind of what it resolves to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_kind: Option<EntryKind>,
}

/// Describes one path of the project.
pub fn stat(ws: &Workspace, args: &StatArgs) -> Result<StatOutput, RunnerError> {
    let rel = ws.request(Some(&args.path))?;
    let (meta, resolved_parent) = ws.root().lstat_resolved(&rel)?;
    ws.check_resolved(&rel, &resolved_parent)?;
    let mut out = StatOutput {
        path: rel.to_string(),
        kind: meta.kind.into(),
        size: meta.len,
        modified: rfc3339(meta.modified),
        readonly: meta.readonly,
        is_symlink: meta.kind == sluice_guard::EntryKind::Symlink,
        target: None,
        target_kind: None,
    };
    if out.is_symlink {
        match ws.root().resolve(&rel) {
            Ok(target) => {
                ws.check_resolved(&rel, &target)?;
                let target_meta = ws.root().metadata(&target)?;
                out.size = target_meta.len;
                out.target_kind = Some(target_meta.kind.into());
                out.target = Some(target.to_string());
            }
            // A dangling link inside the project is still a fact worth reporting.
            Err(GuardError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}
