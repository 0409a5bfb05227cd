//! The writer on real temp files: other entries and comments survive, a backup is written,
//! unparseable files are left untouched, disconnect removes only Sluice's entry.

use std::path::{Path, PathBuf};

use sluice_connect::*;
use sluice_core::Coded;

fn ep() -> Endpoint<'static> {
    Endpoint {
        port: 4321,
        token: "slc_new",
        binary: Path::new("/opt/sluice"),
        connection: None,
        data_dir: None,
    }
}

fn entry_for(client: Client) -> Entry {
    entry(client, client.default_transport(), &ep()).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".bak-"))
        .collect();
    v.sort();
    v
}

#[test]
fn json_connect_keeps_other_servers_and_keys_and_writes_a_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let before = r#"{
  "numStartups": 12,
  "mcpServers": {
    "github": { "command": "gh-mcp", "args": ["serve"] }
  },
  "projects": { "/x": { "mcpServers": {} } }
}
"#;
    let path = write(tmp.path(), ".claude.json", before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let change = plan_connect(&entry_for(Client::ClaudeCode), &path).unwrap();
    assert!(change.diff().contains("+    \"sluice\": {"), "{}", change.diff());
    // Planning writes nothing.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    let applied = apply(&change).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(v["numStartups"], 12);
    assert_eq!(v["mcpServers"]["github"]["command"], "gh-mcp");
    assert_eq!(v["mcpServers"]["sluice"]["headers"]["Authorization"], "Bearer slc_new");
    assert_eq!(v["projects"]["/x"]["mcpServers"], serde_json::json!({}));
    // The untouched part is byte-for-byte the same.
    assert!(after.starts_with("{\n  \"numStartups\": 12,\n  \"mcpServers\": {\n    \"github\": { \"command\": \"gh-mcp\", \"args\": [\"serve\"] },"), "{after}");
    let backup = applied.backup.unwrap();
    assert_eq!(backups(tmp.path()), vec![backup.clone()]);
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // The file now holds a token in plain text: owner-only. The backup keeps the old mode.
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&backup), 0o640);
    }

    // Connecting again replaces Sluice's entry only; disconnecting removes only it.
    let again = plan_connect(&entry_for(Client::ClaudeCode), &path).unwrap();
    assert!(again.is_noop());
    let gone = plan_disconnect(Client::ClaudeCode, &path).unwrap();
    apply(&gone).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(v["mcpServers"].get("sluice").is_none());
    assert_eq!(v["mcpServers"]["github"]["args"][0], "serve");
    assert_eq!(v["numStartups"], 12);
    assert!(plan_disconnect(Client::ClaudeCode, &path).unwrap().is_noop());
}

#[test]
fn jsonc_keeps_comments_and_trailing_commas_and_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let before = r#"// My VS Code MCP servers
{
  /* prompts */
  "inputs": [
    { "type": "promptString", "id": "gh", "password": true }, // github
  ],
  "servers": {
    // the GitHub server
    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" },
  },
}
"#;
    let path = write(tmp.path(), "mcp.json", before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let change = plan_connect(&entry_for(Client::VsCode), &path).unwrap();
    apply(&change).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "no token in the file: its permissions are kept");
    }
    let after = std::fs::read_to_string(&path).unwrap();
    for comment in
        ["// My VS Code MCP servers", "/* prompts */", "// github", "// the GitHub server"]
    {
        assert!(after.contains(comment), "{comment} lost:\n{after}");
    }
    assert!(serde_json::from_str::<serde_json::Value>(&after).is_err(), "still JSONC");
    let v = edit::parse(Format::Jsonc, &after).unwrap();
    assert_eq!(v["servers"]["github"]["url"], "https://api.githubcopilot.com/mcp/");
    assert_eq!(v["servers"]["sluice"]["headers"]["Authorization"], "Bearer ${input:sluice-token}");
    let ids: Vec<_> = v["inputs"].as_array().unwrap().iter().map(|i| i["id"].clone()).collect();
    assert_eq!(ids, ["gh", "sluice-token"]);
    assert!(!after.contains("slc_new"), "VS Code prompts for the token");
    // Connecting twice adds no second input.
    assert!(plan_connect(&entry_for(Client::VsCode), &path).unwrap().is_noop());

    apply(&plan_disconnect(Client::VsCode, &path).unwrap()).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    let v = edit::parse(Format::Jsonc, &after).unwrap();
    assert!(v["servers"].get("sluice").is_none());
    let ids: Vec<_> = v["inputs"].as_array().unwrap().iter().map(|i| i["id"].clone()).collect();
    assert_eq!(ids, ["gh"]);
    assert!(after.contains("// the GitHub server") && after.contains("// My VS Code MCP servers"));
}

