//! One-click Connect through the window's commands: real client config files under a temp
//! home folder, a real engine serving MCP on loopback, and the connection check's real
//! `initialize` + `list_projects` made with the token Connect created.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_engine::clients::Dirs;
use sluice_engine::{Engine, EngineConfig, SecretPreference};
use sluice_ipc::*;
use tokio_util::sync::CancellationToken;

/// A Cursor config the user already has, with another server and a key Sluice knows nothing
/// about.
const CURSOR_BEFORE: &str = r#"{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example" }
    }
  },
  "someCursorSetting": true
}
"#;

struct Served {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    engine: Arc<Engine>,
    ctx: Context,
    connector: Connector,
    _rt: tokio::runtime::Runtime,
    stop: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// An engine with one project, serving MCP on a free loopback port exactly as the app does
/// (`sluice_mcp::bind` + `router` + `serve`), and a Connector rooted in a temp home folder.
fn served() -> Served {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let folder = tmp.path().join("my-app");
    std::fs::create_dir(&folder).unwrap();
    let engine = Arc::new(
        Engine::open(&EngineConfig::new(tmp.path().join("data"), SecretPreference::FileOnly))
            .unwrap(),
    );
    add_project(
        &engine,
        AddProject {
            path: folder.display().to_string(),
            name: None,
            access: Access::ReadOnly,
            exec: Exec::Off,
        },
    )
    .unwrap();
    let rt = sluice_mcp::runtime().unwrap();
    let stop = CancellationToken::new();
    let listener = rt.block_on(sluice_mcp::bind(0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let router =
        sluice_mcp::router(engine.clone(), port, sluice_mcp::Limits::default(), stop.clone());
    rt.spawn(sluice_mcp::serve(listener, router, stop.clone()));
    let ctx =
        Context { port, sluice_binary: PathBuf::from("/opt/sluice/sluice"), version: "9".into() };
    let connector = Connector::with_dirs(Dirs::home(&home));
    Served { _tmp: tmp, home, engine, ctx, connector, _rt: rt, stop }
}

fn cursor_file(home: &Path) -> PathBuf {
    home.join(".cursor").join("mcp.json")
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn client<'a>(list: &'a [ClientDto], id: &str) -> &'a ClientDto {
    list.iter().find(|c| c.client == id).unwrap()
}

#[test]
fn connect_cursor_keeps_the_other_server_writes_a_backup_and_the_check_passes() {
    let s = served();
    let file = cursor_file(&s.home);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, CURSOR_BEFORE).unwrap();

    let list = s.connector.list(&s.engine, &s.ctx).unwrap();
    let cursor = client(&list, "cursor");
    assert!(cursor.has_config && cursor.config_found && !cursor.connected, "{cursor:?}");
    assert_eq!(cursor.config_path.as_deref(), Some(file.display().to_string().as_str()));
    assert!(cursor.plain_text, "Cursor's file holds the token in plain text");
    assert!(!client(&list, "vscode").plain_text, "VS Code prompts for it");
    assert!(!client(&list, "http").has_config);

    let preview = s.connector.connect_preview(&s.engine, &s.ctx, "cursor").unwrap();
    assert_eq!(preview.path, file.display().to_string());
    assert!(preview.file_exists && !preview.noop && preview.plain_text);
    assert!(preview.diff.contains("+    \"sluice\": {"), "{}", preview.diff);
    assert!(preview.diff.contains(sluice_engine::clients::TOKEN_PLACEHOLDER));
    assert!(
        !preview.diff.lines().any(|l| l.starts_with('-') && !l.starts_with("---")),
        "connecting removes no line:\n{}",
        preview.diff
    );
    assert!(s.engine.tokens().unwrap().is_empty(), "a preview creates no token");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), CURSOR_BEFORE, "a preview writes nothing");

    let done = s.connector.connect_apply(&s.engine, &preview.id).unwrap();
    assert!(done.check.ok, "{:?}", done.check);
    assert_eq!(done.check.message, "list_projects answered, 1 project(s) visible");
    assert!(done.plain_text && done.secret.is_none(), "Cursor needs nothing pasted");
    assert_eq!(done.token_label.as_deref(), Some("Cursor (sluice connect)"));

    // Both servers are in the file; only Sluice's entry is new.
    let after = json(&file);
    let before: serde_json::Value = serde_json::from_str(CURSOR_BEFORE).unwrap();
    assert_eq!(after["mcpServers"]["github"], before["mcpServers"]["github"]);
    assert_eq!(after["someCursorSetting"], true);
    let sluice = &after["mcpServers"]["sluice"];
    assert_eq!(sluice["url"], format!("http://127.0.0.1:{}/mcp", s.ctx.port));
    let bearer = sluice["headers"]["Authorization"].as_str().unwrap();
    let token = bearer.strip_prefix("Bearer ").unwrap();
    assert!(s.engine.authenticate(token).is_ok(), "the written token is the engine's");
    // The previous file is kept next to it, byte for byte.
    let backup = PathBuf::from(done.backup.as_deref().unwrap());
    assert_eq!(backup.parent(), file.parent());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), CURSOR_BEFORE);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "a file holding the token is owner-only: {mode:o}");
    }
    assert!(client(&s.connector.list(&s.engine, &s.ctx).unwrap(), "cursor").connected);

    // A preview is used once.
    let again = s.connector.connect_apply(&s.engine, &preview.id).unwrap_err();
    assert_eq!(again.code, "preview_not_found");

    // Disconnect removes Sluice's entry and nothing else.
    let off = s.connector.disconnect_preview(&s.engine, "cursor").unwrap();
    assert!(!off.noop && off.storage.is_none());
    assert!(off.diff.contains("-    \"sluice\": {"), "{}", off.diff);
    // A connect id is not a disconnect id, and the other way round.
    assert_eq!(
        s.connector.connect_apply(&s.engine, &off.id).unwrap_err().code,
        "preview_not_found"
    );
    let gone = s.connector.disconnect_apply(&s.engine, &off.id).unwrap();
    assert!(gone.removed && gone.backup.is_some());
    let after = json(&file);
    assert_eq!(after["mcpServers"]["github"], before["mcpServers"]["github"]);
    assert!(after["mcpServers"].get("sluice").is_none());
    assert!(!client(&s.connector.list(&s.engine, &s.ctx).unwrap(), "cursor").connected);
}

