//! `cargo xtask bench code`: the syntax-tier code tools (`sluice-code`) through the real release
//! `sluice serve` over HTTP (raw JSON-RPC, one connection per call), on real code from the
//! registries. Three questions, each answered beside its peer where it has one:
//!
//! - **Does `code_definition` land on the right place?** For 50 symbols of a real crate, chosen
//!   at random (seeded, so every run asks the same), the tool is asked the name from one of its
//!   use sites (`path` = the calling file). The right place is where rustc resolves that use:
//!   rustdoc's link-to-definition source pages ([`bench_code_rustdoc`](crate::bench_code_rustdoc)),
//!   not the index itself. Beside it, the whole-word `search_text` an assistant would otherwise
//!   run: how many candidate lines it returns for the name, and the bytes of each answer.
//! - **Warm latency** of `code_definition` and `code_references` (goal: p50 ≤ 50 ms), p50 and
//!   p99 over the same names, once the project's index is built.
//! - **Index build time and memory** for a 100k-line project (goal: ≤ 2 s, ≤ 100 MiB): the first
//!   `code_symbols` call of a fresh server on a project of real registry sources (whole files
//!   of well-known crates), and how much the server's resident memory grew (`/proc`).
//!
//! The same for a Python package (the `mcp` SDK from the bench's venv) and an npm package's
//! TypeScript sources (ajv's `lib/`), where the right place is what their real language servers
//! (pyright, typescript-language-server) answer over LSP ([`bench_code_lsp`](crate::bench_code_lsp)).
//! A code base whose ground truth cannot be had is reported as not measured, with the reason.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::bench_code_lsp::{self as lsp, Server};
use crate::bench_code_rustdoc::{self as rustdoc, Site};
use crate::bench_util::{call, full_token, loadavg, output, proc_status_kib, sluice, start};

/// The heading of this section in docs/BENCHMARKS.md.
pub const HEADING: &str = "## Code intelligence, release `sluice serve`";

/// The crate whose definitions are checked: big, well known, and documentable offline with
/// what the registry cache holds (its dependencies are the workspace's own).
const RUST_CRATE: &str = "regex-automata";
/// The crates whose sources, whole files in order, make the 100k-line project.
const LINES_CRATES: &[&str] = &["regex-automata", "regex-syntax", "serde_json", "syn", "tokio"];
const LINES: usize = 100_000;
const SYMBOLS: usize = 50;
/// Issue 32 asked for these figures; its number seeds the sample.
const SEED: u64 = 32;
const LATENCY_ROUNDS: usize = 4;
const BUILD_ROUNDS: usize = 3;

/// A code base and the use sites (with their ground truth) sampled from it.
pub(crate) struct CodeBase {
    /// What it is, for the table: `regex-automata 0.4.19 (Rust, crates.io)`.
    pub(crate) label: String,
    pub(crate) dir: PathBuf,
    /// The files `search_text` is limited to (`*.rs`), as an assistant would.
    pub(crate) include: Vec<String>,
    pub(crate) sites: Vec<Site>,
}

/// One use site asked to both tools.
struct Asked {
    first_right: bool,
    right_at: Option<usize>,
    definitions: usize,
    definition_bytes: usize,
    candidates: usize,
    candidates_capped: bool,
    search_has_definition: bool,
    search_bytes: usize,
    /// When the first answer is not right: the use, the right place and what came first.
    miss: Option<String>,
}

