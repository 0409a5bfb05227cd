//! PS and SL: paths that climb, alias or link out of the project, over HTTP and stdio, through
//! every path-taking tool, and the TOCTOU swap race.

use std::os::unix::fs::symlink;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::{BOTH, Rig, Via, scale, wording};
use crate::harness::{result, wait_pending};

/// Every read-only and writing tool that takes a path, with that path.
fn path_calls(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"project": "demo", "path": path})),
        ("read_media", json!({"project": "demo", "path": path})),
        ("stat", json!({"project": "demo", "path": path})),
        ("list_directory", json!({"project": "demo", "path": path})),
        ("find_files", json!({"project": "demo", "path": path})),
        ("search_text", json!({"project": "demo", "path": path, "pattern": "CANARY"})),
        ("git_diff", json!({"project": "demo", "paths": [path]})),
        ("write_file", json!({"project": "demo", "path": path, "content": "owned"})),
        ("create_directory", json!({"project": "demo", "path": path})),
        ("move_path", json!({"project": "demo", "from": "README.md", "to": path})),
    ]
}

/// Every tool refuses `path`; returns the refusals' wordings (path removed).
fn all_refuse(rig: &Rig, via: Via, path: &str) -> Vec<String> {
    path_calls(path)
        .into_iter()
        .map(|(tool, args)| {
            let v = rig.call(via, tool, args);
            let (out, err) = result(&v);
            // git_diff of a path that names nothing outside is an empty diff, never content.
            if tool == "git_diff" && !err {
                assert_eq!(out["files"], json!([]), "{via:?} git_diff {path}: {v}");
                return String::new();
            }
            assert!(err, "{via:?} {tool} {path:?} was not refused: {v}");
            format!("{tool}: {}", wording(out["message"].as_str().unwrap_or_default(), path))
        })
        .collect()
}

#[test]
fn ps01_a_sibling_sharing_the_prefix_is_outside_and_denials_do_not_tell_what_exists() {
    let rig = Rig::new("off");
    let evil = rig.sb.evil.to_str().unwrap().to_owned();
    for via in BOTH {
        for pair in [
            ["../proj_evil/x.txt", "../proj_evil/missing.txt"],
            [&format!("{evil}/x.txt"), &format!("{evil}/missing.txt")],
            ["../proj2/x", "../proj_evil"],
        ] {
            let (present, missing) =
                (all_refuse(&rig, via, pair[0]), all_refuse(&rig, via, pair[1]));
            assert_eq!(present, missing, "{via:?}: a denial tells {} exists", pair[0]);
        }
    }
    rig.finish(&[]);
}

#[test]
fn ps02_traversal_encodings_uris_and_expansions_never_leave_the_project() {
    let rig = Rig::new("off");
    let forms = [
        "a/../../outside.txt",
        "src/../../outside.txt",
        "a\\..\\..\\outside.txt",
        "%2e%2e%2foutside.txt",
        "..%2Foutside.txt",
        "file:///etc/passwd",
        "file://localhost/etc/passwd",
        "/etc/passwd",
        "C:x",
        "\\Windows\\win.ini",
        "~/.ssh/id_rsa",
        "$HOME/.ssh/id_rsa",
        "${HOME}/rt_canary",
        "%USERPROFILE%\\.ssh\\id_rsa",
        "../outside.txt\0.md",
        "src/main.rs/../../../outside.txt",
        "..\"",
        ".. ",
        "../.",
    ];
    for via in BOTH {
        for form in forms {
            for (tool, args) in path_calls(form) {
                let v = rig.call(via, tool, args);
                if result(&v).1 || tool == "git_diff" {
                    continue;
                }
                // Only a form that is a plain name inside (`%2e%2e%2f…`, `$HOME`, `.. `) may
                // work, and then it named a file of that very name in the project.
                let plain = !form.starts_with(['/', '\\'])
                    && !form.contains(':')
                    && form.split(['/', '\\']).all(|c| c != "..");
                assert!(plain, "{via:?} {tool} {form:?} was not refused: {v}");
                assert!(
                    rig.project().join(form).symlink_metadata().is_ok(),
                    "{tool} {form:?}: {v}"
                );
            }
        }
    }
    // Whatever was created, was created inside.
    rig.finish(&[]);
}

