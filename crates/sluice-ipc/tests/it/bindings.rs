//! `ui/src/bindings/ipc.ts` must be exactly what the DTOs generate.

use std::path::PathBuf;

#[test]
fn typescript_bindings_are_fresh() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/bindings/ipc.ts");
    let want = sluice_ipc::bindings::typescript();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: run `UPDATE_BINDINGS=1 cargo test -p sluice-ipc` and commit the result",
        path.display()
    );
}

#[test]
fn bindings_declare_every_command_once() {
    let ts = sluice_ipc::bindings::typescript();
    for (name, _, _) in sluice_ipc::bindings::COMMANDS {
        assert_eq!(ts.matches(&format!("  {name}: {{")).count(), 1, "{name}");
    }
    // Large integers cross as numbers (milliseconds fit easily in a double).
    assert!(!ts.contains("bigint"), "{ts}");
}
