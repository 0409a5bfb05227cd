//! The clients added for issue 16 and the defaults: each client's exact entry (as its own
//! documentation, schema or `mcp add` command writes it), its file on every OS, and where the
//! token ends up — never in the file for a default `sluice connect`.

use std::path::Path;

use sluice_connect::*;

const BIN: &str = "/opt/Sluice/sluice";

fn ep(connection: Option<&'static str>) -> Endpoint<'static> {
    Endpoint { port: 4321, token: "slc_abc", binary: Path::new(BIN), connection, data_dir: None }
}

fn json(client: Client, transport: Transport, e: &Endpoint<'_>) -> serde_json::Value {
    let en = entry(client, transport, e).unwrap();
    edit::parse(client.format().unwrap(), &document(&en)).unwrap()
}

const KEYCHAIN_ARGS: [&str; 3] = ["stdio", "--connection", "c"];

#[test]
fn codex_defaults_to_sluice_stdio_with_the_token_in_the_keychain() {
    assert_eq!(Client::Codex.default_transport(), Transport::Stdio);
    let en = entry(Client::Codex, Transport::Stdio, &ep(Some("codex"))).unwrap();
    assert_eq!(en.storage, TokenStorage::SluiceKeychain);
    assert_eq!(
        document(&en),
        "[mcp_servers.sluice]\ncommand = \"/opt/Sluice/sluice\"\nargs = [\"stdio\", \"--connection\", \"codex\"]\n"
    );
    // The HTTP form stays available, and still names the variable only.
    let http = entry(Client::Codex, Transport::Http, &ep(None)).unwrap();
    assert_eq!(http.storage, TokenStorage::Environment);
    assert!(!document(&http).contains("slc_abc"));
    // A snippet made without a keychain entry (`token create --client codex`) keeps the
    // token out of the file too: the HTTP form, not a stdio entry with the token in `env`.
    let s = snippet(Client::Codex, &ep(None));
    assert!(!s.holds_token && s.text.contains("bearer_token_env_var"), "{}", s.text);
    assert_eq!(
        s.note,
        Some("Set SLUICE_TOKEN to the token in the environment the client starts from.")
    );
}

/// What `sluice connect CLIENT` writes by default never holds the token: the keychain-backed
/// stdio form, VS Code's prompt, or (for the older HTTP defaults) what they always wrote.
#[test]
fn every_client_with_a_file_has_a_default_form_a_path_and_a_snippet() {
    let older_plain_http =
        [Client::ClaudeCode, Client::Cursor, Client::Windsurf, Client::Zed, Client::Goose];
    for client in Client::ALL {
        let s = snippet(client, &ep(None));
        assert_eq!(s.client, client.id());
        assert!(!s.text.is_empty(), "{client:?}");
        let Some(format) = client.format() else {
            assert!(paths::candidates(client, Os::Linux, &Dirs::home("/h")).is_empty());
            continue;
        };
        let transport = client.default_transport();
        let connection = (transport == Transport::Stdio).then_some("c");
        let en = entry(client, transport, &ep(connection))
            .unwrap_or_else(|| panic!("{client:?} has no default form"));
        let text = document(&en);
        let parsed = edit::parse(format, &text).unwrap_or_else(|e| panic!("{client:?}: {e}"));
        assert!(parsed[client.servers_key()]["sluice"].is_object(), "{client:?}: {text}");
        if !older_plain_http.contains(&client) {
            assert!(!en.storage.plain_text(), "{client:?} writes the token: {text}");
            assert!(!text.contains("slc_abc"), "{client:?}: {text}");
        }
        if transport == Transport::Stdio {
            let (program, args) = en.command_line().unwrap();
            assert_eq!(program, BIN, "{client:?}");
            assert_eq!(args, KEYCHAIN_ARGS, "{client:?}");
        }
        for os in [Os::Linux, Os::MacOs, Os::Windows] {
            let c = paths::candidates(client, os, &Dirs::home("/h"));
            assert!(!c.is_empty(), "{client:?} on {os:?}");
        }
        assert_eq!(Client::parse(client.id()), Some(client));
    }
    assert!(entry(Client::Junie, Transport::Http, &ep(None)).is_none(), "Junie: stdio only");
    assert_eq!(Client::parse("amazon-q"), Some(Client::Kiro));
    assert_eq!(Client::parse("auggie"), Some(Client::Augment));
}

#[test]
fn gemini_and_qwen_use_mcp_servers_and_http_url() {
    for client in [Client::GeminiCli, Client::QwenCode] {
        let en = entry(client, Transport::Stdio, &ep(Some("c"))).unwrap();
        assert_eq!(
            document(&en),
            "{\n  \"mcpServers\": {\n    \"sluice\": {\n      \"command\": \"/opt/Sluice/sluice\",\n      \"args\": [\n        \"stdio\",\n        \"--connection\",\n        \"c\"\n      ]\n    }\n  }\n}\n"
        );
        // `url` would mean SSE to them; the header is a reference they expand.
        let v = json(client, Transport::Http, &ep(None));
        assert_eq!(
            v["mcpServers"]["sluice"],
            serde_json::json!({"httpUrl": "http://127.0.0.1:4321/mcp",
                "headers": {"Authorization": "Bearer ${SLUICE_TOKEN}"}})
        );
    }
}

#[test]
fn opencode_and_kilo_code_take_one_command_list_under_mcp() {
    for client in [Client::OpenCode, Client::KiloCode] {
        let v = json(client, Transport::Stdio, &ep(Some("c")));
        assert_eq!(
            v["mcp"]["sluice"],
            serde_json::json!({"type": "local",
                "command": [BIN, "stdio", "--connection", "c"], "enabled": true})
        );
        let v = json(client, Transport::Stdio, &ep(None));
        assert_eq!(v["mcp"]["sluice"]["environment"]["SLUICE_TOKEN"], "slc_abc");
        let v = json(client, Transport::Http, &ep(None));
        assert_eq!(
            v["mcp"]["sluice"],
            serde_json::json!({"type": "remote", "url": "http://127.0.0.1:4321/mcp",
                "headers": {"Authorization": "Bearer {env:SLUICE_TOKEN}"}, "enabled": true})
        );
    }
}

#[test]
fn copilot_cline_roo_crush_kiro_lm_studio_junie_augment() {
    let e = ep(Some("c"));
    let server = |c: Client, t: Transport, e: &Endpoint<'_>| {
        json(c, t, e)[c.servers_key()]["sluice"].clone()
    };
    // As `copilot mcp add sluice -- BIN ARGS…` writes it.
    assert_eq!(
        server(Client::CopilotCli, Transport::Stdio, &e),
        serde_json::json!({"type": "local", "command": BIN, "args": KEYCHAIN_ARGS, "tools": ["*"]})
    );
    assert_eq!(
        server(Client::CopilotCli, Transport::Http, &ep(None))["headers"]["Authorization"],
        "Bearer slc_abc"
    );
    assert_eq!(
        server(Client::Cline, Transport::Stdio, &e),
        serde_json::json!({"type": "stdio", "command": BIN, "args": KEYCHAIN_ARGS})
    );
    assert_eq!(server(Client::Cline, Transport::Http, &e)["type"], "streamableHttp");
    assert_eq!(
        server(Client::RooCode, Transport::Stdio, &e),
        serde_json::json!({"command": BIN, "args": KEYCHAIN_ARGS})
    );
    assert_eq!(server(Client::RooCode, Transport::Http, &e)["type"], "streamable-http");
    assert_eq!(
        server(Client::Crush, Transport::Stdio, &e),
        serde_json::json!({"type": "stdio", "command": BIN, "args": KEYCHAIN_ARGS})
    );
    assert_eq!(
        server(Client::Crush, Transport::Http, &ep(None)),
        serde_json::json!({"type": "http", "url": "http://127.0.0.1:4321/mcp",
            "headers": {"Authorization": "Bearer $SLUICE_TOKEN"}})
    );
    assert_eq!(
        server(Client::Kiro, Transport::Http, &ep(None))["headers"]["Authorization"],
        "Bearer ${SLUICE_TOKEN}"
    );
    for c in [Client::Kiro, Client::LmStudio, Client::Junie] {
        assert_eq!(
            server(c, Transport::Stdio, &e),
            serde_json::json!({"command": BIN, "args": KEYCHAIN_ARGS}),
            "{c:?}"
        );
    }
    // As `auggie mcp add sluice --command BIN --args "…"` writes it (without its empty env).
    assert_eq!(
        server(Client::Augment, Transport::Stdio, &e),
        serde_json::json!({"type": "stdio", "command": BIN, "args": KEYCHAIN_ARGS})
    );
    // VS Code Insiders is VS Code's format in another folder.
    let insiders = entry(Client::VsCodeInsiders, Transport::Http, &ep(None)).unwrap();
    let vscode = entry(Client::VsCode, Transport::Http, &ep(None)).unwrap();
    assert_eq!((insiders.value, insiders.input), (vscode.value, vscode.input));
}

