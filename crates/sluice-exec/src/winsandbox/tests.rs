//! Tests of the Windows sandbox's rules (pure data, so they run on every system), written as
//! attacks: spellings that alias a hidden store, a project placed to drag a secret in with it,
//! text smuggled into a SID or a firewall script, a network rule that lets something out.

use sluice_core::ExecMode;

use super::acl::{self, AceKind, AclInputs, Rights, Scope, plan};
use super::firewall::{self, Action, SandboxUser};
use super::*;

fn p(text: &str) -> WinPath {
    WinPath::parse(text).unwrap()
}

const SID: &str = "S-1-5-21-1004336348-1177238915-682003330-1013";

fn sid() -> Sid {
    Sid::parse(SID).unwrap()
}

struct Fixture {
    profile: WinPath,
    data: WinPath,
    root: WinPath,
    private: WinPath,
    hidden: Vec<WinPath>,
    unhidden: Vec<WinPath>,
    granted: Vec<WinPath>,
}

impl Fixture {
    fn new(root: &str) -> Fixture {
        Fixture {
            profile: p(r"C:\Users\ann"),
            data: p(r"C:\Users\ann\AppData\Roaming\Sluice"),
            root: p(root),
            private: p(r"C:\Users\ann\AppData\Roaming\Sluice\state\p1\exec"),
            hidden: vec![],
            unhidden: vec![],
            granted: vec![],
        }
    }

    fn inputs(&self, exec: ExecMode) -> AclInputs<'_> {
        AclInputs {
            profile: &self.profile,
            data_dir: &self.data,
            project_root: &self.root,
            private: &self.private,
            exec,
            hidden: &self.hidden,
            unhidden: &self.unhidden,
            granted: &self.granted,
        }
    }

    fn plan(&self, exec: ExecMode) -> Result<AclPlan, WinSandboxError> {
        plan(&self.inputs(exec))
    }
}

fn kinds(plan: &AclPlan, path: &str) -> Vec<(AceKind, Rights)> {
    plan.on(&p(path)).map(|e| (e.kind, e.rights)).collect()
}

