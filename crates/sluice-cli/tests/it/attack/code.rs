//! CI-03 through a language server: a project's own files decide what its language server runs
//! (typescript-language-server runs the project's `node_modules/typescript/lib/tsserver.js`
//! when there is one, as editors do; rust-analyzer runs `build.rs`, pyright the configured
//! interpreter). Sluice starts a server only after the user approves, and only in the
//! project's sandbox: here the project ships its own `tsserver.js`, which tries to read the
//! user's SSH key, a file in the home, Sluice's data folder, and to write outside the project.

use serde_json::json;

use super::{BOTH, Rig};
use crate::code_server::lsp_path;
use crate::harness::result;

#[test]
fn ci03_a_projects_own_tsserver_runs_only_after_consent_and_only_in_the_sandbox() {
    let rig = Rig::with_path("project", &lsp_path());
    let project = rig.project().to_owned();
    let tag = rig.sb.canary.trim_start_matches("CANARY-").to_owned();
    let escape = rig.sb.root().join("escaped.txt");
    let evidence = project.join("evidence.txt");
    let read = |p: &std::path::Path| format!("tryRead({:?})", p.display().to_string());
    let script = format!(
        "const fs = require('fs');\n\
         const tryRead = (p) => {{ try {{ fs.readFileSync(p); return 'read'; }} catch (e) {{ return 'refused ' + e.code; }} }};\n\
         const lines = ['ssh: ' + {ssh}, 'home: ' + {home}, 'data: ' + {data}];\n\
         try {{ fs.writeFileSync({escape:?}, 'escaped'); lines.push('escape: written'); }} catch (e) {{ lines.push('escape: refused ' + e.code); }}\n\
         fs.writeFileSync({evidence:?}, lines.join('\\n') + '\\n');\n\
         process.exit(0);\n",
        ssh = read(&rig.home.join(".ssh/id_rsa")),
        home = read(&rig.home.join(format!("rt_canary_{tag}"))),
        data = read(&rig.sb.data.join("rt_canary.txt")),
        escape = escape.display().to_string(),
        evidence = evidence.display().to_string(),
    );
    let ts = project.join("node_modules/typescript");
    std::fs::create_dir_all(ts.join("lib")).unwrap();
    std::fs::write(ts.join("package.json"), r#"{"name": "typescript", "version": "5.9.3"}"#)
        .unwrap();
    std::fs::write(ts.join("lib/tsserver.js"), script).unwrap();
    std::fs::write(project.join("app.ts"), "export function start(): number {\n  return 1;\n}\n")
        .unwrap();
    let hover = json!({"project": "demo", "path": "app.ts", "line": 1, "name": "start"});

    // Denied (through both transports): nothing of the project's ran, before or after.
    for via in BOTH {
        let v = rig.decided(via, "code_hover", hover.clone(), "deny");
        let (out, err) = result(&v);
        assert!(err && out["code"] == "denied", "{via:?}: {v}");
        assert!(!evidence.exists(), "{via:?}: the project's tsserver ran without consent");
    }

    // Approved: it runs, in the sandbox, and finds nothing of the user's.
    let v = rig.approved(super::Via::Http, "code_hover", hover);
    let text = std::fs::read_to_string(&evidence).unwrap_or_else(|e| {
        panic!("the approved server never ran the project's tsserver ({e}): {v}")
    });
    for line in ["ssh: refused", "home: refused", "data: refused"] {
        assert!(text.contains(line), "{line:?} not in {text:?}");
    }
    assert!(!escape.exists(), "the project's tsserver wrote outside the project: {text}");
    std::fs::remove_file(&evidence).unwrap();
    rig.finish(&[]);
}

/// The same class through pyright: a project's config names its own interpreter (a planted
/// `venv` whose `python` is a script). Pyright reads search paths from that folder and runs
/// only the interpreter on the trusted PATH, inside the sandbox; the planted one never runs,
/// before consent or after.
#[test]
fn ci03_a_planted_interpreter_named_by_pyrightconfig_never_runs() {
    let rig = Rig::with_path("project", &lsp_path());
    let project = rig.project().to_owned();
    let evidence = project.join("interpreter-ran.txt");
    let planted = project.join("evil/bin/python");
    std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
    std::fs::write(
        &planted,
        format!("#!/bin/sh\necho ran >> {:?}\nexec /usr/bin/python3 \"$@\"\n", evidence),
    )
    .unwrap();
    std::fs::set_permissions(&planted, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap();
    std::fs::write(project.join("pyrightconfig.json"), r#"{"venvPath": ".", "venv": "evil"}"#)
        .unwrap();
    std::fs::write(project.join("app.py"), "import os\n\ndef start() -> int:\n    return 1\n")
        .unwrap();
    let hover = json!({"project": "demo", "path": "app.py", "line": 3, "name": "start"});
    let v = rig.approved(super::Via::Http, "code_hover", hover);
    let (out, err) = result(&v);
    assert!(!err && out["text"].as_str().unwrap_or("").contains("start"), "{v}");
    assert!(!evidence.exists(), "pyright ran the interpreter the project planted");
    rig.finish(&[]);
}
