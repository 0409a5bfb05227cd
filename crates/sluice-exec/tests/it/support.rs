//! Shared fixtures: a project folder with private state beside it, resolved commands, job
//! requests, deadline polling and a /proc scan for survivors.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sluice_exec::{
    JobRequest, Network, ResolvedCommand, ResourceLimits, Sandbox, SandboxPolicy, TrustedPath,
};

pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["project", "state", "outside"] {
            std::fs::create_dir(dir.path().join(sub)).expect("mkdir");
        }
        Fixture { dir }
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("project")).expect("canonical")
    }

    pub fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    pub fn sandbox(&self, network: Network) -> Sandbox {
        Sandbox {
            project_root: self.root(),
            state_dir: self.dir.path().join("state"),
            hidden: Vec::new(),
            network,
            policy: SandboxPolicy::Require,
            namespaces: true,
            limits: ResourceLimits::default(),
            exposure: Default::default(),
            shield: None,
        }
    }

    pub fn request(&self, program: &str, args: &[&str]) -> JobRequest {
        JobRequest {
            project: "proj_test".into(),
            command: command(program, args),
            sandbox: self.sandbox(Network::Off),
            path: TrustedPath::from_env(&[self.root()]),
            data_dir: None,
            secrets: Vec::new(),
            owner: None,
            interactive: None,
            publish: Vec::new(),
            checkpoint: None,
            shown_as: None,
        }
    }
}

pub fn command(program: &str, args: &[&str]) -> ResolvedCommand {
    let path = TrustedPath::from_env(&[]);
    ResolvedCommand {
        program: path.resolve(program).expect("program on PATH"),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        cwd: String::new(),
        env: Vec::new(),
        timeout: None,
    }
}

/// A marker unique to one test, to find that test's processes by their argv.
pub fn marker() -> String {
    let n = u64::from_le_bytes(sluice_core::random_bytes::<8>()) % 1_000_000_000;
    format!("3600.{n:09}")
}

/// Polls `f` until it returns `Some`, failing after `limit`.
pub fn wait_for<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::yield_now();
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Live (non-zombie) processes whose command line contains `marker`, excluding this process.
pub fn survivors(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let base = Path::new("/proc").join(pid.to_string());
        let cmdline = std::fs::read(base.join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(base.join("stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next());
        if !matches!(state, Some("Z") | Some("X") | None) {
            out.push(pid);
        }
    }
    out
}

/// The escape tree: a background sleep, a busy loop, a setsid'd sleep and
/// a double-forked setsid'd sleep; prints "ready" once all are started.
pub fn escape_tree_script(marker: &str) -> String {
    format!(
        "sleep {marker} & \
         (while :; do :; done) & \
         setsid sleep {marker} & \
         (setsid sleep {marker} &) ; \
         echo ready; wait"
    )
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}
