//! The screenshots in `docs/screenshots/`, taken from the real app: `cargo xtask screenshots`
//! builds the app with the UI embedded and runs this with `--app <binary> --out <folder>`.
//!
//! Everything shown is real: a temporary data folder is seeded through the engine (projects,
//! tokens, one revoked), then the app runs under Xvfb and the official Python MCP SDK does what
//! an assistant would — reads files, starts jobs the user approves in the window (a test
//! watcher, a dev server with its port published, a Python session it types into), asks to
//! delete files (one denied with a reason, one left waiting) — and WebDriver opens each view
//! and saves it as a PNG, in the light and the dark theme. It drives the app with the
//! end-to-end test's own harness.

// The end-to-end harness (Xvfb, tauri-driver, WebKitWebDriver) is Linux only. Elsewhere the
// example is empty, without a `main`, so that checking every target still type-checks the rest.
#![cfg_attr(not(target_os = "linux"), no_main)]
#![cfg(target_os = "linux")]

#[path = "../tests/e2e/client.rs"]
mod client;
#[path = "../tests/e2e/driver.rs"]
mod driver;

use std::path::{Path, PathBuf};
use std::time::Duration;

use client::{Pending, client, client_step, start_job_argv, type_into_job};
use driver::{Session, by_text};
use sluice_core::{AccessMode, ExecMode, Profile};
use sluice_engine::{Engine, EngineConfig, NewWorktree, SecretPreference};
use thirtyfour::By;

/// The demo job: a test watcher that keeps printing while the screenshots are taken.
const TEST_WATCH: &str = r#"#!/bin/sh
# Runs the shop's checks in a loop and reports each one.
n=0
while [ $n -lt 400 ]; do
  n=$((n + 1))
  for t in cart checkout pricing inventory search; do
    i=0
    while [ $i -lt 20000 ]; do i=$((i + 1)); done
    echo "PASS  src/$t.test.ts ($n.$((n % 7))s)"
    sleep 0.2
  done
  echo "Round $n: 5 suites passed, 0 failed"
done
"#;

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Three small projects, as a developer's folders would look.
fn demo_projects(code: &Path) {
    let shop = code.join("web-shop");
    write(shop.join("README.md"), "# web-shop\n\nThe storefront: cart, checkout, pricing.\n");
    write(
        shop.join("package.json"),
        r#"{ "name": "web-shop", "private": true, "scripts": { "test": "vitest run", "build": "vite build" } }"#,
    );
    write(shop.join("src/cart.ts"), "export const cart = [];\n");
    write(shop.join("src/old-checkout.ts"), "// replaced by checkout.ts\nexport {};\n");
    write(shop.join("src/legacy-pricing.ts"), "// still used by the invoice export\nexport {};\n");
    write(shop.join("scripts/test-watch.sh"), TEST_WATCH);
    let api = code.join("api-server");
    write(api.join("README.md"), "# api-server\n\nThe shop's HTTP API.\n");
    write(api.join("Cargo.toml"), "[package]\nname = \"api-server\"\nversion = \"0.1.0\"\n");
    write(api.join("src/main.rs"), "fn main() {}\n");
    // A repository, as most projects are: committed, by a demo identity.
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &["-c", "user.name=Demo", "-c", "user.email=demo@example.org", "commit", "-qm", "API"],
    ] {
        let ok = std::process::Command::new("git").arg("-C").arg(&api).args(args).status();
        assert!(ok.is_ok_and(|s| s.success()), "git {args:?} in the demo project");
    }
    let notes = code.join("notes");
    write(notes.join("README.md"), "# notes\n\nMeeting notes and plans.\n");
}

