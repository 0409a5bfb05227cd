//! Ground truth for the Rust code base of `cargo xtask bench code`: where rustc itself says each
//! use of an item is defined. rustdoc's `--generate-link-to-definition` (unstable, enabled with
//! `RUSTC_BOOTSTRAP=1`) writes the crate's source pages with every resolved use linked to its
//! definition (`<a href="../util/search.rs.html#102-107">Input</a>`); this module runs it on a
//! copy of the crate and reads those links back as (use site → definition) pairs.
//!
//! Only links to an item declared with a keyword (`fn`, `struct`, `enum`, `union`, `trait`,
//! `type`, `const`, `static`, `mod`, `macro_rules!`) in the crate's own sources are kept:
//! rustdoc also links local variables, fields and enum variants, which a syntax index of
//! definitions does not claim to answer, and items of other crates, which are not in the
//! project.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::bench_util::output;

/// A use of a name and where it is defined, as project-relative paths and 1-based lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) line: u64,
    pub(crate) def_path: String,
    pub(crate) def_line: u64,
}

/// Keywords that declare an item, followed by its name.
const ITEM_KEYWORDS: &[&str] =
    &["fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod", "macro_rules"];

/// Makes `crate_dir` (a copy of a registry crate) documentable offline: drops its
/// dev-dependencies and test, bench and example targets (their dependencies are not in the
/// registry cache) and makes it a workspace of its own.
pub(crate) fn prepare(crate_dir: &Path) -> Result<()> {
    let manifest = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)?;
    let mut kept = String::new();
    let mut keep = true;
    for line in text.lines() {
        if line.starts_with('[') {
            let header = line.trim();
            keep = !(header.starts_with("[dev-dependencies")
                || header.starts_with("[target.") && header.contains("dev-dependencies")
                || ["[[test]]", "[[bench]]", "[[example]]", "[workspace]"].contains(&header));
        }
        if keep {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept.push_str("\n[workspace]\n");
    std::fs::write(&manifest, kept)?;
    Ok(())
}

/// Runs rustdoc with links to definitions on `crate_dir` (target folder `target`, offline) and
/// returns every use it resolved to an item of the crate.
pub(crate) fn sites(crate_dir: &Path, target: &Path) -> Result<Vec<Site>> {
    output(
        Command::new("cargo")
            .args(["doc", "--no-deps", "--offline", "--lib"])
            .current_dir(crate_dir)
            .env("CARGO_TARGET_DIR", target)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("RUSTDOCFLAGS", "-Z unstable-options --generate-link-to-definition")
            .env_remove("RUSTFLAGS"),
    )?;
    let (lib_name, lib_dir) = lib_target(crate_dir)?;
    let pages = target.join("doc/src").join(&lib_name);
    let mut html = Vec::new();
    collect_pages(&pages, &mut html)?;
    html.sort();
    let mut found = Vec::new();
    for page in html {
        let rel = page.strip_prefix(&pages)?.to_string_lossy().replace('\\', "/");
        let Some(rel) = rel.strip_suffix(".html") else { continue };
        let text = std::fs::read_to_string(&page)?;
        found.extend(links(&text, rel).into_iter().map(|(line, name, def_file, def_line)| Site {
            name,
            path: format!("{lib_dir}/{rel}"),
            line,
            def_path: format!("{lib_dir}/{def_file}"),
            def_line,
        }));
    }
    // Keep what rustc resolved to an item declared in the crate's own files.
    let mut sources = std::collections::HashMap::new();
    found.retain(|s| {
        let lines = sources.entry(s.def_path.clone()).or_insert_with(|| {
            std::fs::read_to_string(crate_dir.join(&s.def_path))
                .map(|t| t.lines().map(str::to_owned).collect::<Vec<_>>())
                .unwrap_or_default()
        });
        let declares = usize::try_from(s.def_line)
            .ok()
            .and_then(|l| lines.get(l.checked_sub(1)?))
            .is_some_and(|l| declares_item(l, &s.name));
        declares && !(s.path == s.def_path && s.line == s.def_line)
    });
    if found.is_empty() {
        bail!("rustdoc linked no use to a definition in {}", pages.display());
    }
    Ok(found)
}

/// The crate's library name (as rustdoc names its folder) and the folder of its root file.
fn lib_target(crate_dir: &Path) -> Result<(String, String)> {
    let meta: serde_json::Value = serde_json::from_str(&output(
        Command::new("cargo")
            .args(["metadata", "--no-deps", "--offline", "--format-version", "1"])
            .current_dir(crate_dir),
    )?)?;
    let lib = meta["packages"][0]["targets"]
        .as_array()
        .and_then(|t| {
            t.iter().find(|t| t["kind"].as_array().is_some_and(|k| k.contains(&"lib".into())))
        })
        .context("a library target")?;
    let name = lib["name"].as_str().context("lib name")?.replace('-', "_");
    let root = Path::new(lib["src_path"].as_str().context("src_path")?);
    let dir = root.parent().context("lib folder")?;
    let canon = crate_dir.canonicalize()?;
    let rel = dir.strip_prefix(&canon).or_else(|_| dir.strip_prefix(crate_dir))?;
    Ok((name, rel.to_string_lossy().replace('\\', "/")))
}

fn collect_pages(dir: &Path, into: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| dir.display().to_string())? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect_pages(&path, into)?;
        } else if path.to_string_lossy().ends_with(".rs.html") {
            into.push(path);
        }
    }
    Ok(())
}

