//! Windows paths as plain data, so the rules built on them can be tested on any system: `Path`
//! on Linux does not know `C:\`. A [`WinPath`] is absolute on a drive, made only of names
//! Windows reads one way: no `.` or `..`, no stream (`:`), no name Windows would silently
//! change (a trailing dot or space, a device name such as `NUL`) and no short name (`PROGRA~1`),
//! because each of those can make two spellings name one file, and a rule written for one
//! spelling must hold for every other. Comparisons ignore case, as NTFS does by default.

use std::fmt;

use super::WinSandboxError;

/// The longest path Windows' wide-character calls accept.
const MAX_CHARS: usize = 32_767;

/// Names Windows gives to devices in every folder.
const DEVICES: &[&str] = &[
    "con", "prn", "aux", "nul", "conin$", "conout$", "com0", "com1", "com2", "com3", "com4",
    "com5", "com6", "com7", "com8", "com9", "lpt0", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6",
    "lpt7", "lpt8", "lpt9",
];

/// An absolute Windows path on a drive (`C:\Users\ann\code\app`), in its one spelling.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WinPath {
    /// `X:` followed by `\name` for each name; never a trailing separator (the drive's root is
    /// `X:\`).
    text: String,
}

impl WinPath {
    /// Parses `text`, `/` taken as `\`. Refuses anything that is not one plain spelling of an
    /// absolute path on a drive (see the module docs), with a message that says why.
    pub fn parse(text: &str) -> Result<WinPath, WinSandboxError> {
        // The message names no path: it may reach an assistant (see `crate::error`).
        let bad = |why: &str| WinSandboxError::BadPath(format!("a path of the rules {why}"));
        if text.chars().count() > MAX_CHARS {
            return Err(bad("is longer than Windows allows"));
        }
        let unified = text.replace('/', "\\");
        let mut chars = unified.chars();
        let (Some(drive), Some(':')) = (chars.next(), chars.next()) else {
            return Err(bad("is not an absolute path on a drive (X:\\…)"));
        };
        if !drive.is_ascii_alphabetic() {
            return Err(bad("is not an absolute path on a drive (X:\\…)"));
        }
        let rest = chars.as_str();
        if !rest.is_empty() && !rest.starts_with('\\') {
            return Err(bad("is relative to the drive's current folder"));
        }
        let mut out = format!("{}:", drive.to_ascii_uppercase());
        for name in rest.split('\\').filter(|n| !n.is_empty()) {
            check_name(name).map_err(bad)?;
            out.push('\\');
            out.push_str(name);
        }
        if out.len() == 2 {
            out.push('\\');
        }
        Ok(WinPath { text: out })
    }

    /// The path as Windows takes it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `self` with `rel` appended (`/` or `\` separated); `rel` must be plain names too.
    pub fn join(&self, rel: &str) -> Result<WinPath, WinSandboxError> {
        WinPath::parse(&format!("{}\\{rel}", self.text.trim_end_matches('\\')))
    }

    /// Whether `self` is `other` or lies beneath it, name by name, ignoring case.
    pub fn starts_with(&self, other: &WinPath) -> bool {
        let mine = self.names_folded();
        let theirs = other.names_folded();
        theirs.len() <= mine.len() && mine.iter().zip(&theirs).all(|(a, b)| a == b)
    }

    /// Whether `self` and `other` are the same path, ignoring case.
    pub fn same(&self, other: &WinPath) -> bool {
        self.starts_with(other) && other.starts_with(self)
    }

    /// The drive (`c:`) and each name, lower-cased (NTFS's default case-insensitivity; its
    /// table folds more than ASCII, which `to_lowercase` approximates).
    fn names_folded(&self) -> Vec<String> {
        self.text.split('\\').filter(|n| !n.is_empty()).map(str::to_lowercase).collect()
    }

    /// The number of names beneath the drive.
    pub fn depth(&self) -> usize {
        self.names_folded().len() - 1
    }
}

impl fmt::Display for WinPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why `name` (one component) is not a plain Windows name, if it is not.
fn check_name(name: &str) -> Result<(), &'static str> {
    if name == "." || name == ".." {
        return Err("has a `.` or `..` in it");
    }
    if name.chars().any(|c| c.is_control() || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*'))
    {
        return Err("has a character Windows does not allow in a name (or a stream, `:`)");
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Err("has a name ending in a dot or a space, which Windows drops");
    }
    let lower = name.to_ascii_lowercase();
    let stem = lower.split('.').next().unwrap_or("").trim_end();
    if DEVICES.contains(&stem) {
        return Err("names a device (CON, NUL, COM1, …)");
    }
    if is_short_name(name) {
        return Err("looks like a short (8.3) name, another spelling of a longer one");
    }
    Ok(())
}

/// `NAME~1` or `NAME~1.EXT` (the 8.3 names Windows makes for long ones): a `~` followed by
/// digits up to the end or a dot.
fn is_short_name(name: &str) -> bool {
    name.match_indices('~').any(|(i, _)| {
        let after = &name[i + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && (after.len() == digits || after[digits..].starts_with('.'))
    })
}
