//! Faults against the real binary (issue 18): `sluice serve` killed with SIGKILL in the middle
//! of a large write, a multi-file patch, a schema migration, audit appends under load, a job
//! start and an approval decision; a full disk under the data folder and under a project; and
//! the database held locked by another process. After each: SQLite's `integrity_check` is ok,
//! `sluice audit verify` says intact, every file is whole (its bytes from before or from after,
//! nothing in between), nothing is replayed and no process is left behind (docs/THREATS.md
//! PC-01, PC-03, PE-03).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// `PRAGMA integrity_check` on the database, as a fresh process would see it after the crash.
fn assert_integrity(sb: &Sandbox) {
    let db = rusqlite::Connection::open(sb.data.join("sluice.db")).unwrap();
    let res: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(res, "ok", "the database is damaged");
}

/// `sluice audit list --json` (one JSON object a line, newest first).
fn audit_entries(sb: &Sandbox) -> Vec<Value> {
    let out = sb.ok(&["audit", "list", "--json", "--limit", "100000"]);
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn assert_audit_intact(sb: &Sandbox) {
    let out = sb.ok(&["audit", "verify"]);
    assert!(out.contains("intact"), "{out}");
}

/// Everything a crash must leave sound.
fn assert_sound(sb: &Sandbox) {
    assert_integrity(sb);
    assert_audit_intact(sb);
}

/// The `hash` read_file reports for a project file (what write_file's `expected_hash` wants).
fn hash_of(port: u16, token: &str, path: &str) -> String {
    let v =
        call(port, token, "read_file", json!({"project": "demo", "path": path, "max_lines": 1}));
    ok(&v)["hash"].as_str().unwrap().to_owned()
}

/// A `tools/call` that tolerates the engine dying under it: `None` for a refused or cut
/// connection, else the HTTP status and the JSON-RPC reply.
fn try_call(port: u16, token: &str, tool: &str, args: Value) -> Option<(u16, Value)> {
    let body = call_body(tool, args);
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{}Connection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        bearer(token),
        body.len()
    )
    .ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let (head, rest) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let data = rest.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(rest);
    // A chunked reply cut by the kill does not parse: that is a cut connection too.
    let start = data.find('{')?;
    let end = data.rfind('}')?;
    serde_json::from_str(&data[start..=end]).ok().map(|v| (status, v))
}

/// Kills the engine with SIGKILL (what `Drop` does) and reaps it.
fn kill_9(server: Server) {
    drop(server);
}

/// Starts `sluice serve` with a failpoint that never lets it become ready; returns the child
/// once its stderr printed `marker`.
fn spawn_until_stderr(sb: &Sandbox, env: &[(&str, &str)], marker: &str) -> std::process::Child {
    let mut child = sb
        .cmd()
        .args(["serve", "--port", &free_port().to_string()])
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(marker) => return child,
            Ok(_) => continue,
            Err(_) => {
                let _ = child.kill();
                panic!("sluice serve never printed {marker:?}");
            }
        }
    }
}

// ----- (a) a large write_file ---------------------------------------------------------------

#[test]
fn pc03_kill_9_during_a_large_write_leaves_the_old_or_the_new_file_whole() {
    let (sb, token) = executable("off");
    let big = |fill: u8| -> Vec<u8> {
        (0..3 * 1024 * 1024).map(|i| if i % 64 == 63 { b'\n' } else { fill }).collect()
    };
    let mut current = big(b'a');
    std::fs::write(sb.project.join("big.txt"), &current).unwrap();
    let files_before: Vec<String> = snapshot(&sb.project).into_keys().collect();
    // Kills at different moments: while the body is parsed, planned, hashed, written, renamed.
    for (round, delay_ms) in [0u64, 5, 30, 90, 250, 600].into_iter().enumerate() {
        let server = sb.serve();
        let expected = hash_of(server.port, &token, "big.txt");
        let next = big(b'b' + round as u8);
        let body = call_body(
            "write_file",
            json!({"project": "demo", "path": "big.txt", "expected_hash": expected,
                   "content": String::from_utf8(next.clone()).unwrap()}),
        );
        let s = open_call(server.port, &token, &body);
        std::thread::sleep(Duration::from_millis(delay_ms));
        kill_9(server);
        drop(s);
        let at_kill = std::fs::read(sb.project.join("big.txt")).unwrap();
        assert!(at_kill == current || at_kill == next, "round {round}: big.txt is torn");
        // The next start recovers: a change the client was never told about is rolled back
        // (its journal was still open) or was complete; never half, and no temp file is left.
        let server = sb.serve();
        let names: Vec<String> = snapshot(&sb.project).into_keys().collect();
        assert_eq!(names, files_before, "round {round}: a stray file was left in the project");
        let recovered = std::fs::read(sb.project.join("big.txt")).unwrap();
        assert!(recovered == current || recovered == next, "round {round}: torn after recovery");
        if at_kill == current {
            assert!(recovered == current, "round {round}: an unstarted write was replayed");
        }
        current = recovered;
        drop(server);
        assert_sound(&sb);
    }
}

