//! The install secret: 32 random bytes that key the token hashes and the audit chain.
//!
//! It lives in the OS keychain (Secret Service, macOS Keychain, Windows Credential Manager)
//! through `keyring-core`, or — where no keychain works — in an owner-only file
//! `<data_dir>/install-secret`, and the caller is told why ([`LoadedSecret::reason`]).
//!
//! Two hazards shape this module:
//! - A locked keychain answers "no entry" to a read. So a read is trusted only after a probe
//!   has written and read back a throwaway entry, and a fresh secret is never created while the
//!   database holds tokens or audit entries: that would silently orphan them all.
//! - A missing or stuck D-Bus can block forever. Every keychain call runs on a worker thread
//!   that is abandoned after [`KEYCHAIN_TIMEOUT`].
//!
//! Where the secret lives is recorded in the kv table, so a later start knows what to expect
//! and does not switch sources behind the user's back.
//!
//! The stored form is the secret in hex, followed by [`SEALED_SUFFIX`] once this data folder's
//! state has been sealed ([`crate::seal`]), then by [`AUDIT_SUFFIX`] once its audit log has
//! begun (its head record exists): those facts must live where the secret lives, since anything
//! in the database can be put back, or emptied, by whoever edits it (case PC-02). The shorter
//! forms (every secret stored before) are still read.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use keyring_core::{CredentialStore, Entry};
use sluice_core::random_bytes;
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, Zeroizing};

use crate::fsperm::{create_new_private, ensure_private_dir, foreign_access_bits, mode_bits};
pub(crate) use crate::hex::{from_hex, from_hex_vec, to_hex};
use crate::{Store, StoreError};

/// The keychain service name of every Sluice entry.
pub const SERVICE: &str = "sluice";
/// The fallback file's name inside the data folder.
pub const SECRET_FILE: &str = "install-secret";
/// How long one keychain step may take before Sluice gives up on the keychain.
pub const KEYCHAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// The kv key recording where the secret lives: `keychain` or `file`.
const SOURCE_KEY: &str = "sluice.secret.source";
/// What follows the hex in the stored form once the data folder's state was sealed.
pub const SEALED_SUFFIX: &str = ":sealed";
/// What follows [`SEALED_SUFFIX`] once the data folder's audit log has begun.
pub const AUDIT_SUFFIX: &str = ":audit";

/// What the secret's stored form records about its data folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    /// The state has been sealed.
    pub(crate) sealed: bool,
    /// The audit log has begun: its head record was written.
    pub(crate) audit: bool,
}

/// The install secret, and where it was loaded from. Zeroed on drop; never printed.
pub struct InstallSecret {
    bytes: [u8; 32],
    /// Where it is kept; `None` for one made in memory (tests, a restore tool), which can
    /// record nothing.
    kept: Option<Kept>,
}

/// Where a loaded secret is kept, and what its stored form there records.
struct Kept {
    place: Place,
    marks: Marks,
}

enum Place {
    Keychain { store: Arc<CredentialStore>, account: String },
    File(PathBuf),
}

impl InstallSecret {
    /// A fresh secret from the OS random source.
    pub fn generate() -> InstallSecret {
        InstallSecret::from_bytes(random_bytes())
    }

    /// Wraps known bytes (tests, a restore tool). Kept nowhere, it cannot record that sealing
    /// began, so a database reset to before sealing is not told from an upgrade with it.
    pub fn from_bytes(bytes: [u8; 32]) -> InstallSecret {
        InstallSecret { bytes, kept: None }
    }

    /// The key of the audit chain MACs.
    pub(crate) fn audit_key(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(blake3::derive_key("sluice audit chain v1", &self.bytes))
    }

    /// The key of kept credentials ([`crate::credential`]).
    pub(crate) fn credential_key(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(blake3::derive_key("sluice credential v1", &self.bytes))
    }

    /// The key of the state seals ([`crate::seal`]).
    pub(crate) fn seal_key(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(blake3::derive_key("sluice state seal v1", &self.bytes))
    }

    /// The secret as it is stored (the keychain entry, the fallback file), without the seal
    /// marker after it: what a job that reached either could print, for the output redactor.
    pub fn stored_form(&self) -> Zeroizing<String> {
        Zeroizing::new(to_hex(&self.bytes))
    }

