//! The credential stores a job must never read, on every platform: the one list that the Linux
//! namespaces (covered where an exposed folder contains them), the Landlock fallback (left out of
//! the readable folders), and macOS's Seatbelt profile (denied) all enforce.
//!
//! In the Linux namespaces the whole home is absent except the toolchains, so this list matters
//! there only for stores inside an exposed folder (`~/.cargo/credentials.toml`) and the system's
//! (`/etc/shadow`); elsewhere it is what keeps the home's secrets out of reach.

use std::path::{Path, PathBuf};

/// Stores relative to the user's home, on every platform, with what each holds (for the
/// confirmation of a grant).
pub const HOME_STORES: &[(&str, &str)] = &[
    (".ssh", "SSH keys"),
    (".gnupg", "GPG keys"),
    (".aws", "AWS credentials"),
    (".azure", "Azure credentials"),
    (".config/gcloud", "Google Cloud credentials"),
    (".kube", "Kubernetes cluster credentials"),
    (".docker", "Docker registry credentials"),
    (".netrc", "passwords for network hosts"),
    (".git-credentials", "git passwords and tokens"),
    (".config/git/credentials", "git passwords and tokens"),
    (".gitconfig", "git settings, sometimes tokens"),
    (".config/gh", "GitHub CLI tokens"),
    (".config/hub", "GitHub tokens"),
    (".npmrc", "npm registry tokens"),
    (".yarnrc", "yarn registry tokens"),
    (".yarnrc.yml", "yarn registry tokens"),
    (".pypirc", "PyPI upload tokens"),
    (".gem/credentials", "RubyGems API keys"),
    (".cargo/credentials", "crates.io tokens"),
    (".cargo/credentials.toml", "crates.io tokens"),
    (".m2/settings.xml", "Maven repository passwords"),
    (".m2/settings-security.xml", "Maven's master password"),
    (".gradle/gradle.properties", "Gradle repository credentials"),
    (".nuget/NuGet/NuGet.Config", "NuGet feed credentials"),
    (".terraform.d/credentials.tfrc.json", "Terraform Cloud tokens"),
    (".vault-token", "a HashiCorp Vault token"),
    (".password-store", "the pass password store"),
    (".local/share/keyrings", "the desktop keyring"),
    (".pki", "certificates and keys (NSS)"),
    (".mozilla", "Firefox profiles: cookies and saved passwords"),
    (".config/google-chrome", "Chrome profiles: cookies and saved passwords"),
    (".config/chromium", "Chromium profiles: cookies and saved passwords"),
    (".config/BraveSoftware", "Brave profiles: cookies and saved passwords"),
    (".config/microsoft-edge", "Edge profiles: cookies and saved passwords"),
    (".Xauthority", "the X display's access key"),
    (".ICEauthority", "the desktop session's access key"),
    (".bash_history", "shell history"),
    (".zsh_history", "shell history"),
    (".python_history", "Python history"),
    (".psql_history", "PostgreSQL history"),
    (".mysql_history", "MySQL history"),
    (".claude.json", "Claude Code's settings and account"),
    (".claude/.credentials.json", "Claude Code's credentials"),
    (".codex/auth.json", "Codex's credentials"),
    (".gemini", "Gemini CLI's credentials"),
    (".config/sluice", "Sluice's own data"),
    (".local/share/sluice", "Sluice's own data"),
    // macOS
    ("Library/Keychains", "the macOS keychains"),
    ("Library/Cookies", "Safari cookies"),
    ("Library/Application Support/Google/Chrome", "Chrome profiles: cookies and saved passwords"),
    ("Library/Application Support/Firefox", "Firefox profiles: cookies and saved passwords"),
    ("Library/Application Support/Sluice", "Sluice's own data"),
    ("Library/Safari", "Safari's history and data"),
    // Windows (under %USERPROFILE%)
    ("AppData/Roaming/Microsoft/Credentials", "Windows credentials"),
    ("AppData/Local/Microsoft/Credentials", "Windows credentials"),
    ("AppData/Roaming/Microsoft/Protect", "Windows data-protection keys"),
    ("AppData/Local/Google/Chrome/User Data", "Chrome profiles: cookies and saved passwords"),
    ("AppData/Roaming/Mozilla/Firefox", "Firefox profiles: cookies and saved passwords"),
    ("AppData/Local/Microsoft/Vault", "Windows Credential Manager's vault"),
    ("AppData/Roaming/Microsoft/Crypto", "your private keys (CryptoAPI)"),
    ("AppData/Roaming/Microsoft/SystemCertificates", "your certificates"),
    ("AppData/Local/Microsoft/Edge/User Data", "Edge profiles: cookies and saved passwords"),
    (
        "AppData/Local/BraveSoftware/Brave-Browser/User Data",
        "Brave profiles: cookies and saved passwords",
    ),
    ("AppData/Roaming/GitHub CLI", "GitHub CLI tokens"),
    ("AppData/Roaming/gcloud", "Google Cloud credentials"),
    ("AppData/Roaming/NuGet/NuGet.Config", "NuGet feed credentials"),
    ("AppData/Roaming/Sluice", "Sluice's own data"),
];