/// Runs the section and returns its markdown.
pub fn run(root: &Path, bin: &Path, work: &Path) -> Result<String> {
    let registry = crate::bench_util::cargo_registry_src().context("no cargo registry sources")?;
    let load_before = loadavg();
    let mut bases = vec![rust_code_base(&registry, work)?];
    let mut unmeasured = Vec::new();
    for which in [Server::Pyright, Server::TypeScript] {
        match lsp_code_base(root, work, which) {
            Ok(base) => bases.push(base),
            Err(e) => unmeasured.push(format!("{which:?}: {e:#}")),
        }
    }
    let lines_dir = work.join("code/lines100k");
    let (crates, files, lines) = lines_project(&registry, &lines_dir)?;

    let data = work.join("code-data");
    let names: Vec<String> = (0..bases.len()).map(|i| format!("code{i}")).collect();
    for (base, name) in bases.iter().zip(&names) {
        output(sluice(bin, &data).args(["project", "add"]).arg(&base.dir).args(["--name", name]))?;
    }
    output(sluice(bin, &data).args(["project", "add"]).arg(&lines_dir).args(["--name", "lines"]))?;
    let token = full_token(bin, &data, "bench-code")?;

    let build = index_build(bin, &data, &token)?;
    let (serve, _) = start(bin, &data)?;
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let mut md = format!(
        "{HEADING}\n\n`cargo xtask bench code` (also part of `cargo xtask bench`). The tools are \
         called over loopback HTTP, one connection per call, as raw JSON-RPC; bytes are those of \
         each answer's JSON (its structured content). This machine: {cores} cores; load \
         average (1 min) at the start: {load_before}.\n\n### Does code_definition land on the right place?\n\n"
    );
    md.push_str(&format!(
        "{SYMBOLS} symbols per code base, chosen at random (seed {SEED}): distinct definitions, \
         each asked from one of its uses, chosen at random too (`name` as written there, `path` \
         = the file of the use). Right = the file and line span of the answer hold the line \
         where the language's own resolver puts the definition. `search_text` is the \
         whole-word search for the same name (`\\bname\\b`, case-sensitive, only the code base's \
         source files, up to 2000 matches): every matching line is a candidate the assistant \
         must read or open.\n\n\
         | code base | code_definition: first answer right | right among its answers | \
         answers, median (max) | bytes, median (max) | search_text: candidates, median (max) | \
         holds the definition line | bytes, median (max) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n"
    ));
    let (mut latency, mut details) = (String::new(), String::new());
    let samples: Vec<Vec<Site>> = bases.iter().map(|b| sample(&b.sites, SYMBOLS, SEED)).collect();
    for ((base, project), sites) in bases.iter().zip(&names).zip(&samples) {
        let asked = sites
            .iter()
            .map(|s| ask(serve.port, &token, project, base, s))
            .collect::<Result<Vec<_>>>()?;
        md.push_str(&precision_row(&base.label, &asked));
        details.push_str(&misses(&base.label, &asked));
        latency.push_str(&latency_row(serve.port, &token, project, &base.label, sites)?);
    }
    // The Rust sample again, in its crate's copy inside the 100k-line project.
    let rust = bases.first().and_then(|b| b.dir.file_name()).context("the Rust crate")?;
    let inside: Vec<Site> = samples
        .first()
        .into_iter()
        .flatten()
        .map(|s| Site { path: format!("{}/{}", rust.to_string_lossy(), s.path), ..s.clone() })
        .collect();
    let label = format!("the {lines}-line project below");
    latency.push_str(&latency_row(serve.port, &token, "lines", &label, &inside)?);
    drop(serve);
    md.push_str(&format!(
        "\nRust ground truth: rustdoc `--generate-link-to-definition` (nightly flag, \
         `RUSTC_BOOTSTRAP=1`) on a copy of the crate whose manifest lost its dev-dependencies \
         and test targets (so it documents offline), keeping the uses it links to an item \
         declared in the crate (`fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, \
         `mod`, `macro_rules!`; not locals, fields or variants). {}\n\n{details}",
        not_measured_note(&unmeasured)
    ));
    md.push_str(&format!(
        "### Warm latency\n\nThe same {SYMBOLS} names, {LATENCY_ROUNDS} rounds, after the calls \
         above built each index: `code_definition` with the use's file, `code_references` of \
         the name over the whole project (default bound: 100 references). Goal: p50 ≤ 50 \
         ms.\n\n| project | code_definition p50 (ms) | p99 (ms) | code_references p50 (ms) \
         | p99 (ms) | calls each |\n|---|---:|---:|---:|---:|---:|\n{latency}\n"
    ));
    md.push_str(&build_part(&build, &crates, files, lines));
    md.push_str(&format!("\nLoad average (1 min) at the end: {}.\n", loadavg()));
    Ok(md)
}

