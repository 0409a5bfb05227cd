//! Benchmarks beside their peers, in one run (filled in by the benchmark work).

use std::path::Path;

use anyhow::Result;

pub fn run(_root: &Path, _args: &[String]) -> Result<()> {
    anyhow::bail!("benchmarks are not wired yet")
}
