//! [`Shield`]: the sensitive-file shield.
//!
//! A case-insensitive glob set over project-relative paths. A path is shielded when it, or any
//! of its ancestor directories, matches, so a shielded folder hides everything below it. The
//! runner checks both the requested path and the path it resolves to, so an in-project link
//! `notes.txt -> .env` is shielded too.
//!
//! Pattern rules: a pattern without `/` matches a name at any depth (`*.pem`); a pattern with a
//! `/` matches at any depth too (`.ssh/**` also hides `backup/.ssh/id`), unless it starts with
//! `/`, which anchors it at the project root. `X/**` also matches the folder `X` itself, so the
//! folder is hidden from listings rather than shown empty.

use crate::globs::PathGlobs;
use crate::{GuardError, RelPath};

/// The compiled shield. Cheap to share behind an `Arc`; matching is lock-free.
#[derive(Debug, Clone)]
pub struct Shield {
    globs: PathGlobs,
    patterns: Vec<String>,
}

impl Shield {
    /// The default list for a new project. `.env.example`/`.env.sample` are shielded as well:
    /// "template" env files often end up holding real values, and a shield that guesses which
    /// ones are harmless is a shield with holes. Users who want the model to see a template can
    /// edit the project's list.
    pub const DEFAULT_PATTERNS: &[&str] = &[
        // Environment files (dotenv, direnv).
        ".env",
        ".env.*",
        ".envrc",
        // Keys, certificates and key stores.
        "*.pem",
        "*.key",
        "*.p12",
        "*.pfx",
        "*.p8",
        "*.jks",
        "*.keystore",
        "*.ppk",
        "id_rsa*",
        "id_ed25519*",
        "id_ecdsa*",
        "id_dsa*",
        // Credential folders and files of common tools.
        ".ssh/**",
        ".aws/**",
        ".azure/**",
        ".gnupg/**",
        ".kube/**",
        ".config/gcloud/**",
        ".docker/config.json",
        ".npmrc",
        ".yarnrc.yml",
        ".pypirc",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".htpasswd",
        ".git-credentials",
        ".vault-token",
        "credentials.tfrc.json",
        // Git internals: hooks and config are code execution and credential vectors.
        ".git/**",
        // Credential JSON files and infrastructure state.
        "credentials.json",
        "*credentials*.json",
        "service-account*.json",
        "client_secret*.json",
        "*.tfstate",
        "*.tfstate.*",
        "*.tfvars",
        "secrets.*",
    ];

    /// Compiles `patterns`. A bad glob is refused with its text, so the user can fix it.
    pub fn new(patterns: &[String]) -> Result<Shield, GuardError> {
        let globs = PathGlobs::new(patterns.iter().map(String::as_str))?;
        Ok(Shield { globs, patterns: patterns.to_vec() })
    }

    /// The default patterns as owned strings, e.g. to seed a project's editable list.
    pub fn default_patterns() -> Vec<String> {
        Self::DEFAULT_PATTERNS.iter().map(|p| (*p).to_owned()).collect()
    }

    /// The patterns this shield was built from.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// True if `path` or any ancestor directory matches.
    pub fn is_shielded(&self, path: &RelPath) -> bool {
        if path.is_root() {
            return false;
        }
        self.globs.covers(path)
    }

    /// True if `path` itself matches, ignoring ancestors. For walkers that never descend into a
    /// shielded folder, so ancestors are known to be clean.
    pub fn matches_entry(&self, path: &RelPath) -> bool {
        !path.is_root() && self.globs.is_match(path.as_str())
    }

    /// [`Shield::matches_entry`] for a path as read from a disk, which need not be a valid
    /// [`RelPath`] (a name with a backslash, a control character or a reserved device name): for
    /// the walk that covers shielded files in a command's sandbox, where every name counts.
    pub fn matches_text(&self, path: &str) -> bool {
        !path.is_empty() && self.globs.is_match(path)
    }

    /// `Err(Shielded)` if [`Shield::is_shielded`].
    pub fn check(&self, path: &RelPath) -> Result<(), GuardError> {
        if self.is_shielded(path) {
            Err(GuardError::Shielded { path: path.to_string() })
        } else {
            Ok(())
        }
    }
}

impl Default for Shield {
    /// The shield built from [`Shield::DEFAULT_PATTERNS`].
    fn default() -> Shield {
        // The defaults are constants covered by a test, so failing to compile them is a bug in
        // this file, not an input error.
        Shield::new(&Shield::default_patterns()).expect("default shield patterns compile")
    }
}
