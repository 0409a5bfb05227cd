//! What may run: the structured command an assistant asks for ([`CommandSpec`]), its risk
//! ([`assess`]), the execution mode's verdict ([`decide`]), the program's resolution from a
//! trusted PATH ([`TrustedPath`]), and the canonical form approvals and allow rules bind to
//! ([`ResolvedCommand::fingerprint`], [`AllowRule`]).
//!
//! Everything here is pure analysis of argv: nothing is ever handed to a shell, so `;`, `$(…)`
//! or a newline inside an argument is just a character. The analysis errs towards refusing:
//! whatever it does not recognise is at least "caution", never "safe", and an input too large
//! to analyse is refused, not waved through (AP-03).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sluice_core::ExecMode;
use sluice_guard::RelPath;

use crate::error::ExecError;

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

/// Facts about the project the analysis needs: the `package.json` scripts of the working
/// directory (only scripts that exist may run, and the approval shows their content), and a
/// hash of its task files (`Makefile`, `justfile`, …), whose recipes `make` and `just` run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectFacts {
    pub scripts: BTreeMap<String, String>,
    pub task_files: Option<String>,
    /// A `package.json` that is there but was not parsed for scripts (a symbolic link, not a
    /// file, too large): a hash of where it points and what is there, since the package manager
    /// would still run its scripts.
    pub opaque_package_json: Option<String>,
    /// Files in the command's folder or above it in the project that choose what a version
    /// manager or a tool runs ([`crate::pins::present`]); project-relative.
    pub pins: Vec<String>,
}

/// The task files `make` and `just` read, in the order they look for them.
const TASK_FILES: &[&str] =
    &["GNUmakefile", "makefile", "Makefile", "justfile", "Justfile", ".justfile"];

/// The largest `package.json` or task file read.
const MAX_FACT_FILE: u64 = 1024 * 1024;

impl ProjectFacts {
    /// Parses the `scripts` of a `package.json`; anything malformed yields no scripts.
    pub fn from_package_json(text: &str) -> ProjectFacts {
        let scripts = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("scripts").and_then(|s| s.as_object()).cloned())
            .map(|obj| {
                obj.into_iter().filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_owned()))).collect()
            })
            .unwrap_or_default();
        ProjectFacts { scripts, task_files: None, opaque_package_json: None, pins: Vec::new() }
    }

    /// Reads `package.json` and the task files in `dir` (a physical folder the caller already
    /// contained). A missing, oversized or symlinked `package.json` yields no scripts; task files
    /// count by name and content, an unreadable one as such, so any change changes the hash.
    pub fn load(dir: &Path) -> ProjectFacts {
        let regular = |file: &Path| {
            std::fs::symlink_metadata(file)
                .is_ok_and(|m| m.file_type().is_file() && m.len() <= MAX_FACT_FILE)
        };
        let file = dir.join("package.json");
        let mut facts = match regular(&file).then(|| std::fs::read_to_string(&file)) {
            Some(Ok(text)) => ProjectFacts::from_package_json(&text),
            _ => ProjectFacts {
                opaque_package_json: std::fs::symlink_metadata(&file).is_ok().then(|| {
                    let mut hasher = blake3::Hasher::new();
                    digest_file(&mut hasher, "package.json", &file);
                    hasher.finalize().to_hex().to_string()
                }),
                ..ProjectFacts::default()
            },
        };
        let mut hasher = blake3::Hasher::new();
        let mut any = false;
        for name in TASK_FILES {
            let file = dir.join(name);
            if std::fs::symlink_metadata(&file).is_err() {
                continue;
            }
            any = true;
            digest_file(&mut hasher, name, &file);
        }
        facts.task_files = any.then(|| hasher.finalize().to_hex().to_string());
        facts
    }

    /// The project-defined text `name args` runs, as a hash an allow rule is bound to (AP-05):
    /// every `package.json` script for a package manager (hooks and scripts that call each
    /// other included), the task files for `make` and `just`; `None` for other programs.
    pub fn content_for(&self, name: &str) -> Option<String> {
        match name {
            "npm" | "pnpm" | "yarn" | "bun" if self.opaque_package_json.is_some() => {
                self.opaque_package_json.clone()
            }
            "npm" | "pnpm" | "yarn" | "bun" => {
                let json = serde_json::to_string(&self.scripts).ok()?;
                Some(blake3::hash(json.as_bytes()).to_hex().to_string())
            }
            "make" | "gmake" | "just" => {
                Some(self.task_files.clone().unwrap_or_else(|| "no task files".into()))
            }
            _ => None,
        }
    }
}

/// Adds file `name` at `file` to `hasher` as the program reading it sees it: a symbolic link by
/// where it points and what is there, content up to [`MAX_FACT_FILE`], else "unreadable".
fn digest_file(hasher: &mut blake3::Hasher, name: &str, file: &Path) {
    hasher.update(name.as_bytes()).update(b"\0");
    if let Ok(target) = std::fs::read_link(file) {
        hasher.update(b"-> ").update(target.to_string_lossy().as_bytes()).update(b"\0");
    }
    let followed = std::fs::metadata(file)
        .is_ok_and(|m| m.is_file() && m.len() <= MAX_FACT_FILE)
        .then(|| std::fs::read(file).ok())
        .flatten();
    match followed {
        Some(bytes) => hasher.update(&(bytes.len() as u64).to_le_bytes()).update(&bytes),
        None => hasher.update(b"unreadable"),
    };
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

/// A flag allow-list of one toolchain subcommand.
struct Flags {
    /// Flags without a value.
    plain: &'static [&'static str],
    /// Flags followed by a value (`-p x`, `--package=x`).
    valued: &'static [&'static str],
}

