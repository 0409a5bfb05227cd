//! Events the engine publishes for the desktop app: the window and tray redraw from these
//! instead of polling.

use sluice_core::ProjectId;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineEvent {
    /// A project was added, changed or removed.
    ProjectsChanged,
    /// A token was created, revoked or expired.
    TokensChanged,
    /// AI access was paused or resumed, or the integrity findings changed (a reseal or a fix
    /// from the CLI): the window reloads the app state and the tray redraws.
    AccessChanged { paused: bool },
    /// A project's root folder moved, vanished or was replaced.
    ProjectRootLost { id: ProjectId, reason: String },
    /// A tool call is waiting for the user's decision.
    ApprovalRequested { id: String },
    /// An approval ended: `approved`, `denied`, `expired`, `withdrawn`.
    ApprovalDecided { id: String, state: &'static str },
}
