//! Every file a known client reads from a project to start programs or decide what runs is on
//! the engine's default auto-run list, at the project's root and in any sub-folder (which is a
//! project root to a client opened there). Derived from [`Client::project_files`], so a client
//! added later is checked without anyone remembering to.

use sluice_connect::Client;
use sluice_guard::{AutoRun, RelPath};

/// A path `pattern` matches: `X/**` becomes a file inside `X`, `*` a name.
fn example(pattern: &str) -> String {
    pattern.replace("**", "hooks/run.json").replace('*', "a")
}

#[test]
fn every_clients_project_files_are_on_the_auto_run_list() {
    let list = AutoRun::default();
    let mut checked = 0;
    for client in Client::ALL {
        for pattern in client.project_files() {
            let path = example(pattern);
            for at in [path.clone(), format!("packages/web/{path}")] {
                let rel = RelPath::parse(&at).unwrap();
                assert!(
                    list.rule_for(&rel).is_some(),
                    "{}'s project file {at} (pattern {pattern}) is not on the auto-run list",
                    client.title()
                );
                // Matching ignores case, as a case-insensitive disk does.
                let upper = RelPath::parse(&at.to_uppercase()).unwrap();
                assert!(list.rule_for(&upper).is_some(), "{at} in capitals");
                checked += 1;
            }
        }
    }
    assert!(checked >= 80, "only {checked} paths checked");
}

/// The check above can fail: a list without one client's entry misses that client's file.
#[test]
fn a_list_without_a_clients_entry_misses_its_file() {
    let rules: Vec<_> = AutoRun::default_rules()
        .into_iter()
        .filter(|r| !matches!(r.pattern.as_str(), "opencode.json" | "opencode.jsonc"))
        .collect();
    let list = AutoRun::new(&rules).unwrap();
    let missed: Vec<_> = Client::OpenCode
        .project_files()
        .iter()
        .map(|p| example(p))
        .filter(|p| list.rule_for(&RelPath::parse(p).unwrap()).is_none())
        .collect();
    assert_eq!(
        missed,
        ["opencode.json", "opencode.jsonc", ".opencode/opencode.json", ".opencode/opencode.jsonc"]
    );
}

/// Files that decide without asking what an agent runs (hooks, plugins, permission rules) are
/// refused, not asked: an approval card cannot show what such a change gives away.
#[test]
fn hooks_plugins_and_permission_files_of_clients_are_refused() {
    use sluice_core::AutoRunAction::Refuse;
    let list = AutoRun::default();
    for path in [
        ".claude/settings.json",
        ".claude/hooks/pre.sh",
        ".codex/config.toml",
        ".gemini/settings.json",
        ".qwen/settings.json",
        ".qwen/extensions/x/qwen-extension.json",
        "opencode.json",
        "sub/opencode.jsonc",
        ".opencode/plugin/evil.js",
        ".opencode/plugins/evil.ts",
        ".github/hooks/copilot.json",
        ".clinerules/hooks/PreToolUse",
        ".crush.json",
        "crush.json",
        ".kiro/hooks/on-save.kiro.hook",
        ".kiro/agents/default.json",
        ".amazonq/cli-agents/dev.json",
        ".cursor/hooks.json",
        ".windsurf/hooks.json",
    ] {
        let rule = list.rule_for(&RelPath::parse(path).unwrap());
        assert_eq!(rule.map(|r| r.action), Some(Refuse), "{path}");
    }
}
