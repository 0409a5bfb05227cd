//! What a remote caller may do, derived again at every request: the grant's own record (the
//! projects and the read-only or write setting the person consented to: its token's scope and
//! profile, sealed) intersected with reach as it is set now. Narrowing reach narrows every
//! grant at its next request, whatever token (first or refreshed) it presents, and is written
//! into the grants for good ([`Engine::narrow_grants`]): widening reach later reaches only
//! grants consented to afterwards. And who a client is, as every surface shows it
//! ([`ClientIdentity`]).

use sluice_core::{ErrorCode, Failure, Profile, ProjectId};

use super::{REMOTE_TOKEN_PREFIX, Reach, Tunnel, cimd};
use crate::exec::EndedBy;
use crate::{AuditOutcome, Caller, Engine, store_failure};

/// Who a client is, as far as Sluice knows: the host of the metadata document it fetched, or
/// only the name the client gave itself when it registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientIdentity {
    /// Named by a client ID metadata document Sluice fetched from `host` over HTTPS; `name` is
    /// the document's `client_name`.
    Verified { name: String, host: String },
    /// Registered itself (RFC 7591): `name` is its own claim, and nothing checked it.
    Claimed { name: String },
}

impl ClientIdentity {
    /// The identity of client `client_id`, recorded under `name` (a metadata document's client
    /// is recorded as "Name (host)").
    pub fn of(client_id: &str, name: &str) -> ClientIdentity {
        match cimd::metadata_url_host(client_id) {
            Ok(host) if cimd::is_metadata_client_id(client_id) => {
                let suffix = format!(" ({host})");
                let name = name.strip_suffix(&suffix).unwrap_or(name).to_owned();
                ClientIdentity::Verified { name, host }
            }
            _ => ClientIdentity::Claimed { name: name.to_owned() },
        }
    }

    /// The name, verified or claimed (control characters made visible by the caller's surface).
    pub fn name(&self) -> &str {
        match self {
            ClientIdentity::Verified { name, .. } | ClientIdentity::Claimed { name } => name,
        }
    }

    /// The host that vouches for the client, when one does.
    pub fn verified_host(&self) -> Option<&str> {
        match self {
            ClientIdentity::Verified { host, .. } => Some(host),
            ClientIdentity::Claimed { .. } => None,
        }
    }

    /// One line for the text surfaces (CLI, tray, native question, audit): a verified client
    /// as `Claude (verified: claude.ai)`, a claimed name quoted and marked, so a registration
    /// named "Claude (verified: claude.ai)" still reads as the claim it is.
    pub fn label(&self) -> String {
        match self {
            ClientIdentity::Verified { name, host } => format!("{name} (verified: {host})"),
            ClientIdentity::Claimed { name } => format!("\u{201C}{name}\u{201D} (unverified name)"),
        }
    }
}

/// How a change of reach narrows the grants already issued, for the audit log.
fn narrowing(old: &Reach, new: &Reach) -> Vec<String> {
    let mut what = Vec::new();
    let dropped: Vec<&str> =
        old.projects.iter().filter(|p| !new.projects.contains(p)).map(ProjectId::as_str).collect();
    if !dropped.is_empty() {
        what.push(format!("projects no longer exposed: {}", dropped.join(", ")));
    }
    if old.write && !new.write {
        what.push("read-only now".to_owned());
    }
    if old.resource() != new.resource() && old.ready() && new.ready() {
        what.push(format!("served at {} now (grants for {} end)", new.host(), old.host()));
    }
    what
}

