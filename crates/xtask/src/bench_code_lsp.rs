//! Ground truth for the Python and TypeScript code bases of `cargo xtask bench code`: where the
//! language's real server (pyright, typescript-language-server with TypeScript, as `tests/lsp`
//! pins them) says a use is defined, asked over LSP with Sluice's own client
//! (`sluice_code::lsp`), the server run directly by the bench.
//!
//! The server first opens and checks every file of the code base (its diagnostics awaited), so
//! its answers do not depend on how far it got reading the project. Then uses are drawn at
//! random (seeded) from the identifiers of the code base's files, each is asked
//! `textDocument/definition`, and kept when the server answers with a place in the code base,
//! on another line, that declares an item of that name (`def`/`class` in Python; `function`,
//! `class`, `interface`, `type`, `enum`, `namespace`, a method, or a top-level
//! `const`/`let`/`var` in TypeScript): not a local, parameter or property, as for Rust. The
//! first use drawn of each of the first [`WANTED`] distinct definitions is the sample.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use sluice_code::lsp::{self, Session, Spot};
use sluice_runner::Workspace;

use crate::bench_code_rustdoc::Site;

/// Distinct definitions to find.
pub(crate) const WANTED: usize = 50;
/// The first answers wait for the server to read the project.
const WAIT: Duration = Duration::from_secs(120);
/// At most this many uses are asked before the sample is declared too small.
const MAX_ASKED: usize = 5000;

/// Which language server, and what declares an item in its language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Server {
    Pyright,
    TypeScript,
}

impl Server {
    fn command(self, servers: &Path) -> (PathBuf, &'static [&'static str]) {
        match self {
            Server::Pyright => (servers.join("pyright/langserver.index.js"), &["--stdio"]),
            Server::TypeScript => {
                (servers.join("typescript-language-server/lib/cli.mjs"), &["--stdio"])
            }
        }
    }

    /// The program's name, as `Session::start` takes it (it picks the options it needs).
    fn program(self) -> &'static str {
        match self {
            Server::Pyright => "pyright-langserver",
            Server::TypeScript => "typescript-language-server",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Server::Pyright => "py",
            Server::TypeScript => "ts",
        }
    }

    fn keywords(self) -> &'static [&'static str] {
        match self {
            Server::Pyright => &[
                "def", "class", "return", "import", "from", "as", "if", "elif", "else", "for",
                "while", "in", "is", "not", "and", "or", "None", "True", "False", "self", "cls",
                "with", "try", "except", "finally", "raise", "pass", "yield", "await", "async",
                "lambda", "global", "nonlocal", "del", "assert", "break", "continue",
            ],
            Server::TypeScript => &[
                "import",
                "export",
                "from",
                "const",
                "let",
                "var",
                "function",
                "class",
                "return",
                "if",
                "else",
                "for",
                "while",
                "of",
                "in",
                "new",
                "this",
                "type",
                "interface",
                "extends",
                "implements",
                "true",
                "false",
                "null",
                "undefined",
                "typeof",
                "void",
                "string",
                "number",
                "boolean",
                "any",
                "unknown",
                "never",
                "as",
                "async",
                "await",
                "throw",
                "try",
                "catch",
                "switch",
                "case",
                "default",
                "break",
                "continue",
                "readonly",
                "public",
                "private",
                "protected",
                "static",
                "enum",
            ],
        }
    }

    /// Whether `line` (where the server puts the definition) declares an item called `name`.
    pub(crate) fn declares(self, line: &str, name: &str) -> bool {
        let words: Vec<&str> = words(line).map(|(_, w)| w).collect();
        let after = |kws: &[&str]| words.windows(2).any(|w| kws.contains(&w[0]) && w[1] == name);
        match self {
            Server::Pyright => after(&["def", "class"]),
            Server::TypeScript => {
                let top = !line.starts_with([' ', '\t']);
                after(&["function", "class", "interface", "type", "enum", "namespace"])
                    || top && after(&["const", "let", "var"])
                    || method(line, name)
            }
        }
    }
}

/// A TypeScript method or accessor declared on `line`: modifiers, the name, then `(` or `<`.
fn method(line: &str, name: &str) -> bool {
    const MODIFIERS: &[&str] = &[
        "public",
        "private",
        "protected",
        "static",
        "async",
        "get",
        "set",
        "readonly",
        "override",
    ];
    let mut rest = line.trim_start();
    let modifier = |r: &str| {
        MODIFIERS.iter().find(|m| r.strip_prefix(**m).is_some_and(|r| r.starts_with(' ')))
    };
    while let Some(word) = modifier(rest) {
        rest = rest[word.len()..].trim_start();
    }
    rest.strip_prefix(name).is_some_and(|r| r.trim_start().starts_with(['(', '<']))
}

fn ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifiers of a line, with their byte offsets.
fn words(line: &str) -> impl Iterator<Item = (usize, &str)> {
    std::iter::once(0)
        .chain(line.match_indices(|c: char| !ident(c)).map(|(i, s)| i + s.len()))
        .filter_map(move |start| {
            let rest = line.get(start..)?;
            let len = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
            let word = &rest[..len];
            let starts_ok =
                word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$');
            // Only where a word starts: the previous character is not part of one.
            let at_start = line[..start].chars().next_back().is_none_or(|c| !ident(c));
            (starts_ok && at_start && !word.is_empty()).then_some((start, word))
        })
}

