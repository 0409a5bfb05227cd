//! A sandbox per test: a data folder, an authorized project with files and a git repository,
//! canaries outside it, and helpers to run the binary and talk raw HTTP to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_sluice");

pub struct Sandbox {
    pub tmp: tempfile::TempDir,
    pub data: PathBuf,
    pub project: PathBuf,
    /// A sibling whose name starts with the project's (prefix-confusion bait).
    pub evil: PathBuf,
    pub canary: String,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().unwrap();
        let data = root.join("data");
        let project = root.join("proj");
        let evil = root.join("proj_evil");
        let canary = format!("CANARY-{}", std::process::id() as u64 * 7919 + rand_suffix());
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::create_dir_all(&evil).unwrap();
        std::fs::write(project.join("README.md"), "# Demo\nhello world\n").unwrap();
        std::fs::write(project.join("src/main.rs"), "fn main() {\n    println!(\"hello\");\n}\n")
            .unwrap();
        std::fs::write(project.join(".env"), format!("SECRET={canary}\n")).unwrap();
        std::fs::write(evil.join("x.txt"), &canary).unwrap();
        std::fs::write(root.join("outside.txt"), &canary).unwrap();
        git(&project, &["init", "-q", "-b", "main"]);
        git(&project, &["add", "README.md", "src/main.rs"]);
        git(&project, &["commit", "-q", "-m", "first commit"]);
        std::fs::write(project.join("README.md"), "# Demo\nhello world\nchanged\n").unwrap();
        Sandbox { tmp, data, project, evil, canary }
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    /// A home folder `name` in the sandbox whose `.gitconfig` is `gitconfig` (the user's git
    /// identity, which git writes use), as a `HOME` value for the server.
    pub fn user_home(&self, name: &str, gitconfig: &str) -> String {
        let home = self.root().join(name);
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join(".gitconfig"), gitconfig).unwrap();
        home.display().to_string()
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        c.env("SLUICE_DATA_DIR", &self.data)
            .env("SLUICE_SECRET_STORE", "file")
            .env_remove("SLUICE_TOKEN")
            .env_remove("RUST_LOG");
        c
    }

    /// Runs `sluice ARGS`, asserting success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("run sluice");
        assert!(
            out.status.success(),
            "sluice {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs `sluice ARGS`, asserting failure; returns stderr.
    pub fn err(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("run sluice");
        assert!(!out.status.success(), "sluice {args:?} unexpectedly succeeded");
        String::from_utf8(out.stderr).unwrap()
    }

    /// Writes the files `read_media` is tried on into `media/`: a 1×1 PNG (`dot.png`), a 64×48
    /// JPEG (`photo.jpg`), a 5000×4000 PNG (`shot.png`), a truncated PNG (`cut.png`), a PNG of
    /// a few dozen bytes declaring 100000×100000 pixels (`bomb.png`), 3000 bytes of `i % 251`
    /// (`blob.bin`) and a PNG the shield covers by name (`id_rsa.png`).
    pub fn add_media(&self) {
        use image::{ImageFormat, Rgb, RgbImage};
        let dir = self.project.join("media");
        std::fs::create_dir_all(&dir).unwrap();
        let encode = |img: RgbImage, format: ImageFormat| {
            let mut out = std::io::Cursor::new(Vec::new());
            image::DynamicImage::ImageRgb8(img).write_to(&mut out, format).unwrap();
            out.into_inner()
        };
        let pattern = |w, h| RgbImage::from_fn(w, h, |x, y| Rgb([x as u8, y as u8, (x ^ y) as u8]));
        let dot = encode(pattern(1, 1), ImageFormat::Png);
        std::fs::write(dir.join("dot.png"), &dot).unwrap();
        std::fs::write(dir.join("id_rsa.png"), &dot).unwrap();
        std::fs::write(dir.join("photo.jpg"), encode(pattern(64, 48), ImageFormat::Jpeg)).unwrap();
        let big = RgbImage::from_fn(5000, 4000, |x, y| Rgb([(x / 20) as u8, (y / 16) as u8, 99]));
        std::fs::write(dir.join("shot.png"), encode(big, ImageFormat::Png)).unwrap();
        let cut = encode(pattern(64, 64), ImageFormat::Png);
        std::fs::write(dir.join("cut.png"), &cut[..cut.len() / 2]).unwrap();
        std::fs::write(dir.join("bomb.png"), png_declaring(100_000, 100_000)).unwrap();
        let blob: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.join("blob.bin"), blob).unwrap();
    }

    /// Authorizes the project as "demo" and returns its id.
    pub fn add_project(&self) -> String {
        self.add_project_with(&[])
    }

    /// [`Sandbox::add_project`] with further `project add` options (`--access read-write`…).
    pub fn add_project_with(&self, extra: &[&str]) -> String {
        let mut args = vec!["project", "add", self.project.to_str().unwrap(), "--name", "demo"];
        args.extend_from_slice(extra);
        let out = self.ok(&args);
        out.split_whitespace().find(|w| w.starts_with("proj_")).expect("project id").to_owned()
    }

    /// Creates a token and returns its plaintext: `full` unless `extra` names a profile, so
    /// tests of what the projects' modes allow are not narrowed by the default (`review`).
    pub fn token(&self, label: &str, extra: &[&str]) -> String {
        let mut args = vec!["token", "create", "--label", label];
        args.extend_from_slice(extra);
        if !extra.contains(&"--profile") {
            args.extend_from_slice(&["--profile", "full"]);
        }
        let out = self.ok(&args);
        out.split_whitespace()
            .find(|w| w.starts_with("slc_") && w.len() == 56)
            .expect("token in output")
            .to_owned()
    }

    pub fn serve(&self) -> Server {
        Server::start(self, &[])
    }

    pub fn serve_with(&self, extra: &[&str]) -> Server {
        Server::start(self, extra)
    }

    /// `sluice serve` with extra environment (debug-build failpoints).
    pub fn serve_env(&self, env: &[(&str, &str)]) -> Server {
        Server::start_env(self, &[], env)
    }
}

