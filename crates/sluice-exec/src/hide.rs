//! The credential stores a job must never read, on every platform: the one list that the Linux
//! namespaces (covered where an exposed folder contains them), the Landlock fallback (left out of
//! the readable folders), and macOS's Seatbelt profile (denied) all enforce.
//!
//! In the Linux namespaces the whole home is absent except the toolchains, so this list matters
//! there only for stores inside an exposed folder (`~/.cargo/credentials.toml`) and the system's
//! (`/etc/shadow`); elsewhere it is what keeps the home's secrets out of reach.

use std::path::{Path, PathBuf};

/// Stores relative to the user's home, on every platform.
pub const HOME_STORES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".gitconfig",
    ".config/gh",
    ".config/hub",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".nuget/NuGet/NuGet.Config",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".pki",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".Xauthority",
    ".ICEauthority",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".claude.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini",
    ".config/sluice",
    ".local/share/sluice",
    // macOS
    "Library/Keychains",
    "Library/Cookies",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
    "Library/Application Support/Sluice",
    "Library/Safari",
    // Windows (under %USERPROFILE%)
    "AppData/Roaming/Microsoft/Credentials",
    "AppData/Local/Microsoft/Credentials",
    "AppData/Roaming/Microsoft/Protect",
    "AppData/Local/Google/Chrome/User Data",
    "AppData/Roaming/Mozilla/Firefox",
];

/// System-wide secrets (Linux and macOS).
pub const SYSTEM_STORES: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssl/private",
    "/etc/NetworkManager/system-connections",
    "/etc/wpa_supplicant",
    "/root",
];

/// The default credential stores of a user whose home is `home` (absolute paths; whether each
/// exists is for the enforcer to see).
pub fn credential_stores(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_STORES.iter().map(PathBuf::from).collect();
    if let Some(home) = home {
        // The system list hides root's home from other users' jobs; a job of root keeps its
        // HOME's toolchains, and the per-store entries below hide the rest.
        out.retain(|p| p != home);
        out.extend(HOME_STORES.iter().map(|s| home.join(s)));
    }
    out
}
