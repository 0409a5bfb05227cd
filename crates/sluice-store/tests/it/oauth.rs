//! The authorization server's state: decisions are made once and only through the store, codes
//! are minted once from an approved request and redeemed once, refresh tokens rotate, and an
//! edit of the database without the install secret approves nothing, rebinds no grant and turns
//! nothing on (PC-02).

use rusqlite::{Connection, params};
use sluice_store::{
    CodeRedemption, NewOAuthRequest, NewToken, OAuthClient, OAuthDecision, OAuthGrant,
    RefreshRotation, Store, now_ms,
};

use crate::{data_dir, open};

fn raw(dir: &std::path::Path) -> Connection {
    Connection::open(dir.join(sluice_store::DB_FILE)).unwrap()
}

fn client(s: &Store) -> OAuthClient {
    let c = OAuthClient {
        id: "slcl_one".into(),
        name: "Claude".into(),
        redirect_uris: vec!["https://claude.ai/api/mcp/auth_callback".into()],
        created_ms: now_ms(),
    };
    s.put_oauth_client(&c).unwrap();
    c
}

fn request(s: &Store, id: &str) {
    s.insert_oauth_request(&NewOAuthRequest {
        id: id.into(),
        client_id: "slcl_one".into(),
        redirect_uri: "https://claude.ai/api/mcp/auth_callback".into(),
        state: Some("xyz".into()),
        code_challenge: "c".repeat(43),
        resource: "https://h.example/mcp".into(),
        user_code: "ABCD-EFGH".into(),
        expires_ms: now_ms() + 600_000,
    })
    .unwrap();
}

#[test]
fn a_request_is_decided_once_and_mints_one_code_redeemed_once() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    client(&s);
    request(&s, "slrq_a");
    assert!(!s.mint_oauth_code("slrq_a", &[1; 32], now_ms() + 60_000).unwrap(), "pending");
    assert!(s.decide_oauth_request("slrq_a", true).unwrap());
    assert!(!s.decide_oauth_request("slrq_a", false).unwrap(), "decided once");
    assert!(s.mint_oauth_code("slrq_a", &[1; 32], now_ms() + 60_000).unwrap());
    assert!(!s.mint_oauth_code("slrq_a", &[2; 32], now_ms() + 60_000).unwrap(), "minted once");
    let CodeRedemption::Fresh(r) = s.redeem_oauth_code(&[1; 32]).unwrap() else { panic!() };
    assert_eq!((r.decision, r.state.as_deref()), (OAuthDecision::Approved, Some("xyz")));
    assert_eq!(s.redeem_oauth_code(&[1; 32]).unwrap(), CodeRedemption::Replayed(None));
    assert_eq!(s.redeem_oauth_code(&[9; 32]).unwrap(), CodeRedemption::Unknown);
}

#[test]
fn pc02_an_approval_written_into_the_database_approves_nothing() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    client(&s);
    request(&s, "slrq_b");
    raw(&dir)
        .execute("UPDATE oauth_requests SET decision = 'approved' WHERE id = 'slrq_b'", [])
        .unwrap();
    let r = s.oauth_request("slrq_b").unwrap().unwrap();
    assert!(r.tampered && r.decision == OAuthDecision::Denied, "{r:?}");
    let found = s.integrity().unwrap();
    assert!(
        found.iter().any(|f| f.kind.code() == "connection-request-seal" && f.subject == "slrq_b")
    );
    assert!(s.reseal().unwrap().is_empty(), "a reseal never approves a request");
    assert!(s.oauth_request("slrq_b").unwrap().unwrap().tampered);
    assert!(!s.mint_oauth_code("slrq_b", &[3; 32], now_ms() + 60_000).unwrap());
    assert!(s.decide_oauth_request("slrq_b", true).is_err(), "nor can it be decided further");
}

#[test]
fn pc02_a_grant_rebound_in_the_database_is_no_grant_and_refresh_rotates_once() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    client(&s);
    let token = s
        .insert_token(&NewToken {
            label: "remote: Claude".into(),
            hash: [4; 32],
            scope: None,
            expires_ms: Some(now_ms() + 3_600_000),
            profile: sluice_core::Profile::Full,
        })
        .unwrap();
    let grant = OAuthGrant {
        token_id: token.id.clone(),
        client_id: "slcl_one".into(),
        client_name: "Claude".into(),
        resource: "https://h.example/mcp".into(),
    };
    s.insert_oauth_grant(&grant, &[5; 32], now_ms() + 86_400_000).unwrap();
    assert_eq!(s.oauth_grant(&token.id).unwrap(), Some(grant));
    let rotated = s.rotate_oauth_refresh(&[5; 32], &[6; 32], now_ms() + 1, &[7; 32], now_ms() + 1);
    assert_eq!(rotated.unwrap(), RefreshRotation::Rotated(token.id.clone()));
    assert_eq!(s.find_token_by_hash(&[7; 32]).unwrap().unwrap().id, token.id);
    assert!(s.find_token_by_hash(&[4; 32]).unwrap().is_none(), "the old access hash is gone");
    let again = s.rotate_oauth_refresh(&[5; 32], &[8; 32], now_ms() + 1, &[9; 32], now_ms() + 1);
    assert_eq!(again.unwrap(), RefreshRotation::Spent(token.id.clone()));
    raw(&dir)
        .execute(
            "UPDATE oauth_grants SET resource = ?1 WHERE token_id = ?2",
            params!["https://evil.example/mcp", token.id.as_str()],
        )
        .unwrap();
    assert_eq!(s.oauth_grant(&token.id).unwrap(), None);
    let found = s.integrity().unwrap();
    assert!(found.iter().any(|f| f.kind.code() == "grant-seal" && f.subject == token.id.as_str()));
    assert!(s.reseal().unwrap().iter().all(|f| f.kind.code() != "grant-seal"));
    assert_eq!(s.oauth_grant(&token.id).unwrap(), None, "a reseal never rebinds a grant");
}

#[test]
fn pc02_reach_written_into_the_database_stays_off() {
    let (_tmp, dir) = data_dir();
    let s = open(&dir);
    s.set_sealed_text("reach", Some(r#"{"on":1}"#)).unwrap();
    assert_eq!(s.sealed_text("reach").unwrap().as_deref(), Some(r#"{"on":1}"#));
    raw(&dir).execute("UPDATE kv SET value = '{\"on\":2}' WHERE key = 'reach'", []).unwrap();
    assert_eq!(s.sealed_text("reach").unwrap(), None);
    s.set_sealed_text("reach", None).unwrap();
    raw(&dir).execute("INSERT INTO kv (key, value) VALUES ('reach', '{}')", []).unwrap();
    assert_eq!(s.sealed_text("reach").unwrap(), None, "a value with no seal is off");
}