#[test]
fn a_file_changed_since_the_preview_is_left_alone_and_no_token_survives() {
    let s = served();
    let file = cursor_file(&s.home);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, CURSOR_BEFORE).unwrap();
    let preview = s.connector.connect_preview(&s.engine, &s.ctx, "cursor").unwrap();
    let edited = CURSOR_BEFORE.replace("true", "false");
    std::fs::write(&file, &edited).unwrap();
    let err = s.connector.connect_apply(&s.engine, &preview.id).unwrap_err();
    assert_eq!(err.code, "config_changed", "{err:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    let tokens = s.engine.tokens().unwrap();
    assert!(tokens.iter().all(|t| t.revoked_ms.is_some()), "the token made for it is revoked");
}

#[test]
fn a_file_that_does_not_parse_is_reported_and_never_written() {
    let s = served();
    let file = cursor_file(&s.home);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let broken = "{ \"mcpServers\": { \"github\": ";
    std::fs::write(&file, broken).unwrap();
    let cursor = s.connector.list(&s.engine, &s.ctx).unwrap();
    let cursor = client(&cursor, "cursor");
    assert!(cursor.config_found && !cursor.connected);
    assert!(cursor.problem.as_deref().unwrap().contains("left untouched"), "{cursor:?}");
    let err = s.connector.connect_preview(&s.engine, &s.ctx, "cursor").unwrap_err();
    assert_eq!(err.code, "config_unparseable");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);
    assert_eq!(
        s.connector.disconnect_preview(&s.engine, "cursor").unwrap_err().code,
        "config_unparseable"
    );
}

#[test]
fn a_new_file_is_created_and_clients_without_one_are_refused() {
    let s = served();
    let file = cursor_file(&s.home);
    let preview = s.connector.connect_preview(&s.engine, &s.ctx, "cursor").unwrap();
    assert!(!preview.file_exists);
    assert!(preview.diff.starts_with("--- /dev/null\n"), "{}", preview.diff);
    let done = s.connector.connect_apply(&s.engine, &preview.id).unwrap();
    assert!(done.check.ok && done.backup.is_none(), "{done:?}");
    assert!(json(&file)["mcpServers"]["sluice"].is_object());

    // VS Code keeps the token out of its file: the window shows it once to paste.
    let vs = s.connector.connect_preview(&s.engine, &s.ctx, "vscode").unwrap();
    assert!(!vs.plain_text);
    let done = s.connector.connect_apply(&s.engine, &vs.id).unwrap();
    let secret = done.secret.as_deref().unwrap();
    assert!(done.check.ok && !done.plain_text);
    assert!(!std::fs::read_to_string(&done.path).unwrap().contains(secret));

    assert_eq!(
        s.connector.connect_preview(&s.engine, &s.ctx, "http").unwrap_err().code,
        "no_config_file"
    );
    assert_eq!(
        s.connector.connect_preview(&s.engine, &s.ctx, "nope").unwrap_err().code,
        "invalid_argument"
    );
    assert_eq!(
        s.connector.connect_apply(&s.engine, "cfg_unknown").unwrap_err().code,
        "preview_not_found"
    );
    // Claude Desktop runs `sluice stdio`, which needs the binary's full path.
    let relative = Context { sluice_binary: PathBuf::from("sluice"), ..s.ctx.clone() };
    let err = s.connector.connect_preview(&s.engine, &relative, "claude-desktop").unwrap_err();
    assert_eq!(err.code, "sluice_binary_missing");
}

