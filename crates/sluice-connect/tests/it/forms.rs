//! Snapshots of every generated form (exact text), each parsed back by a real parser.

use std::path::Path;

use sluice_connect::*;

const BIN: &str = "/opt/Sluice/sluice";

fn ep(connection: Option<&'static str>) -> Endpoint<'static> {
    Endpoint { port: 4321, token: "slc_abc", binary: Path::new(BIN), connection, data_dir: None }
}

fn doc(client: Client, transport: Transport, e: &Endpoint<'_>) -> (String, TokenStorage) {
    let en = entry(client, transport, e).unwrap();
    (document(&en), en.storage)
}

/// Parses `text` with an independent parser of `client`'s format.
fn parse_back(client: Client, text: &str) -> serde_json::Value {
    match client.format().unwrap() {
        Format::Json => serde_json::from_str(text).unwrap(),
        Format::Jsonc => edit::parse(Format::Jsonc, text).unwrap(),
        Format::Toml => {
            let v: toml::Value = toml::from_str(text).unwrap();
            serde_json::to_value(v).unwrap()
        }
        Format::Yaml => {
            let docs = yaml_rust2::YamlLoader::load_from_str(text).unwrap();
            assert_eq!(docs.len(), 1);
            edit::parse(Format::Yaml, text).unwrap()
        }
    }
}

#[test]
fn claude_desktop_runs_sluice_stdio_by_absolute_path() {
    let (text, storage) = doc(Client::ClaudeDesktop, Transport::Stdio, &ep(None));
    assert_eq!(
        text,
        r#"{
  "mcpServers": {
    "sluice": {
      "command": "/opt/Sluice/sluice",
      "args": [
        "stdio"
      ],
      "env": {
        "SLUICE_TOKEN": "slc_abc"
      }
    }
  }
}
"#
    );
    assert_eq!(storage, TokenStorage::PlainInFile);
    let (text, storage) = doc(Client::ClaudeDesktop, Transport::Stdio, &ep(Some("claude-desktop")));
    assert_eq!(
        text,
        r#"{
  "mcpServers": {
    "sluice": {
      "command": "/opt/Sluice/sluice",
      "args": [
        "stdio",
        "--connection",
        "claude-desktop"
      ]
    }
  }
}
"#
    );
    assert_eq!(storage, TokenStorage::SluiceKeychain);
    assert!(!text.contains("slc_abc"));
    assert!(entry(Client::ClaudeDesktop, Transport::Http, &ep(None)).is_none(), "stdio only");
    let v = parse_back(Client::ClaudeDesktop, &text);
    assert_eq!(v["mcpServers"]["sluice"]["command"], BIN);
}

