//! `search_text` beside ripgrep (`rg`), on the cargo registry sources of this machine, in one
//! run: `cargo xtask bench search [--profile <cargo profile>] [--before <sluice binary>]` alone,
//! and as a section of `cargo xtask bench`.
//!
//! Each pattern is the same job for both: the same case rule (`-s` / `-i` and `case`), a fixed
//! string as `-F` and `literal`, a glob as `-g` and `include`, hidden files searched, every
//! `.gitignore` honoured (`--no-require-git`: Sluice honours them without a `.git` folder, and
//! the registry's crates have none), no size limit that bites (`max_file_size` at its maximum),
//! and no cap: `max_results` and `max_matches_per_file` at their maximum, and a pattern whose
//! answer is capped is flagged in the table, since it stops early. The hits are compared as sets
//! of (path, line), not only counted.
//!
//! Timing: `search_text` is one MCP 2026-07-28 `tools/call` over plain HTTP (a new connection,
//! the standard headers and `_meta`), from the request written to the last byte of the answer
//! read; `rg` is its process, from spawn to exit with all its output read. Neither side's
//! parsing of the answer is timed. The official Python MCP client's time for the same call
//! (warm) is shown beside it, which adds that client's own work (validation of the result).
//!
//! Warm: after a warm-up run of each, the sides take turns. Cold: the page cache, dentries and
//! inodes are dropped (`echo 3 > /proc/sys/vm/drop_caches`, as root) before each timed run of
//! each side; `rg --version` then runs once, so rg's own binary is read back as the running
//! server's already is, and only the searched tree is cold.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::bench_util::{full_token, loadavg, output, sluice, start};

pub(crate) const HEADING: &str = "## search_text beside ripgrep";

const WARM_RUNS: usize = 7;
const COLD_RUNS: usize = 3;
/// `search_text`'s ceilings: nothing the registry holds reaches them for these patterns.
const MAX_RESULTS: u32 = 2000;
const MAX_FILE_SIZE: u64 = 256 * 1024 * 1024;

/// One pattern of the bench, as both tools are asked for it.
struct Case {
    kind: &'static str,
    pattern: &'static str,
    literal: bool,
    insensitive: bool,
    glob: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        kind: "literal",
        pattern: "serde_json::from_str",
        literal: true,
        insensitive: false,
        glob: None,
    },
    Case {
        kind: "regex",
        pattern: r"fn\s+deserialize_[a-z]+",
        literal: false,
        insensitive: false,
        glob: None,
    },
    Case {
        kind: "case-insensitive",
        pattern: "deprecated since",
        literal: false,
        insensitive: true,
        glob: None,
    },
    Case {
        kind: "glob `*.toml`",
        pattern: r"^rust-version\s*=",
        literal: false,
        insensitive: false,
        glob: Some("*.toml"),
    },
];

impl Case {
    fn args(&self) -> Value {
        let mut args = json!({
            "project": "registry",
            "pattern": self.pattern,
            "literal": self.literal,
            "case": if self.insensitive { "insensitive" } else { "sensitive" },
            "include_hidden": true,
            "respect_gitignore": true,
            "max_results": MAX_RESULTS,
            "max_matches_per_file": MAX_RESULTS,
            "max_file_size": MAX_FILE_SIZE,
            "timeout_ms": 60000,
        });
        if let Some(glob) = self.glob {
            args["include"] = json!([glob]);
        }
        args
    }

    fn rg(&self, root: &Path) -> Command {
        let mut c = Command::new("rg");
        c.current_dir(root)
            .args(["--hidden", "--no-require-git", "--no-messages", "--no-heading"])
            .args(["--with-filename", "--null", "-n"])
            .arg(if self.insensitive { "-i" } else { "-s" });
        if self.literal {
            c.arg("-F");
        }
        if let Some(glob) = self.glob {
            c.args(["-g", glob]);
        }
        c.args(["-e", self.pattern]);
        c
    }

    fn rg_shown(&self) -> String {
        let mut s = format!("rg {}", if self.insensitive { "-i" } else { "-s" });
        if self.literal {
            s.push_str(" -F");
        }
        if let Some(glob) = self.glob {
            s.push_str(&format!(" -g '{glob}'"));
        }
        s
    }
}

