//! `sluice`: the headless engine and the local administration of projects, tokens, pause and
//! audit. Everything the desktop app does is reachable from here, so it can be scripted and
//! tested without a display.

#[macro_use]
mod output;
mod admin;
mod connect;
mod reach;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use sluice_core::{AccessMode, ExecMode};
use sluice_engine::{DEFAULT_PORT, Engine, EngineConfig, SecretPreference};

#[derive(Parser)]
#[command(
    name = "sluice",
    version,
    about = "Sluice: a guarded gateway between AI assistants and your projects"
)]
struct Cli {
    /// Sluice's data folder (database, secret fallback, backups).
    #[arg(long, global = true, env = "SLUICE_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Where the install secret lives: the OS keychain, an owner-only file, or auto.
    #[arg(long, global = true, env = "SLUICE_SECRET_STORE", default_value = "auto", value_parser = parse_secret_pref)]
    secret_store: SecretPreference,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the engine: the MCP endpoint on 127.0.0.1 and the project watcher.
    Serve {
        /// Port on 127.0.0.1 for the MCP endpoint.
        #[arg(long, default_value_t = DEFAULT_PORT)]
        port: u16,
        /// Sustained requests per second allowed per token.
        #[arg(long, default_value_t = sluice_mcp::Limits::default().rate_per_sec)]
        rate_limit: f64,
        /// Requests per token allowed in a burst above the sustained rate.
        #[arg(long, default_value_t = sluice_mcp::Limits::default().burst)]
        burst: f64,
        /// Requests per token allowed in flight at once.
        #[arg(long, default_value_t = sluice_mcp::Limits::default().concurrency)]
        max_in_flight: usize,
        /// How long an action waits for your approval before it is refused, e.g. 5m.
        #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
        approval_timeout: std::time::Duration,
        /// Jobs (commands started by assistants) running at once; more wait in a queue.
        #[arg(long, default_value_t = sluice_engine::JobLimits::default().max_running)]
        max_jobs: usize,
        /// Jobs running at once in one project.
        #[arg(long, default_value_t = sluice_engine::JobLimits::default().max_running_per_project)]
        max_jobs_per_project: usize,
        /// Jobs that may start in any one minute (a runaway assistant loop stops here).
        #[arg(long, default_value_t = sluice_engine::JobLimits::default().max_starts_per_minute)]
        job_starts_per_minute: usize,
    },
    /// A stdio MCP server for clients that only speak stdio; forwards to the running engine.
    /// The token is read from the SLUICE_TOKEN environment variable, never from arguments;
    /// without it, from the keychain entry `sluice connect` made for --connection NAME.
    Stdio {
        /// The engine's port (default: the one the running engine recorded).
        #[arg(long)]
        port: Option<u16>,
        /// The connection (made by `sluice connect`) whose stored token to use.
        #[arg(long, value_name = "NAME")]
        connection: Option<String>,
    },
    /// Configure an AI client to use Sluice: shows the exact change to its config file,
    /// writes it (with a backup) after you confirm, and checks the connection.
    Connect(connect::ConnectArgs),
    /// Remove Sluice's entry from a client's config file (nothing else), with a backup.
    Disconnect(connect::DisconnectArgs),
    /// Authorize and manage project folders.
    #[command(subcommand)]
    Project(admin::ProjectCmd),
    /// Create, list and revoke client tokens.
    #[command(subcommand)]
    Token(admin::TokenCmd),
    /// Reach from hosted assistants (ChatGPT, Claude.ai) through your tunnel: off by default.
    #[command(subcommand)]
    Reach(reach::ReachCmd),
    /// Read and verify the audit log.
    #[command(subcommand)]
    Audit(admin::AuditCmd),
    /// See and decide the actions waiting for your approval.
    #[command(subcommand)]
    Approvals(admin::ApprovalsCmd),
    /// See and remove the "always allow this exact command" rules.
    #[command(subcommand)]
    Rules(admin::RulesCmd),
    /// The hosts projects on the `registries` network reach (package registries).
    #[command(subcommand)]
    Registries(admin::RegistriesCmd),
    /// A project's checkpoints: list them, restore one.
    #[command(subcommand)]
    Checkpoint(admin::CheckpointCmd),
    /// The Windows sandbox account jobs run as: what holds, its setup, its undoing.
    #[command(subcommand)]
    Sandbox(admin::SandboxCmd),
    /// The jobs assistants started (kept across restarts; output is not).
    Jobs {
        /// Only this project's jobs (id or name).
        #[arg(long)]
        project: Option<String>,
        /// How many of the newest jobs to show.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Refuse every MCP request until `sluice resume`; running jobs keep running.
    Pause,
    /// Emergency stop: refuse every MCP request, kill every running job, deny every pending
    /// approval; stays in force across restarts until `sluice resume`.
    Stop,
    /// Allow MCP requests again (lifts a pause and an emergency stop).
    Resume,
    /// Report on this installation: data folder, secret storage, database, engine, and any
    /// state changed in the database outside Sluice (integrity findings).
    Doctor {
        /// Accept the database as it is now: seal every project, allow rule and token again as
        /// they stand (a stop or pause whose record was removed stays on). Review what
        /// `sluice doctor` lists first: this makes those changes Sluice's own.
        #[arg(long)]
        reseal: bool,
    },
}

fn parse_secret_pref(s: &str) -> Result<SecretPreference, String> {
    match s {
        "auto" => Ok(SecretPreference::Auto),
        "keychain" => Ok(SecretPreference::KeychainOnly),
        "file" => Ok(SecretPreference::FileOnly),
        other => Err(format!("unknown secret store {other:?}; expected auto, keychain or file")),
    }
}

pub(crate) fn parse_access(s: &str) -> Result<AccessMode, String> {
    s.parse()
}

pub(crate) fn parse_exec(s: &str) -> Result<ExecMode, String> {
    s.parse()
}

/// The most jobs `--max-jobs` accepts: each job is a process tree with its own pipes.
const MAX_JOBS: usize = 256;

fn main() {
    let cli = Cli::parse();
    let stdio = matches!(cli.command, Command::Stdio { .. });
    sluice_engine::logging::init(if stdio { "warn" } else { "info" });
    if let Err(err) = run(cli) {
        if output::reader_gone(&err) {
            std::process::exit(output::READER_GONE);
        }
        // Not `eprintln!`: with standard error gone too, that would panic.
        let message = format!("{err:#}");
        let _ = writeln!(std::io::stderr(), "sluice: {}", sluice_core::redact::redact(&message));
        std::process::exit(1);
    }
}

fn data_dir(cli: &Cli) -> Result<PathBuf> {
    match &cli.data_dir {
        Some(d) => Ok(d.clone()),
        None => sluice_engine::default_data_dir()
            .context("cannot find a data folder for Sluice; pass --data-dir"),
    }
}

pub(crate) fn open_engine(cli_dir: PathBuf, secret: SecretPreference) -> Result<Engine> {
    Engine::open(&EngineConfig::new(cli_dir, secret)).map_err(|f| anyhow::anyhow!("{}", f.message))
}

fn run(cli: Cli) -> Result<()> {
    let dir = data_dir(&cli)?;
    match cli.command {
        Command::Serve {
            port,
            rate_limit,
            burst,
            max_in_flight,
            approval_timeout,
            max_jobs,
            max_jobs_per_project,
            job_starts_per_minute,
        } => {
            if !(rate_limit > 0.0 && burst >= 1.0 && max_in_flight >= 1) {
                bail!("--rate-limit must be above 0, --burst and --max-in-flight at least 1");
            }
            if !(1..=MAX_JOBS).contains(&max_jobs)
                || !(1..=max_jobs).contains(&max_jobs_per_project)
            {
                bail!(
                    "--max-jobs must be 1 to {MAX_JOBS}, and --max-jobs-per-project 1 to --max-jobs"
                );
            }
            if !(1..=MAX_JOBS * 60).contains(&job_starts_per_minute) {
                bail!("--job-starts-per-minute must be 1 to {}", MAX_JOBS * 60);
            }
            let limits = sluice_mcp::Limits {
                rate_per_sec: rate_limit,
                burst,
                concurrency: max_in_flight,
                ..sluice_mcp::Limits::default()
            };
            let mut config = EngineConfig::new(dir, cli.secret_store);
            config.approval_ttl = approval_timeout;
            config.job_limits.max_running = max_jobs;
            config.job_limits.max_running_per_project = max_jobs_per_project;
            config.job_limits.max_starts_per_minute = job_starts_per_minute;
            // Room to queue as many again.
            config.job_limits.max_queued = config.job_limits.max_queued.max(max_jobs);
            serve(config, port, limits)
        }
        Command::Stdio { port, connection } => stdio(dir, port, cli.secret_store, connection),
        Command::Connect(args) => connect::connect(dir, cli.secret_store, args),
        Command::Disconnect(args) => connect::disconnect(dir, cli.secret_store, args),
        Command::Project(cmd) => admin::project(open_engine(dir, cli.secret_store)?, cmd),
        Command::Token(cmd) => admin::token(open_engine(dir, cli.secret_store)?, cmd),
        Command::Reach(cmd) => reach::reach(open_engine(dir, cli.secret_store)?, cmd),
        Command::Audit(cmd) => admin::audit(open_engine(dir, cli.secret_store)?, cmd),
        Command::Approvals(cmd) => admin::approvals(open_engine(dir, cli.secret_store)?, cmd),

        Command::Rules(cmd) => admin::rules(open_engine(dir, cli.secret_store)?, cmd),
        Command::Registries(cmd) => admin::registries(open_engine(dir, cli.secret_store)?, cmd),
        Command::Checkpoint(cmd) => admin::checkpoint(open_engine(dir, cli.secret_store)?, cmd),
        Command::Sandbox(cmd) => admin::sandbox(open_engine(dir, cli.secret_store)?, cmd),
        Command::Jobs { project, limit, json } => {
            admin::jobs(open_engine(dir, cli.secret_store)?, project.as_deref(), limit, json)
        }
        Command::Stop => {
            let s = open_engine(dir, cli.secret_store)?
                .emergency_stop()
                .map_err(|f| anyhow::anyhow!(f))?;
            outln!(
                "Emergency stop: AI access is locked until `sluice resume`. {} pending approval(s) \
                 denied; the running engine kills every job within seconds.",
                s.denied_approvals
            );
            Ok(())
        }
        Command::Pause => {
            open_engine(dir, cli.secret_store)?.set_paused(true).map_err(|f| anyhow::anyhow!(f))?;
            outln!("AI access paused: every MCP request is refused until `sluice resume`.");
            Ok(())
        }
        Command::Resume => {
            open_engine(dir, cli.secret_store)?.resume().map_err(|f| anyhow::anyhow!(f))?;
            outln!("AI access resumed (pause and emergency stop lifted).");
            Ok(())
        }
        Command::Doctor { reseal: false } => admin::doctor(&dir, cli.secret_store),
        Command::Doctor { reseal: true } => admin::reseal(&dir, cli.secret_store),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    sluice_mcp::runtime().context("cannot start the async runtime")
}

fn serve(config: EngineConfig, port: u16, limits: sluice_mcp::Limits) -> Result<()> {
    let started = Instant::now();
    let dir = config.data_dir.clone();
    let engine = Arc::new(Engine::open(&config).map_err(|f| anyhow::anyhow!("{}", f.message))?);

    engine.start_serving().map_err(|f| anyhow::anyhow!("{}", f.message))?;
    let rt = runtime()?;
    rt.block_on(async move {
        let listener = sluice_mcp::bind(port).await?;
        // `--port 0` takes a free port: everything below names the one bound.
        let port = listener.local_addr().context("cannot read the bound port")?.port();
        let shutdown = tokio_util::sync::CancellationToken::new();
        let router = sluice_mcp::router(engine.clone(), port, limits, shutdown.clone());
        sluice_engine::write_engine_file(&dir, port).context("cannot record the engine's port")?;
        let watcher = sluice_engine::watch_roots(engine.clone());
        // Handlers first, then "ready": a SIGTERM right after it must stop the engine cleanly,
        // not kill it with the default action before the handler exists.
        let signalled = sluice_engine::shutdown::signal();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            signalled.await;
            stop.cancel();
        });
        tracing::info!(port, ready_ms = started.elapsed().as_secs_f64() * 1e3, "ready");
        outln!("Sluice is serving http://127.0.0.1:{port}/mcp");
        // The remote front follows the reach setting (off unless the user turned it on).
        let reach = tokio::spawn(sluice_mcp::serve_reach(engine.clone(), limits, shutdown.clone()));
        sluice_mcp::serve(listener, router, shutdown).await;
        // The tunnel Sluice runs goes with it.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), reach).await;
        watcher.abort();
        engine.flush_audit();
        let _ = std::fs::remove_file(sluice_engine::engine_file(&dir));
        Ok(())
    })
}

fn stdio(
    dir: PathBuf,
    port: Option<u16>,
    secret: SecretPreference,
    connection: Option<String>,
) -> Result<()> {
    let token = sluice_mcp::stdio::resolve_token(
        std::env::var("SLUICE_TOKEN").ok(),
        &dir,
        secret,
        connection.as_deref(),
    )?;
    let port = match port.or_else(|| sluice_engine::read_engine_file(&dir)) {
        Some(p) => p,
        None => bail!(
            "Sluice is not running (no engine recorded in {}); start the Sluice app or `sluice serve`",
            dir.display()
        ),
    };
    let rt = sluice_mcp::stdio::runtime().context("cannot start the async runtime")?;
    rt.block_on(async {
        let (stdin, stdout) = sluice_mcp::stdio::std_streams();
        sluice_mcp::stdio::run(port, token.trim(), stdin, stdout).await
    })?;
    Ok(())
}
