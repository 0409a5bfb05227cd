//! The install secret through a real Secret Service (gnome-keyring on a private D-Bus session),
//! and the owner-only file fallback when no keychain answers.

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
