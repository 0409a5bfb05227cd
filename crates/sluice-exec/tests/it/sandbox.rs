//! The spawn layer: no shell (CI-01), a clean environment (ES-01), Landlock writes and network
//! (called directly: the policy would refuse `bash -c`, the spawn layer takes any program).

use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

use sluice_exec::spawn::spawn;
use sluice_exec::{Enforcement, JobLimits, JobState, Jobs, Network, TrustedPath, kill};

use crate::support::{Fixture, command, rt, wait_for};

#[test]
fn ci_01_metacharacters_are_literal_and_only_one_process_runs() {
    let fx = Fixture::new();
    let args = ["$(id)", ";id", "`id`", "|id", "\nid", "&calc", "%COMSPEC%", "!cmd", "a b", "*"];
    // `tail -F` keeps running while retrying the (nonexistent) files, so the tree can be seen.
    let mut argv = vec!["-F"];
    argv.extend(args);
    let spawned = spawn(
        &command("tail", &argv),
        &fx.sandbox(Network::Off),
        &TrustedPath::from_env(&[fx.root()]),
    )
    .expect("spawn");
    // In namespaces the tree is the engine's fork that waits, the namespace's init (both the
    // engine's program, never exec'd) and the program: exactly one process runs something.
    let me = std::env::current_exe().expect("exe");
    let cmdlines = wait_for("the process to exec", Duration::from_secs(5), || {
        let execd: Vec<Vec<String>> = kill::tree_pids(&spawned.tree)
            .into_iter()
            .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).ok().as_ref() != Some(&me))
            .filter_map(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
            .map(|raw| {
                raw.split(|b| *b == 0)
                    .filter(|p| !p.is_empty())
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .collect()
            })
            .collect();
        (execd.len() == 1 && execd[0].first().is_some_and(|p| p.ends_with("tail"))).then_some(execd)
    });
    assert_eq!(cmdlines[0][2..], args.map(String::from));
    let report = kill::kill_tree(&spawned.tree, Duration::from_millis(100));
    assert!(report.survivors.is_empty());
    let mut child = spawned.child;
    child.wait().expect("reap");

    // And through a job, echo prints every argument back exactly.
    let jobs = Jobs::new(JobLimits::default());
    let out = rt().block_on(jobs.run(fx.request("echo", &args))).expect("run");
    let want = args.join(" ");
    assert_eq!(out.stdout, format!("{want}\n"));
}

/// ES-01, outer half: re-runs this test binary with secrets in its environment.
#[test]
fn es_01_job_environment_has_no_parent_secrets() {
    if std::env::var_os("RT_CANARY").is_some() {
        return es_01_inner();
    }
    let exe = std::env::current_exe().expect("current exe");
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "sandbox::es_01_job_environment_has_no_parent_secrets",
            "--test-threads=1",
        ])
        .env("RT_CANARY", "canary-0451-value")
        .env("SLUICE_TOKEN", "slc_secretsecretsecretsecret")
        .env("AWS_SECRET_ACCESS_KEY", "aws-secret-0451")
        .env("GITHUB_TOKEN", "ghp-0451")
        .env("MY_API_KEY", "key-0451")
        .env("DB_PASSWORD", "pw-0451")
        .env("LD_PRELOAD", "/tmp/evil.so")
        .output()
        .expect("run inner harness");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("1 passed"), "{text}");
}

fn es_01_inner() {
    assert_eq!(std::env::var("RT_CANARY").as_deref(), Ok("canary-0451-value"));
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let out = rt().block_on(jobs.run(fx.request("env", &[]))).expect("run env");
    assert_eq!(out.state, JobState::Succeeded);
    for needle in [
        "RT_CANARY",
        "canary-0451",
        "SLUICE",
        "slc_",
        "AWS_",
        "aws-secret",
        "GITHUB_TOKEN",
        "MY_API_KEY",
        "DB_PASSWORD",
        "0451",
        "LD_PRELOAD",
    ] {
        assert!(!out.stdout.contains(needle), "{needle} leaked:\n{}", out.stdout);
    }
    let names: Vec<&str> = out.stdout.lines().filter_map(|l| l.split('=').next()).collect();
    for name in &names {
        let allowed = [
            "PATH",
            "TERM",
            "NO_COLOR",
            "CARGO_TERM_COLOR",
            "HOME",
            "TMPDIR",
            "TMP",
            "TEMP",
            "XDG_CACHE_HOME",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
            "CARGO_HOME",
            "CARGO_NET_OFFLINE",
            "npm_config_offline",
            "GOPATH",
            "LANG",
            "LANGUAGE",
            "RUSTUP_HOME",
            "RUSTUP_TOOLCHAIN",
        ];
        assert!(allowed.contains(name) || name.starts_with("LC_"), "unexpected variable {name}");
    }
    // The private folders show as placeholders, never as physical paths.
    assert!(out.stdout.contains("HOME=<job-private>/home"), "{}", out.stdout);
}

