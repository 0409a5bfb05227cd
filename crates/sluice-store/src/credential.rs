//! Credentials Sluice must hand back in the clear to use them (the API key of OpenAI's Secure
//! MCP Tunnel), unlike tokens, which are only ever compared. Each is encrypted with
//! XChaCha20-Poly1305 under a key derived from the install secret, so the database alone does not
//! give it away, and bound to its name, so one cannot be moved into another's place. Stored in
//! the kv table as hex (`credential.<name>`); a value that does not decrypt reads as absent.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use zeroize::Zeroizing;

use crate::secret::{InstallSecret, from_hex_vec, to_hex};
use crate::{Store, StoreError};

const NONCE_BYTES: usize = 24;

fn kv_name(name: &str) -> String {
    format!("credential.{name}")
}

fn cipher(secret: &InstallSecret) -> XChaCha20Poly1305 {
    let key = secret.credential_key();
    XChaCha20Poly1305::new((&*key).into())
}

impl Store {
    /// Keeps `value` as the credential `name`, encrypted; `None` removes it.
    pub fn set_credential(
        &self,
        secret: &InstallSecret,
        name: &str,
        value: Option<&str>,
    ) -> Result<(), StoreError> {
        let Some(value) = value else {
            self.kv_delete(&kv_name(name))?;
            return Ok(());
        };
        let nonce: [u8; NONCE_BYTES] = sluice_core::random_bytes();
        let sealed = cipher(secret)
            .encrypt(&XNonce::from(nonce), Payload { msg: value.as_bytes(), aad: name.as_bytes() })
            .map_err(|_| StoreError::Corrupt("cannot encrypt a credential".into()))?;
        self.kv_set(&kv_name(name), &to_hex(&[&nonce[..], &sealed].concat()))
    }

    /// The credential `name`, if one is kept and decrypts under this install secret.
    pub fn credential(
        &self,
        secret: &InstallSecret,
        name: &str,
    ) -> Result<Option<Zeroizing<String>>, StoreError> {
        let Some(stored) = self.kv_get(&kv_name(name))? else { return Ok(None) };
        let Some(bytes) = from_hex_vec(&stored).filter(|b| b.len() > NONCE_BYTES) else {
            return Ok(None);
        };
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        let Ok(nonce) = <[u8; NONCE_BYTES]>::try_from(nonce) else { return Ok(None) };
        let opened = cipher(secret)
            .decrypt(&XNonce::from(nonce), Payload { msg: sealed, aad: name.as_bytes() })
            .ok()
            .map(Zeroizing::new);
        Ok(opened.and_then(|b| String::from_utf8(b.to_vec()).ok()).map(Zeroizing::new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_is_kept_encrypted_and_only_its_own_secret_and_name_open_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let secret = InstallSecret::generate();
        store.set_credential(&secret, "openai-tunnel", Some("sk-proj-abc123")).unwrap();
        let stored = store.kv_get("credential.openai-tunnel").unwrap().unwrap();
        assert!(!stored.contains("abc123") && !stored.contains(&to_hex(b"sk-proj-abc123")));
        assert_eq!(
            store.credential(&secret, "openai-tunnel").unwrap().as_deref().map(|s| s.as_str()),
            Some("sk-proj-abc123")
        );
        // Another install's secret, or the value moved under another name, opens nothing.
        assert!(store.credential(&InstallSecret::generate(), "openai-tunnel").unwrap().is_none());
        store.kv_set("credential.other", &stored).unwrap();
        assert!(store.credential(&secret, "other").unwrap().is_none());
        // Tampered or malformed values read as absent.
        let mut flipped = stored.into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
        store.kv_set("credential.openai-tunnel", std::str::from_utf8(&flipped).unwrap()).unwrap();
        assert!(store.credential(&secret, "openai-tunnel").unwrap().is_none());
        store.kv_set("credential.openai-tunnel", "zz").unwrap();
        assert!(store.credential(&secret, "openai-tunnel").unwrap().is_none());
        store.set_credential(&secret, "openai-tunnel", None).unwrap();
        assert!(store.kv_get("credential.openai-tunnel").unwrap().is_none());
    }
}