#[test]
fn ps03_windows_namespaces_and_unc_forms_are_refused_as_invalid() {
    let rig = Rig::new("off");
    for via in BOTH {
        for form in [
            "\\\\?\\C:\\proj\\..\\..\\Windows\\win.ini",
            "\\\\?\\GLOBALROOT\\Device\\HarddiskVolume1\\x",
            "\\??\\C:\\",
            "\\\\.\\PhysicalDrive0",
            "\\\\.\\pipe\\x",
            "\\\\evil\\share\\x",
            "//10.0.0.5/s",
            "file://host/share",
        ] {
            let (code, _) = rig.denied(via, "read_file", json!({"project": "demo", "path": form}));
            assert_eq!(code, "path_invalid", "{via:?} {form}");
            let (code, _) = rig.denied(
                via,
                "write_file",
                json!({"project": "demo", "path": form, "content": "x"}),
            );
            assert_eq!(code, "path_invalid", "{via:?} write {form}");
        }
    }
    rig.finish(&[]);
}

#[test]
fn ps05_streams_and_short_names_cannot_reach_or_hide_anything() {
    let rig = Rig::new("off");
    for via in BOTH {
        for form in ["README.md:hidden", "a::$DATA", "newdir::$INDEX_ALLOCATION", "src:main.rs"] {
            let (code, _) = rig.denied(
                via,
                "write_file",
                json!({"project": "demo", "path": form, "content": "x"}),
            );
            assert_eq!(code, "path_invalid", "{via:?} {form}");
        }
        // An 8.3 alias of `.git` reaches nothing on a volume without short names, and the shield
        // judges the name the tool is given, never a looser one.
        let (code, _) =
            rig.denied(via, "read_file", json!({"project": "demo", "path": "GIT~1/config"}));
        assert_eq!(code, "not_found");
    }
    rig.finish(&[]);
}

#[test]
fn ps06_case_variants_of_shielded_names_are_shielded_too() {
    let rig = Rig::new("off");
    for via in BOTH {
        for form in [".GIT/config", ".Git/hooks/pre-commit", ".ENV", ".Env.local", "ID_RSA"] {
            let (code, _) = rig.denied(via, "read_file", json!({"project": "demo", "path": form}));
            assert_eq!(code, "path_shielded", "{via:?} read {form}");
            let (code, _) = rig.denied(
                via,
                "write_file",
                json!({"project": "demo", "path": form, "content": "x"}),
            );
            assert_eq!(code, "path_shielded", "{via:?} write {form}");
        }
    }
    rig.finish(&[]);
}

#[test]
fn sl01_links_and_link_chains_out_of_the_project_are_refused_by_every_tool() {
    let rig = Rig::new("off");
    let p = rig.project().to_path_buf();
    symlink("/etc", p.join("l")).unwrap();
    symlink(rig.home.join(".ssh/id_rsa"), p.join("k")).unwrap();
    symlink(&rig.home, p.join("h")).unwrap();
    symlink("h", p.join("chain")).unwrap();
    symlink(&rig.sb.evil, p.join("evil")).unwrap();
    for via in BOTH {
        for pair in
            [["h/.bashrc", "h/missing"], ["evil/x.txt", "evil/missing"], ["l/passwd", "l/nope"]]
        {
            let (a, b) = (all_refuse(&rig, via, pair[0]), all_refuse(&rig, via, pair[1]));
            assert_eq!(a, b, "{via:?}: a denial tells {} exists", pair[0]);
        }
        for path in ["k", "h", "chain", "chain/.bashrc", "evil", "l"] {
            all_refuse(&rig, via, path);
        }
        // Recursion never follows a link out: a search for every canary and a deep listing of
        // the whole project find nothing outside.
        let v = rig.call(via, "search_text", json!({"project": "demo", "pattern": "RT|CANARY"}));
        assert!(!result(&v).1, "{v}");
        let v = rig.call(
            via,
            "list_directory",
            json!({"project": "demo", "depth": 10, "include_hidden": true}),
        );
        assert!(!result(&v).1, "{v}");
        let v = rig.call(via, "find_files", json!({"project": "demo", "globs": ["**/*"]}));
        assert!(!result(&v).1, "{v}");
    }
    rig.finish(&["root:x:0:0"]);
}

#[test]
fn sl02_dangling_and_parent_links_are_never_written_through() {
    let rig = Rig::new("off");
    let p = rig.project().to_path_buf();
    symlink(rig.home.join(".profile"), p.join("new.txt")).unwrap();
    symlink(rig.home.join(".bashrc"), p.join("rc")).unwrap();
    symlink("/", p.join("dir")).unwrap();
    symlink(&rig.home, p.join("homelink")).unwrap();
    for via in BOTH {
        for path in ["new.txt", "rc", "dir/tmp/owned", "homelink/.profile", "homelink/new"] {
            rig.denied(via, "write_file", json!({"project": "demo", "path": path, "content": "x"}));
            rig.denied(
                via,
                "write_file",
                json!({"project": "demo", "path": path, "content": "x", "create_parents": true}),
            );
        }
        rig.denied(
            via,
            "edit_file",
            json!({"project": "demo", "path": "rc",
            "edits": [{"old_text": "RT", "new_text": "owned"}]}),
        );
        rig.denied(via, "move_path", json!({"project": "demo", "from": "README.md", "to": "rc"}));
        rig.denied(via, "create_directory", json!({"project": "demo", "path": "homelink/d"}));
    }
    assert!(!rig.home.join(".profile").exists());
    rig.finish(&[]);
}

