//! The risk table: how much harm any argv can do, seeing through wrappers (`env`, `timeout`,
//! `nice`, …) to the program they run.

use super::{MAX_WRAPPER_DEPTH, Risk, is_python, program_name, short_cluster_has};

/// How one family of programs is judged: its argv (without the program) and the wrapper depth
/// in, a risk and the reason a human reads out.
type Judge = fn(name: &str, args: &[&str], depth: usize) -> (Risk, String);

/// One row of the risk table: programs by their comparable name ([`program_name`]) and how
/// they are judged. A name appears in one row at most; a name in no row is judged by
/// [`risk_of`]'s fallbacks.
struct Programs {
    names: &'static [&'static str],
    judge: Judge,
}

/// The risk table (the general analysis of any argv).
const TABLE: &[Programs] = &[
    Programs {
        names: &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"],
        judge: shell,
    },
    Programs { names: &["cmd", "cmd.bat"], judge: cmd },
    Programs { names: &["pwsh", "powershell"], judge: powershell },
    Programs { names: &["node", "nodejs"], judge: node },
    Programs {
        names: &["perl", "ruby", "lua", "luajit", "rscript", "osascript", "php"],
        judge: script_interpreter,
    },
    Programs { names: &["awk", "gawk", "mawk", "nawk"], judge: awk },
    Programs { names: &["deno"], judge: deno },
    Programs { names: &["wscript", "cscript", "mshta"], judge: |name, _, _| inline(name) },
    Programs { names: &["xargs", "parallel", "watch"], judge: command_builder },
    Programs {
        names: &["sudo", "doas", "pkexec", "su", "runuser", "chroot", "unshare", "nsenter"],
        judge: privileges,
    },
    Programs {
        names: &[
            "crontab",
            "at",
            "batch",
            "systemd-run",
            "launchctl",
            "schtasks",
            "sc",
            "loginctl",
        ],
        judge: scheduler,
    },
    Programs { names: &["systemctl"], judge: systemctl },
    Programs {
        names: &[
            "env", "nohup", "setsid", "timeout", "nice", "ionice", "time", "stdbuf", "chrt",
            "taskset", "strace", "ltrace", "valgrind", "flock", "busybox", "script", "unbuffer",
            "faketime", "command", "exec",
        ],
        judge: wrapper,
    },
    Programs {
        names: &["npx", "pnpx", "bunx", "uvx", "pipx"],
        judge: |name, _, _| install(&format!("`{name}` downloads and runs")),
    },
    Programs { names: &["npm", "pnpm", "yarn", "bun"], judge: node_package_manager },
    Programs { names: &["pip", "pip3"], judge: pip },
    Programs { names: &["uv"], judge: uv },
    Programs { names: &["poetry"], judge: poetry },
    Programs {
        names: &[
            "gem", "bundle", "composer", "apt", "apt-get", "dnf", "yum", "brew", "pacman", "apk",
            "zypper", "snap", "flatpak", "winget", "choco",
        ],
        judge: |name, _, _| install(&format!("`{name}` manages packages")),
    },
    Programs { names: &["cargo"], judge: cargo },
    Programs { names: &["rustup"], judge: rustup },
    Programs { names: &["go"], judge: go },
    Programs { names: &["git"], judge: |_, args, _| git_risk(args) },
    Programs { names: &["find"], judge: find },
    Programs {
        names: &[
            "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "rsync", "ftp",
            "telnet",
        ],
        judge: |name, _, _| (Risk::Caution, format!("`{name}` uses the network")),
    },
];

/// The general risk of any argv, seeing through wrappers.
pub(super) fn risk_of(name: &str, args: &[&str], depth: usize) -> (Risk, String) {
    if depth > MAX_WRAPPER_DEPTH {
        return (Risk::Dangerous, "too many nested wrappers to analyse".into());
    }
    if let Some(row) = TABLE.iter().find(|row| row.names.contains(&name)) {
        return (row.judge)(name, args, depth);
    }
    if is_python(name) {
        return python(name, args);
    }
    if name.ends_with(".bat") || name.ends_with(".cmd") {
        return (Risk::Dangerous, "batch files run through cmd.exe (a shell)".into());
    }
    runs(name)
}

/// What any program not known to be worse is: caution.
fn runs(name: &str) -> (Risk, String) {
    (Risk::Caution, format!("runs `{name}`"))
}

fn inline(what: &str) -> (Risk, String) {
    (Risk::Dangerous, format!("inline code evaluation ({what})"))
}

/// The first argument: a subcommand, or `""`.
fn sub<'a>(args: &[&'a str]) -> &'a str {
    args.first().copied().unwrap_or("")
}

fn shell(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    let evaluates = args
        .iter()
        .take_while(|a| a.starts_with('-'))
        .any(|a| short_cluster_has(a, 'c') || *a == "--command");
    if evaluates {
        inline(&format!("`{name} -c`"))
    } else {
        (Risk::Caution, format!("runs a {name} script"))
    }
}

fn cmd(_: &str, args: &[&str], _: usize) -> (Risk, String) {
    if args.iter().any(|a| matches!(a.to_ascii_lowercase().as_str(), "/c" | "/k" | "/r")) {
        inline("`cmd /c`")
    } else {
        (Risk::Caution, "runs cmd".into())
    }
}

fn powershell(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    let evaluates = args.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        let a = a.trim_start_matches(['-', '/']);
        matches!(a, "c" | "command" | "e" | "ec" | "enc" | "encodedcommand")
            || a.starts_with("commandwith")
    });
    if evaluates {
        inline(&format!("`{name} -Command`"))
    } else {
        (Risk::Caution, format!("runs a {name} script"))
    }
}

fn node(_: &str, args: &[&str], _: usize) -> (Risk, String) {
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
    if evaluates { inline("`node -e`") } else { (Risk::Caution, "runs a node script".into()) }
}

