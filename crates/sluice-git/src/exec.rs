//! Running the system git so that no repository-controlled code can run.
//!
//! Layers, each independent of the others:
//! - git is found once, by absolute path, on the absolute entries of the process `PATH` (never
//!   the project folder), and must be at least 2.40 (for `--attr-source`);
//! - the environment is cleared and rebuilt: no system or global config, a private empty HOME,
//!   no pager, no prompts, no lazy fetches, no optional index writes, explicit `GIT_DIR` and
//!   `GIT_WORK_TREE` so no parent repository is ever discovered;
//! - `-c` overrides disable every config key known to run a program (fsmonitor, hooks, pager,
//!   external diff, signature programs, transports, credential helpers);
//! - attributes are read from the empty tree (`--attr-source`), and every `filter.<name>`,
//!   `diff.<name>` and `merge.<name>` driver the repository configures is neutralised by name
//!   through `GIT_CONFIG_KEY_n` (unlike `-c`, it keeps names containing `=` intact);
//! - each invocation has a deadline and a stdout cap; the child is killed when either is hit.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{LazyLock, OnceLock};
use std::time::{Duration, Instant};

use regex::Regex;

use crate::{GitError, Repo};

/// `--attr-source` needs git 2.40.
const MIN_VERSION: (u32, u32) = (2, 40);
/// The empty tree, per object format: attributes are read from it, i.e. from nowhere in-tree.
const EMPTY_TREE_SHA1: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const EMPTY_TREE_SHA256: &str = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";
/// Deadline for any one git invocation.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Stderr kept for the error message; the rest is drained and dropped.
const STDERR_CAP: usize = 64 * 1024;
/// Cap on `git config --list` output (drivers enumeration).
const CONFIG_CAP: usize = 4 * 1024 * 1024;

#[cfg(windows)]
const NULL_DEVICE: &str = "NUL";
#[cfg(not(windows))]
const NULL_DEVICE: &str = "/dev/null";

/// The git executable chosen at first use, with the trusted `PATH` handed to it.
pub(crate) struct GitTool {
    exe: PathBuf,
    path_env: OsString,
    pub(crate) version: String,
}

static TOOL: OnceLock<Result<GitTool, String>> = OnceLock::new();

/// The git tool, resolved and version-checked once per process.
pub(crate) fn tool() -> Result<&'static GitTool, GitError> {
    TOOL.get_or_init(resolve_tool).as_ref().map_err(|msg| GitError::NotAGitRepository(msg.clone()))
}

fn resolve_tool() -> Result<GitTool, String> {
    // Only absolute PATH entries: a relative entry (".", "bin") would resolve against whatever
    // directory Sluice runs in, which could be a project.
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).filter(|d| d.is_absolute()).collect())
        .unwrap_or_default();
    let name = if cfg!(windows) { "git.exe" } else { "git" };
    let exe = dirs
        .iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| "git is not installed (no `git` on the trusted PATH)".to_owned())?;
    let path_env = std::env::join_paths(&dirs).map_err(|_| "the PATH is malformed".to_owned())?;
    let home = tempfile::tempdir().map_err(|_| "cannot create a private temp folder".to_owned())?;
    let mut cmd = Command::new(&exe);
    cmd.arg("--version")
        .env_clear()
        .env("PATH", &path_env)
        .env("HOME", home.path())
        .env("LC_ALL", "C")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", NULL_DEVICE)
        .current_dir(home.path());
    add_platform_env(&mut cmd);
    let out = cmd.output().map_err(|_| "git could not be started".to_owned())?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let version = text.strip_prefix("git version ").unwrap_or(&text).to_owned();
    match parse_version(&version) {
        Some(v) if v >= MIN_VERSION => Ok(GitTool { exe, path_env, version }),
        Some(_) => Err(format!(
            "git {version} is too old: Sluice's git tools need git {}.{} or newer (for \
             --attr-source, which keeps repository attributes from selecting filters)",
            MIN_VERSION.0, MIN_VERSION.1
        )),
        None => Err("the installed git did not report a recognisable version".to_owned()),
    }
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok()?;
    Some((major, minor))
}

