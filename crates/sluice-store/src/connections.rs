//! Client tokens kept by Sluice for one "connection" (a configured client, by name), so a
//! stdio client's config needs no secret: it runs `sluice stdio --connection NAME` and the
//! bridge reads the token here. Same places as the install secret: the OS keychain (service
//! `sluice`, one account per data folder and name), or — where no keychain works — an
//! owner-only file `<data_dir>/connections/NAME.token`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use keyring_core::Entry;
use zeroize::Zeroizing;

use crate::StoreError;
use crate::fsperm::{create_new_private, ensure_private_dir, foreign_access_bits};
use crate::secret::{Keychain, SERVICE, SecretPreference, bounded};

/// The folder (inside the data folder) of the file fallback.
pub const DIR: &str = "connections";

/// Where a connection's token was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// The OS keychain, by backend name.
    Keychain(String),
    /// The owner-only file.
    File(PathBuf),
}

/// A connection name: 1–64 of `a-z A-Z 0-9 - _ .`, not starting with a dot (it becomes a
/// keychain account and a file name).
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

fn check(name: &str) -> Result<(), StoreError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "{name:?} is not a connection name (1-64 letters, digits, '-', '_' or '.')"
        )))
    }
}

fn canonical(data_dir: &Path) -> PathBuf {
    data_dir.canonicalize().unwrap_or_else(|_| data_dir.to_owned())
}

/// The keychain account of connection `name` of `data_dir`.
pub fn account(data_dir: &Path, name: &str) -> String {
    let digest = blake3::hash(canonical(data_dir).as_os_str().as_encoded_bytes());
    format!("connection:{}:{name}", &digest.to_hex()[..16])
}

fn file(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(DIR).join(format!("{name}.token"))
}

/// Runs one keychain operation on entry `account`, bounded in time.
fn with_entry<T: Send + 'static>(
    keychain: &Keychain,
    account: String,
    f: impl FnOnce(Entry) -> Result<T, keyring_core::Error> + Send + 'static,
) -> Result<T, String> {
    let store = keychain.store.clone()?;
    bounded(move || {
        let entry = Entry::new_in_store(&store, SERVICE, &account)?;
        f(entry)
    })?
    .map_err(|e| e.to_string())
}

/// Stores `token` for connection `name`: the keychain unless `FileOnly` (read back to prove
/// it kept it), else — under `Auto` — the owner-only file.
pub fn save(
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
    name: &str,
    token: &str,
) -> Result<Stored, StoreError> {
    check(name)?;
    if preference != SecretPreference::FileOnly {
        let value = Zeroizing::new(token.to_owned());
        let expect = Zeroizing::new(token.to_owned());
        let outcome = with_entry(keychain, account(data_dir, name), move |entry| {
            entry.set_password(&value)?;
            entry.get_password().map(|read| *read == *expect)
        });
        match outcome {
            Ok(true) => {
                // A stale fallback file from an earlier, keychain-less run must not linger.
                let _ = std::fs::remove_file(file(data_dir, name));
                return Ok(Stored::Keychain(keychain.name().to_owned()));
            }
            Ok(false) => {
                if preference == SecretPreference::KeychainOnly {
                    return Err(StoreError::Secret("the keychain did not keep the token".into()));
                }
            }
            Err(why) => {
                if preference == SecretPreference::KeychainOnly {
                    return Err(StoreError::Secret(format!("no usable OS keychain: {why}")));
                }
                tracing::debug!(%why, "connection token falls back to a file");
            }
        }
    }
    let dir = data_dir.join(DIR);
    ensure_private_dir(data_dir)?;
    ensure_private_dir(&dir)?;
    let path = file(data_dir, name);
    let tmp = dir.join(format!(".{name}.token.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let mut f = create_new_private(&tmp)
        .map_err(|e| StoreError::io("cannot create the connection token file", e))?;
    f.write_all(token.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| StoreError::io("cannot write the connection token file", e))?;
    Ok(Stored::File(path))
}

/// The token of connection `name`, from the keychain (unless `FileOnly`) or the owner-only
/// file; `None` when neither has it.
pub fn load(
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
    name: &str,
) -> Result<Option<Zeroizing<String>>, StoreError> {
    check(name)?;
    if preference != SecretPreference::FileOnly {
        let outcome =
            with_entry(keychain, account(data_dir, name), |entry| match entry.get_password() {
                Ok(p) => Ok(Some(Zeroizing::new(p))),
                Err(keyring_core::Error::NoEntry) => Ok(None),
                Err(e) => Err(e),
            });
        match outcome {
            Ok(Some(token)) => return Ok(Some(token)),
            Ok(None) => {}
            Err(why) if preference == SecretPreference::KeychainOnly => {
                return Err(StoreError::Secret(format!("no usable OS keychain: {why}")));
            }
            Err(why) => tracing::debug!(%why, "keychain unusable; trying the token file"),
        }
    }
    let path = file(data_dir, name);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io("cannot inspect the connection token file", e)),
    };
    if !meta.is_file() || foreign_access_bits(&meta) != 0 {
        return Err(StoreError::Forbidden(format!(
            "{} is not an owner-only regular file; Sluice refuses to use it",
            path.display()
        )));
    }
    let mut text = Zeroizing::new(String::new());
    std::fs::File::open(&path)
        .and_then(|f| f.take(4096).read_to_string(&mut text))
        .map_err(|e| StoreError::io("cannot read the connection token file", e))?;
    let token = Zeroizing::new(text.trim().to_owned());
    Ok((!token.is_empty()).then_some(token))
}

