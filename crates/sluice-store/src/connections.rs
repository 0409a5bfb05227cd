//! Client tokens kept by Sluice for one "connection" (a configured client, by name), so a
//! stdio client's config needs no secret: it runs `sluice stdio --connection NAME` and the
//! bridge reads the token here. Same places as the install secret: the OS keychain (service
//! `sluice`, one account per data folder and name), or — where no keychain works — an
//! owner-only file `<data_dir>/connections/NAME.token`.
//!
//! The Windows sandbox accounts' password ([`save_sandbox_password`]) is kept the same way, in
//! an entry of its own (`windows-sandbox:…`, or `<data_dir>/windows-sandbox.password`): no
//! connection name can reach it.

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

/// Where one secret lives: its keychain account, and its fallback file (in `dir`).
struct Place {
    account: String,
    dir: PathBuf,
    file: PathBuf,
    /// What it is, for messages: "connection token".
    what: &'static str,
}

impl Place {
    fn connection(data_dir: &Path, name: &str) -> Result<Place, StoreError> {
        check(name)?;
        Ok(Place {
            account: account(data_dir, name),
            dir: data_dir.join(DIR),
            file: file(data_dir, name),
            what: "connection token",
        })
    }

    fn sandbox_password(data_dir: &Path) -> Place {
        let digest = blake3::hash(canonical(data_dir).as_os_str().as_encoded_bytes());
        Place {
            account: format!("windows-sandbox:{}", &digest.to_hex()[..16]),
            dir: data_dir.to_owned(),
            file: data_dir.join(SANDBOX_PASSWORD_FILE),
            what: "sandbox password",
        }
    }
}

/// The sandbox password's fallback file in the data folder.
pub const SANDBOX_PASSWORD_FILE: &str = "windows-sandbox.password";

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
    save_at(&Place::connection(data_dir, name)?, data_dir, preference, keychain, token)
}

/// Stores the Windows sandbox accounts' password, as [`save`] stores a token.
pub fn save_sandbox_password(
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
    password: &str,
) -> Result<Stored, StoreError> {
    save_at(&Place::sandbox_password(data_dir), data_dir, preference, keychain, password)
}

fn save_at(
    place: &Place,
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
    secret: &str,
) -> Result<Stored, StoreError> {
    let what = place.what;
    if preference != SecretPreference::FileOnly {
        let value = Zeroizing::new(secret.to_owned());
        let expect = Zeroizing::new(secret.to_owned());
        let outcome = with_entry(keychain, place.account.clone(), move |entry| {
            entry.set_password(&value)?;
            entry.get_password().map(|read| *read == *expect)
        });
        match outcome {
            Ok(true) => {
                // A stale fallback file from an earlier, keychain-less run must not linger.
                let _ = std::fs::remove_file(&place.file);
                return Ok(Stored::Keychain(keychain.name().to_owned()));
            }
            Ok(false) => {
                if preference == SecretPreference::KeychainOnly {
                    return Err(StoreError::Secret(format!(
                        "the keychain did not keep the {what}"
                    )));
                }
            }
            Err(why) => {
                if preference == SecretPreference::KeychainOnly {
                    return Err(StoreError::Secret(format!("no usable OS keychain: {why}")));
                }
                tracing::debug!(%why, "{what} falls back to a file");
            }
        }
    }
    ensure_private_dir(data_dir)?;
    ensure_private_dir(&place.dir)?;
    let name = place.file.file_name().unwrap_or_default().to_string_lossy();
    let tmp = place.dir.join(format!(".{name}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let mut f = create_new_private(&tmp)
        .map_err(|e| StoreError::io(format!("cannot create the {what} file"), e))?;
    f.write_all(secret.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, &place.file))
        .map_err(|e| StoreError::io(format!("cannot write the {what} file"), e))?;
    Ok(Stored::File(place.file.clone()))
}

/// The token of connection `name`, from the keychain (unless `FileOnly`) or the owner-only
/// file; `None` when neither has it.
pub fn load(
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
    name: &str,
) -> Result<Option<Zeroizing<String>>, StoreError> {
    load_at(&Place::connection(data_dir, name)?, preference, keychain)
}

/// The Windows sandbox accounts' password, as [`load`] reads a token.
pub fn load_sandbox_password(
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
) -> Result<Option<Zeroizing<String>>, StoreError> {
    load_at(&Place::sandbox_password(data_dir), preference, keychain)
}

fn load_at(
    place: &Place,
    preference: SecretPreference,
    keychain: &Keychain,
) -> Result<Option<Zeroizing<String>>, StoreError> {
    let what = place.what;
    if preference != SecretPreference::FileOnly {
        let outcome =
            with_entry(keychain, place.account.clone(), |entry| match entry.get_password() {
                Ok(p) => Ok(Some(Zeroizing::new(p))),
                Err(keyring_core::Error::NoEntry) => Ok(None),
                Err(e) => Err(e),
            });
        match outcome {
            Ok(Some(secret)) => return Ok(Some(secret)),
            Ok(None) => {}
            Err(why) if preference == SecretPreference::KeychainOnly => {
                return Err(StoreError::Secret(format!("no usable OS keychain: {why}")));
            }
            Err(why) => tracing::debug!(%why, "keychain unusable; trying the {what} file"),
        }
    }
    let path = &place.file;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(format!("cannot inspect the {what} file"), e)),
    };
    if !meta.is_file() || foreign_access_bits(&meta) != 0 {
        return Err(StoreError::Forbidden(format!(
            "{} is not an owner-only regular file; Sluice refuses to use it",
            path.display()
        )));
    }
    let mut text = Zeroizing::new(String::new());
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_string(&mut text))
        .map_err(|e| StoreError::io(format!("cannot read the {what} file"), e))?;
    let secret = Zeroizing::new(text.trim().to_owned());
    Ok((!secret.is_empty()).then_some(secret))
}

