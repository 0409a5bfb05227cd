//! The command classifier (`sluice_exec::spec`): argv → risk, form, and each execution mode's
//! verdict.
//!
//! Input: lines. The first is the program, each further line one argument, until a line
//! holding only `\x1e` (record separator), after which comes the working folder's
//! `package.json`. Two forms reach the size limits a short input cannot: a line `+N*text` is
//! `N` copies of the argument `text`, and `*N*text` is one argument of `text` repeated `N`
//! times. The program resolves on a trusted PATH made once per process (a temp folder holding an
//! executable of each name the classifier knows).
//!
//! Properties: nothing panics; an inspection is safe; in `safe` mode only inspections run; a
//! dangerous command never runs without asking (no allow rules are given); and a classifier
//! limit hit — too many arguments, too many bytes, wrappers nested deeper than the analysis
//! follows — is refused in every mode, or at the least asks as dangerous, never runs unasked.

use std::path::PathBuf;
use std::sync::OnceLock;

use sluice_core::ExecMode;
use sluice_exec::spec::{
    CommandSpec, Form, MAX_ARG_LEN, MAX_ARGS, MAX_ARGV_BYTES, Policy, ProjectFacts, Risk,
    TrustedPath, assess, decide,
};

/// Programs the classifier has an opinion on (and a few it has none on).
const PROGRAMS: &[&str] = &[
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "npx",
    "go",
    "pytest",
    "python",
    "python3",
    "pip",
    "uv",
    "make",
    "just",
    "gradle",
    "mvn",
    "dotnet",
    "git",
    "node",
    "deno",
    "rustc",
    "rustup",
    "env",
    "nohup",
    "setsid",
    "timeout",
    "nice",
    "ionice",
    "time",
    "stdbuf",
    "chrt",
    "taskset",
    "strace",
    "ltrace",
    "valgrind",
    "flock",
    "busybox",
    "script",
    "unbuffer",
    "faketime",
    "command",
    "exec",
    "sh",
    "bash",
    "zsh",
    "pwsh",
    "cmd",
    "ls",
    "cat",
    "echo",
    "rm",
    "cp",
    "mv",
    "find",
    "xargs",
    "curl",
    "wget",
    "ssh",
    "docker",
    "sudo",
    "systemctl",
    "crontab",
    "perl",
    "ruby",
    "awk",
    "sed",
    "tar",
    "rg",
    "grep",
    "which",
    "true",
];

/// Wrappers that run their first argument when given no option: a chain of them is exactly
/// as deep as it is long.
const PLAIN_WRAPPERS: &[&str] =
    &["env", "nohup", "setsid", "nice", "time", "stdbuf", "strace", "command", "exec", "unbuffer"];

/// How deep the analysis follows wrappers (`MAX_WRAPPER_DEPTH` in `spec.rs`).
const WRAPPER_DEPTH: usize = 8;

struct Bin {
    _tmp: tempfile::TempDir,
    trusted: TrustedPath,
    dir: PathBuf,
}

fn bin() -> &'static Bin {
    static BIN: OnceLock<Bin> = OnceLock::new();
    BIN.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("temp folder");
        let dir = std::fs::canonicalize(tmp.path()).expect("canonical temp folder");
        for name in PROGRAMS {
            let path = dir.join(name);
            std::fs::write(&path, "#!/bin/false\n").expect("a program");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .expect("executable");
            }
        }
        let trusted = TrustedPath::new(dir.as_os_str(), &[]);
        Bin { _tmp: tmp, trusted, dir }
    })
}

/// Expands `+N*text` and `*N*text` (see the module doc).
fn expand(line: &str, args: &mut Vec<String>) {
    let repeat = |rest: &str| -> Option<(usize, String)> {
        let (n, text) = rest.split_once('*')?;
        Some((n.parse::<usize>().ok()?, text.to_owned()))
    };
    if let Some((n, text)) = line.strip_prefix('+').and_then(repeat) {
        args.extend(std::iter::repeat_n(text, n.min(2 * MAX_ARGS)));
    } else if let Some((n, text)) = line.strip_prefix('*').and_then(repeat) {
        let n = n.min((2 * MAX_ARGV_BYTES) / text.len().max(1));
        args.push(text.repeat(n));
    } else {
        args.push(line.to_owned());
    }
}

pub fn command_classifier(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (argv, package_json) = match text.split_once("\n\x1e\n") {
        Some((argv, json)) => (argv, Some(json)),
        None => (text, None),
    };
    let mut lines = argv.split('\n');
    let program = lines.next().unwrap_or_default();
    let mut args = Vec::new();
    for line in lines {
        expand(line, &mut args);
    }
    let bin = bin();
    // An absolute program must exist to resolve: point known names at the trusted copies.
    let program = match program.strip_prefix("/abs/") {
        Some(name) => bin.dir.join(name).to_string_lossy().into_owned(),
        None => program.to_owned(),
    };
    let spec = CommandSpec { program, args, ..CommandSpec::new("", &[]) };
    let facts = package_json.map(ProjectFacts::from_package_json).unwrap_or_default();

    let assessment = assess(&spec, &facts);
    if assessment.form == Form::Inspection {
        assert_eq!(assessment.risk, Risk::Safe, "an unsafe inspection: {spec:?}");
    }
    let total: usize = spec.args.iter().map(String::len).sum();
    let too_large = spec.args.len() > MAX_ARGS
        || total > MAX_ARGV_BYTES
        || spec.args.iter().any(|a| a.len() > MAX_ARG_LEN);
    let too_deep = std::iter::once(spec.program.as_str())
        .chain(spec.args.iter().map(String::as_str))
        .take_while(|a| PLAIN_WRAPPERS.contains(a))
        .count()
        > WRAPPER_DEPTH + 1;
    if too_deep {
        assert_eq!(assessment.risk, Risk::Dangerous, "wrappers too deep, yet {assessment:?}");
    }

    for (mode, ask_in_project) in [
        (ExecMode::Off, true),
        (ExecMode::Safe, true),
        (ExecMode::Project, true),
        (ExecMode::Project, false),
        (ExecMode::Any, true),
    ] {
        let policy = Policy { mode, ask_in_project, rules: &[] };
        let Ok(verdict) = decide(&spec, &facts, &bin.trusted, &policy) else { continue };
        let shown = format!("{mode:?}: {spec:?} → {verdict:?}");
        assert!(!too_large, "a limit hit was not refused: {shown}");
        assert_ne!(mode, ExecMode::Off, "{shown}");
        if mode == ExecMode::Safe {
            assert_eq!(verdict.form, Form::Inspection, "{shown}");
        }
        if verdict.risk == Risk::Dangerous || too_deep {
            assert!(verdict.ask, "runs unasked: {shown}");
        }
        let again = decide(&spec, &facts, &bin.trusted, &policy).expect("the same verdict twice");
        assert_eq!(again.fingerprint, verdict.fingerprint, "{shown}");
    }
}
