//! What Sluice leaves on disk of a token: a real token made with `sluice token create` and used
//! over HTTP is found nowhere in the data folder — database, WAL, the backup a migration takes,
//! the change backups and journals, any log — nor in the server's log.

use std::path::Path;

use serde_json::json;

use crate::harness::{Sandbox, back_to_schema_13, bearer, call, initialize_body, ok, post};

/// Every file under `dir`, with its bytes.
fn files(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            files(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path.display().to_string(), bytes));
        }
    }
}

/// The files under `dir` holding `needle`.
fn holding(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut all = Vec::new();
    files(dir, &mut all);
    all.into_iter()
        .filter(|(_, b)| b.windows(needle.len()).any(|w| w == needle))
        .map(|(p, _)| p)
        .collect()
}

/// Starts `sluice serve` logging at debug, its log read as it comes (a full pipe would stall
/// it).
fn serve_logging(sb: &Sandbox) -> (crate::harness::Server, std::thread::JoinHandle<String>) {
    let mut server = sb.serve_env(&[("SLUICE_LOG", "debug")]);
    let mut stderr = server.child.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut log = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut log).unwrap();
        log
    });
    (server, log)
}

/// Stops `server` with SIGTERM and returns its log.
fn stop(mut server: crate::harness::Server, log: std::thread::JoinHandle<String>) -> String {
    let pid = server.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    assert!(server.child.wait().unwrap().success());
    log.join().unwrap()
}

#[test]
fn ta03_a_real_token_is_stored_nowhere_but_as_its_keyed_hash() {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write"]);
    let label = "at-rest-probe";
    let token = sb.token(label, &[]);
    // The part after the prefix alone, too: no row keeps the secret without its `slc_`.
    let secret = token.strip_prefix("slc_").unwrap();
    let mut logs = String::new();
    for round in 0..2 {
        if round == 1 {
            // The next start migrates again, taking a backup of a database that holds the
            // token's row.
            back_to_schema_13(&sb);
        }
        let (server, log) = serve_logging(&sb);
        assert_eq!(post(server.port, &bearer(&token), &initialize_body()).status, 200);
        let v =
            call(server.port, &token, "read_file", json!({"project": "demo", "path": "README.md"}));
        ok(&v);
        let v = call(
            server.port,
            &token,
            "write_file",
            json!({"project": "demo", "path": format!("note-{round}.txt"), "content": "x\n"}),
        );
        ok(&v);
        // A wrong token beside it, one character off, is logged and audited as a failure.
        let wrong = format!(
            "{}{}",
            &token[..token.len() - 1],
            if token.ends_with('a') { 'b' } else { 'a' }
        );
        assert_eq!(post(server.port, &bearer(&wrong), &initialize_body()).status, 401);
        // While it serves (the WAL holds the newest pages) and once it has stopped.
        for needle in [token.as_bytes(), secret.as_bytes(), wrong.as_bytes()] {
            assert_eq!(holding(&sb.data, needle), Vec::<String>::new(), "round {round}");
        }
        logs.push_str(&stop(server, log));
    }
    for needle in [token.as_str(), secret] {
        assert!(!logs.contains(needle), "the server logged the token: {logs}");
    }
    for needle in [token.as_bytes(), secret.as_bytes()] {
        assert_eq!(holding(&sb.data, needle), Vec::<String>::new());
    }
    // The scan reads what it should: the token's label is in the database and in the backup.
    let with_label = holding(&sb.data, label.as_bytes());
    assert!(with_label.iter().any(|p| p.ends_with("sluice.db")), "{with_label:?}");
    assert!(
        with_label.iter().any(|p| p.contains("/backups/") && p.ends_with(".bak")),
        "{with_label:?}"
    );
    assert!(!logs.is_empty(), "the server logged nothing at debug");
}
