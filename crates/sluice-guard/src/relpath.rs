//! [`RelPath`]: a validated, normalized, project-relative path.
//!
//! Parsing is lexical only and identical on every platform: a path that would be dangerous on
//! Windows (drive letters, UNC, device namespaces, alternate data streams, reserved device names,
//! trailing dots) is refused on Linux too, so one project behaves the same everywhere and a
//! refusal never depends on a filesystem or network call. Nothing is expanded: `~`, `$HOME` and
//! `%USERPROFILE%` are ordinary (odd) file names.

use std::fmt;

use crate::GuardError;

/// A project-relative path: `/`-separated, no `.`/`..`/empty components, `""` for the root.
///
/// Displayed as `.` for the root. Its only constructors validate, so holding one means every
/// component is a plain name that is safe on every supported platform.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(String);

/// Reserved DOS device names; Windows treats them as devices in any folder and with any
/// extension (`con.txt`), so they are refused as names everywhere.
const RESERVED: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$", "COM1", "COM2", "COM3", "COM4",
    "COM5", "COM6", "COM7", "COM8", "COM9", "COM¹", "COM²", "COM³", "LPT1", "LPT2", "LPT3", "LPT4",
    "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "LPT¹", "LPT²", "LPT³",
];

impl RelPath {
    /// Longest accepted input, in bytes.
    pub const MAX_LEN: usize = 4096;
    /// Deepest accepted path, in components.
    pub const MAX_DEPTH: usize = 128;
    /// Longest accepted single component, in bytes (the common filesystem limit).
    pub const MAX_COMPONENT_LEN: usize = 255;

    /// The project root itself.
    pub fn root() -> RelPath {
        RelPath(String::new())
    }

    /// Validates and normalizes a client-supplied path. `""`, `.` and `./` mean the root; `\` is
    /// a separator like `/`; `a/../b` becomes `b`; climbing above the root is refused.
    pub fn parse(input: &str) -> Result<RelPath, GuardError> {
        if input.len() > Self::MAX_LEN {
            return Err(GuardError::invalid(format!(
                "the path is longer than {} bytes",
                Self::MAX_LEN
            )));
        }
        if input.chars().any(char::is_control) {
            return Err(GuardError::invalid("the path contains NUL or control characters"));
        }
        check_prefix(input)?;

        let mut parts: Vec<&str> = Vec::new();
        for comp in input.split(['/', '\\']) {
            match comp {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(GuardError::invalid(
                            "`..` would climb above the project root; paths are relative to \
                             the project root",
                        ));
                    }
                }
                name => {
                    check_component(name)?;
                    parts.push(name);
                }
            }
        }
        if parts.len() > Self::MAX_DEPTH {
            return Err(GuardError::invalid(format!(
                "the path is deeper than {} components",
                Self::MAX_DEPTH
            )));
        }
        Ok(RelPath(parts.join("/")))
    }

    /// `self/name` where `name` must be one plain component (as read from a directory).
    pub fn join(&self, name: &str) -> Result<RelPath, GuardError> {
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
            return Err(GuardError::invalid("not a single path component"));
        }
        if name.chars().any(char::is_control) {
            return Err(GuardError::invalid("the name contains control characters"));
        }
        check_component(name)?;
        if self.depth() >= Self::MAX_DEPTH || self.0.len() + name.len() + 1 > Self::MAX_LEN {
            return Err(GuardError::invalid("the path is too long or too deep"));
        }
        if self.0.is_empty() {
            Ok(RelPath(name.to_owned()))
        } else {
            // Called for every entry a walk sees: one exact allocation, no formatting machinery.
            let mut joined = String::with_capacity(self.0.len() + 1 + name.len());
            joined.push_str(&self.0);
            joined.push('/');
            joined.push_str(name);
            Ok(RelPath(joined))
        }
    }

    /// The normalized form: `""` for the root, else `a/b/c`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The components, outermost first; empty for the root.
    pub fn components(&self) -> impl DoubleEndedIterator<Item = &str> + '_ {
        self.0.split('/').filter(|c| !c.is_empty())
    }

    pub fn depth(&self) -> usize {
        self.components().count()
    }

    /// The last component, `None` for the root.
    pub fn file_name(&self) -> Option<&str> {
        self.components().next_back()
    }

    /// The containing directory, `None` for the root.
    pub fn parent(&self) -> Option<RelPath> {
        if self.is_root() {
            return None;
        }
        Some(match self.0.rfind('/') {
            Some(idx) => RelPath(self.0[..idx].to_owned()),
            None => RelPath::root(),
        })
    }

    /// Every proper ancestor directory except the root, outermost first (`a`, `a/b` for
    /// `a/b/c`).
    pub fn ancestors(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.match_indices('/').map(|(idx, _)| &self.0[..idx])
    }

    /// Whether `self` is `other` or lies below it (component-wise, never a string prefix).
    pub fn starts_with(&self, other: &RelPath) -> bool {
        other.is_root()
            || self.0 == other.0
            || (self.0.starts_with(&other.0) && self.0.as_bytes().get(other.0.len()) == Some(&b'/'))
    }

    /// `self` relative to `base` when `self` lies below it (component-wise).
    pub fn strip_prefix(&self, base: &RelPath) -> Option<&str> {
        if base.is_root() {
            return Some(&self.0);
        }
        if self.0 == base.0 {
            return Some("");
        }
        self.0.strip_prefix(&base.0)?.strip_prefix('/')
    }
}

