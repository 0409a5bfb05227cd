//! Windows: starting a job's process as a sandbox account. `std::process::Command` cannot
//! start a process as another account, so this does what it does for its own calls: a
//! command line and environment block built as data ([`super::cmdline`]), stdin from `NUL`,
//! stdout and stderr on pipes, then `CreateProcessWithLogonW` (the Secondary Logon service,
//! which needs no privilege of the caller and gives the account the window station),
//! suspended, put in a new Job Object (kill on close), and resumed: it runs nothing before it
//! is inside. The job's spawn calls it (`crate::spawn`) when the account's setup holds.
//!
//! UNTESTED: type-checked on Linux (`cargo xtask check-targets`), never run.

use std::fs::File;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{
    GENERIC_READ, GENERIC_WRITE, HANDLE, HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE,
    SetHandleInformation, WAIT_OBJECT_0, WAIT_TIMEOUT,
};
use windows_sys::Win32::Security::SECURITY_ATTRIBUTES;
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
};
use windows_sys::Win32::System::Pipes::CreatePipe;
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT,
    CreateProcessWithLogonW, GetExitCodeProcess, LOGON_WITH_PROFILE, PROCESS_INFORMATION,
    ResumeThread, STARTF_USESTDHANDLES, STARTUPINFOW, TerminateProcess, WaitForSingleObject,
};

use super::firewall::SandboxUser;
use super::os::wide;
use super::path::WinPath;
use super::{Password, WinSandboxError};
use crate::winjob::JobObject;

/// A process started as a sandbox account (its Job Object is returned beside it).
#[derive(Debug)]
pub struct AccountProcess {
    process: OwnedHandle,
    pub pid: u32,
    pub stdout: Option<File>,
    pub stderr: Option<File>,
}

impl AccountProcess {
    /// Waits for the process to end; its exit code.
    pub fn wait(&self) -> io::Result<u32> {
        self.ended_within(u32::MAX)?;
        self.exit_code()
    }

    /// The exit code, if the process has ended. Whether it has is asked of the handle, not read
    /// from the code: a process may exit with 259, which is also `STILL_ACTIVE`.
    pub fn try_wait(&self) -> io::Result<Option<u32>> {
        if self.ended_within(0)? { self.exit_code().map(Some) } else { Ok(None) }
    }