#[test]
fn landlock_confines_writes_to_the_project() {
    let fx = Fixture::new();
    let status = sluice_exec::landlock_status(true);
    assert_eq!(status.status, Enforcement::FullyEnforced, "{}", status.summary);
    let outside = fx.outside().join("owned");
    let jobs = Jobs::new(JobLimits::default());
    let script = format!(
        "echo in > inside.txt && echo ok-inside; echo x > '{}' || echo denied-outside; \
         echo t > \"$TMPDIR/t\" && echo ok-tmp; pwd",
        outside.display()
    );
    // Landlock alone (the second layer, and what runs where namespaces are not available).
    let mut req = fx.request("sh", &["-c", &script]);
    req.sandbox.namespaces = false;
    let out = rt().block_on(jobs.run(req)).expect("run");
    assert!(out.stdout.contains("ok-inside"), "{out:?}");
    assert!(out.stdout.contains("denied-outside"), "{out:?}");
    assert!(out.stdout.contains("ok-tmp"), "{out:?}");
    assert!(out.stderr.contains("Permission denied"), "EACCES expected: {out:?}");
    assert!(!outside.exists());
    // In namespaces the folder beside the project is not even there.
    std::fs::remove_file(fx.root().join("inside.txt")).expect("rm");
    let out = rt().block_on(jobs.run(fx.request("sh", &["-c", &script]))).expect("run");
    assert!(out.stdout.contains("ok-inside") && out.stdout.contains("ok-tmp"), "{out:?}");
    assert!(out.stdout.contains("denied-outside"), "{out:?}");
    assert!(!outside.exists());
    assert!(fx.root().join("inside.txt").exists());
    // The physical project root is rewritten to `.` in output.
    assert!(out.stdout.lines().any(|l| l == "."), "{out:?}");
}

#[test]
fn network_off_blocks_tcp_connect_and_allowed_does_not() {
    let fx = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let script = format!("echo hello > /dev/tcp/127.0.0.1/{port} && echo connected");
    let jobs = Jobs::new(JobLimits::default());

    // Landlock's TCP rules (without namespaces; with them, see `jail::sb_net_off_…`).
    let mut req = fx.request("bash", &["-c", &script]);
    req.sandbox.namespaces = false;
    let out = rt().block_on(jobs.run(req)).expect("run");
    assert!(!out.stdout.contains("connected"), "{out:?}");
    assert!(out.stderr.contains("Permission denied"), "{out:?}");

    for namespaces in [false, true] {
        let mut req = fx.request("bash", &["-c", &script]);
        req.sandbox.network = Network::Allowed;
        req.sandbox.namespaces = namespaces;
        let out = rt().block_on(jobs.run(req)).expect("run");
        assert!(out.stdout.contains("connected"), "{out:?}");
    }
    let (mut conn, _) = listener.accept().expect("accept");
    let mut got = String::new();
    conn.read_to_string(&mut got).expect("read");
    assert_eq!(got, "hello\n");
    let (mut conn, _) = listener.accept().expect("accept");
    let mut got = String::new();
    conn.read_to_string(&mut got).expect("read");
    assert_eq!(got, "hello\n");
}

