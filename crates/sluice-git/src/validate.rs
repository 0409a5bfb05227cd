//! Validators for every value that reaches git's command line from a request. They are the
//! first line against option injection (CI-02) and pathspec escapes (CI-06); `--end-of-options`,
//! `--` and `GIT_LITERAL_PATHSPECS=1` are the second.

use crate::GitError;

/// Longest revision expression accepted; real refs and ranges are far shorter.
const MAX_REV_LEN: usize = 256;
/// Longest path accepted, matching common filesystem limits.
const MAX_PATH_LEN: usize = 4096;

/// Whether a revision may be a range (`a..b`, `a...b`): `git_log` walks ranges, `git_show`
/// shows exactly one commit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RevKind {
    Single,
    SingleOrRange,
}

/// Checks a revision expression. Allowed: ref names, ids, `~N`, `^N`, `^{…}`, `@{…}` and, for
/// ranges, `..`/`...`. Refused: a leading `-` (an option), `:` (`HEAD:.env` would read a blob
/// and bypass the shield), whitespace, control characters and glob or escape characters.
pub(crate) fn rev(value: &str, kind: RevKind) -> Result<(), GitError> {
    let bad = |why: &str| {
        Err(GitError::invalid(format!(
            "invalid revision: {why}; use a branch, tag, commit id, or forms like HEAD~2{}",
            if kind == RevKind::SingleOrRange { " or main..feature" } else { "" }
        )))
    };
    if value.is_empty() {
        return bad("it is empty");
    }
    if value.len() > MAX_REV_LEN {
        return bad("it is longer than 256 characters");
    }
    if value.starts_with('-') {
        return bad("it starts with '-'");
    }
    if let Some(c) = value.chars().find(|c| !is_rev_char(*c)) {
        return if c == ':' {
            bad("':' (tree or blob paths) is not allowed; pass the path separately")
        } else {
            bad("it contains a character not allowed in revisions")
        };
    }
    if value.contains("..") {
        if kind == RevKind::Single {
            return bad("ranges are not accepted here");
        }
        // Each side of a range must itself be a plausible revision (or empty, meaning HEAD).
        let sides: Vec<&str> = if value.contains("...") {
            value.splitn(2, "...").collect()
        } else {
            value.splitn(2, "..").collect()
        };
        if sides.iter().any(|s| s.starts_with(['-', '.']) || s.ends_with('.')) {
            return bad("malformed range");
        }
        if sides.iter().all(|s| s.is_empty()) {
            return bad("malformed range");
        }
    }
    Ok(())
}

fn is_rev_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-' | '~' | '^' | '@' | '{' | '}')
}

/// Checks a project-relative path for use as a literal pathspec: relative, normalized, no
/// `..`, no leading `-` (option) or `:` (pathspec magic), no NUL or backslash. A single
/// trailing `/` is allowed and kept (it selects a directory).
pub(crate) fn path(value: &str) -> Result<(), GitError> {
    let bad = |why: &str| {
        Err(GitError::invalid(format!(
            "invalid path {:?}: {why}; use a normalized project-relative path like src/main.rs",
            truncate_for_message(value)
        )))
    };
    if value.is_empty() {
        return bad("it is empty");
    }
    if value.len() > MAX_PATH_LEN {
        return bad("it is too long");
    }
    if value.starts_with('-') {
        return bad("it starts with '-'");
    }
    if value.starts_with(':') {
        return bad("pathspec magic (leading ':') is not allowed");
    }
    if value.contains('\0') || value.chars().any(char::is_control) {
        return bad("it contains control characters");
    }
    if value.contains('\\') {
        return bad("use '/' as the separator");
    }
    if value.starts_with('/') || has_drive_prefix(value) {
        return bad("it is absolute");
    }
    let trimmed = value.strip_suffix('/').unwrap_or(value);
    for part in trimmed.split('/') {
        match part {
            "" => return bad("it has an empty component"),
            "." => return bad("it has a '.' component"),
            ".." => return bad("it has a '..' component"),
            _ => {}
        }
    }
    Ok(())
}

fn has_drive_prefix(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Keeps refusal messages short even when the offending value is huge.
fn truncate_for_message(value: &str) -> String {
    value.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::{RevKind, path, rev};

    #[test]
    fn revisions() {
        for ok in ["HEAD", "main", "v1.2.3", "HEAD~2", "HEAD^2", "a1b2c3d", "origin/main", "@{u}"] {
            assert!(rev(ok, RevKind::Single).is_ok(), "{ok}");
        }
        for ok in ["main..feature", "a...b", "..main", "HEAD~3.."] {
            assert!(rev(ok, RevKind::SingleOrRange).is_ok(), "{ok}");
            assert!(rev(ok, RevKind::Single).is_err(), "{ok}");
        }
        for bad in [
            "",
            "-p",
            "--output=/tmp/x",
            "--exec=sh",
            "HEAD:.env",
            "a b",
            "a\nb",
            "a..-p",
            "a....b",
            "..",
            "x*",
            "a\\b",
            "$(id)",
        ] {
            assert!(rev(bad, RevKind::SingleOrRange).is_err(), "{bad:?}");
        }
        assert!(rev(&"a".repeat(257), RevKind::Single).is_err());
    }

    #[test]
    fn paths() {
        for ok in ["a", "src/main.rs", "dir/", "my file.txt", "ünï.txt", ".env", "a..b"] {
            assert!(path(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-x",
            "--foo",
            ":(top)x",
            ":/x",
            "/etc/passwd",
            "C:/x",
            "../x",
            "a/../b",
            "./a",
            "a//b",
            "a\\b",
            "a\0b",
            "a\nb",
            "//",
        ] {
            assert!(path(bad).is_err(), "{bad:?}");
        }
    }
}
