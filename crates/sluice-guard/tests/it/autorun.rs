//! The auto-run list: which paths another program runs on its own, what a change to them gets,
//! at any depth, through ancestors and whatever the case.

use sluice_core::{AutoRunAction, AutoRunRule, Coded, ErrorCode};
use sluice_guard::{AutoRun, RelPath};

/// `Some((action, program))` of the rule covering `path`.
fn rule(list: &AutoRun, path: &str) -> Option<(AutoRunAction, String)> {
    list.rule_for(&RelPath::parse(path).unwrap()).map(|r| (r.action, r.program.clone()))
}

#[track_caller]
fn check(list: &AutoRun, path: &str, action: AutoRunAction, program: &str) {
    let got = rule(list, path);
    assert_eq!(got, Some((action, program.to_owned())), "{path}");
}

#[test]
fn defaults_cover_what_editors_agents_hooks_and_ci_run() {
    use AutoRunAction::{Ask, Refuse};
    let list = AutoRun::default();
    for (path, action, program) in [
        (".mcp.json", Ask, "Claude Code, VS Code"),
        (".cursor/mcp.json", Ask, "Cursor"),
        (".vscode/mcp.json", Ask, "VS Code"),
        (".vscode/tasks.json", Ask, "VS Code"),
        (".vscode/launch.json", Ask, "VS Code"),
        (".vscode/settings.json", Ask, "VS Code"),
        ("my-app.code-workspace", Ask, "VS Code"),
        (".idea/workspace.xml", Ask, "JetBrains IDEs"),
        (".idea/runConfigurations/dev.xml", Ask, "JetBrains IDEs"),
        (".envrc", Ask, "direnv"),
        (".zed/settings.json", Ask, "Zed"),
        (".zed/tasks.json", Ask, "Zed"),
        (".continue/config.yaml", Ask, "Continue"),
        (".junie/mcp/mcp.json", Ask, "JetBrains Junie"),
        (".husky/pre-commit", Ask, "husky"),
        (".githooks/pre-push", Ask, "git"),
        (".pre-commit-config.yaml", Ask, "pre-commit"),
        ("lefthook.yml", Ask, "lefthook"),
        (".lefthook-local.yaml", Ask, "lefthook"),
        (".github/workflows/ci.yml", Ask, "GitHub Actions"),
        (".github/actions/setup/action.yml", Ask, "GitHub Actions"),
        (".gitlab-ci.yml", Ask, "GitLab CI"),
        ("Jenkinsfile", Ask, "CI"),
        (".devcontainer/devcontainer.json", Ask, "Dev Containers"),
        (".devcontainer.json", Ask, "Dev Containers"),
        (".tool-versions", Ask, "asdf, mise"),
        ("mise.toml", Ask, "mise"),
        (".mise.local.toml", Ask, "mise"),
        (".config/mise/config.toml", Ask, "mise"),
        ("rust-toolchain.toml", Ask, "rustup"),
        (".cargo/config.toml", Ask, "Cargo"),
        (".npmrc", Ask, "npm"),
        (".yarnrc.yml", Ask, "Yarn"),
        ("gradle/wrapper/gradle-wrapper.properties", Ask, "Gradle"),
        (".mvn/extensions.xml", Ask, "Maven"),
        (".claude/settings.json", Refuse, "Claude Code"),
        (".claude/settings.local.json", Refuse, "Claude Code"),
        (".claude/hooks/format.sh", Refuse, "Claude Code"),
        (".codex/config.toml", Refuse, "Codex"),
        (".codex/rules/default.rules", Refuse, "Codex"),
        (".gemini/settings.json", Refuse, "Gemini CLI"),
        (".gemini/extensions/x/gemini-extension.json", Refuse, "Gemini CLI"),
        (".cursor/hooks.json", Refuse, "Cursor"),
        (".cursor/cli.json", Refuse, "Cursor CLI"),
        (".windsurf/hooks.json", Refuse, "Windsurf"),
        (".git", Refuse, "git"),
        (".git/hooks/pre-commit", Refuse, "git"),
    ] {
        check(&list, path, action, program);
    }
}