// ----- (b) a multi-file apply_patch ---------------------------------------------------------

/// Files `f0..f3` and a five-step patch over them (four updates and an added file).
fn patch_project(sb: &Sandbox) -> String {
    for i in 0..4 {
        std::fs::write(sb.project.join(format!("f{i}.txt")), format!("one\ntwo {i}\n")).unwrap();
    }
    let patch: String = (0..4)
        .map(|i| format!("*** Update File: f{i}.txt\n@@\n one\n-two {i}\n+TWO {i}\n"))
        .chain(std::iter::once("*** Add File: added.txt\n+new\n".to_owned()))
        .collect();
    call_body(
        "apply_patch",
        json!({"project": "demo", "patch": format!("*** Begin Patch\n{patch}*** End Patch\n")}),
    )
}

/// Journals of unfinished changes in the data folder (`journal/<op>.json`, any project).
fn journals(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                return 0;
            }
            if p.file_name().is_some_and(|n| n == "journal") {
                std::fs::read_dir(&p).map(|r| r.count()).unwrap_or(0)
            } else {
                journals(&p)
            }
        })
        .sum()
}

// The failpoint is compiled into debug builds only.
#[cfg(debug_assertions)]
#[test]
fn pc01_kill_9_after_any_step_of_a_patch_rolls_back_to_fully_before() {
    // changes.rs kills after step 2; here after the journal alone, and after steps 1, 3 and 4.
    let (sb, token) = executable("off");
    let body = patch_project(&sb);
    let before = snapshot(&sb.project);
    for stall in [0usize, 1, 3, 4] {
        let server = sb.serve_env(&[("SLUICE_FAILPOINT_STALL_COMMIT_AFTER", &stall.to_string())]);
        let s = open_call(server.port, &token, &body);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let done = snapshot_while_writing(&sb.project)
                .values()
                .filter(|b| b.starts_with(b"one\nTWO"))
                .count();
            if done == stall && journals(&sb.data) > 0 {
                break;
            }
            assert!(Instant::now() < deadline, "stall {stall}: the patch never got there");
            std::thread::sleep(Duration::from_millis(20));
        }
        kill_9(server);
        drop(s);
        let server = sb.serve();
        assert_eq!(snapshot(&sb.project), before, "stall {stall}: not rolled back");
        // A second start finds nothing more to do: the roll-back is not replayed either.
        drop(server);
        let server = sb.serve();
        assert_eq!(snapshot(&sb.project), before, "stall {stall}");
        drop(server);
        assert_sound(&sb);
    }
}

/// Journals under `dir` still `prepared`: a commit the kill interrupted (`begin` writes the
/// journal before the first step, `finish` rewrites it `committed` after the last and moves it to
/// the manifest; recovery marks a `prepared` one `rolled_back`).
fn prepared_journals(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let prepared = |p: &Path| {
        let v: Option<Value> = std::fs::read(p).ok().and_then(|b| serde_json::from_slice(&b).ok());
        v.is_some_and(|v| v["status"] == "prepared")
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| {
            if e.file_name() == "journal" {
                std::fs::read_dir(e.path())
                    .map(|r| r.flatten().filter(|j| prepared(&j.path())).count())
                    .unwrap_or(0)
            } else {
                prepared_journals(&e.path())
            }
        })
        .sum()
}

