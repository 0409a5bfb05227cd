//! [`PathGlobs`]: the glob machinery the shield and the auto-run list share, so one set of
//! pattern rules (see [`crate::Shield`]) means the same thing in both lists.
//!
//! Matching is case-insensitive whatever the disk: on a case-insensitive volume `.VSCODE/Tasks.json`
//! is the file an editor reads, and on a case-sensitive one treating it alike only errs on the
//! side of caution.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::{GuardError, RelPath};

/// A compiled list of patterns that can say which of them match.
#[derive(Debug, Clone)]
pub(crate) struct PathGlobs {
    set: GlobSet,
    /// The pattern each compiled glob came from (one pattern expands to one or two globs).
    owner: Vec<usize>,
}

impl PathGlobs {
    /// Compiles `patterns` in order; blank ones match nothing but keep their index.
    pub(crate) fn new<'a>(
        patterns: impl IntoIterator<Item = &'a str>,
    ) -> Result<PathGlobs, GuardError> {
        let mut builder = GlobSetBuilder::new();
        let mut owner = Vec::new();
        for (idx, pattern) in patterns.into_iter().enumerate() {
            if pattern.trim().is_empty() {
                continue;
            }
            for expanded in expand(pattern) {
                let glob = GlobBuilder::new(&expanded)
                    .case_insensitive(true)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| GuardError::BadPattern {
                        pattern: pattern.to_owned(),
                        reason: e.kind().to_string(),
                    })?;
                builder.add(glob);
                owner.push(idx);
            }
        }
        let set = builder.build().map_err(|e| GuardError::BadPattern {
            pattern: e.glob().unwrap_or_default().to_owned(),
            reason: e.kind().to_string(),
        })?;
        Ok(PathGlobs { set, owner })
    }

    /// Whether `path` itself matches a pattern.
    pub(crate) fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// Whether `path` or one of its ancestor folders matches a pattern (never the root).
    pub(crate) fn covers(&self, path: &RelPath) -> bool {
        !path.is_root()
            && (path.ancestors().any(|a| self.set.is_match(a)) || self.set.is_match(path.as_str()))
    }

    /// The indices of the patterns that match `path` or one of its ancestor folders, ascending
    /// and without repeats; empty for the root.
    pub(crate) fn covering(&self, path: &RelPath) -> Vec<usize> {
        if path.is_root() {
            return Vec::new();
        }
        let mut found: Vec<usize> = path
            .ancestors()
            .chain(std::iter::once(path.as_str()))
            .flat_map(|p| self.set.matches(p))
            .map(|glob| self.owner[glob])
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// Turns one user pattern into the globs that implement the shield's pattern rules.
fn expand(pattern: &str) -> Vec<String> {
    let pattern = pattern.trim();
    let (anchored, body) = match pattern.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, pattern.strip_prefix("**/").unwrap_or(pattern)),
    };
    let mut bodies = vec![body.to_owned()];
    if let Some(dir) = body.strip_suffix("/**").filter(|d| !d.is_empty()) {
        bodies.push(dir.to_owned());
    }
    bodies
        .into_iter()
        .map(|b| if anchored || b.starts_with("**") { b } else { format!("**/{b}") })
        .collect()
}
