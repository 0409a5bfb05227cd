//! Reading Sluice's entry back (`health::read_entry`): every form `entry` writes, for every
//! client and transport, reads back as what it is; hand-written files in each format (JSONC
//! with comments, TOML, YAML) too; and no file content makes it panic.

use std::path::Path;

use sluice_connect::health::{Credential, ReadError, read_entry, read_file};
use sluice_connect::*;

fn ep(connection: Option<&'static str>) -> Endpoint<'static> {
    Endpoint {
        port: 4321,
        token: "slc_token",
        binary: Path::new("/opt/Sluice/sluice"),
        connection,
        data_dir: Some(Path::new("/data/sluice")),
    }
}

#[test]
fn every_written_form_reads_back_as_what_it_is() {
    for client in Client::ALL.into_iter().filter(|c| c.format().is_some()) {
        for transport in [Transport::Http, Transport::Stdio] {
            for connection in [None, Some("conn-1")] {
                let e = ep(connection);
                let Some(en) = entry(client, transport, &e) else { continue };
                let text = document(&en);
                let found = read_entry(client, &text)
                    .unwrap_or_else(|err| panic!("{client:?} {transport:?}: {err}\n{text}"))
                    .unwrap_or_else(|| panic!("{client:?} {transport:?}: no entry in\n{text}"));
                let what = format!("{client:?} {transport:?} {connection:?}:\n{text}");
                assert_eq!(found.transport, transport, "{what}");
                assert_eq!(Some(en.storage), found.credential.storage(), "{what}");
                match transport {
                    Transport::Http => {
                        assert_eq!(found.port, Some(4321), "{what}");
                        assert_eq!(found.url.as_deref(), Some("http://127.0.0.1:4321/mcp"));
                    }
                    Transport::Stdio => {
                        let (program, args) = found.command.clone().unwrap();
                        assert_eq!(program, "/opt/Sluice/sluice", "{what}");
                        assert_eq!(args[0], "stdio", "{what}");
                        assert_eq!(found.data_dir.as_deref(), Some("/data/sluice"), "{what}");
                        assert_eq!(
                            found.connection(),
                            connection.filter(|_| { en.storage == TokenStorage::SluiceKeychain }),
                            "{what}"
                        );
                    }
                }
                if let Credential::InFile(secret) = &found.credential {
                    assert_eq!(secret.expose(), "slc_token", "{what}");
                }
            }
        }
    }
}

#[test]
fn hand_written_jsonc_toml_and_yaml() {
    // VS Code's mcp.json with comments and trailing commas, the prompt form.
    let vscode = r#"// mine
{
  "inputs": [{ "type": "promptString", "id": "sluice-token", "password": true }],
  "servers": {
    /* ours */ "sluice": { "type": "http", "url": "http://127.0.0.1:9000/mcp",
      "headers": { "Authorization": "Bearer ${input:sluice-token}" }, },
  },
}
"#;
    let f = read_entry(Client::VsCode, vscode).unwrap().unwrap();
    assert_eq!(
        (f.transport, f.port, f.credential),
        (Transport::Http, Some(9000), Credential::ClientPrompt)
    );

    // Gemini's settings (JSONC) with the env reference.
    let gemini = "{\n  // hi\n  \"mcpServers\": {\"sluice\": {\"httpUrl\": \"http://localhost:7457/mcp\", \"headers\": {\"authorization\": \"Bearer ${SLUICE_TOKEN}\"}}}\n}";
    let f = read_entry(Client::GeminiCli, gemini).unwrap().unwrap();
    assert_eq!(f.port, Some(7457));
    assert_eq!(f.credential, Credential::Environment("SLUICE_TOKEN".into()));

    // Codex's TOML: the HTTP form names the variable; the stdio form has a command.
    let codex = "# codex\nmodel = \"o4\"\n[mcp_servers.sluice]\nurl = \"http://127.0.0.1:1234/mcp\"\nbearer_token_env_var = \"SLUICE_TOKEN\"\n";
    let f = read_entry(Client::Codex, codex).unwrap().unwrap();
    assert_eq!(
        (f.port, f.credential),
        (Some(1234), Credential::Environment("SLUICE_TOKEN".into()))
    );
    let codex = "[mcp_servers.sluice]\ncommand = \"/old/sluice\" # moved\nargs = [\"stdio\", \"--connection\", \"codex\"]\n";
    let f = read_entry(Client::Codex, codex).unwrap().unwrap();
    assert_eq!(
        f.command,
        Some(("/old/sluice".into(), vec!["stdio".into(), "--connection".into(), "codex".into()]))
    );
    assert_eq!(f.credential, Credential::Keychain("codex".into()));
    let codex = "mcp_servers = { sluice = { command = \"sluice\", args = [\"stdio\"], env = { SLUICE_TOKEN = \"slc_x\" } } }\n";
    let f = read_entry(Client::Codex, codex).unwrap().unwrap();
    assert!(matches!(&f.credential, Credential::InFile(s) if s.expose() == "slc_x"));

    // Goose's YAML: `uri` and `cmd`/`envs`.
    let goose = "# goose\nextensions:\n  sluice:\n    type: streamable_http\n    uri: http://127.0.0.1:5555/mcp\n    headers:\n      Authorization: Bearer slc_y\n";
    let f = read_entry(Client::Goose, goose).unwrap().unwrap();
    assert_eq!(f.port, Some(5555));
    assert!(matches!(&f.credential, Credential::InFile(s) if s.expose() == "slc_y"));
    let goose = "extensions:\n  sluice:\n    type: stdio\n    cmd: /opt/sluice\n    args: [stdio]\n    envs:\n      SLUICE_TOKEN: $SLUICE_TOKEN\n";
    let f = read_entry(Client::Goose, goose).unwrap().unwrap();
    assert_eq!(f.transport, Transport::Stdio);
    assert_eq!(f.credential, Credential::Environment("SLUICE_TOKEN".into()));

    // opencode's one command list, Crush's `$VAR`.
    let oc = r#"{"mcp": {"sluice": {"type": "local", "command": ["/s", "stdio", "--connection", "opencode"]}}}"#;
    let f = read_entry(Client::OpenCode, oc).unwrap().unwrap();
    assert_eq!(f.connection(), Some("opencode"));
    let crush = r#"{"mcp": {"sluice": {"type": "http", "url": "http://127.0.0.1:2/mcp", "headers": {"Authorization": "Bearer $SLUICE_TOKEN"}}}}"#;
    let f = read_entry(Client::Crush, crush).unwrap().unwrap();
    assert_eq!(f.credential, Credential::Environment("SLUICE_TOKEN".into()));
}

#[test]
fn missing_entries_and_bad_files() {
    assert_eq!(read_entry(Client::Cursor, "").unwrap(), None);
    assert_eq!(read_entry(Client::Cursor, "{\"mcpServers\": {\"x\": {}}}").unwrap(), None);
    assert_eq!(read_entry(Client::Cursor, "{\"mcpServers\": null}").unwrap(), None);
    assert_eq!(read_entry(Client::Goose, "extensions:\n").unwrap(), None);
    let bad = [
        (Client::Cursor, "{ \"mcpServers\": { "),
        (Client::Cursor, "// comment\n{}"),
        (Client::Cursor, "[1, 2]"),
        (Client::Cursor, "{\"mcpServers\": []}"),
        (Client::Cursor, "{\"mcpServers\": {\"sluice\": 3}}"),
        (Client::Cursor, "{\"mcpServers\": {\"sluice\": {\"type\": \"http\"}}}"),
        (Client::Codex, "[mcp_servers\n"),
        (Client::Goose, "extensions: [\n"),
        (Client::Goose, "a: 1\n---\nb: 2\n"),
        (Client::Zed, "{\"context_servers\": \"x\"}"),
    ];
    for (client, text) in bad {
        let err = read_entry(client, text).unwrap_err();
        assert!(matches!(err, ReadError::Invalid(_)), "{client:?} {text:?}");
        assert!(!err.to_string().is_empty());
    }
    // Odd but valid values never panic: numbers as args, a list as a command, a deep nest.
    let odd = [
        r#"{"mcpServers": {"sluice": {"command": 1, "url": 2}}}"#,
        r#"{"mcpServers": {"sluice": {"command": [], "args": [1, null]}}}"#,
        r#"{"mcpServers": {"sluice": {"command": "x", "args": ["--connection"]}}}"#,
        r#"{"mcpServers": {"sluice": {"url": "http://[::1", "headers": {"Authorization": 5}}}}"#,
        r#"{"mcpServers": {"sluice": {"url": "ü://:::/", "headers": "x"}}}"#,
    ];
    for text in odd {
        let _ = read_entry(Client::Cursor, text);
    }
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let _ = read_entry(Client::Cursor, &deep);
}

#[test]
fn files_that_are_not_readable_text() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(read_file(&tmp.path().join("none.json")).unwrap(), None);
    let err = read_file(tmp.path()).unwrap_err();
    assert!(matches!(err, ReadError::Unreadable(_)), "{err:?}");
    let bin = tmp.path().join("bin.json");
    std::fs::write(&bin, [0xff, 0xfe, 0]).unwrap();
    assert!(matches!(read_file(&bin).unwrap_err(), ReadError::Invalid(_)));
}
