//! What may run: the structured command an assistant asks for ([`CommandSpec`]), its risk
//! ([`assess`]), the execution mode's verdict ([`decide`]), the program's resolution from a
//! trusted PATH ([`TrustedPath`]), and the canonical form approvals and allow rules bind to
//! ([`ResolvedCommand::fingerprint`], [`AllowRule`]).
//!
//! Everything here is pure analysis of argv: nothing is ever handed to a shell, so `;`, `$(…)`
//! or a newline inside an argument is just a character. The analysis errs towards refusing:
//! whatever it does not recognise is at least "caution", never "safe", and an input too large
//! to analyse is refused, not waved through (AP-03).

mod facts;
mod risk;
mod servers;
mod toolchain;
mod trusted_path;
mod verdict;

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sluice_guard::RelPath;

use crate::error::ExecError;

pub use facts::ProjectFacts;
pub use servers::{LANGUAGE_SERVERS, LanguageServer, servers_for};
pub use trusted_path::TrustedPath;
pub use verdict::{AllowRule, Fingerprint, Policy, ResolvedCommand, Verdict, decide};

use risk::risk_of;
use toolchain::toolchain;

/// Most arguments a command may have; more is refused rather than half-analysed.
pub const MAX_ARGS: usize = 1024;
/// Longest single argument or environment value, in bytes.
pub const MAX_ARG_LEN: usize = 64 * 1024;
/// Longest total of all arguments, in bytes.
pub const MAX_ARGV_BYTES: usize = 512 * 1024;
/// Longest timeout a command may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// Wrappers nested deeper than this (`env nice timeout env …`) are refused as unanalysable.
const MAX_WRAPPER_DEPTH: usize = 8;

/// Environment variables a command may add. Everything else is refused: a variable can load
/// code (`NODE_OPTIONS`, `LD_PRELOAD`, `RUSTC_WRAPPER`, `GIT_CONFIG_*`), redirect endpoints
/// (`*_PROXY`, `*_BASE_URL`) or carry a secret, so additions are an allow-list, not a deny-list.
pub const ENV_ADDITIONS: &[&str] = &[
    "CI",
    "DEBUG",
    "NODE_ENV",
    "NO_COLOR",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "RUST_TEST_THREADS",
    "RUST_MIN_STACK",
    "CARGO_INCREMENTAL",
    "CARGO_TERM_VERBOSE",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "GOOS",
    "GOARCH",
    "CGO_ENABLED",
    "TZ",
    "LOG_LEVEL",
];

/// A command as an assistant asks for it: a program and its arguments, never a shell string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSpec {
    /// A bare program name looked up on the trusted PATH (`cargo`), or an absolute path.
    pub program: String,
    pub args: Vec<String>,
    /// Working directory relative to the project root; `""` or `.` is the root.
    #[serde(default)]
    pub cwd: String,
    /// Environment additions; names must be in [`ENV_ADDITIONS`].
    #[serde(default)]
    pub env: Vec<(String, String)>,
    #[serde(default)]
    pub timeout: Option<Duration>,
}

impl CommandSpec {
    /// `program` with `args` in the project root, no additions, no timeout.
    pub fn new(program: &str, args: &[&str]) -> CommandSpec {
        CommandSpec {
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            cwd: String::new(),
            env: Vec::new(),
            timeout: None,
        }
    }
}

/// How much harm a command can do if the assistant was misled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Risk {
    /// A version check or read-only inspection.
    Safe,
    /// Runs project code or changes files inside the project.
    Caution,
    /// Evaluates inline code, installs dependencies, runs code through git options, persists
    /// beyond the job, or raises privileges.
    Dangerous,
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Risk::Safe => "safe",
            Risk::Caution => "caution",
            Risk::Dangerous => "dangerous",
        })
    }
}

/// Which execution mode a command's shape fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// An exact version check or read-only inspection (`safe` mode).
    Inspection,
    /// A known toolchain entry point of the project (`project` mode).
    Toolchain,
    /// Anything else (`any` mode only).
    Arbitrary,
}

/// The analysis of one command: its risk, the mode shape it fits, and a reason a human reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    pub risk: Risk,
    pub form: Form,
    pub reason: String,
    /// Why the command is not a toolchain form, when it is not; `project` mode refuses with it.
    pub not_toolchain: Option<String>,
    /// Environment the policy forces for this command (e.g. `GOTOOLCHAIN=local`).
    pub forced_env: Vec<(String, String)>,
}

