//! A project's own sandbox settings, attacked from inside a job: a granted store is readable
//! and nothing beside it, a path the user hid is not, an opted-in socket is reachable and no
//! other, a link planted along a grant's path exposes nothing, and a project that requires
//! full confinement refuses the fallback. Run as root and again as an unprivileged user, so no
//! guard holds only because of root.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use sluice_core::{Coded, ErrorCode};
use sluice_exec::{ExecError, JobLimits, Jobs, Network, RunOutput};

use crate::support::{Fixture, rt};

fn try_run(
    fx: &Fixture,
    program: &str,
    args: &[&str],
    edit: impl FnOnce(&mut sluice_exec::JobRequest),
) -> Result<RunOutput, ExecError> {
    let mut req = fx.request(program, args);
    edit(&mut req);
    rt().block_on(Jobs::new(JobLimits::default()).run(req))
}

/// Re-runs one test of this binary with `HOME` at a fake home (the engine reads `HOME`), as
/// root or — `unprivileged` — as `nobody`, the fake home then owned by it.
pub(crate) fn rerun_with_home(test: &str, unprivileged: bool, populate: impl FnOnce(&Path)) {
    let home = tempfile::tempdir().expect("tempdir");
    populate(home.path());
    let exe = std::env::current_exe().expect("current exe");
    let mut cmd = if unprivileged {
        chown_tree(home.path(), 65534);
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(&exe);
        c
    } else {
        std::process::Command::new(&exe)
    };
    let out = cmd
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .env("SLUICE_FAKE_HOME", home.path())
        .env("HOME", home.path())
        .env("TMPDIR", home.path())
        .output()
        .expect("run inner harness");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{}: {text}", if unprivileged { "as nobody" } else { "as root" });
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("1 passed"), "{text}");
}

fn chown_tree(dir: &Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).expect("chown");
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let p = entry.path();
        if p.is_dir() && !p.is_symlink() {
            chown_tree(&p, uid);
        } else {
            std::os::unix::fs::lchown(&p, Some(uid), Some(uid)).expect("chown");
        }
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn populate_home(home: &Path) {
    write(&home.join(".npmrc"), "GRANTED-NPMRC");
    write(&home.join(".ssh/id_rsa"), "CANARY-SSH");
    write(&home.join(".sibling"), "CANARY-SIBLING");
    write(&home.join(".config/tool/token"), "GRANTED-TOKEN");
    write(&home.join(".config/tool/other"), "CANARY-OTHER");
    write(&home.join(".config/gh/hosts.yml"), "GRANTED-GH");
    write(&home.join(".config/gh/config.yml"), "CANARY-GH");
    // A toolchain folder (exposed in namespaces) with a file the user chose to hide.
    write(&home.join(".cargo/bin/tool"), "TOOL-VISIBLE");
    write(&home.join(".cargo/my-registry-token"), "CANARY-ADDED");
}

#[test]
fn sb_grant_a_granted_store_is_readable_and_nothing_beside_it() {
    if let Some(home) = std::env::var_os("SLUICE_FAKE_HOME") {
        return grant_inner(Path::new(&home));
    }
    let test = "exposure::sb_grant_a_granted_store_is_readable_and_nothing_beside_it";
    rerun_with_home(test, false, populate_home);
    rerun_with_home(test, true, populate_home);
}

