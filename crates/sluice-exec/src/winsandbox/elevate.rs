//! Windows: asking for an administrator's consent. The setup needs one (it creates accounts
//! and firewall rules); Sluice runs as the user, so it starts itself again elevated
//! (`ShellExecuteExW` with the `runas` verb: the UAC prompt, which only a human answers) and
//! waits for that process. Nothing is passed on its command line that should stay secret: the
//! caller hands the password over in a file of its own (`sluice_engine`'s sandbox setup).
//!
//! UNTESTED: type-checked on Linux (`cargo xtask check-targets`), never run.

use std::io;
use std::path::Path;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, WAIT_OBJECT_0};
use windows_sys::Win32::Security::{
    GetTokenInformation, TOKEN_ELEVATION, TOKEN_QUERY, TokenElevation,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, INFINITE, OpenProcessToken, WaitForSingleObject,
};
use windows_sys::Win32::UI::Shell::{SEE_MASK_NOCLOSEPROCESS, SHELLEXECUTEINFOW, ShellExecuteExW};
use windows_sys::Win32::UI::WindowsAndMessaging::SW_HIDE;

use super::WinSandboxError;
use super::os::wide;

/// `ERROR_CANCELLED`: the user answered the prompt with No.
const ERROR_CANCELLED: i32 = 1223;

/// Whether this process runs with an administrator's rights (its token is elevated).
pub fn is_elevated() -> bool {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo handle of this process; `token` is written on success.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return false;
    }
    let mut elevation = TOKEN_ELEVATION { TokenIsElevated: 0 };
    let mut len = 0u32;
    // SAFETY: `token` is ours; the buffer is a TOKEN_ELEVATION of the size passed.
    let ok = unsafe {
        GetTokenInformation(
            token,
            TokenElevation,
            (&mut elevation as *mut TOKEN_ELEVATION).cast(),
            std::mem::size_of::<TOKEN_ELEVATION>() as u32,
            &mut len,
        )
    };
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(token) };
    ok != 0 && elevation.TokenIsElevated != 0
}

/// Starts `exe` with `args` as an administrator, after the UAC prompt, and waits for it; its
/// exit code. The user saying No is `NeedsAdministrator`.
pub fn run_elevated(exe: &Path, args: &[String]) -> Result<u32, WinSandboxError> {
    let exe_text = exe.to_str().ok_or_else(|| {
        WinSandboxError::BadPath("Sluice's own program path is not valid Unicode".into())
    })?;
    // The arguments as one command line; the program itself goes in `lpFile`.
    let line = super::cmdline::command_line(exe_text, args)?;
    let params = line.split_at(exe_text.len() + 2).1.trim_start();
    let (verb, file, params) = (wide("runas"), wide(exe_text), wide(params));
    let mut info = SHELLEXECUTEINFOW {
        cbSize: std::mem::size_of::<SHELLEXECUTEINFOW>() as u32,
        fMask: SEE_MASK_NOCLOSEPROCESS,
        lpVerb: verb.as_ptr(),
        lpFile: file.as_ptr(),
        lpParameters: params.as_ptr(),
        nShow: SW_HIDE,
        ..Default::default()
    };
    // SAFETY: every string is NUL-terminated and outlives the call; `info` is initialized with
    // its size; `hProcess` is written because of SEE_MASK_NOCLOSEPROCESS.
    if unsafe { ShellExecuteExW(&mut info) } == 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(ERROR_CANCELLED) {
            return Err(WinSandboxError::NeedsAdministrator(
                "the administrator's consent was not given; nothing changed".into(),
            ));
        }
        return Err(WinSandboxError::Os {
            step: "asking for an administrator's consent",
            source: err,
        });
    }
    let process = info.hProcess;
    if process.is_null() {
        return Err(WinSandboxError::Os {
            step: "waiting for the setup",
            source: io::Error::other("no process was started"),
        });
    }
    let mut code = 1u32;
    // SAFETY: the process handle ShellExecuteExW returned, closed once below.
    let waited = unsafe { WaitForSingleObject(process, INFINITE) } == WAIT_OBJECT_0
        && unsafe { GetExitCodeProcess(process, &mut code) } != 0;
    // SAFETY: as above.
    unsafe { CloseHandle(process) };
    if !waited {
        return Err(WinSandboxError::Os {
            step: "waiting for the setup",
            source: io::Error::last_os_error(),
        });
    }
    Ok(code)
}
