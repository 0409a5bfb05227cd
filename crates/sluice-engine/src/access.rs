//! The engine's view of the store: the cache of projects, tokens and access flags, read again
//! whenever another connection committed ([`Engine::refresh`]), and the access checks over it.

use std::collections::HashMap;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use sluice_core::{ErrorCode, Failure};
use sluice_store::TokenRecord;

use crate::{Cache, Caller, Engine, EngineEvent, KV_PAUSED, exec, lock, reach, store_failure};

/// How long after a caller's authentication its read of the engine's state still counts as the
/// check before its action ([`Engine::check_access_for`]): the gate-to-tool path of a call that
/// does not wait, with room for a busy scheduler.
pub(crate) const STATE_REUSE: Duration = Duration::from_millis(5);

impl Engine {
    /// Reloads the cache if another connection committed since the last look.
    pub(crate) fn refresh(&self) -> Result<MutexGuard<'_, Cache>, Failure> {
        // A check that began after this call did sees every commit made before it, so a caller
        // that waited for another's check takes its answer: under load, the requests queued
        // behind one check (or behind an audit commit holding the connection) cost one read of
        // the database, not one each. Nothing committed before this call is ever missed.
        let asked = Instant::now();
        let checked_since = |cache: &Cache| cache.checked.is_some_and(|at| at > asked);
        let _checking = lock(&self.checking);
        {
            let cache = lock(&self.cache);
            if checked_since(&cache) {
                return Ok(cache);
            }
        }
        let began = Instant::now();
        let version = self.store.data_version().map_err(store_failure)?;
        let mut cache = lock(&self.cache);
        if cache.data_version != version {
            let projects = self.revalidated(self.store.list_projects().map_err(store_failure)?);
            let tokens = self.store.list_tokens().map_err(store_failure)?;
            // A flag whose record is missing or whose seal does not match was changed outside
            // Sluice: it counts as on, so deleting the stop never lifts it (PC-02).
            let paused = self.store.sealed_flag(KV_PAUSED).map_err(store_failure)?.unwrap_or(true);
            let stopped =
                self.store.sealed_flag(exec::KV_STOPPED).map_err(store_failure)?.unwrap_or(true);
            let findings: Vec<_> = self
                .store
                .integrity()
                .map_err(store_failure)?
                .into_iter()
                .map(|f| (f.kind, f.subject))
                .collect();
            let reach = reach::load(&self.store).map_err(store_failure)?;
            let tokens: HashMap<_, _> = tokens.into_iter().map(|t| (t.hash, t)).collect();
            // What another process changed (the CLI, the window of another engine, an
            // assistant's `drop_privileges` served elsewhere) reaches the window as the same
            // events as a change made here; the first load announces nothing.
            if cache.data_version != i64::MIN {
                if (paused || stopped) != (cache.paused || cache.stopped)
                    || findings != cache.findings
                    || reach != cache.reach
                {
                    self.emit(EngineEvent::AccessChanged { paused: paused || stopped });
                }
                if projects != cache.projects {
                    self.emit(EngineEvent::ProjectsChanged);
                }
                if !same_tokens(&tokens, &cache.tokens) {
                    self.emit(EngineEvent::TokensChanged);
                }
            }
            cache.reach = reach;
            cache.findings = findings;
            cache.stopped = stopped;
            cache.projects = projects;
            cache.tokens = tokens;
            cache.paused = paused;
            cache.data_version = version;
        }
        cache.checked = Some(began);
        Ok(cache)
    }

    /// Forces a reload after this engine itself wrote (data_version only moves for commits made
    /// by other connections).
    pub(crate) fn invalidate(&self) {
        let mut cache = lock(&self.cache);
        cache.data_version = i64::MIN + 1;
        // And no waiting request takes an earlier check's answer for one made after this.
        cache.checked = None;
    }

    // ----- the request path -------------------------------------------------------------

    /// `Err(Stopped)` after an emergency stop, `Err(Paused)` while the user has paused AI access.
    pub fn check_access(&self) -> Result<(), Failure> {
        access_of(&*self.refresh()?)
    }

    /// [`Engine::check_access`] against the state the last refresh loaded, for a check that
    /// directly follows one in the same request (the HTTP gate, after [`Engine::authenticate`]):
    /// a refresh costs a database read transaction, and every request already makes one.
    pub fn check_access_as_loaded(&self) -> Result<(), Failure> {
        access_of(&lock(&self.cache))
    }

    /// [`Engine::check_access`] for a request of `caller`'s that is about to act: reuses the
    /// state read when `caller` was authenticated if that was within [`STATE_REUSE`], so a
    /// request that goes straight from the gate to its action reads the store once, not twice.
    /// That read was made after the request arrived, so nothing the user did before the request
    /// is missed; a request that waited longer (a slow body, a task run later) reads again.
    pub fn check_access_for(&self, caller: &Caller) -> Result<(), Failure> {
        if caller.loaded_at.elapsed() < STATE_REUSE {
            self.check_access_as_loaded()
        } else {
            self.check_access()
        }
    }

    /// Whether AI access is paused (or stopped: a stop pauses too).
    pub fn is_paused(&self) -> Result<bool, Failure> {
        let cache = self.refresh()?;
        Ok(cache.paused || cache.stopped)
    }
}

