//! Tier two's protocol against real language servers (pyright and typescript-language-server
//! from the npm registry, clangd and gopls from Debian; run directly here, the engine's tests
//! run them in the sandbox): definition across files, uses, hover, the diagnostics of a
//! deliberate type error, and a rename as a preview patch.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sluice_code::lsp::{self, Session, Spot};

use crate::project;

const WAIT: Duration = Duration::from_secs(60);

/// The language servers `cargo xtask test` installs (`tests/lsp`).
fn servers() -> PathBuf {
    let dir = std::env::var_os("SLUICE_TEST_LSP").map(PathBuf::from).unwrap_or_else(|| {
        panic!("SLUICE_TEST_LSP is not set: run the tests with `cargo xtask test`, which installs the language servers")
    });
    dir.join("node_modules")
}

fn node() -> String {
    std::env::var("SLUICE_TEST_NODE").unwrap_or_else(|_| {
        panic!("SLUICE_TEST_NODE is not set: run the tests with `cargo xtask test`")
    })
}

struct Server {
    child: Child,
    session: Session,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.session.shutdown();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pyright(root: &std::path::Path) -> Server {
    let mut command = Command::new(node());
    command.arg(servers().join("pyright/langserver.index.js")).arg("--stdio");
    start(command, root, "pyright-langserver")
}

fn start(mut command: Command, root: &std::path::Path, program: &str) -> Server {
    let mut child = command
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the language server");
    let (input, output) =
        (child.stdin.take().expect("stdin"), child.stdout.take().expect("stdout"));
    let session =
        Session::start(Box::new(input), Box::new(output), root, program, WAIT).expect("initialize");
    Server { child, session }
}

fn spot(path: &str, line: u32, name: &str) -> Spot {
    Spot { path: path.into(), line, name: name.into(), occurrence: None }
}

#[test]
fn pyright_answers_definition_uses_hover_diagnostics_and_a_rename_preview() {
    let (dir, ws) = project(&[
        ("pkg/__init__.py", ""),
        (
            "pkg/util.py",
            "def greet(name: str) -> str:\n    \"\"\"Says hello.\"\"\"\n    return \"hi \" + name\n",
        ),
        (
            "main.py",
            "from pkg.util import greet\n\nprint(greet(\"x\"))\ncount: int = greet(\"y\")\n",
        ),
    ]);
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let server = pyright(&root);
    let s = &server.session;

    let found = lsp::definition(s, &ws, &spot("main.py", 3, "greet"), WAIT).expect("definition");
    assert_eq!(found.tier, "server");
    let at: Vec<(&str, u64, &str, u64)> = found
        .definitions
        .iter()
        .map(|d| (d.path.as_str(), d.symbol.line, d.symbol.kind.as_str(), d.symbol.end_line))
        .collect();
    assert_eq!(at, [("pkg/util.py", 1, "function", 3)], "{found:?}");
    assert_eq!(found.definitions[0].symbol.text, "def greet(name: str) -> str:");

    let uses = lsp::references(s, &ws, &spot("pkg/util.py", 1, "greet"), WAIT).expect("references");
    let at: Vec<(&str, u64, u64, bool)> = uses
        .references
        .iter()
        .map(|r| (r.path.as_str(), r.line, r.column, r.is_definition))
        .collect();
    let want = [
        ("main.py", 1, 22, false),
        ("main.py", 3, 7, false),
        ("main.py", 4, 14, false),
        ("pkg/util.py", 1, 5, true),
    ];
    assert_eq!(at, want, "{uses:?}");

    let hover = lsp::hover(s, &ws, &spot("main.py", 3, "greet"), WAIT).expect("hover");
    assert!(
        hover.text.contains("def greet(name: str) -> str") && hover.text.contains("Says hello."),
        "{hover:?}"
    );

    let found = lsp::diagnostics(s, &ws, &["main.py".into()], WAIT).expect("diagnostics");
    assert!(found.complete, "{found:?}");
    let error =
        found.diagnostics.iter().find(|d| d.line == 4).unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!((error.severity.as_str(), error.path.as_str()), ("error", "main.py"), "{error:?}");
    assert!(error.message.contains("int"), "{error:?}");
    let root_text = root.to_string_lossy();
    assert!(!found.diagnostics.iter().any(|d| d.message.contains(&*root_text)), "{found:?}");

    let preview =
        lsp::rename_preview(s, &ws, &spot("main.py", 3, "greet"), "welcome", WAIT).expect("rename");
    assert_eq!(preview.files, ["main.py", "pkg/util.py"], "{preview:?}");
    assert_eq!(preview.edits, 4, "{preview:?}");
    assert!(
        preview.patch.contains("-from pkg.util import greet\n+from pkg.util import welcome\n"),
        "{}",
        preview.patch
    );
    assert!(
        preview.patch.contains("-def greet(name: str) -> str:\n+def welcome(name: str) -> str:\n"),
        "{}",
        preview.patch
    );
    // A preview changes nothing.
    let util = std::fs::read_to_string(root.join("pkg/util.py")).expect("read");
    assert!(util.starts_with("def greet("), "{util}");

    let missing = lsp::definition(s, &ws, &spot("main.py", 3, "absent"), WAIT);
    assert!(matches!(missing, Err(lsp::AskError::File(_))), "{missing:?}");
}

/// What one server must answer on a two-file project: `lib` defines `greet` on `def_line` (its
/// docs say "Says hello"), `main` uses it on `use_line` and has a type error on `error_line`.
struct Case<'a> {
    lib: &'a str,
    def_line: u64,
    main: &'a str,
    use_line: u32,
    error_line: u64,
    /// The uses (path, line) the server finds, the definition included.
    uses: &'a [(&'a str, u64)],
    /// The files a rename of `greet` touches.
    renamed: &'a [&'a str],
}