#[cfg(windows)]
fn add_platform_env(cmd: &mut Command) {
    // Windows programs need SystemRoot to load system libraries; it is not a secret.
    for key in ["SystemRoot", "SYSTEMROOT"] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
}

#[cfg(not(windows))]
fn add_platform_env(_cmd: &mut Command) {}

/// The user's home folder, where their global git config lives.
fn user_home() -> Option<OsString> {
    let key = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(key).filter(|h| Path::new(h).is_absolute())
}

/// Config overrides passed with `-c` on every invocation. `-c` is the command-line scope, which
/// beats every config file (repository, worktree, includes).
fn fixed_overrides() -> Vec<String> {
    let null = NULL_DEVICE;
    let mut v: Vec<String> = [
        // Programs git would otherwise run.
        "core.fsmonitor=false".to_owned(),
        format!("core.hooksPath={null}"),
        "core.pager=cat".to_owned(),
        "core.sshCommand=".to_owned(),
        "core.gitProxy=".to_owned(),
        "core.askPass=".to_owned(),
        "core.alternateRefsCommand=".to_owned(),
        "credential.helper=".to_owned(),
        "diff.external=".to_owned(),
        "gpg.program=".to_owned(),
        "gpg.openpgp.program=".to_owned(),
        "gpg.x509.program=".to_owned(),
        "gpg.ssh.program=".to_owned(),
        "gpg.ssh.defaultKeyCommand=".to_owned(),
        "log.showSignature=false".to_owned(),
        // No transport at all: also stops lazy fetches of partial clones.
        "protocol.allow=never".to_owned(),
        // Files the repository config could point anywhere on disk.
        format!("core.attributesFile={null}"),
        format!("diff.orderFile={null}"),
        "log.mailmap=false".to_owned(),
        // Read-only means read-only: no index or cache rewrites, no background maintenance.
        "core.untrackedCache=false".to_owned(),
        "core.splitIndex=false".to_owned(),
        "gc.auto=0".to_owned(),
        "maintenance.auto=false".to_owned(),
        // Never enter submodules: each has its own config we have not vetted.
        "submodule.recurse=false".to_owned(),
        "diff.ignoreSubmodules=all".to_owned(),
        "diff.submodule=short".to_owned(),
        "status.submoduleSummary=false".to_owned(),
        // A stable output format for the parsers.
        "core.quotePath=true".to_owned(),
        "color.ui=false".to_owned(),
        "diff.noprefix=false".to_owned(),
        "diff.mnemonicPrefix=false".to_owned(),
        "diff.relative=false".to_owned(),
        "diff.colorMoved=no".to_owned(),
        "log.showRoot=true".to_owned(),
        "log.follow=false".to_owned(),
        "i18n.logOutputEncoding=UTF-8".to_owned(),
    ]
    .to_vec();
    // A specific `protocol.<name>.allow` beats `protocol.allow`, so name the known ones too.
    for proto in ["file", "git", "ssh", "http", "https", "ext"] {
        v.push(format!("protocol.{proto}.allow=never"));
    }
    v
}

/// What one git invocation returned.
pub(crate) struct Output {
    pub(crate) stdout: Vec<u8>,
    /// The stdout cap was hit: `stdout` holds the first `cap` bytes and git was stopped.
    pub(crate) truncated: bool,
}

/// One hardened invocation against `repo`.
pub(crate) struct Invocation<'a> {
    repo: &'a Repo,
    args: Vec<OsString>,
    stdout_cap: usize,
    timeout: Duration,
    /// `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` pairs (driver neutralisation).
    env_overrides: Vec<(String, String)>,
    attr_source: Option<&'static str>,
    /// Variables set for this invocation only (a commit's author and committer).
    env: Vec<(&'static str, String)>,
    /// Read the user's own global git config (their identity and signing choice): the real
    /// HOME instead of a private one. Only `git config --list` runs this way.
    user_config: bool,
}

