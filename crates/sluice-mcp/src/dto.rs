//! Wire shapes of the discovery tools. Engine types stay free of serde; these are the contract a
//! model reads, so every field is documented.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sluice_core::{Failure, Profile, SelfLimit};
use sluice_engine::{Caller, Engine, ProjectSummary, TokenRecord};

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ProjectList {
    /// The projects this token may use.
    pub projects: Vec<ProjectEntry>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ProjectEntry {
    /// Stable id, e.g. `proj_8k2m…`; pass it (or the name) as `project` to the other tools.
    pub id: String,
    /// Display name chosen by the user.
    pub name: String,
    /// `read-only` or `read-write`.
    pub access: String,
    /// `off`, `safe`, `project` or `any`.
    pub execution: String,
    /// `available`, `disabled` or `root-lost`; only available projects can be used.
    pub status: String,
    /// Why the project is unavailable, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<Vec<ProjectSummary>> for ProjectList {
    fn from(projects: Vec<ProjectSummary>) -> ProjectList {
        ProjectList {
            projects: projects
                .into_iter()
                .map(|p| ProjectEntry {
                    id: p.id.to_string(),
                    name: p.name,
                    access: p.access.to_string(),
                    execution: p.exec.to_string(),
                    status: p.status.to_owned(),
                    reason: p.reason,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ServerInfo {
    /// Always `sluice`.
    pub name: &'static str,
    /// Sluice's version.
    pub version: &'static str,
    /// Whether the user has paused AI access (requests are refused while paused).
    pub paused: bool,
    /// The label of the token this request used.
    pub token_label: String,
    /// `read-only` when this token lowered its own privileges with `drop_privileges` (only the
    /// user can restore it); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_limit: Option<&'static str>,
    /// This token's profile, the tools it is offered: `review` (read and search), `edit`
    /// (and change files), `agent` (and run commands) or `full`. Only the user changes it.
    pub profile: &'static str,
    /// The largest file `read_file` returns whole, in bytes; use line ranges beyond it.
    pub read_file_max_bytes: u64,
    /// How many matches `search_text` returns at most in one call.
    pub search_max_results: u64,
}

impl ServerInfo {
    pub fn new(engine: &Engine, caller: &Caller) -> ServerInfo {
        ServerInfo {
            name: "sluice",
            version: env!("CARGO_PKG_VERSION"),
            paused: engine.check_access().is_err(),
            token_label: caller.label.clone(),
            self_limit: caller.limit.map(SelfLimit::as_str),
            profile: caller.profile.as_str(),
            read_file_max_bytes: sluice_runner::READ_FILE_HARD_MAX_BYTES,
            search_max_results: sluice_runner::SEARCH_MAX_RESULTS_CAP,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct SystemInfo {
    /// Operating system family: `linux`, `macos` or `windows`.
    pub os: &'static str,
    /// Distribution or product name and version, e.g. `Debian GNU/Linux 12`.
    pub os_version: Option<String>,
    /// Kernel version.
    pub kernel: Option<String>,
    /// CPU architecture, e.g. `x86_64`.
    pub arch: &'static str,
    /// CPU model name.
    pub cpu: Option<String>,
    /// Logical CPU count.
    pub cpus: u64,
    /// Physical memory in bytes.
    pub memory_total_bytes: u64,
    /// Memory available to new work, in bytes.
    pub memory_available_bytes: u64,
}

impl SystemInfo {
    pub fn collect() -> SystemInfo {
        use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};
        let sys = System::new_with_specifics(
            RefreshKind::nothing()
                .with_memory(MemoryRefreshKind::nothing().with_ram())
                .with_cpu(CpuRefreshKind::nothing()),
        )
        .ok();
        let cpus = sys.as_ref().map(|s| s.cpus()).unwrap_or_default();
        SystemInfo {
            os: std::env::consts::OS,
            os_version: System::long_os_version().ok(),
            kernel: System::kernel_version().ok(),
            arch: std::env::consts::ARCH,
            cpu: cpus.first().map(|c| c.brand().trim().to_owned()).filter(|b| !b.is_empty()),
            cpus: cpus.len() as u64,
            memory_total_bytes: sys.as_ref().map_or(0, |s| s.total_memory()),
            memory_available_bytes: sys.as_ref().map_or(0, |s| s.available_memory()),
        }
    }
}

/// What `drop_privileges` lowers the calling token to: a rung of the profile ladder, or a limit.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DropTo {
    /// The `agent` profile: files and commands, no more than that.
    Agent,
    /// The `edit` profile: read and change files; run nothing.
    Edit,
    /// Keep reading and searching; change no file and run nothing.
    ReadOnly,
    /// The `review` profile's rung: the same limit as `read-only`.
    Review,
    /// Every later request with this token is refused.
    Paused,
}

/// What a [`DropTo`] asks of the engine.
enum Lowering {
    Profile(Profile),
    Limit(SelfLimit),
}

impl From<DropTo> for Lowering {
    fn from(d: DropTo) -> Lowering {
        match d {
            DropTo::Agent => Lowering::Profile(Profile::Agent),
            DropTo::Edit => Lowering::Profile(Profile::Edit),
            DropTo::ReadOnly | DropTo::Review => Lowering::Limit(SelfLimit::ReadOnly),
            DropTo::Paused => Lowering::Limit(SelfLimit::Paused),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropPrivilegesArgs {
    /// `agent`, `edit`, `read-only` (or `review`, the same) or `paused`.
    pub to: DropTo,
    /// Why, in a sentence: shown to the user and kept in the audit log.
    #[serde(default)]
    pub reason: Option<String>,
}

impl DropPrivilegesArgs {
    /// Lowers `caller`'s own token as asked: its profile, or a limit.
    pub fn apply(&self, engine: &Engine, caller: &Caller) -> Result<TokenRecord, Failure> {
        let reason = self.reason.as_deref();
        match Lowering::from(self.to) {
            Lowering::Limit(limit) => engine.drop_privileges(caller, limit, reason),
            Lowering::Profile(profile) => engine.drop_profile(caller, profile, reason),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DroppedPrivileges {
    /// The limit now on this token: `read-only`, `paused`, or `none` when only its profile was
    /// lowered (a stricter limit already in force is kept).
    pub limit: &'static str,
    /// The token's profile now: `review`, `edit`, `agent` or `full` (a lower one is kept).
    pub profile: String,
    /// What that means and how it is undone.
    pub message: String,
}

impl DroppedPrivileges {
    pub fn new(token: &TokenRecord) -> DroppedPrivileges {
        let what = match token.self_limit.map(|(l, _)| l) {
            Some(SelfLimit::ReadOnly) => {
                "this token can still read and search, but changes no file and runs nothing"
            }
            Some(SelfLimit::Paused) => "every later request with this token is refused",
            None => match token.profile {
                Profile::Review => {
                    "this token can read and search, but changes no file and runs nothing"
                }
                Profile::Edit => "this token can read and change files, but runs nothing",
                Profile::Agent | Profile::Full => {
                    "this token can change files and run commands where the project allows"
                }
            },
        };
        DroppedPrivileges {
            limit: token.self_limit.map_or("none", |(l, _)| l.as_str()),
            profile: token.profile.to_string(),
            message: format!(
                "{what}; anything it was waiting for that its new rung does not allow was denied \
                 and, below `agent`, the commands it started were stopped. Only the user can \
                 restore it in Sluice."
            ),
        }
    }
}
