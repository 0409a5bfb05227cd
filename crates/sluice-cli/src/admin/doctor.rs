//! `sluice doctor`: a report on this installation (data folder, secret, database, integrity,
//! confinement, engine), and `--reseal`, the user's acceptance of state changed outside Sluice.

use std::path::{Path, PathBuf};

use anyhow::Result;
use sluice_engine::{NetworkSetting, SecretPreference, SecretSource};

use super::{fail, shown};

fn describe_secret((source, reason): (&SecretSource, Option<&str>)) -> String {
    match source {
        SecretSource::Keychain(backend) => format!("OS keychain ({backend})"),
        SecretSource::File(path) => format!(
            "owner-only file {}{}",
            path.display(),
            reason.map(|r| format!(" — {r}")).unwrap_or_default()
        ),
    }
}

pub fn doctor(dir: &Path, pref: SecretPreference) -> Result<()> {
    outln!("Sluice {}", env!("CARGO_PKG_VERSION"));
    outln!("data folder:   {}", dir.display());
    let engine = crate::open_engine(dir.to_path_buf(), pref)?;
    outln!("install secret: {}", describe_secret(engine.secret_source()));
    let projects = engine.projects().map_err(fail)?;
    let available = projects.iter().filter(|p| p.state.is_available()).count();
    outln!("projects:      {} ({available} available)", projects.len());
    let tokens = engine.tokens().map_err(fail)?;
    outln!(
        "tokens:        {} ({} active)",
        tokens.len(),
        tokens.iter().filter(|t| t.revoked_ms.is_none()).count()
    );
    let report = engine.audit_verify().map_err(fail)?;
    match report.first_break {
        None => outln!("audit chain:   intact ({} entries)", report.entries),
        Some(b) => outln!("audit chain:   BROKEN at #{}: {}", b.seq, b.reason),
    }
    let access = if engine.is_stopped().map_err(fail)? {
        "STOPPED (emergency stop; `sluice resume` lifts it)"
    } else if engine.is_paused().map_err(fail)? {
        "paused"
    } else {
        "on"
    };
    outln!("AI access:     {access}");
    let findings = engine.integrity().map_err(fail)?;
    if findings.is_empty() {
        outln!("integrity:     every sealed record verifies");
    } else {
        outln!(
            "integrity:     {} CHANGED OUTSIDE SLUICE (edited without the install secret; each \
             is held to less privilege until you act):",
            findings.len()
        );
        for f in &findings {
            outln!("  [{}] {}", f.kind.code(), shown(&f.message));
        }
        outln!(
            "  To accept the database as it is now, review the list, then run `sluice doctor \
             --reseal`."
        );
    }
    let landlock = sluice_engine::job_confinement();
    outln!("confinement:   {}", landlock.summary);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let present = |paths: Vec<PathBuf>| -> Vec<String> {
        paths.into_iter().filter(|p| p.exists()).map(|p| p.display().to_string()).collect()
    };
    #[cfg(target_os = "linux")]
    if landlock.namespaces {
        let toolchains = home.as_ref().map_or(Vec::new(), |h| {
            present(sluice_engine::job_view::TOOLCHAINS.iter().map(|t| h.join(t)).collect())
        });
        outln!(
            "jobs see:      their project, their private folders, the system folders and the \
             toolchains here: {}",
            toolchains.join(", ")
        );
    }
    let hidden = present(sluice_engine::job_view::credential_stores(home.as_deref()));
    outln!(
        "hidden:        {} credential stores present here, never readable by a job: {}",
        hidden.len(),
        hidden.join(", ")
    );
    if !landlock.namespaces && !landlock.network_rules {
        outln!(
            "network rules: this system cannot block a job's network: jobs of projects whose \
             network is off refuse to run"
        );
    }
    for g in sluice_engine::guarantees(&landlock) {
        outln!("  {} {}", if g.holds { "holds:        " } else { "DOES NOT HOLD:" }, g.what);
    }
    let registries = engine.registries().map_err(fail)?;
    if landlock.namespaces {
        outln!(
            "registries:    {} hosts, over HTTPS through Sluice's proxy, for projects on the \
             registries network (`sluice registries list`)",
            registries.hosts().len()
        );
    } else {
        outln!(
            "registries:    cannot be enforced here (jobs do not run in namespaces): jobs of \
             projects on the registries network refuse to run"
        );
    }
    for p in &projects {
        let net = NetworkSetting::of_project(p);
        outln!("  {:<20} exec {:<7} network {}", p.name, p.exec.as_str(), net.describe(p.exec));
        let v = engine.sandbox_view(p);
        let mut extra = vec![format!("{} stores hidden", v.hidden.len())];
        extra.extend(v.grants.iter().map(|g| format!("granted {}", g.path)));
        extra.extend(v.sockets.iter().map(|s| format!("socket {s} (full access to this machine)")));
        if v.require_full {
            extra.push("requires full confinement".into());
        }
        outln!("  {:<20} sandbox: {}", "", extra.join(", "));
        if let Some(why) = &v.refusal {
            outln!("  {:<20} REFUSED HERE: {why}", "");
        }
    }
    match sluice_engine::read_engine_file(dir) {
        Some(port) if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() => {
            outln!("engine:        running on http://127.0.0.1:{port}/mcp")
        }
        _ => outln!("engine:        not running"),
    }
    Ok(())
}

/// `sluice doctor --reseal`: the user's acceptance of state changed outside Sluice.
pub fn reseal(dir: &Path, pref: SecretPreference) -> Result<()> {
    let engine = crate::open_engine(dir.to_path_buf(), pref)?;
    let accepted = engine.reseal().map_err(fail)?;
    if accepted.is_empty() {
        outln!("Nothing to accept: every sealed record already verifies.");
        return Ok(());
    }
    outln!("Accepted as Sluice's own ({} findings):", accepted.len());
    for f in &accepted {
        outln!("  [{}] {}", f.kind.code(), shown(&f.message));
    }
    outln!(
        "Projects, allow rules and tokens are sealed as they stand; a stop or pause whose record \
         was removed stays on (`sluice resume` lifts it). Recorded in the audit log. Reach from \
         the web is never accepted this way: a forged setting stays off until `sluice reach \
         off` removes it, a forged request stays denied, a forged grant's token refused."
    );
    Ok(())
}
