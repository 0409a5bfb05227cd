//! xtask's integration tests: what the repository ships besides the code — the release and CI
//! workflows (`workflows`) and the Linux package (`package`) — and the tree's house rules
//! (`tidy`).

mod package;
mod tidy;
mod workflows;

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("repo root").to_path_buf()
}

/// Where cargo puts build output.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}
