//! `sluice reach`: reach from hosted assistants (ChatGPT, Claude.ai) through a tunnel the user
//! runs. Off by default; `on` says what it exposes, `requests` lists the connection requests
//! waiting, `approve`/`deny` decide them (the consent page in the browser never does).

use anyhow::{Result, bail};
use clap::Subcommand;
use sluice_engine::Engine;
use sluice_engine::reach::{
    ApiKey, ClientIdentity, REQUEST_TTL, ReachRequest, Tunnel, TunnelStatus,
};

#[derive(Subcommand)]
pub enum ReachCmd {
    /// Turn reach on: hosted assistants may ask to connect through your tunnel.
    On {
        /// The tunnel's public address, e.g. https://sluice.example.com (no path). Leave it
        /// out when Sluice runs a tunnel that chooses its own (a quick tunnel, Tailscale).
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// A tunnel for Sluice to start, watch and stop with reach: `cloudflared` (a quick
        /// tunnel, a new address every run), `tailscale` (Funnel) or `ngrok`. Without it (and
        /// without --tunnel-name or --tunnel-command) you run your own tunnel.
        #[arg(long, value_name = "KIND", value_parser = ["cloudflared", "tailscale", "ngrok"])]
        tunnel: Option<String>,
        /// A named Cloudflare tunnel (`cloudflared tunnel run NAME`) for the hostname in --url.
        #[arg(long, value_name = "NAME", conflicts_with_all = ["tunnel", "tunnel_command"])]
        tunnel_name: Option<String>,
        /// Another tunnel program and its arguments, split like a shell would (no shell runs
        /// it); `{port}` stands for the tunnel port. Without --url, the first https:// address
        /// it prints is the public one.
        #[arg(long, value_name = "COMMAND", conflicts_with = "tunnel")]
        tunnel_command: Option<String>,
        /// OpenAI's Secure MCP Tunnel (its ID, `tunnel_…`, from platform.openai.com): Sluice
        /// polls OpenAI for the connector's requests itself; nothing listens, no program runs.
        /// The tunnel's API key is read from standard input the first time.
        #[arg(
            long,
            value_name = "ID",
            conflicts_with_all = ["url", "tunnel", "tunnel_name", "tunnel_command"]
        )]
        openai_tunnel: Option<String>,
        /// The port on 127.0.0.1 your tunnel forwards to (not the local clients' port).
        #[arg(long, default_value_t = sluice_engine::reach::DEFAULT_PORT)]
        port: u16,
        /// A project remote assistants may use (repeat for more). At least one.
        #[arg(long = "project", value_name = "NAME", required = true)]
        projects: Vec<String>,
        /// Let remote assistants change files and run commands as the project allows (never
        /// commands in `any` mode). Without it they only read.
        #[arg(long)]
        write: bool,
        /// A redirect URI to accept beside ChatGPT's and Claude's published callbacks
        /// (repeat for more), for another hosted client you use.
        #[arg(long = "redirect", value_name = "URI")]
        redirects: Vec<String>,
    },
    /// Turn reach off: the tunnel's port closes and every remote token is revoked.
    Off,
    /// Whether reach is on, and what it exposes.
    Status,
    /// Connection requests waiting for your decision.
    Requests,
    /// Approve a connection request: check that its code is the one your browser shows.
    Approve {
        /// The request's id (`slrq_…`).
        id: String,
    },
    /// Deny a connection request.
    Deny {
        /// The request's id (`slrq_…`).
        id: String,
    },
}