/// Checks the shape of a spec: sizes, NULs, the working directory and the environment names.
/// The analysis never runs on an input it could not see whole.
pub fn validate(spec: &CommandSpec) -> Result<RelPath, ExecError> {
    if spec.program.is_empty() || spec.program.len() > 4096 {
        return Err(ExecError::Invalid("the program name is empty or too long".into()));
    }
    if spec.program.chars().any(char::is_control) {
        return Err(ExecError::Invalid("the program name contains control characters".into()));
    }
    if spec.args.len() > MAX_ARGS {
        return Err(ExecError::Refused(format!(
            "more than {MAX_ARGS} arguments: too large to analyse, refused"
        )));
    }
    let total: usize = spec.args.iter().map(String::len).sum();
    if total > MAX_ARGV_BYTES || spec.args.iter().any(|a| a.len() > MAX_ARG_LEN) {
        return Err(ExecError::Refused("the arguments are too large to analyse, refused".into()));
    }
    if spec.args.iter().any(|a| a.contains('\0')) {
        return Err(ExecError::Invalid("an argument contains a NUL byte".into()));
    }
    if spec.timeout.is_some_and(|t| t > MAX_TIMEOUT || t.is_zero()) {
        return Err(ExecError::Invalid("the timeout must be between 1 ms and 24 hours".into()));
    }
    for (idx, (name, value)) in spec.env.iter().enumerate() {
        if !ENV_ADDITIONS.contains(&name.as_str()) {
            return Err(ExecError::Refused(format!(
                "environment variable {name:?} may not be set; allowed: {}",
                ENV_ADDITIONS.join(", ")
            )));
        }
        if value.contains('\0') || value.len() > MAX_ARG_LEN {
            return Err(ExecError::Invalid(format!("the value of {name} is not acceptable")));
        }
        if spec.env[..idx].iter().any(|(n, _)| n == name) {
            return Err(ExecError::Invalid(format!("{name} is set twice")));
        }
    }
    let cwd = if spec.cwd == "." { "" } else { spec.cwd.as_str() };
    RelPath::parse(cwd).map_err(|e| ExecError::Invalid(format!("working directory: {e}")))
}

/// The comparable name of a program: its file name, lower-cased, without a Windows extension.
fn program_name(program: &str) -> String {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program).to_ascii_lowercase();
    for ext in [".exe", ".com"] {
        if let Some(stem) = base.strip_suffix(ext) {
            return stem.to_owned();
        }
    }
    base
}

/// Analyses a command: risk, the mode shape it fits, and why.
pub fn assess(spec: &CommandSpec, facts: &ProjectFacts) -> Assessment {
    let name = program_name(&spec.program);
    let args: Vec<&str> = spec.args.iter().map(String::as_str).collect();
    let forced_env = forced_env(&name);
    if let Some(reason) = inspection(&name, &args) {
        return Assessment {
            risk: Risk::Safe,
            form: Form::Inspection,
            reason,
            not_toolchain: None,
            forced_env,
        };
    }
    let (risk, reason) = risk_of(&name, &args, 0);
    match toolchain(&name, &args, facts) {
        Ok(tool_reason) => Assessment {
            // A toolchain form runs project code at least; the general analysis may know worse.
            risk: risk.max(Risk::Caution),
            form: Form::Toolchain,
            reason: if risk == Risk::Dangerous { reason } else { tool_reason },
            not_toolchain: None,
            forced_env,
        },
        Err(why) => Assessment {
            risk: risk.max(Risk::Caution),
            form: Form::Arbitrary,
            reason,
            not_toolchain: Some(why),
            forced_env,
        },
    }
}

/// Environment the policy sets whatever the command: toolchains must not fetch and run another
/// toolchain version named by the project (`go.mod` `toolchain`), nor run a wrapper program the
/// project's cargo configuration names.
fn forced_env(name: &str) -> Vec<(String, String)> {
    let pairs: &[(&str, &str)] = match name {
        "go" => &[("GOTOOLCHAIN", "local")],
        "cargo" => &[("RUSTC_WRAPPER", ""), ("RUSTC_WORKSPACE_WRAPPER", "")],
        _ => &[],
    };
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// Exact version checks and read-only inspections: the whole of `safe` mode.
fn inspection(name: &str, args: &[&str]) -> Option<String> {
    const VERSION_TOOLS: &[&str] = &[
        "cargo", "rustc", "rustup", "node", "npm", "pnpm", "yarn", "bun", "deno", "python",
        "python3", "pip", "pip3", "git", "make", "gcc", "cc", "clang", "javac", "dotnet", "uv",
        "poetry", "just", "cmake", "go",
    ];
    let ok = match (name, args) {
        (n, ["--version"]) if VERSION_TOOLS.contains(&n) && n != "go" => true,
        ("cargo" | "rustc" | "python" | "python3" | "rustup" | "make", ["-V"]) => true,
        ("node" | "npm" | "pnpm" | "yarn" | "bun", ["-v"]) => true,
        ("go", ["version"]) => true,
        ("go", ["env", rest @ ..]) => rest.iter().all(|v| is_env_name(v)),
        ("rustc", ["-vV"]) => true,
        ("java", ["-version"]) => true,
        ("cargo", ["metadata", rest @ ..]) => {
            rest.contains(&"--no-deps")
                && rest.iter().all(|a| {
                    matches!(*a, "--no-deps" | "--offline" | "--locked" | "--format-version=1")
                })
        }
        _ => false,
    };
    ok.then(|| format!("`{name}` inspection (read-only)"))
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn is_target(t: &str) -> bool {
    !t.is_empty()
        && !t.starts_with('-')
        && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"._/-".contains(&b))
}

fn is_python(name: &str) -> bool {
    name.starts_with("python") || name.starts_with("pypy")
}

fn clip(s: &str, max: usize) -> String {
    let s = sluice_core::redact::redact(s);
    if s.chars().count() <= max {
        return s.into_owned();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// Is `arg` a cluster of short options containing `letter` (`-lc`, `-ec` for `c`)?
fn short_cluster_has(arg: &str, letter: char) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|r| !r.starts_with('-') && !r.is_empty() && r.contains(letter))
}