/// Forgets connection `name` everywhere; whether anything was there.
pub fn delete(
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
    name: &str,
) -> Result<bool, StoreError> {
    delete_at(&Place::connection(data_dir, name)?, preference, keychain)
}

/// Forgets the Windows sandbox accounts' password everywhere, as [`delete`] forgets a token.
pub fn delete_sandbox_password(
    data_dir: &Path,
    preference: SecretPreference,
    keychain: &Keychain,
) -> Result<bool, StoreError> {
    delete_at(&Place::sandbox_password(data_dir), preference, keychain)
}

fn delete_at(
    place: &Place,
    preference: SecretPreference,
    keychain: &Keychain,
) -> Result<bool, StoreError> {
    let mut found = false;
    if preference != SecretPreference::FileOnly {
        let outcome =
            with_entry(keychain, place.account.clone(), |entry| match entry.delete_credential() {
                Ok(()) => Ok(true),
                Err(keyring_core::Error::NoEntry) => Ok(false),
                Err(e) => Err(e),
            });
        found |= outcome.unwrap_or(false);
    }
    match std::fs::remove_file(&place.file) {
        Ok(()) => found = true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(StoreError::io(format!("cannot remove the {} file", place.what), e)),
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

    #[test]
    fn the_sandbox_password_has_a_place_no_connection_name_reaches() {
        let tmp = tempfile::tempdir().unwrap();
        for kc in [
            Keychain::unavailable("test"),
            Keychain::new(keyring_core::mock::Store::new().unwrap(), "mock"),
        ] {
            let pref = SecretPreference::Auto;
            assert_eq!(load_sandbox_password(tmp.path(), pref, &kc).unwrap(), None);
            save_sandbox_password(tmp.path(), pref, &kc, "Pw-1").unwrap();
            // Connections by every name that could look like its place are other entries.
            for name in ["windows-sandbox", "windows-sandbox.password", "sandbox"] {
                save(tmp.path(), pref, &kc, name, "slc_t").unwrap();
            }
            let kept = load_sandbox_password(tmp.path(), pref, &kc).unwrap();
            assert_eq!(kept.as_deref().map(String::as_str), Some("Pw-1"));
            assert!(delete(tmp.path(), pref, &kc, "windows-sandbox").unwrap());
            assert!(load_sandbox_password(tmp.path(), pref, &kc).unwrap().is_some());
            assert!(delete_sandbox_password(tmp.path(), pref, &kc).unwrap());
            assert_eq!(load_sandbox_password(tmp.path(), pref, &kc).unwrap(), None);
            assert!(!delete_sandbox_password(tmp.path(), pref, &kc).unwrap());
        }
        // Without a keychain it is an owner-only file, refused when others can read it.
        let kc = Keychain::unavailable("test");
        let pref = SecretPreference::Auto;
        let Stored::File(path) = save_sandbox_password(tmp.path(), pref, &kc, "Pw-2").unwrap()
        else {
            panic!("expected a file")
        };
        assert_eq!(path, tmp.path().join(SANDBOX_PASSWORD_FILE));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(matches!(
                load_sandbox_password(tmp.path(), pref, &kc),
                Err(StoreError::Forbidden(_))
            ));
        }
    }
}
