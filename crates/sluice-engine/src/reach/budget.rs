//! Budgets against strangers who know the public URL: what they leave waiting (connection
//! requests) and stored (registrations) must not lock the person's own assistant out, nor evict
//! it.
//!
//! A source is where a request came from as the tunnel reports it (`sluice_mcp::reach` reads
//! the client address the tunnel adds; none for a tunnel that adds nothing). Per source:
//! - at most [`MAX_PENDING_PER_SOURCE`] requests wait; another from the same source ends its
//!   own oldest, never someone else's;
//! - at most [`MAX_UNPROVEN_PER_SOURCE`] registrations without a grant are kept; another drops
//!   that source's oldest.
//!
//! Across sources, when [`MAX_PENDING`](super::MAX_PENDING) requests wait, the oldest request
//! of the source holding the most gives way; a registration holding no grant and no live
//! request lives [`UNPROVEN_CLIENT_TTL`]; the store's cap on registrations never drops one a
//! request waits on, nor one holding a grant.
//!
//! Sources are kept in the serving process's memory only (never stored or logged): after a
//! restart, what was waiting counts against the totals but against no source.

use std::collections::HashMap;
use std::time::Duration;

use sluice_store::OAuthRequest;

use super::{MAX_PENDING, millis};
use crate::{Engine, lock};

/// Connection requests one source may have waiting at once.
pub const MAX_PENDING_PER_SOURCE: usize = 2;
/// Registrations without a grant one source may have stored at once.
pub const MAX_UNPROVEN_PER_SOURCE: usize = 4;
/// How long a registration that never led to a grant is kept (one a request still waits on
/// stays until that request ends).
pub const UNPROVEN_CLIENT_TTL: Duration = Duration::from_secs(3600);

/// Which source made each registration and request still around.
#[derive(Debug, Default)]
pub(crate) struct Sources {
    clients: HashMap<String, String>,
    requests: HashMap<String, String>,
}

/// What the budget says about a new request.
pub(super) enum Room {
    /// It may wait.
    Made,
    /// Every waiting request is a different source's single one: it is refused.
    Full,
}

impl Engine {
    /// Before registering a client from `source`: drops registrations past their lifetime,
    /// and this source's oldest one without a grant when it is at its budget.
    pub(super) fn make_room_for_client(&self, source: Option<&str>) {
        let cutoff = sluice_store::now_ms().saturating_sub(millis(UNPROVEN_CLIENT_TTL));
        if let Err(err) = self.store.prune_unproven_oauth_clients(cutoff) {
            tracing::warn!(%err, "could not drop old registrations");
        }
        let Ok(unproven) = self.store.unproven_oauth_clients() else { return };
        let mut sources = lock(&self.reach_sources);
        sources.clients.retain(|id, _| unproven.iter().any(|(u, _)| u == id));
        let Some(source) = source else { return };
        let mine: Vec<&String> = unproven
            .iter()
            .map(|(id, _)| id)
            .filter(|id| sources.clients.get(*id).is_some_and(|s| s == source))
            .collect();
        if mine.len() >= MAX_UNPROVEN_PER_SOURCE {
            let oldest = mine[0].clone();
            if self.store.delete_unproven_oauth_client(&oldest).unwrap_or(false) {
                sources.clients.remove(&oldest);
            }
        }
    }

    /// Records that `source` registered `client`.
    pub(super) fn client_from(&self, client: &str, source: Option<&str>) {
        if let Some(source) = source {
            lock(&self.reach_sources).clients.insert(client.to_owned(), source.to_owned());
        }
    }

    /// Before a new request from `source` waits among `pending`: ends this source's oldest when
    /// it is at its budget, then, when every place is taken, the oldest of the source holding
    /// the most (if it holds more than one).
    pub(super) fn make_room_for_request(
        &self,
        pending: &[OAuthRequest],
        source: Option<&str>,
    ) -> Room {
        let mut sources = lock(&self.reach_sources);
        sources.requests.retain(|id, _| pending.iter().any(|r| &r.id == id));
        let mut waiting: Vec<&OAuthRequest> = pending.iter().collect();
        let of = |r: &OAuthRequest| sources.requests.get(&r.id).cloned();
        let mut ended = Vec::new();
        if let Some(source) = source {
            let mine: Vec<&&OAuthRequest> =
                waiting.iter().filter(|r| of(r).as_deref() == Some(source)).collect();
            if mine.len() >= MAX_PENDING_PER_SOURCE {
                ended.push(mine[0].id.clone());
            }
        }
        waiting.retain(|r| !ended.contains(&r.id));
        if waiting.len() >= MAX_PENDING {
            let mut counts: HashMap<String, usize> = HashMap::new();
            for source in waiting.iter().filter_map(|r| of(r)) {
                *counts.entry(source).or_default() += 1;
            }
            // `waiting` is oldest first: the first request of the source holding the most (of
            // those holding more than one) is its oldest; a tie goes to the oldest request.
            let mut victim: Option<(&OAuthRequest, usize)> = None;
            for r in &waiting {
                let n = of(r).and_then(|s| counts.get(&s).copied()).unwrap_or(0);
                if n > 1 && victim.is_none_or(|(_, most)| n > most) {
                    victim = Some((r, n));
                }
            }
            match victim {
                Some((r, _)) => ended.push(r.id.clone()),
                None => return Room::Full,
            }
        }
        for id in ended {
            if let Err(err) = self.store.expire_oauth_request(&id) {
                tracing::warn!(%err, "could not end a waiting connection request");
            }
            sources.requests.remove(&id);
        }
        Room::Made
    }

    /// Records that `source` made request `id`.
    pub(super) fn request_from(&self, id: &str, source: Option<&str>) {
        if let Some(source) = source {
            lock(&self.reach_sources).requests.insert(id.to_owned(), source.to_owned());
        }
    }
}
