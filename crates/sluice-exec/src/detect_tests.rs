//! Tests of toolchain detection over real folders.

use super::*;

struct Tmp {
    dir: tempfile::TempDir,
}

impl Tmp {
    fn new(files: &[(&str, &str)]) -> Tmp {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, body) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, body).expect("write");
        }
        Tmp { dir }
    }

    fn run(&self, cwd: &str, req: DetectRequest<'_>) -> Result<Detection, ExecError> {
        detect(self.dir.path(), cwd, &req, &TrustedPath::from_env(&[]))
    }

    fn detect(&self, action: Action) -> Result<Detection, ExecError> {
        self.run("", DetectRequest { action, toolchain: None, filter: None, args: &[] })
    }
}

fn argv(d: &Detection) -> String {
    let mut v = vec![d.spec.program.clone()];
    v.extend(d.spec.args.iter().cloned());
    v.join(" ")
}

const PKG: &str = r#"{"scripts": {"test": "vitest run", "build": "vite build"}}"#;

#[test]
fn cargo_is_detected_for_tests_and_builds() {
    let t = Tmp::new(&[("Cargo.toml", "[package]\nname = \"x\"\n")]);
    let d = t.detect(Action::Test).expect("test");
    assert_eq!((d.toolchain, d.detected_from.as_str()), (Toolchain::Cargo, "Cargo.toml"));
    assert_eq!(argv(&d), "cargo test");
    assert_eq!(argv(&t.detect(Action::Build).expect("build")), "cargo build");
}

#[test]
fn node_manager_follows_the_lockfile_and_needs_the_script() {
    for (lock, tool) in [
        ("pnpm-lock.yaml", "pnpm"),
        ("yarn.lock", "yarn"),
        ("bun.lockb", "bun"),
        ("package-lock.json", "npm"),
    ] {
        let t = Tmp::new(&[("package.json", PKG), (lock, "")]);
        let d = t.detect(Action::Test).expect("detect");
        assert_eq!(argv(&d), format!("{tool} run test"));
        assert_eq!(d.detected_from, lock);
    }
    let t = Tmp::new(&[(
        "package.json",
        r#"{"packageManager": "pnpm@9.1.0", "scripts": {"build": "tsc"}}"#,
    )]);
    assert_eq!(argv(&t.detect(Action::Build).expect("build")), "pnpm run build");
    let err = t.detect(Action::Test).expect_err("no test script");
    assert!(matches!(err, ExecError::NoToolchain(_)), "{err}");
    // Without a lockfile: npm.
    let t = Tmp::new(&[("package.json", PKG)]);
    assert_eq!(argv(&t.detect(Action::Build).expect("build")), "npm run build");
}

#[test]
fn go_python_make_just_gradle_maven_dotnet() {
    /// Files of a folder, the action, and the command expected.
    type Case<'a> = (&'a [(&'a str, &'a str)], Action, &'a str);
    let cases: &[Case<'_>] = &[
        (&[("go.mod", "module x\n")], Action::Test, "go test ./..."),
        (&[("go.mod", "module x\n")], Action::Build, "go build ./..."),
        (&[("Makefile", "all:\n\techo\ntest: all\n\techo t\n")], Action::Test, "make test"),
        (&[("justfile", "build target='x':\n  echo\n")], Action::Build, "just build"),
        (&[("build.gradle.kts", "")], Action::Test, "gradle test"),
        (&[("build.gradle", "")], Action::Build, "gradle assemble"),
        (&[("pom.xml", "<project/>")], Action::Test, "mvn test"),
        (&[("pom.xml", "<project/>")], Action::Build, "mvn compile"),
        (&[("app.csproj", "<Project/>")], Action::Test, "dotnet test"),
        (&[("app.sln", "")], Action::Build, "dotnet build"),
    ];
    for (files, action, want) in cases {
        let d = Tmp::new(files).detect(*action).expect(want);
        assert_eq!(argv(&d), *want);
    }
    let t = Tmp::new(&[("pyproject.toml", "[project]\nname='x'\n")]);
    let d = t.detect(Action::Test).expect("pytest");
    assert_eq!(d.toolchain, Toolchain::Pytest);
    assert!(["pytest", "python3 -m pytest"].contains(&argv(&d).as_str()), "{}", argv(&d));
    assert!(matches!(t.detect(Action::Build), Err(ExecError::NoToolchain(_))));
}

#[test]
fn a_makefile_variable_or_other_target_is_not_a_test_target() {
    let t = Tmp::new(&[("Makefile", "test := 1\ntests:\n\techo\ntesting: x\n")]);
    let err = t.detect(Action::Test).expect_err("no target");
    let just = Tmp::new(&[("justfile", "tests:\n  echo\ntest_all:\n  echo\n")]);
    assert!(matches!(just.detect(Action::Test), Err(ExecError::NoToolchain(_))));
    let just = Tmp::new(&[("justfile", "@test filter='':\n  echo\n")]);
    assert_eq!(argv(&just.detect(Action::Test).expect("quiet recipe")), "just test");
    assert!(err.to_string().contains("found no way to test the project root"), "{err}");
    assert_eq!(sluice_core::Coded::code(&err), sluice_core::ErrorCode::NotFound);
}

#[test]
fn language_manifests_come_before_makefiles_unless_chosen() {
    let t = Tmp::new(&[("Cargo.toml", ""), ("Makefile", "test:\n\tcargo test\n")]);
    assert_eq!(argv(&t.detect(Action::Test).expect("test")), "cargo test");
    let req = DetectRequest {
        action: Action::Test,
        toolchain: Some(Toolchain::Make),
        filter: None,
        args: &[],
    };
    assert_eq!(argv(&t.run("", req).expect("make")), "make test");
    let req = DetectRequest { toolchain: Some(Toolchain::Go), ..req };
    let err = t.run("", req).expect_err("no go.mod");
    assert!(err.to_string().contains("cannot test with go in the project root: go: no go.mod"));
}

