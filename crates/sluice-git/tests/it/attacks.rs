//! CI-06: repository-controlled programs must never run. Each attack plants a script that
//! creates a canary file, wires it into the repository's config (and attributes), shows with
//! plain git that the wiring really fires where git would run it non-interactively, then runs
//! all four tools and asserts the canary was never created — and that the tools still work.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use sluice_git::{GitDiffArgs, GitEmails, GitLogArgs, GitShowArgs, GitStatusArgs};

use crate::support::{TestRepo, nothing_hidden};

/// A repository with history, a modified tracked file, a staged change and an untracked file,
/// plus an executable script outside it that creates `canary` and passes stdin through (so
/// it works as a filter too).
struct Attack {
    t: TestRepo,
    script: PathBuf,
    canary: PathBuf,
}

impl Attack {
    fn new() -> Attack {
        let t = TestRepo::new();
        let canary = t.outside().join("canary");
        let script = t.outside().join("evil.sh");
        std::fs::write(&script, format!("#!/bin/sh\ntouch '{}'\ncat\nexit 0\n", canary.display()))
            .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        t.write("tracked.txt", "one\n");
        t.write("staged.txt", "one\n");
        t.commit_all("init");
        t.write("tracked.txt", "one\ntwo\n");
        t.write("staged.txt", "one\nstaged\n");
        t.git(&["add", "staged.txt"]);
        t.write("untracked.txt", "new\n");
        Attack { t, script, canary }
    }

    fn script(&self) -> &str {
        self.script.to_str().unwrap()
    }

    fn config(&self, key: &str, value: &str) {
        self.t.git(&["config", key, value]);
    }

    /// Attributes both in-tree and in `.git/info/attributes` (which `--attr-source` does not
    /// cover, so the per-driver overrides must hold on their own).
    fn attributes(&self, line: &str) {
        self.t.write(".gitattributes", format!("{line}\n"));
        std::fs::create_dir_all(self.t.root().join(".git/info")).unwrap();
        std::fs::write(self.t.root().join(".git/info/attributes"), format!("{line}\n")).unwrap();
    }

    /// Plain git fires the attack: the test set-up is real, not a no-op.
    fn assert_plain_git_fires(&self, args: &[&str]) {
        let _ = self.t.git_command(args).output().unwrap();
        assert!(self.canary.exists(), "control: plain `git {args:?}` should run the script");
        std::fs::remove_file(&self.canary).unwrap();
    }

    /// Runs every tool in every mode; each must succeed and the canary must not appear.
    fn assert_tools_run_nothing(&self) {
        let repo = self.t.open();
        let h = &nothing_hidden;
        let st = sluice_git::status(&repo, &GitStatusArgs::default(), h).unwrap();
        assert!(st.entries.iter().any(|e| e.path == "tracked.txt"));
        let d = sluice_git::diff(&repo, &GitDiffArgs::default(), h).unwrap();
        assert!(d.files.iter().any(|f| f.path == "tracked.txt" && f.patch.is_some()));
        let d = sluice_git::diff(&repo, &GitDiffArgs { staged: true, ..Default::default() }, h)
            .unwrap();
        assert!(d.files.iter().any(|f| f.path == "staged.txt"));
        let lg = sluice_git::log(&repo, &GitLogArgs::default(), h, GitEmails::Hide).unwrap();
        assert!(!lg.commits.is_empty());
        let sh = sluice_git::show(
            &repo,
            &GitShowArgs { rev: "HEAD".into(), ..Default::default() },
            h,
            GitEmails::Hide,
        )
        .unwrap();
        assert!(!sh.files.is_empty());
        assert!(!self.canary.exists(), "a repository-controlled program ran");
    }
}

#[test]
fn fsmonitor_command_does_not_run() {
    let a = Attack::new();
    a.config("core.fsmonitor", a.script());
    a.assert_plain_git_fires(&["status"]);
    a.assert_tools_run_nothing();
}

#[test]
fn pager_does_not_run() {
    let a = Attack::new();
    a.config("core.pager", a.script());
    a.config("pager.log", a.script());
    a.config("pager.diff", a.script());
    a.config("pager.status", a.script());
    a.config("pager.show", a.script());
    // git only pages to a terminal, so there is no non-interactive control run.
    a.assert_tools_run_nothing();
}

#[test]
fn external_diff_does_not_run() {
    let a = Attack::new();
    a.config("diff.external", a.script());
    a.assert_plain_git_fires(&["diff"]);
    a.assert_tools_run_nothing();
}

#[test]
fn filter_clean_smudge_process_do_not_run_even_when_required() {
    let a = Attack::new();
    a.config("filter.x.clean", a.script());
    a.config("filter.x.smudge", a.script());
    a.config("filter.x.process", a.script());
    // With `required`, an emptied filter makes git fail; the override sets it false.
    a.config("filter.x.required", "true");
    a.attributes("* filter=x");
    a.assert_plain_git_fires(&["diff"]);
    a.assert_tools_run_nothing();
}

#[test]
fn filter_named_with_equals_sign_is_still_neutralised() {
    // `-c filter.a=b.clean=` would be parsed as key `filter.a`, value `b.clean=`: the override
    // would silently miss. The env-based override keeps the name intact.
    let a = Attack::new();
    a.config("filter.a=b.clean", a.script());
    a.attributes("* filter=a=b");
    a.assert_plain_git_fires(&["diff"]);
    a.assert_tools_run_nothing();
}

