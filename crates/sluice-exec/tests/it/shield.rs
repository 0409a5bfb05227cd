//! The sensitive-file shield inside a job's sandbox, attacked from inside the job: a shielded
//! `.env` is not read directly, through a link, through a hard link (made before, or by the job),
//! by `find`, by a copy of the folder, by renaming or deleting it or by unmounting the cover
//! from a namespace of the job's own; a file that appears in a shielded folder while the job runs
//! stays out of view; `.git` is readable but its programs are not writable; a grant shows the
//! file read-only. Each probe is shown to succeed without the shield (the negative control). Run
//! as root and again as an unprivileged user, so no guard holds only because of root.

use std::path::Path;

use sluice_exec::{JobLimits, Jobs, Network, RunOutput};
use sluice_guard::Shield;

use crate::exposure::rerun_with_home;
use crate::support::{Fixture, rt};

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// Every way a job might reach `.env`'s canary; each prints what it read after a label.
const PROBES: &str = r#"
echo "direct=$(cat .env 2>&1)"
ln -s .env link.txt; echo "symlink=$(cat link.txt 2>&1)"
ln .env hard.txt 2>/dev/null; echo "hardlink=$(cat hard.txt 2>&1)"
echo "before=$(cat backup/env.txt 2>&1)"
echo "find=$(find . -path ./.git -prune -o -type f -exec grep -h CANARY {} + 2>&1)"
cp -r . /tmp/copy 2>/dev/null; echo "copy=$(cat /tmp/copy/.env 2>&1) $(grep -r CANARY /tmp/copy 2>&1)"
echo "tar=$(tar cf - . 2>/dev/null | grep -a -o 'CANARY-[A-Z]*' | sort -u | tr '\n' ' ')"
echo "deep=$(cat sub/.ssh/id_rsa sub/key.pem 2>&1)"
mv .env moved.txt 2>/dev/null; echo "moved=$(cat moved.txt 2>&1)"
mv sub sub2 2>/dev/null; echo "renamed=$(cat sub2/.ssh/id_rsa 2>&1)"; mv sub2 sub 2>/dev/null
rm -f .env 2>/dev/null; umount .env 2>/dev/null
echo "unshared=$(unshare -Urm sh -c 'umount -l .env; umount -l sub/.ssh; cat .env sub/.ssh/id_rsa' 2>&1)"
echo "git=$(cat .git/HEAD 2>&1)"
echo x >> .git/config 2>/dev/null && echo WROTE-GIT-CONFIG
touch .git/hooks/pre-commit 2>/dev/null && echo WROTE-GIT-HOOK
echo granted >> .env 2>/dev/null && echo WROTE-ENV
: > probed
while [ ! -e ready ]; do sleep 0.05; done
echo "appeared=$(cat sub/.ssh/new_key 2>&1) $(ls -A sub/.ssh 2>&1 | tr '\n' ' ')"
echo end
"#;

fn populate(project: &Path) {
    write(&project.join(".env"), "SECRET=CANARY-ENV");
    write(&project.join("sub/.ssh/id_rsa"), "CANARY-SSH");
    write(&project.join("sub/key.pem"), "CANARY-PEM");
    write(&project.join("src/main.rs"), "fn main() {}");
    write(&project.join(".git/HEAD"), "ref: refs/heads/main\n");
    write(&project.join(".git/config"), "[core]\n");
    std::fs::create_dir_all(project.join(".git/hooks")).expect("mkdir");
    // A second name for the secret, made before any job ran.
    std::fs::create_dir_all(project.join("backup")).expect("mkdir");
    std::fs::hard_link(project.join(".env"), project.join("backup/env.txt")).expect("link");
}

