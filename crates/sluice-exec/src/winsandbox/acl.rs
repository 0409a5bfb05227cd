//! The access rules a Windows job runs under, as data: for each path, an allow or deny entry
//! for the sandbox user (a placeholder until its SID is known), rendered as an SDDL ACE or as
//! `icacls` arguments, and applied on Windows by `os.rs` (`SetEntriesInAclW`, which puts deny
//! entries first, so deny wins over allow on one object).
//!
//! How the rules combine: an explicit entry on an object comes before those it inherits, so an
//! explicit deny on `~\.cargo\credentials.toml` wins over the allow `~\.cargo` passes down, and
//! an explicit allow on the job's private folder wins over the deny Sluice's data folder passes
//! down. The user's profile itself is left as Windows made it (its owner, SYSTEM and the
//! administrators only): the sandbox user reads no part of it that is not granted here, and
//! the explicit denies keep the credential stores out even where a grant (a toolchain folder,
//! the project) or a loosened profile would let them in.

use super::path::WinPath;
use super::{Sid, WinSandboxError};
use sluice_core::ExecMode;

/// Folders under the profile that hold Windows' own toolchains, read like
/// [`crate::places::TOOLCHAINS`] (which the plan reads too).
pub const WINDOWS_TOOLCHAINS: &[&str] = &[
    "AppData/Roaming/npm",
    "AppData/Local/Programs/Python",
    "AppData/Local/pnpm",
    "AppData/Local/Yarn",
    "AppData/Local/pip/cache",
    "AppData/Local/uv",
    "AppData/Local/go-build",
    "scoop",
];

/// What an entry allows or denies. Each is the Win32 file-rights mask of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rights {
    /// `FILE_GENERIC_READ`: read data, attributes and permissions, list a folder.
    Read,
    /// `FILE_GENERIC_READ | FILE_GENERIC_EXECUTE`: also run programs and traverse.
    ReadExecute,
    /// Read, execute, write, create and delete (icacls' `M`); never change permissions or owner.
    Modify,
    /// `FILE_ALL_ACCESS`: everything (what a deny entry takes away).
    All,
}

impl Rights {
    /// The access mask.
    pub fn mask(self) -> u32 {
        match self {
            Rights::Read => 0x0012_0089,
            Rights::ReadExecute => 0x0012_00a9,
            Rights::Modify => 0x0013_01bf,
            Rights::All => 0x001f_01ff,
        }
    }

    /// icacls' name for it.
    fn icacls(self) -> &'static str {
        match self {
            Rights::Read => "R",
            Rights::ReadExecute => "RX",
            Rights::Modify => "M",
            Rights::All => "F",
        }
    }
}

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AceKind {
    Allow,
    Deny,
}

/// When an entry is applied: once, by the setup (toolchains, the default stores, Sluice's data
/// folder), or for each project before its first job (its folder, private folders, grants and
/// additions), which needs no administrator: the user owns those files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Setup,
    Project,
}

/// One rule of the plan: on `path`, for the sandbox user, allow or deny `rights`, passed down to
/// everything beneath (`inherit`: a folder's subfolders and files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclEntry {
    pub path: WinPath,
    pub scope: Scope,
    pub kind: AceKind,
    pub rights: Rights,
    pub inherit: bool,
    /// Why: the project, a toolchain, a store and what it holds, … (for the setup's list).
    pub why: &'static str,
}

impl AclEntry {
    /// The entry as an SDDL ACE for the user `sid` (`(A;OICI;0x1200a9;;;S-1-5-21-…)`). The
    /// path is not part of it, and a [`Sid`] holds only digits and dashes, so nothing of a
    /// path or a name can change what the ACE says.
    pub fn sddl(&self, sid: &Sid) -> String {
        let kind = match self.kind {
            AceKind::Allow => "A",
            AceKind::Deny => "D",
        };
        let flags = if self.inherit { "OICI" } else { "" };
        format!("({kind};{flags};0x{:x};;;{})", self.rights.mask(), sid.as_str())
    }

    /// The `icacls` arguments that make the same entry: the path, then `/grant:r` (replacing
    /// the user's earlier allow entries on it) or `/deny`, then `*SID:(OI)(CI)(RIGHTS)`. For
    /// review and for a person repairing by hand; Sluice applies entries through the API.
    pub fn icacls_args(&self, sid: &Sid) -> Vec<String> {
        let verb = match self.kind {
            AceKind::Allow => "/grant:r",
            AceKind::Deny => "/deny",
        };
        let inherit = if self.inherit { "(OI)(CI)" } else { "" };
        vec![
            self.path.as_str().to_owned(),
            verb.to_owned(),
            format!("*{}:{inherit}({})", sid.as_str(), self.rights.icacls()),
        ]
    }
}