impl<'a> Invocation<'a> {
    /// An invocation with the repository's drivers enumerated and neutralised.
    pub(crate) fn new(repo: &'a Repo, stdout_cap: usize) -> Result<Invocation<'a>, GitError> {
        let setup = repo_setup(repo)?;
        Ok(Invocation {
            repo,
            args: Vec::new(),
            stdout_cap,
            timeout: DEFAULT_TIMEOUT,
            env_overrides: setup.overrides,
            attr_source: Some(setup.empty_tree),
            env: Vec::new(),
            user_config: false,
        })
    }

    /// An invocation that changes the repository (`write.rs`). The same hardening, except that
    /// attributes are the working tree's (line-ending and encoding conversions must match what
    /// the user's git does; every driver an attribute could select is still neutralised).
    pub(crate) fn for_write(repo: &'a Repo, stdout_cap: usize) -> Result<Invocation<'a>, GitError> {
        let mut inv = Invocation::new(repo, stdout_cap)?;
        inv.attr_source = None;
        Ok(inv)
    }

    /// `git config --list -z` as the user's git sees it (repository, worktree and the user's
    /// global config with its includes; never the system's): where a commit's identity and
    /// the user's signing choice come from. Reading config runs nothing.
    pub(crate) fn user_config(repo: &'a Repo) -> Invocation<'a> {
        Invocation {
            repo,
            args: ["config", "--list", "-z"].iter().map(OsString::from).collect(),
            stdout_cap: CONFIG_CAP,
            timeout: DEFAULT_TIMEOUT,
            env_overrides: Vec::new(),
            attr_source: None,
            env: Vec::new(),
            user_config: true,
        }
    }

    pub(crate) fn env(&mut self, key: &'static str, value: impl Into<String>) -> &mut Self {
        self.env.push((key, value.into()));
        self
    }

    pub(crate) fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(a.as_ref().to_owned());
        self
    }

    pub(crate) fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, it: I) -> &mut Self {
        for a in it {
            self.arg(a);
        }
        self
    }

    pub(crate) fn run(&self) -> Result<Output, GitError> {
        run(self)
    }
}

/// What we learn from the repository's config before running the real command.
struct RepoSetup {
    overrides: Vec<(String, String)>,
    empty_tree: &'static str,
}

/// Lists the repository's config keys (under the same hardening, so includes are followed but
/// nothing runs) and builds an empty override for every program-valued driver key.
fn repo_setup(repo: &Repo) -> Result<RepoSetup, GitError> {
    let listing = Invocation {
        repo,
        args: ["config", "--list", "-z"].iter().map(OsString::from).collect(),
        stdout_cap: CONFIG_CAP,
        timeout: DEFAULT_TIMEOUT,
        env_overrides: Vec::new(),
        // `git config` reads no attributes, and the empty tree depends on the object format we
        // are about to learn.
        attr_source: None,
        env: Vec::new(),
        user_config: false,
    }
    .run()?;
    if listing.truncated {
        return Err(GitError::LimitExceeded("the repository's git config is too large".into()));
    }
    let (overrides, sha256) = driver_overrides(&listing.stdout);
    Ok(RepoSetup {
        overrides,
        empty_tree: if sha256 { EMPTY_TREE_SHA256 } else { EMPTY_TREE_SHA1 },
    })
}

/// From `git config --list -z` output (`key\nvalue\0`…), the neutralising overrides and whether
/// the repository uses SHA-256 objects.
///
/// Empty values were checked against git's behaviour (see the integration tests):
/// - `filter.<d>.clean/smudge/process = ""` disables the filter, but with
///   `filter.<d>.required = true` git then refuses ("clean filter failed"), so `required` is
///   forced to false;
/// - `diff.<d>.command/textconv = ""` does *not* disable the driver: git tries to run an empty
///   command and fails ("cannot run"). Nothing runs, and `--no-ext-diff --no-textconv` on every
///   diff keep git from consulting them at all; the empty values are a fail-closed tripwire for
///   any code path that would ignore those flags;
/// - `merge.<d>.driver = ""` likewise fails closed (no merge ever runs here).
pub(crate) fn driver_overrides(listing: &[u8]) -> (Vec<(String, String)>, bool) {
    let mut overrides = Vec::new();
    let mut sha256 = false;
    let mut push = |key: String, value: &str| {
        if !overrides.iter().any(|(k, _)| *k == key) {
            overrides.push((key, value.to_owned()));
        }
    };
    for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let record = String::from_utf8_lossy(record);
        let (key, value) = record.split_once('\n').unwrap_or((&record, ""));
        if key == "extensions.objectformat" && value.eq_ignore_ascii_case("sha256") {
            sha256 = true;
        }
        // Section and variable names are case-insensitive and listed lower-cased; the
        // subsection (the driver name) sits between the first and the last dot.
        let (Some(first), Some(last)) = (key.find('.'), key.rfind('.')) else { continue };
        if first == last {
            continue;
        }
        let (section, driver) = (&key[..first], &key[first + 1..last]);
        match section {
            "filter" => {
                for var in ["clean", "smudge", "process"] {
                    push(format!("filter.{driver}.{var}"), "");
                }
                push(format!("filter.{driver}.required"), "false");
            }
            "diff" => {
                for var in ["command", "textconv"] {
                    push(format!("diff.{driver}.{var}"), "");
                }
            }
            "merge" => push(format!("merge.{driver}.driver"), ""),
            // A commit could run a trailer's command; none is ever asked for, but a fail-closed
            // tripwire costs nothing.
            "trailer" => {
                for var in ["command", "cmd"] {
                    push(format!("trailer.{driver}.{var}"), "");
                }
            }
            _ => {}
        }
    }
    (overrides, sha256)
}

