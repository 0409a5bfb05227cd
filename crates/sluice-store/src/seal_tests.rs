//! The seal encoding: no two rows share a seal.

use super::*;

/// Values are type-tagged and length-prefixed, and the table and the extra strings are
/// bound too: no two different rows share a seal.
#[test]
fn no_two_rows_encode_alike() {
    let key = [1u8; 32];
    let t = |s: &'static str| ValueRef::Text(s.as_bytes());
    let seals = [
        seal_of(&key, "projects", &[t("ab"), t("c")], &[]),
        seal_of(&key, "projects", &[t("a"), t("bc")], &[]),
        seal_of(&key, "projects", &[t(""), ValueRef::Null], &[]),
        seal_of(&key, "projects", &[ValueRef::Null, t("")], &[]),
        seal_of(&key, "projects", &[ValueRef::Integer(1), ValueRef::Null], &[]),
        seal_of(&key, "projects", &[t("1"), ValueRef::Null], &[]),
        seal_of(&key, "projects", &[ValueRef::Blob(b"1"), ValueRef::Null], &[]),
        seal_of(&key, "tokens", &[t("ab"), t("c")], &[]),
        seal_of(&key, "tokens", &[t("ab"), t("c")], &["proj_a"]),
        seal_of(&key, "tokens", &[t("ab")], &["c"]),
        seal_of(&[2u8; 32], "projects", &[t("ab"), t("c")], &[]),
    ];
    for (i, a) in seals.iter().enumerate() {
        assert!(seals[i + 1..].iter().all(|b| a != b), "seal {i} collides");
    }
}