#[test]
fn windows_paths_are_escaped_by_the_json_and_toml_writers() {
    let e =
        Endpoint { binary: Path::new(r"C:\Program Files\Sluice\sluice.exe"), ..ep(Some("codex")) };
    let (json, _) = doc(Client::ClaudeDesktop, Transport::Stdio, &e);
    assert!(json.contains(r#""command": "C:\\Program Files\\Sluice\\sluice.exe""#), "{json}");
    let v = parse_back(Client::ClaudeDesktop, &json);
    assert_eq!(v["mcpServers"]["sluice"]["command"], r"C:\Program Files\Sluice\sluice.exe");
    let (toml, _) = doc(Client::Codex, Transport::Stdio, &e);
    let v = parse_back(Client::Codex, &toml);
    assert_eq!(v["mcp_servers"]["sluice"]["command"], r"C:\Program Files\Sluice\sluice.exe");
    let (yaml, _) = doc(Client::Goose, Transport::Stdio, &e);
    let v = parse_back(Client::Goose, &yaml);
    assert_eq!(v["extensions"]["sluice"]["cmd"], r"C:\Program Files\Sluice\sluice.exe");
}

#[test]
fn claude_code_command_line_and_json_form() {
    assert_eq!(
        claude_code_command(&ep(None)),
        "claude mcp add --transport http --scope user --header 'Authorization: Bearer slc_abc' sluice http://127.0.0.1:4321/mcp"
    );
    let (text, _) = doc(Client::ClaudeCode, Transport::Http, &ep(None));
    assert_eq!(
        text,
        r#"{
  "mcpServers": {
    "sluice": {
      "type": "http",
      "url": "http://127.0.0.1:4321/mcp",
      "headers": {
        "Authorization": "Bearer slc_abc"
      }
    }
  }
}
"#
    );
    parse_back(Client::ClaudeCode, &text);
    let (text, storage) = doc(Client::ClaudeCode, Transport::Stdio, &ep(Some("cc")));
    let v = parse_back(Client::ClaudeCode, &text);
    assert_eq!(v["mcpServers"]["sluice"]["type"], "stdio");
    assert_eq!(
        v["mcpServers"]["sluice"]["args"],
        serde_json::json!(["stdio", "--connection", "cc"])
    );
    assert_eq!(storage, TokenStorage::SluiceKeychain);
}

#[test]
fn cursor_file_and_install_link() {
    let (text, _) = doc(Client::Cursor, Transport::Http, &ep(None));
    assert_eq!(
        text,
        r#"{
  "mcpServers": {
    "sluice": {
      "url": "http://127.0.0.1:4321/mcp",
      "headers": {
        "Authorization": "Bearer slc_abc"
      }
    }
  }
}
"#
    );
    parse_back(Client::Cursor, &text);
    // The link never carries the token: an env reference, or the keychain-backed stdio form.
    let link = cursor_link(&ep(None));
    let prefix = "cursor://anysphere.cursor-deeplink/mcp/install?name=sluice&config=";
    assert!(link.starts_with(prefix), "{link}");
    let b64 = percent_encoding::percent_decode_str(&link[prefix.len()..]).decode_utf8().unwrap();
    use base64::Engine as _;
    let inner = base64::engine::general_purpose::STANDARD.decode(b64.as_bytes()).unwrap();
    let inner: serde_json::Value = serde_json::from_slice(&inner).unwrap();
    assert_eq!(
        inner,
        serde_json::json!({"url": "http://127.0.0.1:4321/mcp",
            "headers": {"Authorization": "Bearer ${env:SLUICE_TOKEN}"}})
    );
    assert!(!link.contains("slc_abc"));
    let link = cursor_link(&ep(Some("cursor")));
    let b64 = percent_encoding::percent_decode_str(&link[prefix.len()..]).decode_utf8().unwrap();
    let inner: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD.decode(b64.as_bytes()).unwrap(),
    )
    .unwrap();
    assert_eq!(
        inner,
        serde_json::json!({"type": "stdio", "command": BIN, "args": ["stdio", "--connection", "cursor"]})
    );
}

#[test]
fn vscode_prompts_for_the_token_and_its_link_matches() {
    let (text, storage) = doc(Client::VsCode, Transport::Http, &ep(None));
    assert_eq!(
        text,
        r#"{
  "inputs": [
    {
      "type": "promptString",
      "id": "sluice-token",
      "description": "Sluice access token",
      "password": true
    }
  ],
  "servers": {
    "sluice": {
      "type": "http",
      "url": "http://127.0.0.1:4321/mcp",
      "headers": {
        "Authorization": "Bearer ${input:sluice-token}"
      }
    }
  }
}
"#
    );
    assert_eq!(storage, TokenStorage::ClientPrompt);
    parse_back(Client::VsCode, &text);
    let link = vscode_link(&ep(None));
    let json =
        percent_encoding::percent_decode_str(link.strip_prefix("vscode:mcp/install?").unwrap())
            .decode_utf8()
            .unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["name"], "sluice");
    assert_eq!(v["type"], "http");
    assert_eq!(v["headers"]["Authorization"], "Bearer ${input:sluice-token}");
    assert_eq!(v["inputs"][0]["password"], true);
    assert!(!link.contains("slc_abc"));
    // stdio without a keychain entry: the prompt feeds SLUICE_TOKEN.
    let (text, storage) = doc(Client::VsCode, Transport::Stdio, &ep(None));
    let v = parse_back(Client::VsCode, &text);
    assert_eq!(v["servers"]["sluice"]["env"]["SLUICE_TOKEN"], "${input:sluice-token}");
    assert_eq!(storage, TokenStorage::ClientPrompt);
}

