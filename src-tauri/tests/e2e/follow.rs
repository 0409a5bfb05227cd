//! The open window follows what changes elsewhere: the README has people run `sluice project
//! add` and `project set … --access read-write` in a terminal while the app runs, and the
//! window must show what assistants can reach then, not when it is next opened. Each change is
//! made with the real CLI on the app's data folder and must be drawn within a second.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::driver::{Session, by_text};
use crate::tray::sluice;

/// How soon a change made elsewhere must be on screen.
const WITHIN: Duration = Duration::from_secs(1);

/// Polls until some element matching `css` does (or, with `shown` false, no longer does)
/// contain `text`; fails if that takes longer than [`WITHIN`] from `since`.
async fn drawn(s: &Session, css: &str, text: &str, shown: bool, since: Instant, what: &str) {
    let js = format!(
        "return [...document.querySelectorAll({css:?})].some(e => e.textContent.includes({text:?}));"
    );
    loop {
        if s.eval(&js).await == serde_json::Value::Bool(shown) {
            return;
        }
        let waited = since.elapsed();
        assert!(waited <= WITHIN, "{what}: not in the window {waited:?} after the command");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_follows_projects_and_tokens_changed_from_the_cli() {
    let _turn = crate::driver::one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let app = Path::new(env!("CARGO_BIN_EXE_sluice-app"));
    let (home, data, folder) =
        (tmp.path().join("home"), tmp.path().join("data"), tmp.path().join("cli-app"));
    std::fs::create_dir(&home).unwrap();
    std::fs::create_dir(&folder).unwrap();
    let s = Session::start_with(app, &data, &[("HOME", home.to_str().unwrap())]).await;
    s.wait_view("projects").await;
    let row = "[data-testid=project-row]";

    sluice(&data, &["project", "add", folder.to_str().unwrap(), "--name", "cli-app"]);
    drawn(&s, row, "cli-app", true, Instant::now(), "a project added").await;
    drawn(&s, row, "Read-only", true, Instant::now(), "its access").await;
    sluice(&data, &["project", "set", "cli-app", "--access", "read-write"]);
    drawn(&s, row, "Read-write", true, Instant::now(), "its access made read-write").await;

    s.click(by_text("nav", "Tokens")).await;
    s.wait_view("tokens").await;
    let token = "[data-testid=token-row]";
    sluice(&data, &["token", "create", "--label", "made in a terminal"]);
    drawn(&s, token, "made in a terminal", true, Instant::now(), "a token created").await;
    sluice(&data, &["token", "revoke", "made in a terminal"]);
    drawn(&s, token, "Revoked", true, Instant::now(), "the token revoked").await;

    s.click(by_text("nav", "Projects")).await;
    s.wait_view("projects").await;
    sluice(&data, &["project", "remove", "cli-app"]);
    drawn(&s, row, "cli-app", false, Instant::now(), "the project removed").await;
    s.quit().await;
}
