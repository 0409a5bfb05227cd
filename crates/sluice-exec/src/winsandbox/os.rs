//! Windows: the sandbox accounts made real. Creating them (`NetUserAdd`, which needs an
//! administrator), reading their SIDs (`NetUserGetInfo` level 23, the local account database
//! only, so a domain account of the same name is never taken for them), applying the file rules
//! of [`super::acl`] (`GetNamedSecurityInfoW`, `SetEntriesInAclW`, `SetNamedSecurityInfoW`),
//! adding the firewall rules of [`super::firewall`] (PowerShell's NetSecurity module), the
//! setup and its undoing, and measuring what holds. Starting a process as an account is `process.rs`.
//!
//! UNTESTED: type-checked on Linux (`cargo xtask check-targets`), never run. What a run on
//! Windows must show is in docs/SANDBOX.md.

use std::io;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{ERROR_ACCESS_DENIED, ERROR_SUCCESS, LocalFree};
use windows_sys::Win32::NetworkManagement::NetManagement::{
    NERR_Success, NERR_UserExists, NERR_UserNotFound, NetApiBufferFree, NetUserAdd, NetUserDel,
    NetUserGetInfo, NetUserSetInfo, UF_DONT_EXPIRE_PASSWD, UF_PASSWD_CANT_CHANGE, UF_SCRIPT,
    USER_INFO_1, USER_INFO_23, USER_INFO_1003, USER_PRIV_USER,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSidToSidW, DENY_ACCESS, EXPLICIT_ACCESS_W,
    GetNamedSecurityInfoW, NO_MULTIPLE_TRUSTEE, SE_FILE_OBJECT, SET_ACCESS, SetEntriesInAclW,
    SetNamedSecurityInfoW, TRUSTEE_IS_SID, TRUSTEE_IS_USER, TRUSTEE_W,
};
use windows_sys::Win32::Security::{
    ACCESS_DENIED_ACE, ACE_HEADER, ACL, ACL_SIZE_INFORMATION, AclSizeInformation,
    CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION, EqualSid, GetAce, GetAclInformation,
    NO_INHERITANCE, OBJECT_INHERIT_ACE, PSECURITY_DESCRIPTOR, PSID,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_DIRECTORY, GetFileAttributesW, INVALID_FILE_ATTRIBUTES,
};

use super::acl::{AceKind, AclEntry, AclPlan, Scope};
use super::firewall::{self, SandboxUser};
use super::path::WinPath;
use super::status::{SetupState, WinSandboxStatus};
use super::{Password, Sid, WinSandboxError};

/// `NERR_Success` and `NERR_UserNotFound` under names a `match` may use.
const NET_OK: u32 = NERR_Success;
const NET_NO_USER: u32 = NERR_UserNotFound;

/// The ACE type of a deny entry (`ACCESS_DENIED_ACE_TYPE`).
const ACCESS_DENIED_ACE_TYPE: u8 = 1;

/// How long a measured status is reused: measuring runs PowerShell (about a second).
const STATUS_TTL: Duration = Duration::from_secs(60);

/// `text` as a NUL-terminated UTF-16 string.
pub(super) fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(Some(0)).collect()
}

fn os_err(step: &'static str, code: u32) -> WinSandboxError {
    WinSandboxError::Os { step, source: io::Error::from_raw_os_error(code as i32) }
}

/// The SID of `user`'s local account, if it exists.
pub fn account_sid(user: SandboxUser) -> Result<Option<Sid>, WinSandboxError> {
    let name = wide(user.name());
    let mut buf: *mut u8 = std::ptr::null_mut();
    // SAFETY: a null server is the local machine; `name` is NUL-terminated; `buf` receives a
    // buffer the call allocates, freed below.
    let rc = unsafe { NetUserGetInfo(std::ptr::null(), name.as_ptr(), 23, &mut buf) };
    if rc == NERR_UserNotFound {
        return Ok(None);
    }
    if rc != NERR_Success {
        return Err(os_err("reading the sandbox account", rc));
    }
    // SAFETY: level 23 fills a USER_INFO_23; its SID lives in the same buffer.
    let sid = unsafe { sid_text((*(buf as *const USER_INFO_23)).usri23_user_sid) };
    // SAFETY: allocated by NetUserGetInfo, freed once.
    unsafe { NetApiBufferFree(buf.cast()) };
    Sid::parse(&sid?).map(Some)
}