impl Engine {
    /// Turning reach on again narrowed it: every live grant is narrowed for good (its token's
    /// scope and profile, sealed), so that widening reach later gives it nothing back, and the
    /// audit log says so. Until this runs (another process, a moment), each request already
    /// intersects the grant with the setting ([`Engine::authenticate_remote`]).
    pub(super) fn narrow_grants(&self, old: Option<&Reach>, new: &Reach) {
        let Some(old) = old else { return };
        let what = narrowing(old, new);
        if what.is_empty() {
            return;
        }
        let mut narrowed = 0;
        for token in self.tokens().unwrap_or_default() {
            if !token.remote || token.revoked_ms.is_some() {
                continue;
            }
            let dropped =
                token.scope.as_ref().is_some_and(|s| s.iter().any(|p| !new.projects.contains(p)));
            let writes = !new.write && token.profile >= Profile::Edit;
            let result = (|| {
                if dropped {
                    if self.store.narrow_token_scope(&token.id, &new.projects)? == 0 {
                        self.store.revoke_token(&token.id)?;
                        return Ok(());
                    }
                    // What it waits for in a project it no longer sees was asked under the
                    // wider grant.
                    self.deny_pending(
                        |a| a.token_id == token.id && !new.projects.contains(&a.project_id),
                        "the user narrowed reach from the web",
                        EndedBy::User("reach narrowed"),
                    );
                }
                if writes {
                    // The user's path for a narrower profile: what it waits for is denied and
                    // its jobs are ended, as reach read-only allows none.
                    self.set_token_profile(token.id.as_str(), Profile::Review)
                        .map_err(|f| sluice_store::StoreError::Invalid(f.message))?;
                }
                Ok::<_, sluice_store::StoreError>(())
            })();
            match result {
                Ok(()) if dropped || writes => narrowed += 1,
                Ok(()) => {}
                Err(err) => tracing::warn!(%err, "could not narrow a remote grant"),
            }
        }
        if narrowed > 0 {
            self.invalidate();
        }
        let detail = format!("{narrowed} remote grant(s) narrowed for good: {}", what.join("; "));
        self.record_human_detail("reach.narrow", None, AuditOutcome::Ok, None, Some(detail));
    }

    /// Checks a bearer token presented on the remote port: a remote token, active, whose
    /// sealed grant names this server's resource while reach is on. Its authority is derived
    /// here, at every request: the projects it was issued for that reach still exposes, and
    /// writes only when both its grant and reach allow them now.
    pub fn authenticate_remote(&self, presented: &str) -> Result<Caller, Failure> {
        let unauthorized = |m: &str| Failure::new(ErrorCode::Unauthorized, m);
        let reach = self
            .reach()?
            .filter(Reach::ready)
            .ok_or_else(|| unauthorized("reach from the web is off in Sluice"))?;
        let mut caller = self.authenticate_with(presented, REMOTE_TOKEN_PREFIX)?;
        let grant = self.store.oauth_grant(&caller.token_id).map_err(store_failure)?;
        let Some(grant) = grant.filter(|g| g.resource == reach.resource()) else {
            return Err(unauthorized("this token was not issued for this server"));
        };
        let via = match &reach.tunnel {
            Some(tunnel @ Tunnel::OpenAi { .. }) => tunnel.describe(),
            Some(tunnel) => format!("{} (tunnel: {})", reach.host(), tunnel.kind()),
            None => reach.host().to_owned(),
        };
        caller.remote = Some(crate::RemoteCaller { client_id: grant.client_id, via });
        // The token's scope is what the person consented to; reach's projects are what they
        // expose now. A project added since stays out of this grant (it needs a new consent).
        let issued = caller.scope.take();
        caller.scope = Some(
            reach
                .projects
                .iter()
                .filter(|p| issued.as_ref().is_none_or(|s| s.contains(p)))
                .cloned()
                .collect(),
        );
        // A grant consented to while reach was read-only carries the `review` profile, sealed
        // with its token; one from before that record counts as issued for what reach allows.
        let issued_write = caller.profile >= Profile::Edit;
        caller.read_only = !(reach.write && issued_write);
        // Reach keeps its own read-only or write setting, with its own refusals
        // (`read_only_project`); a remote caller's tools/list is every tool, as before profiles.
        caller.profile = Profile::Full;
        Ok(caller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_metadata_document_verifies_a_client_and_a_claimed_name_is_marked() {
        let verified =
            ClientIdentity::of("https://claude.ai/oauth/client.json", "Claude (claude.ai)");
        assert_eq!(verified.label(), "Claude (verified: claude.ai)");
        assert_eq!(verified.verified_host(), Some("claude.ai"));
        for borrowed in ["Claude (claude.ai)", "Claude (verified: claude.ai)"] {
            let claimed = ClientIdentity::of("slcl_abc", borrowed);
            assert_eq!(claimed.verified_host(), None);
            assert_eq!(claimed.label(), format!("\u{201C}{borrowed}\u{201D} (unverified name)"));
            assert_ne!(claimed.label(), verified.label());
        }
        // A client id that only looks like a URL verifies nothing.
        let fake = ClientIdentity::of("https://127.0.0.1/x.json", "Claude (127.0.0.1)");
        assert_eq!(fake.verified_host(), None);
    }
}