/// Checks `args` against `flags`: every flag known, every value and positional not starting
/// with `-`. Returns the positionals; everything after `--` is returned separately and
/// unchecked, because the toolchain passes it to the project's own program.
fn parse_flags<'a>(
    args: &[&'a str],
    flags: &Flags,
) -> Result<(Vec<&'a str>, Vec<&'a str>), String> {
    let mut positionals = Vec::new();
    let mut iter = args.iter().enumerate();
    while let Some((idx, &arg)) = iter.next() {
        if arg == "--" {
            return Ok((positionals, args[idx + 1..].to_vec()));
        }
        if !arg.starts_with('-') {
            positionals.push(arg);
            continue;
        }
        if flags.plain.contains(&arg) {
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (arg, None),
        };
        if !flags.valued.contains(&flag) {
            return Err(format!("the option {arg:?} is not allowed here"));
        }
        let value = match inline {
            Some(v) => v,
            None => match iter.next() {
                Some((_, v)) => v,
                None => return Err(format!("the option {flag} needs a value")),
            },
        };
        if value.starts_with('-') || value.is_empty() || value.chars().any(char::is_control) {
            return Err(format!("the value of {flag} must not be empty or start with '-'"));
        }
    }
    Ok((positionals, Vec::new()))
}

/// Recognises the project's own entry points through known toolchains. `Ok` carries the reason
/// shown in the approval; `Err` says why this is not a toolchain form.
fn toolchain(name: &str, args: &[&str], facts: &ProjectFacts) -> Result<String, String> {
    match name {
        "cargo" => cargo_form(args),
        "npm" | "pnpm" | "yarn" | "bun" => script_form(name, args, facts),
        "go" => go_form(args),
        "pytest" | "py.test" => pytest_form(args),
        n if is_python(n) => match args {
            ["-m", "pytest", rest @ ..] => pytest_form(rest),
            _ => Err("only `python -m pytest` is a toolchain form of python".into()),
        },
        "make" => make_form(args),
        "just" => match args {
            [recipe] if is_target(recipe) => Ok(format!("runs the justfile recipe `{recipe}`")),
            _ => Err("`just` takes exactly one recipe name".into()),
        },
        "gradle" => gradle_form(args),
        "mvn" => maven_form(args),
        "dotnet" => dotnet_form(args),
        _ => Err(format!("`{name}` is not a known toolchain")),
    }
}

fn cargo_form(args: &[&str]) -> Result<String, String> {
    const PLAIN: &[&str] = &[
        "--release",
        "--all-targets",
        "--workspace",
        "--all",
        "--lib",
        "--bins",
        "--tests",
        "--benches",
        "--examples",
        "--all-features",
        "--no-default-features",
        "--locked",
        "--offline",
        "--frozen",
        "-q",
        "--quiet",
        "-v",
        "-vv",
        "--verbose",
        "--no-run",
        "--no-fail-fast",
        "--doc",
        "--keep-going",
        "--check",
    ];
    const VALUED: &[&str] = &[
        "-p",
        "--package",
        "--bin",
        "--test",
        "--example",
        "--bench",
        "--features",
        "-F",
        "--target",
        "-j",
        "--jobs",
        "--profile",
        "--message-format",
        "--exclude",
    ];
    let Some((&sub, rest)) = args.split_first() else {
        return Err("cargo needs a subcommand".into());
    };
    if !matches!(sub, "build" | "test" | "check" | "clippy" | "run" | "bench" | "fmt" | "doc") {
        return Err(format!(
            "`cargo {sub}` is not a project entry point (build, test, check, clippy, run, bench, \
             fmt, doc)"
        ));
    }
    let (positionals, _after) = parse_flags(rest, &Flags { plain: PLAIN, valued: VALUED })?;
    // Only test and bench take a positional (the name filter); elsewhere it would be a stray
    // argument cargo might read as something else.
    if !positionals.is_empty() && !matches!(sub, "test" | "bench") {
        return Err(format!("`cargo {sub}` takes no positional arguments before `--`"));
    }
    if positionals.len() > 1 {
        return Err("at most one test name filter before `--`".into());
    }
    Ok(format!("runs `cargo {sub}`: builds and may run the project's code (build scripts, tests)"))
}

fn script_form(tool: &str, args: &[&str], facts: &ProjectFacts) -> Result<String, String> {
    let (script, extra) = match args {
        ["run" | "run-script", script, rest @ ..] => (*script, rest),
        ["test"] => ("test", &[][..]),
        _ => return Err(format!("only `{tool} run <script>` is a toolchain form of {tool}")),
    };
    if script.starts_with('-') || script.is_empty() {
        return Err("the script name must not start with '-'".into());
    }
    let Some(body) = facts.scripts.get(script) else {
        return Err(format!("package.json has no script named {script:?}"));
    };
    // Arguments for the script: npm joins them into a shell command line, so only a plain
    // character set passes (no quoting tricks to rely on), after `--`.
    let extra = match extra {
        [] => &[][..],
        ["--", rest @ ..] => rest,
        _ => return Err("arguments for a script go after `--`".into()),
    };
    let plain = |a: &&str| {
        !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b"._/:=@,+-".contains(&b))
    };
    if !extra.iter().all(plain) {
        return Err("script arguments may use only letters, digits and ._/:=@,+-".into());
    }
    let mut reason = format!("runs package.json script `{script}`: {}", clip(body, 400));
    for hook in [format!("pre{script}"), format!("post{script}")] {
        if let Some(body) = facts.scripts.get(&hook)
            && tool == "npm"
        {
            let _ = write!(reason, "; and `{hook}`: {}", clip(body, 200));
        }
    }
    Ok(reason)
}

