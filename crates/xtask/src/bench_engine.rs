//! `cargo xtask bench engine [--before <sluice binary>]`: the engine's start to ready and its
//! resident memory idle after a start, on the full bench's data folder (a small project and the
//! cargo registry sources as a second one), with an earlier build beside it in the same turns.
//! Each build gets a data folder of its own: an older build need not read a newer database.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::bench_util::{loadavg, output, proc_status_kib, sluice, start};

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
}

/// A data folder for `bin` under `data` with the full bench's two projects.
pub(crate) fn data_folder(bin: &Path, data: &Path, project: &Path) -> Result<()> {
    let registry =
        crate::bench_util::cargo_registry_src().context("no cargo registry sources to search")?;
    output(sluice(bin, data).args(["project", "add"]).arg(project).args(["--name", "bench"]))?;
    output(sluice(bin, data).args(["project", "add"]).arg(&registry).args(["--name", "registry"]))?;
    Ok(())
}

/// [`STARTS`] starts of each build, the builds taking turns, then the resident memory of one
/// more start of each, read as soon as it is ready.
pub(crate) fn measure(builds: &[(&Path, &Path)]) -> Result<Vec<Figures>> {
    let mut starts = vec![Vec::with_capacity(STARTS); builds.len()];
    for _ in 0..STARTS {
        for ((bin, data), times) in builds.iter().zip(&mut starts) {
            times.push(start(bin, data)?.1);
        }
    }
    builds
        .iter()
        .zip(starts)
        .map(|((bin, data), mut times)| {
            times.sort();
            let (serve, _) = start(bin, data)?;
            let idle_kib = proc_status_kib(serve.child.id(), "VmRSS")?;
            let anon_kib = proc_status_kib(serve.child.id(), "RssAnon")?;
            Ok(Figures { ready: times[times.len() / 2], idle_kib, anon_kib })
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
    for (_, bin, data) in &builds {
        data_folder(bin, data, &project)?;
    }
    let load = loadavg();
    let pairs: Vec<(&Path, &Path)> =
        builds.iter().map(|(_, b, d)| (b.as_path(), d.as_path())).collect();
    let figures = measure(&pairs)?;
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
         ready. Each build runs from a copy made by the bench, so that its pages come into the \
         page cache the same way (that alone moves the figure by megabytes). Load average (1 min) at the start and end: {load} and {}.\n\n\
         | build | start to ready (ms) | resident memory, idle after start (MiB) | of it \
         anonymous (MiB) |\n|---|---:|---:|---:|\n",
        loadavg()
    );
    for (name, f) in rows {
        md.push_str(&format!(
            "| {name} | {:.1} | {:.1} | {:.1} |\n",
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
