//! The red-team suite (docs/THREATS.md, issue 18): each case performed against a running
//! `sluice serve`, over Streamable HTTP and over `sluice stdio` where the case applies, inside
//! one rig with a canary wherever a secret lives — a fake `~/.ssh/id_rsa` and a canary file in
//! a temporary HOME, a variable in the engine's environment, a file in the data folder, the
//! install secret itself, the client's own token, a `.env` in the project and a file in a
//! sibling folder sharing the project's prefix.
//!
//! After every case, [`Rig::finish`] checks the universal condition: no canary in any response
//! (job output included), in the engine's log or in an audit row, and no file outside the
//! project changed (hashed before and after). Tests are named after the case id, so
//! `cargo xtask attack` finds them (with the id-named tests of the other crates); cases with a
//! long form (races, timing) run longer with `SLUICE_ATTACK_LONG=1`, which
//! `cargo xtask attack --long` sets.

mod code;
mod exec;
mod paths;
mod secrets;
mod stop;
mod timing;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::*;

/// How a case reaches the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Http,
    Stdio,
}

pub const BOTH: [Via; 2] = [Via::Http, Via::Stdio];

/// The system's Python by its path: a version manager's shim on the PATH of whoever runs the
/// tests lives outside the rig's HOME, so a job could not see it.
pub const PYTHON: &str = "/usr/bin/python3";

pub use sluice_core::attack_scale as scale;