#[test]
fn paths_have_one_spelling_and_aliases_are_refused() {
    assert_eq!(p("c:/Users/ann//code/").as_str(), r"C:\Users\ann\code");
    assert_eq!(p("d:").as_str(), r"D:\");
    for alias in [
        r"C:\Users\ann\code\..\.ssh",
        r"C:\Users\ann\.\.ssh",
        r"C:\Users\ann\.ssh.",
        r"C:\Users\ann\.ssh ",
        r"C:\Users\ann\.ssh::$DATA",
        r"C:\Users\ann\SSH~1",
        r"C:\PROGRA~1\app",
        r"C:\Users\ann\nul.txt",
        r"C:\Users\ann\COM1",
        "C:\\Users\\ann\\a\u{0}b",
        "C:\\Users\\ann\\a\nb",
        r#"C:\Users\ann\a"b"#,
        r"C:\Users\ann\a*",
        r"\\server\share\x",
        r"\\?\C:\x",
        r"\\.\pipe\x",
        r"C:relative",
        r"Users\ann",
        "",
        "1:\\x",
    ] {
        let err = WinPath::parse(alias).unwrap_err();
        assert_eq!(err.code(), "bad_path", "{alias:?}");
        assert!(!err.to_string().contains("ann"), "messages name no path: {err}");
    }
    assert!(WinPath::parse(&format!("C:\\{}", "a\\".repeat(20_000))).is_err());
    // A tilde that is not a short name is an ordinary name.
    assert!(WinPath::parse(r"C:\Users\ann\code~old\x~y").is_ok());
}

#[test]
fn comparisons_ignore_case_and_go_name_by_name() {
    let ssh = p(r"C:\Users\Ann\.SSH\id_ed25519");
    assert!(ssh.starts_with(&p(r"c:\users\ann\.ssh")));
    assert!(!p(r"C:\Users\ann\.sshx").starts_with(&p(r"C:\Users\ann\.ssh")));
    assert!(!p(r"D:\Users\ann\.ssh").starts_with(&p(r"C:\Users\ann\.ssh")));
    assert!(p(r"C:\x").starts_with(&p(r"C:\")));
}

#[test]
fn a_sid_is_a_local_accounts_or_nothing() {
    assert_eq!(sid().as_str(), SID);
    for bad in [
        "S-1-1-0",                                                   // Everyone
        "S-1-5-32-545",                                              // Users
        "S-1-5-21-1004336348-1177238915-682003330-500",              // Administrator
        "S-1-5-21-1004336348-1177238915-682003330-1013)(A;;GA;;;WD", // ACE injection
        "S-1-5-21-1004336348-1177238915-682003330-1013 ",
        "S-1-5-21-1004336348-1177238915-682003330",
        "S-1-5-21-1004336348-1177238915-682003330-1013-7",
        "S-1-5-21-+1-2-3-1013",
        "S-1-5-21-01-2-3-1013",
        "S-1-5-21-99999999999-2-3-1013",
        "S-1-5-21-1-2-3-４５６７",
        "",
    ] {
        let err = Sid::parse(bad).unwrap_err();
        assert_eq!(err.code(), "bad_sid", "{bad:?}");
    }
}

#[test]
fn the_project_is_granted_by_mode_and_the_private_folders_writable() {
    let f = Fixture::new(r"C:\Users\ann\code\app");
    let any = f.plan(ExecMode::Any).unwrap();
    assert_eq!(kinds(&any, r"C:\Users\ann\code\app"), [(AceKind::Allow, Rights::Modify)]);
    let private = r"C:\Users\ann\AppData\Roaming\Sluice\state\p1\exec";
    assert_eq!(kinds(&any, private), [(AceKind::Allow, Rights::Modify)]);
    assert_eq!(kinds(&any, r"C:\Users\ann\.cargo"), [(AceKind::Allow, Rights::ReadExecute)]);
    let project = f.plan(ExecMode::Project).unwrap();
    assert_eq!(kinds(&project, r"C:\Users\ann\code\app"), [(AceKind::Allow, Rights::Modify)]);
    let safe = f.plan(ExecMode::Safe).unwrap();
    assert_eq!(kinds(&safe, r"C:\Users\ann\code\app"), [(AceKind::Allow, Rights::ReadExecute)]);
    assert_eq!(f.plan(ExecMode::Off).unwrap_err().code(), "refused");
}

#[test]
fn the_profiles_secrets_stay_denied_when_the_project_is_in_the_profile() {
    let f = Fixture::new(r"C:\Users\ann\code\app");
    let plan = f.plan(ExecMode::Any).unwrap();
    for store in [
        r"C:\Users\ann\.ssh",
        r"C:\Users\ann\.aws",
        r"C:\Users\ann\.config\gh",
        r"C:\Users\ann\.docker",
        r"C:\Users\ann\.kube",
        r"C:\Users\ann\.npmrc",
        r"C:\Users\ann\.pypirc",
        r"C:\Users\ann\.netrc",
        r"C:\Users\ann\.git-credentials",
        r"C:\Users\ann\AppData\Roaming\Microsoft\Credentials",
        r"C:\Users\ann\AppData\Local\Microsoft\Credentials",
        r"C:\Users\ann\AppData\Roaming\Microsoft\Protect",
        r"C:\Users\ann\AppData\Local\Microsoft\Vault",
        r"C:\Users\ann\AppData\Local\Google\Chrome\User Data",
        r"C:\Users\ann\AppData\Local\Microsoft\Edge\User Data",
        r"C:\Users\ann\AppData\Roaming\Mozilla\Firefox",
        r"C:\Users\ann\AppData\Roaming\Sluice",
        // Beneath a toolchain folder the plan grants: the explicit deny wins.
        r"C:\Users\ann\.cargo\credentials.toml",
    ] {
        assert_eq!(kinds(&plan, store), [(AceKind::Deny, Rights::All)], "{store}");
    }
    // Nothing grants the profile itself or anything holding a store.
    for e in plan.entries.iter().filter(|e| e.kind == AceKind::Allow) {
        for d in plan.entries.iter().filter(|d| d.kind == AceKind::Deny) {
            let holds_store = d.path.starts_with(&e.path);
            let private_in_data = e.why == "the project's private folders";
            let toolchain_with_file = e.why == "a toolchain" && !d.path.same(&e.path);
            assert!(
                !holds_store || private_in_data || toolchain_with_file,
                "{} would grant {}",
                e.path,
                d.path
            );
        }
    }
}

#[test]
fn a_project_root_that_is_or_holds_a_hidden_location_is_refused() {
    for root in [
        r"C:\",
        r"C:\Users",
        r"C:\Users\ann",
        r"c:\USERS\ANN",
        r"C:\Users\ann\.ssh",
        r"C:\Users\ann\.SSH\keys",
        r"C:\Users\ann\AppData\Roaming\Microsoft\Credentials",
        r"C:\Users\ann\AppData\Roaming\Sluice",
        r"C:\Users\ann\AppData\Roaming\Sluice\state\p1",
        r"C:\Users\ann\AppData\Roaming",
        r"C:\Users\ann\AppData\Local\Google\Chrome\User Data\Default",
    ] {
        let f = Fixture::new(root);
        let err = f.plan(ExecMode::Any).unwrap_err();
        assert_eq!(err.code(), "project_in_hidden_location", "{root}: {err}");
    }
    let mut f = Fixture::new(r"D:\vault\app");
    f.hidden = vec![p(r"D:\vault")];
    assert_eq!(f.plan(ExecMode::Any).unwrap_err().code(), "project_in_hidden_location");
}

#[test]
fn a_toolchain_inside_a_hidden_store_is_not_granted() {
    let mut f = Fixture::new(r"C:\work\app");
    f.hidden = vec![p(r"C:\Users\ann\.local")];
    let plan = f.plan(ExecMode::Any).unwrap();
    assert!(kinds(&plan, r"C:\Users\ann\.local\bin").is_empty());
    assert_eq!(kinds(&plan, r"C:\Users\ann\.local"), [(AceKind::Deny, Rights::All)]);
}

#[test]
fn grants_read_only_and_never_sluices_data() {
    let mut f = Fixture::new(r"C:\work\app");
    f.granted = vec![p(r"C:\Users\ann\.npmrc")];
    let plan = f.plan(ExecMode::Any).unwrap();
    assert_eq!(kinds(&plan, r"C:\Users\ann\.npmrc"), [(AceKind::Allow, Rights::Read)]);
    f.unhidden = vec![p(r"C:\Users\ann\.docker")];
    assert!(kinds(&f.plan(ExecMode::Any).unwrap(), r"C:\Users\ann\.docker").is_empty());
    for g in [r"C:\Users\ann\AppData\Roaming\Sluice", r"C:\Users\ann\AppData"] {
        f.granted = vec![p(g)];
        assert_eq!(f.plan(ExecMode::Any).unwrap_err().code(), "refused", "{g}");
    }
    f.granted.clear();
    f.unhidden = vec![p(r"C:\Users\ann\AppData\Roaming\Sluice")];
    let plan = f.plan(ExecMode::Any).unwrap();
    assert_eq!(
        kinds(&plan, r"C:\Users\ann\AppData\Roaming\Sluice"),
        [(AceKind::Deny, Rights::All)],
        "un-hiding Sluice's data does nothing"
    );
}

#[test]
fn private_folders_outside_sluices_data_or_inside_another_store_are_refused() {
    for private in [
        r"C:\Users\ann\AppData\Roaming\Sluice",
        r"C:\Users\ann\.ssh\exec",
        r"C:\temp\exec",
        r"C:\work\app\exec",
    ] {
        let mut f = Fixture::new(r"C:\work\app");
        f.private = p(private);
        assert_eq!(f.plan(ExecMode::Any).unwrap_err().code(), "refused", "{private}");
    }
    // Hiding all of AppData keeps the data folder's own private folders usable.
    let mut f = Fixture::new(r"C:\work\app");
    f.hidden = vec![p(r"C:\Users\ann\AppData")];
    assert!(f.plan(ExecMode::Any).is_ok());
}

#[test]
fn entries_render_as_sddl_and_icacls_with_nothing_of_the_path_in_the_ace() {
    let mut f = Fixture::new(r"C:\work\(A;;GA;;;WD)");
    f.hidden = vec![p(r"C:\odd\x;y)(D;;GA;;;BA")];
    let plan = f.plan(ExecMode::Any).unwrap();
    let root = plan.on(&f.root).next().unwrap();
    assert_eq!(root.sddl(&sid()), format!("(A;OICI;0x1301bf;;;{SID})"));
    assert_eq!(
        root.icacls_args(&sid()),
        [r"C:\work\(A;;GA;;;WD)".to_owned(), "/grant:r".into(), format!("*{SID}:(OI)(CI)(M)")]
    );
    for e in &plan.entries {
        let ace = e.sddl(&sid());
        assert_eq!(ace.matches('(').count(), 1, "{ace}");
        assert!(ace.ends_with(&format!(";;;{SID})")), "{ace}");
        let kind = if e.kind == AceKind::Deny { "(D;OICI;0x1f01ff;;;" } else { "(A;OICI;" };
        assert!(ace.starts_with(kind), "{ace}");
    }
}

#[test]
fn the_offline_account_reaches_no_address_but_loopback() {
    let rules = firewall::rules(SandboxUser::Offline, &sid());
    assert!(!rules.is_empty());
    assert!(rules.iter().all(|r| r.action == Action::Block && r.any_protocol));
    assert!(rules.iter().all(|r| r.local_user == format!("O:LSD:(A;;CC;;;{SID})")));
    let ranges: Vec<&str> = rules.iter().flat_map(|r| r.remote_addresses.iter().copied()).collect();
    let v4 = |a: [u8; 4]| u32::from_be_bytes(a);
    let blocked4 = |ip: u32| {
        ranges.iter().filter_map(|r| r.split_once('-')).any(|(lo, hi)| {
            let (Ok(lo), Ok(hi)) =
                (lo.parse::<std::net::Ipv4Addr>(), hi.parse::<std::net::Ipv4Addr>())
            else {
                return false;
            };
            (u32::from(lo)..=u32::from(hi)).contains(&ip)
        })
    };
    for ip in
        [[0, 0, 0, 0], [10, 0, 0, 1], [126, 255, 255, 255], [128, 0, 0, 0], [169, 254, 169, 254]]
    {
        assert!(blocked4(v4(ip)), "{ip:?}");
    }
    for ip in [[127, 0, 0, 1], [127, 255, 255, 255]] {
        assert!(!blocked4(v4(ip)), "loopback stays: {ip:?}");
    }
    let blocked6 = |ip: std::net::Ipv6Addr| {
        ranges.iter().filter_map(|r| r.split_once('-')).any(|(lo, hi)| {
            let (Ok(lo), Ok(hi)) =
                (lo.parse::<std::net::Ipv6Addr>(), hi.parse::<std::net::Ipv6Addr>())
            else {
                return false;
            };
            (u128::from(lo)..=u128::from(hi)).contains(&u128::from(ip))
        })
    };
    for ip in ["::", "::2", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "2001:db8::1", "fe80::1"] {
        assert!(blocked6(ip.parse().unwrap()), "{ip}");
    }
    assert!(!blocked6("::1".parse().unwrap()));
}

#[test]
fn registries_and_off_jobs_run_as_the_offline_account_and_no_rule_allows() {
    let hosts = std::sync::Arc::new(crate::HostList::registries());
    assert_eq!(SandboxUser::for_network(&crate::Network::Off), SandboxUser::Offline);
    assert_eq!(SandboxUser::for_network(&crate::Network::Registries(hosts)), SandboxUser::Offline);
    assert_eq!(SandboxUser::for_network(&crate::Network::Allowed), SandboxUser::Online);
    for user in SandboxUser::ALL {
        assert!(firewall::rules(user, &sid()).iter().all(|r| r.action != Action::Allow));
    }
    assert!(firewall::rules(SandboxUser::Online, &sid()).is_empty());
}

#[test]
fn the_firewall_script_quotes_every_value_and_is_encoded_whole() {
    let rules = firewall::rules(SandboxUser::Offline, &sid());
    let script = firewall::add_script(&rules).unwrap();
    assert!(script.contains("-LocalUser 'O:LSD:(A;;CC;;;S-1-5-21-"), "{script}");
    assert!(script.contains("-Action Block"), "{script}");
    assert!(!script.contains("-Action Allow"), "{script}");
    assert!(firewall::check_script(&rules).unwrap().contains("exit 1"));
    let args = firewall::powershell_args(&script);
    assert_eq!(args[args.len() - 2], "-EncodedCommand");
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(&args[args.len() - 1]).unwrap();
    let utf16: Vec<u16> = bytes.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    assert_eq!(String::from_utf16(&utf16).unwrap(), script);
    let mut odd = rules[0].clone();
    odd.local_user = "x\u{2019}; Remove-Item".into();
    assert!(firewall::add_script(&[odd]).is_err());
    let mut quoted = rules[0].clone();
    quoted.local_user = "a'b".into();
    assert!(firewall::add_script(&[quoted]).unwrap().contains("'a''b'"));
}

/// Every part of the setup in place.
fn set_up() -> SetupState {
    SetupState {
        offline_user: true,
        online_user: true,
        password: true,
        stores_without_rule: 0,
        firewall: true,
    }
}

#[test]
fn the_status_says_what_holds_and_only_everything_is_full() {
    let all = set_up();
    let status = WinSandboxStatus::of(&all);
    assert_eq!(status, WinSandboxStatus::SetUp);
    let report = status.report();
    assert_eq!(report.status, crate::Enforcement::FullyEnforced);
    assert!(report.summary.starts_with("jobs run as the sandbox account SluiceSandbox"));

    let none = WinSandboxStatus::of(&SetupState::default());
    assert_eq!(none, WinSandboxStatus::NotSetUp);
    assert_eq!(
        none.summary(),
        "the Windows sandbox account is not set up here: jobs run as you, in a Job Object that \
         ends their whole process tree but hides nothing: they can read what you can read, your \
         credential stores included, and reach the network"
    );
    assert_eq!(none.report().status, crate::Enforcement::NotEnforced);

    // Set up by an administrator, but this data folder's engine holds no password.
    let no_password = SetupState { password: false, stores_without_rule: 2, ..all };
    let partial = WinSandboxStatus::of(&no_password);
    assert_eq!(partial, WinSandboxStatus::Partial(vec![Missing::Password, Missing::StoreRules(2)]));
    assert!(!partial.holds());
    assert!(
        partial.summary().starts_with(
            "the Windows sandbox is not complete (Sluice does not hold the sandbox accounts' \
             password; 2 credential stores have no deny rule): jobs run as you"
        ),
        "{}",
        partial.summary()
    );
    let g = status::guarantees(false);
    assert!(g.iter().filter(|g| g.holds).all(|g| g.what.contains("Job Object")));
    assert!(status::guarantees(true).iter().any(|g| !g.holds), "never claims everything");
}

#[test]
fn passwords_are_random_complex_and_never_printed() {
    let (a, b) = (Password::generate(), Password::generate());
    assert_ne!(a, b);
    assert_eq!(a.expose().chars().count(), 32);
    let has = |f: fn(char) -> bool| a.expose().chars().any(f);
    assert!(has(|c| c.is_ascii_uppercase()) && has(|c| c.is_ascii_lowercase()));
    assert!(has(|c| c.is_ascii_digit()) && has(|c| !c.is_ascii_alphanumeric()));
    assert_eq!(format!("{a:?}"), "Password(…)");
}

#[test]
fn errors_carry_stable_codes_and_map_to_the_crates() {
    use sluice_core::{Coded, ErrorCode};
    let e = WinSandboxError::NotSetUp("x".into());
    assert_eq!(
        (e.code(), Coded::code(&e)),
        ("sandbox_not_set_up", ErrorCode::ConfinementUnavailable)
    );
    let exec: crate::ExecError = e.into();
    assert_eq!(exec.code(), ErrorCode::ConfinementUnavailable);
    let exec: crate::ExecError = WinSandboxError::NotWindows.into();
    assert_eq!(exec.code(), ErrorCode::Forbidden);
    assert!(!current_status().holds());
}

#[test]
fn a_command_line_splits_back_into_exactly_its_arguments() {
    let args: Vec<String> = [
        "plain",
        "",
        "two words",
        "tab\there",
        r#"quote"inside"#,
        r"C:\dir\",
        r#"ends\"#,
        r#"back\"quote"#,
        r#"\\""\"#,
        "new\nline",
        "& calc.exe",
        "%PATH%",
        "^\"|<>",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let line = cmdline::command_line(r"C:\Program Files\Git\bin\git.exe", &args).unwrap();
    assert!(line.starts_with(r#""C:\Program Files\Git\bin\git.exe" "#), "{line}");
    assert_eq!(cmdline::split_args(&line), args, "{line}");
    for bad_program in ["", r#"C:\a"b.exe"#, r"C:\x\build.BAT", r"C:\x\run.cmd"] {
        assert_eq!(cmdline::command_line(bad_program, &[]).unwrap_err().code(), "refused");
    }
    let nul = vec!["a\0b".to_owned()];
    assert!(cmdline::command_line(r"C:\x.exe", &nul).is_err());
}

#[test]
fn the_environment_block_is_sorted_and_refuses_what_would_change_meaning() {
    let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    let block = cmdline::env_block(&env(&[("Path", "C:\\bin"), ("HOME", "x=y")])).unwrap();
    let text = String::from_utf16(&block).unwrap();
    assert_eq!(text, "HOME=x=y\0Path=C:\\bin\0\0");
    assert_eq!(cmdline::env_block(&[]).unwrap(), [0, 0]);
    for bad in [
        env(&[("", "x")]),
        env(&[("=C:", "C:\\")]),
        env(&[("A=B", "x")]),
        env(&[("A", "x\0B=y")]),
        env(&[("PATH", "a"), ("path", "b")]),
    ] {
        assert_eq!(cmdline::env_block(&bad).unwrap_err().code(), "refused", "{bad:?}");
    }
}

/// On Windows, the command line is read back by Windows' own `CommandLineToArgvW` (the
/// `split_args` above is this file's model of it).
#[cfg(windows)]
#[test]
fn windows_reads_the_command_line_back_into_exactly_its_arguments() {
    use windows_sys::Win32::Foundation::LocalFree;
    use windows_sys::Win32::UI::Shell::CommandLineToArgvW;
    let args: Vec<String> = ["plain", "", "two words", r#"a"b"#, r"C:\dir\", r#"\\""\"#, "& x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let line = cmdline::command_line(r"C:\Windows\System32\where.exe", &args).unwrap();
    let wide: Vec<u16> = line.encode_utf16().chain(Some(0)).collect();
    let mut n = 0i32;
    // SAFETY: a NUL-terminated string; the result is an array of `n` strings, freed below.
    let argv = unsafe { CommandLineToArgvW(wide.as_ptr(), &mut n) };
    assert!(!argv.is_null());
    let read: Vec<String> = (0..n as usize)
        .map(|i| {
            // SAFETY: `i` < `n`: an entry of the array, a NUL-terminated string.
            let p = unsafe { *argv.add(i) };
            // SAFETY: reads up to the NUL of that string.
            let len = (0..).take_while(|&j| unsafe { *p.add(j) } != 0).count();
            // SAFETY: the `len` units just read.
            String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(p, len) })
        })
        .collect();
    // SAFETY: allocated by CommandLineToArgvW, freed once.
    unsafe { LocalFree(argv.cast()) };
    assert_eq!(read[0], r"C:\Windows\System32\where.exe");
    assert_eq!(read[1..], args[..], "{line}");
}

#[test]
fn the_setup_applies_every_project_s_once_only_rules_and_no_project_s_own() {
    let fx = Fixture::new(r"D:\code\app");
    let setup = acl::setup_plan(&fx.profile, &fx.data).unwrap();
    let project = fx.plan(ExecMode::Project).unwrap();
    let once: Vec<_> = project.entries.iter().filter(|e| e.scope == Scope::Setup).collect();
    assert_eq!(setup.entries.iter().collect::<Vec<_>>(), once);
    assert!(setup.entries.iter().all(|e| e.scope == Scope::Setup));
    // Sluice's data folder and a credential store are denied; the project is not named.
    let denied =
        |path: &WinPath| setup.on(path).any(|e| e.kind == AceKind::Deny && e.rights == Rights::All);
    assert!(denied(&fx.data));
    assert!(denied(&p(r"C:\Users\ann\.ssh")));
    assert!(setup.entries.iter().all(|e| !e.path.starts_with(&fx.root)));
    // A project's own hidden store is its own rule, not the setup's.
    let mut hides = Fixture::new(r"D:\code\app");
    hides.hidden = vec![p(r"D:\secrets")];
    let with_own = hides.plan(ExecMode::Project).unwrap();
    assert!(with_own.on(&p(r"D:\secrets")).all(|e| e.scope == Scope::Project));
    assert!(setup.on(&p(r"D:\secrets")).next().is_none());
}

#[test]
fn registries_hold_with_the_account_set_up_and_only_then() {
    let all = set_up();
    // Set up, the firewall leaves the account loopback only, where its proxy listens (this
    // rule is Windows'; on other systems the report of a Windows status serves nothing).
    assert_eq!(WinSandboxStatus::of(&all).report().serves_registries(), cfg!(windows));
    for missing in [
        SetupState { firewall: false, ..all.clone() },
        SetupState { password: false, ..all.clone() },
        SetupState { stores_without_rule: 1, ..all.clone() },
        SetupState::default(),
    ] {
        let report = WinSandboxStatus::of(&missing).report();
        assert!(!report.serves_registries(), "{missing:?}");
        assert!(report.registries_need().contains(if cfg!(windows) {
            "sluice sandbox setup"
        } else {
            "namespaces"
        }));
    }
}