    /// Whether the secret's stored form says this data folder's state was sealed.
    pub fn storage_says_sealed(&self) -> bool {
        self.kept.as_ref().is_some_and(|k| k.marks.sealed)
    }

    /// Whether the secret's stored form says this data folder's audit log has begun.
    pub fn storage_says_audit_begun(&self) -> bool {
        self.kept.as_ref().is_some_and(|k| k.marks.audit)
    }

    /// Writes `marks` into the secret's stored form (keychain entry or file) and checks they
    /// were kept. `Ok(false)` for a secret kept nowhere; an error when the storage refuses.
    pub(crate) fn record(&self, marks: Marks) -> Result<bool, StoreError> {
        let Some(kept) = &self.kept else { return Ok(false) };
        match &kept.place {
            Place::Keychain { store, account } => {
                let (store, account) = (store.clone(), account.clone());
                let bytes = Zeroizing::new(self.bytes);
                bounded(move || {
                    let entry = Entry::new_in_store(&store, SERVICE, &account)
                        .map_err(|e| format!("cannot address the keychain ({e})"))?;
                    keychain_store(&entry, &bytes, marks)
                })
                .and_then(|stored| stored)
                .map_err(|why| {
                    StoreError::Secret(format!(
                        "cannot record in the OS keychain that this data folder's state is \
                         sealed and its audit log begun: {why}. Unlock or start the keychain and \
                         try again."
                    ))
                })?;
            }
            Place::File(path) => {
                // A new file renamed over the old one: the secret is never half-written.
                let name = format!("{SECRET_FILE}.{}.new", to_hex(&random_bytes::<8>()));
                let new = path.with_file_name(name);
                write_secret_file(&new, &self.bytes, marks)
                    .and_then(|()| std::fs::rename(&new, path))
                    .map_err(|e| {
                        let _ = std::fs::remove_file(&new);
                        StoreError::io(
                            "cannot record in the install secret file that the state is sealed",
                            e,
                        )
                    })?;
                match read_secret_file(path)? {
                    Some(s)
                        if s.bytes == self.bytes
                            && s.kept.as_ref().is_some_and(|k| k.marks == marks) => {}
                    _ => {
                        return Err(StoreError::Secret(format!(
                            "{} did not keep the record that the state is sealed",
                            path.display()
                        )));
                    }
                }
            }
        }
        Ok(true)
    }

    /// Parses a stored form: the secret (kept nowhere yet) and the marks it carries.
    fn parse_stored(text: &str) -> Option<(InstallSecret, Marks)> {
        let text = text.trim();
        let (text, audit) = match text.strip_suffix(AUDIT_SUFFIX) {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let (hex, sealed) = match text.strip_suffix(SEALED_SUFFIX) {
            Some(hex) => (hex, true),
            None => (text, false),
        };
        // The audit mark is only ever written after the seal mark.
        if audit && !sealed {
            return None;
        }
        Some((InstallSecret::from_bytes(from_hex(hex)?), Marks { sealed, audit }))
    }

    fn kept_at(mut self, place: Place, marks: Marks) -> InstallSecret {
        self.kept = Some(Kept { place, marks });
        self
    }
}

/// The stored form of `bytes` with `marks`.
fn stored_text(bytes: &[u8; 32], marks: Marks) -> Zeroizing<String> {
    let mut text = Zeroizing::new(to_hex(bytes));
    if marks.sealed {
        text.push_str(SEALED_SUFFIX);
        if marks.audit {
            text.push_str(AUDIT_SUFFIX);
        }
    }
    text
}

impl Drop for InstallSecret {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

impl std::fmt::Debug for InstallSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InstallSecret(<redacted>)")
    }
}

/// The stored form of a client token: BLAKE3 keyed with a key derived from the install
/// secret, so a stolen database alone cannot be used to test guesses.
pub fn token_hash(secret: &InstallSecret, plaintext: &str) -> [u8; 32] {
    let key = Zeroizing::new(blake3::derive_key("sluice token hash v1", &secret.bytes));
    *blake3::keyed_hash(&key, plaintext.as_bytes()).as_bytes()
}

