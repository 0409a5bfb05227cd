//! Toolchain forms: the project's own entry points through known toolchains (`cargo test`,
//! `npm run <script>`, `go test`, `pytest`, `make`, `gradle`, `mvn`, `dotnet`), each a flag
//! allow-list; what `toolchain` and `build` execution modes accept.

use std::fmt::Write as _;

use super::{ProjectFacts, clip, is_python, is_target};

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
pub(super) fn toolchain(name: &str, args: &[&str], facts: &ProjectFacts) -> Result<String, String> {
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
        _ => super::servers::form(name, args)
            .unwrap_or_else(|| Err(format!("`{name}` is not a known toolchain"))),
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