#[test]
fn pc01_kill_9_at_random_moments_of_a_patch_leaves_all_before_or_all_after() {
    let (sb, token) = executable("off");
    let body = patch_project(&sb);
    let before = snapshot(&sb.project);
    // Every millisecond of the first 12 (the patch's whole commit on this machine), more with
    // `cargo xtask attack --long`; then, until a kill has landed inside the commit (its journal
    // still `prepared`), quarter milliseconds across the same span, a bounded number of times.
    let rounds = sluice_core::attack_scale(12, 150) as u64;
    let delays = (0..rounds)
        .map(|ms| ms * 1000)
        .chain((0..rounds * 16).map(|q| (q % (rounds * 4)) * 250 + 125 + q / (rounds * 4) * 60));
    let (mut mid_commit, mut kills) = (0usize, 0u64);
    for delay_us in delays {
        if kills >= rounds && mid_commit > 0 {
            break;
        }
        kills += 1;
        let server = sb.serve();
        // One call first, as a client's session has: an engine builds its tool list on its
        // first call, which would otherwise come before the commit and take the window.
        hash_of(server.port, &token, "f0.txt");
        let s = open_call(server.port, &token, &body);
        std::thread::sleep(Duration::from_micros(delay_us));
        kill_9(server);
        drop(s);
        mid_commit += usize::from(prepared_journals(&sb.data) > 0);
        let server = sb.serve();
        let now = snapshot(&sb.project);
        let changed = now.values().filter(|b| b.starts_with(b"one\nTWO")).count();
        if now != before {
            assert_eq!(changed, 4, "after {delay_us} µs: half a patch survived");
            assert_eq!(now["added.txt"], b"new\n");
            // Put the files back for the next round (outside Sluice, as an editor would).
            for i in 0..4 {
                std::fs::write(sb.project.join(format!("f{i}.txt")), format!("one\ntwo {i}\n"))
                    .unwrap();
            }
            std::fs::remove_file(sb.project.join("added.txt")).unwrap();
        }
        drop(server);
        assert_sound(&sb);
    }
    eprintln!("PC-01: {mid_commit} of {kills} kills landed inside the commit");
    assert!(mid_commit > 0, "no kill of {kills} landed inside the commit: the race never ran");
}

// ----- (c) a schema migration ---------------------------------------------------------------

fn user_version(sb: &Sandbox) -> i64 {
    let db = rusqlite::Connection::open(sb.data.join("sluice.db")).unwrap();
    db.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
}

// The failpoint is compiled into debug builds only.
#[cfg(debug_assertions)]
#[test]
fn pc03_kill_9_inside_a_migration_leaves_the_old_schema_and_the_next_start_migrates() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("t", &[]);
    let server = sb.serve();
    call(server.port, &token, "read_file", json!({"project": "demo", "path": "README.md"}));
    server.stop();
    let before = audit_entries(&sb);
    for round in 0..2 {
        back_to_schema_13(&sb);
        let mut child = spawn_until_stderr(
            &sb,
            &[("SLUICE_FAILPOINT_STALL_MIGRATION", "1")],
            "stalled inside the migration transaction",
        );
        child.kill().unwrap();
        child.wait().unwrap();
        // The transaction never committed: still schema 13, whole, with the backup taken first.
        assert_eq!(user_version(&sb), 13, "round {round}");
        assert_integrity(&sb);
        let backups: Vec<PathBuf> = std::fs::read_dir(sb.data.join("backups"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().contains(".v13-"))
            .collect();
        assert!(!backups.is_empty(), "no backup before the migration");
        for b in &backups {
            let db = rusqlite::Connection::open(b).unwrap();
            let res: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
            assert_eq!(res, "ok", "{b:?}");
        }
        // The next start migrates from scratch, and everything from before is there.
        let server = sb.serve();
        assert_eq!(user_version(&sb), 20);
        let v =
            call(server.port, &token, "read_file", json!({"project": "demo", "path": "README.md"}));
        assert!(ok(&v)["content"].as_str().unwrap().contains("hello world"));
        server.stop();
        assert_sound(&sb);
    }
    let after = audit_entries(&sb);
    assert!(after.len() > before.len());
    assert!(after.ends_with(&before), "entries from before the migration changed");
}

// ----- (d) audit appends under load ---------------------------------------------------------