pub fn reach(engine: Engine, cmd: ReachCmd) -> Result<()> {
    let fail = |f: sluice_core::Failure| anyhow::anyhow!("{}", f.message);
    match cmd {
        ReachCmd::On {
            url,
            tunnel,
            tunnel_name,
            tunnel_command,
            openai_tunnel,
            port,
            projects,
            write,
            redirects,
        } => {
            // clap lets at most one of the three through; the engine parses the choice, as it
            // does the window's.
            let tunnel = match (tunnel.as_deref(), tunnel_name.as_deref(), tunnel_command) {
                (Some(kind), ..) => Some(Tunnel::from_choice(kind, None, None).map_err(fail)?),
                (None, Some(name), _) => {
                    Some(Tunnel::from_choice("cloudflared-named", Some(name), None).map_err(fail)?)
                }
                (None, None, Some(command)) => Some(
                    Tunnel::from_choice("command", None, Some(&command))
                        .map_err(|f| anyhow::anyhow!("--tunnel-command: {}", f.message))?,
                ),
                (None, None, None) => None,
            };
            let (tunnel, api_key) = match openai_tunnel {
                Some(id) => {
                    let tunnel = Tunnel::from_choice("openai", Some(&id), None).map_err(fail)?;
                    // A bad ID is said before the key is asked for.
                    tunnel.validate(None).map_err(fail)?;
                    (Some(tunnel), api_key_from_stdin(&engine, &id)?)
                }
                None => (tunnel, None),
            };
            let req = ReachRequest { url, port, projects, write, redirects, tunnel, api_key };
            let reach = engine.set_reach(&req).map_err(fail)?;
            outln!("Reach from the web is on.");
            if let Some(tunnel @ Tunnel::OpenAi { .. }) = &reach.tunnel {
                outln!("  Sluice (the tray or `sluice serve`) serves {}.", tunnel.describe());
                outln!(
                    "  In ChatGPT, add a connector for this tunnel with no authentication: the \
                     tunnel's key is the authentication."
                );
            } else if reach.ready() {
                outln!("  Public MCP URL: {}", reach.resource());
            } else {
                outln!("  Public MCP URL: the tunnel's, once it starts (`sluice reach status`)");
            }
            match &reach.tunnel {
                Some(Tunnel::OpenAi { .. }) => {}
                Some(_) => outln!(
                    "  Sluice (the tray or `sluice serve`) runs the tunnel to http://127.0.0.1:{}",
                    reach.port
                ),
                None => outln!(
                    "  Your tunnel must forward {} to http://127.0.0.1:{}",
                    reach.public_url,
                    reach.port
                ),
            }
            outln!(
                "  Remote assistants may {} in {} project(s); commands in `any` mode are never exposed.",
                if reach.write {
                    "read, change and run what each project allows"
                } else {
                    "only read"
                },
                reach.projects.len()
            );
            outln!("  Each assistant that connects asks first: `sluice reach requests`.");
            Ok(())
        }
        ReachCmd::Off => {
            let revoked = engine.reach_off().map_err(fail)?;
            outln!("Reach from the web is off; {revoked} remote token(s) revoked.");
            Ok(())
        }
        ReachCmd::Status => {
            match engine.reach().map_err(fail)? {
                None => outln!("Reach from the web is off."),
                Some(reach) => {
                    if let Some(tunnel @ Tunnel::OpenAi { .. }) = &reach.tunnel {
                        outln!("Reach from the web is on: {}", tunnel.describe());
                    } else if reach.ready() {
                        outln!("Reach from the web is on: {}", reach.resource());
                    } else {
                        outln!("Reach from the web is on, waiting for the tunnel's address.");
                    }
                    if reach.tunnel.as_ref().is_none_or(Tunnel::runs_program) {
                        outln!("  tunnel port: 127.0.0.1:{}", reach.port);
                    }
                    if reach.tunnel.is_some() {
                        print_tunnel(engine.tunnel_status().map_err(fail)?);
                    }
                    outln!("  writes: {}", if reach.write { "allowed" } else { "no (read-only)" });
                    for id in &reach.projects {
                        outln!("  project: {id}");
                    }
                }
            }
            Ok(())
        }
        ReachCmd::Requests => {
            let requests = engine.oauth_requests().map_err(fail)?;
            if requests.is_empty() {
                outln!("No connection request is waiting.");
            }
            for r in requests {
                outln!(
                    "{}  code {}  {} (returns to {}){}",
                    r.id,
                    r.user_code,
                    sluice_core::text::visible(
                        &ClientIdentity::of(&r.client_id, &r.client_name).label()
                    ),
                    sluice_core::text::visible(r.redirect_host()),
                    if r.tampered { "  [changed outside Sluice]" } else { "" }
                );
            }
            outln!(
                "Approve only a request whose code your browser shows; requests expire after {} minutes. \
                 A name marked unverified is what the client registered itself as: anyone can \
                 register any name.",
                REQUEST_TTL.as_secs() / 60
            );
            Ok(())
        }
        ReachCmd::Approve { id } | ReachCmd::Deny { id } if id.trim().is_empty() => {
            bail!("name the request (its id from `sluice reach requests`)")
        }
        ReachCmd::Approve { id } => {
            let r = engine.decide_oauth_request(&id, true).map_err(fail)?;
            outln!(
                "Approved {} ({}); the browser continues to the assistant.",
                r.id,
                sluice_core::text::visible(
                    &ClientIdentity::of(&r.client_id, &r.client_name).label()
                )
            );
            Ok(())
        }
        ReachCmd::Deny { id } => {
            let r = engine.decide_oauth_request(&id, false).map_err(fail)?;
            outln!("Denied {}.", r.id);
            Ok(())
        }
    }
}

/// The API key of OpenAI's tunnel `id`, from standard input (never an argument, which other
/// users' `ps` shows). `None` keeps the one Sluice has for this tunnel.
fn api_key_from_stdin(engine: &Engine, id: &str) -> Result<Option<ApiKey>> {
    use std::io::{BufRead, IsTerminal};
    let kept = engine.openai_api_key(id).is_ok();
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        if kept {
            return Ok(None);
        }
        eprint!("Paste the tunnel's API key, then Enter: ");
    }
    let mut line = zeroize::Zeroizing::new(String::new());
    stdin.lock().read_line(&mut line)?;
    match line.trim() {
        "" if kept => Ok(None),
        "" => bail!("give the tunnel's API key on standard input (from platform.openai.com)"),
        key => Ok(Some(ApiKey::new(key))),
    }
}

/// The tunnel Sluice runs, as its supervisor last recorded it.
fn print_tunnel(status: Option<TunnelStatus>) {
    let Some(s) = status else {
        outln!("  tunnel: not started (Sluice starts it when the tray or `sluice serve` runs)");
        return;
    };
    let pid = s.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
    outln!("  tunnel: {}{pid}, {} restart(s)", s.state.as_str(), s.restarts);
    if let Some(message) = s.message {
        outln!("  tunnel said: {}", sluice_core::text::visible(&message));
    }
}