/// Forgets connection `name` everywhere; whether anything was there.
pub fn delete(
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
    name: &str,
) -> Result<bool, StoreError> {
    check(name)?;
    let mut found = false;
    if preference != SecretPreference::FileOnly {
        let outcome = with_entry(keychain, account(data_dir, name), |entry| {
            match entry.delete_credential() {
                Ok(()) => Ok(true),
                Err(keyring_core::Error::NoEntry) => Ok(false),
                Err(e) => Err(e),
            }
        });
        found |= outcome.unwrap_or(false);
    }
    match std::fs::remove_file(file(data_dir, name)) {
        Ok(()) => found = true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(StoreError::io("cannot remove the connection token file", e)),
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_as_accounts_and_file_names() {
        assert!(valid_name("claude-desktop"));
        assert!(valid_name("my_cursor.2"));
        for bad in ["", ".hidden", "a/b", "..", "a b", "x\n", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn file_fallback_round_trip_is_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        let kc = Keychain::unavailable("test");
        let pref = SecretPreference::Auto;
        assert_eq!(load(tmp.path(), pref, &kc, "cursor").unwrap(), None);
        let stored = save(tmp.path(), pref, &kc, "cursor", "slc_x").unwrap();
        let Stored::File(path) = stored else { panic!("expected a file") };
        assert!(path.is_file(), "{}", path.display());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(
            load(tmp.path(), pref, &kc, "cursor").unwrap().as_deref().map(String::as_str),
            Some("slc_x")
        );
        save(tmp.path(), pref, &kc, "cursor", "slc_y").unwrap();
        assert_eq!(
            load(tmp.path(), pref, &kc, "cursor").unwrap().as_deref().map(String::as_str),
            Some("slc_y")
        );
        assert!(delete(tmp.path(), pref, &kc, "cursor").unwrap());
        assert_eq!(load(tmp.path(), pref, &kc, "cursor").unwrap(), None);
        assert!(save(tmp.path(), SecretPreference::KeychainOnly, &kc, "cursor", "t").is_err());
        assert!(save(tmp.path(), pref, &kc, "../x", "t").is_err());
    }

    #[test]
    fn keychain_round_trip_through_a_credential_store() {
        let tmp = tempfile::tempdir().unwrap();
        let store = keyring_core::mock::Store::new().unwrap();
        let kc = Keychain::new(store, "mock");
        let pref = SecretPreference::KeychainOnly;
        assert!(matches!(
            save(tmp.path(), pref, &kc, "codex", "slc_k").unwrap(),
            Stored::Keychain(_)
        ));
        assert_eq!(
            load(tmp.path(), pref, &kc, "codex").unwrap().as_deref().map(String::as_str),
            Some("slc_k")
        );
        assert!(!tmp.path().join(DIR).exists(), "nothing on disk");
        assert!(delete(tmp.path(), pref, &kc, "codex").unwrap());
        assert_eq!(load(tmp.path(), pref, &kc, "codex").unwrap(), None);
    }
}
