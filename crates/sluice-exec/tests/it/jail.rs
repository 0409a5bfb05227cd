//! The namespace sandbox, attacked from inside a job: credential stores, host sockets, the
//! engine's process, capabilities, inherited descriptors, leftovers, the network — and the
//! ordinary things a test suite needs, which must keep working.

use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use sluice_exec::{JobLimits, Jobs, Network, RunOutput};

use crate::support::{Fixture, rt, survivors};

fn run(fx: &Fixture, program: &str, args: &[&str]) -> RunOutput {
    run_with(fx, program, args, |_| {})
}

fn run_with(
    fx: &Fixture,
    program: &str,
    args: &[&str],
    edit: impl FnOnce(&mut sluice_exec::JobRequest),
) -> RunOutput {
    let mut req = fx.request(program, args);
    edit(&mut req);
    rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect("run")
}

#[test]
fn namespaces_are_available_here() {
    let status = sluice_exec::jail_status();
    assert!(status.available, "{}", status.summary);
}

/// The credential stores a user's home holds, with a canary in each; run with HOME pointing at
/// a fake home (the outer half re-runs this test binary so the engine's HOME is the fake one).
const STORES: &[&str] = &[
    ".ssh/id_rsa",
    ".aws/credentials",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".kube/config",
    ".gnupg/private-keys-v1.d/key.key",
    ".local/share/keyrings/login.keyring",
    ".mozilla/firefox/p/logins.json",
    ".config/google-chrome/Default/Cookies",
    ".Xauthority",
    ".pypirc",
    ".cargo/credentials.toml",
    ".gradle/gradle.properties",
    ".m2/settings.xml",
    ".config/sluice/sluice.db",
];

#[test]
fn sb_credentials_every_default_store_is_unreadable_from_a_job() {
    if let Some(home) = std::env::var_os("SLUICE_FAKE_HOME") {
        return credentials_inner(Path::new(&home));
    }
    let home = tempfile::tempdir().expect("tempdir");
    for store in STORES {
        let p = home.path().join(store);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, format!("CANARY-{store}")).expect("write");
    }
    // Toolchain folders beside the stores: exposed, so what sits beside them must not leak.
    std::fs::create_dir_all(home.path().join(".cargo/bin")).expect("mkdir");
    std::fs::write(home.path().join(".cargo/bin/tool"), "TOOL-VISIBLE").expect("write");
    std::fs::create_dir_all(home.path().join(".m2/repository")).expect("mkdir");
    std::fs::create_dir_all(home.path().join(".gradle/caches")).expect("mkdir");
    rerun_with_home(
        "jail::sb_credentials_every_default_store_is_unreadable_from_a_job",
        home.path(),
    );
}

/// Runs this binary's test `name` again, alone, with `home` as the engine's HOME and no
/// CARGO_HOME (so the cargo home is the one in `home`): the engine reads where the home and its
/// toolchains are from its own environment. The test's inner half finds `SLUICE_FAKE_HOME`.
fn rerun_with_home(name: &str, home: &Path) {
    let exe = std::env::current_exe().expect("current exe");
    let out = std::process::Command::new(exe)
        .args(["--exact", name, "--test-threads=1"])
        .env("SLUICE_FAKE_HOME", home)
        .env("HOME", home)
        .env_remove("CARGO_HOME")
        .output()
        .expect("run inner harness");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("1 passed"), "{text}");
}

