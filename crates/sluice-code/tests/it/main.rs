//! The syntax tier over real files: every grammar's outline, definitions across files, uses
//! that are code (not comments or strings), the index following changes, and what the index
//! must not read or show (shielded and ignored files, secrets in a definition's line).

use std::path::Path;

use sluice_code::{
    CodeIndex, DefinitionArgs, Language, OutlineArgs, ReferencesArgs, SymbolsArgs, definition,
    outline, references, symbols,
};
use sluice_runner::Workspace;

mod server;

pub(crate) fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), files);
    let ws = Workspace::open(dir.path(), &["*.secret".to_owned()]).expect("workspace");
    (dir, ws)
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let at = root.join(path);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        std::fs::write(at, text).expect("write");
    }
}

fn names(ws: &Workspace, path: &str) -> Vec<(String, String)> {
    let out = outline(ws, &OutlineArgs { path: path.into() }).expect("outline");
    out.symbols.into_iter().map(|s| (s.name, s.kind)).collect()
}

fn has(found: &[(String, String)], name: &str, kind: &str) -> bool {
    found.iter().any(|(n, k)| n == name && k == kind)
}

#[test]
fn every_grammar_outlines_its_definitions() {
    let (_dir, ws) = project(&[
        (
            "a.rs",
            "struct Engine;\nimpl Engine {\n    fn start(&self) {}\n}\ntrait Run {}\nfn main() {}\n",
        ),
        ("a.py", "class Engine:\n    def start(self):\n        pass\n\ndef main():\n    pass\n"),
        ("a.js", "class Engine {\n  start() {}\n}\nfunction main() {}\n"),
        (
            "a.ts",
            "interface Runner { run(): void }\nclass Engine {\n  start(): void {}\n}\nfunction main(): void {}\n",
        ),
        ("a.tsx", "function App() {\n  return <div />;\n}\n"),
        (
            "a.go",
            "package main\n\ntype Engine struct{}\n\nfunc (e *Engine) Start() {}\n\nfunc main() {}\n",
        ),
        ("a.c", "struct engine { int x; };\nint start(struct engine *e) { return 0; }\n"),
        (
            "a.cpp",
            "class Engine {\npublic:\n  void start();\n};\nvoid Engine::start() {}\nint main() { return 0; }\n",
        ),
        ("A.java", "class Engine {\n  void start() {}\n}\n"),
    ]);
    let rs = names(&ws, "a.rs");
    assert!(has(&rs, "Engine", "class") && has(&rs, "start", "method"), "{rs:?}");
    assert!(has(&rs, "Run", "interface") && has(&rs, "main", "function"), "{rs:?}");
    let py = names(&ws, "a.py");
    assert!(has(&py, "Engine", "class") && has(&py, "main", "function"), "{py:?}");
    assert!(py.iter().any(|(n, _)| n == "start"), "{py:?}");
    let js = names(&ws, "a.js");
    assert!(
        has(&js, "Engine", "class") && has(&js, "start", "method") && has(&js, "main", "function"),
        "{js:?}"
    );
    let ts = names(&ws, "a.ts");
    assert!(has(&ts, "Runner", "interface") && has(&ts, "Engine", "class"), "{ts:?}");
    assert!(has(&ts, "start", "method") && has(&ts, "main", "function"), "{ts:?}");
    assert!(has(&names(&ws, "a.tsx"), "App", "function"));
    let go = names(&ws, "a.go");
    assert!(
        has(&go, "Engine", "type") && has(&go, "Start", "method") && has(&go, "main", "function"),
        "{go:?}"
    );
    let c = names(&ws, "a.c");
    assert!(has(&c, "engine", "class") && has(&c, "start", "function"), "{c:?}");
    let cpp = names(&ws, "a.cpp");
    assert!(has(&cpp, "Engine", "class") && has(&cpp, "main", "function"), "{cpp:?}");
    assert!(cpp.iter().any(|(n, _)| n == "start"), "{cpp:?}");
    let java = names(&ws, "A.java");
    assert!(has(&java, "Engine", "class") && has(&java, "start", "method"), "{java:?}");

    // Every language of the index has a query that compiles against its grammar.
    for language in Language::ALL {
        let file = format!(
            "probe.{}",
            match language {
                Language::Rust => "rs",
                Language::Python => "py",
                Language::Javascript => "js",
                Language::Typescript => "ts",
                Language::Tsx => "tsx",
                Language::Go => "go",
                Language::C => "c",
                Language::Cpp => "cpp",
                Language::Java => "java",
            }
        );
        assert_eq!(Language::of(&file), Some(language));
    }
    let ruby = outline(&ws, &OutlineArgs { path: "a.rb".into() }).expect_err("not indexed");
    assert!(ruby.to_string().contains("not in a language"), "{ruby}");
}