fn python(name: &str, args: &[&str]) -> (Risk, String) {
    let opts: Vec<&str> = args.iter().take_while(|a| a.starts_with('-')).copied().collect();
    if opts.iter().any(|a| short_cluster_has(a, 'c')) {
        return inline(&format!("`{name} -c`"));
    }
    let module = args.iter().position(|a| *a == "-m").and_then(|i| args.get(i + 1));
    match module {
        Some(&"pip") | Some(&"ensurepip") => install(&format!("`{name} -m pip`")),
        Some(m) => (Risk::Caution, format!("runs the python module {m}")),
        None => (Risk::Caution, "runs a python script".into()),
    }
}

fn script_interpreter(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    let letter = if name == "php" { 'r' } else { 'e' };
    let evaluates = args
        .iter()
        .take_while(|a| a.starts_with('-'))
        .any(|a| short_cluster_has(a, letter) || (name == "perl" && short_cluster_has(a, 'E')));
    if evaluates {
        inline(&format!("`{name} -{letter}`"))
    } else {
        (Risk::Caution, format!("runs a {name} script"))
    }
}

fn awk(name: &str, _: &[&str], _: usize) -> (Risk, String) {
    (Risk::Dangerous, format!("{name} programs are inline code and can run commands"))
}

fn deno(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    match sub(args) {
        "eval" | "repl" => inline("`deno eval`"),
        "install" | "add" => install("`deno install`"),
        _ => runs(name),
    }
}

fn command_builder(name: &str, _: &[&str], _: usize) -> (Risk, String) {
    (Risk::Dangerous, format!("`{name}` runs commands built from its input or a shell string"))
}

fn privileges(name: &str, _: &[&str], _: usize) -> (Risk, String) {
    (Risk::Dangerous, format!("`{name}` runs a program with other privileges or namespaces"))
}

fn scheduler(name: &str, _: &[&str], _: usize) -> (Risk, String) {
    (Risk::Dangerous, format!("`{name}` makes something run after the job ends"))
}

fn systemctl(_: &str, args: &[&str], _: usize) -> (Risk, String) {
    if matches!(sub(args), "status" | "show" | "is-active" | "list-units") {
        (Risk::Caution, "queries systemd".into())
    } else {
        (Risk::Dangerous, "`systemctl` can start or install services that outlive the job".into())
    }
}

/// Subcommands of npm, pnpm, yarn and bun that install, download or run packages.
const PACKAGE_MANAGER_INSTALLS: &[&str] = &[
    "install",
    "i",
    "ci",
    "add",
    "update",
    "upgrade",
    "up",
    "exec",
    "x",
    "dlx",
    "rebuild",
    "link",
    "create",
    "init",
    "install-test",
    "it",
    "cit",
    "remove",
    "uninstall",
    "publish",
];

fn node_package_manager(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    let sub = sub(args);
    if (name == "yarn" && args.is_empty()) || PACKAGE_MANAGER_INSTALLS.contains(&sub) {
        install(&format!("`{name} {sub}`"))
    } else {
        (Risk::Caution, format!("runs {name} (package scripts are project-defined commands)"))
    }
}

fn pip(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    match sub(args) {
        sub @ ("install" | "download" | "wheel" | "uninstall") => {
            install(&format!("`{name} {sub}`"))
        }
        _ => runs(name),
    }
}

fn uv(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    match sub(args) {
        sub @ ("pip" | "add" | "sync" | "tool" | "run" | "lock") => install(&format!("`uv {sub}`")),
        _ => runs(name),
    }
}

fn poetry(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    match sub(args) {
        sub @ ("install" | "add" | "update" | "run" | "lock") => {
            install(&format!("`poetry {sub}`"))
        }
        _ => runs(name),
    }
}

fn cargo(_: &str, args: &[&str], _: usize) -> (Risk, String) {
    let sub = sub(args);
    if args.iter().any(|a| *a == "--config" || a.starts_with("--config=") || a.starts_with("-Z")) {
        (Risk::Dangerous, "`cargo --config`/`-Z` can name a program cargo then runs".into())
    } else if matches!(sub, "install" | "uninstall" | "add" | "update" | "publish") {
        install(&format!("`cargo {sub}`"))
    } else {
        (Risk::Caution, format!("runs `cargo {sub}`"))
    }
}

fn rustup(name: &str, args: &[&str], _: usize) -> (Risk, String) {
    match sub(args) {
        "show" | "--version" | "-V" => runs(name),
        sub => install(&format!("`rustup {sub}` may download toolchains")),
    }
}

fn go(_: &str, args: &[&str], _: usize) -> (Risk, String) {
    let sub = sub(args);
    if matches!(sub, "install" | "get" | "generate") {
        let why = if sub == "generate" {
            "`go generate` runs commands written in source comments"
        } else {
            "`go install/get` downloads and builds code"
        };
        (Risk::Dangerous, why.into())
    } else if args.iter().any(|a| {
        let f = a.split('=').next().unwrap_or(a);
        matches!(f, "-exec" | "-toolexec" | "--exec" | "--toolexec")
    }) {
        (Risk::Dangerous, "`go -exec/-toolexec` runs another program".into())
    } else {
        (Risk::Caution, format!("runs `go {sub}`"))
    }
}

fn find(_: &str, args: &[&str], _: usize) -> (Risk, String) {
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(a));
    if has(&["-exec", "-execdir", "-ok", "-okdir"]) {
        (Risk::Dangerous, "`find -exec` runs commands".into())
    } else if has(&["-delete", "-fprint", "-fprintf", "-fls"]) {
        (Risk::Caution, "`find` deletes or writes files".into())
    } else {
        (Risk::Caution, "runs find".into())
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
