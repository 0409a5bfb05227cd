//! Windows: every job runs in its own Job Object with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, the
//! Windows counterpart of the Linux marker scan: every process the job creates belongs to the
//! Job Object (breakaway is not allowed), so terminating the Job Object — or closing its last
//! handle, including when the engine dies — ends the whole tree, however it detached.
//!
//! The process is created suspended (`CREATE_SUSPENDED`), assigned to the Job Object, and only
//! then resumed: it cannot start a child before it is inside the Job Object. `std` does not
//! expose the primary thread's handle, so resuming walks the process's threads with a Toolhelp
//! snapshot (a suspended new process has exactly one).
//!
//! It gives no filesystem or network confinement: that is the sandbox account's
//! ([`crate::winsandbox`]); without it a caller that requires confinement refuses to run. The
//! tests below run under Wine in `cargo xtask test` (the processes are real Wine processes and
//! Wine implements Job Objects), and natively in the Windows CI job.

use std::io;
use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::process::{Child, Command};

use windows_sys::Win32::Foundation::{
    CloseHandle, DUPLICATE_SAME_ACCESS, DuplicateHandle, HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectExtendedLimitInformation, SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, GetCurrentProcess, OpenThread, ResumeThread,
    THREAD_SUSPEND_RESUME,
};

/// The creation flags a job's process needs (see [`spawn_in_job`]); `std` adds its own.
pub const CREATION_FLAGS: u32 = CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP;

/// An owned Job Object handle. Dropping it closes the handle, which kills every process still
/// in the job (`KILL_ON_JOB_CLOSE`).
#[derive(Debug)]
pub struct JobObject(HANDLE);

// SAFETY: a Job Object handle is a kernel handle usable from any thread; the wrapper only
// passes it to thread-safe kernel calls and closes it once, in `drop`.
unsafe impl Send for JobObject {}
// SAFETY: as above; no method mutates the wrapper.
unsafe impl Sync for JobObject {}