#[test]
fn filter_defined_in_an_included_config_file_is_neutralised() {
    let a = Attack::new();
    let inc = a.t.outside().join("included.cfg");
    std::fs::write(&inc, format!("[filter \"inc\"]\n\tclean = {}\n", a.script())).unwrap();
    a.config("include.path", inc.to_str().unwrap());
    a.attributes("* filter=inc");
    a.assert_plain_git_fires(&["diff"]);
    a.assert_tools_run_nothing();
}

#[test]
fn textconv_and_diff_driver_command_do_not_run() {
    let a = Attack::new();
    a.config("diff.x.textconv", a.script());
    a.assert_plain_git_fires_after_attributes("* diff=x", &["diff"]);
    a.config("diff.x.command", a.script());
    a.assert_plain_git_fires(&["log", "-p", "-1"]);
    a.assert_tools_run_nothing();
}

impl Attack {
    fn assert_plain_git_fires_after_attributes(&self, line: &str, args: &[&str]) {
        self.attributes(line);
        self.assert_plain_git_fires(args);
    }
}

#[test]
fn hooks_do_not_run() {
    let a = Attack::new();
    let hooks = a.t.outside().join("hooks");
    std::fs::create_dir(&hooks).unwrap();
    for hook in
        ["post-index-change", "post-checkout", "pre-commit", "reference-transaction", "pre-auto-gc"]
    {
        std::fs::copy(&a.script, hooks.join(hook)).unwrap();
        std::fs::copy(&a.script, a.t.root().join(".git/hooks").join(hook)).unwrap();
    }
    a.config("core.hooksPath", hooks.to_str().unwrap());
    // Read-only commands run no hooks even in plain git; a checkout does, proving the wiring.
    a.assert_plain_git_fires(&["checkout", "-q", "-b", "hooked"]);
    a.assert_tools_run_nothing();
}

#[test]
fn signature_program_does_not_run() {
    let a = Attack::new();
    // A commit carrying a (fake) signature: `log.showSignature` would hand it to gpg.program.
    let tree = a.t.git(&["rev-parse", "HEAD^{tree}"]);
    let body = format!(
        "tree {}\nauthor Ada <ada@example.com> 1700000000 +0000\n\
         committer Ada <ada@example.com> 1700000000 +0000\n\
         gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\
         \nsigned-looking commit\n",
        tree.trim()
    );
    let mut child =
        a.t.git_command(&["hash-object", "-t", "commit", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let id = String::from_utf8(out.stdout).unwrap();
    a.t.git(&["update-ref", "refs/heads/main", id.trim()]);
    a.config("log.showSignature", "true");
    a.config("gpg.program", a.script());
    a.config("gpg.format", "openpgp");
    a.assert_plain_git_fires(&["log", "-1"]);
    a.assert_tools_run_nothing();
}

#[test]
fn lazy_fetch_and_transports_do_not_run() {
    // A promisor remote whose URL runs a command through the `ext::` transport. That script
    // must not wait on stdin, or plain git (the control run) would wait for it forever.
    let a = Attack::new();
    let no_stdin = a.t.outside().join("no-stdin.sh");
    std::fs::write(&no_stdin, format!("#!/bin/sh\ntouch '{}'\nexit 1\n", a.canary.display()))
        .unwrap();
    std::fs::set_permissions(&no_stdin, std::fs::Permissions::from_mode(0o755)).unwrap();
    a.config("remote.origin.url", &format!("ext::{} %S", no_stdin.display()));
    a.config("remote.origin.promisor", "true");
    a.config("extensions.partialClone", "origin");
    a.config("protocol.ext.allow", "always");
    a.config("core.sshCommand", a.script());
    a.config("credential.helper", &format!("!{}", a.script()));
    a.config("core.askPass", a.script());
    // Asking for an object that does not exist triggers a lazy fetch in plain git.
    let missing = "1234567890123456789012345678901234567890";
    a.assert_plain_git_fires(&["show", missing]);
    a.assert_tools_run_nothing();
    let args = GitShowArgs { rev: missing.into(), ..Default::default() };
    assert!(sluice_git::show(&a.t.open(), &args, &nothing_hidden, GitEmails::Hide).is_err());
    assert!(!a.canary.exists());
}

#[test]
fn submodule_config_is_never_entered() {
    let a = Attack::new();
    // A nested repository registered as a submodule, whose own config sets fsmonitor.
    let sub = a.t.root().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let run = |args: &[&str]| {
        let ok = a.t.git_command(args).current_dir(&sub).status().unwrap();
        assert!(ok.success());
    };
    run(&["init", "-q", "-b", "main"]);
    std::fs::write(sub.join("s.txt"), "s\n").unwrap();
    run(&["add", "s.txt"]);
    run(&["commit", "-q", "-m", "sub"]);
    a.t.git(&["add", "sub"]);
    a.t.git(&["commit", "-q", "-m", "add gitlink", "--", "sub"]);
    run(&["config", "core.fsmonitor", a.script()]);
    std::fs::write(sub.join("s.txt"), "dirty\n").unwrap();
    a.assert_plain_git_fires(&["status"]);
    a.assert_tools_run_nothing();
}
