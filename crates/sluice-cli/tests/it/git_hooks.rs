//! Git hooks the user allowed for a project, end to end through the official Python MCP SDK
//! (tests/clients/python_git_hooks.py asserts the tool side): off by default, then each commit
//! hook runs as a job in the project's sandbox. Here: what the hooks saw from inside (not the
//! user's credentials, not a writable hooks folder), with the control that the same hook run
//! outside the sandbox sees both; and that a hook git would not run (the `.git/hooks` one that
//! `core.hooksPath` replaces) never ran. Unix only: the hooks are shell scripts.

use crate::harness::{Sandbox, Server, git, passed, python_client};

/// A hook that records what it can reach, refuses a staged file holding a forbidden word, and
/// formats `fmt.txt` when it is staged (as a formatter in a pre-commit hook does).
fn pre_commit(secret: &str) -> String {
    format!(
        r#"#!/bin/sh
marks=.git/hook-marks.log
echo "pre-commit ran" >> $marks
if cat '{secret}' >> $marks 2>/dev/null; then echo "SECRET-READ" >> $marks; else echo "secret-hidden" >> $marks; fi
if echo planted > .git/hooks/planted 2>/dev/null; then echo "HOOKS-WRITABLE" >> $marks; else echo "hooks-read-only" >> $marks; fi
staged=$(git diff --cached --name-only)
echo "pre-commit: $staged"
for f in $staged; do
  if grep -q FORBIDDEN "$f"; then echo "$f holds a forbidden word" >&2; exit 1; fi
done
if echo "$staged" | grep -qx fmt.txt && grep -q unformatted fmt.txt; then
  echo formatted > fmt.txt
  git add fmt.txt
fi
exit 0
"#
    )
}

fn script(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn python_sdk_commits_run_allowed_hooks_only_as_jobs_in_the_sandbox() {
    let sb = Sandbox::new();
    let home = sb.user_home("home", "[user]\n\tname = Grace User\n\temail = grace@example.org\n");
    // A credential of the user's that no hook may read.
    let ssh = std::path::Path::new(&home).join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let secret = ssh.join("id_ed25519");
    std::fs::write(&secret, format!("{}\n", sb.canary)).unwrap();

    let hooks = sb.project.join(".githooks");
    std::fs::create_dir_all(&hooks).unwrap();
    script(&hooks.join("pre-commit"), &pre_commit(&secret.display().to_string()));
    script(
        &hooks.join("prepare-commit-msg"),
        "#!/bin/sh\necho \"prepare-commit-msg $2\" >> .git/hook-marks.log\n",
    );
    script(
        &hooks.join("commit-msg"),
        "#!/bin/sh\necho commit-msg >> .git/hook-marks.log\nprintf '\\nHook-Checked: yes\\n' >> \"$1\"\n",
    );
    script(&hooks.join("post-commit"), "#!/bin/sh\necho post-commit >> .git/hook-marks.log\n");
    script(
        &hooks.join("post-checkout"),
        "#!/bin/sh\necho \"post-checkout $*\" >> .git/hook-marks.log\n",
    );
    // The hook git would not run: core.hooksPath replaces .git/hooks.
    script(
        &sb.project.join(".git/hooks/pre-commit"),
        "#!/bin/sh\necho REPLACED-HOOK-RAN >> .git/hook-marks.log\n",
    );
    git(&sb.project, &["add", ".githooks", "README.md"]);
    git(&sb.project, &["commit", "-q", "--no-verify", "-m", "hooks"]);
    git(&sb.project, &["config", "core.hooksPath", ".githooks"]);
    let outside = sb.root().join("hooks-outside");
    std::fs::create_dir_all(&outside).unwrap();
    script(
        &outside.join("pre-commit"),
        "#!/bin/sh\necho OUTSIDE-HOOK-RAN >> .git/hook-marks.log\n",
    );

    sb.add_project_with(&["--access", "read-write", "--exec", "safe"]);
    sb.ok(&["project", "policy", "demo", "--deletes", "allow", "--writes", "allow"]);
    let token = sb.token("python", &[]);
    let server = Server::start_env(&sb, &[], &[("HOME", &home)]);
    let out = python_client("python_git_hooks.py")
        .args(["--url", &server.url(), "--project", "demo", "--sluice", crate::harness::BIN])
        .args(["--repo", sb.project.to_str().unwrap()])
        .args(["--outside", outside.to_str().unwrap()])
        .env("SLUICE_TOKEN", &token)
        .env("SLUICE_CANARY", &sb.canary)
        .env("SLUICE_DATA_DIR", &sb.data)
        .output()
        .expect("run the Python client");
    passed(&out);
    server.stop();

    let marks = std::fs::read_to_string(sb.project.join(".git/hook-marks.log")).unwrap();
    assert!(marks.contains("pre-commit ran") && marks.contains("post-commit"), "{marks}");
    assert!(marks.contains("prepare-commit-msg message"), "git's arguments: {marks}");
    assert!(marks.contains("secret-hidden") && !marks.contains("SECRET-READ"), "{marks}");
    assert!(!marks.contains(&sb.canary), "a hook read the user's key: {marks}");
    assert!(marks.contains("hooks-read-only") && !marks.contains("HOOKS-WRITABLE"), "{marks}");
    assert!(!sb.project.join(".git/hooks/planted").exists());
    assert!(!marks.contains("REPLACED-HOOK-RAN") && !marks.contains("OUTSIDE-HOOK-RAN"), "{marks}");

    // The control: the same hook, run as the user would without Sluice, reaches both.
    std::fs::remove_file(sb.project.join(".git/hook-marks.log")).unwrap();
    let st = std::process::Command::new(hooks.join("pre-commit"))
        .current_dir(&sb.project)
        .status()
        .unwrap();
    let control = std::fs::read_to_string(sb.project.join(".git/hook-marks.log")).unwrap();
    assert!(st.success(), "{control}");
    assert!(control.contains("SECRET-READ") && control.contains(&sb.canary), "{control}");
    assert!(control.contains("HOOKS-WRITABLE"), "{control}");
}
