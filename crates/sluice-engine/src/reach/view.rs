//! What the window shows of reach and checks before it asks: the setting `set_reach` would
//! store (checked, not stored, so the native question names exactly what turning reach on
//! exposes), one connection request by id whatever its state, which tokens are remote, and the
//! tunnel's default port.

use sluice_core::{ErrorCode, Failure, TokenId};
use sluice_store::OAuthRequest;

use super::{Reach, parse_public_url, parse_redirect};
use crate::{Engine, store_failure};

impl Reach {
    /// The loopback port the tunnel forwards to unless the user names one.
    pub const DEFAULT_PORT: u16 = 7879;
}

impl Engine {
    /// The setting [`Engine::set_reach`] would store for these arguments, checked exactly as it
    /// checks them but not stored: the public URL, the port, the projects (names or ids, at
    /// least one, resolved to ids, sorted) and the extra redirect URIs.
    pub fn check_reach(
        &self,
        public_url: &str,
        port: u16,
        projects: &[String],
        write: bool,
        redirects: &[String],
    ) -> Result<Reach, Failure> {
        let public_url = parse_public_url(public_url)?;
        if port == 0 {
            return Err(Failure::new(ErrorCode::InvalidArgument, "the reach port must be 1–65535"));
        }
        if projects.is_empty() {
            return Err(Failure::new(
                ErrorCode::InvalidArgument,
                "choose at least one project to expose",
            ));
        }
        let mut ids = Vec::new();
        for reference in projects {
            ids.push(self.find_project(reference)?.id);
        }
        ids.sort();
        ids.dedup();
        let redirects = redirects.iter().map(|r| parse_redirect(r)).collect::<Result<_, _>>()?;
        Ok(Reach { public_url, port, projects: ids, write, redirects })
    }

    /// A connection request by id, pending or decided; `None` when there is no such request.
    pub fn oauth_request(&self, id: &str) -> Result<Option<OAuthRequest>, Failure> {
        self.store.oauth_request(id).map_err(store_failure)
    }

    /// The tokens issued to hosted assistants (revoked ones too): each has a sealed grant.
    pub fn remote_token_ids(&self) -> Result<Vec<TokenId>, Failure> {
        self.store.oauth_token_ids().map_err(store_failure)
    }
}