/// What one side found: (path, line) pairs.
type Hits = BTreeSet<(String, u64)>;

/// One timed `search_text`: its wall time, its hits, and whether it was capped.
fn call_sluice(port: u16, token: &str, args: &Value) -> Result<(Duration, Hits, bool)> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "search_text", "arguments": args,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "xtask", "version": "1"},
            },
        },
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: search_text\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let t0 = Instant::now();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.write_all(request.as_bytes())?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply)?;
    let wall = t0.elapsed();

    let reply = String::from_utf8(reply).context("answer is not UTF-8")?;
    let (head, rest) = reply.split_once("\r\n\r\n").context("no HTTP head")?;
    if !head.starts_with("HTTP/1.1 200") {
        bail!("search_text: {head}\n{rest}");
    }
    let text = rest.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(rest);
    let v: Value = serde_json::from_str(text.trim()).context("search_text's answer")?;
    let out = &v["result"]["structuredContent"];
    if v["result"]["isError"] == json!(true) || !out.is_object() {
        bail!("search_text failed: {}", v["result"]);
    }
    let hits = out["matches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| (m["path"].as_str().unwrap_or("").to_owned(), m["line"].as_u64().unwrap_or(0)))
        .collect();
    Ok((wall, hits, out["truncated"] == json!(true)))
}