/// Projects and tokens through the engine, as the CLI would add them. Returns the two live
/// tokens (Claude Code: every project; Cursor: api-server only).
fn seed(code: &Path, data: &Path) -> (String, String) {
    let engine = Engine::open(&EngineConfig::new(data.to_path_buf(), SecretPreference::FileOnly))
        .expect("open the demo data folder");
    let add = |name: &str, access, exec| {
        engine.add_project(&code.join(name), Some(name), access, exec).expect("add a project");
    };
    add("web-shop", AccessMode::ReadWrite, ExecMode::Any);
    add("api-server", AccessMode::ReadWrite, ExecMode::Project);
    add("notes", AccessMode::ReadOnly, ExecMode::Off);
    let days = |d: u64| Some(Duration::from_secs(d * 86_400));
    // Two rungs of the ladder: a coding agent, and a client limited to editing one project.
    let (_, claude) =
        engine.create_token_with_profile("Claude Code", None, None, Profile::Agent).unwrap();
    let scope = Some(vec!["api-server".into()]);
    let (_, cursor) =
        engine.create_token_with_profile("Cursor", scope, days(90), Profile::Edit).unwrap();
    let (old, _) = engine.create_token("Old laptop", None, days(30)).unwrap();
    engine.revoke_token(old.id.as_str()).unwrap();
    // api-server runs its git hooks (as sandboxed jobs), and has a worktree an assistant made
    // to try something beside the main branch.
    engine.set_git_hooks("api-server", sluice_core::GitHooks::Sandbox).unwrap();
    let caller = engine.authenticate(&claude).unwrap();
    let parent = engine.project(&caller, "api-server").unwrap();
    let trial = NewWorktree { name: "retry-logic", branch: "retry-logic", create_branch: true };
    engine.create_worktree(&parent, &trial).expect("make the demo worktree");
    (claude, cursor)
}

fn arg(name: &str) -> PathBuf {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name).unwrap_or_else(|| {
        panic!("usage: screenshots --app <sluice-app binary> --out <folder>");
    });
    PathBuf::from(args.get(at + 1).expect("a value after the flag"))
}

/// Light (the default GTK theme) and dark (`GTK_THEME=Adwaita:dark`, which WebKit reports as
/// `prefers-color-scheme: dark`): each a fresh run, since jobs live only as long as the app.
const THEMES: &[(&str, &[(&str, &str)])] =
    &[("", &[]), ("-dark", &[("GTK_THEME", "Adwaita:dark")])];

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (app, out) = (arg("--app"), arg("--out"));
    std::fs::create_dir_all(&out).unwrap();
    for (suffix, env) in THEMES {
        take_all(&app, &out, suffix, env).await;
    }
}

