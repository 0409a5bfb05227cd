//! Reach from the web in the window: the state Settings shows; turning it on or changing it,
//! through the user's own tunnel or one Sluice runs (after a native question that names what it
//! exposes and the program it runs); turning it off; and the user's decision on a connection
//! request (approving asks natively too: it lets an assistant on the internet in).
//!
//! Everything a hosted assistant chose (its name, where it returns) reaches the window and the
//! questions through [`visible`].

use sluice_core::{ErrorCode, Failure};
use sluice_engine::reach::{
    ApiKey, ClientIdentity, REQUEST_TTL, Reach, ReachRequest, Tunnel, TunnelStatus,
};
use sluice_engine::{Engine, OAuthDecision, OAuthRequest};

use crate::dispatch::Question;
use crate::*;

/// The loopback port the tunnel forwards to unless the user names one (as `sluice reach on`).
pub const DEFAULT_REACH_PORT: u16 = sluice_engine::reach::DEFAULT_PORT;

/// The title of the dialog that confirms turning reach on.
pub const REACH_TITLE: &str = "Sluice — reach from the web?";
/// The title of the dialog that confirms letting a hosted assistant connect.
pub const CONNECT_TITLE: &str = "Sluice — let an assistant connect?";

/// Whether reach is on, what it exposes, who asks to connect, how many remote tokens live.
pub fn reach_state(engine: &Engine) -> Res<ReachStateDto> {
    let remote_tokens =
        engine.tokens()?.iter().filter(|t| t.remote && t.revoked_ms.is_none()).count();
    let Some(reach) = engine.reach()? else {
        return Ok(ReachStateDto {
            setting: None,
            requests: Vec::new(),
            remote_tokens: count(remote_tokens),
        });
    };
    let names = project_names(engine)?;
    let requests = engine.oauth_requests()?.iter().map(request_dto).collect();
    Ok(ReachStateDto {
        setting: Some(setting_dto(&reach, &names, engine.tunnel_status()?)),
        requests,
        remote_tokens: count(remote_tokens),
    })
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn setting_dto(
    reach: &Reach,
    names: &[(String, String)],
    status: Option<TunnelStatus>,
) -> ReachSettingDto {
    ReachSettingDto {
        public_url: reach.ready().then(|| reach.public_url.clone()),
        connector_url: reach.ready().then(|| reach.resource()),
        tunnel: reach.tunnel.as_ref().map(|t| TunnelDto {
            name: t.describe(),
            state: status.as_ref().map(|s| s.state.as_str().to_owned()),
            restarts: status.as_ref().map_or(0, |s| s.restarts),
            message: status.and_then(|s| s.message).map(|m| visible(&m)),
            choice: TunnelChoiceDto {
                kind: t.kind().to_owned(),
                name: t.name().map(str::to_owned),
                command: t.command_line(),
            },
        }),
        given_url: (!reach.learned && reach.ready()).then(|| reach.public_url.clone()),
        port: reach.port,
        projects: reach
            .projects
            .iter()
            .map(|id| ScopeEntry { id: id.as_str().to_owned(), name: name_of(names, id.as_str()) })
            .collect(),
        write: reach.write,
        redirects: reach.redirects.clone(),
    }
}

fn request_dto(r: &OAuthRequest) -> ConnectionRequestDto {
    let identity = ClientIdentity::of(&r.client_id, &r.client_name);
    ConnectionRequestDto {
        id: r.id.clone(),
        client_name: visible(identity.name()),
        verified_host: identity.verified_host().map(visible),
        redirect_host: visible(r.redirect_host()),
        code: r.user_code.clone(),
        created_ms: r.created_ms,
        expires_ms: r.expires_ms,
        tampered: r.tampered,
    }
}

/// Checks what the window sent, exactly as turning reach on would: a bad URL, port, project or
/// redirect URI is an error before anyone is asked.
pub fn check_reach_on(engine: &Engine, args: &ReachOn) -> Res<(ReachRequest, Reach)> {
    let tunnel = args
        .tunnel
        .as_ref()
        .map(|t| Tunnel::from_choice(&t.kind, t.name.as_deref(), t.command.as_deref()))
        .transpose()?;
    let req = ReachRequest {
        url: args.url.clone(),
        port: args.port.unwrap_or(DEFAULT_REACH_PORT),
        projects: args.projects.clone(),
        write: args.write,
        redirects: args.redirects.clone().unwrap_or_default(),
        tunnel,
        api_key: args.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty()).map(ApiKey::new),
    };
    let next = engine.check_reach(&req)?;
    Ok((req, next))
}

