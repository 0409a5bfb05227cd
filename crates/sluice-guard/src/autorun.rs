//! [`AutoRun`]: the auto-run list — paths another program runs, or reads to decide what to run,
//! on its own (an editor on folder open, an agent at start, direnv on `cd`, git on commit, CI on
//! push). Any change touching one asks the user or is refused; the runner applies it to every
//! path a plan touches (requested and resolved, both ends of a move, everything inside a moved or
//! deleted folder).
//!
//! Patterns follow the shield's rules and go through the same matcher ([`crate::globs`]): no `/`
//! means a name at any depth, a `/` also matches at any depth unless it starts with `/`, and
//! `X/**` covers the folder `X` itself. A path is covered when it or one of its ancestors matches;
//! matching ignores case. The defaults match at any depth on purpose: a sub-folder opened on its
//! own in an editor, or entered in a shell, is a project root to the program that reads it.
//!
//! Why each default asks or is refused is in `docs/AUTORUN.md`.

use sluice_core::{AutoRunAction, AutoRunRule};

use crate::globs::PathGlobs;
use crate::{GuardError, RelPath};

use AutoRunAction::{Ask, Refuse};

/// Default entries: patterns sharing a program and a consequence, what a change gets, which
/// program runs it, and the line the approval shows.
type Group = (&'static [&'static str], AutoRunAction, &'static str, &'static str);

/// The compiled list of one project. Cheap to share behind an `Arc`; matching is lock-free.
#[derive(Debug, Clone)]
pub struct AutoRun {
    globs: PathGlobs,
    rules: Vec<AutoRunRule>,
}

