//! Project modes. Defaults are the safe ones: read-only, execution off.

use serde::{Deserialize, Serialize};

/// What the assistant may do to a project's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessMode {
    /// The assistant can look but not change anything.
    #[default]
    ReadOnly,
    /// The assistant can create, edit, move and (with approval) delete files.
    ReadWrite,
}

/// What the assistant may run inside a project, ordered from the least to the most it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecMode {
    /// Nothing runs.
    #[default]
    Off,
    /// Toolchain version checks and read-only inspections.
    Safe,
    /// The project's own build/test/run entry points through known toolchains.
    Project,
    /// Any program with an argv; each run approved unless an allow rule matches.
    Any,
}

/// What a project's jobs may reach over the network, ordered from the least to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkMode {
    /// Nothing leaves the job (loopback inside it still works).
    Off,
    /// Only HTTPS to the package registries on the user's list, through Sluice's proxy.
    Registries,
    /// Anything.
    On,
}

/// Whether a project's git tools show its commits' author e-mail addresses to assistants
/// (committers' and taggers' are never shown). Hidden by default: a history names people, and
/// their addresses are theirs, not the code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GitEmails {
    /// Commits carry names and no e-mail address.
    #[default]
    Hide,
    /// Commits carry their author's e-mail address too (the user allowed it for the project).
    Show,
}

/// Whether git writes run the repository's hooks (`.git/hooks`, or `core.hooksPath` inside the
/// project): never by default; when the user allows them for a project, each hook runs as a job
/// in the project's sandbox, like a command, and never as Sluice itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GitHooks {
    /// No hook runs: a commit is made from plumbing, with nothing of the repository's run.
    #[default]
    Off,
    /// The commit hooks (`pre-commit`, `prepare-commit-msg`, `commit-msg`, `post-commit`) and a
    /// switch's `post-checkout` run as jobs in the project's sandbox; a failing pre-commit or
    /// commit-msg stops the commit.
    Sandbox,
}

/// A limit an assistant put on its own token (`drop_privileges`), ordered from the least to the
/// most it takes away. An assistant can only move up this order; only the user lifts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SelfLimit {
    /// It may still read and search, but change no file and run nothing.
    ReadOnly,
    /// Every request it makes is refused.
    Paused,
}

/// Which tools a token offers, ordered from the least to the most: each profile has every tool
/// of the ones below it. A profile only narrows what the project's access and execution modes
/// allow, never widens it. Which tool needs which profile is `sluice_mcp`'s table (it owns the
/// tool names); the meta tools (`server_info`, `list_projects`, …) are in every profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// List, read, search and read git history.
    Review,
    /// Review, and change files (write, edit, patch, move, create, delete, restore).
    Edit,
    /// Edit, and run commands and jobs.
    Agent,
    /// Everything the project's modes allow: the profile of tokens made before profiles existed.
    Full,
}

impl Profile {
    /// What a profile lets a token do, in one line for people.
    pub const fn describe(self) -> &'static str {
        match self {
            Profile::Review => "list, read, search and read git history",
            Profile::Edit => "review, and change files",
            Profile::Agent => "edit, and run commands and jobs",
            Profile::Full => "everything the project's modes allow",
        }
    }
}

/// Whether tools may use a project right now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", content = "reason", rename_all = "kebab-case")]
pub enum ProjectState {
    Available,
    /// Turned off by the user.
    Disabled,
    /// The root folder was moved, deleted or replaced; the reason says which and when.
    RootLost(String),
}

impl ProjectState {
    pub fn is_available(&self) -> bool {
        matches!(self, ProjectState::Available)
    }
}

/// Gives a field-less enum its stable words: `ALL` (every variant, in order), `as_str`,
/// `Display` and `FromStr` (whose error names the accepted words), from one list, so a variant
/// cannot exist without its word or be missing from `ALL`.
#[macro_export]
macro_rules! str_enum {
    ($ty:ident { $($variant:ident = $s:literal),+ $(,)? }) => {
        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            pub const fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $s),+ }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = ::std::string::String;

            fn from_str(s: &str) -> ::std::result::Result<$ty, ::std::string::String> {
                match s {
                    $($s => Ok($ty::$variant),)+
                    _ => Err(format!(
                        "unknown {} {s:?}; expected one of: {}",
                        stringify!($ty),
                        [$($s),+].join(", ")
                    )),
                }
            }
        }
    };
}

str_enum!(AccessMode { ReadOnly = "read-only", ReadWrite = "read-write" });
str_enum!(ExecMode { Off = "off", Safe = "safe", Project = "project", Any = "any" });
str_enum!(NetworkMode { Off = "off", Registries = "registries", On = "on" });
str_enum!(Profile { Review = "review", Edit = "edit", Agent = "agent", Full = "full" });
str_enum!(SelfLimit { ReadOnly = "read-only", Paused = "paused" });
str_enum!(GitEmails { Hide = "hide", Show = "show" });
str_enum!(GitHooks { Off = "off", Sandbox = "sandbox" });

impl ExecMode {
    /// The modes that let the assistant change files through processes need read-write access.
    pub fn needs_read_write(self) -> bool {
        matches!(self, ExecMode::Project | ExecMode::Any)
    }
}

#[cfg(test)]
mod tests {
    use super::{ExecMode, Profile};

    #[test]
    fn profiles_order_by_what_they_allow_and_parse_back() {
        assert!(Profile::Review < Profile::Edit);
        assert!(Profile::Edit < Profile::Agent);
        assert!(Profile::Agent < Profile::Full);
        for &p in Profile::ALL {
            assert_eq!(p.as_str().parse::<Profile>(), Ok(p));
        }
        let err = "root".parse::<Profile>().unwrap_err();
        assert!(err.contains("review, edit, agent, full"), "{err}");
    }

    #[test]
    fn exec_modes_order_by_what_they_allow() {
        assert!(ExecMode::Off < ExecMode::Safe);
        assert!(ExecMode::Safe < ExecMode::Project);
        assert!(ExecMode::Project < ExecMode::Any);
    }
}