/// A SID's text form.
///
/// # Safety
/// `sid` must point at a valid SID.
unsafe fn sid_text(sid: PSID) -> Result<String, WinSandboxError> {
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: the caller's SID; `text` receives a LocalAlloc'd string, freed below.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return Err(WinSandboxError::Os {
            step: "reading a SID",
            source: io::Error::last_os_error(),
        });
    }
    // SAFETY: a NUL-terminated string from the call above.
    let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: `len` units were just read.
    let out = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) });
    // SAFETY: allocated by ConvertSidToStringSidW, freed once.
    unsafe { LocalFree(text.cast()) };
    Ok(out)
}

/// A SID in binary form, freed on drop.
struct BinarySid(PSID);

impl BinarySid {
    fn new(sid: &Sid) -> Result<BinarySid, WinSandboxError> {
        let text = wide(sid.as_str());
        let mut out: PSID = std::ptr::null_mut();
        // SAFETY: NUL-terminated input; `out` receives a LocalAlloc'd SID.
        if unsafe { ConvertStringSidToSidW(text.as_ptr(), &mut out) } == 0 {
            return Err(WinSandboxError::Os {
                step: "reading the sandbox account's SID",
                source: io::Error::last_os_error(),
            });
        }
        Ok(BinarySid(out))
    }
}

impl Drop for BinarySid {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSidToSidW, freed once.
        unsafe { LocalFree(self.0) };
    }
}

/// Creates `user`'s account with `password`, or sets that password if it exists: an ordinary
/// user (not an administrator), whose password never expires and who cannot change it.
pub fn create_account(user: SandboxUser, password: &Password) -> Result<Sid, WinSandboxError> {
    let mut name = wide(user.name());
    let mut pass = wide(password.expose());
    let mut comment = wide("Runs the commands AI assistants start through Sluice");
    let info = USER_INFO_1 {
        usri1_name: name.as_mut_ptr(),
        usri1_password: pass.as_mut_ptr(),
        usri1_password_age: 0,
        usri1_priv: USER_PRIV_USER,
        usri1_home_dir: std::ptr::null_mut(),
        usri1_comment: comment.as_mut_ptr(),
        usri1_flags: UF_SCRIPT | UF_DONT_EXPIRE_PASSWD | UF_PASSWD_CANT_CHANGE,
        usri1_script_path: std::ptr::null_mut(),
    };
    let mut parm_err = 0u32;
    // SAFETY: `info` and the strings it points at live through the call.
    let rc = unsafe {
        NetUserAdd(std::ptr::null(), 1, (&info as *const USER_INFO_1).cast(), &mut parm_err)
    };
    let rc = if rc == NERR_UserExists {
        let reset = USER_INFO_1003 { usri1003_password: pass.as_mut_ptr() };
        // SAFETY: as above.
        unsafe {
            NetUserSetInfo(
                std::ptr::null(),
                name.as_ptr(),
                1003,
                (&reset as *const USER_INFO_1003).cast(),
                &mut parm_err,
            )
        }
    } else {
        rc
    };
    pass.iter_mut().for_each(|u| *u = 0);
    match rc {
        NET_OK => {}
        ERROR_ACCESS_DENIED => {
            return Err(WinSandboxError::NeedsAdministrator(
                "Windows refused to create the account without an administrator".into(),
            ));
        }
        other => return Err(os_err("creating the sandbox account", other)),
    }
    account_sid(user)?.ok_or_else(|| {
        WinSandboxError::NotSetUp("the sandbox account was created but cannot be found".into())
    })
}