/// What a project's jobs run with on Windows, as absolute Windows paths.
#[derive(Debug, Clone)]
pub struct AclInputs<'a> {
    /// `%USERPROFILE%`.
    pub profile: &'a WinPath,
    /// Sluice's data folder (`%APPDATA%\Sluice` unless moved).
    pub data_dir: &'a WinPath,
    /// The project's root.
    pub project_root: &'a WinPath,
    /// The project's private folders for its jobs (HOME, temp, caches), beneath `data_dir`.
    pub private: &'a WinPath,
    /// The project's execution mode: `project` and `any` may write the project; `safe` only
    /// reads it; `off` runs nothing.
    pub exec: ExecMode,
    /// Stores the project hides beside the defaults.
    pub hidden: &'a [WinPath],
    /// Default stores the project un-hid.
    pub unhidden: &'a [WinPath],
    /// Stores the project's jobs may read.
    pub granted: &'a [WinPath],
}

/// The rules, allows first, then denies (the order Windows evaluates them in is its own:
/// explicit before inherited, deny before allow).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AclPlan {
    pub entries: Vec<AclEntry>,
}

impl AclPlan {
    /// The entries on `path` (ignoring case).
    pub fn on(&self, path: &WinPath) -> impl Iterator<Item = &AclEntry> {
        self.entries.iter().filter(move |e| e.path.same(path))
    }
}

/// The default stores under `profile` (`crate::hide::HOME_STORES`, `/` read as `\`), with
/// what each holds.
pub fn default_stores(profile: &WinPath) -> Vec<(WinPath, &'static str)> {
    crate::hide::HOME_STORES
        .iter()
        .filter_map(|(rel, holds)| profile.join(rel).ok().map(|p| (p, *holds)))
        .collect()
}

/// The rules for one project's jobs. Refused: `off` (nothing runs); a project root that is a
/// drive's root, holds the profile or Sluice's data folder, or lies in a hidden store or in
/// Sluice's data folder; private folders outside Sluice's data folder or in another hidden
/// store; a grant of Sluice's data folder or of something in it.
pub fn plan(inputs: &AclInputs<'_>) -> Result<AclPlan, WinSandboxError> {
    let write = match inputs.exec {
        ExecMode::Off => {
            return Err(WinSandboxError::Refused("execution is off for this project".into()));
        }
        ExecMode::Safe => false,
        ExecMode::Project | ExecMode::Any => true,
    };
    let stores = hidden_stores(inputs.profile, inputs.data_dir, inputs)?;
    check_root(inputs, &stores)?;
    check_private(inputs, &stores)?;
    let mut entries = Vec::new();
    let allow = |path: &WinPath, scope, rights, why| AclEntry {
        path: path.clone(),
        scope,
        kind: AceKind::Allow,
        rights,
        inherit: true,
        why,
    };
    let project_rights = if write { Rights::Modify } else { Rights::ReadExecute };
    entries.push(allow(inputs.project_root, Scope::Project, project_rights, "the project"));
    let private = "the project's private folders";
    entries.push(allow(inputs.private, Scope::Project, Rights::Modify, private));
    entries.extend(toolchain_entries(inputs.profile, &stores));
    for g in inputs.granted {
        entries.push(allow(g, Scope::Project, Rights::Read, "a store granted to the project"));
    }
    entries.extend(deny_entries(stores));
    Ok(AclPlan { entries })
}

/// The once-only rules of the setup, no project's: the toolchains readable, Sluice's data
/// folder and the default credential stores denied (what [`plan`] marks [`Scope::Setup`] for
/// a project that changes no store).
pub fn setup_plan(profile: &WinPath, data_dir: &WinPath) -> Result<AclPlan, WinSandboxError> {
    let none = Changes { hidden: &[], unhidden: &[], granted: &[] };
    let stores = hidden_stores(profile, data_dir, none)?;
    let mut entries = toolchain_entries(profile, &stores);
    entries.extend(deny_entries(stores));
    Ok(AclPlan { entries })
}

/// The toolchains under `profile`, readable. A toolchain in a hidden store stays hidden: an
/// explicit allow on it would win over the deny the store passes down.
fn toolchain_entries(profile: &WinPath, stores: &[Store]) -> Vec<AclEntry> {
    toolchains(profile)
        .into_iter()
        .filter(|dir| !stores.iter().any(|(s, _, _)| dir.starts_with(s)))
        .map(|dir| AclEntry {
            path: dir,
            scope: Scope::Setup,
            kind: AceKind::Allow,
            rights: Rights::ReadExecute,
            inherit: true,
            why: "a toolchain",
        })
        .collect()
}

