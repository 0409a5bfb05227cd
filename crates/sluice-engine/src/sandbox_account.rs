//! The Windows sandbox account, from the engine's side: its setup with an administrator's
//! consent, its undoing, and its password, which Sluice's secret store keeps (the only copy,
//! beside the connection tokens) and a serving engine gives the job runner at start
//! (`sluice_exec::winsandbox::logon`).
//!
//! The setup needs an administrator; Sluice runs as the user. So the user's process makes the
//! password, writes it to a handoff file of its own in the data folder (owner-only, a name
//! nobody can guess), and starts `sluice.exe` beside it (the command-line tool, which the CLI,
//! the tray and the window all reach this through) elevated (the UAC prompt) with that file's
//! name and the user's profile. The elevated process reads the file, deletes it, sets up the
//! accounts and their rules, and writes what Windows refused into `<handoff>.result`. Only when
//! that says the setup ran does the user's process keep the password. Nothing secret is ever
//! on a command line. Off Windows there is no account: every step says so and changes nothing.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sluice_core::{ErrorCode, Failure};
use sluice_exec::winsandbox::{Password, WinSandboxStatus};
use sluice_store::connections;

use crate::Engine;

/// What the setup did: the rules Windows refused (where, and why), for the human who asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupOutcome {
    pub refused: Vec<String>,
    /// The setup failed: its stable code and message.
    pub error: Option<(String, String)>,
}

/// The handoff file's prefix, in the data folder.
const HANDOFF_PREFIX: &str = "sandbox-setup-";

#[cfg(not(windows))]
fn not_windows() -> Failure {
    Failure::new(
        ErrorCode::ConfinementUnavailable,
        "the sandbox account is Windows' own; on this system jobs are confined by the sandbox \
         `sluice doctor` describes; nothing changed",
    )
}

/// Whether `path` is a handoff file of `data_dir`'s: directly in it, named as this module names
/// them. The elevated process reads only such a file.
fn is_handoff(data_dir: &Path, path: &Path) -> bool {
    let named = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.strip_prefix(HANDOFF_PREFIX)
            .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
    });
    named && path.parent() == Some(data_dir)
}

impl Engine {
    /// What holds of the Windows sandbox here (on other systems: not set up).
    pub fn windows_sandbox_status(&self) -> WinSandboxStatus {
        sluice_exec::winsandbox::current_status()
    }

    /// Gives the job runner the stored password (Windows; elsewhere there is no account, and
    /// the secret store is not asked).
    pub(crate) fn install_sandbox_password(&self) {
        if !cfg!(windows) {
            return;
        }
        let (pref, keychain) = self.connection_store();
        match connections::load_sandbox_password(self.data_dir(), pref, keychain) {
            Ok(stored) => sluice_exec::winsandbox::logon::install(
                stored.map(|p| Password::from_stored(p.to_string())),
            ),
            Err(err) => tracing::warn!(%err, "cannot read the sandbox accounts' password"),
        }
    }

    /// Sets up the sandbox accounts, asking for an administrator's consent unless this process
    /// has it, and keeps their new password. A running engine gives it to jobs from its next
    /// start (this one at once).
    pub fn set_up_windows_sandbox(&self) -> Result<SetupOutcome, Failure> {
        #[cfg(windows)]
        return windows::set_up(self);
        #[cfg(not(windows))]
        Err(not_windows())
    }

    /// The elevated half of [`Engine::set_up_windows_sandbox`]: reads the password from
    /// `handoff` (and deletes it), sets up for the user whose profile is `profile`, and writes
    /// the outcome beside it.
    pub fn set_up_windows_sandbox_elevated(
        &self,
        handoff: &Path,
        profile: &str,
    ) -> Result<(), Failure> {
        if !is_handoff(self.data_dir(), handoff) {
            return Err(Failure::new(
                ErrorCode::InvalidArgument,
                "not a setup handoff of this data folder; nothing changed",
            ));
        }
        #[cfg(windows)]
        return windows::set_up_elevated(self, handoff, profile);
        #[cfg(not(windows))]
        {
            let _ = profile;
            Err(not_windows())
        }
    }

