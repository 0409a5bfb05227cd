//! Token rows: hashes, lookup, scopes surviving project removal, touch and revoke.

use sluice_core::{Coded, ErrorCode};
use sluice_store::{InstallSecret, NewToken, token_hash};

use crate::{add_project, data_dir, open};

fn new(label: &str, hash: [u8; 32], scope: Option<Vec<sluice_core::ProjectId>>) -> NewToken {
    NewToken {
        label: label.into(),
        hash,
        scope,
        expires_ms: None,
        profile: sluice_core::Profile::Full,
    }
}

#[test]
fn tokens_are_found_by_keyed_hash_and_never_stored_in_plaintext() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let secret = InstallSecret::generate();
    let plaintext = "slc_0123456789abcdefghjkmnpqrstvwxyz";
    let hash = token_hash(&secret, plaintext);
    assert_ne!(hash, token_hash(&InstallSecret::generate(), plaintext), "keyed");
    let t = s.insert_token(&new("Cursor on laptop", hash, None)).unwrap();
    assert!(t.allows(&sluice_core::ProjectId::generate()), "no scope = all projects");

    let found = s.find_token_by_hash(&hash).unwrap().unwrap();
    assert_eq!(found, t);
    assert!(s.find_token_by_hash(&[7; 32]).unwrap().is_none());
    assert_eq!(s.find_token("cursor ON laptop").unwrap().unwrap().id, t.id);
    assert_eq!(s.find_token(t.id.as_str()).unwrap().unwrap().label, t.label);

    let err = s.insert_token(&new("cursor on laptop", [1; 32], None)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert_eq!(s.insert_token(&new("x", hash, None)).unwrap_err().code(), ErrorCode::Conflict);

    // The plaintext appears nowhere in the database file.
    drop(s);
    let bytes = std::fs::read(dir.join("sluice.db")).unwrap();
    let wal = std::fs::read(dir.join("sluice.db-wal")).unwrap_or_default();
    for haystack in [bytes, wal] {
        assert!(!haystack.windows(plaintext.len()).any(|w| w == plaintext.as_bytes()));
    }
}

#[test]
fn scope_survives_project_removal_without_widening() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let a = add_project(&s, "a");
    let b = add_project(&s, "b");
    let only_a = s.insert_token(&new("only-a", [1; 32], Some(vec![a.id.clone()]))).unwrap();
    let both =
        s.insert_token(&new("both", [2; 32], Some(vec![a.id.clone(), b.id.clone()]))).unwrap();
    assert!(only_a.allows(&a.id) && !only_a.allows(&b.id));

    s.delete_project(&a.id).unwrap();
    let only_a = s.find_token("only-a").unwrap().unwrap();
    assert_eq!(only_a.scope, Some(vec![]), "sees nothing, not everything");
    assert!(!only_a.allows(&a.id) && !only_a.allows(&b.id));
    let both = s.find_token(both.id.as_str()).unwrap().unwrap();
    assert_eq!(both.scope, Some(vec![b.id.clone()]));

    // Scopes must name existing projects, and at least one.
    let err = s.insert_token(&new("ghost", [3; 32], Some(vec![a.id.clone()]))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(s.find_token("ghost").unwrap().is_none(), "rolled back");
    let err = s.insert_token(&new("empty", [4; 32], Some(vec![]))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
}

#[test]
fn touch_revoke_and_expiry() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let mut n = new("t", [9; 32], None);
    n.expires_ms = Some(5_000);
    let t = s.insert_token(&n).unwrap();
    assert!(t.is_active(4_999) && !t.is_active(5_000));
    s.touch_token(&t.id, 1234).unwrap();
    assert_eq!(s.find_token("t").unwrap().unwrap().last_used_ms, Some(1234));

    let revoked = s.revoke_token(&t.id).unwrap();
    let at = revoked.revoked_ms.unwrap();
    assert!(!revoked.is_active(0));
    assert_eq!(s.revoke_token(&t.id).unwrap().revoked_ms, Some(at), "idempotent");
    assert_eq!(s.list_tokens().unwrap().len(), 1);
    let ghost = sluice_core::TokenId::generate();
    assert_eq!(s.revoke_token(&ghost).unwrap_err().code(), ErrorCode::NotFound);
    assert!(!format!("{revoked:?}").contains("hash"), "Debug hides the hash");
}

/// A token's own limit only ever tightens: `paused` is not lowered to `read-only` by asking for
/// it, and asking again keeps the first time; only lifting clears it. The database refuses a
/// limit it does not know.
#[test]
fn a_self_limit_only_tightens_until_lifted() {
    use sluice_core::SelfLimit::{Paused, ReadOnly};
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    let t = s.insert_token(&new("agent", [7; 32], None)).unwrap();
    assert_eq!(t.self_limit, None);
    let ro = s.limit_token(&t.id, ReadOnly).unwrap().self_limit.unwrap();
    assert_eq!(ro.0, ReadOnly);
    assert_eq!(s.limit_token(&t.id, ReadOnly).unwrap().self_limit, Some(ro), "kept, with its time");
    assert_eq!(s.limit_token(&t.id, Paused).unwrap().self_limit.unwrap().0, Paused);
    assert_eq!(
        s.limit_token(&t.id, ReadOnly).unwrap().self_limit.unwrap().0,
        Paused,
        "never lowered"
    );
    assert_eq!(s.find_token("agent").unwrap().unwrap().self_limit.unwrap().0, Paused);
    assert_eq!(s.lift_token_limit(&t.id).unwrap().self_limit, None);
    let ghost = sluice_core::TokenId::generate();
    assert_eq!(s.limit_token(&ghost, Paused).unwrap_err().code(), ErrorCode::NotFound);

    let raw = rusqlite::Connection::open(dir.join(sluice_store::DB_FILE)).unwrap();
    let err = raw
        .execute("UPDATE tokens SET self_limit = 'admin' WHERE id = ?1", [t.id.as_str()])
        .unwrap_err();
    assert!(err.to_string().contains("CHECK"), "{err}");
}