fn health<'a>(list: &'a [ClientHealthDto], id: &str) -> &'a ClientHealthDto {
    list.iter().find(|c| c.client == id).unwrap()
}

/// Health through the window's commands: a real MCP call with Cursor's own token; after the
/// port in its file changed (as after Sluice moved ports), `port_changed`, and the repair —
/// shown first, the kept token hidden — makes it work again with no new token.
#[test]
fn client_health_finds_a_changed_port_and_repair_fixes_it_keeping_the_token() {
    let s = served();
    let list = s.connector.health(&s.engine, &s.ctx).unwrap();
    assert!(list.iter().all(|h| h.state == "not_installed"), "{list:?}");
    assert!(list.iter().all(|h| h.client != "http"), "no row for clients without a file");

    let preview = s.connector.connect_preview(&s.engine, &s.ctx, "cursor").unwrap();
    s.connector.connect_apply(&s.engine, &preview.id).unwrap();
    let list = s.connector.health(&s.engine, &s.ctx).unwrap();
    let cursor = health(&list, "cursor");
    assert_eq!((cursor.state.as_str(), cursor.code.as_str()), ("working", "working"));
    assert_eq!(cursor.reason, "list_projects answered, 1 project(s) visible");
    assert_eq!(cursor.token_location.as_deref(), Some("in plain text in the client's file"));
    assert!(!cursor.repairable);

    let file = cursor_file(&s.home);
    let text = std::fs::read_to_string(&file).unwrap();
    let token = json(&file)["mcpServers"]["sluice"]["headers"]["Authorization"]
        .as_str()
        .unwrap()
        .strip_prefix("Bearer ")
        .unwrap()
        .to_owned();
    std::fs::write(&file, text.replace(&format!(":{}/", s.ctx.port), ":1/")).unwrap();
    let list = s.connector.health(&s.engine, &s.ctx).unwrap();
    let cursor = health(&list, "cursor");
    assert_eq!((cursor.state.as_str(), cursor.code.as_str()), ("broken", "port_changed"));
    assert!(cursor.repairable);
    assert!(!format!("{list:?}").contains(&token), "no token in a health list");

    let fix = s.connector.repair_preview(&s.engine, &s.ctx, "cursor").unwrap();
    assert!(!fix.diff.contains(&token), "the kept token is not shown: {}", fix.diff);
    assert!(fix.diff.contains("<current token, unchanged>"), "{}", fix.diff);
    assert!(fix.diff.contains("-      \"url\": \"http://127.0.0.1:1/mcp\","), "{}", fix.diff);
    assert!(fix.note.as_deref().unwrap().contains("still works and is kept"));
    // A repair id is neither a connect nor a disconnect id.
    assert_eq!(
        s.connector.connect_apply(&s.engine, &fix.id).unwrap_err().code,
        "preview_not_found"
    );
    let fix = s.connector.repair_preview(&s.engine, &s.ctx, "cursor").unwrap();
    let done = s.connector.repair_apply(&s.engine, &s.ctx, &fix.id).unwrap();
    assert_eq!(done.health.state, "working", "{done:?}");
    assert!(done.token_label.is_none() && done.backup.is_some());
    assert_eq!(s.engine.tokens().unwrap().len(), 1, "no new token");
    assert_eq!(
        json(&file)["mcpServers"]["sluice"]["url"],
        format!("http://127.0.0.1:{}/mcp", s.ctx.port)
    );

    // Not configured: repair is refused with a code.
    let err = s.connector.repair_preview(&s.engine, &s.ctx, "gemini").unwrap_err();
    assert_eq!(err.code, "not_configured", "{err:?}");
}