/// Seeds a fresh data folder, plays the assistant, and saves every view as
/// `<out>/<view><suffix>.png`.
async fn take_all(app: &Path, out: &Path, suffix: &str, env: &[(&str, &str)]) {
    let tmp = tempfile::Builder::new().prefix("sluice-demo-").tempdir().unwrap();
    let code = std::fs::canonicalize(tmp.path()).unwrap().join("code");
    demo_projects(&code);
    let data = tmp.path().join("data");
    let (claude, cursor) = seed(&code, &data);

    // A home of its own: the Clients view shows this demo's config files, not the machine's.
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let config = home.join(".config");
    let mut env = env.to_vec();
    env.extend([("HOME", home.to_str().unwrap()), ("XDG_CONFIG_HOME", config.to_str().unwrap())]);
    let s = Session::start_with(app, &data, &env).await;
    let url = format!("http://127.0.0.1:{}/mcp", s.mcp_port);
    s.wait_view("projects").await;
    s.wait_text(By::Css("[data-testid=state-pill]"), "AI access on").await;

    // What assistants did: reads (the activity log).
    client_step(&url, &claude, "web-shop", "ok");
    client_step(&url, &cursor, "api-server", "ok");
    client_step(&url, &claude, "notes", "ok");

    // A job the user approves in the window.
    let argv = ["sh", "scripts/test-watch.sh"];
    let job = Pending::start(start_job_argv(&url, &claude, "web-shop", &argv), "start_job");
    approve_in_window(&s, "test-watch.sh").await;
    job.finish().await;

    // A dev server with its port published, and a Python session the assistant types into (the
    // system's Python: the demo's home has no version manager).
    let mut server = start_job_argv(
        &url,
        &claude,
        "web-shop",
        &["/usr/bin/python3", "-m", "http.server", "5173", "-b", "127.0.0.1"],
    );
    server.args(["--publish", "[5173]"]);
    let server = Pending::start(server, "start_job");
    approve_in_window(&s, "http.server").await;
    server.finish().await;
    let mut repl = start_job_argv(&url, &claude, "web-shop", &["/usr/bin/python3", "-q"]);
    repl.args(["--interactive", "terminal"]);
    let repl = Pending::start(repl, "start_job");
    approve_in_window(&s, "python3 -q").await;
    let repl = repl.finish().await.trim().trim_start_matches("JOB ").to_owned();
    for line in ["prices = [12.50, 7.25, 3.00]", "round(sum(prices) * 1.2, 2)"] {
        type_into_job(&url, &claude, "web-shop", &repl, line, &["enter"]);
    }

    // A delete the user denies with a reason, and one left waiting for the screenshot.
    let mut deny = client(&url, &claude, "web-shop", "src/legacy-pricing.ts", "denied");
    let reason = "the invoice export still uses it";
    deny.args(["--reason", reason]);
    let denied = Pending::start(deny, "denied delete");
    let card = "[data-testid=approval-card][data-armed=true]";
    s.wait_text(By::Css(card), "legacy-pricing.ts").await;
    s.type_into(By::Css("[data-testid=approval-card] input[name=reason]"), reason).await;
    s.click(By::Css(format!("{card} button.danger"))).await;
    denied.finish().await;
    let waiting = Pending::start(
        client(&url, &claude, "web-shop", "src/old-checkout.ts", "deleted"),
        "waiting delete",
    );
    s.wait_text(By::Css("[data-testid=approvals-badge]"), "1").await;

    // Each view.
    s.click(by_text("nav", "Projects")).await;
    s.wait_view("projects").await;
    s.click(By::XPath("//tr[@data-testid='project-row']//button[normalize-space()='web-shop']"))
        .await;
    s.wait_text(By::Css("section[aria-label='Project web-shop']"), "Execution").await;
    shot(&s, out, suffix, "projects").await;

    s.click(by_text("nav", "Tokens")).await;
    s.wait_view("tokens").await;
    s.wait_text(By::Css("section[aria-label='Tokens']"), "Old laptop").await;
    shot(&s, out, suffix, "tokens").await;

    // Three clients set up as `sluice connect` leaves them: Claude Code working, Cursor still
    // pointing at the port Sluice used before (Repair offered), VS Code keeping its own token.
    connected_clients(&home, s.mcp_port, &claude, &cursor);
    s.click(by_text("nav", "Clients")).await;
    s.wait_view("clients").await;
    s.wait_text(By::Css("section[aria-label='Clients']"), "Cursor").await;
    s.wait_text(By::Css("[data-testid=health][data-state=working]"), "Working").await;
    s.wait_text(By::Css("[data-testid=health][data-state=broken]"), "port").await;
    shot(&s, out, suffix, "clients").await;

    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Approvals')]")).await;
    s.wait_text(By::Css("[data-testid=approval-card][data-armed=true]"), "old-checkout.ts").await;
    s.wait_text(By::Css("[data-testid=decision-row]"), reason).await;
    shot(&s, out, suffix, "approvals").await;

    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Jobs')]")).await;
    s.wait_view("jobs").await;
    s.click(By::XPath("//tr[@data-testid='job-row']//button[contains(., 'test-watch')]")).await;
    s.wait_text(By::Css("[data-testid=job-log]"), "Round 2").await;
    s.wait_text(By::Css("[data-testid=job-row]"), "%").await;
    // The CPU sparkline draws the samples seen while the view is open (one a second).
    tokio::time::sleep(Duration::from_secs(8)).await;
    shot(&s, out, suffix, "jobs").await;
    s.click(By::XPath("//tr[@data-testid='job-row']//button[contains(., 'python3 -q')]")).await;
    s.wait_text(By::Css("[data-testid=job-log]"), "27.3").await;
    shot(&s, out, suffix, "jobs-session").await;
    s.click(By::XPath("//tr[@data-testid='job-row']//button[contains(., 'http.server')]")).await;
    s.wait_text(By::Css("[data-testid=job-ports]"), "http://127.0.0.1:").await;
    shot(&s, out, suffix, "jobs-server").await;

    // The checkpoints Sluice took before each of those commands, under the project.
    s.click(by_text("nav", "Projects")).await;
    s.wait_view("projects").await;
    s.click(By::XPath("//tr[@data-testid='project-row']//button[normalize-space()='web-shop']"))
        .await;
    let checkpoints = "fieldset[aria-label='Checkpoints']";
    s.wait_text(By::Css(checkpoints), "before").await;
    shot_at(&s, out, suffix, "projects-checkpoints", Some(checkpoints)).await;

    // A repository's project: its worktree listed under it, and its git settings.
    s.click(By::XPath("//tr[@data-testid='project-row']//button[normalize-space()='api-server']"))
        .await;
    let git = "fieldset[aria-label='Git hooks']";
    s.wait_text(By::Css(git), "Run the repository").await;
    s.wait_text(By::Css("[data-testid=project-row]"), "retry-logic").await;
    shot_at(&s, out, suffix, "projects-git", Some(git)).await;

    s.click(by_text("nav", "Activity")).await;
    s.wait_view("activity").await;
    s.wait_text(By::Css("[data-testid=chain-status]"), "Audit chain intact").await;
    s.wait_text(By::Css("section[aria-label='Activity'] table"), "start_job").await;
    shot(&s, out, suffix, "activity").await;

    s.click(by_text("nav", "Settings")).await;
    s.wait_view("settings").await;
    s.wait_text(By::Css("section[aria-label='Settings']"), "Command confinement").await;
    shot(&s, out, suffix, "settings").await;

    drop(waiting);
    s.quit().await;
}

