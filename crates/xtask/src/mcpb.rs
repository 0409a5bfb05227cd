//! `cargo xtask mcpb [--binary PATH] [--out PATH]`: Sluice as an MCP Bundle (`.mcpb`), the
//! package Claude Desktop installs with a double click, beside the config-file route of
//! `sluice connect claude-desktop`.
//!
//! The bundle holds `manifest.json`, the icon and the `sluice` CLI (`server/`), and starts
//! `sluice stdio`: the bridge to the running engine, so pause, limits, scope and audit apply as
//! to every client. The token is a `user_config` field marked `sensitive`: Claude Desktop asks
//! for it at install and keeps it in the OS keychain, and hands it to the bridge as
//! `SLUICE_TOKEN` in the environment of that one process — never in a file. The bundle itself
//! carries no secret and can be shared.
//!
//! The manifest is written here (the tools from `crates/sluice-mcp/tests/tools-list.json`, the
//! committed listing) and the archive made by the official MCPB CLI (`@anthropic-ai/mcpb`,
//! pinned in `tests/package`), whose `pack` validates the manifest against its schema. One
//! bundle per OS: the binary inside is this build's; `compatibility.platforms` says which.
//!
//! `cargo xtask test` builds one from the debug binary and runs `tests/package/mcpb_check.py`:
//! the archive unpacked, the server started exactly as the manifest tells a host to (`${__dirname}`
//! and `${user_config.token}` substituted), and a real MCP client (the Python SDK) lists the
//! tools and reads a file through it, from a real engine.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::{deps, sh, target_dir};

/// The manifest format written (the newest the pinned MCPB CLI knows).
const MANIFEST_VERSION: &str = "0.3";

/// The OS of this build, as MCPB names it.
fn platform() -> &'static str {
    match std::env::consts::OS {
        "windows" => "win32",
        "macos" => "darwin",
        _ => "linux",
    }
}

/// The bundle's manifest for `version`, listing `tools` (name, description).
pub fn manifest(version: &str, tools: &[(String, String)]) -> Value {
    let exe = if platform() == "win32" { "server/sluice.exe" } else { "server/sluice" };
    json!({
        "manifest_version": MANIFEST_VERSION,
        "name": "sluice",
        "display_name": "Sluice",
        "version": version,
        "description": "Your authorized projects on this computer, through Sluice: read, search, \
                        change, build and test, with your approval where you asked for it.",
        "long_description": "Connects Claude Desktop to the Sluice app running on this computer. \
            Sluice decides what Claude may reach: only the projects you authorized, sensitive \
            files hidden, changes and commands approved by you, everything audited, one click to \
            pause. Create a token in Sluice (Tokens → New token) and paste it when asked; Claude \
            Desktop keeps it in your OS keychain.",
        "author": { "name": "Sluice" },
        "icon": "icon.png",
        "server": {
            "type": "binary",
            "entry_point": exe,
            "mcp_config": {
                "command": format!("${{__dirname}}/{exe}"),
                "args": ["stdio"],
                "env": { "SLUICE_TOKEN": "${user_config.token}" },
            },
        },
        "tools": tools
            .iter()
            .map(|(name, description)| json!({ "name": name, "description": description }))
            .collect::<Vec<_>>(),
        "user_config": {
            "token": {
                "type": "string",
                "title": "Sluice token",
                "description": "A client token from Sluice (Tokens → New token). Claude Desktop \
                                keeps it in your OS keychain.",
                "sensitive": true,
                "required": true,
            },
        },
        "compatibility": { "platforms": [platform()] },
        "keywords": ["files", "projects", "git", "build", "test", "local"],
        "license": env!("CARGO_PKG_LICENSE"),
    })
}