    /// Whether the process ends within `ms` milliseconds (`u32::MAX`: however long it takes).
    fn ended_within(&self, ms: u32) -> io::Result<bool> {
        // SAFETY: our process handle, valid until drop.
        match unsafe { WaitForSingleObject(self.process.as_raw_handle() as HANDLE, ms) } {
            WAIT_OBJECT_0 => Ok(true),
            WAIT_TIMEOUT => Ok(false),
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// The exit code of the ended process.
    fn exit_code(&self) -> io::Result<u32> {
        let mut code = 0u32;
        // SAFETY: our process handle; `code` is written.
        if unsafe { GetExitCodeProcess(self.process.as_raw_handle() as HANDLE, &mut code) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(code)
    }

    /// Ends the process (its Job Object ends the rest of its tree).
    pub fn kill(&self) -> io::Result<()> {
        // SAFETY: our process handle.
        if unsafe { TerminateProcess(self.process.as_raw_handle() as HANDLE, 1) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// An inheritable pipe: (the parent's read end, not inheritable; the child's write end).
fn pipe() -> Result<(OwnedHandle, OwnedHandle), WinSandboxError> {
    let sa = SECURITY_ATTRIBUTES {
        nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: std::ptr::null_mut(),
        bInheritHandle: 1,
    };
    let (mut read, mut write): (HANDLE, HANDLE) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: out-pointers to two handles; `sa` lives through the call.
    if unsafe { CreatePipe(&mut read, &mut write, &sa, 0) } == 0 {
        return Err(WinSandboxError::Os {
            step: "making the job's output pipes",
            source: io::Error::last_os_error(),
        });
    }
    // SAFETY: both handles were just created and are owned from here on.
    let (read, write) =
        unsafe { (OwnedHandle::from_raw_handle(read), OwnedHandle::from_raw_handle(write)) };
    // SAFETY: our handle; only the inherit flag changes.
    unsafe { SetHandleInformation(read.as_raw_handle() as HANDLE, HANDLE_FLAG_INHERIT, 0) };
    Ok((read, write))
}

/// Starts `program` (absolute) with `args` as `user`'s account (password `password`), in `cwd`
/// with exactly `env`, stdin from `NUL`, stdout and stderr on pipes; suspended until it is in a
/// new Job Object (kill on close, returned beside it), then resumed.
pub fn spawn_as(
    user: SandboxUser,
    password: &Password,
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &WinPath,
) -> Result<(AccountProcess, JobObject), WinSandboxError> {
    let mut line = wide(&super::cmdline::command_line(program, args)?);
    let block = super::cmdline::env_block(env)?;
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let sa = SECURITY_ATTRIBUTES {
        nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: std::ptr::null_mut(),
        bInheritHandle: 1,
    };
    let nul = wide("NUL");
    // SAFETY: a NUL-terminated name; the handle is checked and owned below.
    let stdin = unsafe {
        CreateFileW(
            nul.as_ptr(),
            GENERIC_READ | GENERIC_WRITE,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            &sa,
            OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if stdin == INVALID_HANDLE_VALUE {
        return Err(WinSandboxError::Os {
            step: "opening NUL",
            source: io::Error::last_os_error(),
        });
    }
    // SAFETY: just opened, owned from here on.
    let stdin = unsafe { OwnedHandle::from_raw_handle(stdin) };
    let startup = STARTUPINFOW {
        cb: std::mem::size_of::<STARTUPINFOW>() as u32,
        dwFlags: STARTF_USESTDHANDLES,
        hStdInput: stdin.as_raw_handle() as HANDLE,
        hStdOutput: out_write.as_raw_handle() as HANDLE,
        hStdError: err_write.as_raw_handle() as HANDLE,
        ..STARTUPINFOW::default()
    };
    let (name, domain, mut pass) = (wide(user.name()), wide("."), wide(password.expose()));
    let (app, dir) = (wide(program), wide(cwd.as_str()));
    let mut info = PROCESS_INFORMATION::default();
    // SAFETY: every string is NUL-terminated and lives through the call; `line` is writable as
    // the call requires; `block` is a double-NUL-ended UTF-16 block (CREATE_UNICODE_ENVIRONMENT);
    // `startup` and `info` are valid structures.
    let ok = unsafe {
        CreateProcessWithLogonW(
            name.as_ptr(),
            domain.as_ptr(),
            pass.as_ptr(),
            LOGON_WITH_PROFILE,
            app.as_ptr(),
            line.as_mut_ptr(),
            CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP | CREATE_UNICODE_ENVIRONMENT,
            block.as_ptr().cast(),
            dir.as_ptr(),
            &startup,
            &mut info,
        )
    };
    pass.iter_mut().for_each(|u| *u = 0);
    if ok == 0 {
        return Err(WinSandboxError::Os {
            step: "starting the job as the sandbox account",
            source: io::Error::last_os_error(),
        });
    }
    // SAFETY: both handles were returned by the call and are owned from here on.
    let (process, thread) = unsafe {
        (OwnedHandle::from_raw_handle(info.hProcess), OwnedHandle::from_raw_handle(info.hThread))
    };
    let started = JobObject::new()
        .and_then(|job| job.assign_handle(info.hProcess).map(|()| job))
        .and_then(|job| {
            // SAFETY: the suspended primary thread's handle.
            if unsafe { ResumeThread(thread.as_raw_handle() as HANDLE) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            Ok(job)
        });
    let job = match started {
        Ok(job) => job,
        Err(source) => {
            // SAFETY: our process handle; it never ran an instruction of its own.
            unsafe { TerminateProcess(info.hProcess, 1) };
            return Err(WinSandboxError::Os { step: "putting the job in its Job Object", source });
        }
    };
    // The child holds its own copies now; the parent keeps only the read ends.
    drop((out_write, err_write, stdin, thread));
    let process = AccountProcess {
        process,
        pid: info.dwProcessId,
        stdout: Some(File::from(out_read)),
        stderr: Some(File::from(err_read)),
    };
    Ok((process, job))
}