#[test]
fn pc03_kill_9_under_load_keeps_the_audit_chain_and_every_acknowledged_write() {
    let (sb, token) = executable("off");
    for (round, run_ms) in [150u64, 500, 1100].into_iter().enumerate() {
        let server = sb.serve();
        let port = server.port;
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(std::sync::Mutex::new(Vec::<(String, String)>::new()));
        let calls = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..6)
            .map(|w| {
                let (stop, acked, calls, token) =
                    (stop.clone(), acked.clone(), calls.clone(), token.clone());
                std::thread::spawn(move || {
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        i += 1;
                        let path = format!("load/r{round}-w{w}-{i}.txt");
                        let content = format!("round {round} worker {w} call {i}\n").repeat(50);
                        let reply = if i % 2 == 0 {
                            try_call(
                                port,
                                &token,
                                "read_file",
                                json!({"project": "demo", "path": "README.md"}),
                            )
                        } else {
                            try_call(
                                port,
                                &token,
                                "write_file",
                                json!({"project": "demo",
                                "path": path, "content": content, "create_parents": true}),
                            )
                        };
                        let Some((_, v)) = reply else { break };
                        calls.fetch_add(1, Ordering::Relaxed);
                        if i % 2 == 1 && v["result"]["isError"] == false {
                            acked.lock().unwrap().push((path, content));
                        }
                    }
                })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(30);
        while calls.load(Ordering::Relaxed) < 20 {
            assert!(Instant::now() < deadline, "no calls were answered");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(run_ms));
        kill_9(server);
        stop.store(true, Ordering::Relaxed);
        for w in workers {
            w.join().unwrap();
        }
        // The next start rolls back the write the kill interrupted and sweeps its temp file;
        // until then a hidden `.NAME.sluice-tmp-…` may hold part of it (the file itself never
        // does).
        sb.serve().stop();
        assert_sound(&sb);
        let temps: Vec<String> = snapshot(&sb.project)
            .into_keys()
            .filter(|name| name.contains(".sluice-tmp-"))
            .collect();
        assert!(temps.is_empty(), "temp files left after the restart: {temps:?}");
        // Every write the client was told about is on disk whole, and audited.
        let acked = acked.lock().unwrap().clone();
        assert!(!acked.is_empty());
        for (path, content) in &acked {
            assert_eq!(&std::fs::read_to_string(sb.project.join(path)).unwrap(), content);
        }
        // Files the kill caught are whole too (their content is one of the acked shapes).
        for (name, bytes) in snapshot(&sb.project.join("load")) {
            let text = String::from_utf8(bytes).unwrap();
            let line = text.lines().next().unwrap_or_default().to_owned();
            assert_eq!(text, format!("{line}\n").repeat(50), "load/{name} is torn");
        }
        let audit = audit_entries(&sb);
        let audited =
            audit.iter().filter(|e| e["action"] == "write_file" && e["outcome"] == "ok").count();
        let total_acked: usize = std::fs::read_dir(sb.project.join("load")).unwrap().count();
        assert!(audited >= acked.len(), "{audited} audited writes < {} acknowledged", acked.len());
        assert!(audited <= total_acked, "{audited} audited writes > {total_acked} files");
    }
}

// ----- (e) a job start ----------------------------------------------------------------------

