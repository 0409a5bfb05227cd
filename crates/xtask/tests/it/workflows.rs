//! The GitHub Actions workflows are valid and say what they promise: each file passes a schema
//! validator written by others (`@action-validator/cli`, the SchemaStore workflow schema, from
//! npm: `tests/package/`), and its structure is checked here — triggers, the release matrix,
//! the sidecar, signing wired to secrets, every action pinned to a commit digest.

use std::path::PathBuf;
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use crate::repo_root;

const WORKFLOWS: &[&str] = &["ci.yml", "release.yml"];

fn load(name: &str) -> (String, Yaml) {
    let path = repo_root().join(".github/workflows").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut docs = YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{name} is not valid YAML: {e}"));
    assert_eq!(docs.len(), 1, "{name} holds one YAML document");
    (text, docs.remove(0))
}

/// The schema validator: from `SLUICE_TEST_ACTION_VALIDATOR` or `tests/package/node_modules`
/// (`cargo xtask test` and `cargo xtask deps` install it).
fn validator() -> PathBuf {
    let path =
        std::env::var_os("SLUICE_TEST_ACTION_VALIDATOR").map(PathBuf::from).unwrap_or_else(|| {
            repo_root().join("tests/package/node_modules/@action-validator/cli/cli.mjs")
        });
    assert!(
        path.is_file(),
        "{} is missing: run the tests with `cargo xtask test`, which installs the workflow \
         validator (tests/package/package.json)",
        path.display()
    );
    path
}

