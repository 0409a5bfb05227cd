//! Tests of the Seatbelt profile text and command line (pure strings, so they run on every
//! Unix, not only macOS).

use super::*;

#[test]
fn unix_sockets_are_denied_but_in_the_jobs_folders_and_dns_with_the_network_on() {
    let (project, state) = (Path::new("/Users/a/app"), Path::new("/private/var/j1"));
    for network_off in [true, false] {
        let p = profile(&[project, state], &[], network_off).unwrap();
        let deny = p.find("(deny network-outbound (remote unix-socket))").unwrap();
        let allow = p.rfind("(remote unix-socket (subpath \"/Users/a/app\"))").unwrap();
        assert!(deny < allow, "{p}");
        assert!(p.contains("(remote unix-socket (subpath \"/private/var/j1\"))"), "{p}");
        assert_eq!(p.contains("mDNSResponder"), !network_off, "{p}");
    }
}

#[test]
fn the_data_folder_is_hidden_but_the_jobs_own_folders_in_it_stay_writable() {
    let (project, data) = (Path::new("/Users/a/app"), Path::new("/Users/a/Library/Sluice"));
    let state = data.join("jobs/j1");
    let p = profile(&[project, state.as_path()], &[data], false).unwrap();
    let deny = p.find("(deny file-read* file-write*\n    (subpath \"/Users/a/Library/Sluice\")");
    let again = p.rfind("(allow file-read* file-write*\n    (subpath \"/Users/a/app\")");
    assert!(deny.is_some() && again.is_some() && deny < again, "{p}");
    assert!(p[again.unwrap()..].contains("(subpath \"/Users/a/Library/Sluice/jobs/j1\")"));
    let rel = Path::new("Library");
    assert!(matches!(profile(&[project], &[rel], false), Err(ExecError::Unconfinable(_))));
}

fn writable() -> Vec<PathBuf> {
    vec![PathBuf::from("/Users/ann/code/demo"), PathBuf::from("/private/var/sluice/jobs/j1")]
}

fn refs(v: &[PathBuf]) -> Vec<&Path> {
    v.iter().map(PathBuf::as_path).collect()
}

#[test]
fn the_profile_denies_writes_then_allows_the_project_and_private_folders() {
    let w = writable();
    let p = profile(&refs(&w), &[], false).unwrap();
    let deny = p.find("(deny file-write*)").unwrap();
    let allow = p.find("(allow file-write*").unwrap();
    assert!(p.starts_with("(version 1)\n(allow default)\n"), "{p}");
    assert!(deny < allow, "the allow must come after the deny (last match wins): {p}");
    assert!(p.contains("(subpath \"/Users/ann/code/demo\")"), "{p}");
    assert!(p.contains("(subpath \"/private/var/sluice/jobs/j1\")"), "{p}");
    assert!(p.contains("(literal \"/dev/null\")"), "{p}");
    assert!(!p.contains("remote ip"), "IP network stays allowed: {p}");
    // Balanced parentheses: one form per line group, nothing left open.
    assert_eq!(p.matches('(').count(), p.matches(')').count(), "{p}");
}

#[test]
fn network_off_denies_outbound_ip() {
    let w = writable();
    let p = profile(&refs(&w), &[], true).unwrap();
    assert!(p.contains("\n(deny network-outbound (remote ip \"*:*\"))\n"), "{p}");
    // and it is not allowed again by a later rule
    let deny = p.find("(deny network-outbound (remote ip").unwrap();
    assert!(!p[deny..].contains("remote ip \"*:*\"))\n(allow"), "{p}");
}