/// The audit log's fingerprint of a call's canonical parameters. Keyed, so a short parameter
/// (a file name) cannot be recovered from the log by hashing guesses.
pub fn params_hash(secret: &InstallSecret, canonical_params: &[u8]) -> [u8; 32] {
    let key = Zeroizing::new(blake3::derive_key("sluice audit params v1", &secret.bytes));
    *blake3::keyed_hash(&key, canonical_params).as_bytes()
}

/// Constant-time equality of two hashes.
pub fn hashes_equal(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.ct_eq(b).into()
}

/// Where the user wants the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretPreference {
    /// The OS keychain when it works, else the owner-only file.
    #[default]
    Auto,
    /// The OS keychain or an error saying why it does not work.
    KeychainOnly,
    /// The owner-only file; the keychain is not touched.
    FileOnly,
}

/// Where the secret was found or created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// The OS keychain, by backend name ("Secret Service", …).
    Keychain(String),
    /// The owner-only fallback file.
    File(PathBuf),
}

/// Which kind of source the database recorded at an earlier start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretKind {
    Keychain,
    File,
}

impl SecretKind {
    fn as_str(self) -> &'static str {
        match self {
            SecretKind::Keychain => "keychain",
            SecretKind::File => "file",
        }
    }
}

/// What the database knows when the secret is loaded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SecretContext {
    /// Tokens or audit entries exist: they were made with some secret, so a new one must not
    /// be created.
    pub existing_state: bool,
    /// The source an earlier start recorded, if any.
    pub recorded: Option<SecretKind>,
}

#[derive(Debug)]
pub struct LoadedSecret {
    pub secret: InstallSecret,
    pub source: SecretSource,
    /// Why the keychain is not used, for the UI ("no keychain: …"); `None` when it is.
    pub reason: Option<String>,
    /// The secret was created by this call.
    pub created: bool,
}

/// An OS keychain backend, or the reason there is none. The platform one is built once per
/// process ([`Keychain::platform`]); tests build one over `keyring_core::mock`.
pub struct Keychain {
    pub(crate) store: Result<Arc<CredentialStore>, String>,
    name: String,
}

impl std::fmt::Debug for Keychain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keychain")
            .field("name", &self.name)
            .field("unavailable", &self.store.as_ref().err())
            .finish()
    }
}

impl Keychain {
    pub fn new(store: Arc<CredentialStore>, name: impl Into<String>) -> Keychain {
        Keychain { store: Ok(store), name: name.into() }
    }

    pub fn unavailable(reason: impl Into<String>) -> Keychain {
        Keychain { store: Err(reason.into()), name: "none".into() }
    }