#[test]
fn every_install_link_shows_exactly_what_it_installs_and_never_the_token() {
    for (client, scheme) in [
        (Client::Cursor, "cursor://anysphere.cursor-deeplink/mcp/install?name=sluice&config="),
        (Client::VsCode, "vscode:mcp/install?"),
        (Client::VsCodeInsiders, "vscode-insiders:mcp/install?"),
    ] {
        for connection in [None, Some("c")] {
            let e = ep(connection);
            let link = install_link(client, &e).unwrap();
            assert!(link.url.starts_with(scheme), "{}", link.url);
            assert!(!link.url.contains("slc_abc") && !link.installs.contains("slc_abc"));
            // What is shown is what the link carries, decoded.
            let carried = percent_encoding::percent_decode_str(&link.url[scheme.len()..])
                .decode_utf8()
                .unwrap()
                .into_owned();
            let carried = if client == Client::Cursor {
                use base64::Engine as _;
                let raw = base64::engine::general_purpose::STANDARD.decode(carried).unwrap();
                String::from_utf8(raw).unwrap()
            } else {
                carried
            };
            assert_eq!(carried, link.installs, "{client:?}");
        }
    }
    // The snippet offers the same link.
    let snippet = snippet(Client::VsCodeInsiders, &ep(None));
    assert_eq!(snippet.link, install_link(Client::VsCodeInsiders, &ep(None)));
    for client in [Client::ClaudeCode, Client::Codex, Client::LmStudio, Client::Goose] {
        assert!(install_link(client, &ep(None)).is_none(), "{client:?}");
    }
}

#[test]
fn codex_names_the_variable_and_never_holds_the_token() {
    let (text, storage) = doc(Client::Codex, Transport::Http, &ep(None));
    assert_eq!(
        text,
        "[mcp_servers.sluice]\nurl = \"http://127.0.0.1:4321/mcp\"\nbearer_token_env_var = \"SLUICE_TOKEN\"\n"
    );
    assert_eq!(storage, TokenStorage::Environment);
    let v = parse_back(Client::Codex, &text);
    assert!(v["mcp_servers"]["sluice"].get("bearer_token").is_none(), "Codex rejects it");
    let (text, _) = doc(Client::Codex, Transport::Stdio, &ep(Some("codex")));
    assert_eq!(
        text,
        "[mcp_servers.sluice]\ncommand = \"/opt/Sluice/sluice\"\nargs = [\"stdio\", \"--connection\", \"codex\"]\n"
    );
    // One table, one transport: a stdio entry has no url and vice versa.
    let v = parse_back(Client::Codex, &text);
    assert!(v["mcp_servers"]["sluice"].get("url").is_none());
}

