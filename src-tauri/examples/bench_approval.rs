//! How long an approval takes to appear in the window: `cargo xtask bench app` runs this with
//! `--app <binary>` and reads one JSON line from stdout.
//!
//! The real app runs under Xvfb (the end-to-end test's harness); the official Python MCP SDK
//! asks to delete a file, which waits for the user. The moment the engine registered the
//! approval (its `created_ms`) is compared with the moment the card appeared in the window's
//! document (a MutationObserver's `Date.now()`): the engine event, the IPC to the webview and
//! React's render in between. Both clocks are this machine's wall clock.

// The end-to-end harness (Xvfb, tauri-driver, WebKitWebDriver) is Linux only. Elsewhere the
// example is empty, without a `main`, so that checking every target still type-checks the rest.
#![cfg_attr(not(target_os = "linux"), no_main)]
#![cfg(target_os = "linux")]

#[path = "../tests/e2e/client.rs"]
mod client;
#[path = "../tests/e2e/driver.rs"]
mod driver;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use client::{Pending, client};
use driver::{Session, by_text};
use sluice_core::{AccessMode, ExecMode};
use sluice_engine::{ApprovalState, Decision, Engine, EngineConfig, SecretPreference};

const ROUNDS: usize = 10;

/// Records when each approval card first appears.
const OBSERVE: &str = "window.__cards = []; \
    const seen = new Set(); \
    new MutationObserver(() => { \
      for (const c of document.querySelectorAll('[data-testid=approval-card]')) { \
        if (!seen.has(c)) { seen.add(c); window.__cards.push(Date.now()); } \
      } \
    }).observe(document.body, { childList: true, subtree: true });";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let app = match args.iter().position(|a| a == "--app") {
        Some(i) if i + 1 < args.len() => PathBuf::from(&args[i + 1]),
        _ => {
            eprintln!("usage: bench_approval --app <sluice-app binary>");
            std::process::exit(2);
        }
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, project) = (dir.path().join("data"), dir.path().join("bench"));
    std::fs::create_dir_all(&project).unwrap();
    let config = EngineConfig::new(data.clone(), SecretPreference::FileOnly);
    let token = {
        let engine = Engine::open(&config).expect("engine");
        engine
            .add_project(&project, Some("bench"), AccessMode::ReadWrite, ExecMode::Off)
            .expect("project");
        engine.create_token("bench", None, None).expect("token").1
    };

    let s = Session::start(&app, &data).await;
    let url = format!("http://127.0.0.1:{}/mcp", s.mcp_port);
    s.click(by_text("nav", "Approvals")).await;
    s.script(OBSERVE).await;
    // The human's side, as the CLI would be: another engine on the same data folder.
    let human = Engine::open(&config).expect("engine");

    let mut latencies = Vec::new();
    for i in 0..ROUNDS {
        let name = format!("doomed-{i}.txt");
        std::fs::write(project.join(&name), "x").unwrap();
        let mut cmd = client(&url, &token, "bench", &name, "denied");
        cmd.args(["--reason", "benchmark"]);
        let call = Pending::start(cmd, "delete");
        let deadline = Instant::now() + Duration::from_secs(60);
        let shown = loop {
            let v = s.eval(&format!("return window.__cards[{i}] ?? null")).await;
            if let Some(ms) = v.as_i64() {
                break ms;
            }
            assert!(Instant::now() < deadline, "the approval never appeared in the window");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let pending = human
            .approvals()
            .expect("approvals")
            .into_iter()
            .find(|a| a.state == ApprovalState::Pending)
            .expect("a pending approval");
        latencies.push(shown - pending.created_ms);
        human
            .decide(&pending.id, Decision::Deny { reason: Some("benchmark".into()) }, "bench")
            .expect("deny");
        call.finish().await;
    }
    s.quit().await;
    println!("{}", serde_json::json!({ "approval_to_window_ms": latencies }));
}