    /// The OS keychain of this platform, connected once per process (a `OnceLock`, like
    /// keyring-core's own default store: a failed start stays failed until restart). Bounded
    /// by [`KEYCHAIN_TIMEOUT`] so a missing session bus cannot hang startup.
    pub fn platform() -> &'static Keychain {
        static PLATFORM: OnceLock<Keychain> = OnceLock::new();
        PLATFORM.get_or_init(|| match bounded(platform_store) {
            Ok(Ok((store, name))) => Keychain::new(store, name),
            Ok(Err(reason)) => Keychain::unavailable(reason),
            Err(reason) => Keychain::unavailable(reason),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why this keychain cannot be used, if it cannot be built at all.
    pub fn unavailable_reason(&self) -> Option<&str> {
        self.store.as_ref().err().map(String::as_str)
    }
}

#[cfg(target_os = "linux")]
fn platform_store() -> Result<(Arc<CredentialStore>, String), String> {
    let store = zbus_secret_service_keyring_store::Store::new()
        .map_err(|e| format!("the Secret Service is not available ({e})"))?;
    Ok((store, "Secret Service".to_owned()))
}

#[cfg(target_os = "macos")]
fn platform_store() -> Result<(Arc<CredentialStore>, String), String> {
    let store = apple_native_keyring_store::keychain::Store::new()
        .map_err(|e| format!("the macOS keychain is not available ({e})"))?;
    Ok((store, "macOS Keychain".to_owned()))
}

#[cfg(windows)]
fn platform_store() -> Result<(Arc<CredentialStore>, String), String> {
    let store = windows_native_keyring_store::Store::new()
        .map_err(|e| format!("the Windows Credential Manager is not available ({e})"))?;
    Ok((store, "Windows Credential Manager".to_owned()))
}

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
fn platform_store() -> Result<(Arc<CredentialStore>, String), String> {
    Err("Sluice has no OS keychain support on this platform".to_owned())
}

/// Runs `f` on its own thread and waits at most [`KEYCHAIN_TIMEOUT`]. A stuck call is
/// abandoned (its thread finishes or blocks on its own); the caller falls back or errs.
pub(crate) fn bounded<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("sluice-keychain".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| format!("cannot start the keychain thread ({e})"))?;
    rx.recv_timeout(KEYCHAIN_TIMEOUT).map_err(|e| match e {
        std::sync::mpsc::RecvTimeoutError::Timeout => {
            format!("the OS keychain did not answer within {} s", KEYCHAIN_TIMEOUT.as_secs())
        }
        std::sync::mpsc::RecvTimeoutError::Disconnected => "the OS keychain call failed".into(),
    })
}

/// The keychain account of the secret of `data_dir`: distinct data folders (tests, portable
/// installs) get distinct secrets.
pub fn keychain_account(data_dir: &Path) -> String {
    let digest = blake3::hash(data_dir.as_os_str().as_encoded_bytes());
    format!("install-secret:{}", &digest.to_hex()[..16])
}

/// The throwaway entry written to prove the keychain is unlocked and writable.
pub fn keychain_probe_account(data_dir: &Path) -> String {
    format!("{}:probe", keychain_account(data_dir))
}

enum KeychainOutcome {
    Found(InstallSecret),
    Created(InstallSecret),
    /// The keychain works and has no secret, and creating one is not allowed.
    Missing,
    Unusable(String),
    Corrupt(String),
}

fn keychain_attempt(
    store: Arc<CredentialStore>,
    account: String,
    probe_account: String,
    may_create: bool,
) -> KeychainOutcome {
    use KeychainOutcome::*;
    // A locked keychain reads as empty: only a successful write-then-read makes a later
    // "no entry" trustworthy.
    let probe = match Entry::new_in_store(&store, SERVICE, &probe_account) {
        Ok(p) => p,
        Err(e) => return Unusable(format!("cannot address the keychain ({e})")),
    };
    let nonce = to_hex(&random_bytes::<16>());
    if let Err(e) = probe.set_password(&nonce) {
        return Unusable(format!("the keychain refused a write ({e})"));
    }
    match probe.get_password() {
        Ok(read) if read == nonce => {}
        Ok(_) => return Unusable("the keychain returned something other than was written".into()),
        Err(e) => return Unusable(format!("the keychain refused a read ({e})")),
    }
    if let Err(e) = probe.delete_credential() {
        tracing::debug!(error = %e, "cannot delete the keychain probe entry");
    }

    let entry = match Entry::new_in_store(&store, SERVICE, &account) {
        Ok(e) => e,
        Err(e) => return Unusable(format!("cannot address the keychain ({e})")),
    };
    let place = || Place::Keychain { store: store.clone(), account: account.clone() };
    match entry.get_password().map(Zeroizing::new) {
        Ok(text) => match InstallSecret::parse_stored(&text) {
            Some((secret, marks)) => Found(secret.kept_at(place(), marks)),
            None => Corrupt("the keychain entry is not a Sluice install secret".into()),
        },
        Err(keyring_core::Error::NoEntry) if may_create => {
            let secret = InstallSecret::generate();
            match keychain_store(&entry, &secret.bytes, Marks::default()) {
                Ok(()) => Created(secret.kept_at(place(), Marks::default())),
                Err(why) => Unusable(why),
            }
        }
        Err(keyring_core::Error::NoEntry) => Missing,
        Err(keyring_core::Error::Ambiguous(_)) => {
            Corrupt("several keychain entries match Sluice's install secret".into())
        }
        Err(e) => Unusable(format!("the keychain refused a read ({e})")),
    }
}

/// Stores `bytes` in `entry` (with `marks`) and reads it back: a store that accepts writes and
/// loses them must not be trusted with the one key that everything else depends on.
fn keychain_store(entry: &Entry, bytes: &[u8; 32], marks: Marks) -> Result<(), String> {
    entry
        .set_password(&stored_text(bytes, marks))
        .map_err(|e| format!("the keychain refused to store the secret ({e})"))?;
    match entry.get_password().map(Zeroizing::new) {
        Ok(text)
            if InstallSecret::parse_stored(&text)
                .is_some_and(|(s, kept)| s.bytes == *bytes && kept == marks) =>
        {
            Ok(())
        }
        _ => Err("the keychain did not keep the stored secret".into()),
    }
}

/// Loads the install secret of `data_dir`, creating it only when that cannot orphan anything.
///
/// Order: a recorded source is honoured; otherwise (unless `FileOnly`) the keychain is probed
/// and read; the owner-only file is the fallback under `Auto`. Errors explain what to do.
pub fn load_or_create(
    data_dir: &Path,
    preference: SecretPreference,
    ctx: SecretContext,
    keychain: &Keychain,
) -> Result<LoadedSecret, StoreError> {
    ensure_private_dir(data_dir)?;
    let data_dir = data_dir
        .canonicalize()
        .map_err(|e| StoreError::io(format!("cannot resolve {}", data_dir.display()), e))?;
    let file = data_dir.join(SECRET_FILE);
    let may_create = !ctx.existing_state;

    match (ctx.recorded, preference) {
        (Some(SecretKind::File), SecretPreference::KeychainOnly) => {
            return Err(StoreError::Secret(format!(
                "the install secret is kept in the file {}, not in the OS keychain; \
                 start without asking for keychain-only",
                file.display()
            )));
        }
        (Some(SecretKind::Keychain), SecretPreference::FileOnly) => {
            return Err(StoreError::Secret(
                "the install secret is kept in the OS keychain; start without asking for \
                 file-only"
                    .into(),
            ));
        }
        (Some(SecretKind::File), _) => {
            let reason = "an earlier start stored the install secret in a file".to_owned();
            return from_file(&file, may_create, reason);
        }
        _ => {}
    }

    let reason = if preference == SecretPreference::FileOnly {
        "file storage was chosen".to_owned()
    } else if ctx.recorded.is_none() && preference == SecretPreference::Auto && file.exists() {
        // A secret file with no record: an earlier start fell back before it could record so.
        "an install secret file already exists".to_owned()
    } else {
        let outcome = match &keychain.store {
            Err(reason) => KeychainOutcome::Unusable(reason.clone()),
            Ok(store) => {
                let (store, account) = (store.clone(), keychain_account(&data_dir));
                let probe = keychain_probe_account(&data_dir);
                bounded(move || keychain_attempt(store, account, probe, may_create))
                    .unwrap_or_else(KeychainOutcome::Unusable)
            }
        };
        let name = keychain.name.clone();
        match outcome {
            KeychainOutcome::Found(secret) => {
                return Ok(keychain_loaded(secret, name, false));
            }
            KeychainOutcome::Created(secret) => {
                return Ok(keychain_loaded(secret, name, true));
            }
            KeychainOutcome::Missing => {
                return Err(StoreError::Secret(format!(
                    "the OS keychain ({name}) has no install secret for this data folder, but \
                     the database already has tokens or audit entries made with one; refusing \
                     to create a new secret, which would invalidate them all. Restore the \
                     keychain entry (service {SERVICE:?}, account {:?}).",
                    keychain_account(&data_dir)
                )));
            }
            KeychainOutcome::Corrupt(why) => {
                return Err(StoreError::Secret(format!("{why} ({name})")));
            }
            KeychainOutcome::Unusable(why) => {
                if preference == SecretPreference::KeychainOnly {
                    return Err(StoreError::Secret(format!("no usable OS keychain: {why}")));
                }
                if ctx.recorded == Some(SecretKind::Keychain) && ctx.existing_state {
                    return Err(StoreError::Secret(format!(
                        "the install secret is kept in the OS keychain, which is not usable \
                         now: {why}. Unlock or start the keychain and try again."
                    )));
                }
                format!("no usable OS keychain: {why}")
            }
        }
    };
    from_file(&file, may_create, reason)
}

fn keychain_loaded(secret: InstallSecret, name: String, created: bool) -> LoadedSecret {
    LoadedSecret { secret, source: SecretSource::Keychain(name), reason: None, created }
}

fn from_file(path: &Path, may_create: bool, reason: String) -> Result<LoadedSecret, StoreError> {
    let loaded = |secret, created| LoadedSecret {
        secret,
        source: SecretSource::File(path.to_owned()),
        reason: Some(reason.clone()),
        created,
    };
    if let Some(secret) = read_secret_file(path)? {
        return Ok(loaded(secret, false));
    }
    if !may_create {
        return Err(StoreError::Secret(format!(
            "the install secret file {} is missing, but the database already has tokens or \
             audit entries made with it; refusing to create a new secret, which would \
             invalidate them all. Restore the file from a backup.",
            path.display()
        )));
    }
    let secret = InstallSecret::generate();
    match write_secret_file(path, &secret.bytes, Marks::default()) {
        Ok(()) => Ok(loaded(secret.kept_at(Place::File(path.to_owned()), Marks::default()), true)),
        // Another process created it between our read and our create: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match read_secret_file(path)? {
            Some(secret) => Ok(loaded(secret, false)),
            None => Err(StoreError::Secret("the install secret file vanished".into())),
        },
        Err(e) => Err(StoreError::io("cannot write the install secret file", e)),
    }
}

