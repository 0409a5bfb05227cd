//! House rules checked over the whole tree, like rust-analyzer's tidy test: every source file of
//! a crate says what it is for (a `//!` module doc), no test is switched off with `#[ignore]`,
//! and no product file grows past [`MAX_LINES`]: one that would is split at its seams first (a
//! folder module, one file per concern, as `sluice-cli`'s `admin/` and `sluice-exec`'s `jail/`).

use std::path::{Path, PathBuf};

use crate::repo_root;

/// The longest a product source file (under a crate's `src/`) may be.
const MAX_LINES: usize = 700;

/// Files that cannot carry a `//!` doc, and why.
const NO_MODULE_DOC: &[(&str, &str)] = &[(
    "src-tauri/src/command_names.rs",
    "include!d by build.rs, where an inner doc comment does not compile; its header says what it is",
)];

/// Every `.rs` file under `dir`, recursively, skipping build output and dependencies.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !matches!(
                name.as_ref(),
                "target" | "node_modules" | ".git" | "gen" | "corpus" | "artifacts"
            ) {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("src-tauri"), &mut files);
    // cargo-fuzz's package (not a workspace member): its targets are held to the same rules.
    rust_files(&root.join("fuzz"), &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn is_product(rel: &str) -> bool {
    (rel.contains("/src/") || rel.starts_with("fuzz/fuzz_targets/"))
        && !rel.contains("/tests/")
        && !rel.contains("/examples/")
}

#[test]
fn every_product_file_has_a_module_doc() {
    let missing: Vec<String> = sources()
        .into_iter()
        .filter(|(rel, _)| is_product(rel) && !NO_MODULE_DOC.iter().any(|(f, _)| f == rel))
        .filter(|(_, text)| !text.trim_start().starts_with("//!"))
        .map(|(rel, _)| rel)
        .collect();
    assert!(missing.is_empty(), "files without a `//!` module doc: {missing:#?}");
}

#[test]
fn no_test_is_ignored() {
    let ignored: Vec<String> = sources()
        .into_iter()
        .filter(|(rel, _)| rel != "crates/xtask/tests/it/tidy.rs")
        .filter(|(_, text)| text.lines().any(|l| l.trim_start().starts_with("#[ignore")))
        .map(|(rel, _)| rel)
        .collect();
    assert!(ignored.is_empty(), "`#[ignore]` in: {ignored:?}");
}

#[test]
fn no_product_file_grows_past_the_limit() {
    let long: Vec<(String, usize)> = sources()
        .into_iter()
        .filter(|(rel, _)| is_product(rel))
        .map(|(rel, text)| (rel, text.lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines (split at a seam): {long:?}");
}
