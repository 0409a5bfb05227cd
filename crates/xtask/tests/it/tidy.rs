//! House rules checked over the whole tree, like rust-analyzer's tidy test: every source file of
//! a crate says what it is for (a `//!` module doc), no test is switched off with `#[ignore]`,
//! and no product file grows past [`MAX_LINES`]: one that would is split at its seams first (a
//! folder module, one file per concern, as `sluice-cli`'s `admin/` and `sluice-exec`'s `jail/`).
//!
//! The docs stand on their own: every path the README and `docs/` name exists, each crate takes
//! at most six lines of `docs/ARCHITECTURE.md`, no tracked file
//! sends a reader to documents a clone does not have, and `docs/THREATS.md` describes every case
//! id the suite uses.

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

/// The documents a newcomer reads: the README and everything in `docs/`.
fn documents() -> Vec<(String, String)> {
    let root = repo_root();
    let mut docs =
        vec![("README.md".to_owned(), std::fs::read_to_string(root.join("README.md")).unwrap())];
    for entry in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            docs.push((format!("docs/{name}"), std::fs::read_to_string(entry.path()).unwrap()));
        }
    }
    docs.sort();
    docs
}

/// The paths a document names, each relative to the repository's root: every code span that
/// starts with one of the root's own folders (`crates/…`, `docs/…`) and is a literal path (no
/// glob, placeholder or ellipsis), and every relative link (`[x](SANDBOX.md)`, resolved from
/// the document's folder). Spans starting with a dot folder are left out: `.github/…` or
/// `.cargo/…` in the docs mostly names a file of the user's project, not of this repository.
fn named_paths(doc: &str, text: &str) -> Vec<String> {
    let root = repo_root();
    let top: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !matches!(n.as_str(), "target" | "node_modules"))
        .collect();
    let literal = |p: &str| {
        !p.is_empty() && !p.contains(|c: char| c.is_whitespace() || "*<>{}$|?:…()[]\"'".contains(c))
    };
    let mut paths = Vec::new();
    // Odd pieces between backticks are code spans (a fence's three backticks keep the parity).
    for span in text.split('`').skip(1).step_by(2) {
        let first = span.split('/').next().unwrap_or_default();
        if span.contains('/') && literal(span) && top.iter().any(|t| t == first) {
            paths.push(span.trim_end_matches('/').to_owned());
        }
    }
    let dir = Path::new(doc).parent().unwrap_or(Path::new(""));
    for (i, _) in text.match_indices("](") {
        let target = text[i + 2..].split([')', ' ']).next().unwrap_or_default();
        let target = target.split('#').next().unwrap_or_default();
        if target.contains("://") || target.starts_with("mailto:") || !literal(target) {
            continue;
        }
        // Resolve `..` lexically, so a link out of the repository is caught as well.
        let mut parts: Vec<&str> = dir.iter().map(|c| c.to_str().unwrap()).collect();
        for part in target.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        paths.push(parts.join("/"));
    }
    paths
}

