//! The install secret: the owner-only file fallback, the keychain path over keyring-core's
//! in-memory mock store, and the refusal to orphan existing tokens.

use std::sync::Arc;

use keyring_core::{CredentialStore, Entry, mock};
use sluice_store::secret::{SECRET_FILE, SERVICE, keychain_account, keychain_probe_account};
use sluice_store::{
    InstallSecret, Keychain, NewToken, SecretPreference, SecretSource, Store, token_hash,
};

use crate::{data_dir, open};

fn mock_keychain() -> (Arc<CredentialStore>, Keychain) {
    let store: Arc<CredentialStore> = mock::Store::new().unwrap();
    (store.clone(), Keychain::new(store, "mock"))
}

/// The same secret, observed through what it keys (the bytes themselves are not exposed).
fn fingerprint(secret: &InstallSecret) -> [u8; 32] {
    token_hash(secret, "probe")
}

fn add_token(store: &Store) {
    let t = NewToken {
        label: "t".into(),
        hash: [1; 32],
        scope: None,
        expires_ms: None,
        profile: sluice_core::Profile::Full,
    };
    store.insert_token(&t).unwrap();
}

/// Makes the next call on the entry (`service`, `account`) of a mock store fail.
fn fail_next(store: &Arc<CredentialStore>, account: &str, err: keyring_core::Error) {
    let entry = Entry::new_in_store(store, SERVICE, account).unwrap();
    let cred: &mock::Cred = entry.as_any().downcast_ref().unwrap();
    cred.set_error(err);
}

fn locked() -> keyring_core::Error {
    keyring_core::Error::NoStorageAccess("collection is locked".into())
}

#[test]
fn file_fallback_is_owner_only_reused_and_refused_when_readable_by_others() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let first = store.load_install_secret(SecretPreference::FileOnly).unwrap();
    let path = store.data_dir().join(SECRET_FILE);
    assert_eq!(first.source, SecretSource::File(path.clone()));
    assert!(first.created && first.reason.is_some());
    #[cfg(unix)]
    assert_eq!(crate::mode(&path), 0o600);

    let again = store.load_install_secret(SecretPreference::FileOnly).unwrap();
    assert!(!again.created);
    assert_eq!(fingerprint(&again.secret), fingerprint(&first.secret));
    // A recorded file source is honoured under Auto too, without touching any keychain.
    let auto = store.load_install_secret_with(SecretPreference::Auto, &mock_keychain().1).unwrap();
    assert_eq!(auto.source, SecretSource::File(path.clone()));

    // Windows has no mode bits: what others may read is the folder's ACL.
    #[cfg(unix)]
    {
        use sluice_core::{Coded, ErrorCode};
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = store.load_install_secret(SecretPreference::FileOnly).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Forbidden);
        assert!(err.to_string().contains("0644"), "{err}");
    }
}

#[test]
fn a_lost_secret_file_is_not_silently_replaced() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    store.load_install_secret(SecretPreference::FileOnly).unwrap();
    add_token(&store);
    std::fs::remove_file(store.data_dir().join(SECRET_FILE)).unwrap();
    let err = store.load_install_secret(SecretPreference::FileOnly).unwrap_err();
    assert!(err.to_string().contains("refusing to create a new secret"), "{err}");
    assert!(!store.data_dir().join(SECRET_FILE).exists());
}

#[test]
fn keychain_secret_is_created_once_and_reused() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let (_kc_store, kc) = mock_keychain();
    let first = store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    assert_eq!(first.source, SecretSource::Keychain("mock".into()));
    assert!(first.created && first.reason.is_none());
    assert!(!store.data_dir().join(SECRET_FILE).exists());
    assert_eq!(store.kv_get("sluice.secret.source").unwrap().as_deref(), Some("keychain"));

    add_token(&store);
    let again = store.load_install_secret_with(SecretPreference::KeychainOnly, &kc).unwrap();
    assert!(!again.created);
    assert_eq!(fingerprint(&again.secret), fingerprint(&first.secret));

    // Another data folder gets another secret in the same keychain.
    let (_tmp2, dir2) = data_dir();
    let other = open(&dir2).load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    assert_ne!(fingerprint(&other.secret), fingerprint(&first.secret));
    assert_ne!(keychain_account(store.data_dir()), keychain_account(&dir2));

    // FileOnly contradicts the recorded keychain source.
    let err = store.load_install_secret_with(SecretPreference::FileOnly, &kc).unwrap_err();
    assert!(err.to_string().contains("keychain"), "{err}");
}

#[test]
fn an_empty_keychain_with_existing_tokens_is_an_error_not_a_new_secret() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let (_s, kc) = mock_keychain();
    store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    add_token(&store);

    // The entry is gone (another keychain, a wiped login keyring, …).
    let (_s2, empty) = mock_keychain();
    let err = store.load_install_secret_with(SecretPreference::Auto, &empty).unwrap_err();
    assert!(err.to_string().contains("refusing to create a new secret"), "{err}");
    assert!(!store.data_dir().join(SECRET_FILE).exists(), "no silent fallback either");
}

#[test]
fn a_locked_keychain_with_existing_tokens_is_an_error_not_a_fallback() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let (kc_store, kc) = mock_keychain();
    store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    add_token(&store);

    fail_next(&kc_store, &keychain_probe_account(store.data_dir()), locked());
    let err = store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap_err();
    assert!(err.to_string().contains("not usable now"), "{err}");
    assert!(!store.data_dir().join(SECRET_FILE).exists());
    // Once unlocked, the same secret comes back.
    assert!(store.load_install_secret_with(SecretPreference::Auto, &kc).is_ok());
}

