//! Sluice's code intelligence, tier one: a syntax index of every project, read-only and running
//! nothing. Each source file is parsed with tree-sitter and its maintained grammar (Rust,
//! Python, JavaScript, TypeScript and TSX, Go, C, C++, Java), its definitions found with the
//! grammar's own tagging query (`lang.rs`), and kept per file until the file changes
//! (`index.rs`). The answers (`tools.rs`): a file's outline, symbols by name, definitions of a
//! name and its uses (`refs.rs`: identifiers, not text). Files are walked as `search_text` walks
//! them: the shield and `.gitignore` apply, no link is followed.
//!
//! Tier two, [`lsp`]: the project's own language server (its types make answers exact), run
//! by the engine as a job in the project's sandbox where its commands may run; this crate only
//! speaks to it over the channel it is given, and starts no process.

mod index;
mod lang;
pub mod lsp;
mod refs;
mod symbol;
mod tools;

pub use index::CodeIndex;
pub use lang::Language;
pub use tools::{
    DefinitionArgs, DefinitionOutput, Located, OutlineArgs, OutlineOutput, Reference,
    ReferencesArgs, ReferencesOutput, SYNTAX_TIER, Symbol, SymbolsArgs, SymbolsOutput, definition,
    outline, references, symbols,
};