/// The config files of three clients, in the forms `sluice connect` writes.
fn connected_clients(home: &Path, port: u16, claude: &str, cursor: &str) {
    let http = |port: u16, token: &str| {
        serde_json::json!({
            "url": format!("http://127.0.0.1:{port}/mcp"),
            "headers": { "Authorization": format!("Bearer {token}") },
        })
    };
    let mut claude_entry = http(port, claude);
    claude_entry["type"] = "http".into();
    let files = [
        (
            home.join(".claude.json"),
            serde_json::json!({ "mcpServers": { "sluice": claude_entry } }),
        ),
        (
            home.join(".cursor/mcp.json"),
            serde_json::json!({ "mcpServers": { "sluice": http(port + 1, cursor) } }),
        ),
        (
            home.join(".config/Code/User/mcp.json"),
            serde_json::json!({
                "inputs": [{ "type": "promptString", "id": "sluice-token",
                             "description": "Sluice access token", "password": true }],
                "servers": { "sluice": {
                    "type": "http",
                    "url": format!("http://127.0.0.1:{port}/mcp"),
                    "headers": { "Authorization": "Bearer ${input:sluice-token}" },
                } },
            }),
        ),
    ];
    for (path, value) in files {
        write(path, &serde_json::to_string_pretty(&value).unwrap());
    }
}

/// Approves the waiting approval whose card mentions `what`, in the Approvals view.
async fn approve_in_window(s: &Session, what: &str) {
    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Approvals')]")).await;
    s.wait_text(By::Css("[data-testid=approval-card][data-armed=true]"), what).await;
    s.click(by_text("article[@data-testid='approval-card']", "Approve once")).await;
    s.wait_text(By::Css("section[aria-label='Approvals']"), "No approvals waiting").await;
}

/// Saves the window as `<out>/<name>.png`, with the focus ring and the text cursor out of
/// the picture.
async fn shot(s: &Session, out: &Path, suffix: &str, name: &str) {
    shot_at(s, out, suffix, name, None).await;
}

/// [`shot`] with the element `css` selects scrolled into view (else the top of the view).
async fn shot_at(s: &Session, out: &Path, suffix: &str, name: &str, css: Option<&str>) {
    let scroll = match css {
        Some(css) => {
            format!("document.querySelector({css:?}).scrollIntoView({{block: 'center'}});")
        }
        None => "window.scrollTo(0, 0);".to_owned(),
    };
    s.script(&format!("document.activeElement && document.activeElement.blur(); {scroll}")).await;
    // Let live values (durations, the log) settle into one frame.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let path = out.join(format!("{name}{suffix}.png"));
    s.screenshot(&path).await;
    eprintln!("saved {}", path.display());
}
