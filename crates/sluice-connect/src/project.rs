//! What each client reads from a project folder that starts programs or decides, without asking,
//! what runs: its project-scope MCP servers, hooks, plugins, tasks and permission rules (per
//! `docs/CLIENTS.md` and each client's documentation). A project is where an assistant writes,
//! so every one of these files must be on the engine's auto-run list
//! (`sluice_guard::AutoRun::DEFAULTS`, `docs/AUTORUN.md`); the connect crate's tests derive
//! that check from [`Client::project_files`], and the `match` below has no catch-all, so a
//! client added to [`Client`] cannot be forgotten there.
//!
//! Patterns follow the auto-run list's rules: no `/` is a name at any depth, `X/**` a folder and
//! everything in it. Prompts (`CLAUDE.md`, rules, slash commands) are not listed: they run
//! nothing by themselves.

use crate::Client;

impl Client {
    /// The project-scope files of this client (and of the family it belongs to: a fork reads
    /// its parent's files under its own name) that start programs or decide what runs.
    pub fn project_files(self) -> &'static [&'static str] {
        match self {
            Client::ClaudeCode => &[
                ".mcp.json",
                ".claude/settings.json",
                ".claude/settings.local.json",
                ".claude/hooks/**",
            ],
            // No project scope: its servers live in the user's own config.
            Client::ClaudeDesktop | Client::LmStudio => &[],
            Client::Cursor => &[
                ".cursor/mcp.json",
                ".cursor/hooks.json",
                ".cursor/hooks/**",
                ".cursor/cli.json",
                ".cursor/environment.json",
            ],
            // VS Code's agent also runs Copilot's repository hooks and reads `.mcp.json`.
            Client::VsCode | Client::VsCodeInsiders => &[
                ".vscode/mcp.json",
                ".vscode/settings.json",
                ".vscode/tasks.json",
                ".vscode/launch.json",
                "*.code-workspace",
                ".mcp.json",
                ".github/hooks/**",
            ],
            Client::Codex => &[".codex/**"],
            Client::Windsurf => {
                &[".windsurf/hooks.json", ".devin/hooks.json", ".devin/mcp_config.json"]
            }
            Client::Zed => &[".zed/settings.json", ".zed/tasks.json", ".zed/debug.json"],
            // Recipes name the extensions (MCP servers) they start.
            Client::Goose => &[".goose/recipes/**"],
            Client::GeminiCli => &[".gemini/settings.json", ".gemini/extensions/**"],
            // A fork of Gemini CLI, reading the same files under `.qwen`.
            Client::QwenCode => &[".qwen/settings.json", ".qwen/extensions/**"],
            Client::OpenCode => &[
                "opencode.json",
                "opencode.jsonc",
                ".opencode/opencode.json",
                ".opencode/opencode.jsonc",
                ".opencode/plugin/**",
                ".opencode/plugins/**",
            ],
            Client::CopilotCli => &[".github/hooks/**"],
            // Cline and its forks (Roo Code, Kilo Code) keep MCP servers and hooks per project.
            Client::Cline => &[".cline/mcp.json", ".clinerules/hooks/**"],
            Client::RooCode => &[".roo/mcp.json"],
            Client::KiloCode => &[".kilocode/mcp.json"],
            Client::Crush => &[".crush.json", "crush.json"],
            // Kiro's CLI was Amazon Q Developer CLI, which still reads `.amazonq`.
            Client::Kiro => &[
                ".kiro/settings/mcp.json",
                ".kiro/hooks/**",
                ".kiro/agents/**",
                ".amazonq/mcp.json",
                ".amazonq/cli-agents/**",
            ],
            Client::Junie => &[".junie/mcp/mcp.json"],
            Client::Augment => &[".augment/settings.json"],
            // No file: whatever the user's client is, its files are its own.
            Client::GenericHttp | Client::GenericStdio => &[],
        }
    }
}