fn go_form(args: &[&str]) -> Result<String, String> {
    const PLAIN: &[&str] =
        &["-v", "-race", "-short", "-cover", "-failfast", "-json", "-x", "-n", "-mod=readonly"];
    const VALUED: &[&str] =
        &["-run", "-bench", "-count", "-timeout", "-tags", "-p", "-parallel", "-cpu", "-benchtime"];
    let Some((&sub, rest)) = args.split_first() else {
        return Err("go needs a subcommand".into());
    };
    if !matches!(sub, "build" | "test" | "vet") {
        return Err(format!("`go {sub}` is not a project entry point (build, test, vet)"));
    }
    let (packages, after) = parse_flags(rest, &Flags { plain: PLAIN, valued: VALUED })?;
    if !after.is_empty() {
        return Err("go takes no arguments after `--` here".into());
    }
    if let Some(bad) = packages.iter().find(|p| !(**p == "." || p.starts_with("./"))) {
        return Err(format!("package {bad:?} must be a relative pattern like ./... "));
    }
    Ok(format!("runs `go {sub}`: builds and may run the project's code"))
}

fn pytest_form(args: &[&str]) -> Result<String, String> {
    const PLAIN: &[&str] = &[
        "-q",
        "-v",
        "-vv",
        "-x",
        "-s",
        "--lf",
        "--ff",
        "--co",
        "--collect-only",
        "--no-header",
        "-rA",
        "--tb=short",
        "--tb=long",
        "--tb=line",
        "--tb=no",
    ];
    const VALUED: &[&str] = &["-k", "-m", "--maxfail", "-n"];
    let (paths, after) = parse_flags(args, &Flags { plain: PLAIN, valued: VALUED })?;
    if !after.is_empty() {
        return Err("pytest takes no arguments after `--` here".into());
    }
    if let Some(bad) = paths.iter().find(|p| p.starts_with('/') || p.contains("..")) {
        return Err(format!("test path {bad:?} must stay inside the project"));
    }
    Ok("runs pytest: imports and runs the project's tests and conftest files".into())
}

fn make_form(args: &[&str]) -> Result<String, String> {
    const PLAIN: &[&str] = &["-k", "--keep-going", "-s", "--silent", "-n", "--dry-run", "-B"];
    const VALUED: &[&str] = &["-j", "--jobs"];
    // `-j4` is common; accept it as `-j 4`.
    let normalized: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix("-j") {
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => format!("-j={n}"),
            _ => (*a).to_owned(),
        })
        .collect();
    let refs: Vec<&str> = normalized.iter().map(String::as_str).collect();
    let (targets, after) = parse_flags(&refs, &Flags { plain: PLAIN, valued: VALUED })?;
    if !after.is_empty() {
        return Err("make takes no arguments after `--`".into());
    }
    if let Some(bad) = targets.iter().find(|t| !is_target(t)) {
        return Err(format!(
            "{bad:?} is not a plain target name (variable overrides such as CC=… are refused)"
        ));
    }
    let what = if targets.is_empty() { "the default target".to_owned() } else { targets.join(" ") };
    Ok(format!("runs Makefile recipes ({what}): project-defined commands"))
}

/// The system `gradle` (never a project's `gradlew`: programs never run from the project) with
/// build and test tasks only; no `-I` init scripts, no `-D`/`-P` properties.
fn gradle_form(args: &[&str]) -> Result<String, String> {
    const TASKS: &[&str] = &["build", "assemble", "test", "check", "classes", "testClasses"];
    const PLAIN: &[&str] = &[
        "--offline",
        "-q",
        "--quiet",
        "-i",
        "--info",
        "--stacktrace",
        "--continue",
        "--console=plain",
        "--no-daemon",
    ];
    const VALUED: &[&str] = &["--tests", "-x", "--exclude-task"];
    let (tasks, after) = parse_flags(args, &Flags { plain: PLAIN, valued: VALUED })?;
    if !after.is_empty() {
        return Err("gradle takes no arguments after `--`".into());
    }
    if tasks.is_empty() {
        return Err("gradle needs a task (build, assemble, test, check)".into());
    }
    if let Some(bad) = tasks.iter().find(|t| !TASKS.contains(t)) {
        return Err(format!("the gradle task {bad:?} is not a build or test entry point"));
    }
    Ok(format!("runs `gradle {}`: builds and may run the project's code", tasks.join(" ")))
}

