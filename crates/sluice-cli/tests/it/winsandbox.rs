//! The Windows sandbox account, for real: Windows only, as an administrator (the native
//! Windows CI job runs as one, `.github/workflows/ci.yml`). `sluice sandbox setup` creates the
//! accounts, their file rules and firewall rules; then a job of a project runs as
//! `SluiceSandbox`: it reads and writes the project, and it cannot read a file in the user's
//! `~\.ssh`, list Sluice's data folder, or reach an address off the machine. `sluice sandbox
//! teardown` removes it all again. Wine has no logons, ACLs or firewall, so nothing here runs
//! under `cargo xtask windows check`; on other systems the file is not built.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::*;

/// A Windows path without the `\\?\` that `canonicalize` adds (Sluice takes plain spellings).
fn plain(path: &Path) -> PathBuf {
    let text = path.canonicalize().unwrap().display().to_string();
    PathBuf::from(text.strip_prefix(r"\\?\").unwrap_or(&text).to_owned())
}

/// Tears the accounts down and removes the canary, however the test ends.
struct Cleanup<'a> {
    sb: &'a Sandbox,
    canary: PathBuf,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.canary);
        let _ = self.sb.cmd().args(["sandbox", "teardown"]).output();
    }
}

/// Runs `cmd /c LINE` as a job of "demo" (`any` mode asks for every such command), approved
/// through the CLI: its state, exit code and output.
fn job(sb: &Sandbox, port: u16, token: &str, line: &[&str]) -> Value {
    let mut args = vec!["/c"];
    args.extend_from_slice(line);
    let args = json!({"project": "demo", "program": "cmd", "args": args});
    ok(&approved(sb, port, token, "run_command", args, &[]))
}

fn output(out: &Value) -> String {
    format!("{}{}", out["stdout"].as_str().unwrap_or(""), out["stderr"].as_str().unwrap_or(""))
}

#[test]
fn a_job_runs_as_the_sandbox_account_and_sees_neither_the_profiles_secrets_nor_sluices_data() {
    let tmp = tempfile::tempdir().unwrap();
    let root = plain(tmp.path());
    let (data, project) = (root.join("data"), root.join("proj"));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("README.md"), "hello from the project\n").unwrap();
    let marker = format!("SLUICE-CANARY-{}", std::process::id());
    let sb = Sandbox {
        tmp,
        data: data.clone(),
        project: project.clone(),
        evil: root.join("unused"),
        canary: marker.clone(),
    };
    let profile = PathBuf::from(std::env::var("USERPROFILE").expect("USERPROFILE"));
    std::fs::create_dir_all(profile.join(".ssh")).unwrap();
    let canary = profile.join(".ssh").join(format!("sluice-canary-{}", std::process::id()));
    std::fs::write(&canary, &marker).unwrap();
    let _cleanup = Cleanup { sb: &sb, canary: canary.clone() };

    let setup = sb.ok(&["sandbox", "setup"]);
    assert!(setup.contains("jobs run as the sandbox account SluiceSandbox"), "{setup}");
    assert!(!setup.contains("refused"), "Windows refused a rule: {setup}");
    // `any` mode: every command asks, and the network is off unless the user turns it on.
    sb.add_project_with(&["--access", "read-write", "--exec", "any"]);
    let token = sb.token("runner", &[]);
    let server = sb.serve();
    let port = server.port;

    // By full path: what finds a program is the engine's business, not this test's.
    let system32 = PathBuf::from(std::env::var("SystemRoot").expect("SystemRoot")).join("System32");
    let (whoami, curl) = (system32.join("whoami.exe"), system32.join("curl.exe"));
    let who = job(&sb, port, &token, &[whoami.to_str().unwrap()]);
    assert_eq!(who["state"], "succeeded", "{who}");
    assert!(output(&who).to_lowercase().contains("sluicesandbox"), "{who}");

    let read = job(&sb, port, &token, &["type", "README.md"]);
    assert!(output(&read).contains("hello from the project"), "{read}");
    let write = job(&sb, port, &token, &["echo made>made.txt"]);
    assert_eq!(write["state"], "succeeded", "{write}");
    assert!(std::fs::read_to_string(project.join("made.txt")).unwrap().contains("made"));

    let secret = job(&sb, port, &token, &["type", canary.to_str().unwrap()]);
    assert_ne!(secret["state"], "succeeded", "the profile's .ssh was read: {secret}");
    assert!(!output(&secret).contains(&marker), "{secret}");
    let listing = job(&sb, port, &token, &["dir", "/b", data.to_str().unwrap()]);
    assert_ne!(listing["state"], "succeeded", "Sluice's data was listed: {listing}");
    assert!(!output(&listing).contains("sluice"), "{listing}");

    // The network is off for the project: the firewall blocks every address but loopback.
    // The control: the same curl reaches Sluice's own port on loopback.
    let curl = curl.to_str().unwrap();
    let local = format!("http://127.0.0.1:{port}/mcp");
    let home = job(&sb, port, &token, &[curl, "-sS", "-m", "15", "-o", "NUL", &local]);
    assert_eq!(home["state"], "succeeded", "loopback is open to jobs: {home}");
    let off = job(&sb, port, &token, &[curl, "-sS", "-m", "15", "https://github.com"]);
    assert_ne!(off["state"], "succeeded", "a job reached the network: {off}");

    drop(server);
    sb.ok(&["sandbox", "teardown"]);
    let status = sb.ok(&["sandbox", "status"]);
    assert!(status.contains("not set up"), "{status}");
}