impl AutoRun {
    /// The default list, grouped. Refused: what decides what an AI agent may run without asking
    /// (its own settings, hooks and their scripts) and git's own folder — an approval card that
    /// shows a path and a size cannot show what such a change gives away, and an assistant must
    /// never be one click from raising its own privileges. Asked: everything else, where the
    /// program usually adds a prompt of its own and people do ask assistants for such changes.
    pub const DEFAULTS: &[Group] = &[
        // ----- refused: git internals and AI agents' own permissions and hooks -------------
        (
            &[".git/**"],
            Refuse,
            "git",
            "git runs the hooks kept here and the programs its config names (fsmonitor, pager, \
             aliases) during ordinary git commands",
        ),
        (
            &[".claude/settings.json", ".claude/settings.local.json"],
            Refuse,
            "Claude Code",
            "Claude Code runs the hooks, status line and key helper this file names, and \
             follows its permission rules, without asking you",
        ),
        (
            &[".claude/hooks/**"],
            Refuse,
            "Claude Code",
            "Claude Code's hooks run the scripts kept here on every tool call or session start",
        ),
        (
            &[".codex/**"],
            Refuse,
            "Codex",
            "Codex loads this folder in a trusted project: its config, hooks and command rules \
             decide what Codex starts and runs without asking",
        ),
        (
            &[".gemini/settings.json"],
            Refuse,
            "Gemini CLI",
            "Gemini CLI loads this when it starts: the MCP servers it launches, the hooks it \
             runs, the tools it uses without asking",
        ),
        (
            &[".gemini/extensions/**"],
            Refuse,
            "Gemini CLI",
            "Gemini CLI loads the extensions kept here when it starts, with the MCP servers they \
             launch",
        ),
        (
            &[".cursor/hooks.json", ".cursor/hooks/**"],
            Refuse,
            "Cursor",
            "Cursor runs the hook commands configured here around every agent action",
        ),
        (
            &[".cursor/cli.json"],
            Refuse,
            "Cursor CLI",
            "Cursor's command-line agent follows the permission rules in this file",
        ),
        (
            &[".windsurf/hooks.json", ".devin/hooks.json"],
            Refuse,
            "Windsurf",
            "Windsurf's agent runs the hook commands in this file around its actions",
        ),
        (
            &[".qwen/settings.json"],
            Refuse,
            "Qwen Code",
            "Qwen Code loads this when it starts: the MCP servers it launches, the hooks it runs, \
             the tools it uses without asking",
        ),
        (
            &[".qwen/extensions/**"],
            Refuse,
            "Qwen Code",
            "Qwen Code loads the extensions kept here when it starts, with the MCP servers they \
             launch",
        ),
        (
            &["opencode.json", "opencode.jsonc"],
            Refuse,
            "opencode",
            "opencode starts the MCP servers, language servers and formatters this file names \
             and follows its permission rules, without asking",
        ),
        (
            &[".opencode/plugin/**", ".opencode/plugins/**"],
            Refuse,
            "opencode",
            "opencode loads and runs the plugins kept here when it starts",
        ),
        (
            &[".github/hooks/**"],
            Refuse,
            "GitHub Copilot",
            "Copilot CLI, Copilot's cloud agent and VS Code's agent run the commands these hooks \
             name at session start and around every tool call",
        ),
        (
            &[".clinerules/hooks/**"],
            Refuse,
            "Cline",
            "Cline runs the hook scripts kept here around its tool calls",
        ),
        (
            &[".crush.json", "crush.json"],
            Refuse,
            "Crush",
            "Crush starts the MCP servers and language servers this file names and uses the \
             tools it allows without asking",
        ),
        (
            &[".kiro/hooks/**"],
            Refuse,
            "Kiro",
            "Kiro's agent hooks run their commands and prompts on file saves and other events, \
             without asking",
        ),
        (
            &[".kiro/agents/**", ".amazonq/cli-agents/**"],
            Refuse,
            "Kiro CLI",
            "the CLI's agent files name the MCP servers it starts, the hooks it runs and the tools \
             it uses without asking",
        ),
        // ----- asked: MCP servers that clients start -------------------------------------
        (
            &[".mcp.json"],
            Ask,
            "Claude Code, VS Code",
            "Claude Code and VS Code's agent offer to start the MCP servers in this file, and \
             start them unasked once the project allows them",
        ),
        (
            &[".cursor/mcp.json"],
            Ask,
            "Cursor",
            "Cursor offers to start the MCP servers in this file",
        ),
        (
            &[".vscode/mcp.json"],
            Ask,
            "VS Code",
            "VS Code offers to start the MCP servers in this file",
        ),
        (
            &[".junie/mcp/mcp.json"],
            Ask,
            "JetBrains Junie",
            "Junie starts the MCP servers in this file",
        ),
        (&[".cline/mcp.json"], Ask, "Cline", "Cline starts the MCP servers in this file"),
        (&[".roo/mcp.json"], Ask, "Roo Code", "Roo Code starts the MCP servers in this file"),
        (&[".kiro/settings/mcp.json"], Ask, "Kiro", "Kiro starts the MCP servers in this file"),
        (
            &[".devin/mcp_config.json"],
            Ask,
            "Windsurf",
            "Windsurf's local agent starts the MCP servers in this file",
        ),
        (
            &[".continue/**"],
            Ask,
            "Continue",
            "Continue loads the assistants and MCP servers defined here and starts those servers",
        ),
        (
            &[".kilocode/mcp.json"],
            Ask,
            "Kilo Code",
            "Kilo Code starts the MCP servers in this file",
        ),
        (
            &[".amazonq/mcp.json"],
            Ask,
            "Kiro CLI",
            "Kiro's CLI (formerly Amazon Q Developer CLI) starts the MCP servers in this file",
        ),
        (
            &[".augment/settings.json"],
            Ask,
            "Augment",
            "Augment's agent loads the MCP servers and tool settings in this file",
        ),
        (
            &[".goose/recipes/**"],
            Ask,
            "Goose",
            "Goose starts the extensions (MCP servers) a recipe kept here names when it runs",
        ),
        (
            &[".cursor/environment.json"],
            Ask,
            "Cursor",
            "Cursor's background agents run the install and start commands in this file, with \
             your repository",
        ),
        // ----- asked: editors and IDEs ----------------------------------------------------
        (
            &[".vscode/tasks.json"],
            Ask,
            "VS Code",
            "VS Code runs tasks marked runOn folderOpen when you open the folder (once automatic \
             tasks are allowed there), and the others at a click",
        ),
        (
            &[".vscode/launch.json"],
            Ask,
            "VS Code",
            "VS Code runs these programs, and their preLaunchTask, when you start debugging",
        ),
        (
            &[".vscode/settings.json"],
            Ask,
            "VS Code",
            "VS Code applies these settings when you open the folder: the interpreters and tools \
             it runs, the terminal's environment, what its agent may do without asking",
        ),
        (
            &["*.code-workspace"],
            Ask,
            "VS Code",
            "VS Code applies the settings, tasks, launch configurations and MCP servers in this \
             workspace file when you open it",
        ),
        (
            &[".zed/settings.json"],
            Ask,
            "Zed",
            "Zed applies these settings when it opens the folder: the context (MCP) servers it \
             starts, language-server binaries, the terminal's environment",
        ),
        (
            &[".zed/tasks.json", ".zed/debug.json"],
            Ask,
            "Zed",
            "Zed runs the commands in this file when you pick a task or start debugging",
        ),
        (
            &[".idea/**"],
            Ask,
            "JetBrains IDEs",
            "JetBrains IDEs load run configurations, startup tasks, file watchers and external \
             tools from here when the project opens",
        ),
        (
            &[".devcontainer/**", ".devcontainer.json"],
            Ask,
            "Dev Containers",
            "VS Code, Codespaces and the devcontainer CLI run its initializeCommand on this \
             computer, and its other commands in the container, when the folder opens in one",
        ),
        // ----- asked: shells, version managers, toolchains, package managers --------------
        (
            &[".envrc"],
            Ask,
            "direnv",
            "direnv runs this file in your shell whenever you enter the folder (once you have \
             allowed it)",
        ),
        (
            &[
                "mise.toml",
                "mise.*.toml",
                ".mise.toml",
                ".mise.*.toml",
                ".config/mise.toml",
                ".config/mise/**",
                ".mise/**",
                "mise/config.toml",
            ],
            Ask,
            "mise",
            "mise applies the tools, environment and hooks here whenever you enter the folder, \
             and runs its tasks",
        ),
        (
            &[".tool-versions"],
            Ask,
            "asdf, mise",
            "asdf and mise pick, and may install, the tool versions named here for every \
             command run in this folder",
        ),
        (
            &["rust-toolchain.toml", "rust-toolchain"],
            Ask,
            "rustup",
            "rustup picks the toolchain named here for every cargo and rustc command in this \
             folder; a `path` runs programs from wherever it points",
        ),
        (
            &[".cargo/config.toml", ".cargo/config"],
            Ask,
            "Cargo",
            "cargo, and rust-analyzer when the folder opens, run the programs this names \
             (runner, rustc-wrapper, linker) and follow its aliases and environment",
        ),
        (
            &[".npmrc"],
            Ask,
            "npm",
            "npm applies this to every npm command in the folder: the script shell, Node \
             options, where packages come from",
        ),
        (
            &[".yarnrc", ".yarnrc.yml"],
            Ask,
            "Yarn",
            "every yarn command in the folder runs the Yarn release and plugins named here",
        ),
        (
            &[".pnpmfile.cjs", ".pnpmfile.mjs"],
            Ask,
            "pnpm",
            "pnpm runs the hooks in this file on every install",
        ),
        (
            &["gradle/wrapper/gradle-wrapper.properties"],
            Ask,
            "Gradle",
            "./gradlew and IDE imports download and run the Gradle distribution named here",
        ),
        (
            &[".mvn/**"],
            Ask,
            "Maven",
            "mvn and the Maven wrapper load the extensions, JVM options and distribution named \
             here on every build",
        ),
        // ----- asked: git hook managers ----------------------------------------------------
        (
            &[".husky/**"],
            Ask,
            "husky",
            "git runs the hooks kept here on commit, push and other git commands",
        ),
        (
            &[".githooks/**"],
            Ask,
            "git",
            "git runs the hooks kept here on commit and other git commands when core.hooksPath \
             points here",
        ),
        (
            &[
                "lefthook.{yml,yaml,toml,json}",
                "lefthook-local.{yml,yaml,toml,json}",
                ".lefthook.{yml,yaml,toml,json}",
                ".lefthook-local.{yml,yaml,toml,json}",
                ".lefthook/**",
            ],
            Ask,
            "lefthook",
            "lefthook runs the commands in this file from git hooks on commit, push and checkout",
        ),
        (
            &[".pre-commit-config.yaml"],
            Ask,
            "pre-commit",
            "pre-commit installs and runs the hooks this file names on every commit",
        ),
        (
            &[".overcommit.yml"],
            Ask,
            "overcommit",
            "overcommit runs the hooks this file names from git hooks",
        ),
        // ----- asked: CI, which runs with the repository's secrets on push ----------------
        (
            &[".github/workflows/**", ".github/actions/**"],
            Ask,
            "GitHub Actions",
            "GitHub Actions runs these workflows and actions with the repository's secrets when \
             you push",
        ),
        (
            &[".gitlab-ci.yml"],
            Ask,
            "GitLab CI",
            "GitLab runs this pipeline with the project's CI variables when you push",
        ),
        (
            &[
                ".circleci/**",
                "azure-pipelines.yml",
                "bitbucket-pipelines.yml",
                ".travis.yml",
                "Jenkinsfile",
                ".buildkite/**",
                ".drone.yml",
                ".woodpecker.yml",
                ".woodpecker/**",
            ],
            Ask,
            "CI",
            "your CI service runs this pipeline with the repository's secrets when you push",
        ),
    ];

