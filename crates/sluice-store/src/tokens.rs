//! Client tokens, stored only as keyed hashes of their plaintext (see [`crate::token_hash`]).
//!
//! A token's scope is either every project (`None`) or a set kept in the `token_scopes` join
//! table. Removing a project cascades out of that table, so a token scoped only to removed
//! projects ends with an empty set — it sees nothing; it never turns into "all projects".

use rusqlite::{Connection, OptionalExtension, Row, params};
use sluice_core::{Profile, ProjectId, SelfLimit, TokenId};
use subtle::ConstantTimeEq;

use crate::error::{is_foreign_key_violation, unique_violation};
use crate::projects::decode_error;
use crate::seal::{Before, TOKENS};
use crate::{Store, StoreError, now_ms};

#[derive(Clone, PartialEq, Eq)]
pub struct TokenRecord {
    pub id: TokenId,
    pub label: String,
    /// The keyed hash of the plaintext. Not secret by itself, but not printed either.
    pub hash: [u8; 32],
    /// `None`: every project. `Some(list)`: only these (possibly none left).
    pub scope: Option<Vec<ProjectId>>,
    pub created_ms: i64,
    pub last_used_ms: Option<i64>,
    pub expires_ms: Option<i64>,
    pub revoked_ms: Option<i64>,
    /// The limit the assistant put on this token itself (`drop_privileges`), and when; only the
    /// user lifts it ([`Store::lift_token_limit`]).
    pub self_limit: Option<(SelfLimit, i64)>,
    /// The tools it offers (`full` for tokens made before profiles existed); sealed.
    pub profile: Profile,
    /// Its seal does not match: it was changed outside Sluice, and is refused.
    pub tampered: bool,
    /// Issued to a hosted assistant (reach from the web): it has a grant beside it.
    pub remote: bool,
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("id", &self.id)
            .field("label", &self.label)
            .field("scope", &self.scope)
            .field("created_ms", &self.created_ms)
            .field("last_used_ms", &self.last_used_ms)
            .field("expires_ms", &self.expires_ms)
            .field("revoked_ms", &self.revoked_ms)
            .field("self_limit", &self.self_limit)
            .field("profile", &self.profile)
            .field("tampered", &self.tampered)
            .field("remote", &self.remote)
            .finish_non_exhaustive()
    }
}

impl TokenRecord {
    /// Neither revoked, expired nor changed outside Sluice at `now_ms`.
    pub fn is_active(&self, now_ms: i64) -> bool {
        !self.tampered
            && self.revoked_ms.is_none()
            && self.expires_ms.is_none_or(|exp| now_ms < exp)
    }

    /// Whether the token's scope includes `project`.
    pub fn allows(&self, project: &ProjectId) -> bool {
        match &self.scope {
            None => true,
            Some(ids) => ids.contains(project),
        }
    }
}

/// What [`Store::insert_token`] needs; the id and creation time are assigned by the store.
#[derive(Debug, Clone)]
pub struct NewToken {
    pub label: String,
    pub hash: [u8; 32],
    /// `None`: every project. `Some(list)`: at least one existing project.
    pub scope: Option<Vec<ProjectId>>,
    pub expires_ms: Option<i64>,
    pub profile: Profile,
}

const COLUMNS: &str = "id, label, hash, all_projects, created_ms, last_used_ms, expires_ms, \
                       revoked_ms, self_limit, self_limited_ms";
/// The schema version that added `oauth_grants`, where a remote token's grant lives.
pub(crate) const GRANTS_SCHEMA: usize = 15;
const MAX_LABEL_CHARS: usize = 80;

