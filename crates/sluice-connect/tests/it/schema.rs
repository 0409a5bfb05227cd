//! Clients' own JSON schemas validate every form Sluice writes for them: VS Code's (and VS
//! Code Insiders') `mcp.json` schema, and Crush's configuration schema.
//!
//! `vscode-mcp.schema.json` is VS Code's `mcpServerSchema` (`vscode://schemas/mcp`,
//! `src/vs/workbench/contrib/mcp/common/mcpConfiguration.ts`, MIT) as shipped in the npm
//! package `@codingame/monaco-vscode-api` 36.2.7, dumped with
//! `JSON.stringify((await import('…/mcp/common/mcpConfiguration.js')).mcpServerSchema)`.
//! No npm package ships the schema as a file; re-dump it when VS Code changes the format.
//! The validator is Python's `jsonschema` (Draft 7, as VS Code's schemas are).
//!
//! `crush.schema.json` is Crush's `schema.json` (https://charm.land/crush.json, generated from
//! `internal/config/config.go`; FSL-1.1-MIT) at charmbracelet/crush commit 37f36e93 (2026-08-21),
//! Draft 2020-12.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use sluice_connect::*;

fn validate(doc: &serde_json::Value) -> Result<(), String> {
    validate_with("vscode-mcp.schema.json", doc)
}

/// Validates `doc` against the schema file `name` (next to this file), with the validator of
/// the draft the schema declares (Draft 7 when it declares none, as VS Code's).
fn validate_with(name: &str, doc: &serde_json::Value) -> Result<(), String> {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it").join(name);
    let script = "import json,sys,jsonschema\n\
        s=json.load(open(sys.argv[1])); s.pop('id',None)\n\
        d=json.load(sys.stdin)\n\
        v=jsonschema.validators.validator_for(s, default=jsonschema.Draft7Validator)\n\
        errs=[e.message for e in v(s).iter_errors(d)]\n\
        print('\\n'.join(errs)); sys.exit(1 if errs else 0)\n";
    // The test Python `cargo xtask test` installs (jsonschema is pinned there).
    let python = std::env::var("SLUICE_TEST_PYTHON")
        .expect("SLUICE_TEST_PYTHON is not set: run the tests with `cargo xtask test`");
    let mut child = Command::new(python)
        .args(["-c", script])
        .arg(&schema)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test Python, with jsonschema");
    child.stdin.take().unwrap().write_all(doc.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("ModuleNotFoundError"), "python3 needs jsonschema: {stderr}");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}{stderr}", String::from_utf8_lossy(&out.stdout)))
    }
}

#[test]
fn every_vscode_form_satisfies_vscodes_schema() {
    let bin = Path::new("/opt/Sluice/sluice");
    let base =
        Endpoint { port: 4321, token: "slc_abc", binary: bin, connection: None, data_dir: None };
    let keychain = Endpoint { connection: Some("vscode"), data_dir: Some(Path::new("/d")), ..base };
    for (e, transport) in
        [(base, Transport::Http), (base, Transport::Stdio), (keychain, Transport::Stdio)]
    {
        for client in [Client::VsCode, Client::VsCodeInsiders] {
            let en = entry(client, transport, &e).unwrap();
            let doc = edit::parse(Format::Jsonc, &document(&en)).unwrap();
            validate(&doc).unwrap_or_else(|e| panic!("{client:?} {transport:?}: {e}"));
        }
    }
    // The validator is real: an entry VS Code would reject is rejected.
    let bad = serde_json::json!({ "servers": { "sluice": { "type": "http", "uri": "x" } } });
    assert!(validate(&bad).is_err());
    let bad = serde_json::json!({ "mcpServers": {} });
    assert!(validate(&bad).is_err(), "Cursor's root key is not VS Code's");
}

#[test]
fn a_merged_user_file_still_satisfies_vscodes_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mcp.json");
    std::fs::write(
        &path,
        "{\n  // mine\n  \"servers\": { \"time\": { \"command\": \"uvx\", \"args\": [\"mcp-server-time\"] } },\n}\n",
    )
    .unwrap();
    let e = Endpoint {
        port: 4321,
        token: "slc_abc",
        binary: Path::new("/opt/sluice"),
        connection: None,
        data_dir: None,
    };
    apply(&plan_connect(&entry(Client::VsCode, Transport::Http, &e).unwrap(), &path).unwrap())
        .unwrap();
    let doc = edit::parse(Format::Jsonc, &std::fs::read_to_string(&path).unwrap()).unwrap();
    validate(&doc).unwrap();
}

#[test]
fn every_crush_form_satisfies_crushs_schema() {
    let bin = Path::new("/opt/Sluice/sluice");
    let base =
        Endpoint { port: 4321, token: "slc_abc", binary: bin, connection: None, data_dir: None };
    let keychain = Endpoint { connection: Some("crush"), data_dir: Some(Path::new("/d")), ..base };
    for (e, transport) in
        [(base, Transport::Http), (base, Transport::Stdio), (keychain, Transport::Stdio)]
    {
        let en = entry(Client::Crush, transport, &e).unwrap();
        let mut doc = edit::parse(Format::Json, &document(&en)).unwrap();
        doc["$schema"] = "https://charm.land/crush.json".into();
        validate_with("crush.schema.json", &doc).unwrap_or_else(|e| panic!("{transport:?}: {e}"));
    }
    // The validator is real: Crush requires `type`, and knows no `cmd`.
    let bad = serde_json::json!({ "mcp": { "sluice": { "command": "x" } } });
    assert!(validate_with("crush.schema.json", &bad).is_err());
    let bad = serde_json::json!({ "mcp": { "sluice": { "type": "stdio", "cmd": "x" } } });
    assert!(validate_with("crush.schema.json", &bad).is_err());
}