/// Runs the probes in a fresh project; `shield` is the project's shield (or none), with its
/// grants. Once the job is past its probes (`probed`: its renames of `sub` are undone, so the
/// folder is the one it had at the start), a thread writes a new secret into the shielded folder,
/// then `ready`, which the job waits for.
fn probe(namespaces: bool, shield: Option<Vec<&str>>) -> RunOutput {
    let shielded = shield.is_some();
    let fx = Fixture::new();
    let root = fx.root();
    populate(&root);
    let mut req = fx.request("sh", &["-c", PROBES]);
    req.sandbox.namespaces = namespaces;
    req.sandbox.network = Network::Off;
    if let Some(granted) = shield {
        req.sandbox.shield = Some(Shield::default());
        req.sandbox.exposure.granted = granted.iter().map(|g| root.join(g)).collect();
    }
    let writer = {
        let root = root.clone();
        std::thread::spawn(move || {
            // Not sooner: a write while the job has `sub` renamed away would make a new
            // `sub/.ssh`, a folder the job never had covered (a limit docs/SANDBOX.md states).
            let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while !root.join("probed").exists() && std::time::Instant::now() < end {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            write(&root.join("sub/.ssh/new_key"), "CANARY-NEW");
            write(&root.join("ready"), "");
        })
    };
    let out = rt().block_on(Jobs::new(JobLimits::default()).run(req)).expect("run");
    writer.join().expect("writer");
    assert!(out.stdout.contains("end"), "the job ran to its end: {out:?}");
    // The host's files are as they were: the job moved, deleted and changed nothing shielded.
    if shielded {
        assert!(root.join(".env").is_file() && root.join("sub/.ssh/id_rsa").is_file(), "{out:?}");
        assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
    }
    out
}

fn line<'a>(out: &'a RunOutput, label: &str) -> &'a str {
    let prefix = format!("{label}=");
    out.stdout.lines().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap_or("")
}

#[test]
fn sb_shield_a_job_never_reads_what_the_shield_hides() {
    if std::env::var_os("SLUICE_FAKE_HOME").is_some() {
        return shield_inner();
    }
    let test = "shield::sb_shield_a_job_never_reads_what_the_shield_hides";
    rerun_with_home(test, false, |_| {});
    rerun_with_home(test, true, |_| {});
}

fn shield_inner() {
    // The cover needs namespaces; this machine gives them to root and to `nobody` alike, so
    // their absence is a failure here, not a reason to check nothing.
    let status = sluice_exec::jail_status();
    assert!(status.available, "no namespaces for this user: {}", status.summary);
    // The negative control: without the shield every probe reaches a canary.
    let open = probe(true, None);
    for label in ["direct", "symlink", "before", "find", "copy", "tar", "deep", "appeared"] {
        assert!(line(&open, label).contains("CANARY"), "{label} can succeed: {open:?}");
    }
    assert!(open.stdout.contains("WROTE-GIT-HOOK"), "{open:?}");

    let shut = probe(true, Some(Vec::new()));
    assert!(!shut.stdout.contains("CANARY"), "{shut:?}");
    assert!(!shut.stderr.contains("CANARY"), "{shut:?}");
    // Covered, not merely unreadable: the names are there, empty.
    assert_eq!(line(&shut, "direct"), "", "{shut:?}");
    assert!(line(&shut, "git").contains("ref: refs/heads/main"), ".git stays readable: {shut:?}");
    for wrote in ["WROTE-GIT-CONFIG", "WROTE-GIT-HOOK", "WROTE-ENV"] {
        assert!(!shut.stdout.contains(wrote), "{wrote}: {shut:?}");
    }

    // A grant shows the file, read-only; the rest stays covered.
    let granted = probe(true, Some(vec![".env"]));
    assert!(line(&granted, "direct").contains("CANARY-ENV"), "{granted:?}");
    assert!(!granted.stdout.contains("WROTE-ENV"), "a grant is read-only: {granted:?}");
    for label in ["deep", "appeared"] {
        assert!(!line(&granted, label).contains("CANARY"), "{label}: {granted:?}");
    }
    println!("covered as uid {}", rustix::process::getuid().as_raw());
}