/// A sub-folder opened on its own is a project root to the program that reads it; and a
/// case-insensitive disk serves `.VSCODE/Tasks.JSON` as `.vscode/tasks.json`.
#[test]
fn nested_and_case_variants_are_covered() {
    use AutoRunAction::{Ask, Refuse};
    let list = AutoRun::default();
    check(&list, "packages/web/.vscode/tasks.json", Ask, "VS Code");
    check(&list, "services/api/.envrc", Ask, "direnv");
    check(&list, ".VSCODE/Tasks.JSON", Ask, "VS Code");
    check(&list, ".Mcp.Json", Ask, "Claude Code, VS Code");
    check(&list, ".GitHub/Workflows/CI.yml", Ask, "GitHub Actions");
    check(&list, ".CLAUDE/SETTINGS.JSON", Refuse, "Claude Code");
    check(&list, "vendor/lib/.Git/config", Refuse, "git");
    // A folder that only holds such files is itself covered when the pattern names the folder.
    check(&list, ".husky", Ask, "husky");
    check(&list, ".github/workflows", Ask, "GitHub Actions");
    check(&list, ".codex", Refuse, "Codex");
}

#[test]
fn ordinary_files_are_not_covered() {
    let list = AutoRun::default();
    for path in [
        "README.md",
        "src/main.rs",
        "package.json",
        "Makefile",
        ".gitignore",
        ".vscode",
        ".vscode/extensions.json",
        ".github",
        ".github/CODEOWNERS",
        ".claude",
        ".claude/commands/review.md",
        "vscode/tasks.json",
        "tasks.json",
        "docs/mcp.json.md",
        "src/mise/mod.rs",
        ".",
    ] {
        assert_eq!(rule(&list, path), None, "{path}");
    }
}

#[test]
fn a_refusing_rule_wins_over_an_asking_one() {
    let rules = vec![
        AutoRunRule {
            pattern: "*.json".into(),
            action: AutoRunAction::Ask,
            program: "anything".into(),
            consequence: "runs".into(),
        },
        AutoRunRule {
            pattern: "/locked/**".into(),
            action: AutoRunAction::Refuse,
            program: "deploy bot".into(),
            consequence: "deploys".into(),
        },
    ];
    let list = AutoRun::new(&rules).unwrap();
    assert_eq!(rule(&list, "locked/a.json"), Some((AutoRunAction::Refuse, "deploy bot".into())));
    assert_eq!(rule(&list, "open/a.json"), Some((AutoRunAction::Ask, "anything".into())));
    assert_eq!(rule(&list, "sub/locked/a.txt"), None, "a leading / anchors at the root");
    assert_eq!(rule(&list, ".mcp.json"), Some((AutoRunAction::Ask, "anything".into())));
    assert_eq!(list.rules(), rules.as_slice());
}

#[test]
fn the_defaults_are_complete_and_printable() {
    let rules = AutoRun::default_rules();
    assert!(rules.len() > 40, "{}", rules.len());
    for r in &rules {
        assert!(!r.program.is_empty() && !r.consequence.is_empty(), "{r:?}");
        assert!(!r.consequence.chars().any(char::is_control), "{r:?}");
        assert!(!r.consequence.ends_with('.'), "one clause, no full stop: {r:?}");
    }
    let mut patterns: Vec<&str> = rules.iter().map(|r| r.pattern.as_str()).collect();
    patterns.sort_unstable();
    let before = patterns.len();
    patterns.dedup();
    assert_eq!(before, patterns.len(), "a default pattern is listed twice");
}

#[test]
fn bad_glob_names_the_pattern() {
    let rules = vec![AutoRunRule {
        pattern: "a[".into(),
        action: AutoRunAction::Ask,
        program: "x".into(),
        consequence: "y".into(),
    }];
    let err = AutoRun::new(&rules).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert!(err.to_string().contains("\"a[\""), "{err}");
}
