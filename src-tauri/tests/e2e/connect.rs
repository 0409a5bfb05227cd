//! One-click Connect in the real window: Cursor's config under the app's temporary home folder
//! already holds another server; the window shows the exact change, writes it on Apply, and
//! shows the connection check the app made with the new token. Then Disconnect removes only
//! Sluice's entry.

use std::path::{Path, PathBuf};

use thirtyfour::By;

use crate::driver::{Session, by_text};

/// Cursor's config as a user who already has another server keeps it.
const CURSOR_BEFORE: &str = r#"{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"]
    }
  }
}
"#;

/// Creates `home` with Cursor's config in it; returns the config's path.
pub fn cursor_home(home: &Path) -> PathBuf {
    let file = home.join(".cursor").join("mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, CURSOR_BEFORE).unwrap();
    file
}

fn servers(file: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(file).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    v["mcpServers"].clone()
}

/// Connects Cursor from the Clients view, checks the window and the file, then disconnects.
pub async fn connect_and_disconnect_cursor(s: &Session, file: &Path) {
    let row = By::Css("tr[data-testid=client-row][aria-label=Cursor]");
    s.click(by_text("nav", "Clients")).await;
    let shown = s.wait_text(row.clone(), "Not connected").await;
    assert!(shown.contains(&file.display().to_string()), "{shown}");
    assert!(shown.contains("Plain text in the file"), "{shown}");
    s.wait_text(By::Css("[data-testid=plain-text-clients]"), "Cursor").await;

    // The exact change, before anything is written.
    s.click(By::Css("button[aria-label='Connect Cursor']")).await;
    let panel = "section[aria-label='Connect Cursor']";
    let preview = s.wait_text(By::Css(panel), "plain text in this file").await;
    assert!(preview.contains(&file.display().to_string()), "{preview}");
    let diff = s.wait_text(By::Css("[data-testid=diff]"), "\"sluice\"").await;
    assert!(diff.contains("<token created when you confirm>"), "{diff}");
    assert!(diff.contains(&format!("127.0.0.1:{}/mcp", s.mcp_port)), "{diff}");
    assert_eq!(std::fs::read_to_string(file).unwrap(), CURSOR_BEFORE, "a preview writes nothing");

    // Apply: written, and the app's own check with the new token passed.
    s.click(by_text("section[@aria-label='Connect Cursor']", "Apply and connect")).await;
    let check = s.wait_text(By::Css("[data-testid=check-result]"), "Connected:").await;
    assert!(check.contains("list_projects answered"), "{check}");
    let done = s.wait_text(By::Css("section[aria-label='Connected Cursor']"), "Backup").await;
    assert!(done.contains("Cursor (sluice connect)"), "{done}");
    s.wait_text(row.clone(), "Connected").await;

    let after = servers(file);
    assert_eq!(after["github"]["command"], "npx", "the other server is kept: {after}");
    assert_eq!(after["sluice"]["url"], format!("http://127.0.0.1:{}/mcp", s.mcp_port));
    let bearer = after["sluice"]["headers"]["Authorization"].as_str().unwrap();
    assert!(bearer.starts_with("Bearer slc_"), "{bearer}");
    let backups: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("mcp.json.bak-"))
        .collect();
    assert_eq!(backups.len(), 1, "one backup next to the file");
    assert_eq!(std::fs::read_to_string(backups[0].path()).unwrap(), CURSOR_BEFORE);

    // Disconnect: only Sluice's entry goes.
    s.click(By::Css("button[aria-label='Disconnect Cursor']")).await;
    s.wait_text(By::Css("section[aria-label='Disconnect Cursor']"), "only Sluice's entry").await;
    s.click(by_text("section[@aria-label='Disconnect Cursor']", "Apply and disconnect")).await;
    s.wait_text(By::Css("section[aria-label='Disconnected Cursor']"), "Removed Sluice").await;
    s.wait_text(row, "Not connected").await;
    let after = servers(file);
    assert_eq!(after["github"]["command"], "npx", "{after}");
    assert!(after.get("sluice").is_none(), "{after}");
}