#[test]
fn the_new_clients_files_per_os() {
    let d = Dirs::home("/home/ann");
    let one = |client: Client, os: Os| {
        paths::candidates(client, os, &d)[0].to_string_lossy().replace('\\', "/")
    };
    let table = [
        (Client::GeminiCli, Os::Windows, "/home/ann/.gemini/settings.json"),
        (Client::QwenCode, Os::Linux, "/home/ann/.qwen/settings.json"),
        (Client::OpenCode, Os::MacOs, "/home/ann/.config/opencode/opencode.json"),
        (Client::OpenCode, Os::Windows, "/home/ann/.config/opencode/opencode.json"),
        (Client::KiloCode, Os::Linux, "/home/ann/.config/kilo/kilo.jsonc"),
        (Client::CopilotCli, Os::Linux, "/home/ann/.copilot/mcp-config.json"),
        (Client::Cline, Os::MacOs, "/home/ann/.cline/data/settings/cline_mcp_settings.json"),
        (
            Client::RooCode,
            Os::Linux,
            "/home/ann/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ),
        (
            Client::RooCode,
            Os::MacOs,
            "/home/ann/Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ),
        (Client::Crush, Os::Linux, "/home/ann/.config/crush/crush.json"),
        (Client::Crush, Os::Windows, "/home/ann/AppData/Local/crush/crush.json"),
        (Client::Kiro, Os::Linux, "/home/ann/.kiro/settings/mcp.json"),
        (Client::LmStudio, Os::Windows, "/home/ann/.lmstudio/mcp.json"),
        (Client::Junie, Os::MacOs, "/home/ann/.junie/mcp/mcp.json"),
        (Client::Augment, Os::Linux, "/home/ann/.augment/settings.json"),
        (Client::VsCodeInsiders, Os::Linux, "/home/ann/.config/Code - Insiders/User/mcp.json"),
        (
            Client::VsCodeInsiders,
            Os::Windows,
            "/home/ann/AppData/Roaming/Code - Insiders/User/mcp.json",
        ),
    ];
    for (client, os, want) in table {
        assert_eq!(one(client, os), want, "{client:?} on {os:?}");
    }
    // An older Cline extension's file is used when it is the one that exists.
    let tmp = tempfile::tempdir().unwrap();
    let d = Dirs::home(tmp.path());
    let old = tmp.path().join(
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    );
    assert_eq!(
        paths::locate(Client::Cline, Os::Linux, &d).unwrap(),
        tmp.path().join(".cline/data/settings/cline_mcp_settings.json")
    );
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::write(&old, "{}").unwrap();
    assert_eq!(paths::locate(Client::Cline, Os::Linux, &d).unwrap(), old);
}

#[test]
fn an_opencode_file_keeps_its_comments_schema_and_other_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("opencode.json");
    let before = "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // mine\n  \"mcp\": {\n    \"docs\": { \"type\": \"remote\", \"url\": \"https://docs.example/mcp\" },\n  },\n  \"theme\": \"opencode\"\n}\n";
    std::fs::write(&path, before).unwrap();
    let en = entry(Client::OpenCode, Transport::Stdio, &ep(Some("opencode"))).unwrap();
    apply(&plan_connect(&en, &path).unwrap()).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("// mine") && after.contains("\"theme\": \"opencode\""), "{after}");
    let v = edit::parse(Format::Jsonc, &after).unwrap();
    assert_eq!(v["mcp"]["docs"]["url"], "https://docs.example/mcp");
    assert_eq!(v["mcp"]["sluice"]["command"][0], BIN);
    apply(&plan_disconnect(Client::OpenCode, &path).unwrap()).unwrap();
    let v = edit::parse(Format::Jsonc, &std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(v["mcp"].get("sluice").is_none() && v["mcp"]["docs"].is_object());
}