fn wait_no_survivors(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !survivors(marker).is_empty() {
        assert!(Instant::now() < deadline, "orphans: {:?}", survivors(marker));
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn pc03_kill_9_around_a_job_start_leaves_no_orphan_and_starts_nothing_again() {
    let (sb, token) = executable("any");
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    for (round, delay_ms) in [0u64, 2, 10, 40, 150].into_iter().enumerate() {
        // A unique `sleep` argument marks this round's processes in /proc.
        let marker = format!("{}.{round}1", 7_000_000 + t.subsec_micros() % 1_000_000);
        let args = json!({"project": "demo", "program": "sh",
            "args": ["-c", format!("setsid sleep {marker} & sleep {marker}")]});
        let server = sb.serve();
        let (port, tok) = (server.port, token.clone());
        let pending_call = std::thread::spawn(move || try_call(port, &tok, "start_job", args));
        let a = wait_pending(&sb);
        let id = a["id"].as_str().unwrap().to_owned();
        sb.ok(&["approvals", "approve", &id]);
        std::thread::sleep(Duration::from_millis(delay_ms));
        kill_9(server);
        let _ = pending_call.join();
        wait_no_survivors(&marker);
        let server = sb.serve();
        // The approval was used (or aborted) and stays so: it cannot start the job again.
        let err = sb.err(&["approvals", "approve", &id]);
        assert!(err.contains("already"), "{err}");
        let jobs = ok(&call(server.port, &token, "list_jobs", json!({"project": "demo"})));
        for job in jobs["jobs"].as_array().unwrap() {
            assert_ne!(job["state"], "running", "round {round}: {job}");
        }
        // Once the engine answers, nothing of the old job runs again.
        call(server.port, &token, "list_projects", json!({}));
        assert!(survivors(&marker).is_empty(), "round {round}: the job was started again");
        drop(server);
        wait_no_survivors(&marker);
        assert_sound(&sb);
    }
}

// ----- (f) an approval decision -------------------------------------------------------------

#[test]
fn pc03_kill_9_during_an_approval_decision_acts_at_most_once() {
    let (sb, token) = executable("off");
    for (round, delay_ms) in [0u64, 5, 20, 60, 200].into_iter().enumerate() {
        let name = format!("old{round}.txt");
        std::fs::write(sb.project.join(&name), format!("keep {round}")).unwrap();
        let server = sb.serve();
        let (port, tok, args) =
            (server.port, token.clone(), json!({"project": "demo", "path": name}));
        let pending_call = std::thread::spawn(move || try_call(port, &tok, "delete_path", args));
        let a = wait_pending(&sb);
        let id = a["id"].as_str().unwrap().to_owned();
        // The decision is being made by the CLI while the engine dies.
        let mut approve = sb.cmd().args(["approvals", "approve", &id]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        kill_9(server);
        let _ = approve.wait();
        let _ = pending_call.join();
        let existed = sb.project.join(&name).exists();
        let server = sb.serve();
        // The delete is never replayed: a file there when the engine died is there after the
        // start. A kill between the delete and its commit point leaves the file gone with the
        // journal still `prepared`, and the start rolls it back ("fully before"): then the
        // file is back, and the audit below must not count that delete as done.
        call(server.port, &token, "list_projects", json!({}));
        let exists = sb.project.join(&name).exists();
        assert!(exists || !existed, "round {round}: replayed");
        let shown = sb.ok(&["approvals", "show", &id]);
        assert!(!shown.contains("[pending]"), "{shown}");
        assert!(sb.err(&["approvals", "approve", &id]).contains("already"));
        let audit = audit_entries(&sb);
        if exists && !existed {
            // Back because the start rolled the delete back, and said so: nothing else may
            // bring a deleted file back.
            assert!(audit.iter().any(|e| e["action"] == "recover"), "round {round}: {audit:?}");
        }
        let deletes =
            audit.iter().filter(|e| e["action"] == "delete_path" && e["outcome"] == "ok").count();
        let deleted_so_far =
            (0..=round).filter(|r| !sb.project.join(format!("old{r}.txt")).exists()).count();
        assert!(deletes <= deleted_so_far, "more deletes audited than done");
        drop(server);
        assert_sound(&sb);
    }
}

// ----- full disks ---------------------------------------------------------------------------

/// A tmpfs of `size` mounted on `dir`, unmounted on drop (after the engine using it is gone:
/// declare it before the server).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(dir)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "these tests need to mount a small tmpfs (run them as root, or in a container \
             allowed to mount): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(dir.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the filesystem holding `dir` to the last byte with a file named `filler`.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = vec![b'x'; 64 * 1024];
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(_) => continue,
            Err(e) if e.raw_os_error() == Some(28) => break,
            Err(e) => panic!("filling {dir:?}: {e}"),
        }
    }
    // Byte by byte for the last partial block.
    while f.write(b"x").is_ok_and(|n| n == 1) {}
    path
}

