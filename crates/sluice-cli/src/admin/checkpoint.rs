//! `sluice checkpoint`: the user's side of a project's checkpoints — list them, and put the
//! project's tree back as one holds it (no approval: the user is the one asking; the restore is
//! still all or nothing and undoable by an assistant's `restore` or the window).

use anyhow::Result;
use clap::Subcommand;
use sluice_engine::Engine;

use super::{fail, print_json, shown};

#[derive(Subcommand)]
pub enum CheckpointCmd {
    /// Take a checkpoint of a project's files now.
    Create {
        /// The project (id or name).
        project: String,
        /// A name to recognise it by.
        #[arg(long)]
        name: Option<String>,
        /// Also keep the files `.gitignore` ignores.
        #[arg(long)]
        include_ignored: bool,
        #[arg(long)]
        json: bool,
    },
    /// List a project's checkpoints, newest first, and the space they take.
    List {
        /// The project (id or name).
        project: String,
        #[arg(long)]
        json: bool,
    },
    /// Put the project's files back as checkpoint ID holds them (files changed since written
    /// back, files made since deleted, modes reset); refused if they change meanwhile.
    Restore {
        /// The project (id or name).
        project: String,
        /// The checkpoint (`ckpt_…`), as `sluice checkpoint list` shows it.
        id: String,
        #[arg(long)]
        json: bool,
    },
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

pub fn checkpoint(engine: Engine, cmd: CheckpointCmd) -> Result<()> {
    match cmd {
        CheckpointCmd::Create { project, name, include_ignored, json } => {
            let args = serde_json::json!({ "name": name, "include_ignored": include_ignored });
            let args = serde_json::from_value(args)?;
            let info = engine.create_checkpoint(&project, &args).map_err(fail)?;
            if json {
                return print_json(&info);
            }
            outln!(
                "Checkpoint {}: {} files, {} ({} new) in {} ms.",
                info.checkpoint_id,
                info.files,
                mib(info.bytes),
                mib(info.added_bytes),
                info.took_ms
            );
        }
        CheckpointCmd::List { project, json } => {
            let list = engine.checkpoints(&project).map_err(fail)?;
            if json {
                return print_json(&list);
            }
            if list.checkpoints.is_empty() {
                outln!("No checkpoints.");
            }
            for c in &list.checkpoints {
                let what = match (&c.name, &c.before_command) {
                    (_, Some(cmd)) => format!("before `{}`", shown(cmd)),
                    (Some(name), None) => format!("\"{}\"", shown(name)),
                    (None, None) => "(unnamed)".to_owned(),
                };
                let job = c.job_id.as_deref().map(|j| format!(" ({j})")).unwrap_or_default();
                outln!(
                    "{} {} {} files, {}, {}{}",
                    c.checkpoint_id,
                    c.created,
                    c.files,
                    mib(c.bytes),
                    what,
                    job
                );
            }
            outln!(
                "Stored: {} (at most {} checkpoints and {}; the oldest go first).",
                mib(list.stored_bytes),
                list.max_checkpoints,
                mib(list.max_bytes)
            );
        }
        CheckpointCmd::Restore { project, id, json } => {
            let out = engine.restore_checkpoint(&project, &id).map_err(fail)?;
            if json {
                return print_json(&out);
            }
            outln!(
                "Restored {id}: {} change(s). Undo with operation {} (restore).",
                out.files.len(),
                out.operation_id
            );
            for f in &out.files {
                outln!("  {} {}", f.action, shown(&f.path));
            }
        }
    }
    Ok(())
}
