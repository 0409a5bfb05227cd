//! What the window shows of reach: one connection request by id whatever its state, and which
//! tokens are remote.

use sluice_core::{Failure, TokenId};
use sluice_store::OAuthRequest;

use crate::{Engine, store_failure};

impl Engine {
    /// A connection request by id, pending or decided; `None` when there is no such request.
    pub fn oauth_request(&self, id: &str) -> Result<Option<OAuthRequest>, Failure> {
        self.store.oauth_request(id).map_err(store_failure)
    }

    /// The tokens issued to hosted assistants (revoked ones too): each has a sealed grant.
    pub fn remote_token_ids(&self) -> Result<Vec<TokenId>, Failure> {
        self.store.oauth_token_ids().map_err(store_failure)
    }
}
