//! Where things are, for the jobs' views on every platform: the folder a job sees its private
//! state at ([`JOB_VIEW`]), and the user's toolchain folders, the one part of the home a job
//! sees ([`TOOLCHAINS`], [`user_tool_home`]).

use std::path::{Path, PathBuf};

/// Where a job sees its private folders (HOME, caches, temp): the sandbox's `state_dir` is
/// mounted here, so nothing of the path to Sluice's data folder is in the job's view.
pub const JOB_VIEW: &str = "/run/sluice-job";

/// Folders of the user's home that hold toolchains and their caches, exposed read-only when
/// they exist. Everything else in the home is absent from the job's view.
pub const TOOLCHAINS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".npm",
    ".nvm",
    ".volta",
    ".fnm",
    ".bun",
    ".deno",
    ".pyenv",
    ".rbenv",
    ".gem",
    ".asdf",
    ".local/share/mise",
    ".local/share/pnpm",
    ".local/bin",
    ".local/lib",
    ".cache/pip",
    ".cache/uv",
    "go",
    ".sdkman",
    ".gradle/caches",
    ".gradle/wrapper",
    ".m2/repository",
    ".dotnet",
    ".nuget/packages",
    ".cabal",
    ".ghcup",
    ".opam",
    ".elan",
    ".pub-cache",
    "miniconda3",
    "anaconda3",
];

/// A toolchain home of the user's: `$var` when set to an absolute path, else `~/default` when
/// that is a folder.
pub(crate) fn user_tool_home(var: &str, default: &str) -> Option<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| {
        std::env::var_os("HOME").map(|h| Path::new(&h).join(default)).filter(|p| p.is_dir())
    })
}
