//! `RelPath::parse`: every traversal and Windows form from PS-01..PS-06, as a table.

use sluice_core::{Coded, ErrorCode};
use sluice_guard::RelPath;

/// `expect` is `ok <display>` or `err <fragment of the message>`.
fn check(input: &str, expect: &str) {
    let got = match RelPath::parse(input) {
        Ok(p) => format!("ok {p}"),
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::PathInvalid, "{input:?}");
            let msg = e.to_string();
            match expect.strip_prefix("err ") {
                Some(frag) if msg.contains(frag) => expect.to_owned(),
                _ => format!("err {msg}"),
            }
        }
    };
    assert_eq!(got, expect, "input {input:?}");
}

#[test]
fn normal_paths_normalize() {
    check("", "ok .");
    check(".", "ok .");
    check("./", "ok .");
    check("src/main.rs", "ok src/main.rs");
    check("src//main.rs", "ok src/main.rs");
    check("./src/./main.rs/", "ok src/main.rs");
    check("src\\lib.rs", "ok src/lib.rs");
    check("a/b/../c", "ok a/c");
    check("a/..", "ok .");
    check("~", "ok ~");
    check("~/x", "ok ~/x");
    check("$HOME/x", "ok $HOME/x");
    check("%USERPROFILE%\\x", "ok %USERPROFILE%/x");
    check("%2e%2e%2fetc", "ok %2e%2e%2fetc");
    check(".env", "ok .env");
    check("con_fig/console.txt", "ok con_fig/console.txt");
    check("COM10", "ok COM10");
    check("a.b/c d/é", "ok a.b/c d/é");
}

#[test]
fn traversal_is_refused() {
    for input in ["..", "../x", "a/../../x", "a\\..\\..\\x", "./../x", "a/b/../../../x", "..\\"] {
        check(input, "err climb above the project root");
    }
}

#[test]
fn absolute_and_root_relative_are_refused() {
    check("/etc/passwd", "err absolute");
    check("/", "err absolute");
    check("\\Windows\\win.ini", "err absolute");
    check("/tmp/rt/proj_evil/x", "err absolute");
}

#[test]
fn windows_forms_are_refused() {
    check("C:x", "err drive letters");
    check("C:\\proj-old\\x", "err drive letters");
    check("c:/Windows", "err drive letters");
    check("\\\\?\\C:\\proj\\..\\..\\Windows\\win.ini", "err UNC");
    check("\\\\?\\GLOBALROOT\\Device\\HarddiskVolume1\\x", "err UNC");
    check("\\\\.\\PhysicalDrive0", "err UNC");
    check("\\\\.\\pipe\\x", "err UNC");
    check("\\\\evil\\share\\x", "err UNC");
    check("//10.0.0.5/s", "err UNC");
    check("\\??\\C:\\", "err NT object namespace");
    check("file://host/share", "err URIs");
    check("FILE:///etc/passwd", "err URIs");
    check("file:%2e%2e%2fetc", "err URIs");
    check("README.md:hidden", "err `:`");
    check("a::$DATA", "err drive letters");
    check("dir/a::$DATA", "err `:`");
    check("newdir::$INDEX_ALLOCATION", "err `:`");
}

#[test]
fn reserved_names_and_trailing_dots_are_refused() {
    for name in ["CON", "con", "Prn.txt", "aux.tar.gz", "NUL", "nul.", "COM1", "com9.log", "LPT3"] {
        check(&format!("dir/{name}"), "err invalid path");
    }
    check("CON .txt", "err reserved Windows device names");
    check("lpt¹", "err reserved Windows device names");
    check("conin$", "err reserved Windows device names");
    check("file.", "err ends with a dot or a space");
    check("dir /x", "err ends with a dot or a space");
    check("...", "err ends with a dot or a space");
    check(".git.", "err ends with a dot or a space");
    // `join` (a walk's path for every entry) refuses what `parse` refuses, ASCII or not.
    let dir = RelPath::parse("dir").unwrap();
    for name in ["CON", "cOm1.rs", "Lpt¹.txt", "COM³", "clock$", "nul .md"] {
        assert!(dir.join(name).is_err(), "{name}");
    }
    for name in ["console", "com10", "lpt", "Cargo.toml", "ÇON", "c\u{f6}m1"] {
        assert_eq!(dir.join(name).unwrap().as_str(), format!("dir/{name}"));
    }
    assert_eq!(RelPath::root().join("a").unwrap().as_str(), "a");
}

#[test]
fn control_characters_length_and_depth_are_refused() {
    check("a\0b", "err control characters");
    check("a\nb", "err control characters");
    check("a\u{1b}[31m", "err control characters");
    check("a\u{85}b", "err control characters");
    check(&"a/".repeat(3000), "err longer than 4096 bytes");
    check(&"a/".repeat(200), "err deeper than 128");
    check(&"x".repeat(256), "err longer than 255 bytes");
}

#[test]
fn relpath_helpers() {
    let p = RelPath::parse("a/b/c").unwrap();
    assert_eq!(p.parent().unwrap().as_str(), "a/b");
    assert_eq!(p.file_name(), Some("c"));
    assert_eq!(p.ancestors().collect::<Vec<_>>(), ["a", "a/b"]);
    assert!(p.starts_with(&RelPath::parse("a/b").unwrap()));
    assert!(!RelPath::parse("a/bc").unwrap().starts_with(&RelPath::parse("a/b").unwrap()));
    assert_eq!(p.strip_prefix(&RelPath::parse("a").unwrap()), Some("b/c"));
    assert!(p.join("..").is_err());
    assert!(p.join("x/y").is_err());
    assert!(p.join("x:y").is_err());
    assert_eq!(p.join("d").unwrap().as_str(), "a/b/c/d");
    assert_eq!(RelPath::root().to_string(), ".");
    assert_eq!(RelPath::root().parent(), None);
}