fn answers(server: &Server, ws: &sluice_runner::Workspace, root: &std::path::Path, case: &Case) {
    let s = &server.session;
    let found =
        lsp::definition(s, ws, &spot(case.main, case.use_line, "greet"), WAIT).expect("definition");
    let at: Vec<(&str, u64)> =
        found.definitions.iter().map(|d| (d.path.as_str(), d.symbol.line)).collect();
    assert_eq!(at, [(case.lib, case.def_line)], "{found:?}");

    let uses =
        lsp::references(s, ws, &spot(case.main, case.use_line, "greet"), WAIT).expect("references");
    let at: Vec<(&str, u64)> = uses.references.iter().map(|r| (r.path.as_str(), r.line)).collect();
    assert_eq!(at, case.uses, "{uses:?}");
    for r in &uses.references {
        assert_eq!(
            r.is_definition,
            (r.path.as_str(), r.line) == (case.lib, case.def_line),
            "{r:?}"
        );
    }

    let hover = lsp::hover(s, ws, &spot(case.main, case.use_line, "greet"), WAIT).expect("hover");
    let says = hover.text.to_lowercase().contains("says hello");
    assert!(hover.text.contains("greet") && says, "{hover:?}");

    let found = lsp::diagnostics(s, ws, &[case.main.into()], WAIT).expect("diagnostics");
    assert!(
        found.diagnostics.iter().any(|d| d.line == case.error_line && d.severity == "error"),
        "{found:?}"
    );
    let root_text = root.to_string_lossy();
    assert!(!found.diagnostics.iter().any(|d| d.message.contains(&*root_text)), "{found:?}");

    let preview =
        lsp::rename_preview(s, ws, &spot(case.main, case.use_line, "greet"), "welcome", WAIT)
            .expect("rename");
    assert_eq!(preview.files, case.renamed, "{preview:?}");
    assert!(preview.patch.contains("+") && preview.patch.contains("welcome"), "{preview:?}");
}

#[test]
fn typescript_language_server_answers_on_typescript() {
    let (dir, ws) = project(&[
        (
            "src/lib.ts",
            "/** Says hello. */\nexport function greet(name: string): string {\n  return `hi ${name}`;\n}\n",
        ),
        (
            "src/main.ts",
            "import { greet } from \"./lib\";\n\nconsole.log(greet(\"x\"));\nconst count: number = greet(\"y\");\n",
        ),
        ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}\n"),
    ]);
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let mut command = Command::new(node());
    command.arg(servers().join("typescript-language-server/lib/cli.mjs")).arg("--stdio");
    let server = start(command, &root, "typescript-language-server");
    answers(
        &server,
        &ws,
        &root,
        &Case {
            lib: "src/lib.ts",
            def_line: 2,
            main: "src/main.ts",
            use_line: 3,
            error_line: 4,
            uses: &[("src/lib.ts", 2), ("src/main.ts", 1), ("src/main.ts", 3), ("src/main.ts", 4)],
            renamed: &["src/lib.ts", "src/main.ts"],
        },
    );
}

#[test]
fn clangd_answers_on_c() {
    let (dir, ws) = project(&[
        ("lib.h", "/** Says hello. */\nint greet(int times);\n"),
        ("lib.c", "#include \"lib.h\"\nint greet(int times) { return times; }\n"),
        (
            "main.c",
            "#include \"lib.h\"\n\nint main(void) {\n  int n = greet(2);\n  int m = greet(1, 2);\n  return n;\n}\n",
        ),
        ("compile_flags.txt", "-xc\n-std=c11\n"),
    ]);
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let server = start(Command::new("clangd"), &root, "clangd");
    answers(
        &server,
        &ws,
        &root,
        &Case {
            lib: "lib.c",
            def_line: 2,
            main: "main.c",
            use_line: 4,
            error_line: 5,
            // clangd knows the uses in the files it has open (no background index is asked for).
            uses: &[("lib.c", 2), ("lib.h", 2), ("main.c", 4), ("main.c", 5)],
            renamed: &["lib.c", "lib.h", "main.c"],
        },
    );
}

#[test]
fn gopls_answers_on_go() {
    let (dir, ws) = project(&[
        ("go.mod", "module example.com/demo\n\ngo 1.19\n"),
        (
            "lib.go",
            "package main\n\n// greet says hello.\nfunc greet(name string) string {\n\treturn \"hi \" + name\n}\n",
        ),
        (
            "main.go",
            "package main\n\nfunc main() {\n\tprintln(greet(\"x\"))\n\tvar n int = greet(\"y\")\n\t_ = n\n}\n",
        ),
    ]);
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let cache = tempfile::tempdir().expect("cache");
    let mut command = Command::new("gopls");
    command
        .env("GOPATH", cache.path().join("gopath"))
        .env("GOCACHE", cache.path().join("gocache"))
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local");
    let server = start(command, &root, "gopls");
    answers(
        &server,
        &ws,
        &root,
        &Case {
            lib: "lib.go",
            def_line: 4,
            main: "main.go",
            use_line: 4,
            error_line: 5,
            uses: &[("lib.go", 4), ("main.go", 4), ("main.go", 5)],
            renamed: &["lib.go", "main.go"],
        },
    );
}