/// The Rust code base: a copy of the registry's [`RUST_CRATE`], its ground truth from rustdoc.
fn rust_code_base(registry: &Path, work: &Path) -> Result<CodeBase> {
    let src = newest_crate(registry, RUST_CRATE)?;
    let version = src.file_name().and_then(|n| n.to_str()).unwrap_or(RUST_CRATE).to_owned();
    let dir = work.join("code").join(&version);
    copy_tree(&src, &dir, &|_| true)?;
    rustdoc::prepare(&dir)?;
    let sites = rustdoc::sites(&dir, &work.join("code-rustdoc-target"))?;
    // The documentation build leaves its lock file: not the crate's, and not code.
    let _ = std::fs::remove_file(dir.join("Cargo.lock"));
    let (name, ver) = version.rsplit_once('-').unwrap_or((&version, "?"));
    Ok(CodeBase {
        label: format!("{name} {ver} (Rust, crates.io)"),
        dir,
        include: vec!["*.rs".into()],
        sites,
    })
}

/// The Python or TypeScript code base, its ground truth from the real language server: the
/// `mcp` package of the bench's venv, or the TypeScript sources of ajv (`lib/`, with a minimal
/// `tsconfig.json`) from `tests/node`.
fn lsp_code_base(root: &Path, work: &Path, server: Server) -> Result<CodeBase> {
    let node = crate::deps::node_env(root)?;
    let servers = crate::deps::language_servers(root)?;
    let (label, dir, include) = match server {
        Server::Pyright => {
            let python = crate::deps::python(root)?;
            let found = output(std::process::Command::new(&python).args([
                "-c",
                "import importlib.metadata as m, mcp, os; \
                 print(m.version('mcp')); print(os.path.dirname(mcp.__file__))",
            ]))?;
            let mut lines = found.lines();
            let (version, src) = lines.next().zip(lines.next()).context("the mcp package")?;
            let dir = work.join("code").join(format!("mcp-{version}"));
            copy_tree(Path::new(src), &dir.join("mcp"), &|p| {
                p.extension().is_some_and(|e| e == "py")
            })?;
            (format!("mcp {version} (Python, PyPI)"), dir, "*.py")
        }
        Server::TypeScript => {
            let package = root.join("tests/node/node_modules/ajv");
            let meta: Value =
                serde_json::from_str(&std::fs::read_to_string(package.join("package.json"))?)?;
            let version = meta["version"].as_str().context("ajv's version")?;
            let dir = work.join("code").join(format!("ajv-{version}"));
            copy_tree(&package.join("lib"), &dir.join("lib"), &|p| {
                p.extension().is_some_and(|e| e == "ts")
            })?;
            std::fs::write(
                dir.join("tsconfig.json"),
                r#"{"compilerOptions": {"strict": true, "target": "es2019", "module": "commonjs",
  "moduleResolution": "node", "resolveJsonModule": true, "noEmit": true}, "include": ["lib"]}
"#,
            )?;
            (format!("ajv {version} `lib/` (TypeScript, npm)"), dir, "*.ts")
        }
    };
    let sites = lsp::sites(server, &node, &servers, &dir, SEED)?;
    Ok(CodeBase { label, dir, include: vec![include.into()], sites })
}

fn not_measured_note(unmeasured: &[String]) -> String {
    let mut note = "Python and TypeScript ground truth: the real language server (pyright, \
                    typescript-language-server) run by the bench and asked over LSP with Sluice's \
                    client; once it has opened and checked every file, uses drawn at random from \
                    the code base's identifiers, kept when the \
                    server puts their definition on another line that declares an item of that \
                    name (`def`, `class`; `function`, `class`, `interface`, `type`, `enum`, a \
                    method, a top-level `const`), the first use of each of the first 50 such \
                    definitions."
        .to_owned();
    for why in unmeasured {
        note.push_str(&format!(
            "\n\n**Not measured: {why}.** No figure is given rather than one \
                                checked against the index itself."
        ));
    }
    note
}

/// The registry's copy of `name` with the highest version.
fn newest_crate(registry: &Path, name: &str) -> Result<PathBuf> {
    let prefix = format!("{name}-");
    let mut found: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(registry)?
        .flatten()
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let version = file.strip_prefix(&prefix)?;
            // `1.0.154`; another crate's name (`tokio-macros-2.5.0`) gives no number.
            let parts: Vec<u64> =
                version.split(['.', '+', '-']).map_while(|p| p.parse().ok()).collect();
            Some((parts, e.path()))
        })
        .filter(|(v, _)| !v.is_empty())
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p).with_context(|| format!("{name} is not in {}", registry.display()))
}

