//! The administrative CLI against a real data folder: projects, tokens, audit, doctor.

use crate::harness::*;

#[test]
fn project_lifecycle_and_refusals() {
    let sb = Sandbox::new();
    let id = sb.add_project();
    let list = sb.ok(&["project", "list"]);
    assert!(list.contains(&id) && list.contains("read-only") && list.contains("off"), "{list}");

    // Dangerous and overlapping roots are refused with a reason.
    assert!(sb.err(&["project", "add", "/"]).contains("root of a filesystem"));
    assert!(sb.err(&["project", "add", "/etc"]).contains("system folder"));
    let sub = sb.project.join("src");
    assert!(sb.err(&["project", "add", sub.to_str().unwrap()]).contains("nested"));
    std::fs::create_dir_all(&sb.data).unwrap();
    let data_sub = sb.data.join("x");
    std::fs::create_dir_all(&data_sub).unwrap();
    assert!(sb.err(&["project", "add", data_sub.to_str().unwrap()]).contains("data folder"));
    assert!(
        sb.err(&["project", "add", sb.project.to_str().unwrap()]).contains("already authorized")
    );
    assert!(sb.err(&["project", "add", "/nonexistent/sluice/x"]).contains("does not exist"));
    // The prefix-confusion sibling is a different folder and may be authorized on its own.
    sb.ok(&["project", "add", sb.evil.to_str().unwrap(), "--name", "evil"]);

    // Modes: exec project needs read-write; dropping to read-only forces exec off.
    assert!(sb.err(&["project", "set", "demo", "--exec", "project"]).contains("read-write"));
    let out = sb.ok(&["project", "set", "demo", "--access", "read-write", "--exec", "project"]);
    assert!(out.contains("read-write") && out.contains("project"), "{out}");
    let out = sb.ok(&["project", "set", "demo", "--access", "read-only"]);
    assert!(out.contains("execution was turned off"), "{out}");

    sb.ok(&["project", "rename", "demo", "Demo App"]);
    assert!(sb.ok(&["project", "list"]).contains("Demo App"));
    assert!(sb.ok(&["project", "disable", &id]).contains("disabled"));
    assert!(sb.ok(&["project", "enable", &id]).contains("available"));
    let shield = sb.ok(&["project", "shield", &id, "--add", "*.secret"]);
    assert!(shield.contains("*.secret") && shield.contains(".env"), "{shield}");
    assert!(sb.err(&["project", "shield", &id, "--add", "a[b"]).contains("a[b"));
    sb.ok(&["project", "remove", &id]);
    assert!(!sb.ok(&["project", "list"]).contains(&id));
    // The folder itself is untouched.
    assert!(sb.project.join("README.md").exists());
}

#[test]
fn tokens_are_shown_once_and_stored_only_as_hashes() {
    let sb = Sandbox::new();
    sb.add_project();
    let out = sb.ok(&["token", "create", "--label", "Cursor on laptop", "--expires", "30d"]);
    let token = out.split_whitespace().find(|w| w.starts_with("slc_")).unwrap().to_owned();
    assert_eq!(token.len(), 4 + 52, "256 bits in base32");
    for client in ["Claude Code", "Cursor", "VS Code", "Codex", "Streamable HTTP"] {
        assert!(out.contains(client), "no {client} snippet in {out}");
    }
    let list = sb.ok(&["token", "list"]);
    assert!(list.contains("Cursor on laptop") && !list.contains(&token), "{list}");
    // Nothing in the data folder holds the plaintext.
    for entry in walk(&sb.data) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        let hay = String::from_utf8_lossy(&bytes);
        assert!(!hay.contains(&token), "plaintext token found in {}", entry.display());
    }
    assert!(sb.err(&["token", "create", "--label", "cursor on laptop"]).contains("already"));
    assert!(sb.err(&["token", "create", "--label", "x", "--projects", "nope"]).contains("nope"));
    sb.ok(&["token", "revoke", "Cursor on laptop"]);
    assert!(sb.ok(&["token", "list"]).contains("revoked"));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn audit_records_human_actions_and_verifies() {
    let sb = Sandbox::new();
    sb.add_project();
    sb.token("a", &[]);
    sb.ok(&["pause"]);
    sb.ok(&["resume"]);
    let list = sb.ok(&["audit", "list"]);
    for action in ["project.add", "token.create", "pause", "resume"] {
        assert!(list.contains(action), "{action} missing from {list}");
    }
    assert!(sb.ok(&["audit", "verify"]).contains("intact — 4 entries"));
}

#[test]
fn doctor_reports_the_secret_store_in_use() {
    let sb = Sandbox::new();
    let out = sb.ok(&["doctor"]);
    assert!(out.contains("owner-only file"), "{out}");
    assert!(out.contains("engine:        not running"), "{out}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["sluice.db", "install-secret"] {
            let mode = std::fs::metadata(sb.data.join(f)).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{f} is readable by others: {mode:o}");
        }
    }
}

/// `sluice sandbox` off Windows: the account is Windows' own, so status says what confines jobs
/// here and every step that would change something refuses and changes nothing. The elevated
/// half of the setup reads only a handoff of this data folder, never a file named from outside
/// (an attacker's path on its command line).
#[test]
fn sandbox_account_commands_change_nothing_off_windows() {
    let sb = Sandbox::new();
    sb.add_project();
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(&sb.data)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("sluice.db"))
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let status = sb.ok(&["sandbox", "status"]);
    assert!(status.contains("Windows' own") && status.contains("jobs"), "{status}");
    for args in [&["sandbox", "setup"][..], &["sandbox", "teardown"]] {
        let said = sb.err(args);
        assert!(
            said.contains("(confinement_unavailable)") && said.contains("nothing changed"),
            "{said}"
        );
    }
    let outside = sb.root().join("handoff.txt");
    std::fs::write(&outside, "Pw-1").unwrap();
    let hex = "0a".repeat(16);
    let named_inside_elsewhere = sb.root().join(format!("sandbox-setup-{hex}"));
    std::fs::write(&named_inside_elsewhere, "Pw-2").unwrap();
    for path in [&outside, &named_inside_elsewhere] {
        let said = sb.err(&[
            "sandbox",
            "setup",
            "--handoff",
            path.to_str().unwrap(),
            "--profile",
            "C:\\Users\\ann",
        ]);
        assert!(said.contains("(invalid_argument)"), "{said}");
        assert!(path.is_file(), "a refused handoff is left alone");
    }
    let said = sb.err(&["sandbox", "setup", "--handoff", outside.to_str().unwrap()]);
    assert!(said.contains("--profile"), "{said}");
    assert_eq!(listing(), before, "no password, handoff or outcome was left in the data folder");
}

/// `sluice serve --port 0` takes a free port and names that one everywhere: what it prints,
/// the engine file `sluice stdio` reads, and the origin its Host check accepts (a request to
/// the real port is served, not refused as another host's).
#[test]
fn serve_on_port_zero_names_the_port_it_took() {
    use std::io::{BufRead, BufReader};
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("zero", &[]);
    let mut child = sb
        .cmd()
        .args(["serve", "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port: u16 = line
        .trim()
        .strip_prefix("Sluice is serving http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_ne!(port, 0, "{line:?}");
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sb.data.join("engine.json")).unwrap())
            .unwrap();
    assert_eq!(recorded["port"], port);
    let r = post(port, &bearer(&token), &initialize_body());
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(r.status, 200, "{}", r.body);
}