fn run(inv: &Invocation<'_>) -> Result<Output, GitError> {
    let tool = tool()?;
    // A private, empty HOME per invocation: no ~/.gitconfig, ~/.config/git/* or credential
    // stores are read, and nothing git writes there survives.
    let home = tempfile::tempdir()
        .map_err(|_| GitError::Internal("cannot create a private temp folder for git".into()))?;
    let mut cmd = Command::new(&tool.exe);
    cmd.arg("--no-pager");
    if let Some(tree) = inv.attr_source {
        cmd.arg(format!("--attr-source={tree}"));
    }
    for o in fixed_overrides() {
        cmd.arg("-c").arg(o);
    }
    cmd.args(&inv.args);
    cmd.env_clear().env("PATH", &tool.path_env);
    match (inv.user_config, user_home()) {
        (true, Some(user)) => {
            cmd.env("HOME", user);
            if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME") {
                cmd.env("XDG_CONFIG_HOME", xdg);
            }
        }
        _ => {
            cmd.env("HOME", home.path())
                .env("XDG_CONFIG_HOME", home.path())
                .env("GIT_CONFIG_GLOBAL", NULL_DEVICE);
        }
    }
    cmd.env("GIT_DIR", inv.repo.git_dir()).env("GIT_WORK_TREE", inv.repo.root());
    if let Some(common) = inv.repo.common_dir() {
        cmd.env("GIT_COMMON_DIR", common);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_LITERAL_PATHSPECS", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("LC_ALL", "C")
        .env("GIT_CONFIG_COUNT", inv.env_overrides.len().to_string());
    for (idx, (key, value)) in inv.env_overrides.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{idx}"), key).env(format!("GIT_CONFIG_VALUE_{idx}"), value);
    }
    cmd.envs(inv.env.iter().map(|(k, v)| (k, v)));
    add_platform_env(&mut cmd);
    cmd.current_dir(inv.repo.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child =
        cmd.spawn().map_err(|_| GitError::Internal("git could not be started".into()))?;
    let captured = capture(&mut child, inv.stdout_cap, inv.timeout);
    let (stdout, truncated, stderr) = match captured {
        Ok(c) => c,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    let status = wait_until(&mut child, Instant::now() + inv.timeout)?;
    // When we stopped git ourselves its exit status says nothing about the request.
    if !truncated && !status.success() {
        return Err(GitError::GitFailed(sanitize_stderr(&stderr, inv.repo, home.path())));
    }
    Ok(Output { stdout, truncated })
}

enum Captured {
    Stdout(Vec<u8>, bool),
    Stderr(Vec<u8>),
    ReadFailed,
}

/// Reads both pipes on helper threads (so neither can fill up and block git) until both close,
/// the stdout cap is hit, or the deadline passes. Returns `(stdout, truncated, stderr)`.
fn capture(
    child: &mut Child,
    cap: usize,
    timeout: Duration,
) -> Result<(Vec<u8>, bool, Vec<u8>), GitError> {
    let deadline = Instant::now() + timeout;
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take();
    let err = child.stderr.take();
    if let Some(out) = out {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_stdout(out, cap));
        });
    }
    if let Some(err) = err {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_stderr(err));
        });
    }
    drop(tx);
    let (mut stdout, mut stderr) = (None, None);
    while stdout.is_none() || stderr.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Captured::Stdout(data, over)) => {
                if over {
                    // Enough output: stop git now rather than let it work for nothing.
                    let _ = child.kill();
                }
                stdout = Some((data, over));
            }
            Ok(Captured::Stderr(data)) => stderr = Some(data),
            Ok(Captured::ReadFailed) => {
                return Err(GitError::Internal("reading git's output failed".into()));
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(GitError::LimitExceeded(format!(
                    "git did not finish within {} seconds; narrow the request (a path, a \
                     smaller max_count or a shorter range)",
                    timeout.as_secs()
                )));
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let (stdout, truncated) = stdout.unwrap_or_default();
    Ok((stdout, truncated, stderr.unwrap_or_default()))
}

