//! Code intelligence from the project's language server, end to end: the real `sluice serve`,
//! pyright from the npm registry run as a job in the project's sandbox, and the official Python
//! MCP SDK (tests/clients/python_code_server.py asserts).

use crate::harness::*;

/// The `serve` environment that puts the language servers `cargo xtask test` installs, and the
/// Node they run on, on the PATH Sluice runs programs from.
pub fn lsp_path() -> String {
    let lsp = std::env::var("SLUICE_TEST_LSP").unwrap_or_else(|_| {
        panic!("SLUICE_TEST_LSP is not set: run the tests with `cargo xtask test`, which installs the language servers")
    });
    let node = std::env::var("SLUICE_TEST_NODE")
        .unwrap_or_else(|_| panic!("SLUICE_TEST_NODE is not set: run `cargo xtask test`"));
    let node_dir = std::path::Path::new(&node).parent().expect("node's folder").to_owned();
    let bin = std::path::Path::new(&lsp).join("node_modules/.bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = [bin, node_dir].into_iter().chain(std::env::split_paths(&path));
    std::env::join_paths(dirs).expect("PATH").to_string_lossy().into_owned()
}

#[test]
fn python_sdk_asks_the_projects_language_server_in_its_sandbox() {
    let (sb, token) = executable("project");
    let files = [
        ("pkg/__init__.py", ""),
        (
            "pkg/util.py",
            "def greet(name: str) -> str:\n    \"\"\"Says hello.\"\"\"\n    return \"hi \" + name\n",
        ),
        (
            "main.py",
            "from pkg.util import greet\n\nprint(greet(\"x\"))\ncount: int = greet(\"y\")\n",
        ),
        ("other.py", "def greet():\n    return 1\n"),
        ("id_rsa_notes.py", "key = 1\n"),
        ("App.java", "public class App {\n    void run() {}\n}\n"),
    ];
    for (path, text) in files {
        let at = sb.project.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }
    let readonly = sb.root().join("readonly");
    std::fs::create_dir_all(&readonly).unwrap();
    std::fs::write(readonly.join("main.py"), "def greet():\n    pass\n\ngreet()\n").unwrap();
    // Added as `project add` adds by default: read-only, running nothing.
    sb.ok(&["project", "add", &readonly.display().to_string(), "--name", "ro"]);
    let review = sb.token("reviewer", &["--profile", "review"]);
    let server = sb.serve_env(&[("PATH", &lsp_path())]);
    let out = python_client("python_code_server.py")
        .args(["--url", &server.url(), "--sluice", BIN, "--project", "demo"])
        .args(["--readonly-project", "ro"])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_REVIEW_TOKEN", &review)
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_ROOT", sb.project.display().to_string())
        .output()
        .expect("run the Python client");
    passed(&out);
}
