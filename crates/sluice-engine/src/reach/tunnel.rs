//! The tunnel Sluice runs for reach from the web: which program, with which arguments, and how
//! its public address is recognised in what it prints.
//!
//! The user picks the tunnel (`sluice reach on --tunnel …`, the window); nothing remote can.
//! The program is resolved on the trusted PATH, never inside a project. Quick tunnels and
//! Tailscale Funnel choose the address themselves: the first address of the expected shape the
//! process prints is learned into the (sealed) setting, once per run of the process, so tokens
//! stay bound to the address that is live. The process itself is started, watched and stopped
//! by the listener's owner (`sluice_mcp::reach`); its state is kept here for every window and
//! CLI to show.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sluice_core::{ErrorCode, Failure};
use sluice_exec::TrustedPath;

use super::{Reach, parse_public_url};
use crate::{Engine, store_failure};

/// The kv key of the tunnel's last known state.
const STATUS_KEY: &str = "reach.tunnel";
/// The longest command a user may give, all arguments together.
const MAX_COMMAND_BYTES: usize = 4096;

/// A tunnel Sluice starts and stops with reach: what the user picked (`sluice reach on
/// --tunnel …`, the window's form) through [`Tunnel::from_choice`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Tunnel {
    /// A Cloudflare quick tunnel (`cloudflared tunnel --url …`): no account, and a new
    /// `trycloudflare.com` address every run, which a connector then no longer reaches.
    Cloudflared,
    /// A named Cloudflare tunnel (`cloudflared tunnel run NAME`): the user's own hostname,
    /// given as the public URL.
    CloudflaredNamed { name: String },
    /// Tailscale Funnel (`tailscale funnel PORT`): the machine's `ts.net` name, TLS ending on
    /// this machine.
    Tailscale,
    /// ngrok (`ngrok http …`): its address, or the reserved domain given as the public URL.
    Ngrok,
    /// A command of the user's own; `{port}` in an argument is replaced by the tunnel port.
    Command { argv: Vec<String> },
    /// OpenAI's Secure MCP Tunnel: no program and no port. Sluice itself polls OpenAI for the
    /// connector's requests with the tunnel's API key (`sluice_mcp::openai`).
    #[serde(rename = "openai")]
    OpenAi { tunnel_id: String },
}

impl Tunnel {
    /// The kinds a user picks from, as the CLI and the window name them.
    pub const KINDS: [&str; 6] =
        ["cloudflared", "cloudflared-named", "tailscale", "ngrok", "command", "openai"];

    /// The tunnel the user picked: `kind` one of [`Tunnel::KINDS`], with `name` for a named
    /// Cloudflare tunnel or the ID of OpenAI's Secure MCP Tunnel, and `command` for a command of the user's own (split like a shell
    /// would, with no shell; `{port}` stays for the tunnel port). What the kind does not take
    /// is refused, so nothing the user typed is silently dropped. The rest (a name's shape, the
    /// URL the kind needs, the program on the trusted PATH) is checked when reach is set.
    pub fn from_choice(
        kind: &str,
        name: Option<&str>,
        command: Option<&str>,
    ) -> Result<Tunnel, Failure> {
        let bad = |m: String| Err(Failure::new(ErrorCode::InvalidArgument, m));
        let given = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        let (name, command) = (given(name), given(command));
        let tunnel = match kind {
            "cloudflared" => Tunnel::Cloudflared,
            "tailscale" => Tunnel::Tailscale,
            "ngrok" => Tunnel::Ngrok,
            "cloudflared-named" => match name.clone() {
                Some(name) => Tunnel::CloudflaredNamed { name },
                None => return bad("a named Cloudflare tunnel needs the tunnel's name".to_owned()),
            },
            "openai" => match name.clone() {
                Some(tunnel_id) => Tunnel::OpenAi { tunnel_id },
                None => {
                    return bad(
                        "OpenAI's Secure MCP Tunnel needs the tunnel's ID (tunnel_…)".to_owned()
                    );
                }
            },
            "command" => match command.as_deref().map(shlex::split) {
                Some(Some(argv)) if argv.is_empty() => {
                    return bad("the tunnel command is empty".to_owned());
                }
                Some(Some(argv)) => Tunnel::Command { argv },
                Some(None) => {
                    return bad("unbalanced quotes: a ' or \" in the tunnel command is not \
                                closed"
                        .to_owned());
                }
                None => {
                    return bad("the tunnel command is empty: give the program and its \
                                    arguments"
                        .to_owned());
                }
            },
            other => {
                return bad(format!(
                    "unknown tunnel kind `{}`: choose one of {}",
                    sluice_core::text::visible(other),
                    Tunnel::KINDS.join(", ")
                ));
            }
        };
        if name.is_some() && !matches!(kind, "cloudflared-named" | "openai") {
            return bad(format!("{} takes no tunnel name", tunnel.describe()));
        }
        if command.is_some() && kind != "command" {
            return bad(format!("{} takes no command", tunnel.describe()));
        }
        Ok(tunnel)
    }