/// The question before `next` is stored, or `None` when it exposes nothing that `now` does
/// not (the same address and tunnel, no new project, no writes or redirect URIs added). A
/// tunnel Sluice is to run is named, with the program the trusted PATH resolves it to.
pub fn reach_question(engine: &Engine, now: Option<&Reach>, next: &Reach) -> Res<Option<Question>> {
    let narrower = now.is_some_and(|now| {
        now.public_url == next.public_url
            && now.tunnel == next.tunnel
            && next.projects.iter().all(|p| now.projects.contains(p))
            && (now.write || !next.write)
            && next.redirects.iter().all(|r| now.redirects.contains(r))
    });
    if narrower {
        return Ok(None);
    }
    let projects = project_list(engine, next)?;
    let what = if next.write {
        "read, change files and run what each project allows"
    } else {
        "only read (read-only)"
    };
    let address = if let Some(tunnel @ Tunnel::OpenAi { .. }) = &next.tunnel {
        tunnel.describe()
    } else if next.ready() {
        visible(&next.resource())
    } else {
        "the address the tunnel announces".to_owned()
    };
    let mut text = format!(
        "Let hosted assistants you approve (ChatGPT, Claude.ai) reach {projects} from the \
         internet, through {address}?\n\n{}They may {what}. Commands in \"any\" mode are never \
         exposed to a remote token. Each assistant asks to connect first, and you approve it in \
         Sluice; turning reach off revokes them all.",
        tunnel_paragraph(engine, next)?,
    );
    if !next.redirects.is_empty() {
        let shown: Vec<String> = next.redirects.iter().map(|r| visible(r)).collect();
        text.push_str(&format!(" Also accepted as redirect URIs: {}.", shown.join(", ")));
    }
    let yes = if now.is_some() { "Change" } else { "Turn on" };
    Ok(Some(Question { title: REACH_TITLE, text, yes, no: "Keep as is" }))
}

/// What Sluice is to run for `reach`, as a paragraph of the question (empty when the user runs
/// their own tunnel): the tunnel, its program as named and as the trusted PATH resolves it.
fn tunnel_paragraph(engine: &Engine, reach: &Reach) -> Res<String> {
    let Some(tunnel) = &reach.tunnel else { return Ok(String::new()) };
    if !tunnel.runs_program() {
        return Ok(format!(
            "Sluice will poll OpenAI for {} with its API key, until reach is off. Every \
             connector of your OpenAI organisation that may use this tunnel can then use \
             Sluice without asking again: the tunnel is its authentication.\n\n",
            tunnel.describe()
        ));
    }
    let (program, _) = engine.tunnel_command(reach)?;
    let mut text = format!(
        "Sluice will run {}: the program {} ({}), forwarding to http://127.0.0.1:{}, started \
         again if it ends, until reach is off.",
        tunnel.describe(),
        tunnel.program(),
        visible(&program.display().to_string()),
        reach.port,
    );
    if *tunnel == Tunnel::Cloudflared {
        text.push_str(
            " A quick tunnel gets a new address every time it starts: connectors added with the \
             old address stop working.",
        );
    }
    text.push_str("\n\n");
    Ok(text)
}

/// The names of the projects `reach` exposes, made visible, in alphabetical order.
fn project_list(engine: &Engine, reach: &Reach) -> Res<String> {
    let names = project_names(engine)?;
    let mut shown: Vec<String> = reach
        .projects
        .iter()
        .map(|id| visible(&name_of(&names, id.as_str()).unwrap_or_else(|| id.as_str().to_owned())))
        .collect();
    shown.sort();
    Ok(shown.join(", "))
}

/// Stores the checked setting (after the user's answer).
pub fn reach_on(engine: &Engine, req: &ReachRequest) -> Res<ReachStateDto> {
    engine.set_reach(req)?;
    reach_state(engine)
}

/// Turns reach off; returns how many remote tokens this revoked.
pub fn reach_off(engine: &Engine) -> Res<u32> {
    Ok(count(engine.reach_off()?))
}

/// The request `id` if it can still be decided; else why not, changing nothing.
pub fn decidable_request(engine: &Engine, id: &str) -> Res<OAuthRequest> {
    let not_found = || {
        IpcError::from(Failure::new(
            ErrorCode::NotFound,
            format!("no connection request {}", visible(id)),
        ))
    };
    let request = engine.oauth_request(id)?.ok_or_else(not_found)?;
    if request.decision != OAuthDecision::Pending {
        return Err(Failure::new(
            ErrorCode::Conflict,
            format!("this connection request was already {}", request.decision.as_str()),
        )
        .into());
    }
    if request.expires_ms <= sluice_engine::now_ms() {
        return Err(Failure::new(
            ErrorCode::Conflict,
            format!(
                "this connection request expired (requests wait {} minutes); the assistant can \
                 ask again",
                REQUEST_TTL.as_secs() / 60
            ),
        )
        .into());
    }
    if request.tampered {
        return Err(Failure::new(
            ErrorCode::Forbidden,
            "this connection request was changed outside Sluice: it counts as denied",
        )
        .into());
    }
    Ok(request)
}

/// The question before approving `request`: who, the code to compare, where it returns, and
/// what it will get.
pub fn connect_question(engine: &Engine, request: &OAuthRequest) -> Res<Question> {
    let what = match engine.reach()? {
        Some(reach) => {
            let mode = if reach.write { "read and change" } else { "read" };
            format!("It may {mode} {} until you turn reach off.", project_list(engine, &reach)?)
        }
        None => "Reach from the web is off, so it gets nothing until you turn it on.".to_owned(),
    };
    let text = format!(
        "Let {} connect to Sluice from the web?\n\nCode {} — approve only if your browser \
         shows this code. It returns to {}. {what}",
        visible(&ClientIdentity::of(&request.client_id, &request.client_name).label()),
        visible(&request.user_code),
        visible(request.redirect_host()),
    );
    Ok(Question { title: CONNECT_TITLE, text, yes: "Approve", no: "Don't approve" })
}

/// Decides request `id` (after the user's answer, when approving).
pub fn reach_decide(engine: &Engine, id: &str, approve: bool) -> Res<ReachStateDto> {
    decidable_request(engine, id)?;
    engine.decide_oauth_request(id, approve)?;
    reach_state(engine)
}