pub struct Rig {
    pub sb: Sandbox,
    /// Runs every `sluice` (engine, CLI, bridge) as `nobody` instead of the test's user.
    unprivileged: bool,
    pub home: PathBuf,
    pub token: String,
    pub port: u16,
    server: Child,
    log: PathBuf,
    canaries: Vec<String>,
    before: BTreeMap<PathBuf, String>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Rig {
    /// A rig whose "demo" project is read-write with execution `exec` (`off`, `safe`,
    /// `project`, `any`).
    pub fn new(exec: &str) -> Rig {
        Rig::build(exec, false, None)
    }

    /// [`Rig::new`] with the engine's PATH set (programs the case needs, as a user would have
    /// them installed).
    pub fn with_path(exec: &str, path: &str) -> Rig {
        Rig::build(exec, false, Some(path))
    }

    /// [`Rig::new`] with Sluice running as `nobody`, its files owned by it: for guards that a
    /// root engine could pass only because of root (tests run as root here; users run Sluice as
    /// themselves).
    pub fn unprivileged(exec: &str) -> Rig {
        Rig::build(exec, true, None)
    }

    fn build(exec: &str, unprivileged: bool, path: Option<&str>) -> Rig {
        let sb = Sandbox::new();
        let root = sb.root();
        let home = root.join("home");
        let tag = sb.canary.trim_start_matches("CANARY-").to_owned();
        let canaries = vec![
            sb.canary.clone(),
            format!("RTHOMESSH{tag}"),
            format!("RTHOMEFILE{tag}"),
            format!("RTENV{tag}"),
            format!("RTDATA{tag}"),
        ];
        for (rel, text) in [
            (".ssh/id_rsa", &canaries[1]),
            (&format!("rt_canary_{tag}"), &canaries[2]),
            (".bashrc", &canaries[2]),
        ] {
            let p = home.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        if unprivileged {
            chown_tree(&root, NOBODY);
        }
        let project = sb.project.to_str().unwrap().to_owned();
        let cmd = |args: &[&str]| {
            let out = as_user(sb.cmd(), unprivileged).env("HOME", &home).args(args).output();
            let out = out.unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap()
        };
        cmd(&["project", "add", &project, "--name", "demo", "--access", "read-write"]);
        cmd(&["project", "set", "demo", "--exec", exec]);
        let token = cmd(&["token", "create", "--label", "attacker", "--profile", "full"])
            .split_whitespace()
            .find(|w| w.starts_with("slc_") && w.len() == 56)
            .unwrap()
            .to_owned();
        std::fs::write(sb.data.join("rt_canary.txt"), &canaries[4]).unwrap();
        let secret = std::fs::read_to_string(sb.data.join("install-secret")).unwrap();
        let mut canaries = canaries;
        // The hex itself, without the records (sealing, the audit log) after it.
        canaries.push(secret.trim().split(':').next().unwrap().to_owned());
        canaries.push(token.clone());

        let port = free_port();
        let log = root.join("serve.log");
        let mut serve = as_user(sb.cmd(), unprivileged);
        if let Some(path) = path {
            serve.env("PATH", path);
        }
        let server = serve
            .env("HOME", &home)
            .env("RT_CANARY", &canaries[3])
            .env("RUST_LOG", "debug")
            .args(["serve", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sluice serve did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        let before = outside_hashes(&root, &sb.project, &sb.data, &log);
        Rig {
            sb,
            unprivileged,
            home,
            token,
            port,
            server,
            log,
            canaries,
            before,
            seen: Arc::default(),
        }
    }

    /// The engine's process id (a job must not see it, let alone its memory or environment).
    pub fn engine_pid(&self) -> u32 {
        self.server.id()
    }

    pub fn project(&self) -> &Path {
        &self.sb.project
    }

    /// `sluice ARGS` as the user, with the rig's HOME.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// One `tools/call`, its whole JSON-RPC response recorded for the canary scan.
    pub fn call(&self, via: Via, tool: &str, args: Value) -> Value {
        self.send(via, &call_body(tool, args))
    }

    /// One JSON-RPC request with id 2 (any method, any `_meta`), its response recorded.
    pub fn send(&self, via: Via, body: &str) -> Value {
        let v = match via {
            Via::Http => loop {
                let r = post(self.port, &bearer(&self.token), body);
                // A well-behaved client under the per-token rate limit: wait as told, retry.
                if r.status == 429 {
                    let wait = r.header("retry-after").and_then(|s| s.parse().ok()).unwrap_or(1);
                    std::thread::sleep(Duration::from_secs(wait));
                    continue;
                }
                assert_eq!(r.status, 200, "{}", r.body);
                break r.json();
            },
            // The bridge passes the rate limit on as a JSON-RPC error: wait and retry alike.
            Via::Stdio => loop {
                let v = self.stdio(body);
                if v["error"]["code"] != json!(-31429) {
                    break v;
                }
                std::thread::sleep(Duration::from_secs(1));
            },
        };
        self.seen.lock().unwrap().push(v.to_string());
        v
    }

    /// A call that must be refused: returns `(code, message)`.
    pub fn denied(&self, via: Via, tool: &str, args: Value) -> (String, String) {
        let v = self.call(via, tool, args.clone());
        let (out, err) = result(&v);
        assert!(err, "{via:?} {tool} {args} was not refused: {v}");
        (
            out["code"].as_str().unwrap_or_default().to_owned(),
            out["message"].as_str().unwrap_or_default().to_owned(),
        )
    }

    /// A call that asks: approved through the CLI as the user would, then its response.
    pub fn approved(&self, via: Via, tool: &str, args: Value) -> Value {
        self.decided(via, tool, args, "approve")
    }

    /// A call that asks, decided `approve` or `deny` through the CLI.
    pub fn decided(&self, via: Via, tool: &str, args: Value, decision: &str) -> Value {
        self.decided_body(via, &call_body(tool, args), decision)
    }

    /// [`Rig::decided`] for any request body.
    pub fn decided_body(&self, via: Via, body: &str, decision: &str) -> Value {
        std::thread::scope(|s| {
            let call = s.spawn(|| self.send(via, body));
            let pending = wait_pending(&self.sb);
            self.cli(&["approvals", decision, pending["id"].as_str().unwrap()]);
            call.join().unwrap()
        })
    }

    /// `sluice` as the rig's user, with the rig's HOME.
    pub fn cmd(&self) -> Command {
        let mut cmd = as_user(self.sb.cmd(), self.unprivileged);
        cmd.env("HOME", &self.home);
        cmd
    }

    fn stdio(&self, body: &str) -> Value {
        let mut child = stdio_bridge(self.cmd(), &self.token);
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        writeln!(stdin, "{}", initialize_body()).unwrap();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
        writeln!(stdin, "{body}").unwrap();
        let reply = loop {
            let line = lines.next().expect("sluice stdio closed early").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            if v["id"] == json!(2) {
                break v;
            }
        };
        drop(stdin);
        let _ = child.wait();
        reply
    }

    /// Everything an attacker could read back: the responses so far, the engine's log, the
    /// audit rows.
    fn observed(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> =
            self.seen.lock().unwrap().iter().map(|s| ("response".to_owned(), s.clone())).collect();
        out.push(("engine log".into(), std::fs::read_to_string(&self.log).unwrap_or_default()));
        out.push(("audit".into(), self.cli(&["audit", "list", "--json", "--limit", "10000"])));
        out
    }

    /// The universal pass condition; `extra` are the case's own canaries.
    pub fn finish(self, extra: &[&str]) {
        let observed = self.observed();
        let canaries = self.canaries.iter().map(String::as_str).chain(extra.iter().copied());
        for canary in canaries {
            for (what, text) in &observed {
                if let Some(at) = text.find(canary) {
                    let around =
                        &text[at.saturating_sub(300)..(at + canary.len() + 100).min(text.len())];
                    panic!("a canary ({canary}) showed in the {what}: …{around}…");
                }
            }
        }
        let after = outside_hashes(&self.sb.root(), &self.sb.project, &self.sb.data, &self.log);
        for (path, hash) in &self.before {
            assert_eq!(
                after.get(path),
                Some(hash),
                "{} outside the project changed",
                path.display()
            );
        }
        for path in after.keys() {
            assert!(
                self.before.contains_key(path),
                "{} appeared outside the project",
                path.display()
            );
        }
        assert!(self.cli(&["audit", "verify"]).contains("intact"));
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

const NOBODY: u32 = 65534;

/// `cmd` as it is, or the same program run as `nobody` through `setpriv`.
pub fn as_user(cmd: Command, unprivileged: bool) -> Command {
    if !unprivileged {
        return cmd;
    }
    let mut wrapped = Command::new("setpriv");
    wrapped
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    wrapped
}

fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if std::fs::symlink_metadata(path).unwrap().is_dir() {
        for e in std::fs::read_dir(path).unwrap().flatten() {
            chown_tree(&e.path(), uid);
        }
    }
}

/// A content hash of every file and link under `root` except the project, the data folder and
/// the engine's log (which the engine writes to by design).
fn outside_hashes(
    root: &Path,
    project: &Path,
    data: &Path,
    log: &Path,
) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p == project || p == data || p == log {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_symlink() {
                out.insert(p.clone(), format!("-> {}", std::fs::read_link(&p).unwrap().display()));
            } else if meta.is_dir() {
                out.insert(p.clone(), "dir".into());
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap_or_default();
                out.insert(p, format!("{:?}:{}", meta.permissions(), digest(&bytes)));
            }
        }
    }
    out
}

/// SipHash and the length: the bytes are not chosen to collide, only changed or not.
fn digest(bytes: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    format!("{:016x}{}", h.finish(), bytes.len())
}

/// The message without the path it names (as given, or quoted), so denials of different paths
/// compare by their wording alone.
pub fn wording(message: &str, path: &str) -> String {
    message.replace(&format!("{path:?}"), "…").replace(path, "…")
}