/// The tools of the committed listing, with their descriptions' first sentence.
fn tools(root: &Path) -> Result<Vec<(String, String)>> {
    let path = root.join("crates/sluice-mcp/tests/tools-list.json");
    let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    let listed: Vec<Value> = serde_json::from_str(&text).context("tools-list.json")?;
    listed
        .iter()
        .map(|t| {
            let name = t["name"].as_str().context("a tool without a name")?;
            let description = t["description"].as_str().unwrap_or_default();
            let first = description.split(". ").next().unwrap_or(description).trim_end_matches('.');
            Ok((name.to_owned(), format!("{first}.")))
        })
        .collect()
}

/// Packs `binary` into the bundle `out` with the official CLI (which validates the manifest),
/// run by `node`.
pub fn build(root: &Path, binary: &Path, out: &Path, node: &Path) -> Result<()> {
    let cli = deps::package_tools(root)?.mcpb;
    let stage = target_dir(root).join("mcpb/stage");
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(stage.join("server"))?;
    let version = env!("CARGO_PKG_VERSION");
    let manifest = serde_json::to_string_pretty(&manifest(version, &tools(root)?))?;
    std::fs::write(stage.join("manifest.json"), manifest)?;
    std::fs::copy(root.join("icons/128x128.png"), stage.join("icon.png"))?;
    let exe = stage.join("server").join(binary.file_name().context("binary has no name")?);
    std::fs::copy(binary, &exe).with_context(|| format!("copy {}", binary.display()))?;
    if cfg!(unix) && platform() == "linux" {
        // Debug symbols are most of a debug binary; the bundle needs none.
        let _ = Command::new("strip").arg("--strip-debug").arg(&exe).status();
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let _ = std::fs::remove_file(out);
    sh(Command::new(node).arg(&cli).arg("pack").arg(&stage).arg(out))?;
    if !out.is_file() {
        bail!("mcpb pack finished but wrote no {}", out.display());
    }
    Ok(())
}

/// `cargo xtask mcpb [--binary PATH] [--out PATH] [--node PATH]` (defaults: the release
/// `sluice`, `target/release/bundle/mcpb/sluice-VERSION-PLATFORM-ARCH.mcpb`, and the `node` on
/// PATH — the release workflow's, on every OS).
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let mut binary = None;
    let mut out = None;
    let mut node = PathBuf::from("node");
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |what: &str| it.next().map(PathBuf::from).context(format!("{what} PATH"));
        match arg.as_str() {
            "--binary" => binary = Some(value("--binary")?),
            "--out" => out = Some(value("--out")?),
            "--node" => node = value("--node")?,
            other => bail!(
                "unknown argument {other:?}; usage: cargo xtask mcpb [--binary PATH] [--out PATH] \
                 [--node PATH]"
            ),
        }
    }
    let binary = binary.unwrap_or_else(|| target_dir(root).join("release").join(exe_name()));
    let out = out.unwrap_or_else(|| default_out(root));
    build(root, &binary, &out, &node)?;
    println!("{}", out.display());
    Ok(())
}

pub fn default_out(root: &Path) -> PathBuf {
    target_dir(root).join("release/bundle/mcpb").join(format!(
        "sluice-{}-{}-{}.mcpb",
        env!("CARGO_PKG_VERSION"),
        platform(),
        std::env::consts::ARCH
    ))
}

fn exe_name() -> &'static str {
    if platform() == "win32" { "sluice.exe" } else { "sluice" }
}

/// `cargo xtask test`'s check: a bundle of the debug binary, installed and run as a host would.
pub fn check(root: &Path, python: &Path) -> Result<()> {
    let debug = target_dir(root).join("debug").join(exe_name());
    let out = target_dir(root).join("mcpb/test/sluice-test.mcpb");
    let node = deps::node_env(root)?;
    build(root, &debug, &out, &node)?;
    let cli = deps::package_tools(root)?.mcpb;
    sh(Command::new(python)
        .arg(root.join("tests/package/mcpb_check.py"))
        .arg("--mcpb")
        .arg(&out)
        .arg("--sluice")
        .arg(&debug)
        .arg("--node")
        .arg(&node)
        .arg("--mcpb-cli")
        .arg(&cli))
}