fn grant_inner(home: &Path) {
    let fx = Fixture::new();
    let cat = |p: &str| format!("echo \"{p}=$(cat \"{p}\" 2>/dev/null)\"; ");
    let h = |rel: &str| home.join(rel).display().to_string();
    let mut script = String::new();
    for p in [
        "$HOME/.npmrc".to_owned(),
        h(".npmrc"),
        h(".config/tool/token"),
        h(".ssh/id_rsa"),
        h(".sibling"),
        h(".config/tool/other"),
        h(".config/gh/hosts.yml"),
        h(".config/gh/config.yml"),
        h(".cargo/my-registry-token"),
        h(".cargo/bin/tool"),
    ] {
        script.push_str(&cat(&p));
    }
    script.push_str(&format!(
        "echo changed > '{}' 2>/dev/null && echo WROTE-GRANT; grep -r CANARY '{}' 2>/dev/null; \
         echo end",
        h(".npmrc"),
        home.display()
    ));
    // What a job could plant in its private HOME for the next job: a link where the grant's
    // link goes, and a folder on the way replaced by a link into the home's secrets.
    let state_home = fx.dir.path().join("state/home");
    std::fs::create_dir_all(&state_home).expect("mkdir");
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), state_home.join(".npmrc")).expect("ln");
    std::os::unix::fs::symlink(home.join(".ssh"), state_home.join(".config")).expect("ln");
    // As an unprivileged user the kernel may refuse namespaces: then only the fallback.
    let jail = sluice_exec::jail_status().available;
    for namespaces in [true, false].into_iter().filter(|n| jail || !n) {
        let out = try_run(&fx, "sh", &["-c", &script], |r| {
            r.sandbox.network = Network::Allowed;
            r.sandbox.namespaces = namespaces;
            // A file, a file in a folder of its own, a file inside a default store (`gh`).
            r.sandbox.exposure.granted = vec![
                home.join(".npmrc"),
                home.join(".config/tool/token"),
                home.join(".config/gh/hosts.yml"),
            ];
            r.sandbox.exposure.hidden = vec![home.join(".cargo/my-registry-token")];
        })
        .expect("run");
        let says = |what: &str| out.stdout.contains(what);
        assert!(says("end"), "{namespaces}: {out:?}");
        assert!(says("$HOME/.npmrc=GRANTED-NPMRC") || says("/.npmrc=GRANTED-NPMRC"), "{out:?}");
        assert_eq!(out.stdout.matches("=GRANTED-NPMRC").count(), 2, "HOME and real path: {out:?}");
        assert!(says("/.config/tool/token=GRANTED-TOKEN"), "{out:?}");
        assert!(says("/.config/gh/hosts.yml=GRANTED-GH"), "{out:?}");
        assert!(says("TOOL-VISIBLE") || !namespaces, "{out:?}");
        assert!(!says("WROTE-GRANT"), "a grant is read-only: {out:?}");
        for canary in ["CANARY-SSH", "CANARY-GH", "CANARY-ADDED"] {
            assert!(!says(canary), "namespaces {namespaces}: {canary}: {out:?}");
        }
        // In namespaces nothing beside a grant is there; Landlock alone hides only the list.
        if namespaces {
            assert!(!says("CANARY"), "{out:?}");
        }
    }
    assert_eq!(std::fs::read_to_string(home.join(".npmrc")).unwrap(), "GRANTED-NPMRC");
    assert!(!home.join(".ssh/tool").exists(), "the engine followed a planted link");
    println!("namespaces tried: {jail}");
}

/// A grant whose path gains a link after it was granted (to `~/.ssh/id_rsa`, or a parent
/// folder replaced by a link to another folder) exposes nothing: the job does not start.
#[test]
fn sb_grant_a_link_planted_along_a_granted_path_exposes_nothing() {
    let fx = Fixture::new();
    let out = fx.outside();
    write(&out.join("ssh/id_rsa"), "CANARY-SSH");
    write(&out.join("elsewhere/token"), "CANARY-ELSEWHERE");
    std::fs::create_dir_all(out.join("tool")).expect("mkdir");
    std::os::unix::fs::symlink(out.join("ssh/id_rsa"), out.join("npmrc")).expect("link");
    std::os::unix::fs::symlink(out.join("elsewhere"), out.join("tool/dir")).expect("link");
    let granted = vec![out.join("npmrc"), out.join("tool/dir/token")];
    for namespaces in [true, false] {
        for g in &granted {
            let script = format!("cat '{}'; echo end", g.display());
            let res = try_run(&fx, "sh", &["-c", &script], |r| {
                r.sandbox.namespaces = namespaces;
                r.sandbox.exposure.granted = vec![g.clone()];
            });
            match res {
                Err(e) => assert_eq!(e.code(), ErrorCode::Forbidden, "{e}"),
                Ok(o) => panic!("a job started through a planted link: {o:?}"),
            }
        }
    }
    // The same store granted by its real path is visible.
    let real = std::fs::canonicalize(out.join("elsewhere/token")).unwrap();
    let res = try_run(&fx, "sh", &["-c", &format!("cat '{}'", real.display())], |r| {
        r.sandbox.exposure.granted = vec![real.clone()];
    })
    .expect("run");
    assert!(res.stdout.contains("CANARY-ELSEWHERE"), "{res:?}");
}