    /// Its kind, one of [`Tunnel::KINDS`]: with [`Tunnel::name`] and [`Tunnel::command_line`],
    /// what gives it back through [`Tunnel::from_choice`] (a form that changes it).
    pub fn kind(&self) -> &'static str {
        match self {
            Tunnel::Cloudflared => "cloudflared",
            Tunnel::CloudflaredNamed { .. } => "cloudflared-named",
            Tunnel::Tailscale => "tailscale",
            Tunnel::Ngrok => "ngrok",
            Tunnel::Command { .. } => "command",
            Tunnel::OpenAi { .. } => "openai",
        }
    }

    /// A named Cloudflare tunnel's name, or the ID of OpenAI's tunnel.
    pub fn name(&self) -> Option<&str> {
        match self {
            Tunnel::CloudflaredNamed { name } | Tunnel::OpenAi { tunnel_id: name } => Some(name),
            _ => None,
        }
    }

    /// A command of the user's own as one line that splits back into the same arguments. One
    /// that holds characters [`sluice_core::text::visible`] would change is `None` (the user
    /// types it again) rather than shown as something it is not.
    pub fn command_line(&self) -> Option<String> {
        let Tunnel::Command { argv } = self else { return None };
        let line = shlex::try_join(argv.iter().map(String::as_str)).ok()?;
        (sluice_core::text::visible(&line) == line.as_str()).then_some(line)
    }

    /// Whether Sluice runs a program for it (every tunnel but OpenAI's, which Sluice speaks
    /// itself).
    pub fn runs_program(&self) -> bool {
        !matches!(self, Tunnel::OpenAi { .. })
    }

    /// The program it runs, before the trusted PATH resolves it (`cloudflared`, or the first
    /// word of the user's command), made visible; empty for OpenAI's tunnel.
    pub fn program(&self) -> String {
        sluice_core::text::visible(self.argv(0, None).first().map_or("", String::as_str))
            .into_owned()
    }

    /// Checks what the user asked for; `url` is the public URL they gave, if any.
    pub fn validate(&self, url: Option<&str>) -> Result<(), Failure> {
        let bad = |m: &str| Err(Failure::new(ErrorCode::InvalidArgument, m));
        match self {
            Tunnel::Cloudflared if url.is_some() => {
                bad("a quick tunnel's address is chosen by Cloudflare on every run: leave out the \
                 URL, or use a named tunnel for a stable hostname")
            }
            Tunnel::CloudflaredNamed { .. } if url.is_none() => {
                bad("a named tunnel needs its public hostname as the URL (https://…)")
            }
            Tunnel::CloudflaredNamed { name }
                if name.is_empty()
                    || name.len() > 64
                    || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) =>
            {
                bad("a tunnel name is 1–64 letters, digits, `.`, `_` or `-`")
            }
            Tunnel::Command { argv } if argv.first().is_none_or(|p| p.trim().is_empty()) => {
                bad("the tunnel command is empty")
            }
            Tunnel::OpenAi { .. } if url.is_some() => bad(
                "a connector reaches OpenAI's tunnel through OpenAI, by the tunnel's ID: leave \
                 out the URL",
            ),
            Tunnel::OpenAi { tunnel_id }
                if tunnel_id.is_empty()
                    || tunnel_id.len() > 128
                    || !tunnel_id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_-".contains(&b)) =>
            {
                bad("a tunnel ID is 1–128 letters, digits, `_` or `-` (tunnel_…)")
            }
            Tunnel::Command { argv }
                if argv.iter().map(String::len).sum::<usize>() > MAX_COMMAND_BYTES
                    || argv.iter().any(|a| a.contains('\0')) =>
            {
                bad("the tunnel command is too long or holds a NUL character")
            }
            _ => Ok(()),
        }
    }

    /// What it is, for a sentence ("Sluice runs …").
    pub fn describe(&self) -> String {
        match self {
            Tunnel::Cloudflared => "a Cloudflare quick tunnel".to_owned(),
            Tunnel::CloudflaredNamed { name } => format!("the Cloudflare tunnel {name}"),
            Tunnel::Tailscale => "Tailscale Funnel".to_owned(),
            Tunnel::Ngrok => "ngrok".to_owned(),
            Tunnel::Command { argv } => {
                format!("`{}`", sluice_core::text::visible(&argv.join(" ")))
            }
            Tunnel::OpenAi { tunnel_id } => format!("OpenAI's Secure MCP Tunnel {tunnel_id}"),
        }
    }

    /// The program and its arguments for the tunnel port `port`; `url` is the public URL when
    /// the user gave one.
    fn argv(&self, port: u16, url: Option<&str>) -> Vec<String> {
        let (origin, port_text) = (format!("http://127.0.0.1:{port}"), port.to_string());
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let cloudflared = ["cloudflared", "tunnel", "--no-autoupdate"];
        let mut argv = match self {
            Tunnel::Cloudflared => words(&[&cloudflared[..], &["--url", &origin]].concat()),
            Tunnel::CloudflaredNamed { name } => {
                words(&[&cloudflared[..], &["run", "--url", &origin, name]].concat())
            }
            Tunnel::Tailscale => words(&["tailscale", "funnel", &port_text]),
            Tunnel::Ngrok => words(&[
                "ngrok",
                "http",
                &format!("127.0.0.1:{port}"),
                "--log",
                "stdout",
                "--log-format",
                "logfmt",
            ]),
            Tunnel::Command { argv } => {
                argv.iter().map(|a| a.replace("{port}", &port_text)).collect()
            }
            Tunnel::OpenAi { .. } => Vec::new(),
        };
        if let (Tunnel::Ngrok, Some(url)) = (self, url) {
            argv.extend(words(&["--url", url]));
        }
        argv
    }

    /// The public address in one line the tunnel printed: an `https://` address with no path
    /// beyond `/`, on the host this kind of tunnel hands out (any host for a command of the
    /// user's own).
    pub fn address_in(&self, line: &str) -> Option<String> {
        let suffixes: &[&str] = match self {
            Tunnel::Cloudflared => &[".trycloudflare.com"],
            Tunnel::Tailscale => &[".ts.net"],
            Tunnel::Ngrok => {
                &[".ngrok-free.app", ".ngrok-free.dev", ".ngrok.app", ".ngrok.dev", ".ngrok.io"]
            }
            Tunnel::Command { .. } => &[""],
            Tunnel::CloudflaredNamed { .. } | Tunnel::OpenAi { .. } => &[],
        };
        line.match_indices("https://").find_map(|(at, _)| {
            let rest = &line[at..];
            let end = rest
                .find(|c: char| c.is_whitespace() || "|\"'<>`".contains(c))
                .unwrap_or(rest.len());
            let candidate = rest[..end].trim_end_matches(['.', ',', ';', ')']);
            let url = parse_public_url(candidate.trim_end_matches('/')).ok()?;
            let host = url.strip_prefix("https://")?.split(':').next()?.to_ascii_lowercase();
            suffixes.iter().any(|s| host.ends_with(s) && host.len() > s.len()).then_some(url)
        })
    }
}