impl JobObject {
    /// A new, unnamed Job Object that kills its processes when its last handle closes.
    pub fn new() -> io::Result<JobObject> {
        // SAFETY: null attributes and a null name are allowed (default security, unnamed).
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = JobObject(handle);
        let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        info.BasicLimitInformation.LimitFlags =
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
        // SAFETY: `info` is a valid, initialized structure of the size passed, alive for the
        // call; the handle is the one just created.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Puts `child` (and every process it will create) into the job.
    pub fn assign(&self, child: &Child) -> io::Result<()> {
        self.assign_handle(child.as_raw_handle() as HANDLE)
    }

    /// Puts the process of handle `process` (and every process it will create) into the job:
    /// one started without `std` (as the sandbox account, `crate::winsandbox::os`).
    pub fn assign_handle(&self, process: HANDLE) -> io::Result<()> {
        // SAFETY: both handles are valid for the call: ours, and the caller's process handle.
        let ok = unsafe { AssignProcessToJobObject(self.0, process) };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The handle, for calls that ask about the job (`IsProcessInJob`).
    pub(crate) fn raw(&self) -> HANDLE {
        self.0
    }

    /// A second handle to the same job. The job's processes live until its last handle
    /// closes: hold one only as long as the job's own.
    pub(crate) fn try_clone(&self) -> io::Result<JobObject> {
        let mut copy: HANDLE = std::ptr::null_mut();
        // SAFETY: this process's pseudo handle twice and our valid job handle; `copy` is
        // written on success and owned from then on.
        let ok = unsafe {
            DuplicateHandle(
                GetCurrentProcess(),
                self.0,
                GetCurrentProcess(),
                &mut copy,
                0,
                0,
                DUPLICATE_SAME_ACCESS,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(JobObject(copy))
    }

    /// Kills every process in the job (cancel, timeout, emergency stop).
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the handle is valid until `drop`.
        if unsafe { TerminateJobObject(self.0, exit_code) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for JobObject {
    fn drop(&mut self) {
        // SAFETY: the handle is owned by this wrapper and closed exactly once.
        unsafe { CloseHandle(self.0) };
    }
}

/// Spawns `command` suspended, puts it in a new Job Object, then resumes it. On any failure
/// after the spawn the process is killed (it never ran a single instruction of its own).
pub fn spawn_in_job(command: &mut Command) -> io::Result<(Child, JobObject)> {
    let job = JobObject::new()?;
    command.creation_flags(CREATION_FLAGS);
    let mut child = command.spawn()?;
    if let Err(e) = job.assign(&child).and_then(|()| resume(child.id())) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok((child, job))
}

/// Resumes every thread of process `pid` (a process created suspended has one).
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: flags and pid are plain integers; the result is checked below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    let mut entry = THREADENTRY32 {
        dwSize: std::mem::size_of::<THREADENTRY32>() as u32,
        ..THREADENTRY32::default()
    };
    let mut resumed = 0usize;
    let mut failure = None;
    // SAFETY: `snapshot` is valid until closed below; `entry` is initialized with its size.
    let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: plain integer arguments; the handle is checked and closed.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if thread.is_null() {
                failure = Some(io::Error::last_os_error());
            } else {
                // SAFETY: `thread` is a valid handle with THREAD_SUSPEND_RESUME access.
                if unsafe { ResumeThread(thread) } == u32::MAX {
                    failure = Some(io::Error::last_os_error());
                } else {
                    resumed += 1;
                }
                // SAFETY: opened above, closed once.
                unsafe { CloseHandle(thread) };
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
    }
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(snapshot) };
    match (failure, resumed) {
        (Some(e), _) => Err(e),
        (None, 0) => Err(io::Error::other("the new process has no thread to resume")),
        (None, _) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    //! A job's whole tree ends with it: the test binary starts itself as a helper that starts a
    //! grandchild of its own and waits; terminating the Job Object, or closing its last handle,
    //! must end both, the grandchild too, though nothing but the job holds it.

    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use windows_sys::Win32::Foundation::WAIT_OBJECT_0;
    use windows_sys::Win32::System::JobObjects::IsProcessInJob;
    use windows_sys::Win32::System::Threading::{
        OpenProcess, PROCESS_QUERY_INFORMATION, PROCESS_SYNCHRONIZE, WaitForSingleObject,
    };

    use super::*;

    /// What the helper does: `tree` starts a `leaf` and writes its pid; `leaf` waits.
    const ROLE: &str = "SLUICE_WINJOB_HELPER";
    /// Where a `tree` helper writes its grandchild's pid.
    const PID_FILE: &str = "SLUICE_WINJOB_PID_FILE";

    /// The helper process the tests below start (`--exact`); as a test of its own, with no
    /// role given, it does nothing.
    #[test]
    fn helper() {
        match std::env::var(ROLE).as_deref() {
            Ok("tree") => {
                let leaf = helper_command("leaf").spawn().expect("start the grandchild");
                let file = std::env::var(PID_FILE).expect("pid file");
                std::fs::write(&file, leaf.id().to_string()).expect("write the pid");
                std::thread::sleep(Duration::from_secs(120));
            }
            Ok("leaf") => std::thread::sleep(Duration::from_secs(120)),
            _ => {}
        }
    }

    fn helper_command(role: &str) -> Command {
        let mut cmd = Command::new(std::env::current_exe().expect("this test binary"));
        cmd.args(["--exact", "winjob::tests::helper", "--test-threads=1"])
            .env(ROLE, role)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        cmd
    }

    /// Starts a `tree` helper in a new job; the child, the job and the grandchild's pid.
    fn tree(dir: &Path) -> (Child, JobObject, u32) {
        let file: PathBuf = dir.join("leaf.pid");
        let (child, job) =
            spawn_in_job(helper_command("tree").env(PID_FILE, &file)).expect("spawn in a job");
        let deadline = Instant::now() + Duration::from_secs(60);
        let pid = loop {
            if let Some(pid) = std::fs::read_to_string(&file).ok().and_then(|t| t.parse().ok()) {
                break pid;
            }
            assert!(Instant::now() < deadline, "the helper wrote no pid");
            std::thread::sleep(Duration::from_millis(50));
        };
        (child, job, pid)
    }

    /// A handle to process `pid` that can wait for it and ask about its job. The full query
    /// right, not the limited one `winsandbox/egress.rs` asks for (enough on Windows): Wine 8.0
    /// answers `IsProcessInJob` only with the full one.
    fn open(pid: u32) -> HANDLE {
        let access = PROCESS_SYNCHRONIZE | PROCESS_QUERY_INFORMATION;
        // SAFETY: plain integer arguments; the handle is checked.
        let h = unsafe { OpenProcess(access, 0, pid) };
        assert!(!h.is_null(), "cannot open process {pid}: {}", io::Error::last_os_error());
        h
    }

    /// Whether the process of `h` ends within `secs`.
    fn ends_within(h: HANDLE, secs: u32) -> bool {
        // SAFETY: a valid handle with SYNCHRONIZE access.
        unsafe { WaitForSingleObject(h, secs * 1000) == WAIT_OBJECT_0 }
    }

    #[test]
    fn every_process_a_job_starts_is_in_it_and_terminating_it_ends_the_whole_tree() {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, job, leaf) = tree(dir.path());
        let grandchild = open(leaf);
        let mut inside = 0;
        // SAFETY: valid process and job handles; `inside` is written.
        assert_ne!(unsafe { IsProcessInJob(grandchild, job.raw(), &mut inside) }, 0);
        assert_ne!(inside, 0, "the grandchild broke away from the job");
        assert!(!ends_within(grandchild, 1), "the helper's grandchild ended by itself");
        job.terminate(1).unwrap();
        assert!(ends_within(grandchild, 30), "the grandchild outlived the job's termination");
        assert_eq!(child.wait().unwrap().code(), Some(1));
        // SAFETY: opened above, closed once.
        unsafe { CloseHandle(grandchild) };
    }

    #[test]
    fn closing_the_jobs_last_handle_ends_the_whole_tree() {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, job, leaf) = tree(dir.path());
        let grandchild = open(leaf);
        drop(job);
        assert!(ends_within(grandchild, 30), "the grandchild outlived the job's last handle");
        assert!(child.wait().is_ok());
        // SAFETY: opened above, closed once.
        unsafe { CloseHandle(grandchild) };
    }
}