fn deny_entries(stores: Vec<Store>) -> impl Iterator<Item = AclEntry> {
    stores.into_iter().map(|(store, holds, scope)| AclEntry {
        path: store,
        scope,
        kind: AceKind::Deny,
        rights: Rights::All,
        inherit: true,
        why: holds,
    })
}

/// A project's changes to the hidden stores.
#[derive(Clone, Copy)]
struct Changes<'a> {
    hidden: &'a [WinPath],
    unhidden: &'a [WinPath],
    granted: &'a [WinPath],
}

impl<'a> From<&AclInputs<'a>> for Changes<'a> {
    fn from(i: &AclInputs<'a>) -> Changes<'a> {
        Changes { hidden: i.hidden, unhidden: i.unhidden, granted: i.granted }
    }
}

/// A store to deny: where, what it holds, when its entry is applied.
type Store = (WinPath, &'static str, Scope);

/// The stores the project's jobs must not read: Sluice's data folder, the defaults not
/// un-hidden or granted, and the project's own additions not granted (as
/// [`crate::hide::effective_stores`] does on the other systems).
fn hidden_stores<'a>(
    profile: &WinPath,
    data_dir: &WinPath,
    changes: impl Into<Changes<'a>>,
) -> Result<Vec<Store>, WinSandboxError> {
    let changes = changes.into();
    for g in changes.granted {
        if g.starts_with(data_dir) || data_dir.starts_with(g) {
            return Err(WinSandboxError::Refused(
                "Sluice's own data folder cannot be granted to a project's jobs".into(),
            ));
        }
    }
    let listed = |list: &[WinPath], p: &WinPath| list.iter().any(|x| x.same(p));
    let mut out = vec![(data_dir.clone(), "Sluice's own data", Scope::Setup)];
    for (store, holds) in default_stores(profile) {
        let taken = out.iter().any(|(s, _, _)| s.same(&store));
        if !taken && !listed(changes.unhidden, &store) && !listed(changes.granted, &store) {
            out.push((store, holds, Scope::Setup));
        }
    }
    for h in changes.hidden {
        if !listed(changes.granted, h) && !out.iter().any(|(s, _, _)| s.same(h)) {
            out.push((h.clone(), "hidden by the project", Scope::Project));
        }
    }
    Ok(out)
}

/// Refuses a project root the rules cannot grant without granting a secret with it.
fn check_root(inputs: &AclInputs<'_>, stores: &[Store]) -> Result<(), WinSandboxError> {
    let root = inputs.project_root;
    let refuse = |why: &str| {
        Err(WinSandboxError::HiddenRoot(format!(
            "the project's folder {why}, so its jobs cannot run as the sandbox user"
        )))
    };
    if root.depth() == 0 {
        return refuse("is a whole drive");
    }
    if inputs.profile.starts_with(root) {
        return refuse("holds your whole user profile");
    }
    if inputs.data_dir.starts_with(root) {
        return refuse("holds Sluice's own data folder");
    }
    if let Some((_, holds, _)) = stores.iter().find(|(s, _, _)| root.starts_with(s)) {
        return refuse(&format!("is in a store hidden from jobs ({holds})"));
    }
    Ok(())
}

/// The private folders must be Sluice's (beneath its data folder, not holding it) and in no
/// other hidden store: their explicit allow would win over that store's deny.
fn check_private(inputs: &AclInputs<'_>, stores: &[Store]) -> Result<(), WinSandboxError> {
    let private = inputs.private;
    let in_data = private.starts_with(inputs.data_dir) && !private.same(inputs.data_dir);
    // A store that holds the data folder (the user hid all of `AppData`) is why the private
    // folders are hidden from everyone else; any other store must not hold them.
    let in_other =
        stores.iter().any(|(s, _, _)| private.starts_with(s) && !inputs.data_dir.starts_with(s));
    if !in_data || in_other || private.starts_with(inputs.project_root) {
        return Err(WinSandboxError::Refused(
            "the project's private folders must lie in Sluice's data folder and nowhere else \
             hidden"
                .into(),
        ));
    }
    Ok(())
}

/// The toolchain folders under `profile`: [`crate::places::TOOLCHAINS`] and
/// [`WINDOWS_TOOLCHAINS`].
fn toolchains(profile: &WinPath) -> Vec<WinPath> {
    crate::places::TOOLCHAINS
        .iter()
        .chain(WINDOWS_TOOLCHAINS)
        .filter_map(|rel| profile.join(rel).ok())
        .collect()
}