/// Writes the stored form of `bytes` to a new owner-only file `path` (`AlreadyExists` if there
/// is one) and syncs it.
fn write_secret_file(path: &Path, bytes: &[u8; 32], marks: Marks) -> std::io::Result<()> {
    let mut f = create_new_private(path)?;
    let mut text = stored_text(bytes, marks);
    text.push('\n');
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// Reads the secret file; `None` if it does not exist. Refuses anything but a regular file
/// readable by its owner only.
fn read_secret_file(path: &Path) -> Result<Option<InstallSecret>, StoreError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io("cannot inspect the install secret file", e)),
    };
    if !meta.is_file() {
        return Err(StoreError::Forbidden(format!(
            "{} is not a regular file; Sluice will not use it as its install secret",
            path.display()
        )));
    }
    if foreign_access_bits(&meta) != 0 {
        return Err(StoreError::Forbidden(format!(
            "the install secret file {} has permissions {:04o}: other users may read it, so \
             Sluice refuses it. If nobody else could have read it, run `chmod 600` on it; \
             otherwise revoke all tokens and start over.",
            path.display(),
            mode_bits(&meta)
        )));
    }
    let mut text = Zeroizing::new(String::new());
    std::fs::File::open(path)
        .and_then(|f| f.take(256).read_to_string(&mut text))
        .map_err(|e| StoreError::io("cannot read the install secret file", e))?;
    match InstallSecret::parse_stored(&text) {
        Some((secret, marks)) => Ok(Some(secret.kept_at(Place::File(path.to_owned()), marks))),
        None => {
            Err(StoreError::Secret(format!("{} is not a Sluice install secret", path.display())))
        }
    }
}