/// Maven lifecycle phases that build and test; no plugin goals, no `-D` properties except an
/// inline `-Dtest=…` filter, no `-f` other POMs.
fn maven_form(args: &[&str]) -> Result<String, String> {
    const PHASES: &[&str] = &["compile", "test-compile", "test", "package", "verify"];
    const PLAIN: &[&str] = &["-q", "--quiet", "-o", "--offline", "-B", "--batch-mode", "-e"];
    const VALUED: &[&str] = &["-Dtest", "-pl", "--projects"];
    // `-Dtest X` would make maven read X as a goal: only the inline form is accepted.
    if args.contains(&"-Dtest") {
        return Err("write a maven test filter as -Dtest=NAME".into());
    }
    let (phases, after) = parse_flags(args, &Flags { plain: PLAIN, valued: VALUED })?;
    if !after.is_empty() {
        return Err("mvn takes no arguments after `--`".into());
    }
    if phases.is_empty() {
        return Err("mvn needs a lifecycle phase (compile, test, package, verify)".into());
    }
    if let Some(bad) = phases.iter().find(|p| !PHASES.contains(p)) {
        return Err(format!("{bad:?} is not a maven build or test phase"));
    }
    Ok(format!("runs `mvn {}`: builds and may run the project's code", phases.join(" ")))
}