#[test]
fn network_off_blocks_udp_too_and_keeps_unix_sockets() {
    let fx = Fixture::new();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    udp.set_read_timeout(Some(Duration::from_millis(500))).expect("timeout");
    let port = udp.local_addr().expect("addr").port();
    let script = format!("echo hello > /dev/udp/127.0.0.1/{port} && echo sent");
    let jobs = Jobs::new(JobLimits::default());

    // The seccomp filter (without namespaces; with them, see `jail::sb_net_off_…`).
    let fallback = |program: &str, args: &[&str]| {
        let mut req = fx.request(program, args);
        req.sandbox.namespaces = false;
        req
    };
    let out = rt().block_on(jobs.run(fallback("bash", &["-c", &script]))).expect("run");
    assert!(!out.stdout.contains("sent"), "{out:?}");
    assert!(out.stderr.contains("Permission denied"), "{out:?}");
    let mut buf = [0u8; 64];
    assert!(udp.recv_from(&mut buf).is_err(), "no datagram arrives");

    // IPv6 too; and a Unix socket (local IPC, not the network) is still allowed.
    let python = "import socket\n\
        for family in (socket.AF_INET6, socket.AF_INET):\n\
        \ttry:\n\t\tsocket.socket(family, socket.SOCK_DGRAM)\n\t\tprint('ip open')\n\
        \texcept PermissionError:\n\t\tprint('ip refused')\n\
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()\nprint('unix ok')\n";
    let out = rt().block_on(jobs.run(fallback("python3", &["-c", python]))).expect("run");
    assert_eq!(out.stdout, "ip refused\nip refused\nunix ok\n", "{out:?}");

    let mut req = fx.request("bash", &["-c", &script]);
    req.sandbox.network = Network::Allowed;
    let out = rt().block_on(jobs.run(req)).expect("run");
    assert!(out.stdout.contains("sent"), "{out:?}");
    let (n, _) = udp.recv_from(&mut buf).expect("the datagram arrives");
    assert_eq!(&buf[..n], b"hello\n");
}

#[test]
fn a_job_cannot_read_or_write_the_hidden_data_folder() {
    let fx = Fixture::new();
    let data = fx.dir.path().canonicalize().expect("canonical").join("data");
    std::fs::create_dir_all(data.join("backups")).expect("mkdir");
    std::fs::write(data.join("sluice.db"), "DATABASE-CANARY").expect("write");
    std::fs::write(data.join("backups/old.bak"), "BACKUP-CANARY").expect("write");
    std::fs::write(fx.outside().join("note.txt"), "OUTSIDE-READABLE").expect("write");
    let mut req = fx.request(
        "sh",
        &[
            "-c",
            "cat \"$1/sluice.db\" || echo denied-db; cat \"$1/backups/old.bak\" || echo denied-bak; \
             echo x > \"$1/planted\" || echo denied-write; \
             head -c 4 /usr/bin/env > /dev/null && echo usr-ok; cat \"$2/note.txt\"; echo; \
             echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo tmp-ok; \
             for f in /proc/$PPID/fd/*; do l=$(readlink \"$f\") || { echo fd-denied; break; }; \
             case \"$l\" in *sluice.db) cat \"$f\" > /dev/null && echo fd-read || echo fd-denied;; \
             esac; done",
            "sh",
            data.to_str().expect("utf-8"),
            fx.outside().to_str().expect("utf-8"),
        ],
    );
    // As the engine does it: the job's private folders live inside the hidden data folder.
    req.sandbox.state_dir = data.join("projects/p/exec");
    req.sandbox.hidden = vec![data.clone()];
    // The engine keeps its database open: the job must not reach it through /proc either.
    let held = std::fs::File::open(data.join("sluice.db")).expect("open");
    // In namespaces: none of it is there, the folder beside the project included.
    let out = rt().block_on(Jobs::new(JobLimits::default()).run(req.clone())).expect("run");
    assert!(!out.stdout.contains("CANARY") && !out.stdout.contains("fd-read"), "{out:?}");
    for want in ["denied-db", "denied-bak", "usr-ok", "tmp-ok"] {
        assert!(out.stdout.contains(want), "{want} missing: {out:?}");
    }
    assert!(!out.stdout.contains("OUTSIDE-READABLE"), "{out:?}");
    assert!(!data.join("planted").exists());
    // Landlock alone: everything else stays readable.
    req.sandbox.namespaces = false;
    let out = rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect("run");
    drop(held);
    assert!(!out.stdout.contains("CANARY") && !out.stdout.contains("fd-read"), "{out:?}");
    // Nor through the engine's open files in /proc: Landlock denies ptrace-mode access to
    // processes outside the job's domain.
    for want in [
        "denied-db",
        "denied-bak",
        "denied-write",
        "usr-ok",
        "OUTSIDE-READABLE",
        "tmp-ok",
        "fd-denied",
    ] {
        assert!(out.stdout.contains(want), "{want} missing: {out:?}");
    }
    assert!(out.stderr.contains("Permission denied"), "EACCES expected: {out:?}");
    assert!(!data.join("planted").exists());
}