/// What the tunnel process is doing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TunnelState {
    #[default]
    Starting,
    Running,
    /// It ended; it starts again after a pause.
    Restarting,
    /// It could not be started (the program missing, say); tried again after a pause.
    Failed,
}

impl TunnelState {
    pub fn as_str(self) -> &'static str {
        match self {
            TunnelState::Starting => "starting",
            TunnelState::Running => "running",
            TunnelState::Restarting => "restarting",
            TunnelState::Failed => "failed",
        }
    }
}

/// What the tunnel process is doing, as its supervisor last wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelStatus {
    pub state: TunnelState,
    pub pid: Option<u32>,
    /// Times the process was started again after it ended.
    pub restarts: u32,
    /// Its last line of output, or why it could not start, made safe to show.
    pub message: Option<String>,
    pub since_ms: i64,
}

impl Reach {
    /// Whether the public address is known: a tunnel that announces its own address has not
    /// yet done so otherwise.
    pub fn ready(&self) -> bool {
        !self.public_url.is_empty()
    }

    /// What identifies the tunnel process this setting needs: a change to anything in it
    /// starts the process again; an address the process announced itself does not.
    pub fn tunnel_key(&self) -> Option<(Tunnel, u16, Option<&str>)> {
        let given = (!self.learned).then_some(self.public_url.as_str());
        self.tunnel.clone().map(|t| (t, self.port, given))
    }
}