/// Copies the files under `from` that `keep` accepts to `to`, in sorted order; returns them.
fn copy_tree(from: &Path, to: &Path, keep: &dyn Fn(&Path) -> bool) -> Result<Vec<PathBuf>> {
    let mut entries: Vec<_> = std::fs::read_dir(from)?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    let mut copied = Vec::new();
    for entry in entries {
        let (path, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copied.extend(copy_tree(&path, &dest, keep)?);
        } else if kind.is_file() && keep(&path) {
            std::fs::create_dir_all(to)?;
            std::fs::copy(&path, &dest)?;
            copied.push(dest);
        }
    }
    Ok(copied)
}

/// The 100k-line project: the `.rs` files of [`LINES_CRATES`], whole, in order, until they
/// hold [`LINES`] lines. The crates it took files of, its file count and line count.
fn lines_project(registry: &Path, dir: &Path) -> Result<(Vec<String>, usize, usize)> {
    let (mut crates, mut files, mut lines) = (Vec::new(), 0, 0);
    for name in LINES_CRATES {
        let src = newest_crate(registry, name)?;
        let Some(base) = src.file_name() else { continue };
        let counted = std::cell::Cell::new(0usize);
        let copied = copy_tree(&src, &dir.join(base), &|p| {
            let rs = p.extension().is_some_and(|e| e == "rs");
            if !rs || lines + counted.get() >= LINES {
                return false;
            }
            let n = std::fs::read(p).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
            counted.set(counted.get() + n);
            true
        })?;
        files += copied.len();
        lines += counted.get();
        crates.push(base.to_string_lossy().into_owned());
        if lines >= LINES {
            return Ok((crates, files, lines));
        }
    }
    bail!("the crates {LINES_CRATES:?} hold only {lines} lines of Rust")
}

/// `n` distinct definitions from `sites`, each with one of its uses, chosen with a seeded
/// generator (so every run asks the same).
fn sample(sites: &[Site], n: usize, seed: u64) -> Vec<Site> {
    let mut rng = crate::bench_util::SplitMix(seed);
    let mut defs = rustdoc::definitions(sites);
    // Fisher–Yates, then the first n.
    for i in (1..defs.len()).rev() {
        defs.swap(i, rng.below(i + 1));
    }
    defs.truncate(n);
    defs.iter()
        .filter_map(|(path, line)| {
            let uses: Vec<&Site> =
                sites.iter().filter(|s| &s.def_path == path && s.def_line == *line).collect();
            uses.get(rng.below(uses.len())).map(|s| (*s).clone())
        })
        .collect()
}

fn bytes(v: &Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}

/// Asks `code_definition` and `search_text` about one use site.
fn ask(port: u16, token: &str, project: &str, base: &CodeBase, site: &Site) -> Result<Asked> {
    let def = call(
        port,
        token,
        "code_definition",
        &json!({"project": project, "name": site.name, "path": site.path}),
    )?;
    let answers = def["definitions"].as_array().context("definitions")?;
    let right = |d: &Value| {
        let (line, end) = (d["line"].as_u64(), d["end_line"].as_u64());
        d["path"].as_str() == Some(site.def_path.as_str())
            && line.zip(end).is_some_and(|(l, e)| l <= site.def_line && site.def_line <= e)
    };
    let right_at = answers.iter().position(right);
    let search = call(
        port,
        token,
        "search_text",
        &json!({"project": project, "pattern": format!(r"\b{}\b", site.name),
                "case": "sensitive", "include": base.include, "max_results": 2000,
                "max_matches_per_file": 2000, "timeout_ms": 60000}),
    )?;
    let matches = search["matches"].as_array().context("matches")?;
    let miss = (right_at != Some(0)).then(|| {
        let answered = match (answers.first(), right_at) {
            (None, _) => "no answer".to_owned(),
            (Some(d), k) => format!(
                "first answer {}:{}, {}",
                d["path"].as_str().unwrap_or("?"),
                d["line"],
                k.map_or("the right one not among them".into(), |k| format!(
                    "the right one {} of {}",
                    k + 1,
                    answers.len()
                ))
            ),
        };
        format!(
            "`{}` used at {}:{}, defined at {}:{}; {answered}",
            site.name, site.path, site.line, site.def_path, site.def_line
        )
    });
    Ok(Asked {
        miss,
        first_right: right_at == Some(0),
        right_at,
        definitions: answers.len(),
        definition_bytes: bytes(&def),
        candidates: matches.len(),
        candidates_capped: search["truncated"] == json!(true),
        search_has_definition: matches.iter().any(|m| {
            m["path"].as_str() == Some(site.def_path.as_str())
                && m["line"].as_u64() == Some(site.def_line)
        }),
        search_bytes: bytes(&search),
    })
}