/// What the grammars' own queries leave out and a definition tool must find: Rust constants
/// and statics; module-level bindings of JavaScript and TypeScript (a binding of
/// a function stays one function), TypeScript's type aliases and enums; Go's package-level
/// constants and variables; C macros. A local binding is no definition.
#[test]
fn constants_type_aliases_and_macros_are_definitions_too() {
    let (_dir, ws) = project(&[
        ("a.rs", "const MASK: u8 = 1;\nstatic NAME: &str = \"x\";\ntype Id = u64;\n"),
        (
            "a.ts",
            "export type AnySchema = string | number;\nenum Mode { On }\nexport const DAYS = 7;\nlet nil = null;\nconst start = () => 1;\nfunction f() {\n  const local = 1;\n}\n",
        ),
        ("a.js", "const LIMIT = 3;\nvar old = 1;\n"),
        ("a.go", "package main\n\nconst Version = \"1\"\n\nvar Debug = false\n"),
        ("a.c", "#define MAX 10\n#define SQUARE(x) ((x) * (x))\n"),
    ]);
    let rs = names(&ws, "a.rs");
    assert!(has(&rs, "MASK", "constant") && has(&rs, "NAME", "constant"), "{rs:?}");
    // The grammar's own query calls a type alias a class, as it does structs and enums.
    assert!(has(&rs, "Id", "class"), "{rs:?}");
    let ts = names(&ws, "a.ts");
    assert!(has(&ts, "AnySchema", "type") && has(&ts, "Mode", "type"), "{ts:?}");
    assert!(has(&ts, "DAYS", "constant") && has(&ts, "nil", "constant"), "{ts:?}");
    let start: Vec<_> = ts.iter().filter(|(n, _)| n == "start").collect();
    assert_eq!(start, [&("start".to_owned(), "function".to_owned())], "{ts:?}");
    assert!(!ts.iter().any(|(n, _)| n == "local"), "{ts:?}");
    let js = names(&ws, "a.js");
    assert!(has(&js, "LIMIT", "constant") && has(&js, "old", "constant"), "{js:?}");
    let go = names(&ws, "a.go");
    assert!(has(&go, "Version", "constant") && has(&go, "Debug", "constant"), "{go:?}");
    let c = names(&ws, "a.c");
    assert!(has(&c, "MAX", "macro") && has(&c, "SQUARE", "macro"), "{c:?}");
}

#[test]
fn a_definition_is_found_across_files_nearest_first_and_by_its_container() {
    let (_dir, ws) = project(&[
        ("src/engine.rs", "pub struct Engine;\nimpl Engine {\n    pub fn start(&self) {}\n}\n"),
        ("src/tunnel.rs", "pub struct Tunnel;\nimpl Tunnel {\n    pub fn start(&self) {}\n}\n"),
        ("src/main.rs", "fn main() {\n    let e = engine::Engine;\n    e.start();\n}\n"),
        ("web/app.ts", "export function start(): void {}\n"),
    ]);
    let index = CodeIndex::new();
    let all = definition(
        &ws,
        &index,
        &DefinitionArgs {
            name: "start".into(),
            path: Some("src/main.rs".into()),
            ..Default::default()
        },
    )
    .expect("definition");
    let paths: Vec<&str> = all.definitions.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["src/engine.rs", "src/tunnel.rs", "web/app.ts"], "same folder first");
    assert_eq!(all.tier, "syntax");
    let exact = definition(
        &ws,
        &index,
        &DefinitionArgs { name: "Engine::start".into(), ..Default::default() },
    )
    .expect("qualified");
    assert_eq!(exact.definitions.len(), 1);
    let found = &exact.definitions[0];
    assert_eq!((found.path.as_str(), found.symbol.line), ("src/engine.rs", 3));
    assert_eq!(found.symbol.text, "pub fn start(&self) {}");
    let none =
        definition(&ws, &index, &DefinitionArgs { name: "nowhere".into(), ..Default::default() })
            .expect("none");
    assert!(none.definitions.is_empty());
    for bad in ["", "a\nb", &"x".repeat(300)] {
        assert!(
            definition(&ws, &index, &DefinitionArgs { name: bad.into(), ..Default::default() })
                .is_err()
        );
    }
}

#[test]
fn a_definition_in_a_module_the_file_imports_comes_before_one_beside_it() {
    let (_dir, ws) = project(&[
        ("app/main.py", "from lib.billing import total\n\nprint(total([1, 2]))\n"),
        ("app/stats.py", "def total(rows):\n    return len(rows)\n"),
        ("lib/billing.py", "def total(items):\n    return sum(items)\n"),
        ("src/main.rs", "use crate::net::tunnel::open;\nfn main() { open(); }\n"),
        ("src/aa/open.rs", "pub fn open() {}\n"),
        ("src/net/tunnel.rs", "pub fn open() {}\n"),
        ("web/app.ts", "import { start } from './net/server';\nstart();\n"),
        ("web/a/start.ts", "export function start(): void {}\n"),
        ("web/net/server/index.ts", "export function start(): void {}\n"),
    ]);
    let index = CodeIndex::new();
    let first = |name: &str, from: &str| {
        let args =
            DefinitionArgs { name: name.into(), path: Some(from.into()), ..Default::default() };
        let out = definition(&ws, &index, &args).expect("definition");
        out.definitions.first().map(|d| d.path.clone()).expect("a definition")
    };
    assert_eq!(first("total", "app/main.py"), "lib/billing.py");
    assert_eq!(first("open", "src/main.rs"), "src/net/tunnel.rs");
    assert_eq!(first("start", "web/app.ts"), "web/net/server/index.ts");
    // Files named like the symbol (`src/aa/open.rs`, `web/a/start.ts`) would sort first on a
    // tie: the imported module comes first because it is imported, not by its path.
    // Without the importing file, the same folder comes first.
    assert_eq!(first("total", "app/other.py"), "app/stats.py");
}

