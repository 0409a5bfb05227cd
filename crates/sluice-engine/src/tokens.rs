//! Client tokens: authenticating a presented bearer token, and the user's operations on tokens
//! (create, list, revoke, lift a limit) and the assistant's own (`drop_privileges`).

use std::time::{Duration, Instant};

use sluice_core::{ErrorCode, Failure, Profile, SelfLimit, TokenId, id::base32, random_bytes};
use sluice_store::{ActorKind, AuditRecord, NewToken, TokenRecord};

use crate::projects::validate_name;
use crate::{
    AuditOutcome, Caller, Durability, Engine, EngineEvent, TOKEN_BODY_LEN, TOKEN_PREFIX,
    TOUCH_INTERVAL, clean_reason, exec, lock, paths, store_failure,
};

impl Engine {
    /// Checks a presented bearer token. Constant-time where it matters: the token is hashed
    /// with the install secret first, so lookups reveal nothing about the plaintext.
    pub fn authenticate(&self, presented: &str) -> Result<Caller, Failure> {
        self.authenticate_with(presented, TOKEN_PREFIX)
    }

    /// [`Engine::authenticate`] for tokens of one kind: local (`slc_`) or remote (`slr_`).
    /// The prefix is part of what the keyed hash covers, so a token of one kind can never be
    /// presented as the other, whatever the database says.
    pub(crate) fn authenticate_with(
        &self,
        presented: &str,
        prefix: &str,
    ) -> Result<Caller, Failure> {
        let unauthorized = |m: &str| Failure::new(ErrorCode::Unauthorized, m);
        let well_formed = presented.strip_prefix(prefix).is_some_and(|body| {
            body.len() == TOKEN_BODY_LEN
                && body.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        });
        if !well_formed {
            return Err(unauthorized(&format!(
                "malformed token; Sluice tokens look like {prefix}…"
            )));
        }
        let hash = sluice_store::token_hash(&self.secret, presented);
        let (record, loaded_at) = {
            let cache = self.refresh()?;
            (cache.tokens.get(&hash).cloned(), std::time::Instant::now())
        };
        let Some(record) = record else {
            return Err(unauthorized("unknown token; create one in Sluice and update your client"));
        };
        let now = sluice_store::now_ms();
        if record.tampered {
            return Err(unauthorized(
                "this token was changed outside Sluice and is refused; the user can see why with \
                 `sluice doctor`",
            ));
        }
        if record.revoked_ms.is_some() {
            return Err(unauthorized("this token was revoked in Sluice"));
        }
        if record.expires_ms.is_some_and(|e| e <= now) {
            return Err(unauthorized("this token has expired; create a new one in Sluice"));
        }
        let limit = record.self_limit.map(|(limit, _)| limit);
        if limit == Some(SelfLimit::Paused) {
            return Err(Failure::new(
                ErrorCode::Paused,
                "this token paused itself (drop_privileges); only the user can restore it in \
                 Sluice",
            ));
        }
        self.touch(&record.id, now);
        Ok(Caller {
            token_id: record.id,
            label: record.label,
            scope: record.scope,
            limit,
            remote: None,
            read_only: false,
            profile: record.profile,
            loaded_at,
        })
    }

    fn touch(&self, id: &TokenId, now_ms: i64) {
        let due = {
            let mut touched = lock(&self.touched);
            let due = touched.get(id).is_none_or(|at| at.elapsed() >= TOUCH_INTERVAL);
            if due {
                touched.insert(id.clone(), Instant::now());
            }
            due
        };
        if due && let Err(err) = self.store.touch_token(id, now_ms) {
            tracing::warn!(%err, "could not record token use");
        }
    }

    /// [`Engine::create_token_with_profile`] for a `full` token, what every token was before
    /// profiles (the surfaces the user creates tokens from name the profile).
    pub fn create_token(
        &self,
        label: &str,
        scope: Option<Vec<String>>,
        expires_in: Option<Duration>,
    ) -> Result<(TokenRecord, String), Failure> {
        self.create_token_with_profile(label, scope, expires_in, Profile::Full)
    }