#[test]
fn monorepo_subfolders_are_detected_on_their_own() {
    let t = Tmp::new(&[
        ("Cargo.toml", ""),
        ("web/package.json", PKG),
        ("web/yarn.lock", ""),
        ("svc/go.mod", "module svc\n"),
    ]);
    let d = t
        .run(
            "web",
            DetectRequest { action: Action::Test, toolchain: None, filter: None, args: &[] },
        )
        .expect("web");
    assert_eq!((argv(&d), d.spec.cwd.as_str()), ("yarn run test".to_owned(), "web"));
    let d = t
        .run(
            "svc",
            DetectRequest { action: Action::Build, toolchain: None, filter: None, args: &[] },
        )
        .expect("svc");
    assert_eq!(argv(&d), "go build ./...");
    for bad in ["..", "../x", "/etc", "missing", "Cargo.toml"] {
        let err = t
            .run(
                bad,
                DetectRequest { action: Action::Test, toolchain: None, filter: None, args: &[] },
            )
            .expect_err(bad);
        assert!(matches!(err, ExecError::Invalid(_)), "{bad}: {err}");
    }
}

#[test]
fn filters_and_extra_arguments_cannot_inject_options() {
    let t = Tmp::new(&[("Cargo.toml", "")]);
    let run = |filter: Option<&str>, args: &[String]| {
        t.run("", DetectRequest { action: Action::Test, toolchain: None, filter, args })
    };
    let extra = strings(&["--release", "--", "--nocapture"]);
    let d = run(Some("parser::"), &extra).expect("filter");
    assert_eq!(argv(&d), "cargo test parser:: --release -- --nocapture");
    let err = run(Some("--config=evil"), &[]).expect_err("filter as option");
    assert!(matches!(err, ExecError::Invalid(_)), "{err}");
    for bad in [
        strings(&["--config", "build.rustc-wrapper='/tmp/x'"]),
        strings(&["-Zunstable-options"]),
        strings(&["--manifest-path=/etc/Cargo.toml"]),
        strings(&["a", "b"]),
    ] {
        let err = run(None, &bad).expect_err("injection");
        assert!(matches!(err, ExecError::Refused(_)), "{bad:?}: {err}");
    }
    let build = t.run(
        "",
        DetectRequest { action: Action::Build, toolchain: None, filter: Some("x"), args: &[] },
    );
    assert!(matches!(build, Err(ExecError::Invalid(_))));

    // Go: the filter becomes -run's value, never a flag of its own.
    let t = Tmp::new(&[("go.mod", "")]);
    let req =
        DetectRequest { action: Action::Test, toolchain: None, filter: Some("TestX"), args: &[] };
    assert_eq!(argv(&t.run("", req).expect("go")), "go test -run TestX ./...");
    let bad = strings(&["-toolexec", "/tmp/x"]);
    let req = DetectRequest { filter: None, args: &bad, ..req };
    assert!(matches!(t.run("", req), Err(ExecError::Refused(_))));

    // npm: script arguments go after `--`, plain characters only.
    let t = Tmp::new(&[("package.json", PKG)]);
    let req =
        DetectRequest { action: Action::Test, toolchain: None, filter: Some("login"), args: &[] };
    assert_eq!(argv(&t.run("", req).expect("npm")), "npm run test -- login");
    let req = DetectRequest { filter: Some("$(id)"), ..req };
    assert!(matches!(t.run("", req), Err(ExecError::Refused(_))));

    // Maven's filter is always the inline -Dtest=…
    let t = Tmp::new(&[("pom.xml", "")]);
    let req =
        DetectRequest { action: Action::Test, toolchain: None, filter: Some("FooTest"), args: &[] };
    assert_eq!(argv(&t.run("", req).expect("mvn")), "mvn test -Dtest=FooTest");
    let bad = strings(&["-Dtest", "exec:java"]);
    let req = DetectRequest { filter: None, args: &bad, ..req };
    assert!(matches!(t.run("", req), Err(ExecError::Refused(_))));
}

#[cfg(unix)]
#[test]
fn manifests_behind_symlinks_are_ignored() {
    let outside = Tmp::new(&[("Cargo.toml", "")]);
    let t = Tmp::new(&[]);
    std::os::unix::fs::symlink(
        outside.dir.path().join("Cargo.toml"),
        t.dir.path().join("Cargo.toml"),
    )
    .expect("symlink");
    std::os::unix::fs::symlink(outside.dir.path(), t.dir.path().join("linked")).expect("symlink");
    assert!(matches!(t.detect(Action::Test), Err(ExecError::NoToolchain(_))));
    let err = t
        .run(
            "linked",
            DetectRequest { action: Action::Test, toolchain: None, filter: None, args: &[] },
        )
        .expect_err("a folder outside through a link");
    assert!(matches!(err, ExecError::Invalid(_)), "{err}");
}

#[test]
fn toolchain_names_parse() {
    assert_eq!(Toolchain::parse("mvn").expect("mvn"), Toolchain::Maven);
    for tc in Toolchain::ALL {
        assert_eq!(Toolchain::parse(tc.as_str()).expect("roundtrip"), tc);
    }
    assert!(matches!(Toolchain::parse("sh"), Err(ExecError::Invalid(_))));
}