/// Median and maximum.
fn med_max(mut v: Vec<usize>) -> String {
    v.sort_unstable();
    match (v.get(v.len() / 2), v.last()) {
        (Some(m), Some(x)) => format!("{m} ({x})"),
        _ => "–".into(),
    }
}

/// The bytes of all the answers together, and each use whose first answer was not right.
fn misses(label: &str, asked: &[Asked]) -> String {
    let kib = |f: &dyn Fn(&Asked) -> usize| asked.iter().map(f).sum::<usize>() as f64 / 1024.0;
    let mut md = format!(
        "{label}: the {} answers together, code_definition {:.1} KiB, search_text {:.1} KiB.",
        asked.len(),
        kib(&|a| a.definition_bytes),
        kib(&|a| a.search_bytes)
    );
    let missed: Vec<&String> = asked.iter().filter_map(|a| a.miss.as_ref()).collect();
    if !missed.is_empty() {
        md.push_str(" First answer not right:\n");
    }
    md.push('\n');
    for m in missed {
        md.push_str(&format!("- {m}\n"));
    }
    md.push('\n');
    md
}

fn precision_row(label: &str, asked: &[Asked]) -> String {
    let n = asked.len();
    let count = |f: &dyn Fn(&Asked) -> bool| asked.iter().filter(|a| f(a)).count();
    let capped = count(&|a| a.candidates_capped);
    format!(
        "| {label} | **{}/{n}** | {}/{n} | {} | {} | {}{} | {}/{n} | {} |\n",
        count(&|a| a.first_right),
        count(&|a| a.right_at.is_some()),
        med_max(asked.iter().map(|a| a.definitions).collect()),
        med_max(asked.iter().map(|a| a.definition_bytes).collect()),
        med_max(asked.iter().map(|a| a.candidates).collect()),
        if capped > 0 { format!(", {capped} capped") } else { String::new() },
        count(&|a| a.search_has_definition),
        med_max(asked.iter().map(|a| a.search_bytes).collect()),
    )
}

/// p50 and p99 of `code_definition` and `code_references` over `sites`' names.
fn latency_row(
    port: u16,
    token: &str,
    project: &str,
    label: &str,
    sites: &[Site],
) -> Result<String> {
    let (mut defs, mut refs) = (Vec::new(), Vec::new());
    // One unmeasured pass: the index is built, the files are read once.
    for round in 0..=LATENCY_ROUNDS {
        for site in sites {
            let def = json!({"project": project, "name": site.name, "path": site.path});
            let t0 = Instant::now();
            call(port, token, "code_definition", &def)?;
            let d = t0.elapsed();
            let t0 = Instant::now();
            call(port, token, "code_references", &json!({"project": project, "name": site.name}))?;
            let r = t0.elapsed();
            if round > 0 {
                defs.push(d);
                refs.push(r);
            }
        }
    }
    let n = defs.len();
    let (d50, d99) = p50_p99(defs);
    let (r50, r99) = p50_p99(refs);
    Ok(format!("| {label} | {d50} | {d99} | {r50} | {r99} | {n} |\n"))
}

fn p50_p99(mut v: Vec<Duration>) -> (String, String) {
    v.sort();
    let at = |q: usize| {
        let i = (v.len() * q).div_ceil(100).saturating_sub(1).min(v.len().saturating_sub(1));
        v.get(i).map_or("–".into(), |d| format!("{:.1}", d.as_secs_f64() * 1e3))
    };
    (at(50), at(99))
}

/// One fresh server's first `code_symbols` on the 100k-line project.
struct Build {
    took: Duration,
    second: Duration,
    rss_before_kib: u64,
    rss_after_kib: u64,
    peak_kib: u64,
    files_indexed: u64,
}