fn credentials_inner(home: &Path) {
    let fx = Fixture::new();
    let mut script = String::new();
    for store in STORES {
        let p = home.join(store);
        // Unreadable, or read as empty (a store inside an exposed folder is covered).
        script.push_str(&format!(
            "c=$(cat '{}' 2>/dev/null); [ -z \"$c\" ] && echo 'hidden {store}'; ",
            p.display()
        ));
    }
    // The job's cargo home is the user's, copy-on-write: its token file is covered there too.
    script.push_str(
        "c=$(cat \"$CARGO_HOME/credentials.toml\" 2>/dev/null); [ -z \"$c\" ] && echo 'hidden \
         cargo-copy'; ",
    );
    // A whole listing of the home, and a search through it.
    script.push_str(&format!(
        "ls -a '{h}' '{h}/.ssh' 2>&1; grep -r CANARY '{h}' 2>/dev/null; \
         cat '{h}/.cargo/bin/tool'; echo",
        h = home.display()
    ));
    // Both network settings: the view must not depend on it; and Landlock alone (no
    // namespaces) hides the same stores.
    for (network, namespaces) in
        [(Network::Off, true), (Network::Allowed, true), (Network::Allowed, false)]
    {
        let out = run_with(&fx, "sh", &["-c", &script], |r| {
            r.sandbox.network = network.clone();
            r.sandbox.namespaces = namespaces;
        });
        assert!(!out.stdout.contains("CANARY"), "{network:?}: {out:?}");
        for store in STORES.iter().chain(&["cargo-copy"]) {
            assert!(out.stdout.contains(&format!("hidden {store}")), "{store}: {out:?}");
        }
        assert!(out.stdout.contains("TOOL-VISIBLE"), "toolchains stay: {out:?}");
    }
}

/// Toolchain folders reached through links, as when `~/.cargo` and `~/.m2` live on another
/// disk: jobs still start and see the tools, and the credential stores inside the linked folders
/// stay unreadable — through the home's path, the link's target and the cargo home's copy.
#[test]
fn sb_credentials_stay_hidden_in_toolchain_folders_reached_through_links() {
    if let Some(home) = std::env::var_os("SLUICE_FAKE_HOME") {
        return linked_inner(Path::new(&home));
    }
    let top = tempfile::tempdir().expect("tempdir");
    let (home, disk) = (top.path().join("home"), top.path().join("disk"));
    for (dir, store) in [(".cargo", "credentials.toml"), (".m2", "settings.xml")] {
        let real = disk.join(dir.trim_start_matches('.'));
        std::fs::create_dir_all(real.join("bin")).expect("mkdir");
        std::fs::write(real.join(store), format!("CANARY-{dir}")).expect("write");
        std::fs::write(real.join("bin/tool"), "TOOL-VISIBLE").expect("write");
        std::fs::create_dir_all(&home).expect("mkdir");
        std::os::unix::fs::symlink(&real, home.join(dir)).expect("link");
    }
    rerun_with_home(
        "jail::sb_credentials_stay_hidden_in_toolchain_folders_reached_through_links",
        &home,
    );
}

fn linked_inner(home: &Path) {
    let fx = Fixture::new();
    let disk = home.with_file_name("disk");
    let script = format!(
        "cat '{h}/.cargo/credentials.toml' '{d}/cargo/credentials.toml' \
           \"$CARGO_HOME/credentials.toml\" '{h}/.m2/settings.xml' '{d}/m2/settings.xml' \
           2>/dev/null; grep -r CANARY '{h}/' '{d}' 2>/dev/null; \
         cat '{h}/.cargo/bin/tool' || cat \"$CARGO_HOME/bin/tool\"; echo; echo ran",
        h = home.display(),
        d = disk.display()
    );
    for namespaces in [true, false] {
        let out = run_with(&fx, "sh", &["-c", &script], |r| r.sandbox.namespaces = namespaces);
        assert!(out.stdout.contains("ran"), "the job starts (namespaces {namespaces}): {out:?}");
        assert!(!out.stdout.contains("CANARY"), "namespaces {namespaces}: {out:?}");
        assert!(out.stdout.contains("TOOL-VISIBLE"), "toolchains stay: {out:?}");
    }
}

