//! Tier two's protocol against a real language server (pyright, from the npm registry, run
//! directly here: the engine's tests run it in the sandbox): definition across files, uses,
//! hover, the diagnostics of a deliberate type error, and a rename as a preview patch.

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
    let mut child = Command::new(node())
        .arg(servers().join("pyright/langserver.index.js"))
        .arg("--stdio")
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start pyright");
    let (input, output) =
        (child.stdin.take().expect("stdin"), child.stdout.take().expect("stdout"));
    let session =
        Session::start(Box::new(input), Box::new(output), root, WAIT).expect("initialize");
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