/// Whether two token lists differ in anything the user sees or that decides access; the time of
/// last use moves with every request and is not announced.
fn same_tokens(a: &HashMap<[u8; 32], TokenRecord>, b: &HashMap<[u8; 32], TokenRecord>) -> bool {
    a.len() == b.len()
        && a.iter().all(|(hash, t)| {
            b.get(hash)
                .is_some_and(|u| TokenRecord { last_used_ms: u.last_used_ms, ..t.clone() } == *u)
        })
}

/// `Err(Stopped)` after an emergency stop, `Err(Paused)` while the user has paused AI access.
fn access_of(cache: &Cache) -> Result<(), Failure> {
    if cache.stopped {
        return Err(Failure::new(
            ErrorCode::Stopped,
            "AI access is stopped: the user pressed Sluice's emergency stop; nothing was done. \
             Nothing runs until they resume it.",
        ));
    }
    if cache.paused {
        return Err(Failure::new(
            ErrorCode::Paused,
            "AI access is paused by the user in Sluice; nothing was done. Try again after they \
             resume it.",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use crate::{EngineConfig, SecretPreference};

    use super::*;

    /// Many requests checking at once share checks, and still none that asks after another
    /// process revoked its token gets in: a shared check always began after its caller asked.
    #[test]
    fn requests_share_checks_but_none_misses_a_change_made_before_it_asked() {
        let dir = tempfile::tempdir().unwrap();
        let config = EngineConfig::new(dir.path().join("data"), SecretPreference::FileOnly);
        let engine = Arc::new(Engine::open(&config).unwrap());
        let (record, token) = engine.create_token("tester", None, None).unwrap();
        // The user's CLI: another engine on the same data folder, its own connection.
        let cli = Engine::open(&config).unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let callers: Vec<_> = (0..4)
            .map(|_| {
                let (engine, token, done) = (engine.clone(), token.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut seen = Vec::new();
                    while !done.load(Ordering::Relaxed) {
                        let asked = Instant::now();
                        seen.push((asked, engine.authenticate(&token).is_ok()));
                    }
                    seen
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        cli.revoke_token(record.id.as_str()).unwrap();
        let revoked = Instant::now();
        std::thread::sleep(Duration::from_millis(50));
        done.store(true, Ordering::Relaxed);
        let seen: Vec<_> = callers.into_iter().flat_map(|c| c.join().unwrap()).collect();
        let after: Vec<_> = seen.iter().filter(|(asked, _)| *asked > revoked).collect();
        assert!(seen.iter().any(|(_, ok)| *ok), "no request got in before the revocation");
        assert!(!after.is_empty(), "no request asked after the revocation");
        assert!(
            after.iter().all(|(_, ok)| !ok),
            "a request that asked after the revocation got in"
        );
    }
}
