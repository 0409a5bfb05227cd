//! The install secret through a real Secret Service (gnome-keyring on a private D-Bus session),
//! and the owner-only file fallback when no keychain answers; the entry records that sealing
//! began, so a database put back to before it is not sealed as genuine (PC-02).

use std::process::Command;

use crate::harness::*;

/// Runs `sluice ARGS` inside a private D-Bus session with an unlocked gnome-keyring.
fn in_keyring_session(sb: &Sandbox, script_args: &str) -> std::process::Output {
    let script = format!(
        "echo -n test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; {script_args}"
    );
    // A private HOME: the keyring daemon creates a fresh login keyring there, unlocked with the
    // password above, instead of meeting one made earlier with another password.
    let home = sb.root().join("home");
    std::fs::create_dir_all(&home).unwrap();
    Command::new("dbus-run-session")
        .args(["--", "sh", "-c", &script])
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("SLUICE_DATA_DIR", &sb.data)
        .env("SLUICE_BIN", BIN)
        .env_remove("SLUICE_SECRET_STORE")
        .output()
        .expect("dbus-run-session and gnome-keyring are needed; `cargo xtask test` installs them")
}

#[test]
fn install_secret_lives_in_a_real_secret_service() {
    let sb = Sandbox::new();
    let out = in_keyring_session(
        &sb,
        r#""$SLUICE_BIN" --secret-store keychain token create --label k >/dev/null &&
           "$SLUICE_BIN" --secret-store keychain audit verify &&
           "$SLUICE_BIN" --secret-store keychain doctor"#,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // A second process read the same secret back: the audit chain it verified was keyed by it.
    assert!(stdout.contains("Audit chain intact"), "{stdout}");
    assert!(stdout.contains("OS keychain"), "{stdout}");
    assert!(!sb.data.join("install-secret").exists(), "fell back to a file");
}

#[test]
fn without_a_keychain_the_secret_falls_back_to_an_owner_only_file() {
    let sb = Sandbox::new();
    // No session bus at all: the keychain cannot work.
    let out = sb
        .cmd()
        .env("SLUICE_SECRET_STORE", "auto")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .arg("doctor")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("owner-only file"), "{stdout}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(sb.data.join("install-secret")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // Asking for the keychain explicitly fails clearly instead of silently using a file.
    let out = sb
        .cmd()
        .env("SLUICE_SECRET_STORE", "keychain")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .arg("doctor")
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn pc02_the_keychain_entry_records_sealing_so_a_database_put_back_to_before_it_grants_nothing() {
    let sb = Sandbox::new();
    let sluice = r#""$SLUICE_BIN" --secret-store keychain"#;
    let run = |script: String| {
        let out = in_keyring_session(&sb, &script);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        stdout
    };
    let project = sb.project.to_str().unwrap();
    let said =
        run(format!("{sluice} project add '{project}' --name demo >/dev/null && {sluice} doctor"));
    assert!(said.contains("every sealed record verifies"), "{said}");
    assert!(!sb.data.join("install-secret").exists(), "fell back to a file");
    // Widened, stripped of every seal and put back to `pending`, while Sluice is stopped.
    let db = rusqlite::Connection::open(sb.data.join("sluice.db")).unwrap();
    db.execute_batch(
        "UPDATE projects SET access = 'read-write', exec = 'any', seal = NULL;
         DELETE FROM kv WHERE key LIKE 'seal:%';
         UPDATE kv SET value = 'pending' WHERE key = 'sluice.seal';",
    )
    .unwrap();
    drop(db);
    // A later session (another process, the keychain read afresh) is not fooled.
    let said = run(format!("{sluice} doctor"));
    assert!(said.contains("[seal-reset]") && said.contains("(0 available)"), "{said}");
    let said = run(format!("{sluice} doctor --reseal >/dev/null && {sluice} doctor"));
    assert!(said.contains("every sealed record verifies") && said.contains("(1 available)"));
}

/// The audit log's beginning is recorded in the keychain entry too (where whatever can only
/// write the data folder cannot reach it): a log emptied with its head while Sluice is stopped
/// is `audit-reset` for the next process that reads the keychain, and `audit verify` fails.
#[test]
fn pc02_the_keychain_entry_records_that_the_audit_log_began() {
    let sb = Sandbox::new();
    let sluice = r#""$SLUICE_BIN" --secret-store keychain"#;
    let run = |script: String| in_keyring_session(&sb, &script);
    let text = |out: &std::process::Output| {
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let project = sb.project.to_str().unwrap();
    let out = run(format!(
        "{sluice} project add '{project}' --name demo >/dev/null && {sluice} audit verify"
    ));
    assert!(out.status.success() && text(&out).contains("intact"), "{}", text(&out));
    assert!(!sb.data.join("install-secret").exists(), "fell back to a file");
    let db = rusqlite::Connection::open(sb.data.join("sluice.db")).unwrap();
    db.execute_batch(
        "DROP TRIGGER audit_no_delete;
         DELETE FROM audit;
         DELETE FROM kv WHERE key LIKE '%sluice.audit.head%';",
    )
    .unwrap();
    drop(db);
    let out = run(format!("{sluice} audit verify"));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("emptied or replaced outside Sluice"), "{}", text(&out));
    let out = run(format!("{sluice} doctor"));
    assert!(text(&out).contains("[audit-reset]"), "{}", text(&out));
}
