//! The languages the syntax index reads: each file's language by its extension, and for each a
//! tree-sitter grammar with its maintainers' tagging query (the queries GitHub's code navigation
//! uses: `@definition.function`, `@reference.call`, …), compiled once.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tree_sitter_tags::TagsConfiguration;

/// A language of the syntax index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    Rust,
    Python,
    Javascript,
    Typescript,
    Tsx,
    Go,
    C,
    Cpp,
    Java,
}

impl Language {
    pub const ALL: [Language; 9] = [
        Language::Rust,
        Language::Python,
        Language::Javascript,
        Language::Typescript,
        Language::Tsx,
        Language::Go,
        Language::C,
        Language::Cpp,
        Language::Java,
    ];

    /// The language of a file, by its name's extension.
    pub fn of(path: &str) -> Option<Language> {
        let ext = path.rsplit_once('.')?.1;
        Some(match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::Javascript,
            "ts" | "mts" | "cts" => Language::Typescript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" => Language::Cpp,
            "java" => Language::Java,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::Javascript => "javascript",
            Language::Typescript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Java => "java",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Javascript => tree_sitter_javascript::LANGUAGE.into(),
            Language::Typescript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }

    /// The tagging query: the grammar's own, and what it leaves out that a definition tool
    /// must find ([`EXTRA_RUST`] and its siblings). TypeScript's extends JavaScript's, as its
    /// grammar extends the other.
    fn tags_query(self) -> String {
        let parts: &[&str] = match self {
            Language::Rust => &[tree_sitter_rust::TAGS_QUERY, EXTRA_RUST],
            Language::Python => &[tree_sitter_python::TAGS_QUERY],
            Language::Javascript => &[tree_sitter_javascript::TAGS_QUERY, EXTRA_JAVASCRIPT],
            Language::Typescript | Language::Tsx => &[
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY,
                EXTRA_JAVASCRIPT,
                EXTRA_TYPESCRIPT,
            ],
            Language::Go => &[tree_sitter_go::TAGS_QUERY, EXTRA_GO],
            Language::C => &[tree_sitter_c::TAGS_QUERY, EXTRA_C],
            Language::Cpp => &[tree_sitter_cpp::TAGS_QUERY, EXTRA_C],
            Language::Java => &[tree_sitter_java::TAGS_QUERY],
        };
        parts.join("\n")
    }

    /// The grammar with its tagging query, compiled on first use; `None` if the query does not
    /// compile against the grammar (a packaging mistake that a test of every language catches).
    pub(crate) fn tags(self) -> Option<&'static TagsConfiguration> {
        static CONFIGS: [OnceLock<Option<TagsConfiguration>>; 9] = [const { OnceLock::new() }; 9];
        let slot = Language::ALL.iter().position(|l| *l == self)?;
        CONFIGS[slot]
            .get_or_init(|| TagsConfiguration::new(self.grammar(), &self.tags_query(), "").ok())
            .as_ref()
    }

    /// A parser for the language (for the walk over its identifiers).
    pub(crate) fn parser(self) -> Option<tree_sitter::Parser> {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&self.grammar()).ok()?;
        Some(parser)
    }
}

/// Rust items the grammar's query leaves out: constants and statics.
const EXTRA_RUST: &str = r#"
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
"#;

/// Top-level `const`, `let` and `var` bindings of a module (exported or not); a binding whose
/// value is a function is already a function, and the index keeps one definition per name and
/// line.
const EXTRA_JAVASCRIPT: &str = r#"
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant))
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.constant))
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant)))
"#;

/// TypeScript's type aliases and enums.
const EXTRA_TYPESCRIPT: &str = r#"
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.type
"#;

/// Go's package-level constants and variables.
const EXTRA_GO: &str = r#"
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.constant))
"#;

/// C and C++ macros.
const EXTRA_C: &str = r#"
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
"#;
