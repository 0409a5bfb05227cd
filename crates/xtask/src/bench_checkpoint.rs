//! `cargo xtask bench checkpoint`: checkpoints of a 10k-file project with the release `sluice`
//! CLI (`sluice checkpoint create|restore`, the same engine code an assistant's tools and the
//! checkpoint before a command run). Measures a checkpoint after 20 files changed (time inside
//! the engine, as the command reports it, and the disk the checkpoint store grew by), the first
//! checkpoint of the tree, and restoring a checkpoint 20 files away (the command's wall time,
//! beside that of `sluice checkpoint list` on the same data: the process start and the engine
//! opening its database, which both include).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::bench_util::{loadavg, median_p95, ms, output, sluice};

pub(crate) const HEADING: &str = "## Checkpoints, release `sluice` CLI";

const DIRS: usize = 100;
const FILES_PER_DIR: usize = 100;
const CHANGED: usize = 20;
const ROUNDS: usize = 7;

/// Bytes of every file below `dir` (apparent size).
fn disk_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        total += if meta.is_dir() { disk_bytes(&entry.path()) } else { meta.len() };
    }
    total
}

fn file_content(dir: usize, file: usize, round: usize) -> String {
    let line = format!("// d{dir} f{file} round {round}: {}\n", "x".repeat(60));
    line.repeat(24) // about 2.2 KiB
}

fn json(out: &str) -> Result<serde_json::Value> {
    serde_json::from_str(out).context("a JSON answer")
}

pub fn run(bin: &Path, work: &Path) -> Result<String> {
    let data = work.join("ckpt-data");
    let project = work.join("ckpt-project");
    for d in 0..DIRS {
        let dir = project.join(format!("src/m{d:03}"));
        std::fs::create_dir_all(&dir)?;
        for f in 0..FILES_PER_DIR {
            std::fs::write(dir.join(format!("f{f:03}.rs")), file_content(d, f, 0))?;
        }
    }
    std::fs::write(project.join(".gitignore"), "target/\n")?;
    output(sluice(bin, &data).args(["project", "add"]).arg(&project).args([
        "--name",
        "ckpt",
        "--access",
        "read-write",
    ]))?;
    let listed = json(&output(sluice(bin, &data).args(["project", "list", "--json"]))?)?;
    let id = listed[0]["id"].as_str().context("project id")?.to_owned();
    let store = data.join("projects").join(&id).join("checkpoints");
    // Files written within two seconds of a checkpoint are read again by the next one (their
    // ctime could hide a change in the same clock tick); a real project's files are older.
    std::thread::sleep(Duration::from_millis(2_500));
    let load_before = loadavg();
    let create = || -> Result<serde_json::Value> {
        json(&output(sluice(bin, &data).args(["checkpoint", "create", "ckpt", "--json"]))?)
    };
    let first = create()?;
    let first_bytes = disk_bytes(&store);

    let mut took = Vec::new();
    let mut added = Vec::new();
    let mut changed_bytes = Vec::new();
    let mut ids = vec![first["checkpoint_id"].as_str().context("id")?.to_owned()];
    for round in 1..=ROUNDS {
        let mut bytes = 0u64;
        for i in 0..CHANGED {
            let (d, f) = ((round * 37 + i * 13) % DIRS, (round * 11 + i * 7) % FILES_PER_DIR);
            let text = file_content(d, f, round);
            bytes += text.len() as u64;
            std::fs::write(project.join(format!("src/m{d:03}/f{f:03}.rs")), text)?;
        }
        let before = disk_bytes(&store);
        let info = create()?;
        took.push(Duration::from_millis(info["took_ms"].as_u64().context("took_ms")?));
        added.push(disk_bytes(&store).saturating_sub(before));
        changed_bytes.push(bytes);
        ids.push(info["checkpoint_id"].as_str().context("id")?.to_owned());
    }

    // Restoring the checkpoint before the last round's 20 changes, and back, each timed.
    let mut restores = Vec::new();
    let mut lists = Vec::new();
    for round in 0..ROUNDS {
        let target = &ids[if round % 2 == 0 { ROUNDS - 1 } else { ROUNDS }];
        let t0 = Instant::now();
        output(sluice(bin, &data).args(["checkpoint", "restore", "ckpt", target]))?;
        restores.push(t0.elapsed());
        let t0 = Instant::now();
        output(sluice(bin, &data).args(["checkpoint", "list", "ckpt"]))?;
        lists.push(t0.elapsed());
    }
    let (took_med, took_p95) = median_p95(took);
    let (restore_med, restore_p95) = median_p95(restores);
    let (list_med, _) = median_p95(lists);
    added.sort_unstable();
    changed_bytes.sort_unstable();
    let kib = |b: u64| format!("{:.1}", b as f64 / 1024.0);
    let mut md = format!(
        "{HEADING}\n\n`cargo xtask bench checkpoint`. A project of {} files ({DIRS} folders of \
         {FILES_PER_DIR}, about 2.2 KiB each, {:.1} MiB); load average (1 min) {load_before} at \
         the start and {} at the end.\n\n",
        DIRS * FILES_PER_DIR,
        (DIRS * FILES_PER_DIR) as f64 * 2.2 / 1024.0,
        loadavg()
    );
    md.push_str("| measure | value |\n|---|---:|\n");
    md.push_str(&format!(
        "| first checkpoint (every file read and stored) | {} ms, {} KiB stored |\n",
        first["took_ms"],
        kib(first_bytes)
    ));
    md.push_str(&format!(
        "| checkpoint after {CHANGED} files changed, median (p95) of {ROUNDS} | {} ms ({} ms) |\n",
        ms(took_med),
        ms(took_p95)
    ));
    md.push_str(&format!(
        "| disk it added, median (max) | {} KiB ({} KiB) for {} KiB changed |\n",
        kib(added[added.len() / 2]),
        kib(added[added.len() - 1]),
        kib(changed_bytes[changed_bytes.len() / 2])
    ));
    md.push_str(&format!(
        "| restore of a checkpoint {CHANGED} files away, median (p95) of {ROUNDS} | {} ms ({} ms) |\n",
        ms(restore_med),
        ms(restore_p95)
    ));
    md.push_str(&format!(
        "| `sluice checkpoint list` on the same data (process start, engine open) | {} ms |\n",
        ms(list_med)
    ));
    let per_file = added[added.len() / 2].saturating_sub(changed_bytes[changed_bytes.len() / 2])
        / (DIRS * FILES_PER_DIR) as u64;
    md.push_str(&format!(
        "\nThe checkpoint time is measured inside the engine (`took_ms`: walk, stat cache, reads \
         and stores of the changed files, the compressed manifest); a file whose size, mtime, \
         ctime and inode match the previous checkpoint is not read. The disk added is the new \
         contents plus one manifest (about {per_file} bytes a file, compressed: its hash is most \
         of it). The restore's figure is the CLI's wall time: it walks and compares the tree, \
         then commits the changed files through the journal with backups, so it can itself be \
         undone.\n"
    ));
    Ok(md)
}