#[test]
fn a_locked_keychain_on_a_fresh_install_falls_back_to_the_file_and_says_why() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let (kc_store, kc) = mock_keychain();
    fail_next(&kc_store, &keychain_probe_account(store.data_dir()), locked());
    let loaded = store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    assert!(matches!(loaded.source, SecretSource::File(_)));
    let reason = loaded.reason.unwrap();
    assert!(reason.contains("no usable OS keychain") && reason.contains("locked"), "{reason}");

    // Later starts keep using the file even when the keychain works again.
    add_token(&store);
    let again = store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    assert!(matches!(again.source, SecretSource::File(_)));
    assert_eq!(fingerprint(&again.secret), fingerprint(&loaded.secret));
    let err = store.load_install_secret_with(SecretPreference::KeychainOnly, &kc).unwrap_err();
    assert!(err.to_string().contains("kept in the file"), "{err}");
}

#[test]
fn keychain_only_fails_clearly_without_a_keychain() {
    let (_tmp, dir) = data_dir();
    let store = open(&dir);
    let none = Keychain::unavailable("no session bus");
    let err = store.load_install_secret_with(SecretPreference::KeychainOnly, &none).unwrap_err();
    assert!(err.to_string().contains("no usable OS keychain: no session bus"), "{err}");
    assert!(!store.data_dir().join(SECRET_FILE).exists());
}

#[test]
fn the_secret_never_prints() {
    let s = InstallSecret::from_bytes([0xab; 32]);
    let shown = format!("{s:?}");
    assert!(!shown.contains("ab") && !shown.contains("171"), "{shown}");
}

#[test]
fn the_platform_keychain_answers_or_explains_within_the_timeout() {
    // Only connects (nothing is written): safe on a developer machine with a real keychain.
    let start = std::time::Instant::now();
    let kc = Keychain::platform();
    assert!(start.elapsed() < sluice_store::secret::KEYCHAIN_TIMEOUT * 2, "{kc:?}");
    if let Some(reason) = kc.unavailable_reason() {
        assert!(!reason.is_empty());
    }
    // Built once per process.
    assert!(std::ptr::eq(kc, Keychain::platform()));
}

/// The keychain entry's text, as another process (or the user's keychain viewer) reads it.
fn entry_text(kc_store: &Arc<CredentialStore>, dir: &std::path::Path) -> String {
    Entry::new_in_store(kc_store, SERVICE, &keychain_account(dir)).unwrap().get_password().unwrap()
}

#[test]
fn pc02_the_keychain_entry_records_that_sealing_began_and_a_stripped_database_is_a_reset() {
    let (_tmp, dir) = data_dir();
    let (kc_store, kc) = mock_keychain();
    let store = Store::open(&dir).unwrap();
    let loaded = store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    assert!(!loaded.secret.storage_says_sealed());
    store.attach_secret(&loaded.secret).unwrap();
    let text = entry_text(&kc_store, store.data_dir());
    assert!(text.contains(":sealed") && text.starts_with(loaded.secret.stored_form().as_str()));
    let p = crate::add_project(&store, "app");
    drop(store);

    rusqlite::Connection::open(dir.join(sluice_store::DB_FILE))
        .unwrap()
        .execute_batch(
            "UPDATE projects SET seal = NULL, exec = 'any';
             DELETE FROM kv WHERE key LIKE 'seal:%';
             UPDATE kv SET value = 'pending' WHERE key = 'sluice.seal';",
        )
        .unwrap();
    let store = Store::open(&dir).unwrap();
    let again = store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    assert!(again.secret.storage_says_sealed());
    assert_eq!(fingerprint(&again.secret), fingerprint(&loaded.secret));
    store.attach_secret(&again.secret).unwrap();
    let found = store.integrity().unwrap();
    assert_eq!(found[0].kind.code(), "seal-reset", "{found:?}");
    assert!(!store.project(&p.id).unwrap().unwrap().state.is_available());
    store.reseal().unwrap();
    assert!(store.integrity().unwrap().is_empty());
    assert!(entry_text(&kc_store, store.data_dir()).contains(":sealed"), "the record stays");
}

#[test]
fn pc02_a_keychain_that_refuses_the_record_is_an_error_and_the_next_start_records_it() {
    let (_tmp, dir) = data_dir();
    let (kc_store, kc) = mock_keychain();
    let store = Store::open(&dir).unwrap();
    let loaded = store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    fail_next(&kc_store, &keychain_account(store.data_dir()), locked());
    let err = store.attach_secret(&loaded.secret).unwrap_err();
    assert!(err.to_string().contains("cannot record in the OS keychain"), "{err}");
    assert!(!entry_text(&kc_store, store.data_dir()).contains(':'), "nothing half-written");
    drop(store);
    // The database was sealed; the next start records that with the secret.
    let store = Store::open(&dir).unwrap();
    let loaded = store.load_install_secret_with(SecretPreference::Auto, &kc).unwrap();
    store.attach_secret(&loaded.secret).unwrap();
    assert!(store.integrity().unwrap().is_empty());
    assert!(entry_text(&kc_store, store.data_dir()).contains(":sealed"));
}