/// A socket the project did not opt in to is unreachable; an opted-in one is reachable at the
/// path the user named (through a link, as `/var/run` is `/run`) and at its real path.
#[test]
fn sb_ipc_an_opted_in_socket_is_reachable_and_no_other() {
    let fx = Fixture::new();
    let run_dir = fx.outside().join("run");
    std::fs::create_dir_all(&run_dir).expect("mkdir");
    std::os::unix::fs::symlink(&run_dir, fx.outside().join("var-run")).expect("link");
    let docker = UnixListener::bind(run_dir.join("docker.sock")).expect("bind");
    let bus = UnixListener::bind(run_dir.join("bus")).expect("bind");
    let named: PathBuf = fx.outside().join("var-run/docker.sock");
    let python = format!(
        "import socket\n\
         for p in [{named:?}, {real:?}, {bus:?}]:\n    \
             s = socket.socket(socket.AF_UNIX)\n    \
             try:\n        s.connect(p); print('CONNECTED', p)\n    \
             except OSError as e:\n        print('refused', p, e.errno)\n",
        named = named.display().to_string(),
        real = run_dir.join("docker.sock").display().to_string(),
        bus = run_dir.join("bus").display().to_string(),
    );
    let out = try_run(&fx, "python3", &["-c", &python], |r| {
        r.sandbox.exposure.sockets = vec![named.clone()];
    })
    .expect("run");
    assert_eq!(out.stdout.matches("CONNECTED").count(), 2, "{out:?}");
    assert!(out.stdout.contains(&format!("refused {}", run_dir.join("bus").display())), "{out:?}");
    bus.set_nonblocking(true).expect("nonblocking");
    assert!(bus.accept().is_err(), "the socket not opted in was reached");
    docker.set_nonblocking(true).expect("nonblocking");
    assert!(docker.accept().is_ok(), "the opted-in socket was not reached");
    // Without the opt-in, the same job reaches neither.
    let out = try_run(&fx, "python3", &["-c", &python], |_| {}).expect("run");
    assert!(!out.stdout.contains("CONNECTED"), "{out:?}");
    // Only a socket is ever bound: a regular file named as a socket stays out of view.
    write(&fx.outside().join("run/not-a-socket"), "CANARY-FILE");
    let file = fx.outside().join("run/not-a-socket");
    let out = try_run(&fx, "sh", &["-c", &format!("cat '{}'; echo end", file.display())], |r| {
        r.sandbox.exposure.sockets = vec![file.clone()];
    })
    .expect("run");
    assert!(out.stdout.contains("end") && !out.stdout.contains("CANARY"), "{out:?}");
}

/// A project that requires full confinement does not run under Landlock and seccomp alone,
/// and says why with a stable code; with namespaces it runs.
#[test]
fn sb_require_full_refuses_to_run_under_the_fallback() {
    let fx = Fixture::new();
    let err = try_run(&fx, "true", &[], |r| {
        r.sandbox.namespaces = false;
        r.sandbox.exposure.require_full = true;
    })
    .expect_err("refused");
    assert_eq!(err.code(), ErrorCode::ConfinementUnavailable, "{err}");
    assert_eq!(err.code().as_str(), "confinement_unavailable");
    assert!(err.to_string().contains("requires full confinement"), "{err}");
    let out = try_run(&fx, "true", &[], |r| r.sandbox.exposure.require_full = true).expect("run");
    assert_eq!(out.exit_code, Some(0), "{out:?}");
}
