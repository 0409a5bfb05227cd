//! `search_text` over a wide tree, on its many threads: the same sorted, duplicate-free answer
//! as a plain sequential reading of the files, every time; shielded files and links out never
//! in it; and the ways a file is read (whole, or streamed when big) agreeing on what is text.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::symlink;

use sluice_runner::*;

use crate::rig::{CANARY, SECRET, assert_clean, rig};

/// A tree of 40 folders (some nested) holding 10 files each, with `needle` on some lines.
fn wide_tree(root: &std::path::Path) -> BTreeSet<(String, u64)> {
    let mut expected = BTreeSet::new();
    for d in 0..40 {
        let dir = if d % 4 == 0 { format!("d{d:02}/inner") } else { format!("d{d:02}") };
        fs::create_dir_all(root.join(&dir)).unwrap();
        for f in 0..10 {
            let rel = format!("{dir}/f{f}.txt");
            let mut text = String::new();
            for line in 1..=30u64 {
                if (line + d + f) % 7 == 0 {
                    text.push_str(&format!("line {line} has a needle\n"));
                    expected.insert((rel.clone(), line));
                } else {
                    text.push_str(&format!("line {line} has nothing\n"));
                }
            }
            fs::write(root.join(&rel), text).unwrap();
        }
    }
    expected
}

#[test]
fn many_threads_give_the_sequential_answer_sorted_and_once() {
    let rig = rig();
    let tree = rig.proj.join("tree");
    let expected = wide_tree(&tree);
    // Secrets and links out, in the middle of the tree, matching the pattern too.
    for d in [3, 17, 29] {
        fs::write(tree.join(format!("d{d:02}/.env")), format!("needle {SECRET}\n")).unwrap();
        fs::write(tree.join(format!("d{d:02}/k.pem")), format!("needle {SECRET}\n")).unwrap();
        symlink(rig.base.join("canary.txt"), tree.join(format!("d{d:02}/out.txt"))).unwrap();
        symlink(rig.base.join("proj_evil"), tree.join(format!("d{d:02}/evil"))).unwrap();
    }
    let args = SearchTextArgs {
        pattern: "needle".into(),
        path: Some("tree".into()),
        max_results: Some(2000),
        ..Default::default()
    };
    for _ in 0..5 {
        let out = search_text(&rig.ws, &args).unwrap();
        assert_clean(&rig, &format!("{out:?}"));
        let got: Vec<(String, u64)> =
            out.matches.iter().map(|m| (m.path.clone(), m.line)).collect();
        let want: Vec<(String, u64)> =
            expected.iter().map(|(p, l)| (format!("tree/{p}"), *l)).collect();
        assert_eq!(got, want, "sorted by path and line, each line once");
        assert_eq!(out.files_searched, 400);
        assert!(!out.truncated);
        assert!(out.matches.iter().all(|m| m.text == format!("line {} has a needle", m.line)));
    }
}

#[test]
fn a_cap_keeps_the_answer_sorted_and_within_bounds() {
    let rig = rig();
    let expected = wide_tree(&rig.proj.join("tree"));
    let out = search_text(
        &rig.ws,
        &SearchTextArgs {
            pattern: "needle".into(),
            path: Some("tree".into()),
            max_results: Some(50),
            max_matches_per_file: Some(2),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.matches.len(), 50);
    assert_eq!(out.truncated_reason.as_deref(), Some("max_results"));
    let got: Vec<(String, u64)> = out.matches.iter().map(|m| (m.path.clone(), m.line)).collect();
    assert!(got.windows(2).all(|w| w[0] < w[1]), "sorted, no duplicate: {got:?}");
    for (path, line) in &got {
        assert!(expected.contains(&(path["tree/".len()..].to_owned(), *line)), "{path}:{line}");
    }
    let mut per_file = std::collections::BTreeMap::new();
    for (path, _) in &got {
        *per_file.entry(path).or_insert(0) += 1;
    }
    assert!(per_file.values().all(|&n| n <= 2), "{per_file:?}");
}

#[test]
fn text_and_binary_are_told_apart_however_the_file_is_read() {
    let rig = rig();
    let put = |name: &str, bytes: &[u8]| fs::write(rig.proj.join("enc").join(name), bytes).unwrap();
    fs::create_dir_all(rig.proj.join("enc")).unwrap();
    // A NUL byte far past the first 64 KiB still makes the file binary.
    let mut late_nul = b"needle early\n".to_vec();
    late_nul.extend(b"filler line\n".repeat(20_000));
    late_nul.extend(b"\x00needle late\n");
    put("late_nul.txt", &late_nul);
    // UTF-16 with a byte-order mark is text, searched as what it says.
    let mut le = vec![0xFF, 0xFE];
    le.extend("first\nthe needle in utf-16\n".encode_utf16().flat_map(|u| u.to_le_bytes()));
    put("le.txt", &le);
    put("bom8.txt", b"\xEF\xBB\xBFneedle after a bom\n");
    put("empty.txt", b"");
    put("no_eol.txt", b"x\nneedle");
    // Bigger than a whole read: streamed, with the same rules.
    let mut big = b"line\n".repeat(1_000_000);
    big.extend(b"the big needle\n");
    put("big.txt", &big);
    let mut big_bin = big.clone();
    big_bin.extend(b"\x00");
    put("big_bin.txt", &big_bin);

    let out = search_text(
        &rig.ws,
        &SearchTextArgs {
            pattern: "needle".into(),
            path: Some("enc".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let got: Vec<(&str, u64, &str)> =
        out.matches.iter().map(|m| (m.path.as_str(), m.line, m.text.as_str())).collect();
    assert_eq!(
        got,
        [
            ("enc/big.txt", 1_000_001, "the big needle"),
            ("enc/bom8.txt", 1, "needle after a bom"),
            ("enc/le.txt", 2, "the needle in utf-16"),
            ("enc/no_eol.txt", 2, "needle"),
        ]
    );
    assert_eq!(out.files_skipped_binary, 2);
    assert_eq!(out.files_searched, 7);

    let small = search_text(
        &rig.ws,
        &SearchTextArgs {
            pattern: "needle".into(),
            path: Some("enc".into()),
            max_file_size: Some(1000),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(small.files_skipped_large, 3);
    assert_eq!(small.matches.len(), 3);
}

#[test]
fn shielded_files_deep_in_the_tree_are_never_read() {
    let rig = rig();
    for d in 0..20 {
        let dir = rig.proj.join(format!("deep/{d}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("secrets.yaml"), format!("needle {SECRET}\n")).unwrap();
        fs::write(dir.join("ok.txt"), "needle\n").unwrap();
    }
    let out = search_text(
        &rig.ws,
        &SearchTextArgs {
            pattern: "needle|SHIELDED|CANARY".into(),
            respect_gitignore: Some(false),
            max_results: Some(2000),
            ..Default::default()
        },
    )
    .unwrap();
    assert_clean(&rig, &format!("{out:?}"));
    assert_eq!(out.matches.iter().filter(|m| m.path.starts_with("deep/")).count(), 20);
    assert!(!format!("{out:?}").contains(CANARY));
}