#[test]
fn windsurf_zed_and_goose() {
    let (text, _) = doc(Client::Windsurf, Transport::Http, &ep(None));
    assert_eq!(
        text,
        r#"{
  "mcpServers": {
    "sluice": {
      "serverUrl": "http://127.0.0.1:4321/mcp",
      "headers": {
        "Authorization": "Bearer slc_abc"
      }
    }
  }
}
"#
    );
    parse_back(Client::Windsurf, &text);
    let (text, _) = doc(Client::Zed, Transport::Http, &ep(None));
    assert_eq!(
        text,
        r#"{
  "context_servers": {
    "sluice": {
      "url": "http://127.0.0.1:4321/mcp",
      "headers": {
        "Authorization": "Bearer slc_abc"
      }
    }
  }
}
"#
    );
    parse_back(Client::Zed, &text);
    let (text, _) = doc(Client::Goose, Transport::Http, &ep(None));
    assert_eq!(
        text,
        "extensions:\n  sluice:\n    enabled: true\n    name: sluice\n    description: Your authorized projects, through Sluice\n    type: streamable_http\n    uri: http://127.0.0.1:4321/mcp\n    headers:\n      Authorization: Bearer slc_abc\n    timeout: 300\n"
    );
    let v = parse_back(Client::Goose, &text);
    assert_eq!(v["extensions"]["sluice"]["timeout"], 300);
    assert_eq!(v["extensions"]["sluice"]["enabled"], true);
    let (text, storage) = doc(Client::Goose, Transport::Stdio, &ep(Some("goose")));
    assert_eq!(
        text,
        "extensions:\n  sluice:\n    enabled: true\n    name: sluice\n    description: Your authorized projects, through Sluice\n    type: stdio\n    cmd: /opt/Sluice/sluice\n    args:\n      - stdio\n      - '--connection'\n      - goose\n    envs: {}\n    timeout: 300\n"
    );
    assert_eq!(storage, TokenStorage::SluiceKeychain);
    let v = parse_back(Client::Goose, &text);
    assert_eq!(
        v["extensions"]["sluice"]["args"],
        serde_json::json!(["stdio", "--connection", "goose"])
    );
}

#[test]
fn generic_entries_and_the_snippet_list() {
    let all = snippets(&ep(None));
    let ids: Vec<_> = all.iter().map(|s| s.client).collect();
    assert_eq!(
        ids,
        [
            "claude-code",
            "claude-desktop",
            "cursor",
            "vscode",
            "codex",
            "windsurf",
            "zed",
            "goose",
            "gemini",
            "qwen",
            "opencode",
            "copilot",
            "cline",
            "roo-code",
            "kilo-code",
            "crush",
            "kiro",
            "lm-studio",
            "junie",
            "augment",
            "vscode-insiders",
            "http",
            "stdio"
        ]
    );
    let get = |id: &str| all.iter().find(|s| s.client == id).unwrap();
    assert_eq!(
        get("http").text,
        "URL: http://127.0.0.1:4321/mcp\nHeader: Authorization: Bearer slc_abc\n"
    );
    assert_eq!(
        get("stdio").text,
        "command: /opt/Sluice/sluice\nargs: [\"stdio\"]\nenv: SLUICE_TOKEN=slc_abc\n"
    );
    // Which forms hold the token in plain text: what the window tells the user.
    let plain: Vec<_> = all.iter().filter(|s| s.storage.plain_text()).map(|s| s.client).collect();
    assert_eq!(
        plain,
        [
            "claude-code",
            "claude-desktop",
            "cursor",
            "windsurf",
            "zed",
            "goose",
            "copilot",
            "cline",
            "roo-code",
            "lm-studio",
            "junie",
            "augment",
            "stdio"
        ]
    );
    assert!(!get("vscode").holds_token && !get("codex").holds_token);
    assert!(get("cursor").holds_token);
    let with_keychain = snippets(&ep(Some("x")));
    let s = with_keychain.iter().find(|s| s.client == "stdio").unwrap();
    assert_eq!(s.text, "command: /opt/Sluice/sluice\nargs: [\"stdio\",\"--connection\",\"x\"]\n");
    assert!(!s.holds_token);
    for c in Client::ALL {
        assert_eq!(Client::parse(c.id()), Some(c));
    }
}

#[test]
fn a_non_default_data_folder_is_passed_to_sluice_stdio() {
    let e = Endpoint { data_dir: Some(Path::new("/data/sluice")), ..ep(Some("c")) };
    let en = entry(Client::ClaudeDesktop, Transport::Stdio, &e).unwrap();
    assert_eq!(
        en.value.get("args"),
        Some(&ConfigValue::strs(&["stdio", "--connection", "c", "--data-dir", "/data/sluice"]))
    );
}
