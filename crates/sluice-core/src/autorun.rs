//! The vocabulary of the auto-run list: paths inside a project that another program runs, or
//! reads to decide what to run, on its own — an editor when the folder opens, an agent when it
//! starts, direnv on `cd`, git on commit, CI on push. A change to one never lands silently: it
//! asks the user, or it is refused. The matcher and the default list live in `sluice-guard`
//! (`AutoRun`); the reasons are in `docs/AUTORUN.md`.

use serde::{Deserialize, Serialize};

/// What a change to an auto-run path gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AutoRunAction {
    /// The user approves the change first, even where writes otherwise do not ask.
    Ask,
    /// Refused through the tools, whatever the approval policy; the user changes it themselves.
    Refuse,
}

impl AutoRunAction {
    pub const fn as_str(self) -> &'static str {
        match self {
            AutoRunAction::Ask => "ask",
            AutoRunAction::Refuse => "refuse",
        }
    }
}

impl std::str::FromStr for AutoRunAction {
    type Err = String;

    fn from_str(s: &str) -> Result<AutoRunAction, String> {
        match s.trim() {
            "ask" => Ok(AutoRunAction::Ask),
            "refuse" => Ok(AutoRunAction::Refuse),
            other => Err(format!("{other:?} is not an auto-run action; use `ask` or `refuse`")),
        }
    }
}

/// One entry of a project's auto-run list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoRunRule {
    /// A glob with the shield's rules (no `/`: a name at any depth; `X/**` covers the folder).
    pub pattern: String,
    pub action: AutoRunAction,
    /// Which program runs it: "VS Code", "direnv", "GitHub Actions".
    pub program: String,
    /// One line for the approval: what happens when the file changes ("VS Code runs tasks
    /// marked runOn folderOpen when you open the folder").
    pub consequence: String,
}

/// An auto-run path a planned change touches, as an approval shows it. Every field is already
/// safe to display (deceptive characters appear as `⟨U+202E⟩`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoRunHit {
    /// The project-relative path the change touches.
    pub path: String,
    pub program: String,
    pub consequence: String,
}

impl AutoRunHit {
    /// `path: consequence`, the line the CLI, the tray and the audit log show.
    pub fn line(&self) -> String {
        format!("{}: {}", self.path, self.consequence)
    }
}