/// System-wide secrets (Linux and macOS), with what each holds.
pub const SYSTEM_STORES: &[(&str, &str)] = &[
    ("/etc/shadow", "password hashes"),
    ("/etc/shadow-", "password hashes"),
    ("/etc/gshadow", "group password hashes"),
    ("/etc/gshadow-", "group password hashes"),
    ("/etc/security/opasswd", "old password hashes"),
    ("/etc/ssh/ssh_host_rsa_key", "this machine's SSH host key"),
    ("/etc/ssh/ssh_host_ecdsa_key", "this machine's SSH host key"),
    ("/etc/ssh/ssh_host_ed25519_key", "this machine's SSH host key"),
    ("/etc/ssl/private", "TLS private keys"),
    ("/etc/NetworkManager/system-connections", "Wi-Fi and VPN passwords"),
    ("/etc/wpa_supplicant", "Wi-Fi passwords"),
    ("/root", "the administrator's home"),
];

/// The default credential stores of a user whose home is `home` (absolute paths; whether each
/// exists is for the enforcer to see).
pub fn credential_stores(home: Option<&Path>) -> Vec<PathBuf> {
    default_stores(home).into_iter().map(|(p, _)| p).collect()
}

/// [`credential_stores`] with what each holds.
pub fn default_stores(home: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    let mut out: Vec<(PathBuf, &'static str)> =
        SYSTEM_STORES.iter().map(|(p, holds)| (PathBuf::from(p), *holds)).collect();
    if let Some(home) = home {
        // The system list hides root's home from other users' jobs; a job of root keeps its
        // HOME's toolchains, and the per-store entries below hide the rest.
        out.retain(|(p, _)| p != home);
        out.extend(HOME_STORES.iter().map(|(s, holds)| (home.join(s), *holds)));
    }
    out
}

/// What the default store at `path` (or the one it lies in) holds, if it is one.
pub fn what_it_holds(path: &Path, home: Option<&Path>) -> Option<&'static str> {
    default_stores(home)
        .into_iter()
        .filter(|(p, _)| path.starts_with(p))
        .max_by_key(|(p, _)| p.components().count())
        .map(|(_, holds)| holds)
}

/// The stores a job of a project must not read: the defaults without those the project
/// un-hid or was granted, and the project's own additions (also without the granted ones).
/// A default beneath a granted folder stays hidden: granting `~/.config/tool` does not bring
/// `~/.config/gh` along.
pub fn effective_stores(home: Option<&Path>, exposure: &crate::Exposure) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = credential_stores(home)
        .into_iter()
        .filter(|p| !exposure.unhidden.contains(p) && !exposure.granted.contains(p))
        .collect();
    for h in &exposure.hidden {
        if !exposure.granted.contains(h) && !out.contains(h) {
            out.push(h.clone());
        }
    }
    out
}
