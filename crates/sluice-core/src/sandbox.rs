//! A project's sandbox settings, as the user sets them: paths to hide beside the default
//! credential stores, defaults un-hidden, stores granted, host sockets opted in, and whether
//! jobs must run with every layer of confinement or not at all.
//!
//! Paths here name places on the user's machine outside any project (`~/.npmrc`,
//! `/var/run/docker.sock`): they are the human's configuration, never an assistant's argument,
//! and they are checked lexically only (the engine looks at the filesystem).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A path as the user names it in a project's sandbox settings: `~/rel/path` (beneath the
/// user's home) or `/abs/path`. Normalized: no `.`, `..`, empty or trailing components, no
/// control characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HostPath(String);

/// The longest path accepted, in bytes.
const MAX_PATH_BYTES: usize = 1024;

impl HostPath {
    /// Checks and normalizes `text` (a trailing `/` is dropped, repeated `/` collapsed).
    pub fn parse(text: &str) -> Result<HostPath, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the path is empty".into());
        }
        if text.len() > MAX_PATH_BYTES {
            return Err(format!("the path is longer than {MAX_PATH_BYTES} bytes"));
        }
        if text.chars().any(|c| crate::text::is_hidden(c) || c == '\\') {
            return Err(format!(
                "{text:?} contains a control or invisible character, or a backslash; name the \
                 path with /"
            ));
        }
        let (prefix, rest) = if text == "~" {
            ("~", "")
        } else if let Some(rest) = text.strip_prefix("~/") {
            ("~", rest)
        } else if let Some(rest) = text.strip_prefix('/') {
            ("", rest)
        } else {
            return Err(format!("{text:?} is neither beneath your home (~/…) nor absolute (/…)"));
        };
        let mut out = String::from(prefix);
        for part in rest.split('/').filter(|p| !p.is_empty()) {
            if part == "." || part == ".." {
                return Err(format!("{text:?} contains {part:?}; name the path itself"));
            }
            out.push('/');
            out.push_str(part);
        }
        if out.is_empty() {
            out.push('/');
        }
        Ok(HostPath(out))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part beneath the home (`".npmrc"` for `~/.npmrc`; `""` for `~`), if it is there.
    pub fn home_relative(&self) -> Option<&str> {
        if self.0 == "~" {
            return Some("");
        }
        self.0.strip_prefix("~/")
    }

    /// `/` itself, or the home itself.
    pub fn is_everything(&self) -> bool {
        self.0 == "/" || self.0 == "~"
    }

    /// The absolute path, given the user's home (`None` for a `~` path without one).
    pub fn resolve(&self, home: Option<&Path>) -> Option<PathBuf> {
        match self.home_relative() {
            Some("") => home.map(Path::to_path_buf),
            Some(rel) => home.map(|h| h.join(rel)),
            None => Some(PathBuf::from(&self.0)),
        }
    }

    /// The form a path beneath `home` is shown in (`~/…`), or the absolute path; `None` when it
    /// is not valid UTF-8 or not absolute.
    pub fn of_path(path: &Path, home: Option<&Path>) -> Option<HostPath> {
        if let Some(rel) = home.and_then(|h| path.strip_prefix(h).ok()) {
            return HostPath::parse(&format!("~/{}", rel.to_str()?)).ok();
        }
        if !path.is_absolute() {
            return None;
        }
        HostPath::parse(path.to_str()?).ok()
    }
}

impl std::fmt::Display for HostPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for HostPath {
    type Error = String;
    fn try_from(s: String) -> Result<HostPath, String> {
        HostPath::parse(&s)
    }
}

impl From<HostPath> for String {
    fn from(p: HostPath) -> String {
        p.0
    }
}

/// What a project changed of the default sandbox. The default value changes nothing: the
/// default credential stores hidden, nothing granted, no host socket, the fallback allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSettings {
    /// Hidden from jobs beside the default credential stores.
    pub hide: Vec<HostPath>,
    /// Default credential stores this project's jobs are not hidden from (where the sandbox
    /// would otherwise show them: the fallback, or beneath a toolchain folder).
    pub unhide: Vec<HostPath>,
    /// Stores the user granted: visible, read-only, in every job of the project.
    pub grants: Vec<HostPath>,
    /// Host Unix sockets the project's jobs may connect to.
    pub sockets: Vec<HostPath>,
    /// Jobs refuse to start unless every layer of confinement holds (on Linux: namespaces and
    /// Landlock), instead of running under the fallback.
    pub require_full: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_paths_normalize_and_refuse_what_is_not_a_plain_path() {
        for (text, want) in [
            ("~/.npmrc", "~/.npmrc"),
            ("  ~//.config/gh/ ", "~/.config/gh"),
            ("/var/run/docker.sock", "/var/run/docker.sock"),
            ("/", "/"),
            ("~", "~"),
            ("~/", "~"),
        ] {
            assert_eq!(HostPath::parse(text).unwrap().as_str(), want, "{text}");
        }
        for bad in [
            "",
            " ",
            "relative/x",
            "./x",
            "~user/x",
            "~/a/../b",
            "/a/./b",
            "/a\nb",
            "C:\\x",
            "$HOME/x",
            "%USERPROFILE%",
        ] {
            assert!(HostPath::parse(bad).is_err(), "{bad:?}");
        }
        assert!(HostPath::parse(&format!("/{}", "a".repeat(2000))).is_err());
    }

    #[test]
    fn host_paths_resolve_against_the_home() {
        let home = Path::new("/home/u");
        let p = HostPath::parse("~/.npmrc").unwrap();
        assert_eq!(p.home_relative(), Some(".npmrc"));
        assert_eq!(p.resolve(Some(home)), Some(PathBuf::from("/home/u/.npmrc")));
        assert_eq!(p.resolve(None), None);
        assert_eq!(HostPath::parse("/etc/x").unwrap().resolve(None), Some("/etc/x".into()));
        let shown = HostPath::of_path(Path::new("/home/u/.ssh"), Some(home)).unwrap();
        assert_eq!(shown.as_str(), "~/.ssh");
        assert!(HostPath::parse("~").unwrap().is_everything());
    }

    #[test]
    fn settings_refuse_bad_paths_and_unknown_fields_when_decoded() {
        let ok: SandboxSettings =
            serde_json::from_str(r#"{"grants":["~/.npmrc"],"require_full":true}"#).unwrap();
        assert_eq!(ok.grants[0].as_str(), "~/.npmrc");
        assert!(ok.require_full);
        assert!(serde_json::from_str::<SandboxSettings>(r#"{"grants":["npmrc"]}"#).is_err());
        assert!(serde_json::from_str::<SandboxSettings>(r#"{"grant":[]}"#).is_err());
    }
}
