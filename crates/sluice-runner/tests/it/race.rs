//! SL-03: `sub` is swapped between a real folder and a link to an outside folder holding a
//! canary (atomically, with `renameat2(RENAME_EXCHANGE)`), while the tools hammer `sub/...`.

use std::fs;
use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rustix::fs::{CWD, RenameFlags, renameat_with};
use sluice_runner::*;

use crate::rig::{CANARY, assert_clean, iterations, rig};

#[test]
fn sl03_directory_swapped_for_outside_link_never_leaks() {
    let rig = rig();
    let outside = rig.base.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("f.txt"), format!("needle {CANARY}\n")).unwrap();
    fs::create_dir_all(rig.proj.join("swap")).unwrap();
    fs::write(rig.proj.join("swap/f.txt"), "needle inside\n").unwrap();
    symlink(&outside, rig.proj.join("swap_link")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (a, b) = (rig.proj.join("swap"), rig.proj.join("swap_link"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    // The race is run both ways: reads that met the folder, and reads that met the link and
    // were refused. Past the set length it goes on until both happened (bounded).
    let (mut inside_reads, mut refused_reads) = (0usize, 0usize);
    let length = iterations(3000, 10_000);
    for i in 0..length * 10 {
        if i >= length && inside_reads > 0 && refused_reads > 0 {
            break;
        }
        match read_file(&rig.ws, &ReadFileArgs { path: "swap/f.txt".into(), ..Default::default() })
        {
            Ok(out) => {
                assert_clean(&rig, &out.content);
                inside_reads += 1;
            }
            Err(e) => {
                assert_clean(&rig, &e.to_string());
                refused_reads += 1;
            }
        }
        if i % 3 == 0 {
            let list = list_directory(
                &rig.ws,
                &ListDirectoryArgs {
                    path: Some("swap".into()),
                    depth: Some(2),
                    ..Default::default()
                },
            );
            assert_clean(&rig, &format!("{list:?}"));
        }
        if i % 10 == 0 {
            for path in [None, Some("swap".to_owned())] {
                let out = search_text(
                    &rig.ws,
                    &SearchTextArgs { pattern: "needle|CANARY".into(), path, ..Default::default() },
                );
                assert_clean(&rig, &format!("{out:?}"));
            }
            let found = find_files(&rig.ws, &FindFilesArgs::default());
            assert_clean(&rig, &format!("{found:?}"));
            let s = stat(&rig.ws, &StatArgs { path: "swap/f.txt".into() });
            assert_clean(&rig, &format!("{s:?}"));
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!(
        "SL-03: {swaps} swaps; {inside_reads} reads met the folder, {refused_reads} the link"
    );
    // Not a timing assertion: only that the attack was really attempted both ways.
    assert!(swaps > 0 && inside_reads > 0 && refused_reads > 0, "the race never happened");
}

#[test]
fn sl03_swap_race_with_fallback_walk() {
    let rig = rig();
    rig.ws.root().set_openat2(false);
    let outside = rig.base.join("outside2");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("f.txt"), format!("needle {CANARY}\n")).unwrap();
    fs::create_dir_all(rig.proj.join("swap")).unwrap();
    fs::write(rig.proj.join("swap/f.txt"), "needle inside\n").unwrap();
    symlink(&outside, rig.proj.join("swap_link")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (a, b) = (rig.proj.join("swap"), rig.proj.join("swap_link"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // As above: both sides of the race met, going on past the set length until they are.
    let (mut inside_reads, mut refused_reads) = (0usize, 0usize);
    let length = iterations(2000, 10_000);
    for i in 0..length * 10 {
        if i >= length && inside_reads > 0 && refused_reads > 0 {
            break;
        }
        let out =
            read_file(&rig.ws, &ReadFileArgs { path: "swap/f.txt".into(), ..Default::default() });
        assert_clean(&rig, &format!("{out:?}"));
        match out {
            Ok(_) => inside_reads += 1,
            Err(_) => refused_reads += 1,
        }
        let s = stat(&rig.ws, &StatArgs { path: "swap/f.txt".into() });
        assert_clean(&rig, &format!("{s:?}"));
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!(
        "SL-03 (fallback walk): {swaps} swaps; {inside_reads} reads met the folder, \
         {refused_reads} the link"
    );
    assert!(swaps > 0 && inside_reads > 0 && refused_reads > 0, "the race never happened");
}
