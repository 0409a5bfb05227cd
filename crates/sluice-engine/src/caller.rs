//! Who is calling: an authenticated MCP client as the gate found it ([`Caller`]), local or
//! remote ([`RemoteCaller`]: a hosted assistant through the tunnel), and one of its requests as
//! the audit log records it ([`RequestAudit`]).

use sluice_core::{Profile, ProjectId, SelfLimit, TokenId};
use sluice_store::Project;

use crate::{AuditOutcome, Durability};

/// One MCP request, as [`Engine::audit_request`] records it.
#[derive(Debug, Clone, Copy)]
pub struct RequestAudit<'a> {
    pub caller: &'a Caller,
    /// The MCP method, or the tool a `tools/call` named.
    pub action: &'a str,
    /// The project the request named (an id or a name), when it named one.
    pub project_ref: Option<&'a str>,
    pub outcome: AuditOutcome,
    /// A stable error code when the outcome is not `ok`.
    pub error_code: Option<&'a str>,
    pub duration_ms: u64,
    /// The request's parameters: only a keyed hash of them is recorded.
    pub params: Option<&'a serde_json::Value>,
    pub durability: Durability,
}

/// An authenticated MCP client, as the gate found it.
#[derive(Debug, Clone)]
pub struct Caller {
    pub token_id: TokenId,
    pub label: String,
    /// `None`: every project; otherwise only these.
    pub scope: Option<Vec<ProjectId>>,
    /// The limit the token put on itself (`drop_privileges`); a paused token never gets this
    /// far, so here it is at most read-only.
    pub limit: Option<SelfLimit>,
    /// A hosted assistant's token, presented through the tunnel (commands in `any` mode are
    /// never run for it); `None` for a local client.
    pub remote: Option<RemoteCaller>,
    /// Reach exposes projects read-only (the default): this remote caller changes and runs
    /// nothing, whatever the project allows.
    pub read_only: bool,
    /// The tools this caller is offered: its token's profile, read from the store at this
    /// request (so a change made by another process applies at once); `full` for a hosted
    /// assistant's token, which reach's own setting narrows. Only ever narrows the project's
    /// modes.
    pub profile: Profile,
    /// When the engine's state this caller was authenticated against was read from the store
    /// (after the request arrived): a check right after it reuses that read
    /// ([`crate::Engine::check_access_for`]).
    pub loaded_at: std::time::Instant,
}

/// Where a remote caller came from: the OAuth client its grant names and the public address
/// (and tunnel) reach served it on. Recorded with each of its requests in the audit log.
#[derive(Debug, Clone)]
pub struct RemoteCaller {
    pub client_id: String,
    /// "sluice.example.com", or "abc.trycloudflare.com (tunnel: cloudflared)" for one Sluice
    /// runs.
    pub via: String,
}

impl Caller {
    /// Whether this is a hosted assistant's token, presented through the tunnel.
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// Whom rate limits count against: a local token, or a hosted client with every grant it
    /// holds (asking to connect again brings no fresh allowance).
    pub fn limit_key(&self) -> String {
        match &self.remote {
            Some(r) => format!("oauth:{}", r.client_id),
            None => self.token_id.as_str().to_owned(),
        }
    }

    /// Whether this caller's profile lets it change files (`edit` and above).
    pub fn may_change(&self) -> bool {
        self.profile >= Profile::Edit
    }

    /// Whether this caller's profile lets it run commands (`agent` and above).
    pub fn may_run(&self) -> bool {
        self.profile >= Profile::Agent
    }

    /// Whether this caller sees `project`: the one place scope is applied. A worktree project
    /// is seen exactly when its parent is (a scoped token inherits it through `worktree_of`).
    pub(crate) fn sees(&self, project: &Project) -> bool {
        self.scope.as_ref().is_none_or(|s| {
            s.contains(&project.id) || project.worktree_of.as_ref().is_some_and(|p| s.contains(p))
        })
    }
}