/// Stand-ins for the host's sockets, in a folder beside the project and in the host's /tmp:
/// a job connects to none of them, while a socket in its own temp folder works.
#[test]
fn sb_ipc_no_unix_socket_outside_the_project_and_the_jobs_temp() {
    let fx = Fixture::new();
    let host_tmp = tempfile::Builder::new().prefix("sluice-host-ipc").tempdir().expect("tmp");
    let mut listeners = Vec::new();
    let mut paths = Vec::new();
    for (dir, name) in [
        (fx.outside(), "bus"),
        (fx.outside(), "docker.sock"),
        (fx.outside(), "ssh-agent.sock"),
        (fx.outside(), "systemd-private"),
        (host_tmp.path().to_path_buf(), "X0"),
    ] {
        let p = dir.join(name);
        let l = UnixListener::bind(&p).expect("bind");
        l.set_nonblocking(true).expect("nonblocking");
        listeners.push(l);
        paths.push(p);
    }
    let abstract_name = format!("sluice-test-{}", std::process::id());
    let abstract_listener = abstract_listener(&abstract_name);
    let mut python = String::from("import socket, os\n");
    for p in &paths {
        python.push_str(&format!(
            "s = socket.socket(socket.AF_UNIX)\n\
             try:\n    s.connect({p:?})\n    print('CONNECTED', {p:?})\n\
             except OSError as e:\n    print('refused', e.errno)\n",
            p = p.display().to_string()
        ));
    }
    python.push_str(&format!(
        "s = socket.socket(socket.AF_UNIX)\n\
         try:\n    s.connect('\\0{abstract_name}')\n    print('CONNECTED abstract')\n\
         except OSError as e:\n    print('refused', e.errno)\n\
         own = os.path.join(os.environ['TMPDIR'], 'own.sock')\n\
         os.path.exists(own) and os.unlink(own)\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind(own); srv.listen(1)\n\
         c = socket.socket(socket.AF_UNIX); c.connect(own); print('own ok')\n\
         proj = 'p.sock'\n\
         srv2 = socket.socket(socket.AF_UNIX); srv2.bind(proj); srv2.listen(1)\n\
         c2 = socket.socket(socket.AF_UNIX); c2.connect(proj); print('project ok')\n"
    ));
    for network in [Network::Off, Network::Allowed] {
        let out =
            run_with(&fx, "python3", &["-c", &python], |r| r.sandbox.network = network.clone());
        assert!(!out.stdout.contains("CONNECTED"), "{network:?}: {out:?}");
        assert_eq!(out.stdout.matches("refused").count(), paths.len() + 1, "{out:?}");
        assert!(out.stdout.contains("own ok") && out.stdout.contains("project ok"), "{out:?}");
        let _ = std::fs::remove_file(fx.root().join("p.sock"));
        for l in &listeners {
            assert!(l.accept().is_err(), "{network:?}: a host socket was reached");
        }
        assert!(
            abstract_listener.accept().is_err(),
            "{network:?}: the abstract socket was reached"
        );
    }
}

fn abstract_listener(name: &str) -> UnixListener {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name).expect("addr");
    let l = UnixListener::bind_addr(&addr).expect("bind abstract");
    l.set_nonblocking(true).expect("nonblocking");
    l
}

/// The engine's process is out of sight: its `/proc` entries (environment, open files), its
/// signals; a job sees only its own processes.
#[test]
fn sb_proc_the_engine_is_invisible_and_unsignalable() {
    let fx = Fixture::new();
    let me = std::process::id();
    let script = format!(
        "cat /proc/{me}/environ 2>/dev/null && echo READ-ENVIRON; \
         ls /proc/{me}/fd 2>/dev/null && echo LISTED-FD; \
         kill -0 {me} 2>/dev/null && echo SIGNALLED; kill -0 1 && echo init-is-ours; \
         ls /proc | grep -c '^[0-9]'"
    );
    let out = run(&fx, "sh", &["-c", &script]);
    for bad in ["READ-ENVIRON", "LISTED-FD", "SIGNALLED"] {
        assert!(!out.stdout.contains(bad), "{bad}: {out:?}");
    }
    assert!(out.stdout.contains("init-is-ours"), "{out:?}");
    // init, sh, ls, grep (and maybe a subshell): nothing of the host.
    let count: u32 =
        out.stdout.lines().last().and_then(|l| l.trim().parse().ok()).expect("a count");
    assert!(count <= 6, "{count} processes visible: {out:?}");
}