/// Whether `line` declares an item called `name` (`pub(crate) fn name<T>(`,
/// `macro_rules! name {`).
pub(crate) fn declares_item(line: &str, name: &str) -> bool {
    let words: Vec<&str> = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|w| ITEM_KEYWORDS.contains(&w[0]) && w[1] == name)
}

/// The links of one source page (`page` is its path below the crate's source folder, e.g.
/// `meta/strategy.rs`): (line of the use, name, file of the definition relative to the same
/// folder, its first line). Links out of the crate's sources (other crates, the standard
/// library) are left out.
pub(crate) fn links(html: &str, page: &str) -> Vec<(u64, String, String, u64)> {
    let page_dir = page.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = Vec::new();
    let mut line = 0u64;
    let mut rest = html;
    while let Some(at) = rest.find("<a ") {
        rest = &rest[at + 3..];
        let Some(end) = rest.find('>') else { break };
        let attrs = &rest[..end];
        // Line numbers: `<a href=#12 id=12 data-nosnippet>12</a>` starts each line.
        if attrs.contains("data-nosnippet") {
            if let Some(n) = attr_unquoted(attrs, "id=").and_then(|v| v.parse().ok()) {
                line = n;
            }
            continue;
        }
        let Some(href) = attr_quoted(attrs, "href=\"") else { continue };
        let Some(close) = rest.find("</a>") else { break };
        let inner = strip_tags(&rest[end + 1..close]);
        let Some((file, anchor)) = href.split_once('#') else { continue };
        if file.contains(':') || !(file.is_empty() || file.ends_with(".rs.html")) {
            continue;
        }
        let Some(def_line) = anchor.split('-').next().and_then(|l| l.parse::<u64>().ok()) else {
            continue;
        };
        let def_file = if file.is_empty() {
            Some(page.to_owned())
        } else {
            join(page_dir, file.trim_end_matches(".html"))
        };
        let name = inner.rsplit("::").next().unwrap_or("").trim_end_matches('!');
        let ident = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        let keyword = ["self", "Self", "super", "crate"].contains(&name);
        if let (Some(def_file), true) = (def_file, ident && !keyword && line > 0) {
            out.push((line, name.to_owned(), def_file, def_line));
        }
    }
    out
}

fn attr_unquoted<'a>(attrs: &'a str, key: &str) -> Option<&'a str> {
    let at = attrs.find(key)? + key.len();
    attrs[at..].split_whitespace().next()
}

fn attr_quoted<'a>(attrs: &'a str, key: &str) -> Option<&'a str> {
    let at = attrs.find(key)? + key.len();
    attrs[at..].split('"').next()
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.trim().to_owned()
}

/// `dir/rel` with `.` and `..` resolved; `None` when it leaves the source folder.
fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for c in Path::new(rel).components() {
        match c {
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// Distinct definitions in `sites`, so the sample weighs each symbol once.
pub(crate) fn definitions(sites: &[Site]) -> Vec<(String, u64)> {
    let mut seen = HashSet::new();
    let mut defs: Vec<(String, u64)> = sites
        .iter()
        .map(|s| (s.def_path.clone(), s.def_line))
        .filter(|d| seen.insert(d.clone()))
        .collect();
    defs.sort();
    defs
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<pre class=\"rust\"><code><a href=#1 id=1 data-nosnippet>1</a>\
        <span class=\"kw\">use </span>crate::{<a href=\"../util/search.rs.html#102-107\">Input\
        </a>, <a href=\"https://doc.rust-lang.org/core/fmt/trait.Debug.html\">Debug</a>};\n\
        <a href=#2 id=2 data-nosnippet>2</a>    <a href=\"#40-79\">Strategy</a>::new(\
        <a href=\"#82\">info</a>); <a href=\"../../x.rs.html#3\">x</a>\n\
        <a href=#3 id=3 data-nosnippet>3</a>    <a href=\"mod.rs.html#9\"><span class=\"macro\">\
        log!</span></a>(<a href=\"error.rs.html#5\">error::BuildError</a>)";

    #[test]
    fn links_give_the_use_line_the_name_and_the_definition_in_the_crate() {
        let got = links(PAGE, "meta/strategy.rs");
        assert_eq!(
            got,
            vec![
                (1, "Input".into(), "util/search.rs".into(), 102),
                (2, "Strategy".into(), "meta/strategy.rs".into(), 40),
                (2, "info".into(), "meta/strategy.rs".into(), 82),
                (3, "log".into(), "meta/mod.rs".into(), 9),
                (3, "BuildError".into(), "meta/error.rs".into(), 5),
            ]
        );
        assert!(links("<a href=\"#1\">", "lib.rs").is_empty(), "no line, no close: nothing");
    }

    #[test]
    fn only_item_declarations_count() {
        assert!(declares_item("    pub(crate) fn from_prefixes<T>(", "from_prefixes"));
        assert!(declares_item("macro_rules! log {", "log"));
        assert!(declares_item("pub struct Input<'h> {", "Input"));
        assert!(!declares_item("    let info = x;", "info"));
        assert!(!declares_item("    Strategy(Arc<dyn Strategy>),", "Strategy"));
    }

    #[test]
    fn joined_paths_stay_in_the_source_folder() {
        assert_eq!(join("meta", "../util/search.rs").as_deref(), Some("util/search.rs"));
        assert_eq!(join("", "../x.rs"), None);
    }
}