/// A PNG whose header (with valid CRCs) declares `width`×`height` RGBA pixels, and whose data
/// is a few bytes: a decompression bomb.
pub fn png_declaring(width: u32, height: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8; 4], data: &[u8]| {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = png.len();
        png.extend_from_slice(kind);
        png.extend_from_slice(data);
        let crc = crc32(&png[start..]);
        png.extend_from_slice(&crc.to_be_bytes());
    };
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    chunk(b"IHDR", &ihdr);
    chunk(b"IDAT", &[0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]);
    chunk(b"IEND", &[]);
    png
}

fn rand_suffix() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    t.subsec_nanos() as u64
}

pub fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?}");
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A running `sluice serve`, killed on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Server {
    pub fn start(sb: &Sandbox, extra: &[&str]) -> Server {
        Server::start_env(sb, extra, &[])
    }

    pub fn start_env(sb: &Sandbox, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let port = free_port();
        let mut cmd = sb.cmd();
        cmd.args(["serve", "--port", &port.to_string()]).args(extra).envs(env.iter().copied());
        Server::spawn(cmd, port)
    }

    /// Starts `cmd`, a `sluice serve --port PORT` (possibly behind a wrapper that execs it),
    /// and waits until it says it is serving.
    pub fn spawn(mut cmd: Command, port: u16) -> Server {
        let mut child =
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn serve");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|_| {
            let mut err = String::new();
            let _ = child.kill();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("server did not become ready: {err}");
        });
        assert!(line.contains("serving"), "unexpected first line {line:?}");
        Server { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Stops the server as a service manager or a logout does (SIGTERM) and waits for its clean
    /// exit: everything it recorded, reads batched in the audit log included, is then on disk.
    pub fn stop(mut self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "sluice serve exited with {status} on SIGTERM");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cmd` (a `sluice` command) started as `sluice stdio` with `token`, its stdin and stdout piped.
pub fn stdio_bridge(mut cmd: Command, token: &str) -> Child {
    cmd.arg("stdio")
        .env("SLUICE_TOKEN", token)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sluice stdio")
}

/// A raw HTTP/1.1 exchange, so tests control every header byte (Host, duplicates, versions).
pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    pub fn json(&self) -> serde_json::Value {
        let body = self.body.trim();
        let text = if let Some(data) = body.lines().find_map(|l| l.strip_prefix("data: ")) {
            data
        } else {
            body
        };
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {body:?}"))
    }
}

pub fn raw(port: u16, request: &str) -> Reply {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // The server may answer and close before reading everything (e.g. 413): still read the answer.
    let _ = s.write_all(request.as_bytes());
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Reply { status, head: head.to_owned(), body }
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// A POST to /mcp with the given extra header lines (each ending in \r\n) and body.
pub fn post(port: u16, extra_headers: &str, body: &str) -> Reply {
    raw(
        port,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n{extra_headers}\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// A JSON-RPC `initialize` with protocol 2025-11-25.
pub fn initialize_body() -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "raw-test", "version": "0" }
        }
    })
    .to_string()
}

/// `tools/call` under 2025-11-25 (stateless: no session needed after initialize).
pub fn call_body(tool: &str, args: serde_json::Value) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": tool, "arguments": args }
    })
    .to_string()
}

pub fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
}

/// Sends a `tools/call` over a raw socket and returns the open connection, so a test can read
/// the response stream or close it mid-call.
pub fn open_call(port: u16, token: &str, body: &str) -> std::net::TcpStream {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{}Connection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        bearer(token),
        body.len()
    )
    .unwrap();
    s
}

/// Calls a tool over raw HTTP and returns the JSON-RPC response.
pub fn call(port: u16, token: &str, tool: &str, args: serde_json::Value) -> serde_json::Value {
    let r = post(port, &bearer(token), &call_body(tool, args));
    assert_eq!(r.status, 200, "{tool}: {}", r.body);
    r.json()
}

// ----- execution tools: results, approvals played through the CLI -------------------------
// (moved here from exec.rs so exec_tools.rs shares them)

/// A sandbox whose "demo" project is read-write with execution `exec`, and a token.
pub fn executable(exec: &str) -> (Sandbox, String) {
    let sb = Sandbox::new();
    sb.add_project_with(&["--access", "read-write", "--exec", exec]);
    let token = sb.token("runner", &[]);
    (sb, token)
}

pub fn result(v: &Value) -> (&Value, bool) {
    let r = &v["result"];
    (&r["structuredContent"], r["isError"] == json!(true))
}

pub fn ok(v: &Value) -> Value {
    let (out, err) = result(v);
    assert!(!err, "tool failed: {v}");
    out.clone()
}

pub fn refused(v: &Value, code: &str) -> String {
    let (out, err) = result(v);
    assert!(err, "tool unexpectedly succeeded: {v}");
    assert_eq!(out["code"], code, "{v}");
    out["message"].as_str().unwrap_or_default().to_owned()
}

pub fn call_async(
    port: u16,
    token: &str,
    tool: &str,
    args: Value,
) -> std::thread::JoinHandle<Value> {
    let token = token.to_owned();
    let tool = tool.to_owned();
    std::thread::spawn(move || call(port, &token, &tool, args))
}

pub fn pending(sb: &Sandbox) -> Vec<Value> {
    let list: Value = serde_json::from_str(&sb.ok(&["approvals", "list", "--json"])).unwrap();
    list.as_array().unwrap().iter().filter(|a| a["state"] == "pending").cloned().collect()
}

pub fn wait_pending(sb: &Sandbox) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(a) = pending(sb).into_iter().next() {
            return a;
        }
        assert!(Instant::now() < deadline, "no approval appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Calls a tool that asks, approving it through the CLI (with `extra` such as `--always`).
pub fn approved(
    sb: &Sandbox,
    port: u16,
    token: &str,
    tool: &str,
    args: Value,
    extra: &[&str],
) -> Value {
    let call = call_async(port, token, tool, args);
    let a = wait_pending(sb);
    let id = a["id"].as_str().unwrap();
    let mut argv = vec!["approvals", "approve", id];
    argv.extend_from_slice(extra);
    sb.ok(&argv);
    call.join().unwrap()
}

/// A client of `tests/clients` (the Python MCP SDK, written by others) run with the test Python:
/// the caller adds its arguments and environment, then checks it with [`passed`].
pub fn python_client(name: &str) -> Command {
    let mut cmd = Command::new(python());
    cmd.arg(client_script(name));
    cmd
}

/// The path of a script in `tests/clients`.
pub fn client_script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients").join(name)
}

/// Asserts a client script passed (it exits 0 and prints "OK <n> checks"); returns its output.
#[track_caller]
pub fn passed(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.starts_with("OK "),
        "client failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// The test Python `cargo xtask test` installs (MCP SDK, jsonschema, PyYAML).
pub fn python() -> String {
    std::env::var("SLUICE_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "SLUICE_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which installs \
             the Python MCP SDK"
        )
    })
}

/// Live processes whose command line contains `marker` (zombies excluded).
pub fn survivors(marker: &str) -> Vec<u32> {
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie =
            stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmd).contains(marker) {
            out.push(pid);
        }
    }
    out
}

/// Every regular file under `dir` with its bytes (`.git` left out), for before/after
/// comparisons (nothing may be writing there).
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    snapshot_of(dir, false)
}

/// [`snapshot`] while a server commits there: a file renamed or removed between the listing
/// and its read (a commit's temp file) is left out instead of failing the walk. Its one user,
/// a failpoint test, runs on Linux debug builds only.
#[cfg(all(target_os = "linux", debug_assertions))]
pub fn snapshot_while_writing(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    snapshot_of(dir, true)
}

fn snapshot_of(dir: &Path, live: bool) -> std::collections::BTreeMap<String, Vec<u8>> {
    type Files = std::collections::BTreeMap<String, Vec<u8>>;
    fn walk(base: &Path, dir: &Path, live: bool, out: &mut Files) {
        let entries = match std::fs::read_dir(dir) {
            Err(e) if live && e.kind() == std::io::ErrorKind::NotFound => return,
            entries => entries.unwrap(),
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if name.starts_with(".git") {
                continue;
            }
            match (e.file_type().map(|t| t.is_dir()), std::fs::read(&p)) {
                (Ok(true), _) => walk(base, &p, live, out),
                (_, Ok(bytes)) => {
                    out.insert(name, bytes);
                }
                (_, Err(e)) if live && e.kind() == std::io::ErrorKind::NotFound => {}
                (_, Err(e)) => panic!("cannot read {}: {e}", p.display()),
            }
        }
    }
    let mut out = Files::new();
    walk(dir, dir, live, &mut out);
    out
}

/// Puts the data folder back to what a schema 13 install left (with Sluice stopped): no seal
/// columns or records, and the install secret stored bare, without the record that sealing
/// began — a genuine old install, which the next start upgrades and seals.
pub fn back_to_schema_13(sb: &Sandbox) {
    let db = rusqlite::Connection::open(sb.data.join("sluice.db")).unwrap();
    db.execute_batch(
        "DROP TABLE oauth_refresh;
         DROP TABLE oauth_grants;
         DROP TABLE oauth_requests;
         DROP TABLE oauth_clients;
         ALTER TABLE projects DROP COLUMN seal;
         ALTER TABLE allow_rules DROP COLUMN seal;
         ALTER TABLE tokens DROP COLUMN seal;
         DELETE FROM kv WHERE key LIKE 'seal:%' OR key = 'sluice.seal';
         PRAGMA user_version = 13;",
    )
    .unwrap();
    let path = sb.data.join("install-secret");
    let secret = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, secret.replace(":audit", "").replace(":sealed", "")).unwrap();
}