#[test]
fn pe03_a_full_data_disk_refuses_writes_cleanly_and_keeps_serving_reads() {
    let sb = Sandbox::new();
    let _disk = Tmpfs::mount(&sb.data, "2m");
    sb.add_project_with(&["--access", "read-write"]);
    let token = sb.token("t", &[]);
    let server = sb.serve();
    let before = snapshot(&sb.project);
    let read = json!({"project": "demo", "path": "README.md"});
    let write = json!({"project": "demo", "path": "new.txt", "content": "hello"});
    // Below the free-space floor already: refused before anything is touched.
    let msg = refused(&call(server.port, &token, "write_file", write.clone()), "limit_exceeded");
    assert!(msg.contains("backups") && msg.contains("nothing was changed"), "{msg}");
    // Then to the last byte: SQLite itself cannot grow any more.
    let filler = fill(&sb.data);
    for _ in 0..3 {
        let v = call(server.port, &token, "read_file", read.clone());
        assert!(ok(&v)["content"].as_str().unwrap().contains("hello world"));
        refused(&call(server.port, &token, "write_file", write.clone()), "limit_exceeded");
        let v = call(server.port, &token, "list_directory", json!({"project": "demo"}));
        ok(&v);
    }
    assert_eq!(snapshot(&sb.project), before, "something was written");
    // Space back: the engine carries on, and nothing it kept is damaged.
    std::fs::remove_file(filler).unwrap();
    ok(&call(server.port, &token, "read_file", read));
    server.stop();
    assert_sound(&sb);
}

#[test]
fn pe03_a_full_project_disk_refuses_writes_cleanly_and_keeps_serving_reads() {
    let sb = Sandbox::new();
    let small = sb.root().join("small");
    let _disk = Tmpfs::mount(&small, "2m");
    std::fs::write(small.join("keep.txt"), "precious\n").unwrap();
    sb.ok(&["project", "add", small.to_str().unwrap(), "--name", "demo", "--access", "read-write"]);
    let token = sb.token("t", &[]);
    let server = sb.serve();
    let port = server.port;
    let expected = hash_of(port, &token, "keep.txt");
    let writes = [
        ("write_file", json!({"project": "demo", "path": "new.txt", "content": "hello"})),
        (
            "write_file",
            json!({"project": "demo", "path": "keep.txt", "content": "changed\n",
                   "expected_hash": expected}),
        ),
        (
            "edit_file",
            json!({"project": "demo", "path": "keep.txt",
                   "edits": [{"old_text": "precious", "new_text": "gone"}]}),
        ),
    ];
    for full in [false, true] {
        let filler = full.then(|| fill(&small));
        for (tool, args) in &writes {
            let msg = refused(&call(port, &token, tool, args.clone()), "limit_exceeded");
            assert!(msg.contains("nothing was changed"), "{msg}");
        }
        let v = call(port, &token, "read_file", json!({"project": "demo", "path": "keep.txt"}));
        assert_eq!(ok(&v)["content"], "precious\n");
        ok(&call(port, &token, "search_text", json!({"project": "demo", "pattern": "precious"})));
        assert!(!small.join("new.txt").exists());
        if let Some(f) = filler {
            std::fs::remove_file(f).unwrap();
        }
        let names: Vec<String> = snapshot(&small).into_keys().collect();
        assert_eq!(names, ["keep.txt"], "a temp file was left behind");
    }
    server.stop();
    assert_sound(&sb);
}

// ----- a database locked by another process -------------------------------------------------

#[test]
fn pe03_a_database_locked_by_another_process_gives_a_clear_error_then_recovers() {
    let (sb, token) = executable("off");
    let server = sb.serve();
    let port = server.port;
    let read = json!({"project": "demo", "path": "README.md"});
    ok(&call(port, &token, "read_file", read.clone()));
    let db = rusqlite::Connection::open(sb.data.join("sluice.db")).unwrap();
    db.execute_batch("BEGIN EXCLUSIVE").unwrap();
    // Reads are answered (WAL readers do not wait for a writer).
    ok(&call(port, &token, "read_file", read.clone()));
    // A change needs its audit entry on disk before its result goes back: after the busy
    // timeout it gets a clear refusal, and nothing changes.
    let write = json!({"project": "demo", "path": "locked.txt", "content": "x"});
    let (_, v) = try_call(port, &token, "write_file", write.clone()).expect("an answer");
    let msg = refused(&v, "io");
    assert!(msg.contains("audit log") && msg.contains("nothing was changed"), "{msg}");
    assert!(!sb.project.join("locked.txt").exists(), "changed without an audit entry");
    // Reads still work meanwhile.
    ok(&call(port, &token, "read_file", read.clone()));
    db.execute_batch("COMMIT").unwrap();
    drop(db);
    // Released: everything works again, on the same engine.
    ok(&call(port, &token, "write_file", write));
    assert_eq!(std::fs::read_to_string(sb.project.join("locked.txt")).unwrap(), "x");
    ok(&call(port, &token, "read_file", read));
    server.stop();
    assert_sound(&sb);
}