    /// Creates a token and returns it with its plaintext, which exists only in this return
    /// value: the store keeps a keyed hash.
    pub fn create_token_with_profile(
        &self,
        label: &str,
        scope: Option<Vec<String>>,
        expires_in: Option<Duration>,
        profile: Profile,
    ) -> Result<(TokenRecord, String), Failure> {
        let label = validate_name(label)?;
        let scope = match scope {
            None => None,
            Some(refs) => {
                let mut ids = Vec::new();
                for r in refs {
                    ids.push(self.find_project(&r)?.id);
                }
                Some(ids)
            }
        };
        let plaintext = format!("{TOKEN_PREFIX}{}", base32(&random_bytes::<32>()));
        let hash = sluice_store::token_hash(&self.secret, &plaintext);
        let expires_ms = expires_in.map(|d| {
            sluice_store::now_ms().saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        });
        let record = self
            .store
            .insert_token(&NewToken { label, hash, scope, expires_ms, profile })
            .map_err(store_failure)?;
        self.after_change("token.create", None);
        Ok((record, plaintext))
    }

    pub fn tokens(&self) -> Result<Vec<TokenRecord>, Failure> {
        self.store.list_tokens().map_err(store_failure)
    }

    pub fn revoke_token(&self, reference: &str) -> Result<TokenRecord, Failure> {
        let t =
            self.store.find_token(reference).map_err(store_failure)?.ok_or_else(|| {
                Failure::new(ErrorCode::NotFound, format!("no token {reference:?}"))
            })?;
        let t = self.store.revoke_token(&t.id).map_err(store_failure)?;
        // What the token asked for dies with it (TA-03): its calls waiting for the user end
        // with this denial, and later requests get 401.
        let by = exec::EndedBy::User("token revoked");
        self.deny_pending(|a| a.token_id == t.id, "the token was revoked", by);
        self.after_change("token.revoke", None);
        Ok(t)
    }

    /// An assistant lowers its own token's privileges (`drop_privileges`): to read-only (it may
    /// still read and search, but changes and runs nothing) or paused (every request refused);
    /// never back up, since a limit already as strict is kept. What the token was waiting for is
    /// denied and its running jobs are cancelled (this blocks until they are dead: call it from
    /// a blocking context in async code). Recorded in the audit log with the reason it
    /// gave; only the user lifts it ([`Engine::lift_token_limit`]).
    pub fn drop_privileges(
        &self,
        caller: &Caller,
        limit: SelfLimit,
        reason: Option<&str>,
    ) -> Result<TokenRecord, Failure> {
        let t = self.store.limit_token(&caller.token_id, limit).map_err(store_failure)?;
        let in_force = t.self_limit.map_or(limit, |(l, _)| l);
        let why = format!("the assistant limited its own token to {in_force}");
        self.deny_pending(|a| a.token_id == t.id, &why, exec::EndedBy::Assistant(&caller.label));
        self.jobs.kill_owned(t.id.as_str());
        self.invalidate();
        paths::nudge(&self.data_dir);
        let reason = reason.map(clean_reason).filter(|r| !r.is_empty());
        let detail = match &reason {
            Some(r) => format!("{in_force}: {r}"),
            None => in_force.to_string(),
        };
        self.audit_self_limit(caller, &detail);
        self.emit(EngineEvent::TokensChanged);
        Ok(t)
    }

    /// The audit record of a limit an assistant put on its own token.
    fn audit_self_limit(&self, caller: &Caller, detail: &str) {
        self.audit.append(
            AuditRecord {
                time_ms: sluice_store::now_ms(),
                actor: caller.label.clone(),
                actor_kind: ActorKind::Mcp,
                token_id: Some(caller.token_id.clone()),
                action: "token.self_limit".into(),
                project_id: None,
                outcome: AuditOutcome::Ok,
                error_code: None,
                duration_ms: Some(0),
                params_hash: None,
                detail: Some(sluice_core::text::visible(detail).into_owned()),
            },
            Durability::Now,
        );
    }

