//! Test repositories: built with the real git, isolated from the developer's own config.

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// A temp folder holding a repository at `root()` plus room for attack scripts beside it.
pub struct TestRepo {
    dir: TempDir,
}

impl TestRepo {
    /// A fresh repository with branch `main`.
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("repo")).unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        let repo = TestRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// The project root (the repository root).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    /// The temp folder around the repository: attack scripts and canaries live here.
    pub fn outside(&self) -> &Path {
        self.dir.path()
    }

    pub fn open(&self) -> sluice_git::Repo {
        sluice_git::Repo::open(&self.root()).unwrap()
    }

    /// Plain, unhardened git in the repository, as a developer would run it.
    pub fn git_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.args(args)
            .current_dir(self.root())
            .env("HOME", self.dir.path().join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.com")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.com")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE");
        cmd
    }

    /// Runs plain git and returns stdout; panics on failure.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_command(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.root().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, content).unwrap();
    }

    /// Stages everything and commits.
    pub fn commit_all(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--no-verify", "-m", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }
}

/// Shield used across tests: `.env*` files and `*.pem` keys.
pub fn shield(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with(".env") || name.ends_with(".pem")
}

pub fn nothing_hidden(_: &str) -> bool {
    false
}