#[test]
fn quotes_and_backslashes_in_paths_are_escaped_and_cannot_close_the_string() {
    // A folder name crafted to end the string and append a rule allowing every write.
    let evil = PathBuf::from(r#"/Users/ann/x")) (allow file-write* (subpath "/"#);
    let p = profile(&[evil.as_path()], &[], false).unwrap();
    assert!(p.contains(r#"(subpath "/Users/ann/x\")) (allow file-write* (subpath \"/")"#), "{p}");
    let back = PathBuf::from(r"/Users/ann/a\b\");
    let p = profile(&[back.as_path()], &[], false).unwrap();
    assert!(p.contains(r#"(subpath "/Users/ann/a\\b\\")"#), "{p}");
    // Every string literal is closed where it should be: unescaped quotes come in pairs
    // and no line holds more than one literal.
    for line in p.lines() {
        let unescaped = unescaped_quotes(line);
        assert!(unescaped == 0 || unescaped == 2, "{line}");
    }
}

fn unescaped_quotes(line: &str) -> usize {
    let mut n = 0;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => n += 1,
            _ => escaped = false,
        }
    }
    n
}

#[test]
fn control_characters_and_relative_paths_are_refused() {
    for bad in ["/Users/ann/new\nline", "/Users/ann/tab\there", "/x/\u{1b}[31m"] {
        let p = PathBuf::from(bad);
        assert!(matches!(profile(&[p.as_path()], &[], true), Err(ExecError::Unconfinable(_))));
    }
    let rel = PathBuf::from("code/demo");
    assert!(matches!(profile(&[rel.as_path()], &[], true), Err(ExecError::Unconfinable(_))));
}

#[test]
fn the_command_line_puts_the_profile_before_the_absolute_program() {
    let args: Vec<OsString> = vec!["-p".into(), "(allow default)".into(), "--".into()];
    let (program, argv) = command_line("(version 1)", Path::new("/usr/bin/cc"), &args).unwrap();
    assert_eq!(program, PathBuf::from("/usr/bin/sandbox-exec"));
    let shown: Vec<&str> = argv.iter().map(|a| a.to_str().unwrap()).collect();
    assert_eq!(shown, ["-p", "(version 1)", "/usr/bin/cc", "-p", "(allow default)", "--"]);
    assert!(command_line("(version 1)", Path::new("cc"), &[]).is_err());
}

#[test]
fn a_granted_store_is_readable_but_what_is_hidden_beneath_it_is_not() {
    let home = Path::new("/Users/a");
    let (ssh, npmrc, config, gh) =
        (home.join(".ssh"), home.join(".npmrc"), home.join(".config"), home.join(".config/gh"));
    let (hidden, granted) = ([ssh.as_path(), gh.as_path()], [npmrc.as_path(), config.as_path()]);
    let docker = Path::new("/private/var/run/docker.sock");
    let p = profile_with(&Profile {
        writable: &[Path::new("/Users/a/app")],
        hidden: &hidden,
        granted: &granted,
        sockets: &[docker],
        network_off: true,
        ..Profile::default()
    })
    .unwrap();
    let deny = p.find("(deny file-read* file-write*\n    (subpath \"/Users/a/.ssh\")").unwrap();
    let allow = p.find("(allow file-read*\n    (subpath \"/Users/a/.npmrc\")").unwrap();
    let again = p.rfind("(deny file-read* file-write*\n    (subpath \"/Users/a/.config/gh\")");
    assert!(deny < allow && again.is_some_and(|a| a > allow), "{p}");
    assert!(!p[allow..].contains("(subpath \"/Users/a/.ssh\")"), "{p}");
    let unix = p.find("(deny network-outbound (remote unix-socket))").unwrap();
    let opted = p.find("(remote unix-socket (path-literal \"/private/var/run/docker.sock\"))");
    assert!(opted.is_some_and(|o| o > unix), "{p}");
    assert_eq!(p.matches('(').count(), p.matches(')').count(), "{p}");
}

#[test]
fn what_the_shield_hides_is_denied_after_the_project_is_allowed_and_git_programs_are_read_only() {
    use crate::cover::Covered;
    let app = Path::new("/Users/a/app");
    let covered = [
        Covered { path: app.join(".env"), dir: false, id: (1, 2) },
        Covered { path: app.join("deploy/.ssh"), dir: true, id: (1, 3) },
    ];
    let (config, hooks) = (app.join(".git/config"), app.join(".git/hooks"));
    let p = profile_with(&Profile {
        writable: &[app],
        hidden: &[Path::new("/Users/a/.ssh")],
        covered: &covered,
        read_only: &[config.as_path(), hooks.as_path()],
        ..Profile::default()
    })
    .unwrap();
    // Last match wins: the denial must come after the project's last allowance.
    let allowed = p.rfind("(allow file-read* file-write*\n    (subpath \"/Users/a/app\")").unwrap();
    let denied = p
        .find(
            "(deny file-read* file-write*\n    (literal \"/Users/a/app/.env\")\n    \
             (subpath \"/Users/a/app/deploy/.ssh\")\n)",
        )
        .unwrap();
    let git = p
        .find(
            "(deny file-write*\n    (subpath \"/Users/a/app/.git/config\")\n    \
             (subpath \"/Users/a/app/.git/hooks\")\n)",
        )
        .unwrap();
    assert!(allowed < denied && denied < git, "{p}");
    assert_eq!(p.matches('(').count(), p.matches(')').count(), "{p}");
}

#[test]
fn seatbelt_is_not_available_off_macos() {
    if !cfg!(target_os = "macos") {
        assert!(!available());
    }
}