/// Whether `path` is something a build makes (`ui/dist`), which git ignores.
fn build_output(path: &str) -> bool {
    // Also as a folder: git cannot tell that a missing `ui/dist` would be one.
    [path.to_owned(), format!("{path}/")].iter().any(|p| {
        std::process::Command::new("git")
            .args(["check-ignore", "-q", "--no-index", p])
            .current_dir(repo_root())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
fn every_path_a_document_names_exists() {
    let root = repo_root();
    let mut missing = Vec::new();
    for (doc, text) in documents() {
        for path in named_paths(&doc, &text) {
            if !root.join(&path).exists() && !build_output(&path) {
                missing.push(format!("{doc}: {path}"));
            }
        }
    }
    assert!(missing.is_empty(), "paths named in the docs that do not exist: {missing:#?}");
}

/// The most lines one crate's section of docs/ARCHITECTURE.md may take: its entry points and
/// invariants, not its history.
const MAX_CRATE_LINES: usize = 6;

/// Each `### \`crates/…\`` section's non-empty lines, by heading.
fn crate_sections(text: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if line.starts_with('#') {
            open = line.starts_with("### `crates/");
            if open {
                out.push((line.to_owned(), 0));
            }
        } else if open && !line.trim().is_empty() {
            out.last_mut().expect("a section").1 += 1;
        }
    }
    out
}

#[test]
fn each_crate_takes_at_most_six_lines_of_the_architecture() {
    let text = std::fs::read_to_string(repo_root().join("docs/ARCHITECTURE.md")).unwrap();
    let sections = crate_sections(&text);
    assert!(sections.len() >= 10, "the crate sections are found: {sections:?}");
    let long: Vec<_> = sections.iter().filter(|(_, n)| *n > MAX_CRATE_LINES).collect();
    assert!(long.is_empty(), "crate sections past {MAX_CRATE_LINES} lines: {long:?}");
    // The counter counts: a section of seven lines is too long.
    let seven = format!("### `crates/x`\n{}\n## Next\n", "line\n".repeat(7));
    assert_eq!(crate_sections(&seven), [("### `crates/x`".to_owned(), 7)]);
}

#[test]
fn named_paths_are_found_in_spans_and_links() {
    let text = "See `crates/xtask/src/main.rs`, `crates/*/tests/it/`, `docs/gone.md:12`, `a/b`,\n\
        `.github/hooks/x.json`,\n\
        ```sh\ncargo xtask test\n```\n[the sandbox](SANDBOX.md), [up](../README.md#top), \
        [web](https://example.com/x), `projects/<id>/`.";
    assert_eq!(
        named_paths("docs/X.md", text),
        ["crates/xtask/src/main.rs", "docs/SANDBOX.md", "README.md"]
    );
}

/// The folder of documents the project was first written from, which a clone does not have:
/// nothing in the repository may send a reader there. Spelled in two pieces so that this file
/// does not name it.
const OUTSIDE_DOCS: &str = concat!("shared", "/");

/// Whether `bytes` name one of the outside documents: `shared/` followed by a document's name
/// (they are upper case: `PRODUCT.md`, `SECURITY-CASES.md`…) or one of its folders (`seeds`,
/// `hooks`). A path that merely has a folder called `shared` (a Python package's
/// `mcp/shared/jsonrpc.py` in a benchmark) is not one.
fn cites_outside(bytes: &[u8]) -> bool {
    let n = OUTSIDE_DOCS.len();
    bytes.windows(n).enumerate().any(|(at, w)| {
        let rest = &bytes[at + n..];
        w == OUTSIDE_DOCS.as_bytes()
            && (rest.first().is_some_and(u8::is_ascii_uppercase)
                || rest.starts_with(b"seeds")
                || rest.starts_with(b"hooks"))
    })
}

#[test]
fn the_outside_documents_are_told_from_a_folder_of_that_name() {
    let cite = |s: &str| cites_outside(s.replace("S/", OUTSIDE_DOCS).as_bytes());
    assert!(cite("see ../S/PRODUCT.md") && cite("S/seeds/x.md") && cite("S/hooks/before-stop"));
    assert!(!cite("mcp/S/jsonrpc_dispatcher.py") && !cite("no citation"));
}

#[test]
fn no_tracked_file_cites_the_outside_documents() {
    let root = repo_root();
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("git lists the tracked files");
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    let citing: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| !p.split('/').any(|c| c == "node_modules"))
        .filter(|p| {
            let bytes = std::fs::read(root.join(p)).unwrap_or_default();
            cites_outside(&bytes)
        })
        .collect();
    assert!(
        citing.is_empty(),
        "files citing {OUTSIDE_DOCS}… (cite docs/THREATS.md, docs/CLIENTS.md or the like): {citing:?}"
    );
}

/// Every case id `cargo xtask attack` requires or a test carries (`ps01_…`), as two letters of
/// a group, a dash and two digits.
fn case_ids_in(text: &str, rust_names: bool) -> Vec<String> {
    const GROUPS: [&str; 12] =
        ["PS", "SL", "TA", "HS", "AP", "CI", "ES", "OR", "PE", "RX", "PC", "UI"];
    let b = text.as_bytes();
    let mut ids = Vec::new();
    for i in 0..b.len().saturating_sub(4) {
        let (group, rest) = (&b[i..i + 2], &b[i + 2..]);
        // Upper case in the list and the catalogue, lower case in a Rust test's name.
        let spelled = if rust_names { group.to_ascii_uppercase() } else { group.to_vec() };
        let is_group = GROUPS.iter().any(|g| g.as_bytes() == spelled);
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        let digits = match (rust_names, rest) {
            (true, [c, d, b'_', ..]) | (false, [b'-', c, d, ..]) => [*c, *d],
            _ => continue,
        };
        let lower = group.iter().all(|c| c.is_ascii_lowercase());
        if is_group && boundary && digits.iter().all(u8::is_ascii_digit) && lower == rust_names {
            let [g0, g1] = [spelled[0] as char, spelled[1] as char];
            ids.push(format!("{g0}{g1}-{}{}", digits[0] as char, digits[1] as char));
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn the_threat_catalogue_describes_every_case_the_suite_uses() {
    let root = repo_root();
    let catalogue = std::fs::read_to_string(root.join("docs/THREATS.md")).unwrap();
    let attack = std::fs::read_to_string(root.join("crates/xtask/src/attack.rs")).unwrap();
    let list = attack.split("const CASES").nth(1).unwrap().split("];").next().unwrap();
    let mut used = case_ids_in(list, false);
    // The functions of every Rust source, by name (tests are `fn` or `async fn`).
    let fns: Vec<String> = sources()
        .iter()
        .flat_map(|(_, text)| text.lines().map(str::trim_start).collect::<Vec<_>>())
        .filter_map(|l| l.strip_prefix("async ").unwrap_or(l).strip_prefix("fn "))
        .map(|l| l.split(['(', '<']).next().unwrap().to_owned())
        .collect();
    for name in &fns {
        used.extend(case_ids_in(name, true));
    }
    used.sort();
    used.dedup();
    let described: Vec<String> = catalogue
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- **"))
        .flat_map(|l| case_ids_in(&l[..5.min(l.len())], false))
        .collect();
    let undescribed: Vec<&String> = used.iter().filter(|id| !described.contains(id)).collect();
    let unlisted: Vec<&String> =
        described.iter().filter(|id| !case_ids_in(list, false).contains(id)).collect();
    assert!(
        undescribed.is_empty(),
        "case ids without an entry in docs/THREATS.md: {undescribed:?}"
    );
    // Every Rust test the catalogue cites as proof exists under that name.
    let cited: Vec<&str> = catalogue
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !case_ids_in(s, true).is_empty() && !s.contains(['…', ' ', '/']))
        .collect();
    let gone: Vec<&&str> = cited.iter().filter(|t| !fns.iter().any(|f| f == *t)).collect();
    assert!(gone.is_empty(), "tests docs/THREATS.md cites that do not exist: {gone:?}");
    assert!(
        unlisted.is_empty(),
        "docs/THREATS.md cases missing from attack.rs' CASES: {unlisted:?}"
    );
}