impl Store {
    pub fn insert_token(&self, new: &NewToken) -> Result<TokenRecord, StoreError> {
        let label = validate_label(&new.label)?;
        if new.scope.as_ref().is_some_and(Vec::is_empty) {
            return Err(StoreError::Invalid(
                "a token scope must name at least one project (omit it for all projects)".into(),
            ));
        }
        let id = TokenId::generate();
        let now = now_ms();
        self.write_sealed(&TOKENS, id.as_str(), Before::Any, |tx| {
            tx.execute(
                "INSERT INTO tokens (id, label, hash, all_projects, created_ms, expires_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    id.as_str(),
                    label,
                    &new.hash[..],
                    new.scope.is_none(),
                    now,
                    new.expires_ms
                ],
            )
            .and_then(|_| self.write_profile(tx, &id, new.profile))
            .map_err(|e| match unique_violation(&e) {
                Some("tokens.label") => {
                    StoreError::Conflict(format!("a token labelled {label:?} already exists"))
                }
                Some("tokens.hash") => StoreError::Conflict("that token already exists".into()),
                _ => e.into(),
            })?;
            for project in new.scope.iter().flatten() {
                tx.execute(
                    "INSERT OR IGNORE INTO token_scopes (token_id, project_id) VALUES (?1, ?2)",
                    params![id.as_str(), project.as_str()],
                )
                .map_err(|e| {
                    if is_foreign_key_violation(&e) {
                        crate::projects::project_not_found(project.as_str())
                    } else {
                        e.into()
                    }
                })?;
            }
            Ok(())
        })?;
        let conn = self.conn();
        self.load_token(&conn, "id", id.as_str())?
            .ok_or_else(|| StoreError::Corrupt("inserted token vanished".into()))
    }

    /// Every token, newest first.
    pub fn list_tokens(&self) -> Result<Vec<TokenRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {} FROM tokens ORDER BY created_ms DESC, id",
            self.columns()
        ))?;
        let rows = stmt.query_map([], token_from_row)?;
        let mut tokens = Vec::new();
        for row in rows {
            let mut token = row?;
            fill_scope(&conn, &mut token)?;
            token.tampered = !self.row_sealed(&conn, &TOKENS, &token.id.as_str())?;
            tokens.push(token);
        }
        Ok(tokens)
    }

    /// The token whose stored hash equals `hash` (computed by the caller with
    /// [`crate::token_hash`]), whatever its state: the caller checks [`TokenRecord::is_active`].
    pub fn find_token_by_hash(&self, hash: &[u8; 32]) -> Result<Option<TokenRecord>, StoreError> {
        let conn = self.conn();
        // The index lookup is not constant-time, but it compares keyed hashes: timing can
        // reveal nothing about a plaintext without the install secret. The final comparison
        // is constant-time anyway, so no byte-wise early exit ever sees the stored value.
        let found = self.load_token(&conn, "hash", &hash[..])?;
        Ok(found.filter(|t| bool::from(t.hash.ct_eq(hash))))
    }

    /// By id (`tok_…`) or by label (case-insensitive).
    pub fn find_token(&self, id_or_label: &str) -> Result<Option<TokenRecord>, StoreError> {
        let conn = self.conn();
        match TokenId::parse(id_or_label) {
            Some(id) => self.load_token(&conn, "id", id.as_str()),
            None => self.load_token(&conn, "label", id_or_label.trim()),
        }
    }

    /// Records a use of the token.
    pub fn touch_token(&self, id: &TokenId, now_ms: i64) -> Result<(), StoreError> {
        let n = self.conn().execute(
            "UPDATE tokens SET last_used_ms = ?2 WHERE id = ?1",
            params![id.as_str(), now_ms],
        )?;
        if n == 0 {
            return Err(token_not_found(id.as_str()));
        }
        Ok(())
    }

    /// Revokes the token (idempotent: the first revocation time is kept) and returns it.
    ///
    /// A token changed outside Sluice can be revoked too, and is sealed as revoked: revoking
    /// only narrows, so it is how the user clears such a token's finding.
    pub fn revoke_token(&self, id: &TokenId) -> Result<TokenRecord, StoreError> {
        self.write_sealed(&TOKENS, id.as_str(), Before::Any, |tx| {
            tx.execute(
                "UPDATE tokens SET revoked_ms = ?2 WHERE id = ?1 AND revoked_ms IS NULL",
                params![id.as_str(), now_ms()],
            )?;
            Ok(())
        })?;
        let conn = self.conn();
        self.load_token(&conn, "id", id.as_str())?.ok_or_else(|| token_not_found(id.as_str()))
    }

    /// Puts `limit` on the token at its own request. Only ever tightens: a limit already at
    /// least as strict is kept (with its time), so an assistant cannot use this to lift one.
    pub fn limit_token(&self, id: &TokenId, limit: SelfLimit) -> Result<TokenRecord, StoreError> {
        self.write_sealed(&TOKENS, id.as_str(), Before::MustVerify, |tx| {
            let token = self
                .load_token(tx, "id", id.as_str())?
                .ok_or_else(|| token_not_found(id.as_str()))?;
            if token.self_limit.is_none_or(|(now, _)| now < limit) {
                tx.execute(
                    "UPDATE tokens SET self_limit = ?2, self_limited_ms = ?3 WHERE id = ?1",
                    params![id.as_str(), limit.as_str(), now_ms()],
                )?;
            }
            Ok(())
        })?;
        let conn = self.conn();
        self.load_token(&conn, "id", id.as_str())?.ok_or_else(|| token_not_found(id.as_str()))
    }

    /// Sets the token's profile (the user's decision; widening it is theirs to confirm).
    pub fn set_token_profile(
        &self,
        id: &TokenId,
        profile: Profile,
    ) -> Result<TokenRecord, StoreError> {
        self.write_sealed(&TOKENS, id.as_str(), Before::MustVerify, |tx| {
            if !self.profile_schema() {
                return Err(StoreError::Invalid("this database predates token profiles".into()));
            }
            let n = tx.execute(
                "UPDATE tokens SET profile = ?2 WHERE id = ?1",
                params![id.as_str(), profile.as_str()],
            )?;
            if n == 0 {
                return Err(token_not_found(id.as_str()));
            }
            Ok(())
        })?;
        let conn = self.conn();
        self.load_token(&conn, "id", id.as_str())?.ok_or_else(|| token_not_found(id.as_str()))
    }

    /// Writes a new token's profile; a database from before profiles holds only `full` ones.
    fn write_profile(
        &self,
        tx: &Connection,
        id: &TokenId,
        profile: Profile,
    ) -> rusqlite::Result<usize> {
        if !self.profile_schema() {
            return Ok(0);
        }
        tx.execute(
            "UPDATE tokens SET profile = ?2 WHERE id = ?1",
            params![id.as_str(), profile.as_str()],
        )
    }

    /// Narrows a scoped token to the projects of its scope that are in `keep` (a token for
    /// every project is left alone); returns how many projects it still sees.
    pub fn narrow_token_scope(
        &self,
        id: &TokenId,
        keep: &[sluice_core::ProjectId],
    ) -> Result<usize, StoreError> {
        self.write_sealed(&TOKENS, id.as_str(), Before::MustVerify, |tx| {
            let scope: Vec<String> = {
                let mut stmt =
                    tx.prepare("SELECT project_id FROM token_scopes WHERE token_id = ?1")?;
                let rows = stmt.query_map([id.as_str()], |r| r.get(0))?;
                rows.collect::<Result<_, _>>()?
            };
            let mut left = 0;
            for project in scope {
                if keep.iter().any(|k| k.as_str() == project) {
                    left += 1;
                } else {
                    tx.execute(
                        "DELETE FROM token_scopes WHERE token_id = ?1 AND project_id = ?2",
                        params![id.as_str(), project],
                    )?;
                }
            }
            Ok(left)
        })
    }

    /// Lifts the limit a token put on itself (the user's decision).
    pub fn lift_token_limit(&self, id: &TokenId) -> Result<TokenRecord, StoreError> {
        self.write_sealed(&TOKENS, id.as_str(), Before::MustVerify, |tx| {
            tx.execute(
                "UPDATE tokens SET self_limit = NULL, self_limited_ms = NULL WHERE id = ?1",
                params![id.as_str()],
            )?;
            Ok(())
        })?;
        let conn = self.conn();
        self.load_token(&conn, "id", id.as_str())?.ok_or_else(|| token_not_found(id.as_str()))
    }

    /// Whether any token or audit entry exists: state that a new install secret would orphan.
    pub fn has_secret_bound_state(&self) -> Result<bool, StoreError> {
        Ok(self.conn().query_row(
            "SELECT EXISTS (SELECT 1 FROM tokens) OR EXISTS (SELECT 1 FROM audit)",
            [],
            |r| r.get(0),
        )?)
    }
}