impl Store {
    /// Loads (or creates, on a fresh install) the install secret for this data folder, using
    /// the platform keychain unless `FileOnly`, and records its source for later starts.
    pub fn load_install_secret(
        &self,
        preference: SecretPreference,
    ) -> Result<LoadedSecret, StoreError> {
        if preference == SecretPreference::FileOnly {
            // Never touch D-Bus when the user said not to.
            self.load_install_secret_with(preference, &Keychain::unavailable("not used"))
        } else {
            self.load_install_secret_with(preference, Keychain::platform())
        }
    }

    /// [`Store::load_install_secret`] with an explicit keychain (tests use the mock store).
    pub fn load_install_secret_with(
        &self,
        preference: SecretPreference,
        keychain: &Keychain,
    ) -> Result<LoadedSecret, StoreError> {
        let recorded = match self.kv_get(SOURCE_KEY)?.as_deref() {
            None => None,
            Some("keychain") => Some(SecretKind::Keychain),
            Some("file") => Some(SecretKind::File),
            Some(other) => {
                return Err(StoreError::Corrupt(format!("unknown secret source {other:?}")));
            }
        };
        let ctx = SecretContext { existing_state: self.has_secret_bound_state()?, recorded };
        let loaded = load_or_create(self.data_dir(), preference, ctx, keychain)?;
        let kind = match loaded.source {
            SecretSource::Keychain(_) => SecretKind::Keychain,
            SecretSource::File(_) => SecretKind::File,
        };
        if recorded != Some(kind) {
            self.kv_set(SOURCE_KEY, kind.as_str())?;
        }
        Ok(loaded)
    }
}
