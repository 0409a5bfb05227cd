//! Tier two: the project's own language server, spoken to over LSP. The engine starts the
//! server as a job in the project's sandbox and hands its channel here; nothing in this crate
//! starts a process. [`Session`] is the conversation, [`wire`] its framing; `ask` turns the
//! tools' questions (a name on a line of a file) into requests and the answers into
//! project-relative, bounded results, `symbols` a file's outline and the project's symbols.

mod ask;
mod patch;
mod session;
mod symbols;
pub mod wire;

pub use ask::{
    AskError, Diagnostic, DiagnosticsOutput, HoverOutput, RenamePreview, SERVER_TIER, Spot,
    definition, diagnostics, hover, language_id, references, rename_preview,
};
pub use session::{Encoding, LspError, Session};
pub use symbols::{outline, workspace_symbols};