/// Refuses the whole-path forms that name something other than a path below the project:
/// absolute, UNC, device namespaces, drive letters, URIs and alternate data streams.
fn check_prefix(input: &str) -> Result<(), GuardError> {
    let bytes = input.as_bytes();
    let is_sep = |b: u8| b == b'/' || b == b'\\';
    if bytes.len() >= 2 && is_sep(bytes[0]) && is_sep(bytes[1]) {
        return Err(GuardError::invalid(
            "UNC paths and device namespaces (`\\\\server\\share`, `\\\\?\\`, `\\\\.\\`, \
             `//host`) are not accepted; use a path relative to the project root",
        ));
    }
    if input.starts_with("\\??\\") || input.starts_with("/??/") {
        return Err(GuardError::invalid(
            "NT object namespace paths (`\\??\\`) are not accepted; use a path relative to the \
             project root",
        ));
    }
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(GuardError::invalid(
            "drive letters (`C:\\…` or `C:x`) are not accepted; use a path relative to the \
             project root",
        ));
    }
    if input.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("file:")) {
        return Err(GuardError::invalid(
            "URIs (`file:`) are not accepted; use a plain path relative to the project root",
        ));
    }
    if input.contains(':') {
        return Err(GuardError::invalid(
            "`:` is not allowed in paths (it selects NTFS alternate data streams or a URI \
             scheme); use a path relative to the project root",
        ));
    }
    if bytes.first().is_some_and(|&b| is_sep(b)) {
        return Err(GuardError::invalid(
            "absolute and root-relative paths are not accepted; use a path relative to the \
             project root, e.g. `src/main.rs` or `.` for the root",
        ));
    }
    Ok(())
}

/// Per-component rules: what Windows would silently reinterpret is refused everywhere.
fn check_component(name: &str) -> Result<(), GuardError> {
    if name.len() > RelPath::MAX_COMPONENT_LEN {
        return Err(GuardError::invalid(format!(
            "a path component is longer than {} bytes",
            RelPath::MAX_COMPONENT_LEN
        )));
    }
    if name.contains(':') {
        return Err(GuardError::invalid(
            "`:` is not allowed in file names (NTFS alternate data streams)",
        ));
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Err(GuardError::invalid(
            "a path component ends with a dot or a space (Windows strips them, so the name would \
             alias another file)",
        ));
    }
    // Windows ignores everything from the first dot and trailing spaces when it looks for a
    // device name: `con.txt` and `CON .log` both open the console.
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches([' ', '.']);
    // Reserved names have at most 7 characters and upper-casing never shortens a string, so
    // longer stems need no case folding (which allocates, for every component of every path).
    // An ASCII stem upper-cases to ASCII, which equals a name exactly when the two are equal
    // ignoring ASCII case: the same answer without the allocation.
    if stem.chars().count() <= 7
        && if stem.is_ascii() {
            RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem))
        } else {
            let upper = stem.to_uppercase();
            RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem) || *r == upper)
        }
    {
        return Err(GuardError::invalid(
            "reserved Windows device names (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any \
             extension) are not accepted as file names",
        ));
    }
    Ok(())
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() { f.write_str(".") } else { f.write_str(&self.0) }
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RelPath({:?})", self.to_string())
    }
}