impl Engine {
    /// The tunnel program for `reach`, resolved on the trusted PATH (never inside a project),
    /// and its arguments.
    pub fn tunnel_command(&self, reach: &Reach) -> Result<(PathBuf, Vec<String>), Failure> {
        let tunnel = reach.tunnel.as_ref().ok_or_else(|| {
            Failure::new(ErrorCode::InvalidArgument, "reach runs no tunnel of Sluice's")
        })?;
        let given = (!reach.learned && reach.ready()).then_some(reach.public_url.as_str());
        let mut argv = tunnel.argv(reach.port, given);
        let roots: Vec<PathBuf> = self.projects()?.into_iter().map(|p| p.root).collect();
        let program = TrustedPath::from_env(&roots).resolve(&argv.remove(0)).map_err(|e| {
            Failure::new(ErrorCode::NotFound, format!("the tunnel program: {}", Failure::from(e)))
        })?;
        Ok((program, argv))
    }

    /// The tunnel of `expected` announced `url`: it becomes the public address, if the setting
    /// is still `expected` and its address is one the tunnel chooses. Returns whether it
    /// changed anything.
    pub fn tunnel_announced(&self, expected: &Reach, url: &str) -> Result<bool, Failure> {
        let url = parse_public_url(url)?;
        let current = self.reach()?;
        let same = |r: &Reach| r.learned && r.tunnel_key() == expected.tunnel_key();
        let Some(mut reach) = current.filter(same) else {
            return Ok(false);
        };
        if reach.public_url == url {
            return Ok(false);
        }
        reach.public_url = url;
        self.store_reach(&reach)?;
        self.record_human_detail(
            "reach.address",
            None,
            crate::AuditOutcome::Ok,
            None,
            Some(reach.public_url.clone()),
        );
        Ok(true)
    }