#[test]
fn workflows_pass_the_schema_validator() {
    let cli = validator();
    for name in WORKFLOWS {
        let path = repo_root().join(".github/workflows").join(name);
        let out = Command::new("node").arg(&cli).arg(&path).output().expect("node runs");
        assert!(
            out.status.success(),
            "{name} fails the workflow schema:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The validator really rejects a broken workflow (so the test above can fail).
#[test]
fn the_schema_validator_rejects_a_broken_workflow() {
    let dir = std::env::temp_dir().join(format!("sluice-workflow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yml");
    std::fs::write(
        &bad,
        "on: push\njobs:\n  a:\n    runs-onn: ubuntu-latest\n    steps:\n      - run: true\n",
    )
    .unwrap();
    let out = Command::new("node").arg(validator()).arg(&bad).output().expect("node runs");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!out.status.success(), "a job without runs-on is rejected");
}

/// Every `uses:` names an action at a full commit digest, never a tag or a branch (both move:
/// whoever controls the action's repository could change what a release runs, with its
/// secrets), and says in a comment which release that commit is.
fn check_pinned(name: &str, text: &str, doc: &Yaml) {
    let jobs = doc["jobs"].as_hash().unwrap_or_else(|| panic!("{name} has jobs"));
    assert!(!jobs.is_empty(), "{name} has at least one job");
    for (job_name, job) in jobs {
        let job_name = job_name.as_str().unwrap_or("?");
        assert!(!job["runs-on"].is_badvalue(), "{name}: job {job_name} says where it runs");
        let steps =
            job["steps"].as_vec().unwrap_or_else(|| panic!("{name}: job {job_name} has steps"));
        for step in steps {
            let uses = step["uses"].as_str();
            let run = step["run"].as_str();
            assert!(uses.is_some() != run.is_some(), "{name}: a step either uses or runs");
            if let Some(uses) = uses {
                let (action, version) = uses
                    .split_once('@')
                    .unwrap_or_else(|| panic!("{name}: {uses} is pinned with @"));
                assert!(action.contains('/'), "{name}: {uses} names owner/repo");
                let commit = version.len() == 40 && version.bytes().all(|b| b.is_ascii_hexdigit());
                assert!(commit, "{name}: {uses} is pinned to a full commit digest");
                let line = text
                    .lines()
                    .find(|l| l.contains(&format!("uses: {uses}")))
                    .unwrap_or_else(|| panic!("{name}: the line of {uses}"));
                assert!(
                    line.split_once(" # ").is_some_and(|(_, c)| !c.trim().is_empty()),
                    "{name}: {uses} says in a comment which release it is"
                );
            }
        }
    }
}

fn all_runs(doc: &Yaml) -> String {
    let mut runs = String::new();
    for (_, job) in doc["jobs"].as_hash().expect("jobs") {
        for step in job["steps"].as_vec().expect("steps") {
            if let Some(run) = step["run"].as_str() {
                runs.push_str(run);
                runs.push('\n');
            }
        }
    }
    runs
}

#[test]
fn ci_runs_the_readme_test_command_on_pull_requests() {
    let (text, doc) = load("ci.yml");
    check_pinned("ci.yml", &text, &doc);
    assert!(!doc["on"]["pull_request"].is_badvalue(), "ci.yml runs on pull requests");
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    assert!(readme.contains("cargo xtask test"), "the README's test command is cargo xtask test");
    // As root, which the suite needs (setpriv, tmpfs mounts, cgroups): through sudo, the
    // README's command unchanged at the end of the line.
    assert!(
        all_runs(&doc).lines().any(|l| {
            let l = l.trim();
            l.starts_with("sudo ") && l.ends_with(" cargo xtask test")
        }),
        "ci.yml runs `cargo xtask test` as root"
    );
    assert!(readme.contains("needs root"), "the README says the suite needs root");
    let test = &doc["jobs"]["test"];
    assert!(test["runs-on"].as_str().is_some_and(|os| os.starts_with("ubuntu")), "CI on Ubuntu");
}

/// The engine's suites also run natively on Windows and macOS (what cannot run here: Job
/// Objects, reparse points, Seatbelt, the keychain), every engine crate, without stopping the
/// other system's run when one fails.
#[test]
fn ci_runs_the_engine_suites_natively_on_windows_and_macos() {
    let (text, doc) = load("ci.yml");
    check_pinned("ci.yml", &text, &doc);
    let native = &doc["jobs"]["native"];
    let systems: Vec<&str> = native["strategy"]["matrix"]["os"]
        .as_vec()
        .expect("a matrix of systems")
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    assert_eq!(systems, ["windows-latest", "macos-latest"]);
    assert_eq!(native["runs-on"].as_str(), Some("${{ matrix.os }}"));
    assert_eq!(native["strategy"]["fail-fast"].as_bool(), Some(false));
    let runs: String =
        native["steps"].as_vec().expect("steps").iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(runs.contains("cargo test --locked"), "{runs}");
    for krate in ["sluice-guard", "sluice-runner", "sluice-exec", "sluice-store", "sluice-engine"] {
        assert!(runs.contains(&format!("-p {krate}")), "{krate} runs natively: {runs}");
    }
    // The tests that need the Linux test environment get what they need or are left out by
    // name: the schema checks' Python with jsonschema pinned as `cargo xtask test` pins it, and
    // the code crate without its language servers' tests.
    let deps = std::fs::read_to_string(repo_root().join("crates/xtask/src/deps.rs")).unwrap();
    let pin = deps.split('"').find(|s| s.starts_with("jsonschema==")).expect("the pin");
    assert!(runs.contains(&format!("pip install --quiet {pin}")), "{pin} natively: {runs}");
    assert!(runs.contains("SLUICE_TEST_PYTHON="), "the schema checks' Python: {runs}");
    assert!(runs.contains("-p sluice-code -- --skip server::"), "{runs}");
    // The Windows sandbox account's real behaviour: only on Windows, where the runner may set
    // it up.
    let account = native["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|s| s["run"].as_str().is_some_and(|r| r.contains("--test it winsandbox::")))
        .expect("a step runs the Windows sandbox account's test");
    assert_eq!(account["if"].as_str(), Some("runner.os == 'Windows'"));
}

#[test]
fn release_builds_every_installer_on_a_version_tag() {
    let (text, doc) = load("release.yml");
    check_pinned("release.yml", &text, &doc);
    let tags = doc["on"]["push"]["tags"].as_vec().expect("release.yml runs on pushed tags");
    assert!(tags.iter().any(|t| t.as_str() == Some("v*")), "release.yml runs on v* tags");

    let include =
        doc["jobs"]["build"]["strategy"]["matrix"]["include"].as_vec().expect("a build matrix");
    let field = |row: &Yaml, key: &str| row[key].as_str().unwrap_or_default().to_owned();
    let rows: Vec<(String, String, String)> =
        include.iter().map(|r| (field(r, "os"), field(r, "target"), field(r, "bundles"))).collect();
    let has = |os: &str, target: &str, bundles: &[&str]| {
        rows.iter().any(|(o, t, b)| {
            o == os && t == target && bundles.iter().all(|x| b.split(',').any(|y| y == *x))
        })
    };
    assert!(
        has("ubuntu-22.04", "x86_64-unknown-linux-gnu", &["appimage", "deb", "rpm"]),
        "{rows:?}"
    );
    assert!(has("windows-latest", "x86_64-pc-windows-msvc", &["msi", "nsis"]), "{rows:?}");
    assert!(has("macos-latest", "aarch64-apple-darwin", &["app", "dmg"]), "{rows:?}");
    assert!(has("macos-latest", "x86_64-apple-darwin", &["app", "dmg"]), "{rows:?}");

    let runs = all_runs(&doc);
    // The CLI sidecar, built per target where tauri.bundle.conf.json declares it.
    assert!(runs.contains("-p sluice-cli --bin sluice --target"), "builds the sluice CLI");
    assert!(runs.contains("-p xtask -- mcpb"), "packs Claude Desktop's bundle of that CLI");
    assert!(runs.contains("src-tauri/binaries/sluice-${{ matrix.target }}"), "copies the sidecar");
    assert!(runs.contains("--config tauri.bundle.conf.json"), "merges the sidecar config");
    let bundle_conf = std::fs::read_to_string(repo_root().join("tauri.bundle.conf.json")).unwrap();
    assert!(bundle_conf.contains("\"binaries/sluice\""), "tauri.bundle.conf.json declares it");

    // Signing: wired to secrets, each group exported only when present.
    for secret in [
        "APPLE_CERTIFICATE",
        "APPLE_CERTIFICATE_PASSWORD",
        "APPLE_SIGNING_IDENTITY",
        "APPLE_ID",
        "APPLE_PASSWORD",
        "APPLE_TEAM_ID",
        "WINDOWS_CERTIFICATE",
        "WINDOWS_CERTIFICATE_PASSWORD",
        "TAURI_SIGNING_PRIVATE_KEY",
    ] {
        let reference = format!("secrets.{secret} != ''");
        assert!(text.contains(&reference), "release.yml checks whether {secret} is set");
    }
    for notice in ["macOS code signing skipped", "Windows code signing skipped", "updater"] {
        assert!(text.contains(notice), "release.yml says when {notice} is skipped");
    }
}

/// The app's version in `tauri.conf.json` is the workspace's, which the release tag must match.
#[test]
fn tauri_version_is_the_workspace_version() {
    let conf: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("tauri.conf.json")).unwrap(),
    )
    .unwrap();
    let cargo = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let workspace_version = cargo
        .split("[workspace.package]")
        .nth(1)
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim().trim_matches('"').to_owned())
        .expect("[workspace.package] version");
    assert_eq!(conf["version"].as_str(), Some(workspace_version.as_str()));
}