    /// Sets a token's profile: the user's decision (the window confirms a widening natively
    /// first). A running engine sees it at the token's next request, whichever process made it.
    pub fn set_token_profile(
        &self,
        reference: &str,
        profile: Profile,
    ) -> Result<TokenRecord, Failure> {
        let t =
            self.store.find_token(reference).map_err(store_failure)?.ok_or_else(|| {
                Failure::new(ErrorCode::NotFound, format!("no token {reference:?}"))
            })?;
        if t.remote {
            return Err(Failure::invalid(format!(
                "token {} belongs to a hosted assistant: reach's own read-only or write setting \
                 decides what it may do",
                sluice_core::text::visible(&t.label)
            )));
        }
        let before = t.profile;
        let t = self.store.set_token_profile(&t.id, profile).map_err(store_failure)?;
        if profile < before {
            let why = format!("the user set the token's profile to {profile}");
            self.after_narrowing(&t, &why, exec::EndedBy::User("profile narrowed"));
        }
        self.after_change("token.set_profile", None);
        Ok(t)
    }

    /// What the token waited for was asked under the wider profile: narrowing ends it, and below
    /// `agent` its running jobs too.
    fn after_narrowing(&self, t: &TokenRecord, why: &str, by: exec::EndedBy<'_>) {
        self.deny_pending(|a| a.token_id == t.id, why, by);
        if t.profile < Profile::Agent {
            self.jobs.kill_owned(t.id.as_str());
        }
    }

    /// Lowers the caller's own profile (`drop_privileges` to `edit` or `agent`), never up: a
    /// profile at or below `to` is kept. A hosted assistant's token is limited by reach's own
    /// setting, so it can only drop to read-only or paused. Only the user widens it again.
    pub fn drop_profile(
        &self,
        caller: &Caller,
        to: Profile,
        reason: Option<&str>,
    ) -> Result<TokenRecord, Failure> {
        if caller.remote.is_some() {
            return Err(Failure::invalid(
                "a hosted assistant's token follows reach's read-only or write setting: drop to \
                 `read-only` or `paused` instead",
            ));
        }
        let t =
            self.store.find_token(caller.token_id.as_str()).map_err(store_failure)?.ok_or_else(
                || Failure::new(ErrorCode::Unauthorized, "this token no longer exists"),
            )?;
        let t = if to < t.profile {
            let t = self.store.set_token_profile(&t.id, to).map_err(store_failure)?;
            let why = format!("the assistant lowered its own token to the {to} profile");
            self.after_narrowing(&t, &why, exec::EndedBy::Assistant(&caller.label));
            self.invalidate();
            paths::nudge(&self.data_dir);
            t
        } else {
            t
        };
        let reason = reason.map(clean_reason).filter(|r| !r.is_empty());
        let detail = match &reason {
            Some(r) => format!("profile {}: {r}", t.profile),
            None => format!("profile {}", t.profile),
        };
        self.audit_self_limit(caller, &detail);
        self.emit(EngineEvent::TokensChanged);
        Ok(t)
    }

    /// Lifts the limit a token put on itself: the user's decision.
    pub fn lift_token_limit(&self, reference: &str) -> Result<TokenRecord, Failure> {
        let t =
            self.store.find_token(reference).map_err(store_failure)?.ok_or_else(|| {
                Failure::new(ErrorCode::NotFound, format!("no token {reference:?}"))
            })?;
        if t.self_limit.is_none() {
            return Err(Failure::invalid(format!(
                "token {} has no limit of its own to lift",
                sluice_core::text::visible(&t.label)
            )));
        }
        let t = self.store.lift_token_limit(&t.id).map_err(store_failure)?;
        self.after_change("token.lift_limit", None);
        Ok(t)
    }
}