// Unix: the roots are Unix folders (`/usr`), and the fixture is a symlink.
#[cfg(unix)]
#[test]
fn read_roots_leave_out_exactly_the_hidden_folder_and_symlinks_beside_the_path() {
    let fx = Fixture::new();
    let base = fx.dir.path().canonicalize().expect("canonical");
    let data = base.join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    std::os::unix::fs::symlink(&data, base.join("link-to-data")).expect("symlink");
    let roots = sluice_exec::confine::read_roots(std::slice::from_ref(&data));
    assert!(!roots.iter().any(|r| r.starts_with(&data) || data.starts_with(r)), "{roots:?}");
    assert!(!roots.contains(&base.join("link-to-data")), "{roots:?}");
    for sibling in ["project", "state", "outside"] {
        assert!(roots.contains(&base.join(sibling)), "{sibling}: {roots:?}");
    }
    assert!(roots.contains(&std::path::PathBuf::from("/usr")), "{roots:?}");
    assert_eq!(sluice_exec::confine::read_roots(&[]), vec![std::path::PathBuf::from("/")]);
}

/// A program the job's sandbox cannot run — here a script whose interpreter lies in a folder the
/// job's view leaves out, as a version manager's shim outside the sandbox does — is `not_found`
/// with the reason, naming the program's file name only: never an internal error, never a
/// physical path. Linux: the job's own view of the machine decides what it can see.
#[cfg(target_os = "linux")]
#[test]
fn a_program_whose_interpreter_the_job_cannot_see_is_not_found_by_file_name_only() {
    use sluice_core::{Coded, ErrorCode};
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let hidden = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink("/bin/sh", hidden.path().join("interp")).expect("symlink");
    let tool = fx.outside().join("hidden-tool");
    let script = format!("#!{}\necho ran\n", hidden.path().join("interp").display());
    std::fs::write(&tool, script).expect("write");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut req = fx.request("true", &[]);
    req.command.program = tool;
    let err = rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect_err("it ran");
    let message = err.to_string();
    assert_eq!(err.code(), ErrorCode::NotFound, "{err:?}");
    assert!(message.contains("`hidden-tool` could not be started"), "{message}");
    assert!(!message.contains(&*hidden.path().to_string_lossy()), "{message}");
    assert!(!message.contains(&*fx.outside().to_string_lossy()), "{message}");
}

/// An npm program on the trusted PATH runs in the jail: its `node_modules/.bin` link leads into
/// the package beside it, and that package (with the files it loads) comes into view with the
/// folder, read-only; the folders around it do not.
#[cfg(target_os = "linux")]
#[test]
fn an_npm_program_on_the_path_sees_its_package_and_nothing_beside_it() {
    let fx = Fixture::new();
    let tools = fx.outside().join("tools");
    let modules = tools.join("node_modules");
    std::fs::create_dir_all(modules.join(".bin")).expect("mkdir");
    std::fs::create_dir_all(modules.join("pkg")).expect("mkdir");
    std::fs::write(tools.join("beside"), "BESIDE-CANARY").expect("write");
    std::fs::write(modules.join("pkg/lib.txt"), "from the package").expect("write");
    let cli = modules.join("pkg/cli.sh");
    std::fs::write(&cli, "#!/bin/sh\nd=$(dirname \"$(readlink -f \"$0\")\")\ncat \"$d/lib.txt\"; echo; cat \"$d/../../beside\" 2>&1; touch \"$d/written\" 2>&1; echo end\n").expect("write");
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    std::os::unix::fs::symlink("../pkg/cli.sh", modules.join(".bin/pkg-cli")).expect("link");
    let joined = std::env::join_paths([modules.join(".bin"), "/usr/bin".into(), "/bin".into()])
        .expect("join");
    let path = TrustedPath::new(&joined, &[fx.root()]);
    let mut req = fx.request("sh", &[]);
    req.command = sluice_exec::ResolvedCommand {
        program: path.resolve("pkg-cli").expect("resolve"),
        ..req.command
    };
    req.path = path;
    let out = rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect("run");
    assert!(out.stdout.contains("from the package"), "{out:?}");
    assert!(out.stdout.contains("end") && !out.stdout.contains("BESIDE-CANARY"), "{out:?}");
    assert!(!modules.join("pkg/written").exists(), "the package is read-only: {out:?}");
}
