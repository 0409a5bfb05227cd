//! `cargo xtask bench engine [--before <sluice binary>]`: the engine's start to ready and its
//! resident memory idle after a start, on the full bench's data folder (a small project and the
//! cargo registry sources as a second one), with an earlier build beside it in the same turns.
//! Each build gets a data folder of its own: an older build need not read a newer database.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;

use crate::bench_util::{full_token, loadavg, output, proc_status_kib, sluice, start, token_in};
use crate::mcp_http::Client;

pub(crate) const HEADING: &str = "## Engine";

/// Starts measured per build; the figure is their median.
const STARTS: usize = 20;

/// Start to ready and idle memory of one build on `data`.
pub(crate) struct Figures {
    pub(crate) ready: Duration,
    pub(crate) idle_kib: u64,
    /// The part of it that is anonymous (heap, stacks): the rest is the binary's and the
    /// libraries' pages, shared with the page cache.
    pub(crate) anon_kib: u64,
    /// The first `tools/list` after that (time, then resident memory once it answered), when
    /// the build was given a token and answered it: a start builds no tool list until then.
    pub(crate) first_list: Option<(Duration, u64)>,
}

/// A data folder for `bin` under `data` with the full bench's two projects; returns a token.
pub(crate) fn data_folder(bin: &Path, data: &Path, project: &Path) -> Result<String> {
    let registry =
        crate::bench_util::cargo_registry_src().context("no cargo registry sources to search")?;
    output(sluice(bin, data).args(["project", "add"]).arg(project).args(["--name", "bench"]))?;
    output(sluice(bin, data).args(["project", "add"]).arg(&registry).args(["--name", "registry"]))?;
    // Builds from before token profiles gave every token every tool, and take no `--profile`.
    full_token(bin, data, "bench").or_else(|_| {
        token_in(&output(sluice(bin, data).args(["token", "create", "--label", "bench"]))?)
    })
}

/// One build to measure: its binary, its data folder and, to time a first `tools/list`, a
/// token of that folder.
pub(crate) type Build<'a> = (&'a Path, &'a Path, Option<&'a str>);

/// [`STARTS`] starts of each build, the builds taking turns, then the resident memory of one
/// more start of each, read as soon as it is ready, and again after its first `tools/list`.
pub(crate) fn measure(builds: &[Build]) -> Result<Vec<Figures>> {
    let mut starts = vec![Vec::with_capacity(STARTS); builds.len()];
    for _ in 0..STARTS {
        for ((bin, data, _), times) in builds.iter().zip(&mut starts) {
            times.push(start(bin, data)?.1);
        }
    }
    builds
        .iter()
        .zip(starts)
        .map(|((bin, data, token), mut times)| {
            times.sort();
            let (serve, _) = start(bin, data)?;
            let pid = serve.child.id();
            let idle_kib = proc_status_kib(pid, "VmRSS")?;
            let anon_kib = proc_status_kib(pid, "RssAnon")?;
            let first_list = match token {
                Some(token) => {
                    let t0 = Instant::now();
                    let listed = Client::new(serve.port, token).request("tools/list", json!({}));
                    let took = t0.elapsed();
                    let listed = listed.is_ok_and(|r| {
                        r.status == 200
                            && r.body["result"]["tools"].as_array().is_some_and(|t| !t.is_empty())
                    });
                    if listed { Some((took, proc_status_kib(pid, "VmRSS")?)) } else { None }
                }
                None => None,
            };
            Ok(Figures { ready: times[times.len() / 2], idle_kib, anon_kib, first_list })
        })
        .collect()
}

/// The section alone: this build and `before`, if given.
pub(crate) fn run(bin: &Path, profile: &str, before: Option<&Path>, work: &Path) -> Result<String> {
    let project = work.join("engine-project");
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join("file4k.txt"), "x".repeat(4096))?;
    // Each build runs from a copy made here, the same way: how a binary's pages came into the
    // page cache (written by the linker, copied, read from disk) changes how much of it a start
    // maps, by megabytes for the same file.
    let mut builds =
        vec![("sluice", copy(bin, &work.join("sluice-now"))?, work.join("engine-data"))];
    if let Some(before) = before {
        let copied = copy(before, &work.join("sluice-before"))?;
        builds.push(("sluice, before", copied, work.join("engine-data-before")));
    }
    let tokens: Vec<String> = builds
        .iter()
        .map(|(_, bin, data)| data_folder(bin, data, &project))
        .collect::<Result<_>>()?;
    let load = loadavg();
    let measured: Vec<Build> = builds
        .iter()
        .zip(&tokens)
        .map(|((_, b, d), t)| (b.as_path(), d.as_path(), Some(t.as_str())))
        .collect();
    let figures = measure(&measured)?;
    let rows: Vec<(&str, &Figures)> = builds.iter().map(|b| b.0).zip(&figures).collect();
    let mut md = section(profile, &rows, &load, None);
    if before.is_some() {
        md.push_str(
            "\"sluice, before\" is the binary given with `--before`, on a data folder of its \
             own made the same way.\n\n",
        );
    }
    Ok(md)
}

/// `bin` copied to `to` (see [`run`] for why the bench measures copies).
pub(crate) fn copy(bin: &Path, to: &Path) -> Result<PathBuf> {
    std::fs::copy(bin, to).with_context(|| format!("copying {}", bin.display()))?;
    Ok(to.to_path_buf())
}

/// The section's text; `after_read` is the idle memory after the full bench's read benchmark.
pub(crate) fn section(
    profile: &str,
    rows: &[(&str, &Figures)],
    load: &str,
    after_read: Option<u64>,
) -> String {
    let mut md = format!(
        "{HEADING}\n\n`cargo xtask bench engine` (also part of `cargo xtask bench`), `{profile}` \
         builds. The data folder has two projects, a small one and the cargo registry sources. \
         Start to ready is `sluice serve` spawned to its \"serving\" line, the median of \
         {STARTS} starts, builds in turns; resident memory is read as soon as a start is \
         ready, and again after the first `tools/list` (one call over a new connection, timed \
         from connect to answer). Each build runs from a copy made by the bench, so that its \
         pages come into the page cache the same way (that alone moves the figure by \
         megabytes). Load average (1 min) at the start and end: {load} and {}.\n\n\
         | build | start to ready (ms) | resident memory, idle after start (MiB) | of it \
         anonymous (MiB) | first `tools/list` (ms) | resident memory after it (MiB) |\n\
         |---|---:|---:|---:|---:|---:|\n",
        loadavg()
    );
    for (name, f) in rows {
        let (list, listed) = match f.first_list {
            Some((took, kib)) => {
                (format!("{:.1}", took.as_secs_f64() * 1e3), format!("{:.1}", kib as f64 / 1024.0))
            }
            None => ("—".to_owned(), "—".to_owned()),
        };
        md.push_str(&format!(
            "| {name} | {:.1} | {:.1} | {:.1} | {list} | {listed} |\n",
            f.ready.as_secs_f64() * 1e3,
            f.idle_kib as f64 / 1024.0,
            f.anon_kib as f64 / 1024.0
        ));
    }
    if let Some(kib) = after_read {
        md.push_str(&format!(
            "\nResident memory idle after the read benchmark: {:.1} MiB.\n",
            kib as f64 / 1024.0
        ));
    }
    md.push('\n');
    md
}
