//! Where each client keeps its user-level config, per OS, as each client's documentation gives it
//! (`docs/CLIENTS.md`). Computed from the folders passed in ([`Dirs`]), so every OS's answer is
//! testable on any OS.

use std::path::{Path, PathBuf};

use crate::Client;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    /// The OS this binary runs on (the BSDs and others are treated like Linux: XDG folders).
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// The folders client configs hang off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// `$HOME`, or `%USERPROFILE%` on Windows.
    pub home: PathBuf,
    /// `%APPDATA%` (Roaming), Windows only.
    pub appdata: Option<PathBuf>,
    /// `%LOCALAPPDATA%`, Windows only (Claude Desktop's MSIX package lives there).
    pub local_appdata: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` when set to an absolute path (Linux).
    pub xdg_config: Option<PathBuf>,
    /// `$CODEX_HOME` when set.
    pub codex_home: Option<PathBuf>,
}

impl Dirs {
    /// A `Dirs` with only the home folder (the other folders derive from it).
    pub fn home(home: impl Into<PathBuf>) -> Dirs {
        Dirs {
            home: home.into(),
            appdata: None,
            local_appdata: None,
            xdg_config: None,
            codex_home: None,
        }
    }

    /// This process's folders, from the environment.
    pub fn from_env() -> Option<Dirs> {
        let abs =
            |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
        let home =
            if cfg!(windows) { abs("USERPROFILE").or_else(|| abs("HOME")) } else { abs("HOME") }?;
        Some(Dirs {
            home,
            appdata: abs("APPDATA"),
            local_appdata: abs("LOCALAPPDATA"),
            xdg_config: abs("XDG_CONFIG_HOME"),
            codex_home: abs("CODEX_HOME"),
        })
    }

    fn appdata(&self) -> PathBuf {
        self.appdata.clone().unwrap_or_else(|| self.home.join("AppData").join("Roaming"))
    }

    fn local_appdata(&self) -> PathBuf {
        self.local_appdata.clone().unwrap_or_else(|| self.home.join("AppData").join("Local"))
    }

    fn xdg_config(&self) -> PathBuf {
        self.xdg_config.clone().unwrap_or_else(|| self.home.join(".config"))
    }

    /// The XDG config folder as tools that use it on every OS see it: `$XDG_CONFIG_HOME` on
    /// Linux, `~/.config` elsewhere.
    fn xdg_config_on(&self, os: Os) -> PathBuf {
        match os {
            Os::Linux => self.xdg_config(),
            _ => self.home.join(".config"),
        }
    }
}

fn join(base: &Path, parts: &[&str]) -> PathBuf {
    parts.iter().fold(base.to_path_buf(), |p, part| p.join(part))
}

/// The places `client` may keep its user config on `os`, the preferred first. Empty for the
/// generic clients, which have no file.
pub fn candidates(client: Client, os: Os, dirs: &Dirs) -> Vec<PathBuf> {
    let home = &dirs.home;
    match (client, os) {
        (Client::ClaudeDesktop, Os::MacOs) => vec![join(
            home,
            &["Library", "Application Support", "Claude", "claude_desktop_config.json"],
        )],
        (Client::ClaudeDesktop, Os::Windows) => {
            // The MSIX package (Store, and the claude.com installer since early 2026) sees
            // its own virtualised copy of %APPDATA%; the classic install reads %APPDATA%.
            let mut out = msix_claude_dirs(&dirs.local_appdata())
                .into_iter()
                .map(|d| d.join("claude_desktop_config.json"))
                .collect::<Vec<_>>();
            out.push(join(&dirs.appdata(), &["Claude", "claude_desktop_config.json"]));
            out
        }
        // No official Linux build; community builds use the XDG folder.
        (Client::ClaudeDesktop, Os::Linux) => {
            vec![join(&dirs.xdg_config(), &["Claude", "claude_desktop_config.json"])]
        }
        (Client::ClaudeCode, _) => vec![home.join(".claude.json")],
        (Client::Cursor, _) => vec![join(home, &[".cursor", "mcp.json"])],
        (Client::VsCode, _) => vec![code_user(os, dirs, "Code").join("mcp.json")],
        (Client::VsCodeInsiders, _) => {
            vec![code_user(os, dirs, "Code - Insiders").join("mcp.json")]
        }
        (Client::Codex, _) => {
            let base = dirs.codex_home.clone().unwrap_or_else(|| home.join(".codex"));
            vec![base.join("config.toml")]
        }
        (Client::Windsurf, _) => vec![join(home, &[".codeium", "windsurf", "mcp_config.json"])],
        (Client::Zed, Os::Windows) => vec![join(&dirs.appdata(), &["Zed", "settings.json"])],
        (Client::Zed, Os::Linux) => vec![join(&dirs.xdg_config(), &["zed", "settings.json"])],
        (Client::Zed, Os::MacOs) => vec![join(home, &[".config", "zed", "settings.json"])],
        (Client::Goose, Os::Windows) => {
            vec![join(&dirs.appdata(), &["Block", "goose", "config", "config.yaml"])]
        }
        (Client::Goose, Os::Linux) => vec![join(&dirs.xdg_config(), &["goose", "config.yaml"])],
        (Client::Goose, Os::MacOs) => vec![join(home, &[".config", "goose", "config.yaml"])],
        (Client::GeminiCli, _) => vec![join(home, &[".gemini", "settings.json"])],
        (Client::QwenCode, _) => vec![join(home, &[".qwen", "settings.json"])],
        // opencode uses XDG folders on every OS (`~/.config` on macOS and Windows too); it
        // reads `opencode.jsonc` as well.
        (Client::OpenCode, _) => {
            let base = dirs.xdg_config_on(os).join("opencode");
            vec![base.join("opencode.json"), base.join("opencode.jsonc")]
        }
        (Client::KiloCode, _) => {
            let base = dirs.xdg_config_on(os).join("kilo");
            vec![base.join("kilo.jsonc"), base.join("kilo.json")]
        }
        (Client::CopilotCli, _) => vec![join(home, &[".copilot", "mcp-config.json"])],
        // Cline 4 (extension, CLI and SDK) share one file under ~/.cline; older extensions
        // kept theirs in VS Code's global storage, used when it is the one that exists.
        (Client::Cline, _) => vec![
            join(home, &[".cline", "data", "settings", "cline_mcp_settings.json"]),
            join(
                &code_user(os, dirs, "Code"),
                &["globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"],
            ),
        ],
        (Client::RooCode, _) => vec![join(
            &code_user(os, dirs, "Code"),
            &["globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json"],
        )],
        (Client::Crush, Os::Windows) => vec![join(&dirs.local_appdata(), &["crush", "crush.json"])],
        (Client::Crush, _) => vec![dirs.xdg_config_on(os).join("crush").join("crush.json")],
        (Client::Kiro, _) => vec![join(home, &[".kiro", "settings", "mcp.json"])],
        (Client::LmStudio, _) => vec![join(home, &[".lmstudio", "mcp.json"])],
        (Client::Junie, _) => vec![join(home, &[".junie", "mcp", "mcp.json"])],
        (Client::Augment, _) => vec![join(home, &[".augment", "settings.json"])],
        (Client::GenericHttp | Client::GenericStdio, _) => vec![],
    }
}

/// VS Code's (or a fork's) user folder, where `mcp.json` and extensions' global storage live.
fn code_user(os: Os, dirs: &Dirs, product: &str) -> PathBuf {
    match os {
        Os::MacOs => join(&dirs.home, &["Library", "Application Support", product, "User"]),
        Os::Windows => join(&dirs.appdata(), &[product, "User"]),
        Os::Linux => join(&dirs.xdg_config(), &[product, "User"]),
    }
}

/// `%LOCALAPPDATA%\Packages\Claude_*\LocalCache\Roaming\Claude` folders that exist, those
/// already holding a config first.
fn msix_claude_dirs(local_appdata: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(local_appdata.join("Packages")) else { return vec![] };
    let mut dirs: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("Claude_"))
        .map(|e| join(&e.path(), &["LocalCache", "Roaming", "Claude"]))
        .filter(|d| d.is_dir())
        .collect();
    dirs.sort();
    dirs.sort_by_key(|d| !d.join("claude_desktop_config.json").is_file());
    dirs
}

/// The config file to edit: the first candidate that exists, else the preferred one (which
/// the writer creates).
pub fn locate(client: Client, os: Os, dirs: &Dirs) -> Option<PathBuf> {
    let all = candidates(client, os, dirs);
    all.iter().find(|p| p.is_file()).cloned().or_else(|| all.into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> Dirs {
        Dirs::home("/home/ann")
    }

    fn one(client: Client, os: Os, d: &Dirs) -> String {
        let c = candidates(client, os, d);
        assert_eq!(c.len(), 1, "{c:?}");
        c[0].to_string_lossy().replace('\\', "/")
    }

    #[test]
    fn paths_per_os() {
        let d = dirs();
        let table = [
            (Client::ClaudeCode, Os::Linux, "/home/ann/.claude.json"),
            (Client::Cursor, Os::MacOs, "/home/ann/.cursor/mcp.json"),
            (Client::Windsurf, Os::Windows, "/home/ann/.codeium/windsurf/mcp_config.json"),
            (Client::Codex, Os::Linux, "/home/ann/.codex/config.toml"),
            (Client::VsCode, Os::Linux, "/home/ann/.config/Code/User/mcp.json"),
            (Client::VsCode, Os::MacOs, "/home/ann/Library/Application Support/Code/User/mcp.json"),
            (Client::VsCode, Os::Windows, "/home/ann/AppData/Roaming/Code/User/mcp.json"),
            (Client::Zed, Os::Linux, "/home/ann/.config/zed/settings.json"),
            (Client::Zed, Os::MacOs, "/home/ann/.config/zed/settings.json"),
            (Client::Zed, Os::Windows, "/home/ann/AppData/Roaming/Zed/settings.json"),
            (Client::Goose, Os::Linux, "/home/ann/.config/goose/config.yaml"),
            (
                Client::Goose,
                Os::Windows,
                "/home/ann/AppData/Roaming/Block/goose/config/config.yaml",
            ),
            (
                Client::ClaudeDesktop,
                Os::MacOs,
                "/home/ann/Library/Application Support/Claude/claude_desktop_config.json",
            ),
            (
                Client::ClaudeDesktop,
                Os::Linux,
                "/home/ann/.config/Claude/claude_desktop_config.json",
            ),
        ];
        for (client, os, want) in table {
            assert_eq!(one(client, os, &d), want, "{client:?} on {os:?}");
        }
        let mut x = dirs();
        x.xdg_config = Some("/xdg".into());
        x.codex_home = Some("/codex".into());
        x.appdata = Some("/roaming".into());
        assert_eq!(one(Client::VsCode, Os::Linux, &x), "/xdg/Code/User/mcp.json");
        assert_eq!(one(Client::Codex, Os::Windows, &x), "/codex/config.toml");
        assert_eq!(one(Client::VsCode, Os::Windows, &x), "/roaming/Code/User/mcp.json");
        assert!(candidates(Client::GenericHttp, Os::Linux, &x).is_empty());
    }

    #[test]
    fn claude_desktop_on_windows_prefers_the_msix_package_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let mut d = Dirs::home(tmp.path().join("home"));
        d.appdata = Some(tmp.path().join("roaming"));
        d.local_appdata = Some(tmp.path().join("local"));
        // Without a package folder: the classic %APPDATA% file.
        let classic = tmp.path().join("roaming/Claude/claude_desktop_config.json");
        assert_eq!(locate(Client::ClaudeDesktop, Os::Windows, &d), Some(classic.clone()));
        // With two packages: the one already holding a config wins, even if it sorts later.
        let a = tmp.path().join("local/Packages/Claude_aaa/LocalCache/Roaming/Claude");
        let b = tmp.path().join("local/Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("claude_desktop_config.json"), "{}").unwrap();
        let c = candidates(Client::ClaudeDesktop, Os::Windows, &d);
        assert_eq!(c[0], b.join("claude_desktop_config.json"));
        assert_eq!(c[1], a.join("claude_desktop_config.json"));
        assert_eq!(c[2], classic);
        assert_eq!(
            locate(Client::ClaudeDesktop, Os::Windows, &d),
            Some(b.join("claude_desktop_config.json"))
        );
    }
}