/// [`BUILD_ROUNDS`] fresh servers, each: a warm-up call on another project (so the HTTP path
/// and the allocator are not counted), then the timed cold `code_symbols` on the big one.
fn index_build(bin: &Path, data: &Path, token: &str) -> Result<Vec<Build>> {
    let mut builds = Vec::new();
    for _ in 0..BUILD_ROUNDS {
        let (serve, _) = start(bin, data)?;
        let pid = serve.child.id();
        let warm = json!({"project": "lines", "pattern": "fn main", "max_results": 1});
        call(serve.port, token, "search_text", &warm)?;
        let rss_before_kib = proc_status_kib(pid, "VmRSS")?;
        let query = json!({"project": "lines", "query": "new", "max_results": 10});
        let t0 = Instant::now();
        let out = call(serve.port, token, "code_symbols", &query)?;
        let took = t0.elapsed();
        let rss_after_kib = proc_status_kib(pid, "VmRSS")?;
        let peak_kib = proc_status_kib(pid, "VmHWM")?;
        let t0 = Instant::now();
        call(serve.port, token, "code_symbols", &query)?;
        let second = t0.elapsed();
        builds.push(Build {
            took,
            second,
            rss_before_kib,
            rss_after_kib,
            peak_kib,
            files_indexed: out["files_indexed"].as_u64().unwrap_or(0),
        });
    }
    Ok(builds)
}

fn build_part(builds: &[Build], crates: &[String], files: usize, lines: usize) -> String {
    let ms = |d: Duration| format!("{:.0}", d.as_secs_f64() * 1e3);
    let mib = |k: u64| format!("{:.1}", k as f64 / 1024.0);
    let mut md = format!(
        "### Index build, {lines}-line project\n\n{files} `.rs` files of {}, copied whole \
         from the registry until they hold {LINES} lines. Each round is a fresh `sluice serve`: \
         one `search_text` call first (so the HTTP path is warm and the files are in the page \
         cache), then the first `code_symbols` call, which builds the project's index (goal: ≤ 2 \
         s), and the server's resident memory before and after it (goal: growth ≤ 100 \
         MiB).\n\n| round | first code_symbols (ms) | second (ms) | files indexed | RSS \
         before (MiB) | after (MiB) | growth (MiB) | peak RSS (MiB) |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
        crates.join(", ")
    );
    for (i, b) in builds.iter().enumerate() {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | **{}** | {} |\n",
            i + 1,
            ms(b.took),
            ms(b.second),
            b.files_indexed,
            mib(b.rss_before_kib),
            mib(b.rss_after_kib),
            mib(b.rss_after_kib.saturating_sub(b.rss_before_kib)),
            mib(b.peak_kib),
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(name: &str, path: &str, def_line: u64) -> Site {
        Site {
            name: name.into(),
            path: path.into(),
            line: 1,
            def_path: "src/lib.rs".into(),
            def_line,
        }
    }

    #[test]
    fn the_sample_is_the_same_every_run_and_each_definition_once() {
        let sites: Vec<Site> = (0..200)
            .map(|i| site(&format!("n{}", i % 80), &format!("src/f{i}.rs"), i % 80 + 1))
            .collect();
        let a = sample(&sites, 50, SEED);
        assert_eq!(a, sample(&sites, 50, SEED));
        assert_eq!(a.len(), 50);
        let defs: std::collections::HashSet<u64> = a.iter().map(|s| s.def_line).collect();
        assert_eq!(defs.len(), 50);
        assert_ne!(a, sample(&sites, 50, SEED + 1));
        assert_eq!(sample(&sites[..3], 50, SEED).len(), 3);
        assert!(sample(&[], 50, SEED).is_empty());
    }

    #[test]
    fn percentiles_and_medians_of_few_or_none() {
        let ms = |v: &[u64]| v.iter().map(|&m| Duration::from_millis(m)).collect::<Vec<_>>();
        assert_eq!(p50_p99(ms(&[3, 1, 2])), ("2.0".into(), "3.0".into()));
        assert_eq!(p50_p99(Vec::new()), ("–".into(), "–".into()));
        assert_eq!(med_max(vec![5, 1, 9]), "5 (9)");
        assert_eq!(med_max(Vec::new()), "–");
    }
}