/// Applies `plan`'s entries for `sid`, each merged into the object's permissions (the
/// account's earlier allow entries on it replaced). Paths that do not exist are skipped; the
/// entries Windows refused are returned with why, and the others applied.
pub fn apply(plan: &AclPlan, sid: &Sid) -> Result<Vec<(WinPath, io::Error)>, WinSandboxError> {
    let binary = BinarySid::new(sid)?;
    let mut failed = Vec::new();
    for entry in &plan.entries {
        let path = wide(entry.path.as_str());
        // SAFETY: a NUL-terminated path.
        let attrs = unsafe { GetFileAttributesW(path.as_ptr()) };
        if attrs == INVALID_FILE_ATTRIBUTES {
            continue;
        }
        let inherit = entry.inherit && attrs & FILE_ATTRIBUTE_DIRECTORY != 0;
        let access = EXPLICIT_ACCESS_W {
            grfAccessPermissions: entry.rights.mask(),
            grfAccessMode: match entry.kind {
                AceKind::Allow => SET_ACCESS,
                AceKind::Deny => DENY_ACCESS,
            },
            grfInheritance: if inherit {
                OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE
            } else {
                NO_INHERITANCE
            },
            Trustee: TRUSTEE_W {
                pMultipleTrustee: std::ptr::null_mut(),
                MultipleTrusteeOperation: NO_MULTIPLE_TRUSTEE,
                TrusteeForm: TRUSTEE_IS_SID,
                TrusteeType: TRUSTEE_IS_USER,
                ptstrName: binary.0.cast(),
            },
        };
        if let Err(e) = merge(&path, &access) {
            failed.push((entry.path.clone(), e));
        }
    }
    Ok(failed)
}

/// A file's DACL as `GetNamedSecurityInfoW` returned it: `dacl` points into `sd`, which is
/// freed on drop.
struct Dacl {
    dacl: *mut ACL,
    sd: PSECURITY_DESCRIPTOR,
}

impl Dacl {
    /// The DACL of the file at `path` (NUL-terminated). It may be null (no DACL at all).
    fn read(path: &[u16]) -> io::Result<Dacl> {
        let mut out = Dacl { dacl: std::ptr::null_mut(), sd: std::ptr::null_mut() };
        // SAFETY: `out.dacl` points into `out.sd`, which the call allocates and drop frees.
        let rc = unsafe {
            GetNamedSecurityInfoW(
                path.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut out.dacl,
                std::ptr::null_mut(),
                &mut out.sd,
            )
        };
        if rc != ERROR_SUCCESS {
            return Err(io::Error::from_raw_os_error(rc as i32));
        }
        Ok(out)
    }
}

impl Drop for Dacl {
    fn drop(&mut self) {
        if !self.sd.is_null() {
            // SAFETY: allocated by GetNamedSecurityInfoW, freed once.
            unsafe { LocalFree(self.sd) };
        }
    }
}

/// Merges `access` into the DACL of the file at `path` (NUL-terminated).
fn merge(path: &[u16], access: &EXPLICIT_ACCESS_W) -> io::Result<()> {
    let current = Dacl::read(path)?;
    let mut new: *mut ACL = std::ptr::null_mut();
    // SAFETY: one valid entry; `current.dacl` is valid while `current` lives; `new` is
    // LocalAlloc'd.
    let rc = unsafe { SetEntriesInAclW(1, access, current.dacl, &mut new) };
    if rc != ERROR_SUCCESS {
        return Err(io::Error::from_raw_os_error(rc as i32));
    }
    // SAFETY: `new` is a valid ACL; only the DACL is set.
    let rc = unsafe {
        SetNamedSecurityInfoW(
            path.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            new,
            std::ptr::null(),
        )
    };
    // SAFETY: allocated by SetEntriesInAclW, freed once.
    unsafe { LocalFree(new.cast()) };
    if rc == ERROR_SUCCESS { Ok(()) } else { Err(io::Error::from_raw_os_error(rc as i32)) }
}