struct Running {
    child: Child,
    session: Session,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.session.shutdown();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Uses and their definitions in the code base at `dir`, by the real language server.
pub(crate) fn sites(
    server: Server,
    node: &Path,
    servers: &Path,
    dir: &Path,
    seed: u64,
) -> Result<Vec<Site>> {
    let root = dir.canonicalize()?;
    let (script, args) = server.command(&servers.join("node_modules"));
    let mut child = Command::new(node)
        .arg(&script)
        .args(args)
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("start {}", script.display()))?;
    let (input, out) = (child.stdin.take().context("stdin")?, child.stdout.take().context("out")?);
    let session =
        match Session::start(Box::new(input), Box::new(out), &root, server.program(), WAIT) {
            Ok(s) => s,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("{server:?} did not initialize: {e}");
            }
        };
    let running = Running { child, session };
    let ws = Workspace::open(&root, &[]).map_err(|e| anyhow::anyhow!("{e}"))?;

    let mut files = Vec::new();
    collect(&root, &root, server.extension(), &mut files)?;
    files.sort();
    // Every file opened and checked before the first question, so the answers do not depend on
    // how far the server got reading the project (a TypeScript server still loading it answers
    // an imported name with its import line).
    let checked = lsp::diagnostics(&running.session, &ws, &files, WAIT)
        .map_err(|e| anyhow::anyhow!("{server:?} checking the files: {e:?}"))?;
    if !checked.complete {
        bail!("{server:?} did not check the {} files within {WAIT:?}", files.len());
    }
    let mut uses = Vec::new();
    let mut texts = std::collections::HashMap::new();
    for rel in &files {
        let text = std::fs::read_to_string(root.join(rel))?;
        for (i, line) in text.lines().enumerate() {
            let mut seen: std::collections::HashMap<&str, u32> = Default::default();
            for (_, word) in words(line) {
                let nth = seen.entry(word).or_default();
                *nth += 1;
                if !server.keywords().contains(&word) {
                    uses.push((rel.clone(), i as u32 + 1, word.to_owned(), *nth));
                }
            }
        }
        texts.insert(rel.clone(), text);
    }
    let mut rng = crate::bench_util::SplitMix(seed);
    for i in (1..uses.len()).rev() {
        uses.swap(i, rng.below(i + 1));
    }

    let mut found: Vec<Site> = Vec::new();
    let t0 = Instant::now();
    for (path, line, name, nth) in uses.into_iter().take(MAX_ASKED) {
        if found.len() == WANTED {
            break;
        }
        let spot = Spot { path: path.clone(), line, name: name.clone(), occurrence: Some(nth) };
        let Ok(answer) = lsp::definition(&running.session, &ws, &spot, WAIT) else { continue };
        // Where the server puts the name (the syntax index may describe the definition, with
        // that line as its first).
        let Some(place) = answer.definitions.first() else { continue };
        let def_line = place.symbol.line;
        let declares = texts
            .get(&place.path)
            .and_then(|t| t.lines().nth(usize::try_from(def_line).ok()?.checked_sub(1)?))
            .is_some_and(|l| server.declares(l, &name));
        let same = place.path == path && def_line == u64::from(line);
        let known = found.iter().any(|s| s.def_path == place.path && s.def_line == def_line);
        if declares && !same && !known {
            found.push(Site {
                name,
                path,
                line: u64::from(line),
                def_path: place.path.clone(),
                def_line,
            });
        }
    }
    if found.len() < WANTED {
        bail!(
            "{server:?} resolved only {} item definitions in {:.0?} (asked {MAX_ASKED} uses)",
            found.len(),
            t0.elapsed()
        );
    }
    drop(running);
    Ok(found)
}

fn collect(root: &Path, dir: &Path, ext: &str, into: &mut Vec<String>) -> Result<()> {
    for entry in std::fs::read_dir(dir)?.flatten() {
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect(root, &path, ext, into)?;
        } else if path.extension().is_some_and(|e| e == ext) {
            let name = path.to_string_lossy();
            // Declaration files describe, they do not define.
            if !name.ends_with(".d.ts") {
                into.push(path.strip_prefix(root)?.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_whole_identifiers_with_their_offsets() {
        let got: Vec<(usize, &str)> = words("  x = foo.bar($a, 2b) # Ünï").collect();
        assert_eq!(got, [(2, "x"), (6, "foo"), (10, "bar"), (14, "$a"), (24, "Ünï")]);
    }

    #[test]
    fn what_declares_an_item() {
        let (py, ts) = (Server::Pyright, Server::TypeScript);
        assert!(py.declares("    async def fetch(self):", "fetch"));
        assert!(py.declares("class Client(Base):", "Client"));
        assert!(!py.declares("    client = Client()", "client"));
        assert!(ts.declares("export function compile(s) {", "compile"));
        assert!(ts.declares("export const KeywordCxt = 1", "KeywordCxt"));
        assert!(!ts.declares("  const local = 1", "local"));
        assert!(ts.declares("  private async _compile<T>(x: T) {", "_compile"));
        assert!(ts.declares("  get schema() {", "schema"));
        assert!(!ts.declares("  schema: AnySchema", "schema"));
        assert!(!ts.declares("  schema(x)", "other"));
    }
}