fn validate_label(label: &str) -> Result<&str, StoreError> {
    let label = label.trim();
    if label.is_empty() {
        return Err(StoreError::Invalid("the token label is empty".into()));
    }
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err(StoreError::Invalid(format!(
            "the token label is longer than {MAX_LABEL_CHARS} characters"
        )));
    }
    if label.chars().any(char::is_control) {
        return Err(StoreError::Invalid("the token label contains control characters".into()));
    }
    if label.to_ascii_lowercase().starts_with(TokenId::PREFIX) {
        return Err(StoreError::Invalid(format!(
            "a token label cannot start with {:?}: that is how token ids look",
            TokenId::PREFIX
        )));
    }
    Ok(label)
}

fn token_not_found(id_or_label: &str) -> StoreError {
    StoreError::NotFound(format!("no token {id_or_label:?}"))
}

impl Store {
    /// Loads one token by a unique column (`id`, `label` or `hash`), with its scope and
    /// whether its seal matches.
    /// The columns [`token_from_row`] reads; whether a token is remote comes from its grant
    /// (always false in a database opened at a schema from before grants, as tests do).
    fn columns(&self) -> String {
        let remote = if self.grants_schema() {
            "EXISTS (SELECT 1 FROM oauth_grants g WHERE g.token_id = tokens.id)"
        } else {
            "0"
        };
        let profile = if self.profile_schema() { "profile" } else { "'full'" };
        format!("{COLUMNS}, {remote}, {profile}")
    }

