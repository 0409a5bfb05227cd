//! The job's environment, built from nothing: the trusted PATH, the locale, the private folders
//! (HOME, TMPDIR, caches — created here, beneath the sandbox's `state_dir`), the proxy or
//! offline switches, then the command's vetted additions; never a variable that looks like a
//! secret.

use std::ffi::OsString;
use std::path::Path;

use super::{SHM_DIR, Sandbox};
use crate::error::ExecError;
use crate::places::user_tool_home;
use crate::spec::{ResolvedCommand, TrustedPath};

/// Substrings that disqualify an environment variable name, whatever put it there.
const DENIED_ENV: &[&str] =
    &["TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"];
const DENIED_ENV_PREFIXES: &[&str] = &["AWS_", "SLUICE_", "AZURE_", "GOOGLE_", "GCP_", "GH_"];

pub(crate) fn env_name_denied(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    DENIED_ENV.iter().any(|d| upper.contains(d))
        || DENIED_ENV_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// What a job's environment depends on besides the command.
#[derive(Debug, Clone, Copy, Default)]
pub struct JobView {
    pub network_off: bool,
    /// The job reaches the network only through the proxy on `127.0.0.1` at this port
    /// ([`crate::egress::PROXY_PORT`] in the job's own namespace on Linux; a port of its own
    /// on Windows).
    pub proxy: Option<u16>,
}

/// The private folders of a job under `state_dir`: `(variable, sub-folder)`.
const PRIVATE_DIRS: &[(&str, &str)] = &[
    ("HOME", "home"),
    ("TMPDIR", "tmp"),
    ("TMP", "tmp"),
    ("TEMP", "tmp"),
    ("XDG_CACHE_HOME", "cache"),
    ("XDG_CONFIG_HOME", "config"),
    ("XDG_DATA_HOME", "data"),
    ("XDG_STATE_HOME", "state"),
    ("CARGO_HOME", "cargo"),
    ("GOPATH", "go"),
];

/// The complete environment of a job: nothing inherited except the locale and where rustup
/// keeps its toolchains (read-only for the job), then the command's vetted additions. The
/// private folders are named as the job sees them: beneath `private` (the sandbox's
/// `state_dir`, or where the namespaces show it).
pub fn job_env(
    cmd: &ResolvedCommand,
    private: &Path,
    path: &TrustedPath,
    view: JobView,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), path.joined()),
        ("TERM".into(), "dumb".into()),
        ("NO_COLOR".into(), "1".into()),
        ("CARGO_TERM_COLOR".into(), "never".into()),
    ];
    for (var, sub) in PRIVATE_DIRS {
        env.push(((*var).into(), private.join(sub).into_os_string()));
    }
    let mut has_lang = false;
    for (name, value) in std::env::vars_os() {
        let Some(n) = name.to_str() else { continue };
        if n == "LANG"
            || n == "LANGUAGE"
            || (n.starts_with("LC_") && n[3..].bytes().all(|b| b.is_ascii_uppercase()))
        {
            has_lang |= n == "LANG";
            env.push((name, value));
        }
    }
    if !has_lang {
        env.push(("LANG".into(), "C.UTF-8".into()));
    }
    // rustup's proxies (`cargo` in ~/.cargo/bin) find toolchains through RUSTUP_HOME; with a
    // private HOME they would look in the wrong place. (CARGO_HOME stays the private one: in
    // namespaces it is the user's cargo home, copy-on-write — see `jail::JailSpec`.)
    if let Some(home) = user_tool_home("RUSTUP_HOME", ".rustup") {
        env.push(("RUSTUP_HOME".into(), home.into_os_string()));
    }
    if let Some(tc) = std::env::var_os("RUSTUP_TOOLCHAIN") {
        env.push(("RUSTUP_TOOLCHAIN".into(), tc));
    }
    // Without a network, package managers are told so: they use what is cached and fail at
    // once instead of retrying a registry they cannot reach.
    if view.network_off {
        env.push(("CARGO_NET_OFFLINE".into(), "true".into()));
        env.push(("npm_config_offline".into(), "true".into()));
    }
    // Through the proxy: the variables curl, cargo, npm, pip, go and git read; the JVM's own
    // properties for Maven and Gradle. Loopback stays direct (a test server in the job).
    if let Some(port) = view.proxy {
        let url = format!("http://127.0.0.1:{port}");
        for var in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"] {
            env.push((var.into(), url.clone().into()));
        }
        for var in ["NO_PROXY", "no_proxy"] {
            env.push((var.into(), "localhost,127.0.0.1,::1".into()));
        }
        let java = format!(
            "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort={port} \
             -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={port} \
             -Dhttp.nonProxyHosts=localhost|127.0.0.1"
        );
        env.push(("JAVA_TOOL_OPTIONS".into(), java.into()));
    }
    for (k, v) in &cmd.env {
        env.retain(|(n, _)| n != k.as_str());
        env.push((k.into(), v.into()));
    }
    env.retain(|(n, _)| !n.to_str().is_none_or(env_name_denied));
    env
}

pub(super) fn create_private_dirs(sandbox: &Sandbox) -> Result<(), ExecError> {
    let subs = PRIVATE_DIRS.iter().map(|(_, sub)| sandbox.state_dir.join(sub));
    let extra = [sandbox.state_dir.join(SHM_DIR), sandbox.jail_root()];
    for dir in subs.chain(extra) {
        // A job may have replaced one of its folders with a link (to plant a mount source for
        // the next job): a private folder is a real folder, or it is made one again.
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(&dir)
                .map_err(|e| ExecError::os("replacing a job's private folder", e))?;
        }
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(&dir).map_err(|e| ExecError::os("creating the job's private folders", e))?;
    }
    Ok(())
}