    /// Compiles `rules`. A bad glob is refused with its text, so the user can fix it.
    pub fn new(rules: &[AutoRunRule]) -> Result<AutoRun, GuardError> {
        let globs = PathGlobs::new(rules.iter().map(|r| r.pattern.as_str()))?;
        Ok(AutoRun { globs, rules: rules.to_vec() })
    }

    /// The default list, one rule per pattern, in the order of [`AutoRun::DEFAULTS`].
    pub fn default_rules() -> Vec<AutoRunRule> {
        AutoRun::DEFAULTS
            .iter()
            .flat_map(|(patterns, action, program, consequence)| {
                patterns.iter().map(|p| AutoRunRule {
                    pattern: (*p).to_owned(),
                    action: *action,
                    program: (*program).to_owned(),
                    consequence: (*consequence).to_owned(),
                })
            })
            .collect()
    }

    /// The rules this list was built from.
    pub fn rules(&self) -> &[AutoRunRule] {
        &self.rules
    }

    /// The rule covering `path` (the path or one of its ancestors matches): a refusing rule
    /// before an asking one, else the first listed. `None` when no rule covers it.
    pub fn rule_for(&self, path: &RelPath) -> Option<&AutoRunRule> {
        let covering = self.globs.covering(path);
        let mut rules = covering.iter().map(|&idx| &self.rules[idx]);
        let first = rules.clone().next()?;
        Some(rules.find(|r| r.action == Refuse).unwrap_or(first))
    }
}

impl Default for AutoRun {
    /// The list built from [`AutoRun::DEFAULTS`].
    fn default() -> AutoRun {
        // The defaults are constants covered by a test, so failing to compile them is a bug in
        // this file, not an input error.
        AutoRun::new(&AutoRun::default_rules()).expect("default auto-run patterns compile")
    }
}