/// `dotnet build` and `dotnet test` of a project or solution inside the project.
fn dotnet_form(args: &[&str]) -> Result<String, String> {
    const PLAIN: &[&str] = &["--no-restore", "--no-build", "--nologo"];
    const VALUED: &[&str] =
        &["-c", "--configuration", "-f", "--framework", "--filter", "-v", "--verbosity"];
    let Some((&sub, rest)) = args.split_first() else {
        return Err("dotnet needs a subcommand".into());
    };
    if !matches!(sub, "build" | "test") {
        return Err(format!("`dotnet {sub}` is not a project entry point (build, test)"));
    }
    let (paths, after) = parse_flags(rest, &Flags { plain: PLAIN, valued: VALUED })?;
    if !after.is_empty() {
        return Err("dotnet takes no arguments after `--` here".into());
    }
    if paths.len() > 1 {
        return Err("at most one project or solution file".into());
    }
    if let Some(bad) = paths.iter().find(|p| p.starts_with('/') || p.contains("..")) {
        return Err(format!("project path {bad:?} must stay inside the project"));
    }
    Ok(format!("runs `dotnet {sub}`: restores packages, builds and may run the project's code"))
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

/// The general risk of any argv, seeing through wrappers.
fn risk_of(name: &str, args: &[&str], depth: usize) -> (Risk, String) {
    use Risk::{Caution, Dangerous};
    if depth > MAX_WRAPPER_DEPTH {
        return (Dangerous, "too many nested wrappers to analyse".into());
    }
    let sub = args.first().copied().unwrap_or("");
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(a));
    let inline = |what: &str| (Dangerous, format!("inline code evaluation ({what})"));
    match name {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh" => {
            let evaluates = args
                .iter()
                .take_while(|a| a.starts_with('-'))
                .any(|a| short_cluster_has(a, 'c') || *a == "--command");
            if evaluates {
                inline(&format!("`{name} -c`"))
            } else {
                (Caution, format!("runs a {name} script"))
            }
        }
        "cmd" | "cmd.bat" => {
            if args.iter().any(|a| matches!(a.to_ascii_lowercase().as_str(), "/c" | "/k" | "/r")) {
                inline("`cmd /c`")
            } else {
                (Caution, "runs cmd".into())
            }
        }
        "pwsh" | "powershell" => {
            let evaluates = args.iter().any(|a| {
                let a = a.to_ascii_lowercase();
                let a = a.trim_start_matches(['-', '/']);
                matches!(a, "c" | "command" | "e" | "ec" | "enc" | "encodedcommand")
                    || a.starts_with("commandwith")
            });
            if evaluates {
                inline(&format!("`{name} -Command`"))
            } else {
                (Caution, format!("runs a {name} script"))
            }
        }
        "node" | "nodejs" => {
            let evaluates = args.iter().take_while(|a| a.starts_with('-')).any(|a| {
                let flag = a.split('=').next().unwrap_or(a);
                matches!(
                    flag,
                    "-e" | "--eval"
                        | "-p"
                        | "--print"
                        | "-r"
                        | "--require"
                        | "--import"
                        | "--loader"
                        | "--experimental-loader"
                ) || short_cluster_has(a, 'e')
                    || short_cluster_has(a, 'p')
            });
            if evaluates { inline("`node -e`") } else { (Caution, "runs a node script".into()) }
        }
        n if is_python(n) => {
            let opts: Vec<&str> = args.iter().take_while(|a| a.starts_with('-')).copied().collect();
            if opts.iter().any(|a| short_cluster_has(a, 'c')) {
                return inline(&format!("`{name} -c`"));
            }
            let module = args.iter().position(|a| *a == "-m").and_then(|i| args.get(i + 1));
            match module {
                Some(&"pip") | Some(&"ensurepip") => install(&format!("`{name} -m pip`")),
                Some(m) => (Caution, format!("runs the python module {m}")),
                None => (Caution, "runs a python script".into()),
            }
        }
        "perl" | "ruby" | "lua" | "luajit" | "rscript" | "osascript" | "php" => {
            let letter = if name == "php" { 'r' } else { 'e' };
            let evaluates = args.iter().take_while(|a| a.starts_with('-')).any(|a| {
                short_cluster_has(a, letter) || (name == "perl" && short_cluster_has(a, 'E'))
            });
            if evaluates {
                inline(&format!("`{name} -{letter}`"))
            } else {
                (Caution, format!("runs a {name} script"))
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            (Dangerous, format!("{name} programs are inline code and can run commands"))
        }
        "deno" if matches!(sub, "eval" | "repl") => inline("`deno eval`"),
        "deno" if matches!(sub, "install" | "add") => install("`deno install`"),
        "wscript" | "cscript" | "mshta" => inline(name),
        "xargs" | "parallel" | "watch" => {
            (Dangerous, format!("`{name}` runs commands built from its input or a shell string"))
        }
        "sudo" | "doas" | "pkexec" | "su" | "runuser" | "chroot" | "unshare" | "nsenter" => {
            (Dangerous, format!("`{name}` runs a program with other privileges or namespaces"))
        }
        "crontab" | "at" | "batch" | "systemd-run" | "launchctl" | "schtasks" | "sc"
        | "loginctl" => (Dangerous, format!("`{name}` makes something run after the job ends")),
        "systemctl" => {
            if matches!(sub, "status" | "show" | "is-active" | "list-units") {
                (Caution, "queries systemd".into())
            } else {
                (Dangerous, "`systemctl` can start or install services that outlive the job".into())
            }
        }
        "env" | "nohup" | "setsid" | "timeout" | "nice" | "ionice" | "time" | "stdbuf" | "chrt"
        | "taskset" | "strace" | "ltrace" | "valgrind" | "flock" | "busybox" | "script"
        | "unbuffer" | "faketime" | "command" | "exec" => wrapper(name, args, depth),
        "npx" | "pnpx" | "bunx" | "uvx" | "pipx" => {
            install(&format!("`{name}` downloads and runs"))
        }
        "npm" | "pnpm" | "yarn" | "bun" => {
            if (name == "yarn" && args.is_empty())
                || matches!(
                    sub,
                    "install"
                        | "i"
                        | "ci"
                        | "add"
                        | "update"
                        | "upgrade"
                        | "up"
                        | "exec"
                        | "x"
                        | "dlx"
                        | "rebuild"
                        | "link"
                        | "create"
                        | "init"
                        | "install-test"
                        | "it"
                        | "cit"
                        | "remove"
                        | "uninstall"
                        | "publish"
                )
            {
                install(&format!("`{name} {sub}`"))
            } else {
                (Caution, format!("runs {name} (package scripts are project-defined commands)"))
            }
        }
        "pip" | "pip3" if matches!(sub, "install" | "download" | "wheel" | "uninstall") => {
            install(&format!("`{name} {sub}`"))
        }
        "uv" if matches!(sub, "pip" | "add" | "sync" | "tool" | "run" | "lock") => {
            install(&format!("`uv {sub}`"))
        }
        "poetry" if matches!(sub, "install" | "add" | "update" | "run" | "lock") => {
            install(&format!("`poetry {sub}`"))
        }
        "gem" | "bundle" | "composer" | "apt" | "apt-get" | "dnf" | "yum" | "brew" | "pacman"
        | "apk" | "zypper" | "snap" | "flatpak" | "winget" | "choco" => {
            install(&format!("`{name}` manages packages"))
        }
        "cargo" => {
            if args
                .iter()
                .any(|a| *a == "--config" || a.starts_with("--config=") || a.starts_with("-Z"))
            {
                (Dangerous, "`cargo --config`/`-Z` can name a program cargo then runs".into())
            } else if matches!(sub, "install" | "uninstall" | "add" | "update" | "publish") {
                install(&format!("`cargo {sub}`"))
            } else {
                (Caution, format!("runs `cargo {sub}`"))
            }
        }
        "rustup" if !matches!(sub, "show" | "--version" | "-V") => {
            install(&format!("`rustup {sub}` may download toolchains"))
        }
        "go" => {
            if matches!(sub, "install" | "get" | "generate") {
                let why = if sub == "generate" {
                    "`go generate` runs commands written in source comments"
                } else {
                    "`go install/get` downloads and builds code"
                };
                (Dangerous, why.into())
            } else if args.iter().any(|a| {
                let f = a.split('=').next().unwrap_or(a);
                matches!(f, "-exec" | "-toolexec" | "--exec" | "--toolexec")
            }) {
                (Dangerous, "`go -exec/-toolexec` runs another program".into())
            } else {
                (Caution, format!("runs `go {sub}`"))
            }
        }
        "git" => git_risk(args),
        "find" => {
            if has(&["-exec", "-execdir", "-ok", "-okdir"]) {
                (Dangerous, "`find -exec` runs commands".into())
            } else if has(&["-delete", "-fprint", "-fprintf", "-fls"]) {
                (Caution, "`find` deletes or writes files".into())
            } else {
                (Caution, "runs find".into())
            }
        }
        "curl" | "wget" | "nc" | "ncat" | "netcat" | "socat" | "ssh" | "scp" | "sftp" | "rsync"
        | "ftp" | "telnet" => (Caution, format!("`{name}` uses the network")),
        n if n.ends_with(".bat") || n.ends_with(".cmd") => {
            (Dangerous, "batch files run through cmd.exe (a shell)".into())
        }
        _ => (Caution, format!("runs `{name}`")),
    }
}

fn install(what: &str) -> (Risk, String) {
    (Risk::Dangerous, format!("dependency installation or download ({what}) runs package code"))
}

