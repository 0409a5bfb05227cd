//! `sluice reach`: reach from hosted assistants (ChatGPT, Claude.ai) through a tunnel the user
//! runs. Off by default; `on` says what it exposes, `requests` lists the connection requests
//! waiting, `approve`/`deny` decide them (the consent page in the browser never does).

use anyhow::{Result, bail};
use clap::Subcommand;
use sluice_engine::Engine;
use sluice_engine::reach::REQUEST_TTL;

/// The loopback port the tunnel connects to unless told otherwise.
const DEFAULT_REACH_PORT: u16 = 7879;

#[derive(Subcommand)]
pub enum ReachCmd {
    /// Turn reach on: hosted assistants may ask to connect through your tunnel.
    On {
        /// The tunnel's public address, e.g. https://sluice.example.com (no path).
        #[arg(long, value_name = "URL")]
        url: String,
        /// The port on 127.0.0.1 your tunnel forwards to (not the local clients' port).
        #[arg(long, default_value_t = DEFAULT_REACH_PORT)]
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
        ReachCmd::On { url, port, projects, write, redirects } => {
            let reach = engine.set_reach(&url, port, &projects, write, &redirects).map_err(fail)?;
            println!("Reach from the web is on.");
            println!("  Public MCP URL: {}", reach.resource());
            println!(
                "  Your tunnel must forward {} to http://127.0.0.1:{}",
                reach.public_url, reach.port
            );
            println!(
                "  Remote assistants may {} in {} project(s); commands in `any` mode are never exposed.",
                if reach.write {
                    "read, change and run what each project allows"
                } else {
                    "only read"
                },
                reach.projects.len()
            );
            println!("  Each assistant that connects asks first: `sluice reach requests`.");
            Ok(())
        }
        ReachCmd::Off => {
            let revoked = engine.reach_off().map_err(fail)?;
            println!("Reach from the web is off; {revoked} remote token(s) revoked.");
            Ok(())
        }
        ReachCmd::Status => {
            match engine.reach().map_err(fail)? {
                None => println!("Reach from the web is off."),
                Some(reach) => {
                    println!("Reach from the web is on: {}", reach.resource());
                    println!("  tunnel port: 127.0.0.1:{}", reach.port);
                    println!(
                        "  writes: {}",
                        if reach.write { "allowed" } else { "no (read-only)" }
                    );
                    for id in &reach.projects {
                        println!("  project: {id}");
                    }
                }
            }
            Ok(())
        }
        ReachCmd::Requests => {
            let requests = engine.oauth_requests().map_err(fail)?;
            if requests.is_empty() {
                println!("No connection request is waiting.");
            }
            for r in requests {
                println!(
                    "{}  code {}  {} (returns to {}){}",
                    r.id,
                    r.user_code,
                    sluice_core::text::visible(&r.client_name),
                    sluice_core::text::visible(r.redirect_host()),
                    if r.tampered { "  [changed outside Sluice]" } else { "" }
                );
            }
            println!(
                "Approve only a request whose code your browser shows; requests expire after {} minutes.",
                REQUEST_TTL.as_secs() / 60
            );
            Ok(())
        }
        ReachCmd::Approve { id } | ReachCmd::Deny { id } if id.trim().is_empty() => {
            bail!("name the request (its id from `sluice reach requests`)")
        }
        ReachCmd::Approve { id } => {
            let r = engine.decide_oauth_request(&id, true).map_err(fail)?;
            println!(
                "Approved {} ({}); the browser continues to the assistant.",
                r.id,
                sluice_core::text::visible(&r.client_name)
            );
            Ok(())
        }
        ReachCmd::Deny { id } => {
            let r = engine.decide_oauth_request(&id, false).map_err(fail)?;
            println!("Denied {}.", r.id);
            Ok(())
        }
    }
}
