//! Code intelligence through the official Python MCP SDK (tests/clients/python_code.py
//! asserts): the syntax tier's four tools on a small project in Rust, TypeScript and Python,
//! and what they must not read (a shielded file, an ignored folder, a link out of the project).

use crate::harness::*;

#[test]
fn python_sdk_navigates_code_with_the_syntax_index() {
    let sb = Sandbox::new();
    let files = [
        (
            "src/engine.rs",
            "pub struct Engine;\nimpl Engine {\n    pub fn start(&self) -> u32 {\n        1\n    }\n}\n",
        ),
        ("src/tunnel.rs", "pub struct Tunnel;\nimpl Tunnel {\n    pub fn start(&self) {}\n}\n"),
        ("src/main.rs", "fn main() {\n    let e = engine::Engine;\n    e.start();\n}\n"),
        ("web/app.ts", "export function startApp(): void {}\n"),
        ("tools/util.py", "def parse(text):\n    return text.split()\n"),
        (
            "tools/run.py",
            "from util import parse\n\n# parse is explained here\nprint(parse(\"parse\"))\n",
        ),
        ("id_rsa_helper.py", "def canary_function():\n    pass\n"),
        ("generated/out.py", "def generated_function():\n    pass\n"),
        (".gitignore", "generated/\n"),
    ];
    for (path, text) in files {
        let at = sb.project.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }
    // A link out of the project, to a file the index must never read.
    let outside = sb.root().join("outside.py");
    std::fs::write(&outside, "def outside_function():\n    pass\n").unwrap();
    std::fs::create_dir_all(sb.project.join("out")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, sb.project.join("out/link.py")).unwrap();
    sb.add_project();
    let token = sb.token("python", &["--profile", "review"]);
    let server = sb.serve();
    let out = python_client("python_code.py")
        .args(["--url", &server.url(), "--project", "demo"])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_ROOT", sb.project.display().to_string())
        .output()
        .expect("run the Python client");
    passed(&out);
}