    /// The tunnel's last known state, if Sluice runs one.
    pub fn tunnel_status(&self) -> Result<Option<TunnelStatus>, Failure> {
        let text = self.store.kv_get(STATUS_KEY).map_err(store_failure)?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Records the tunnel's state as of now (`None`: Sluice runs no tunnel now); the window
    /// redraws.
    pub fn set_tunnel_status(&self, status: Option<&TunnelStatus>) -> Result<(), Failure> {
        match status {
            Some(s) => {
                let stamped = TunnelStatus { since_ms: sluice_store::now_ms(), ..s.clone() };
                let text = serde_json::to_string(&stamped)
                    .map_err(|e| Failure::new(ErrorCode::Internal, e.to_string()))?;
                self.store.kv_set(STATUS_KEY, &text).map_err(store_failure)?;
            }
            None => {
                self.store.kv_delete(STATUS_KEY).map_err(store_failure)?;
            }
        }
        self.emit(crate::EngineEvent::AccessChanged { paused: self.is_paused().unwrap_or(true) });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tunnel_announces_its_address_in_its_own_words() {
        // As each prints it (cloudflared 2025.x, tailscale 1.8x, ngrok v3 logfmt).
        let quick = "2026-12-02T10:00:00Z INF |  https://calm-river-1234.trycloudflare.com   |";
        assert_eq!(
            Tunnel::Cloudflared.address_in(quick).as_deref(),
            Some("https://calm-river-1234.trycloudflare.com")
        );
        let docs = "INF Requesting new quick Tunnel on trycloudflare.com... see \
                    https://developers.cloudflare.com/cloudflare-one/connections/";
        assert_eq!(Tunnel::Cloudflared.address_in(docs), None, "a link with a path is not it");
        let funnel = "https://laptop.tail1234.ts.net/";
        assert_eq!(
            Tunnel::Tailscale.address_in(funnel).as_deref(),
            Some("https://laptop.tail1234.ts.net")
        );
        let ngrok = "t=2026-12-02T10:00:00+0000 lvl=info msg=\"started tunnel\" obj=tunnels \
                     name=command_line addr=http://127.0.0.1:7879 url=https://ab12-34.ngrok-free.app";
        assert_eq!(
            Tunnel::Ngrok.address_in(ngrok).as_deref(),
            Some("https://ab12-34.ngrok-free.app")
        );
        let own = Tunnel::Command { argv: vec!["lt".into()] };
        assert_eq!(
            own.address_in("your url is: https://x.loca.lt.").as_deref(),
            Some("https://x.loca.lt")
        );
    }

    #[test]
    fn an_address_of_another_shape_or_host_is_never_learned() {
        for line in [
            "https://evil.example",
            "https://trycloudflare.com",
            "https://x.trycloudflare.com.evil.example",
            "https://x.trycloudflare.com/path",
            "https://x.trycloudflare.com?q=1",
            "https://user@x.trycloudflare.com",
            "http://x.trycloudflare.com",
        ] {
            assert_eq!(Tunnel::Cloudflared.address_in(line), None, "{line}");
        }
        assert_eq!(Tunnel::CloudflaredNamed { name: "n".into() }.address_in("https://a.b"), None);
    }

    #[test]
    fn tunnel_commands_run_against_the_tunnel_port_only() {
        assert_eq!(
            Tunnel::Cloudflared.argv(7879, None),
            ["cloudflared", "tunnel", "--no-autoupdate", "--url", "http://127.0.0.1:7879"]
        );
        assert_eq!(Tunnel::Tailscale.argv(7879, None), ["tailscale", "funnel", "7879"]);
        let ngrok = Tunnel::Ngrok.argv(7879, Some("https://me.ngrok.app"));
        assert_eq!(&ngrok[..3], ["ngrok", "http", "127.0.0.1:7879"]);
        assert_eq!(&ngrok[ngrok.len() - 2..], ["--url", "https://me.ngrok.app"]);
        let own = Tunnel::Command { argv: vec!["edge".into(), "--to={port}".into()] };
        assert_eq!(own.argv(9, None), ["edge", "--to=9"]);
    }

    #[test]
    fn what_the_user_asks_for_is_checked() {
        assert!(Tunnel::Cloudflared.validate(Some("https://a.example")).is_err());
        assert!(Tunnel::Cloudflared.validate(None).is_ok());
        assert!(Tunnel::CloudflaredNamed { name: "home".into() }.validate(None).is_err());
        for name in ["", "a b", "../x", "x;y"] {
            let t = Tunnel::CloudflaredNamed { name: name.into() };
            assert!(t.validate(Some("https://a.example")).is_err(), "{name:?}");
        }
        assert!(Tunnel::Command { argv: vec![] }.validate(None).is_err());
        assert!(Tunnel::Command { argv: vec!["a\0".into()] }.validate(None).is_err());
        let openai = |id: &str| Tunnel::OpenAi { tunnel_id: id.into() };
        assert!(openai("tunnel_0123abc").validate(None).is_ok());
        assert!(openai("tunnel_0123abc").validate(Some("https://a.example")).is_err());
        for id in ["", "tunnel x", "tunnel/../x", "tunnel_\u{202E}", &"x".repeat(129)] {
            assert!(openai(id).validate(None).is_err(), "{id:?}");
        }
        assert!(!openai("t").runs_program() && Tunnel::Cloudflared.runs_program());
        assert_eq!(openai("t").argv(1, None), Vec::<String>::new(), "no program runs for it");
    }

    #[test]
    fn a_choice_becomes_a_tunnel_and_back() {
        let own = Tunnel::from_choice("command", None, Some("edge --to 'a b' {port}")).unwrap();
        assert_eq!(
            own,
            Tunnel::Command {
                argv: vec!["edge".into(), "--to".into(), "a b".into(), "{port}".into()]
            }
        );
        for tunnel in [
            Tunnel::Cloudflared,
            Tunnel::CloudflaredNamed { name: "home".into() },
            Tunnel::Tailscale,
            Tunnel::Ngrok,
            own,
            Tunnel::Command { argv: vec!["a\"b".into(), "it's".into(), String::new()] },
            Tunnel::OpenAi { tunnel_id: "tunnel_0123abc".into() },
        ] {
            let back =
                Tunnel::from_choice(tunnel.kind(), tunnel.name(), tunnel.command_line().as_deref());
            assert_eq!(back.as_ref(), Ok(&tunnel), "{tunnel:?}");
            assert!(Tunnel::KINDS.contains(&tunnel.kind()));
        }
        assert_eq!(Tunnel::Cloudflared.program(), "cloudflared");
        let hidden = Tunnel::Command { argv: vec!["evil\u{202E}".into()] };
        assert_eq!(hidden.program(), "evil⟨U+202E⟩");
        assert_eq!(hidden.command_line(), None, "never pre-filled as something it is not");
    }

    #[test]
    fn a_bad_choice_is_refused_with_a_sentence_that_says_why() {
        let refused = |kind: &str, name: Option<&str>, command: Option<&str>, says: &str| {
            let e = Tunnel::from_choice(kind, name, command).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{kind}");
            assert!(e.message.contains(says), "{kind} {name:?} {command:?}: {}", e.message);
        };
        refused("wireguard", None, None, "unknown tunnel kind `wireguard`: choose one of");
        refused("ngrok\u{202E}", None, None, "`ngrok⟨U+202E⟩`");
        refused("", None, None, "unknown tunnel kind");
        refused("cloudflared-named", None, None, "needs the tunnel's name");
        refused("cloudflared-named", Some("  "), None, "needs the tunnel's name");
        refused("command", None, None, "the tunnel command is empty");
        refused("command", None, Some(" \t"), "the tunnel command is empty");
        refused("command", None, Some("# only a comment"), "the tunnel command is empty");
        refused("command", None, Some("edge 'open"), "unbalanced quotes");
        refused("command", None, Some("edge \"open"), "unbalanced quotes");
        refused(
            "cloudflared",
            Some("home"),
            None,
            "a Cloudflare quick tunnel takes no tunnel name",
        );
        refused("tailscale", None, Some("rm -rf /"), "Tailscale Funnel takes no command");
        refused("command", Some("home"), Some("edge"), "takes no tunnel name");
        refused("openai", None, None, "needs the tunnel's ID");
        refused("openai", Some("tunnel_a"), Some("edge"), "takes no command");
    }
}
