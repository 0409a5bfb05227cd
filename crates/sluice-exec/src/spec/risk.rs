//! The risk table: how much harm any argv can do, seeing through wrappers (`env`, `timeout`,
//! `nice`, …) to the program they run.

use super::{MAX_WRAPPER_DEPTH, Risk, is_python, program_name, short_cluster_has};

/// The general risk of any argv, seeing through wrappers.
pub(super) fn risk_of(name: &str, args: &[&str], depth: usize) -> (Risk, String) {
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