/// SL-03: a thread swaps `sub` between a folder and a link to HOME while reads, writes,
/// listings, searches, moves and recursive deletes run through it. 0 escapes: no canary in any
/// answer and nothing outside changed.
#[test]
fn sl03_a_folder_swapped_for_a_link_mid_operation_never_lets_an_operation_out() {
    let rig = Rig::new("off");
    let p = rig.project().to_path_buf();
    let (sub, parked) = (p.join("sub"), p.join("parked"));
    // Puts `sub` back as a folder with its files; only called holding the gate.
    let restore = || {
        std::fs::create_dir_all(sub.join("d")).unwrap();
        std::fs::write(sub.join("f.txt"), "inside").unwrap();
        std::fs::write(sub.join("d/g.txt"), "inside").unwrap();
    };
    restore();
    let iterations = scale(300, 10_000);
    let deletes = scale(5, 100);
    let (stop, gate) = (AtomicBool::new(false), Mutex::new(()));
    let swaps = AtomicUsize::new(0);
    // Reads of `sub/f.txt` (there whenever `sub` is the folder) that met `sub` swapped out.
    let (mut calls, mut met_swap) = (0usize, 0usize);
    /// Stops the swapper when the calls end, also by a panic (else the scope would wait on it).
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    std::thread::scope(|s| {
        let _stop = StopOnDrop(&stop);
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let _cycle = gate.lock().unwrap();
                // sub: folder → link to HOME → folder again.
                if std::fs::rename(&sub, &parked).is_ok() {
                    // A delete may have removed the link meanwhile: then the folder comes back.
                    let _ = symlink(&rig.home, &sub);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&sub);
                    std::fs::rename(&parked, &sub).unwrap();
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
                drop(_cycle);
                // A breath between swaps, so the swapper does not starve the calls it races.
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        });
        // The set length, then reads alone until one met the swap (bounded).
        for i in 0..iterations * 10 {
            if i >= iterations && met_swap > 0 {
                break;
            }
            let which = if i < iterations { i % 8 } else { 1 };
            let (tool, args) = match which {
                0 => ("read_file", json!({"project": "demo", "path": "sub/.bashrc"})), // HOME's, if it escaped
                1 => ("read_file", json!({"project": "demo", "path": "sub/f.txt"})),
                2 => ("list_directory", json!({"project": "demo", "path": "sub", "depth": 3})),
                3 => ("search_text", json!({"project": "demo", "path": "sub", "pattern": "RT"})),
                4 => (
                    "write_file",
                    json!({"project": "demo", "path": "sub/notes.txt",
                    "content": "owned"}),
                ),
                5 => (
                    "write_file",
                    json!({"project": "demo", "path": "sub/d/w.txt",
                    "content": "w"}),
                ),
                6 => ("create_directory", json!({"project": "demo", "path": "sub/d/new"})),
                _ => ("stat", json!({"project": "demo", "path": "sub/.ssh/id_rsa"})),
            };
            let v = rig.call(Via::Http, tool, args);
            if which == 1 && result(&v).1 {
                met_swap += 1;
            }
            calls += 1;
        }
        // Moves and recursive deletes (they ask): planned with `sub` a folder, approved while
        // the swap runs, so the commit meets whatever `sub` has become.
        for i in 0..deletes {
            let held = gate.lock().unwrap();
            restore();
            let rig = &rig;
            let call = s.spawn(move || {
                let (tool, args) = if i % 2 == 0 {
                    ("delete_path", json!({"project": "demo", "path": "sub", "recursive": true}))
                } else {
                    let to = format!("sub/d/moved-{i}.txt");
                    ("move_path", json!({"project": "demo", "from": "sub/f.txt", "to": to}))
                };
                rig.call(Via::Http, tool, args)
            });
            let pending = wait_pending(&rig.sb);
            drop(held);
            rig.cli(&["approvals", "approve", pending["id"].as_str().unwrap()]);
            call.join().unwrap();
            calls += 1;
        }
    });
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!(
        "SL-03: {calls} calls ({deletes} approved moves and deletes) under {swaps} folder/link \
         swaps; {met_swap} reads of sub/f.txt met the swap"
    );
    assert!(swaps > 0 && met_swap > 0, "the race never happened");
    assert!(rig.home.join(".ssh/id_rsa").exists() && rig.home.join(".bashrc").exists());
    rig.finish(&[]);
}
