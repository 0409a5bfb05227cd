//! Replays every committed input of `fuzz/corpus/<target>/` — the seeds and every crash the
//! fuzzers found — through the target's function, on stable Rust, as part of
//! `cargo test --workspace`; and checks that `fuzz/` has a target file and a corpus for every
//! target this crate defines, and nothing else.

use std::path::{Path, PathBuf};

use sluice_fuzz::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join("corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_input_passes() {
    for (target, run) in TARGETS {
        let files = corpus(target);
        assert!(!files.is_empty(), "{target} has no seeds");
        for file in files {
            let data = std::fs::read(&file).expect("a corpus file");
            let res = std::panic::catch_unwind(|| run(&data));
            assert!(
                res.is_ok(),
                "{target}: {} fails (replay it with `cargo xtask fuzz`)",
                file.display()
            );
        }
    }
}

#[test]
fn every_target_has_its_fuzz_target_file() {
    let dir = fuzz_dir().join("fuzz_targets");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("fuzz/fuzz_targets")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = TARGETS.iter().map(|(t, _)| format!("{t}.rs")).collect();
    expected.sort();
    assert_eq!(files, expected);
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (target, _) in TARGETS {
        let text = std::fs::read_to_string(dir.join(format!("{target}.rs"))).expect("target");
        assert!(
            text.contains(&format!("sluice_fuzz::{target}")),
            "{target}.rs calls another target"
        );
        assert!(
            manifest.contains(&format!("name = \"{target}\"")),
            "{target} not in fuzz/Cargo.toml"
        );
    }
}