#[test]
fn zed_settings_keep_everything_else() {
    let tmp = tempfile::tempdir().unwrap();
    let before =
        "// Zed settings\n{\n  \"theme\": \"One Dark\", // dark\n  \"vim_mode\": true\n}\n";
    let path = write(tmp.path(), "settings.json", before);
    apply(&plan_connect(&entry_for(Client::Zed), &path).unwrap()).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("// Zed settings") && after.contains("// dark"), "{after}");
    let v = edit::parse(Format::Jsonc, &after).unwrap();
    assert_eq!(v["theme"], "One Dark");
    assert_eq!(v["context_servers"]["sluice"]["url"], "http://127.0.0.1:4321/mcp");
}

#[test]
fn codex_toml_keeps_comments_and_other_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let before = "# Codex config\nmodel = \"o4\" # the model\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # docs\nargs = [\"--stdio\"]\n\n[profiles.fast]\nmodel = \"mini\"\n";
    let path = write(tmp.path(), "config.toml", before);
    let http = entry(Client::Codex, Transport::Http, &ep()).unwrap();
    apply(&plan_connect(&http, &path).unwrap()).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    // The new table sits with the other servers; every other byte is unchanged.
    let expected = before.replace(
        "args = [\"--stdio\"]\n\n",
        "args = [\"--stdio\"]\n\n[mcp_servers.sluice]\nurl = \"http://127.0.0.1:4321/mcp\"\nbearer_token_env_var = \"SLUICE_TOKEN\"\n\n",
    );
    assert_eq!(after, expected);
    let v: toml::Value = toml::from_str(&after).unwrap();
    assert_eq!(v["mcp_servers"]["docs"]["command"].as_str(), Some("docs-mcp"));
    assert_eq!(v["profiles"]["fast"]["model"].as_str(), Some("mini"));
    apply(&plan_disconnect(Client::Codex, &path).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

/// Sluice's HTTP entry for Goose as `yaml-edit` writes it, its key at `indent` spaces.
fn goose_http_block(indent: usize) -> String {
    let body = "sluice:\n  enabled: true\n  name: sluice\n  description: Your authorized projects, through Sluice\n  type: streamable_http\n  uri: http://127.0.0.1:4321/mcp\n  headers:\n    Authorization: Bearer slc_new\n  timeout: 300\n";
    let pad = " ".repeat(indent);
    body.lines().map(|l| format!("{pad}{l}\n")).collect()
}

#[test]
fn goose_yaml_keeps_other_extensions_and_comments_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let before = "# goose\nGOOSE_PROVIDER: openai\nextensions:\n    developer:\n        bundled: true\n        enabled: true # builtin\n        name: developer\n        type: builtin\n    # memory below\n    memory:\n        enabled: false\n        type: builtin\nGOOSE_MODEL: gpt-4o\n";
    let path = write(tmp.path(), "config.yaml", before);
    let change = plan_connect(&entry_for(Client::Goose), &path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before, "planning writes nothing");
    apply(&change).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    // The entry is appended to `extensions:` at its keys' column; not another byte changes.
    let (head, tail) = before.split_at(before.find("GOOSE_MODEL").unwrap());
    assert_eq!(after, format!("{head}{}{tail}", goose_http_block(4)));
    let v = edit::parse(Format::Yaml, &after).unwrap();
    assert_eq!(v["GOOSE_MODEL"], "gpt-4o");
    assert_eq!(v["extensions"]["developer"]["type"], "builtin");
    assert_eq!(v["extensions"]["memory"]["enabled"], false);
    assert_eq!(v["extensions"]["sluice"]["uri"], "http://127.0.0.1:4321/mcp");
    assert_eq!(v["extensions"]["sluice"]["timeout"], 300);
    // Connecting again is a no-op.
    assert!(plan_connect(&entry_for(Client::Goose), &path).unwrap().is_noop());

    // Replace in place (stdio), then remove: the file comes back as it was.
    let stdio =
        entry(Client::Goose, Transport::Stdio, &Endpoint { connection: Some("goose"), ..ep() })
            .unwrap();
    apply(&plan_connect(&stdio, &path).unwrap()).unwrap();
    let replaced = std::fs::read_to_string(&path).unwrap();
    assert!(replaced.starts_with(head) && replaced.ends_with(tail), "{replaced}");
    assert!(!replaced.contains("streamable_http") && !replaced.contains("slc_new"), "{replaced}");
    let v = edit::parse(Format::Yaml, &replaced).unwrap();
    assert_eq!(v["extensions"]["sluice"]["type"], "stdio");
    assert_eq!(
        v["extensions"]["sluice"]["args"],
        serde_json::json!(["stdio", "--connection", "goose"])
    );
    assert_eq!(v["extensions"]["sluice"]["envs"], serde_json::json!({}));
    assert!(plan_connect(&stdio, &path).unwrap().is_noop());
    apply(&plan_disconnect(Client::Goose, &path).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    assert!(plan_disconnect(Client::Goose, &path).unwrap().is_noop());
}

#[test]
fn goose_yaml_replaces_and_removes_only_its_own_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let others_head = "# Goose config\nGOOSE_PROVIDER: \"openai\"   # quoted on purpose\nextensions:\n  developer:\n    enabled: true\n    type: builtin\n  # Sluice, added last week\n";
    let old_ours =
        "  sluice:\n    enabled: false # off for now\n    type: sse\n    uri: 'http://old'\n";
    let others_tail = "  memory: {enabled: false, type: builtin}  # flow entry\n  'quoted-key':\n    args: [a, \"b\"]\n    cmd: |\n      run\n      it\nGOOSE_MODEL: gpt-4o\n";
    let before = format!("{others_head}{old_ours}{others_tail}");
    let path = write(tmp.path(), "config.yaml", &before);
    apply(&plan_connect(&entry_for(Client::Goose), &path).unwrap()).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    // Replaced where it was; everything around it byte-for-byte.
    assert_eq!(after, format!("{others_head}{}{others_tail}", goose_http_block(2)));
    let v = edit::parse(Format::Yaml, &after).unwrap();
    assert_eq!(v["extensions"]["quoted-key"]["cmd"], "run\nit\n");
    assert_eq!(v["extensions"]["memory"]["type"], "builtin");
    // Disconnect removes only Sluice's entry.
    apply(&plan_disconnect(Client::Goose, &path).unwrap()).unwrap();
    let removed = std::fs::read_to_string(&path).unwrap();
    assert_eq!(removed, format!("{others_head}{others_tail}"));
    let v = edit::parse(Format::Yaml, &removed).unwrap();
    let names: Vec<_> = v["extensions"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(names, ["developer", "memory", "quoted-key"]);
}

#[test]
fn goose_yaml_new_empty_and_crlf_files() {
    let tmp = tempfile::tempdir().unwrap();
    // No file yet: the snippet itself is written.
    let path = tmp.path().join("goose/config.yaml");
    apply(&plan_connect(&entry_for(Client::Goose), &path).unwrap()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, format!("extensions:\n{}", goose_http_block(2)));
    assert_eq!(text, document(&entry_for(Client::Goose)));

    // An empty file, a comment-only file, no `extensions` yet, `extensions: {}`.
    for (name, before, expected) in [
        ("empty.yaml", "", format!("extensions:\n{}", goose_http_block(2))),
        (
            "comment.yaml",
            "# nothing yet\n",
            format!("# nothing yet\nextensions:\n{}", goose_http_block(2)),
        ),
        (
            "new.yaml",
            "GOOSE_PROVIDER: openai\n",
            format!("GOOSE_PROVIDER: openai\nextensions:\n{}", goose_http_block(2)),
        ),
        (
            "braces.yaml",
            "extensions: {}\nGOOSE_MODEL: x\n",
            format!("extensions:\n{}GOOSE_MODEL: x\n", goose_http_block(2)),
        ),
    ] {
        let path = write(tmp.path(), name, before);
        apply(&plan_connect(&entry_for(Client::Goose), &path).unwrap()).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert_eq!(after, expected, "{name}");
        let v = edit::parse(Format::Yaml, &after).unwrap();
        assert_eq!(v["extensions"]["sluice"]["name"], "sluice", "{name}");
        assert!(plan_connect(&entry_for(Client::Goose), &path).unwrap().is_noop(), "{name}");
        // Removing the only extension leaves an empty mapping, which Goose reads.
        apply(&plan_disconnect(Client::Goose, &path).unwrap()).unwrap();
        let gone = std::fs::read_to_string(&path).unwrap();
        assert_eq!(edit::parse(Format::Yaml, &gone).unwrap()["extensions"], serde_json::json!({}));
        assert!(gone.contains("extensions: {}\n"), "{name}: {gone}");
    }

    // Windows line endings stay Windows line endings, the new lines included.
    let before = "GOOSE_PROVIDER: openai\r\nextensions:\r\n  developer:\r\n    enabled: true\r\n";
    let path = write(tmp.path(), "crlf.yaml", before);
    apply(&plan_connect(&entry_for(Client::Goose), &path).unwrap()).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    assert_eq!(after, format!("{before}{}", goose_http_block(2).replace('\n', "\r\n")));
    apply(&plan_disconnect(Client::Goose, &path).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn goose_yaml_it_cannot_edit_safely_is_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        // A flow mapping with content is refused, not mangled.
        ("flow.yaml", "extensions: {developer: {enabled: true}}\n", "config_unsafe_edit"),
        // Adding to an anchored mapping would change its alias too.
        (
            "alias.yaml",
            "extensions: &x\n  developer:\n    enabled: true\nother: *x\n",
            "config_unsafe_edit",
        ),
        ("scalar.yaml", "extensions: none\n", "config_unparseable"),
        ("list.yaml", "extensions:\n  - developer\n", "config_unparseable"),
        ("docs.yaml", "extensions: {}\n---\nextensions: {}\n", "config_unparseable"),
        ("top.yaml", "- extensions\n", "config_unparseable"),
        ("tabs.yaml", "extensions:\n\tdeveloper: {}\n", "config_unparseable"),
    ];
    for (name, text, code) in cases {
        let path = write(tmp.path(), name, text);
        let err = plan_connect(&entry_for(Client::Goose), &path).unwrap_err();
        assert_eq!(err.code().as_str(), code, "{name}: {err}");
        assert!(
            err.to_string().contains(if code == "config_unsafe_edit" {
                "add the snippet by hand"
            } else {
                "left untouched"
            }),
            "{name}: {err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{name}");
    }
    assert!(backups(tmp.path()).is_empty());
}

#[test]
fn unparseable_files_are_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (Client::ClaudeDesktop, "claude_desktop_config.json", "{ \"mcpServers\": { \"a\": 1, } }"),
        (Client::Cursor, "mcp.json", "{ // comment\n}"),
        (Client::Cursor, "top.json", "[1, 2]"),
        (Client::Cursor, "servers.json", "{\"mcpServers\": [1]}"),
        (Client::VsCode, "vs.json", "{ \"servers\": { "),
        (Client::Codex, "config.toml", "[mcp_servers\nx = 1"),
        (Client::Goose, "config.yaml", "extensions:\n  a: [1, 2\n"),
    ];
    for (client, name, text) in cases {
        let path = write(tmp.path(), name, text);
        let err = plan_connect(&entry_for(client), &path).unwrap_err();
        assert!(
            matches!(err.code().as_str(), "config_unparseable"),
            "{name}: {err} ({})",
            err.code()
        );
        assert!(err.to_string().contains("left untouched"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    assert!(backups(tmp.path()).is_empty());
}

#[test]
fn a_missing_file_is_created_owner_only_with_its_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("Claude/claude_desktop_config.json");
    let e = entry_for(Client::ClaudeDesktop);
    let change = plan_connect(&e, &path).unwrap();
    assert_eq!(change.before, None);
    assert!(change.diff().starts_with("--- /dev/null\n"));
    let applied = apply(&change).unwrap();
    assert_eq!(applied.backup, None);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["sluice"]["command"], "/opt/sluice");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}

#[test]
fn a_file_changed_after_the_preview_is_not_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write(tmp.path(), "mcp.json", "{}\n");
    let change = plan_connect(&entry_for(Client::Cursor), &path).unwrap();
    std::fs::write(&path, "{\"mcpServers\": {\"new\": {}}}\n").unwrap();
    let err = apply(&change).unwrap_err();
    assert_eq!(err.code().as_str(), "config_changed");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"mcpServers\": {\"new\": {}}}\n");
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_is_edited_through_the_link() {
    let tmp = tempfile::tempdir().unwrap();
    let real = write(tmp.path(), "real.json", "{\"mcpServers\": {}}\n");
    let link = tmp.path().join("mcp.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    apply(&plan_connect(&entry_for(Client::Cursor), &link).unwrap()).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("\"sluice\""));
}