/// Whether the file at `path` carries an explicit deny entry for `sid` (false when it cannot be
/// read: then it does not count as holding).
fn has_deny(path: &WinPath, sid: &BinarySid) -> bool {
    let current = match Dacl::read(&wide(path.as_str())) {
        Ok(current) if !current.dacl.is_null() => current,
        _ => return false,
    };
    let dacl = current.dacl;
    let mut size = ACL_SIZE_INFORMATION::default();
    // SAFETY: `dacl` is valid while `current` lives; `size` has the size passed.
    let ok = unsafe {
        GetAclInformation(
            dacl,
            (&mut size as *mut ACL_SIZE_INFORMATION).cast(),
            std::mem::size_of::<ACL_SIZE_INFORMATION>() as u32,
            AclSizeInformation,
        )
    } != 0;
    let mut found = false;
    for i in 0..if ok { size.AceCount } else { 0 } {
        let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
        // SAFETY: `i` is below the ACE count; `ace` points into `dacl`.
        if unsafe { GetAce(dacl, i, &mut ace) } == 0 {
            continue;
        }
        // SAFETY: every ACE starts with its header.
        let header = unsafe { &*(ace as *const ACE_HEADER) };
        let inherited = header.AceFlags & 0x10 != 0; // INHERITED_ACE
        if header.AceType != ACCESS_DENIED_ACE_TYPE || inherited {
            continue;
        }
        // SAFETY: a deny ACE; its SID starts at `SidStart`.
        let ace_sid = unsafe { std::ptr::addr_of!((*(ace as *const ACCESS_DENIED_ACE)).SidStart) };
        // SAFETY: both SIDs valid.
        if unsafe { EqualSid(ace_sid as PSID, sid.0) } != 0 {
            found = true;
            break;
        }
    }
    found
}

/// Runs a PowerShell script (Windows' own `powershell.exe`, by absolute path); its exit code.
fn powershell(script: &str) -> Result<i32, WinSandboxError> {
    let root = std::env::var_os("SystemRoot").unwrap_or_else(|| "C:\\Windows".into());
    let exe = std::path::Path::new(&root).join("System32\\WindowsPowerShell\\v1.0\\powershell.exe");
    let output = Command::new(exe)
        .args(firewall::powershell_args(script))
        .output()
        .map_err(|source| WinSandboxError::Os { step: "running PowerShell", source })?;
    Ok(output.status.code().unwrap_or(-1))
}

/// Adds (or replaces) the firewall rules of the offline account `sid`.
pub fn add_firewall_rules(sid: &Sid) -> Result<(), WinSandboxError> {
    let script = firewall::add_script(&firewall::rules(SandboxUser::Offline, sid))?;
    match powershell(&script)? {
        0 => Ok(()),
        _ => Err(WinSandboxError::NeedsAdministrator(
            "Windows refused to add the firewall rules (they need an administrator)".into(),
        )),
    }
}

/// Whether the offline account's firewall rules are present and unchanged.
fn firewall_present(sid: &Sid) -> bool {
    firewall::check_script(&firewall::rules(SandboxUser::Offline, sid))
        .ok()
        .and_then(|script| powershell(&script).ok())
        == Some(0)
}

/// The last measured status, and when.
static STATUS: Mutex<Option<(Instant, WinSandboxStatus)>> = Mutex::new(None);

/// What holds, measured at most once a minute.
pub fn status() -> WinSandboxStatus {
    let mut cache = STATUS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((at, status)) = cache.as_ref()
        && at.elapsed() < STATUS_TTL
    {
        return status.clone();
    }
    let status = WinSandboxStatus::of(&measure());
    *cache = Some((Instant::now(), status.clone()));
    status
}