    fn load_token(
        &self,
        conn: &Connection,
        column: &'static str,
        value: impl rusqlite::ToSql,
    ) -> Result<Option<TokenRecord>, StoreError> {
        let sql = format!("SELECT {} FROM tokens WHERE {column} = ?1", self.columns());
        let Some(mut token) = conn.query_row(&sql, [value], token_from_row).optional()? else {
            return Ok(None);
        };
        fill_scope(conn, &mut token)?;
        token.tampered = !self.row_sealed(conn, &TOKENS, &token.id.as_str())?;
        Ok(Some(token))
    }
}

fn fill_scope(conn: &Connection, token: &mut TokenRecord) -> Result<(), StoreError> {
    if token.scope.is_none() {
        return Ok(());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT project_id FROM token_scopes WHERE token_id = ?1 ORDER BY project_id",
    )?;
    let ids = stmt.query_map([token.id.as_str()], |r| {
        let id: String = r.get(0)?;
        ProjectId::parse(&id).ok_or_else(|| decode_error(0, format!("bad project id {id:?}")))
    })?;
    token.scope = Some(ids.collect::<Result<_, _>>()?);
    Ok(())
}

fn token_from_row(r: &Row<'_>) -> rusqlite::Result<TokenRecord> {
    let id: String = r.get(0)?;
    let id = TokenId::parse(&id).ok_or_else(|| decode_error(0, format!("bad id {id:?}")))?;
    let hash: Vec<u8> = r.get(2)?;
    let hash: [u8; 32] =
        hash.try_into().map_err(|_| decode_error(2, "token hash is not 32 bytes".into()))?;
    let all: bool = r.get(3)?;
    let profile: String = r.get(11)?;
    let profile = profile.parse().map_err(|e: String| decode_error(11, e))?;
    let limit: Option<String> = r.get(8)?;
    let self_limit = match limit {
        None => None,
        Some(s) => Some((
            s.parse().map_err(|e: String| decode_error(8, e))?,
            r.get::<_, Option<i64>>(9)?.unwrap_or_default(),
        )),
    };
    Ok(TokenRecord {
        id,
        label: r.get(1)?,
        hash,
        // Filled by `fill_scope`; an empty list until then.
        scope: if all { None } else { Some(Vec::new()) },
        created_ms: r.get(4)?,
        last_used_ms: r.get(5)?,
        expires_ms: r.get(6)?,
        revoked_ms: r.get(7)?,
        self_limit,
        profile,
        tampered: false,
        remote: r.get(10)?,
    })
}
