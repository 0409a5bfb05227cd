//! The one shape of a definition every answer shares (the index keeps it, the tools and the
//! language server's answers return it).

use schemars::JsonSchema;
use serde::Serialize;

/// A definition in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct Symbol {
    pub name: String,
    /// What the grammar's tagging query calls it: `function`, `method`, `class` (also Rust
    /// structs and enums), `interface` (also traits), `module`, `macro`, `type`, `constant`…
    pub kind: String,
    /// First and last line of the definition (1-based).
    pub line: u64,
    pub end_line: u64,
    /// The definition (or Rust `impl` block) it is nested in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// Its first line, trimmed (secrets redacted, long lines cut).
    pub text: String,
}