/// Measures again on the next [`status`]: the setup or the password changed.
pub fn forget_status() {
    *STATUS.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The setup's parts as this machine has them; the password is the one the engine gave
/// ([`super::logon`]).
fn measure() -> SetupState {
    let offline = account_sid(SandboxUser::Offline).ok().flatten();
    let online = account_sid(SandboxUser::Online).ok().flatten();
    let profile = std::env::var("USERPROFILE").ok().and_then(|p| WinPath::parse(&p).ok());
    // A store counts once, when either account lacks its deny rule (or its SID cannot be read).
    let accounts: Vec<Option<BinarySid>> =
        offline.iter().chain(&online).map(|sid| BinarySid::new(sid).ok()).collect();
    let stores = profile.as_ref().map(super::acl::default_stores).unwrap_or_default();
    let stores_without_rule = stores
        .iter()
        .filter(|(store, _)| std::fs::symlink_metadata(store.as_str()).is_ok())
        .filter(|(store, _)| {
            accounts.iter().any(|a| a.as_ref().is_none_or(|sid| !has_deny(store, sid)))
        })
        .count();
    SetupState {
        offline_user: offline.is_some(),
        online_user: online.is_some(),
        password: super::logon::password().is_some(),
        stores_without_rule,
        firewall: offline.as_ref().is_some_and(firewall_present),
    }
}

/// The once-only setup, as an administrator: both accounts with `password` (new each time:
/// Sluice's secret store keeps the only copy), the plan's setup entries (toolchains, default
/// stores, Sluice's data folder) for both, and the offline account's firewall rules. `plan` is
/// [`super::acl::setup_plan`] for the user who consented, whose profile and data folder the
/// elevated process does not know itself. Returns the rules Windows refused (a file in use, a
/// folder the user cannot change), each with why. Run again, it resets the password and brings
/// every rule back.
pub fn setup(
    plan: &AclPlan,
    password: &Password,
) -> Result<Vec<(WinPath, io::Error)>, WinSandboxError> {
    let setup_only = AclPlan { entries: entries_of(plan, Scope::Setup) };
    let mut refused = Vec::new();
    let mut offline = None;
    for user in SandboxUser::ALL {
        let sid = create_account(user, password)?;
        refused.extend(apply(&setup_only, &sid)?);
        if user == SandboxUser::Offline {
            offline = Some(sid);
        }
    }
    let offline = offline.ok_or_else(|| {
        WinSandboxError::NotSetUp("the offline sandbox account was not created".into())
    })?;
    add_firewall_rules(&offline)?;
    Ok(refused)
}

/// A project's own entries (its folder, private folders, grants, additions), for both
/// accounts, before its first job: the user owns these files, so no administrator is needed.
pub fn apply_project(plan: &AclPlan) -> Result<Vec<(WinPath, io::Error)>, WinSandboxError> {
    let project = AclPlan { entries: entries_of(plan, Scope::Project) };
    let mut refused = Vec::new();
    for user in SandboxUser::ALL {
        let sid = account_sid(user)?.ok_or_else(|| {
            WinSandboxError::NotSetUp(format!("the sandbox account {} does not exist", user.name()))
        })?;
        refused.extend(apply(&project, &sid)?);
    }
    Ok(refused)
}

fn entries_of(plan: &AclPlan, scope: Scope) -> Vec<AclEntry> {
    plan.entries.iter().filter(|e| e.scope == scope).cloned().collect()
}

/// Undoes the setup, as an administrator: the firewall rules and both accounts removed. The
/// entries naming the accounts stay on the files (they name a SID no account has any more,
/// which Windows never gives again) until the user removes them (`icacls … /remove *SID`).
pub fn teardown() -> Result<(), WinSandboxError> {
    powershell(&firewall::remove_script())?;
    for user in SandboxUser::ALL {
        let name = wide(user.name());
        // SAFETY: a null server is the local machine; `name` is NUL-terminated.
        match unsafe { NetUserDel(std::ptr::null(), name.as_ptr()) } {
            NET_OK | NET_NO_USER => {}
            ERROR_ACCESS_DENIED => {
                return Err(WinSandboxError::NeedsAdministrator(
                    "Windows refused to remove the account without an administrator".into(),
                ));
            }
            other => return Err(os_err("removing the sandbox account", other)),
        }
    }
    Ok(())
}