    /// Removes the accounts and their firewall rules (an administrator's step, like the setup;
    /// run it elevated) and forgets the password.
    pub fn tear_down_windows_sandbox(&self) -> Result<(), Failure> {
        #[cfg(windows)]
        {
            sluice_exec::winsandbox::os::teardown().map_err(windows::failure)?;
            let (pref, keychain) = self.connection_store();
            connections::delete_sandbox_password(self.data_dir(), pref, keychain)
                .map_err(|e| e.to_failure())?;
            sluice_exec::winsandbox::logon::install(None);
            Ok(())
        }
        #[cfg(not(windows))]
        Err(not_windows())
    }
}

#[cfg(windows)]
mod windows {
    use std::io::{Read, Write};
    use std::path::{Path, PathBuf};

    use sluice_core::{Coded, ErrorCode, Failure};
    use sluice_exec::winsandbox::{Password, WinPath, WinSandboxError, acl, elevate, logon, os};
    use sluice_store::connections;
    use sluice_store::fsperm::create_new_private;
    use zeroize::Zeroizing;

    use super::{HANDOFF_PREFIX, SetupOutcome};
    use crate::Engine;

    pub(super) fn failure(e: WinSandboxError) -> Failure {
        Failure::new(Coded::code(&e), e.to_string())
    }

    /// An I/O failure of step `what`.
    fn io_failure(what: &'static str) -> impl Fn(std::io::Error) -> Failure {
        move |e| Failure::new(ErrorCode::Internal, format!("{what}: {e}"))
    }

