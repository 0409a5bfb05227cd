//! Live jobs in the window: a terminal job the assistant types into shows as a live, read-only
//! session, and a dev server's published port is a link the user's default browser opens. The
//! browser is a stand-in registered with the desktop the way a real one is (a `.desktop` entry
//! and the default handler for `http` in `mimeapps.list`), so the click goes through the app's
//! real path: the engine builds the link, GIO finds the default handler and starts it.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use thirtyfour::By;

use crate::client::{Pending, start_job_argv, type_into_job};
use crate::driver::{Session, by_text};

/// Registers a stand-in default browser in `home` (data) and `config` (the default handler)
/// that appends every URL it is asked to open to `opened`. Before the app starts: GIO reads
/// the handlers once.
pub fn stand_in_browser(home: &Path, config: &Path, opened: &Path) {
    let apps = home.join(".local/share/applications");
    std::fs::create_dir_all(&apps).unwrap();
    std::fs::create_dir_all(config).unwrap();
    let script = home.join("stand-in-browser");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        apps.join("sluice-stand-in-browser.desktop"),
        format!(
            "[Desktop Entry]\nType=Application\nName=Stand-in browser\nExec={} %u\n\
             MimeType=x-scheme-handler/http;\nNoDisplay=true\n",
            script.display()
        ),
    )
    .unwrap();
    std::fs::write(
        config.join("mimeapps.list"),
        "[Default Applications]\nx-scheme-handler/http=sluice-stand-in-browser.desktop\n",
    )
    .unwrap();
}

/// Starts `argv` as the assistant with `extra` start_job arguments and approves it in the
/// window once its card says `card_says`; returns the job id.
async fn approved_job(
    s: &Session,
    url: &str,
    token: &str,
    project: &str,
    argv: &[&str],
    extra: &[&str],
    card_says: &str,
) -> String {
    let mut cmd = start_job_argv(url, token, project, argv);
    cmd.args(extra);
    let waiting = Pending::start(cmd, "start_job");
    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Approvals')]")).await;
    let card = s.wait_text(By::Css("[data-testid=approval-card]"), card_says).await;
    assert!(card.contains(argv[0]), "{card}");
    s.click(by_text("article[@data-testid='approval-card']", "Approve once")).await;
    let out = waiting.finish().await;
    out.trim().strip_prefix("JOB ").unwrap_or_else(|| panic!("{out}")).to_owned()
}

/// Opens the Jobs view on the job whose command contains `words`.
async fn open_job(s: &Session, words: &str) {
    s.click(By::XPath("//nav//button[starts-with(normalize-space(), 'Jobs')]")).await;
    s.click(By::XPath(format!("//tr[@data-testid='job-row']//button[contains(., \"{words}\")]")))
        .await;
}

/// Cancels the open job from the window, confirming.
async fn cancel_open_job(s: &Session) {
    s.click(by_text("section[@data-testid='job-detail']", "Cancel job…")).await;
    let confirm = by_text("section[@data-testid='job-detail']", "Cancel job");
    s.click_again_until(confirm, By::Css("[data-testid=job-detail]"), "Cancelled").await;
}

/// The terminal session, then the link (the app was started with [`stand_in_browser`]).
pub async fn terminal_and_link(s: &Session, url: &str, token: &str, project: &str, opened: &Path) {
    // A prompt in a terminal, answered by the assistant while the user watches.
    let prompt = ["sh", "-c", "printf 'name?'; read n; echo \"hi $n\"; sleep 600"];
    let job =
        approved_job(s, url, token, project, &prompt, &["--interactive", "terminal"], "type into")
            .await;
    open_job(s, "read n").await;
    // A prompt without a trailing space shows while the program waits for its answer.
    s.wait_text(By::Css("[data-testid=job-log]"), "name?").await;
    s.wait_text(By::Css("[data-testid=job-session]"), "read-only here").await;
    let streams = s.wait_text(By::Css("[data-testid=job-detail] [role=group]"), "Terminal").await;
    assert!(!streams.contains("Errors"), "a terminal job has one stream: {streams}");
    type_into_job(url, token, project, &job, "quokka", &["enter"]);
    let log = s.wait_text(By::Css("[data-testid=job-log]"), "hi quokka").await;
    // The terminal echoed what the assistant typed: the user sees it too.
    assert!(log.contains("name?quokka\n"), "{log}");
    cancel_open_job(s).await;

    // A dev server: its port is a link, and the click opens it in the default browser.
    // The system's Python: the app's home is a temporary one, so a version manager's shims in
    // the real home are not a toolchain the job can see.
    let server = ["/usr/bin/python3", "-m", "http.server", "8000", "-b", "127.0.0.1"];
    approved_job(s, url, token, project, &server, &["--publish", "[8000]"], "publishes port 8000")
        .await;
    open_job(s, "http.server").await;
    let link = s.wait_text(By::Css("[data-testid=job-ports] button"), "http://127.0.0.1:").await;
    s.click(By::Css("[data-testid=job-ports] button")).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let asked = loop {
        let text = std::fs::read_to_string(opened).unwrap_or_default();
        if let Some(line) = text.lines().next() {
            break line.to_owned();
        }
        assert!(Instant::now() < deadline, "the default browser was not asked to open {link}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(asked, link.trim(), "the browser gets exactly the link the window shows");
    // And what it opens is the job's server: its listing names the project's file.
    let port: u16 = sluice_core::link::job_link_port(&asked).expect("a job link");
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).expect("the link answers");
    conn.write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut page = String::new();
    conn.read_to_string(&mut page).unwrap();
    assert!(page.starts_with("HTTP/1.0 200") && page.contains("README.md"), "{page}");
    cancel_open_job(s).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(Instant::now() < deadline, "the link stays open after the job was cancelled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