/// One timed `rg`: its wall time and its hits.
fn call_rg(case: &Case, root: &Path) -> Result<(Duration, Hits)> {
    let t0 = Instant::now();
    let out = case.rg(root).output().context("rg")?;
    let wall = t0.elapsed();
    // 0: found, 1: nothing found; 2: an error (with --no-messages, only a bad pattern).
    if out.status.code() == Some(2) {
        bail!("rg failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut hits = Hits::new();
    for line in out.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Some(nul) = line.iter().position(|b| *b == 0) else { continue };
        let path = String::from_utf8_lossy(&line[..nul]).into_owned();
        let rest = &line[nul + 1..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let number = std::str::from_utf8(&rest[..digits]).ok().and_then(|n| n.parse().ok());
        hits.insert((path, number.unwrap_or(0)));
    }
    Ok((wall, hits))
}

fn drop_caches() -> Result<()> {
    // `sync` first: dirty pages are not dropped.
    output(&mut Command::new("sync"))?;
    std::fs::write("/proc/sys/vm/drop_caches", "3\n")
        .context("dropping the page cache needs root (/proc/sys/vm/drop_caches)")?;
    // rg's binary and libraries back in the cache, as the running server's are.
    output(Command::new("rg").arg("--version"))?;
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

/// What the profile of the serving process showed, and what was done about it: the design the
/// figures above measure (December 2026; `crates/sluice-runner/src/search.rs` has the details).
const PROFILE: &str = "\nWhere the time goes (`perf record -g` on `sluice serve`, a frame-pointer \
    `run-release` build, answering the literal pattern warm): the search threads spend about 60% \
    in the kernel (opening, reading, closing files and listing folders) and the rest mostly in \
    the NUL check and the regex engine. Before, the search read each file through \
    grep-searcher's reader, three `read`s a file (a 3-byte peek for a byte-order mark, the \
    content, the end; the peek alone was 8% of the CPU time) with lines counted through every \
    buffer (about 4%), and every folder's listing copied its descriptor (`fcntl`, `openat`, \
    `close`). Now a file of up to 256 KiB is read in one `read` and searched as one slice \
    (lines counted only up to a match), a folder is listed through its own descriptor, and the \
    walk builds paths without formatting: per call, 0.57 s of CPU where it took 0.68 s, and \
    rg takes about 0.7 s. Cold, a thread mostly waits on the disk, so the search runs at least \
    8 threads whatever the cores (2 here): with the cache dropped, 8 threads take half the \
    time 2 took, where the cost warm is about 1%. The guarantees are the same: every file \
    opened through its folder's handle without following a link, shielded names never \
    opened, secrets in returned lines redacted, the caps and time budget kept.\n";

/// The figures of one pattern.
struct Row {
    warm: (Duration, Duration),
    cold: (Duration, Duration),
    /// The `--before` binary's warm and cold times.
    before: Option<(Duration, Duration)>,
    sdk_ms: Option<f64>,
    hits: usize,
    rg_hits: usize,
    same: bool,
    capped: bool,
}

/// Measures `bin` (built with `profile`) and, when given, `before` beside rg; `python` (the
/// official MCP client's interpreter) adds that client's warm time.
pub(crate) fn run(
    root: &Path,
    bin: &Path,
    profile: &str,
    before: Option<&Path>,
    python: Option<&Path>,
    work: &Path,
) -> Result<String> {
    let registry =
        crate::bench_util::cargo_registry_src().context("no cargo registry sources to search")?;
    // One engine serves a data folder: the earlier binary gets a folder (and token) of its own.
    let (data, token) = registry_project(bin, &work.join("search-data"), &registry)?;
    let (serve, _) = start(bin, &data)?;
    let earlier = match before {
        Some(before) => {
            let (data, token) = registry_project(before, &work.join("search-before"), &registry)?;
            Some((start(before, &data)?.0, token))
        }
        None => None,
    };
    let port = serve.port;
    let before_port = earlier.as_ref().map(|(s, token)| (s.port, token.as_str()));
    let files = crate::bench::count_files(&registry);

    let load_start = loadavg();
    let mut rows = Vec::new();
    for case in CASES {
        let args = case.args();
        // Warm-up, and the hits compared.
        let (_, hits, capped) = call_sluice(port, &token, &args)?;
        let (_, rg_hits) = call_rg(case, &registry)?;
        if let Some((b, before_token)) = before_port {
            call_sluice(b, before_token, &args)?;
        }
        let (mut warm_s, mut warm_r, mut warm_b) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..WARM_RUNS {
            // Alternate who goes first, so neither always runs just after the other.
            if i % 2 == 1 {
                warm_r.push(call_rg(case, &registry)?.0);
            }
            warm_s.push(call_sluice(port, &token, &args)?.0);
            if let Some((b, before_token)) = before_port {
                warm_b.push(call_sluice(b, before_token, &args)?.0);
            }
            if i % 2 == 0 {
                warm_r.push(call_rg(case, &registry)?.0);
            }
        }
        let (mut cold_s, mut cold_r, mut cold_b) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..COLD_RUNS {
            if i % 2 == 1 {
                drop_caches()?;
                cold_r.push(call_rg(case, &registry)?.0);
            }
            drop_caches()?;
            cold_s.push(call_sluice(port, &token, &args)?.0);
            if let Some((b, before_token)) = before_port {
                drop_caches()?;
                cold_b.push(call_sluice(b, before_token, &args)?.0);
            }
            if i % 2 == 0 {
                drop_caches()?;
                cold_r.push(call_rg(case, &registry)?.0);
            }
        }
        let before = (!warm_b.is_empty()).then(|| (median(warm_b), median(cold_b)));
        rows.push(Row {
            warm: (median(warm_s), median(warm_r)),
            cold: (median(cold_s), median(cold_r)),
            before,
            sdk_ms: None,
            same: hits == rg_hits,
            hits: hits.len(),
            rg_hits: rg_hits.len(),
            capped,
        });
    }
    if let Some(python) = python {
        for (case, row) in CASES.iter().zip(&mut rows) {
            row.sdk_ms = sdk_time(root, python, port, &token, case).ok();
        }
    }
    let load_end = loadavg();
    drop((serve, earlier));
    Ok(render(profile, files, before.is_some(), &rows, (&load_start, &load_end)))
}

/// A data folder at `data` with the registry as the project `registry`, and a full token.
fn registry_project(bin: &Path, data: &Path, registry: &Path) -> Result<(PathBuf, String)> {
    output(sluice(bin, data).args(["project", "add"]).arg(registry).args(["--name", "registry"]))?;
    Ok((data.to_owned(), full_token(bin, data, "search")?))
}

/// The official Python MCP client's median warm time for the case's call, in ms.
fn sdk_time(root: &Path, python: &Path, port: u16, token: &str, case: &Case) -> Result<f64> {
    let out = output(
        Command::new(python)
            .arg(root.join("tests/bench/search_bench.py"))
            .args(["--url", &format!("http://127.0.0.1:{port}/mcp"), "--runs"])
            .arg(WARM_RUNS.to_string())
            .arg("--args")
            .arg(case.args().to_string())
            .env("SLUICE_TOKEN", token),
    )?;
    let v: Value = serde_json::from_str(out.trim()).context("search_bench.py's answer")?;
    v["sdk_ms"].as_f64().context("sdk_ms")
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.2}×", a.as_secs_f64() / b.as_secs_f64())
}

fn render(
    profile: &str,
    files: usize,
    with_before: bool,
    rows: &[Row],
    load: (&str, &str),
) -> String {
    let mut md = format!("{HEADING}\n\n");
    md.push_str(&format!(
        "`cargo xtask bench search --profile {profile}` (also part of `cargo xtask bench`, with \
         the `release` build), `{profile}` build. Tree: the cargo registry sources ({files} \
         files). Each pattern asks both for the same job: the same case rule, hidden files \
         searched, every `.gitignore` honoured (`rg --no-require-git`), no size limit, no cap \
         (`max_results` and `max_matches_per_file` at 2000, above every count here). \
         **search_text's time is one MCP `tools/call` over HTTP as a client sees it**: request \
         written to the last byte of the answer read, over a new connection; rg's is its \
         process, spawn to exit with its output read. The ratio is search_text's time over \
         rg's. Warm: median of {WARM_RUNS} runs after a warm-up, the sides in turns. Cold: \
         median of {COLD_RUNS} runs, the page cache, dentries and inodes dropped before each \
         run of each side (`echo 3 > /proc/sys/vm/drop_caches`, then `rg --version` so rg's own \
         binary is cached as the running server's is). \"Same hits\": the sets of (path, line) \
         are equal. Load average (1 min) at the start and end: {} and {}; the machine has 2 \
         cores.\n\n",
        load.0, load.1
    ));
    md.push_str(
        "| pattern | rg flags | warm: search_text (ms) | warm: rg (ms) | warm ratio | cold: \
         search_text (ms) | cold: rg (ms) | cold ratio | hits (search_text / rg) | same hits |",
    );
    let mut rule = "\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|".to_owned();
    if with_before {
        md.push_str(" warm: before (ms) | cold: before (ms) |");
        rule.push_str("---:|---:|");
    }
    md.push_str(" Python SDK, warm (ms) |");
    rule.push_str("---:|\n");
    md.push_str(&rule);
    for (case, r) in CASES.iter().zip(rows) {
        md.push_str(&format!(
            "| {}: `{}` | `{}` | {} | {} | **{}** | {} | {} | **{}** | {}{} / {} | {} |",
            case.kind,
            case.pattern,
            case.rg_shown(),
            ms(r.warm.0),
            ms(r.warm.1),
            ratio(r.warm.0, r.warm.1),
            ms(r.cold.0),
            ms(r.cold.1),
            ratio(r.cold.0, r.cold.1),
            r.hits,
            if r.capped { " (capped)" } else { "" },
            r.rg_hits,
            if r.same { "yes" } else { "**no**" },
        ));
        if with_before {
            let (warm, cold) = r.before.map_or(("?".into(), "?".into()), |(w, c)| (ms(w), ms(c)));
            md.push_str(&format!(" {warm} | {cold} |"));
        }
        md.push_str(&format!(" {} |\n", r.sdk_ms.map_or("?".into(), |s| format!("{s:.1}"))));
    }
    if with_before {
        md.push_str(
            "\n\"before\" is the binary given with `--before` (a build from before the change \
             being measured), timed warm and cold in the same turns.\n",
        );
    }
    md.push_str(PROFILE);
    md.push_str(
        "\nThe Python SDK column is the same call through the official Python MCP client \
         (`tests/bench/search_bench.py`), warm, median of its own runs, taken after the table's: \
         it adds that client's own work on the answer (parsing and validating it).\n\n",
    );
    md
}