/// Wrappers run another program: the risk is the wrapped program's, and never below caution.
fn wrapper(name: &str, args: &[&str], depth: usize) -> (Risk, String) {
    // Options of each wrapper that take a separate value, and when the wrapped command starts.
    let (valued, skip_positionals): (&[&str], usize) = match name {
        "env" => (&["-u", "--unset", "-C", "--chdir"], 0),
        "timeout" => (&["-s", "--signal", "-k", "--kill-after"], 1),
        "nice" => (&["-n", "--adjustment"], 0),
        "ionice" => (&["-c", "--class", "-n", "--classdata", "-t"], 0),
        "time" => (&["-o", "--output", "-f", "--format"], 0),
        "stdbuf" => (&["-i", "-o", "-e"], 0),
        "chrt" => (&[], 1),
        "taskset" => (&[], 1),
        "strace" | "ltrace" => (&["-o", "-e", "-p", "-s", "-u"], 0),
        "flock" => (&["-w", "--timeout", "-E", "--conflict-exit-code"], 1),
        _ => (&[], 0),
    };
    if name == "env" && args.iter().any(|a| short_cluster_has(a, 'S') || a.starts_with("--split")) {
        return (Risk::Dangerous, "`env -S` splits a string into a command".into());
    }
    if matches!(name, "flock" | "script") && args.iter().any(|a| short_cluster_has(a, 'c')) {
        return (Risk::Dangerous, format!("inline code evaluation (`{name} -c`)"));
    }
    let mut idx = 0;
    while idx < args.len() && args[idx].starts_with('-') && args[idx] != "-" {
        if args[idx] == "--" {
            idx += 1;
            break;
        }
        if valued.contains(&args[idx]) {
            idx += 1;
        }
        idx += 1;
    }
    if name == "env" {
        while idx < args.len() && args[idx].contains('=') {
            idx += 1;
        }
    }
    idx += skip_positionals;
    let Some(inner) = args.get(idx) else {
        return (Risk::Caution, format!("`{name}` with nothing to run"));
    };
    let inner_name = program_name(inner);
    let (risk, reason) = risk_of(&inner_name, &args[idx + 1..], depth + 1);
    (risk.max(Risk::Caution), format!("`{name}` runs `{inner_name}`: {reason}"))
}

/// git runs code through configuration (`-c core.fsmonitor=…`, `-c alias.x=!sh`), transport
/// options (`--upload-pack`) and a few subcommands; and an unknown subcommand may be an alias
/// the repository defines.
fn git_risk(args: &[&str]) -> (Risk, String) {
    use Risk::{Caution, Dangerous};
    let mut idx = 0;
    while let Some(&arg) = args.get(idx) {
        if !arg.starts_with('-') {
            break;
        }
        if arg == "-c" || arg.starts_with("-c") || arg.starts_with("--config-env") {
            return (Dangerous, "`git -c` sets configuration that can run programs".into());
        }
        if arg.starts_with("--exec-path") {
            return (Dangerous, "`git --exec-path` runs git programs from another folder".into());
        }
        if matches!(arg, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
            idx += 1;
        }
        idx += 1;
    }
    let sub = args.get(idx).copied().unwrap_or("");
    let rest = args.get(idx + 1..).unwrap_or(&[]);
    let runs_code = rest.iter().any(|a| {
        let f = a.split('=').next().unwrap_or(a);
        matches!(
            f,
            "--upload-pack"
                | "--receive-pack"
                | "--exec"
                | "--ext-diff"
                | "--textconv"
                | "--extcmd"
        ) || (sub == "rebase" && (*a == "-x" || short_cluster_has(a, 'x')))
            || (matches!(sub, "clone" | "fetch" | "pull" | "ls-remote" | "archive") && *a == "-u")
    });
    if runs_code {
        return (Dangerous, format!("`git {sub}` with an option that runs a program"));
    }
    match sub {
        "config" => (Dangerous, "`git config` can set programs git later runs".into()),
        "filter-branch" | "difftool" | "mergetool" | "daemon" => {
            (Dangerous, format!("`git {sub}` runs configured programs"))
        }
        "submodule" if rest.first() == Some(&"foreach") => {
            (Dangerous, "`git submodule foreach` runs a shell command".into())
        }
        "bisect" if rest.first() == Some(&"run") => {
            (Dangerous, "`git bisect run` runs a command".into())
        }
        "push" | "fetch" | "pull" | "clone" | "ls-remote" | "remote" | "submodule" => {
            (Caution, format!("`git {sub}` uses the network"))
        }
        "status" | "log" | "diff" | "show" | "add" | "commit" | "branch" | "checkout"
        | "switch" | "restore" | "reset" | "rebase" | "merge" | "stash" | "tag" | "init"
        | "rev-parse" | "ls-files" | "blame" | "grep" | "describe" | "shortlog" | "cherry-pick"
        | "revert" | "clean" | "mv" | "rm" | "worktree" | "notes" | "reflog" | "format-patch"
        | "am" | "apply" | "gc" | "fsck" | "--version" | "version" | "help" => {
            (Caution, format!("`git {sub}` (the repository's hooks and filters may run)"))
        }
        "" => (Caution, "git without a subcommand".into()),
        other => (Dangerous, format!("`git {other}` is unknown and may be a repository alias")),
    }
}

/// The engine's PATH with every entry that is relative or lies inside a project removed: a
/// project must not be able to plant a `cargo` that Sluice then runs.
#[derive(Debug, Clone, Default)]
pub struct TrustedPath {
    dirs: Vec<PathBuf>,
    projects: Vec<PathBuf>,
}