#[test]
fn references_are_the_uses_in_code_not_in_comments_or_strings() {
    let (_dir, ws) = project(&[
        ("lib.py", "def helper(x):\n    return x\n\n# helper is documented here\n"),
        ("main.py", "from lib import helper\n\nprint(helper(1), \"helper\")\nhelpers = 2\n"),
    ]);
    let out = references(
        &ws,
        &CodeIndex::new(),
        &ReferencesArgs { name: "helper".into(), ..Default::default() },
    )
    .expect("references");
    let at: Vec<(&str, u64, bool)> =
        out.references.iter().map(|r| (r.path.as_str(), r.line, r.is_definition)).collect();
    assert_eq!(at, [("lib.py", 1, true), ("main.py", 1, false), ("main.py", 3, false)]);
    assert_eq!(out.references[2].column, 7);
    assert_eq!(out.files_searched, 2);
    let capped = references(
        &ws,
        &CodeIndex::new(),
        &ReferencesArgs { name: "helper".into(), max_results: Some(1), ..Default::default() },
    )
    .expect("capped");
    assert!(capped.truncated && capped.references.len() == 1);
}

#[test]
fn symbols_rank_exact_then_prefix_then_the_rest_and_filter_by_kind() {
    let (_dir, ws) = project(&[(
        "a.go",
        "package a\n\nfunc Start() {}\nfunc StartAll() {}\nfunc Restart() {}\ntype Starter struct{}\n",
    )]);
    let index = CodeIndex::new();
    let out = symbols(&ws, &index, &SymbolsArgs { query: "start".into(), ..Default::default() })
        .expect("symbols");
    let got: Vec<&str> = out.symbols.iter().map(|s| s.symbol.name.as_str()).collect();
    assert_eq!(got, ["Start", "StartAll", "Starter", "Restart"]);
    let funcs = symbols(
        &ws,
        &index,
        &SymbolsArgs { query: "start".into(), kind: Some("type".into()), ..Default::default() },
    )
    .expect("kind");
    assert_eq!(funcs.symbols.len(), 1);
    assert_eq!(funcs.symbols[0].symbol.name, "Starter");
}

#[test]
fn the_index_follows_changes_and_forgets_what_went_away() {
    let (dir, ws) = project(&[("a.rs", "fn first() {}\n"), ("b.rs", "fn second() {}\n")]);
    let index = CodeIndex::new();
    let find = |q: &str| {
        symbols(&ws, &index, &SymbolsArgs { query: q.into(), ..Default::default() })
            .expect("symbols")
            .symbols
            .len()
    };
    assert_eq!((find("first"), find("second")), (1, 1));
    assert_eq!(index.len(), 2);
    std::fs::write(dir.path().join("a.rs"), "fn renamed_first() {}\nfn third() {}\n")
        .expect("write");
    std::fs::remove_file(dir.path().join("b.rs")).expect("remove");
    assert_eq!((find("renamed_first"), find("third"), find("second")), (1, 1, 0));
    assert_eq!(index.len(), 1, "the removed file is forgotten");
}

#[test]
fn shielded_and_ignored_files_are_not_read_and_secrets_are_not_shown() {
    let (_dir, ws) = project(&[
        (".gitignore", "generated/\n"),
        ("generated/out.rs", "fn from_generated() {}\n"),
        ("keys.rs.secret", "fn from_shielded() {}\n"),
        ("conf.py", "def token(): return \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"\n"),
    ]);
    let index = CodeIndex::new();
    for hidden in ["from_generated", "from_shielded"] {
        let out = symbols(&ws, &index, &SymbolsArgs { query: hidden.into(), ..Default::default() })
            .expect("symbols");
        assert!(out.symbols.is_empty(), "{hidden} was indexed");
        let uses = references(
            &ws,
            &CodeIndex::new(),
            &ReferencesArgs { name: hidden.into(), ..Default::default() },
        )
        .expect("refs");
        assert!(uses.references.is_empty(), "{hidden} was searched");
    }
    assert!(outline(&ws, &OutlineArgs { path: "keys.rs.secret".into() }).is_err());
    let token =
        definition(&ws, &index, &DefinitionArgs { name: "token".into(), ..Default::default() })
            .expect("token");
    let text = &token.definitions[0].symbol.text;
    assert!(text.starts_with("def token():") && !text.contains("ghp_abcdefghijklmnop"), "{text}");
    let uses = references(
        &ws,
        &CodeIndex::new(),
        &ReferencesArgs { name: "token".into(), ..Default::default() },
    )
    .expect("refs");
    assert!(!uses.references[0].text.contains("ghp_abcdefghijklmnop"));
}