fn read_stdout(mut pipe: ChildStdout, cap: usize) -> Captured {
    let mut data = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return Captured::Stdout(data, false),
            Ok(n) => {
                data.extend_from_slice(&buf[..n]);
                if data.len() > cap {
                    data.truncate(cap);
                    return Captured::Stdout(data, true);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Captured::ReadFailed,
        }
    }
}

fn read_stderr(mut pipe: ChildStderr) -> Captured {
    let mut data = Vec::new();
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return Captured::Stderr(data),
            Ok(n) => {
                let keep = n.min(STDERR_CAP.saturating_sub(data.len()));
                data.extend_from_slice(&buf[..keep]);
            }
        }
    }
}

/// Waits for the child to exit. Both pipes are closed by now, so git is exiting; the short
/// polling only guards against a child that closed its pipes but lingers, and it is bounded
/// by the deadline, after which the child is killed.
fn wait_until(child: &mut Child, deadline: Instant) -> Result<std::process::ExitStatus, GitError> {
    let failed = || GitError::Internal("waiting for git failed".into());
    loop {
        if let Some(status) = child.try_wait().map_err(|_| failed())? {
            return Ok(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            return child.wait().map_err(|_| failed());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

static ABSOLUTE_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(^|[\s'"(=`])(/[^\s'"`)]*|[A-Za-z]:[\\/][^\s'"`)]*|\\\\[^\s'"`)]+)"#)
        .expect("absolute path pattern")
});

/// Turns git's stderr into a short message for the model: the project root becomes `.`, any
/// other absolute path becomes `<path>`, known secret formats are redacted, and only the first
/// few meaningful lines are kept.
fn sanitize_stderr(stderr: &[u8], repo: &Repo, home: &Path) -> String {
    let mut text = String::from_utf8_lossy(stderr).into_owned();
    let mut roots = vec![repo.root().to_path_buf()];
    if let Ok(canonical) = repo.root().canonicalize() {
        roots.push(canonical);
    }
    // Longest first, so a root that is a prefix of another does not leave a fragment behind.
    roots.sort_by_key(|r| std::cmp::Reverse(r.as_os_str().len()));
    for root in &roots {
        let root = root.to_string_lossy();
        if !root.is_empty() {
            text = text.replace(root.as_ref(), ".");
            text = text.replace(&root.replace('\\', "/"), ".");
        }
    }
    let home = home.to_string_lossy();
    if !home.is_empty() {
        text = text.replace(home.as_ref(), "~");
    }
    let text = ABSOLUTE_PATH.replace_all(&text, "$1<path>");
    let mut lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let important: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .collect();
    if !important.is_empty() {
        lines = important;
    }
    lines.truncate(4);
    let mut message = lines.join("\n");
    if message.is_empty() {
        message = "git failed without a message".to_owned();
    }
    if message.len() > 500 {
        let mut end = 500;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    sluice_core::redact::redact(&message).into_owned()
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::{capture, driver_overrides, parse_version, sanitize_stderr, tool, wait_until};
    use crate::GitError;

    fn git(args: &[&str], stdin: Stdio) -> std::process::Child {
        let tool = tool().unwrap();
        Command::new(&tool.exe)
            .args(args)
            .env_clear()
            .env("PATH", &tool.path_env)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    #[test]
    fn stdout_cap_stops_git_and_keeps_the_prefix() {
        let mut child = git(&["help", "-a"], Stdio::null());
        let (out, truncated, _) = capture(&mut child, 100, Duration::from_secs(600)).unwrap();
        assert!(truncated);
        assert_eq!(out.len(), 100);
        wait_until(&mut child, Instant::now() + Duration::from_secs(600)).unwrap();
    }

    #[test]
    fn deadline_reports_limit_exceeded() {
        // `hash-object --stdin` waits for a stdin that this test never closes.
        let mut child = git(&["hash-object", "--stdin"], Stdio::piped());
        let err = capture(&mut child, 1000, Duration::from_millis(50)).unwrap_err();
        assert!(matches!(err, GitError::LimitExceeded(_)), "{err:?}");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn stderr_is_sanitized() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join(".git")).unwrap();
        let repo = crate::Repo::open(root.path()).unwrap();
        let home = std::path::Path::new("/tmp/private-home");
        let stderr = format!(
            "hint: noise\nfatal: cannot read '{}/.git/HEAD' near /etc/passwd and C:\\Users\\x \
             key AKIAABCDEFGHIJKLMNOP in /tmp/private-home/x\n",
            root.path().display()
        );
        let msg = sanitize_stderr(stderr.as_bytes(), &repo, home);
        assert_eq!(
            msg,
            "fatal: cannot read './.git/HEAD' near <path> and <path> key [redacted:aws-access-key] \
             in ~/x"
        );
    }

    #[test]
    fn versions() {
        assert_eq!(parse_version("2.47.3"), Some((2, 47)));
        assert_eq!(parse_version("2.45.1.windows.1"), Some((2, 45)));
        assert_eq!(parse_version("2.39.5 (Apple Git-154)"), Some((2, 39)));
        assert_eq!(parse_version("nonsense"), None);
    }

    #[test]
    fn drivers_are_neutralised_by_exact_name() {
        let listing = b"core.bare\nfalse\0filter.a=b.c.clean\ntouch x\0diff.y.textconv\nz\0\
                        diff.external\nq\0merge.m.driver\nd\0extensions.objectformat\nsha256\0";
        let (o, sha256) = driver_overrides(listing);
        assert!(sha256);
        let has = |k: &str, v: &str| o.iter().any(|(kk, vv)| kk == k && vv == v);
        assert!(has("filter.a=b.c.clean", ""));
        assert!(has("filter.a=b.c.process", ""));
        assert!(has("filter.a=b.c.required", "false"));
        assert!(has("diff.y.textconv", ""));
        assert!(has("diff.y.command", ""));
        assert!(has("merge.m.driver", ""));
        assert!(!o.iter().any(|(k, _)| k.starts_with("diff.external")));
    }
}