impl TrustedPath {
    /// Filters `path` (a PATH value). `projects` are the physical roots of every project.
    pub fn new(path: &OsStr, projects: &[PathBuf]) -> TrustedPath {
        let projects: Vec<PathBuf> = projects
            .iter()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
            .collect();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in std::env::split_paths(path) {
            if !dir.is_absolute() {
                continue;
            }
            let Ok(canon) = std::fs::canonicalize(&dir) else { continue };
            if !canon.is_dir() || projects.iter().any(|p| canon.starts_with(p)) {
                continue;
            }
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        TrustedPath { dirs, projects }
    }

    /// The engine's own PATH, filtered.
    pub fn from_env(projects: &[PathBuf]) -> TrustedPath {
        TrustedPath::new(&std::env::var_os("PATH").unwrap_or_default(), projects)
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The value given to jobs as `PATH`.
    pub fn joined(&self) -> OsString {
        std::env::join_paths(&self.dirs).unwrap_or_default()
    }

    /// Resolves a bare name on the trusted PATH, or accepts an absolute path; either way the
    /// result is an executable file whose real location is outside every project.
    pub fn resolve(&self, program: &str) -> Result<PathBuf, ExecError> {
        let candidates: Vec<PathBuf> = if Path::new(program).is_absolute() {
            vec![PathBuf::from(program)]
        } else if program.contains(['/', '\\']) || program == "." || program == ".." {
            return Err(ExecError::Refused(format!(
                "{program:?}: programs run from the trusted PATH only (a bare name) or by \
                 absolute path, never relative to the project"
            )));
        } else {
            self.dirs
                .iter()
                .flat_map(|d| exe_names(program).into_iter().map(|n| d.join(n)))
                .collect()
        };
        for candidate in candidates {
            if !is_executable(&candidate) {
                continue;
            }
            let real = std::fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
            if self.projects.iter().any(|p| real.starts_with(p)) {
                return Err(ExecError::Refused(format!(
                    "`{program}` resolves into a project folder; only programs outside projects \
                     run"
                )));
            }
            return Ok(candidate);
        }
        Err(ExecError::NotFound(format!("`{program}` was not found on the trusted PATH")))
    }
}

#[cfg(windows)]
fn exe_names(program: &str) -> Vec<String> {
    // Never `.bat`/`.cmd`: Windows runs those through cmd.exe, an implicit shell.
    vec![format!("{program}.exe"), format!("{program}.com"), program.to_owned()]
}

#[cfg(not(windows))]
fn exe_names(program: &str) -> Vec<String> {
    vec![program.to_owned()]
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// A command ready to spawn: the absolute program, argv, the normalized working directory and
/// the environment additions (sorted by name). This, and nothing else, is what approvals and
/// allow rules bind to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Normalized project-relative folder; `""` is the root.
    pub cwd: String,
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
}

/// The BLAKE3 hash of a command's canonical encoding, hex.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fingerprint(pub String);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ResolvedCommand {
    /// An unambiguous byte encoding: a version tag, then each field length-prefixed, so no two
    /// different commands encode alike (`["a b"]` ≠ `["a","b"]`, a newline is just a byte).
    pub fn canonical(&self) -> Vec<u8> {
        fn field(out: &mut Vec<u8>, bytes: &[u8]) {
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        let mut out = b"sluice-exec/command/v1".to_vec();
        field(&mut out, self.program.as_os_str().as_encoded_bytes());
        out.extend_from_slice(&(self.args.len() as u64).to_le_bytes());
        for arg in &self.args {
            field(&mut out, arg.as_bytes());
        }
        field(&mut out, self.cwd.as_bytes());
        let mut env: Vec<&(String, String)> = self.env.iter().collect();
        env.sort();
        out.extend_from_slice(&(env.len() as u64).to_le_bytes());
        for (k, v) in env {
            field(&mut out, k.as_bytes());
            field(&mut out, v.as_bytes());
        }
        out
    }

    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint(blake3::hash(&self.canonical()).to_hex().to_string())
    }

    /// The program and its arguments on one line: each quoted when it needs it, every control
    /// or deceptive character shown as its code point ([`sluice_core::text::visible`]), so a
    /// newline or a terminal escape cannot draw a second line.
    pub fn display(&self) -> String {
        let mut out = quote(&self.program.to_string_lossy());
        for arg in &self.args {
            out.push(' ');
            out.push_str(&quote(arg));
        }
        out
    }

    /// [`Self::display`] with the folder and each environment variable, rendered the same way:
    /// the line an approval, an allow rule and the audit log show for the command.
    pub fn describe(&self) -> String {
        let mut out = self.display();
        if !self.cwd.is_empty() {
            out.push_str(" in ");
            out.push_str(&quote(&self.cwd));
        }
        for (k, v) in &self.env {
            out.push_str(" with ");
            out.push_str(&quote(k));
            out.push('=');
            out.push_str(&quote(v));
        }
        out
    }
}

fn quote(s: &str) -> String {
    let plain =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._/:=@,+-%".contains(&b));
    if plain {
        return s.to_owned();
    }
    // Every hidden character is shown as its code point first; that never makes a quote.
    format!("'{}'", sluice_core::text::visible(s).replace('\'', "'\\''"))
}

/// "Always allow this exact command in this project": matches only a command whose canonical
/// encoding is identical — never a prefix, never a shell string (AP-03) — and, for a command
/// that runs project-defined text (`npm run`, `make`, `just`), only while that text is what the
/// user approved: any change to it asks again (AP-05).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowRule {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: String,
    pub env: Vec<(String, String)>,
    /// [`ProjectFacts::content_for`] when the user approved the command.
    #[serde(default)]
    pub content: Option<String>,
}