    /// Writes `bytes` to a new owner-only file (never one already there, nor through a link)
    /// and to the disk.
    fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let mut f = create_new_private(path)?;
        f.write_all(bytes)?;
        f.sync_all()
    }

    fn plan_for(engine: &Engine, profile: &str) -> Result<acl::AclPlan, Failure> {
        let profile = WinPath::parse(profile).map_err(failure)?;
        let data = engine.data_dir().to_str().ok_or_else(|| {
            Failure::new(ErrorCode::InvalidArgument, "the data folder's name is not Unicode")
        })?;
        let data = WinPath::parse(data).map_err(failure)?;
        acl::setup_plan(&profile, &data).map_err(failure)
    }

    fn outcome(refused: Vec<(WinPath, std::io::Error)>) -> SetupOutcome {
        let refused = refused.iter().map(|(p, why)| format!("{}: {why}", p.as_str())).collect();
        SetupOutcome { refused, error: None }
    }

    pub(super) fn set_up(engine: &Engine) -> Result<SetupOutcome, Failure> {
        let profile = std::env::var("USERPROFILE").map_err(|_| {
            Failure::new(ErrorCode::ConfinementUnavailable, "USERPROFILE is not set")
        })?;
        let password = Password::generate();
        let done = if elevate::is_elevated() {
            outcome(os::setup(&plan_for(engine, &profile)?, &password).map_err(failure)?)
        } else {
            through_elevated(engine, &profile, &password)?
        };
        if let Some((code, message)) = &done.error {
            return Err(Failure::new(
                ErrorCode::ConfinementUnavailable,
                format!("the setup failed ({code}): {message}"),
            ));
        }
        let (pref, keychain) = engine.connection_store();
        connections::save_sandbox_password(engine.data_dir(), pref, keychain, password.expose())
            .map_err(|e| e.to_failure())?;
        logon::install(Some(password));
        Ok(done)
    }

    /// Hands `password` to the command-line tool, elevated, and waits for its outcome.
    fn through_elevated(
        engine: &Engine,
        profile: &str,
        password: &Password,
    ) -> Result<SetupOutcome, Failure> {
        // The elevated half is a command of the command-line tool, which every install puts
        // beside the app's programs: the tray process asks for the setup too.
        let exe = std::env::current_exe()
            .map_err(io_failure("cannot find Sluice's own program"))?
            .with_file_name("sluice.exe");
        if !exe.is_file() {
            return Err(Failure::new(
                ErrorCode::ConfinementUnavailable,
                format!("{} is missing: reinstall Sluice; nothing changed", exe.display()),
            ));
        }
        let name: [u8; 16] = sluice_core::random_bytes();
        let hex: String = name.iter().map(|b| format!("{b:02x}")).collect();
        let handoff = engine.data_dir().join(format!("{HANDOFF_PREFIX}{hex}"));
        let result = result_path(&handoff);
        write_new(&handoff, password.expose().as_bytes())
            .map_err(io_failure("cannot write the setup handoff"))?;
        let args = vec![
            "--data-dir".to_owned(),
            engine.data_dir().to_string_lossy().into_owned(),
            "sandbox".to_owned(),
            "setup".to_owned(),
            "--handoff".to_owned(),
            handoff.to_string_lossy().into_owned(),
            "--profile".to_owned(),
            profile.to_owned(),
        ];
        let ran = elevate::run_elevated(&exe, &args);
        // Whatever happened, the password leaves the disk.
        let _ = std::fs::remove_file(&handoff);
        let code = ran.map_err(failure)?;
        let mut text = String::new();
        let read =
            std::fs::File::open(&result).and_then(|f| f.take(1 << 20).read_to_string(&mut text));
        let _ = std::fs::remove_file(&result);
        read.map_err(io_failure("the elevated setup left no outcome"))?;
        let done: SetupOutcome = serde_json::from_str(&text).map_err(|e| {
            Failure::new(ErrorCode::Internal, format!("the setup's outcome is unreadable: {e}"))
        })?;
        if code != 0 && done.error.is_none() {
            return Err(Failure::new(
                ErrorCode::Internal,
                format!("the elevated setup exited with {code}"),
            ));
        }
        Ok(done)
    }

    fn result_path(handoff: &Path) -> PathBuf {
        let mut name = handoff.as_os_str().to_owned();
        name.push(".result");
        PathBuf::from(name)
    }

    pub(super) fn set_up_elevated(
        engine: &Engine,
        handoff: &Path,
        profile: &str,
    ) -> Result<(), Failure> {
        let mut text = Zeroizing::new(String::new());
        let read = std::fs::File::open(handoff).and_then(|f| f.take(256).read_to_string(&mut text));
        let _ = std::fs::remove_file(handoff);
        read.map_err(|e| {
            Failure::new(ErrorCode::InvalidArgument, format!("cannot read the handoff: {e}"))
        })?;
        let password = Password::from_stored(text.trim().to_owned());
        let done = match plan_for(engine, profile)
            .and_then(|plan| os::setup(&plan, &password).map_err(failure))
        {
            Ok(refused) => outcome(refused),
            Err(f) => SetupOutcome {
                refused: Vec::new(),
                error: Some((f.code.as_str().to_owned(), f.message)),
            },
        };
        let json = serde_json::to_vec(&done).unwrap_or_default();
        write_new(&result_path(handoff), &json).map_err(io_failure("cannot write the outcome"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_handoff_of_this_data_folder_is_read() {
        let dir = Path::new("/data/sluice");
        let good = dir.join(format!("{HANDOFF_PREFIX}{}", "0a".repeat(16)));
        assert!(is_handoff(dir, &good));
        for bad in [
            Path::new("/data/other").join(good.file_name().unwrap()),
            dir.join("sub").join(good.file_name().unwrap()),
            dir.join(format!("{HANDOFF_PREFIX}{}", "0a".repeat(15))),
            dir.join(format!("{HANDOFF_PREFIX}{}x", "0a".repeat(16))),
            dir.join(format!("{HANDOFF_PREFIX}{}", "zz".repeat(16))),
            dir.join("install-secret"),
            dir.join(format!("{HANDOFF_PREFIX}{}.result", "0a".repeat(16))),
        ] {
            assert!(!is_handoff(dir, &bad), "{}", bad.display());
        }
    }
}