/// No capability in any set, also when the engine runs as root (as here).
#[test]
fn sb_caps_jobs_run_without_capabilities() {
    let fx = Fixture::new();
    let out = run(&fx, "grep", &["^Cap\\(Inh\\|Prm\\|Eff\\|Bnd\\|Amb\\)", "/proc/self/status"]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{out:?}");
    for line in lines {
        assert!(line.ends_with("0000000000000000"), "{line}: {out:?}");
    }
    // Mounting (what a capability in its namespace would allow) fails: the view is fixed.
    let out = run(
        &fx,
        "sh",
        &["-c", "umount /etc 2>&1 || echo refused; mount -t tmpfs x /tmp 2>&1 || echo refused"],
    );
    assert_eq!(out.stdout.matches("refused").count(), 2, "{out:?}");
}

/// A descriptor the engine inherited without close-on-exec never reaches a job.
#[test]
fn sb_fds_a_job_inherits_only_stdio() {
    let fx = Fixture::new();
    let target = fx.outside().join("through-fd");
    let path = std::ffi::CString::new(target.to_str().expect("utf-8")).expect("cstr");
    // SAFETY: open(2) without O_CLOEXEC on purpose, as a launching program might leave one.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CREAT, 0o600) };
    assert!(fd > 2);
    let script = format!("echo planted >&{fd} && echo WROTE; ls /proc/self/fd");
    let out = run(&fx, "sh", &["-c", &script]);
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    assert!(!out.stdout.contains("WROTE"), "{out:?}");
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "");
    // stdin, stdout, stderr and the folder ls itself opened.
    let fds: Vec<&str> = out.stdout.lines().collect();
    assert!(fds.len() <= 4, "{out:?}");
}

/// When the command ends, what it started ends: a double-forked `setsid` daemon included.
#[test]
fn sb_tree_a_daemon_dies_with_its_command() {
    let fx = Fixture::new();
    let marker = crate::support::marker();
    let script = format!("(setsid sleep 300 {marker} &) ; (sleep 301 {marker} &) ; echo started");
    let out = run(&fx, "sh", &["-c", &script]);
    assert!(out.stdout.contains("started"), "{out:?}");
    let left = crate::support::wait_for("the namespace to end", Duration::from_secs(5), || {
        let s = survivors(&marker);
        s.is_empty().then_some(s)
    });
    assert!(left.is_empty());
}

/// Network off: nothing reaches the host (TCP, UDP), and loopback inside the job still works.
#[test]
fn sb_net_off_reaches_nothing_and_keeps_its_own_loopback() {
    let fx = Fixture::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    tcp.set_nonblocking(true).expect("nonblocking");
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    udp.set_read_timeout(Some(Duration::from_millis(300))).expect("timeout");
    let python = format!(
        "import socket, threading\n\
         try:\n    socket.create_connection(('127.0.0.1', {tcp}), timeout=2); print('HOST-TCP')\n\
         except OSError as e: print('tcp refused')\n\
         u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b'x', ('127.0.0.1', {udp}))\n\
         try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2); print('INTERNET')\n\
         except OSError as e: print('internet refused')\n\
         srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n\
         port = srv.getsockname()[1]\n\
         c = socket.create_connection(('127.0.0.1', port)); a, _ = srv.accept()\n\
         c.sendall(b'ping'); print('loopback', a.recv(4).decode())\n",
        tcp = tcp.local_addr().expect("addr").port(),
        udp = udp.local_addr().expect("addr").port(),
    );
    let out = run(&fx, "python3", &["-c", &python]);
    assert!(!out.stdout.contains("HOST-TCP") && !out.stdout.contains("INTERNET"), "{out:?}");
    assert!(
        out.stdout.contains("tcp refused") && out.stdout.contains("internet refused"),
        "{out:?}"
    );
    assert!(out.stdout.contains("loopback ping"), "{out:?}");
    assert!(tcp.accept().is_err(), "the host's listener was reached");
    let mut buf = [0u8; 8];
    assert!(udp.recv_from(&mut buf).is_err(), "a datagram reached the host");
}