impl AllowRule {
    /// The rule "always allow" turns an approved verdict into.
    pub fn from_verdict(verdict: &Verdict) -> AllowRule {
        let cmd = &verdict.resolved;
        AllowRule {
            program: cmd.program.clone(),
            args: cmd.args.clone(),
            cwd: cmd.cwd.clone(),
            env: cmd.env.clone(),
            content: verdict.content.clone(),
        }
    }

    fn as_command(&self) -> ResolvedCommand {
        ResolvedCommand {
            program: self.program.clone(),
            args: self.args.clone(),
            cwd: self.cwd.clone(),
            env: self.env.clone(),
            timeout: None,
        }
    }

    /// Whether the rule allows `cmd`, which runs project-defined text hashing to `content`.
    pub fn matches(&self, cmd: &ResolvedCommand, content: Option<&str>) -> bool {
        self.as_command().canonical() == cmd.canonical() && self.content.as_deref() == content
    }

    pub fn fingerprint(&self) -> Fingerprint {
        self.as_command().fingerprint()
    }
}

/// The project's execution settings that the verdict depends on.
#[derive(Debug, Clone, Copy)]
pub struct Policy<'a> {
    pub mode: ExecMode,
    /// `project` mode asks by default; the user may turn that off.
    pub ask_in_project: bool,
    pub rules: &'a [AllowRule],
}

/// What the engine does next: run the resolved command, after asking the human if `ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub resolved: ResolvedCommand,
    pub fingerprint: Fingerprint,
    pub risk: Risk,
    /// What kind of command it is (inspection, toolchain form, anything else).
    pub form: Form,
    /// Shown in the approval prompt: what the command does and why it is risky.
    pub reason: String,
    pub ask: bool,
    /// The hash of the project-defined text the command runs ([`ProjectFacts::content_for`]),
    /// which an "always allow" rule made from this verdict is bound to.
    pub content: Option<String>,
}

/// Validates, analyses and resolves `spec` under `policy`. A refusal is an error with a reason
/// the assistant can act on; otherwise the verdict says whether to ask first.
pub fn decide(
    spec: &CommandSpec,
    facts: &ProjectFacts,
    trusted: &TrustedPath,
    policy: &Policy<'_>,
) -> Result<Verdict, ExecError> {
    if policy.mode == ExecMode::Off {
        return Err(ExecError::Refused("execution is off for this project".into()));
    }
    let cwd = validate(spec)?;
    let assessment = assess(spec, facts);
    let allowed = match (policy.mode, assessment.form) {
        (ExecMode::Off, _) => false,
        (_, Form::Inspection) => true,
        (ExecMode::Safe, _) => false,
        (ExecMode::Project, Form::Toolchain) => assessment.risk < Risk::Dangerous,
        (ExecMode::Project, Form::Arbitrary) => false,
        (ExecMode::Any, _) => true,
    };
    if !allowed {
        let why = match policy.mode {
            ExecMode::Safe => {
                "safe mode runs only version checks and read-only inspections".to_owned()
            }
            _ if assessment.risk == Risk::Dangerous => {
                format!("refused in project mode: {}", assessment.reason)
            }
            _ => format!(
                "project mode runs only the project's toolchain entry points: {}",
                assessment.not_toolchain.as_deref().unwrap_or("not a toolchain form")
            ),
        };
        return Err(ExecError::Refused(why));
    }
    let program = trusted.resolve(&spec.program)?;
    let mut env = spec.env.clone();
    for (k, v) in &assessment.forced_env {
        env.retain(|(n, _)| n != k);
        env.push((k.clone(), v.clone()));
    }
    env.sort();
    let resolved = ResolvedCommand {
        program,
        args: spec.args.clone(),
        cwd: cwd.as_str().to_owned(),
        env,
        timeout: spec.timeout,
    };
    let content = facts.content_for(&program_name(&spec.program));
    let ruled = policy.rules.iter().any(|r| r.matches(&resolved, content.as_deref()));
    // An inspection runs unasked only when it runs what the user's PATH runs outside the project.
    let chosen = match assessment.form {
        Form::Inspection => crate::pins::chosen_by_project(&resolved.program, &facts.pins),
        _ => None,
    };
    let ask = match (policy.mode, assessment.form) {
        (_, Form::Inspection) => chosen.is_some(),
        _ if ruled => false,
        (ExecMode::Project, _) => policy.ask_in_project,
        _ => true,
    };
    // An approval binds the project-defined text too: a script edited while the prompt is open
    // changes the fingerprint, and the approved call is refused as changed (AP-01, AP-05).
    let fingerprint = match &content {
        None => resolved.fingerprint(),
        Some(c) => Fingerprint(
            blake3::hash(format!("{}\0{c}", resolved.fingerprint()).as_bytes())
                .to_hex()
                .to_string(),
        ),
    };
    Ok(Verdict {
        fingerprint,
        resolved,
        risk: assessment.risk,
        form: assessment.form,
        reason: match chosen {
            Some(why) => format!("{}; {why}", assessment.reason),
            None => assessment.reason,
        },
        ask,
        content,
    })
}