/// What test suites need: `multiprocessing` (semaphores in /dev/shm), a Unix socket in the
/// job's temp, git, make, node's worker threads.
#[test]
fn sb_works_multiprocessing_git_make_and_worker_threads() {
    let fx = Fixture::new();
    let python = "import multiprocessing as mp, socket, tempfile, os\n\
        def sq(x): return x * x\n\
        if __name__ == '__main__':\n\
        \twith mp.Pool(2) as p: print('pool', sum(p.map(sq, range(10))))\n\
        \tq = mp.Queue(); q.put(7); print('queue', q.get())\n\
        \td = tempfile.mkdtemp(); s = socket.socket(socket.AF_UNIX); s.bind(os.path.join(d, 's')); print('unix ok')\n";
    std::fs::write(fx.root().join("t.py"), python).expect("write");
    let out = run(&fx, "python3", &["t.py"]);
    assert!(out.stdout.contains("pool 285") && out.stdout.contains("queue 7"), "{out:?}");
    assert!(out.stdout.contains("unix ok"), "{out:?}");

    let git = "git init -q . && git -c user.name=t -c user.email=t@t add -A && \
        git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline | wc -l";
    let out = run(&fx, "sh", &["-c", git]);
    assert_eq!(out.stdout.trim(), "1", "{out:?}");

    std::fs::write(fx.root().join("Makefile"), "all:\n\t@echo made > made.txt\n").expect("write");
    let out = run(&fx, "make", &[]);
    assert!(fx.root().join("made.txt").exists(), "{out:?}");

    if which("node") {
        let js = "const { Worker } = require('worker_threads');\n\
            new Worker('require(\"worker_threads\").parentPort.postMessage(6*7)', { eval: true })\n\
            .on('message', (m) => console.log('worker', m));\n";
        let out = run(&fx, "node", &["-e", js]);
        assert!(out.stdout.contains("worker 42"), "{out:?}");
    }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// A job that replaces its private temp folder with a link to a secret cannot make the next
/// job mount that secret as its /tmp.
#[test]
fn sb_mounts_a_planted_link_does_not_redirect_the_next_job() {
    let fx = Fixture::new();
    std::fs::write(fx.outside().join("secret"), "OUTSIDE-SECRET").expect("write");
    let state = fx.dir.path().join("state");
    // First job: the folders exist; a link replaces `tmp`.
    let out = run(&fx, "true", &[]);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    std::fs::remove_dir_all(state.join("tmp")).expect("rm");
    std::os::unix::fs::symlink(fx.outside(), state.join("tmp")).expect("plant");
    let out = run(&fx, "sh", &["-c", "cat /tmp/secret; ls /tmp; echo done"]);
    assert!(!out.stdout.contains("OUTSIDE-SECRET"), "{out:?}");
    assert!(out.stdout.contains("done"), "the engine repairs the folder: {out:?}");
    assert!(state.join("tmp").is_dir() && !state.join("tmp").is_symlink());
}

/// Without namespaces (a kernel or container without user namespaces), Landlock alone still
/// hides the credential stores and the data folder, and seccomp keeps IP sockets closed. Each
/// probe would succeed without its guard: the engine (root here) reads /etc/shadow, and the
/// same connect to a listener on the host's loopback goes through once the network is allowed.
#[test]
fn sb_fallback_landlock_alone_still_hides_and_blocks() {
    let fx = Fixture::new();
    let host = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    host.set_nonblocking(true).expect("nonblocking");
    let probe = format!(
        "import socket\n\
         try:\n    open('/etc/shadow').read(); print('SHADOW')\n\
         except OSError as e: print('shadow refused', e.errno)\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'hi'); \
         print('HOST-TCP')\n\
         except OSError as e: print('no-net', e.errno)\n",
        port = host.local_addr().expect("addr").port(),
    );
    let fallback = |network| {
        run_with(&fx, "python3", &["-c", &probe], |r| {
            r.sandbox.namespaces = false;
            r.sandbox.network = network;
        })
    };
    let out = fallback(Network::Off);
    assert!(out.stdout.contains("shadow refused") && !out.stdout.contains("SHADOW"), "{out:?}");
    assert!(out.stdout.contains("no-net") && !out.stdout.contains("HOST-TCP"), "{out:?}");
    assert!(host.accept().is_err(), "the host's listener was reached");
    // The probes can succeed: the shadow file is readable to the engine, and the connect,
    // network allowed, reaches the listener.
    assert!(
        std::fs::read("/etc/shadow").is_ok(),
        "/etc/shadow must be readable to the engine (the suite runs as root), or the shadow \
         probe above proves nothing"
    );
    let out = fallback(Network::Allowed);
    assert!(out.stdout.contains("HOST-TCP"), "the probe cannot connect at all: {out:?}");
    host.set_nonblocking(false).expect("blocking");
    let (mut conn, _) = host.accept().expect("the allowed probe reached the listener");
    let mut got = String::new();
    std::io::Read::read_to_string(&mut conn, &mut got).expect("read");
    assert_eq!(got, "hi");
}

/// `cargo build` and `cargo test` of a workspace with a build script and a crate from the
/// registry, network off: the user's toolchain and the crates it already holds are used as
/// they are, nothing is fetched.
#[test]
fn sb_works_cargo_workspace_with_a_build_script_offline() {
    if !which("cargo") {
        return;
    }
    let fx = Fixture::new();
    let root = fx.root();
    let write = |p: &str, text: &str| {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("Cargo.toml", "[workspace]\nmembers = [\"gen\", \"app\"]\nresolver = \"2\"\n");
    write(
        "gen/Cargo.toml",
        "[package]\nname = \"gen\"\nversion = \"0.1.0\"\nedition = \"2021\"\nbuild = \"build.rs\"\n",
    );
    write(
        "gen/build.rs",
        "fn main() {\n    let out = std::env::var(\"OUT_DIR\").unwrap();\n    \
         std::fs::write(format!(\"{out}/answer.rs\"), \"pub const ANSWER: u32 = 42;\").unwrap();\n}\n",
    );
    write("gen/src/lib.rs", "include!(concat!(env!(\"OUT_DIR\"), \"/answer.rs\"));\n");
    write(
        "app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n\
         gen = { path = \"../gen\" }\nlibc = \"0.2\"\n",
    );
    write(
        "app/src/main.rs",
        "fn main() { println!(\"answer {} pid {}\", gen::ANSWER, unsafe { libc::getpid() }); }\n\
         #[test]\nfn answers() { assert_eq!(gen::ANSWER, 42); }\n",
    );
    let cargo = |args: &[&str]| {
        let mut req = fx.request("cargo", args);
        req.command.timeout = Some(Duration::from_secs(600));
        rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect("run")
    };
    let out = cargo(&["build", "--quiet"]);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let out = cargo(&["test", "--quiet"]);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(out.stdout.contains("1 passed"), "{out:?}");
    let out = cargo(&["run", "--quiet", "-p", "app"]);
    assert!(out.stdout.contains("answer 42"), "{out:?}");
}

/// The `registries` network and a crate the user's cargo home lacks: cargo downloads it into the
/// job's copy of the cargo home and builds; the user's cargo home is unchanged, and the next job
/// starts from the user's again (what a job downloads goes with it).
#[test]
fn sb_works_cargo_fetches_a_new_crate_through_the_registries_into_its_own_copy() {
    if !which("cargo") {
        return;
    }
    let fx = Fixture::new();
    let root = fx.root();
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"fetch\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nitoa = \"=1.0.11\"\n\n[workspace]\n",
    )
    .expect("write");
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() { println!(\"{}\", itoa::Buffer::new().format(42)); }\n",
    )
    .expect("write");
    let user_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("a cargo home");
    let cached = || {
        std::fs::read_dir(user_home.join("registry/cache"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .any(|index| index.path().join("itoa-1.0.11.crate").exists())
    };
    assert!(!cached(), "the user's cargo home already holds itoa 1.0.11: pick another version");
    let cargo = |args: &[&str]| {
        let mut req = fx.request("cargo", args);
        req.command.timeout = Some(Duration::from_secs(600));
        req.sandbox.network =
            Network::Registries(std::sync::Arc::new(sluice_exec::HostList::registries()));
        rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect("run")
    };
    let out = cargo(&["run", "--quiet"]);
    assert_eq!((out.exit_code, out.stdout.trim()), (Some(0), "42"), "{out:?}");
    assert!(!cached(), "the download landed in the user's cargo home");
    let out = run_with(&fx, "sh", &["-c", "ls \"$CARGO_HOME\"/registry/cache/*/"], |r| {
        r.sandbox.network = Network::Off;
    });
    assert!(!out.stdout.contains("itoa-1.0.11"), "a job's download outlived it: {out:?}");
    assert!(out.stdout.contains(".crate"), "the user's crates are there: {out:?}");
}

/// A PATH that names the home (or `/`) does not bring the home into view: only real
/// toolchain folders are exposed.
#[test]
fn sb_path_naming_the_home_or_root_exposes_nothing_more() {
    let fx = Fixture::new();
    let home = std::env::var("HOME").expect("HOME");
    let secret_dir = tempfile::tempdir_in(&home).expect("tempdir in home");
    std::fs::write(secret_dir.path().join("note"), "HOME-CANARY").expect("write");
    let mut req = fx
        .request("sh", &["-c", &format!("cat '{}/note'; echo done", secret_dir.path().display())]);
    let joined = std::env::join_paths([
        std::path::PathBuf::from(&home),
        std::path::PathBuf::from("/"),
        std::path::PathBuf::from("/usr/bin"),
    ])
    .expect("join");
    req.path = sluice_exec::TrustedPath::new(&joined, &[fx.root()]);
    let out = rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect("run");
    assert!(out.stdout.contains("done") && !out.stdout.contains("HOME-CANARY"), "{out:?}");
}

/// The `registries` network from inside a job: a listed registry answers through the proxy;
/// an unlisted host, an IP literal, loopback, another port, plain HTTP and a direct connection
/// that ignores the proxy all fail; loopback inside the job stays direct. Reaches pypi.org
/// (the one outside host this machine reaches: a package registry).
#[test]
fn sb_net_registries_reach_only_listed_hosts_through_the_proxy() {
    let fx = Fixture::new();
    let host = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    host.set_nonblocking(true).expect("nonblocking");
    let python = format!(
        "import os, socket, urllib.request\n\
         def get(url):\n\
         \x20   try:\n\
         \x20       return urllib.request.urlopen(url, timeout=20).status\n\
         \x20   except Exception as e:\n\
         \x20       return 'refused: ' + str(e)\n\
         print('listed', get('https://pypi.org/simple/six/'))\n\
         print('unlisted', get('https://registry.npmjs.org/'))\n\
         def ask(request):\n\
         \x20   s = socket.create_connection(('127.0.0.1', {proxy}), timeout=20)\n\
         \x20   s.sendall(request.encode())\n\
         \x20   got = b''\n\
         \x20   while b'\\r\\n' not in got:\n\
         \x20       more = s.recv(200)\n\
         \x20       if not more: break\n\
         \x20       got += more\n\
         \x20   return got.decode().split('\\r\\n')[0]\n\
         print('loopback-ip', ask('CONNECT 127.0.0.1:{host} HTTP/1.1\\r\\n\\r\\n'))\n\
         print('localhost', ask('CONNECT localhost:443 HTTP/1.1\\r\\n\\r\\n'))\n\
         print('port', ask('CONNECT pypi.org:22 HTTP/1.1\\r\\n\\r\\n'))\n\
         print('plain', ask('GET http://pypi.org/ HTTP/1.1\\r\\nHost: pypi.org\\r\\n\\r\\n'))\n\
         print('metadata', ask('CONNECT 169.254.169.254:443 HTTP/1.1\\r\\n\\r\\n'))\n\
         try:\n\
         \x20   socket.create_connection(('151.101.0.223', 443), timeout=3); print('DIRECT')\n\
         except OSError as e: print('direct refused')\n\
         try:\n\
         \x20   socket.create_connection(('127.0.0.1', {host}), timeout=3); print('HOST-TCP')\n\
         except OSError as e: print('host refused')\n\
         srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n\
         c = socket.create_connection(('127.0.0.1', srv.getsockname()[1])); a, _ = srv.accept()\n\
         c.sendall(b'ping'); print('loopback', a.recv(4).decode())\n\
         print('proxy env', os.environ.get('HTTPS_PROXY'), os.environ.get('NO_PROXY'))\n",
        proxy = sluice_exec::egress::PROXY_PORT,
        host = host.local_addr().expect("addr").port(),
    );
    let hosts = sluice_exec::HostList::parse(&["pypi.org", "files.pythonhosted.org"]).unwrap();
    let out = run_with(&fx, "python3", &["-c", &python], |r| {
        r.sandbox.network = Network::Registries(std::sync::Arc::new(hosts));
    });
    let line = |key: &str| -> String {
        out.stdout.lines().find(|l| l.starts_with(key)).unwrap_or_default().to_owned()
    };
    assert_eq!(line("listed "), "listed 200", "{out:?}");
    assert!(line("unlisted").contains("403"), "{out:?}");
    for (key, status) in [
        ("loopback-ip", "403"),
        ("localhost", "403"),
        ("port", "403"),
        ("plain", "405"),
        ("metadata", "403"),
    ] {
        assert!(line(key).starts_with(&format!("{key} HTTP/1.1 {status}")), "{key}: {out:?}");
    }
    assert!(
        out.stdout.contains("direct refused") && out.stdout.contains("host refused"),
        "{out:?}"
    );
    assert!(!out.stdout.contains("DIRECT") && !out.stdout.contains("HOST-TCP"), "{out:?}");
    assert!(out.stdout.contains("loopback ping"), "{out:?}");
    assert!(host.accept().is_err(), "the host's listener was reached");
    // The proxy goes with the job: no thread of it is left in the engine.
    crate::support::wait_for("the proxy to stop", Duration::from_secs(10), || {
        let left =
            std::fs::read_dir("/proc/self/task").expect("tasks").filter_map(Result::ok).any(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.starts_with("sluice-egress"))
            });
        (!left).then_some(())
    });
}

/// Without namespaces the proxy cannot be the only way out: such a job is refused, not run
/// with the network on.
#[test]
fn sb_net_registries_needs_namespaces_or_nothing_runs() {
    let fx = Fixture::new();
    let mut req = fx.request("true", &[]);
    req.sandbox.namespaces = false;
    req.sandbox.network =
        Network::Registries(std::sync::Arc::new(sluice_exec::HostList::registries()));
    let err = rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect_err("ran");
    assert!(err.to_string().contains("registries"), "{err}");
}

/// `go test` of a module whose test serves HTTP on loopback and writes in its temp folder,
/// network off: the build cache and GOPATH are the job's own, nothing is fetched.
#[test]
fn sb_works_go_test_with_a_loopback_server() {
    if !which("go") {
        return;
    }
    let fx = Fixture::new();
    let root = fx.root();
    std::fs::write(root.join("go.mod"), "module example.com/demo\n\ngo 1.19\n").expect("write");
    std::fs::write(
        root.join("demo_test.go"),
        "package demo\n\nimport (\n\t\"io\"\n\t\"net/http\"\n\t\"net/http/httptest\"\n\t\"os\"\n\t\
         \"path/filepath\"\n\t\"testing\"\n)\n\nfunc TestServes(t *testing.T) {\n\t\
         srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) \
         {\n\t\tio.WriteString(w, \"pong\")\n\t}))\n\tdefer srv.Close()\n\tres, err := \
         http.Get(srv.URL)\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tbody, _ := \
         io.ReadAll(res.Body)\n\tif string(body) != \"pong\" {\n\t\tt.Fatalf(\"got %q\", body)\n\t}\n\t\
         if err := os.WriteFile(filepath.Join(t.TempDir(), \"x\"), body, 0o600); err != nil \
         {\n\t\tt.Fatal(err)\n\t}\n}\n",
    )
    .expect("write");
    let out = run_with(&fx, "go", &["test", "-count=1", "./..."], |r| {
        r.command.timeout = Some(Duration::from_secs(300));
    });
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(out.stdout.contains("ok") && out.stdout.contains("example.com/demo"), "{out:?}");
}

/// A headless Chromium renders a page of the project and runs its script, network off (its
/// own sandbox off: the job's is the outer one, and Chromium's would need namespaces of its own).
#[test]
fn sb_works_headless_chromium() {
    if !which("chromium") {
        return;
    }
    let fx = Fixture::new();
    let page = fx.root().join("index.html");
    std::fs::write(
        &page,
        "<!doctype html><title>t</title><body><script>\
         document.body.textContent = 'JS-' + (6 * 7);</script></body>",
    )
    .expect("write");
    let url = format!("file://{}", page.display());
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--dump-dom",
        url.as_str(),
    ];
    let out = run_with(&fx, "chromium", &args, |r| {
        r.command.timeout = Some(Duration::from_secs(120));
    });
    assert!(out.stdout.contains("JS-42"), "{out:?}");
}
