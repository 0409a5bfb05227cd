//! The tables whose rows carry a `seal` column ([`SealedTable`]), and how each row's seal is
//! computed, checked and rewritten (see [`crate::seal`] for what seals are for).

use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row, params};

use crate::StoreError;
use crate::seal::{matches, seal_of};

/// A table whose rows carry a `seal` column, and how a row's seal is computed.
#[derive(Clone, Copy)]
pub(crate) struct SealedTable {
    pub table: &'static str,
    /// The key column.
    pub id: &'static str,
    /// The sealed columns, in order.
    pub columns: &'static str,
    pub n_columns: usize,
    /// Whether the token's scope rows are bound too.
    pub scope: bool,
    /// Columns added after sealing began, in the order they were added, each with its default
    /// (`None`: NULL): each is bound (with its name) only when it holds something else, so rows
    /// sealed before it existed keep their seals without being resealed — a reseal at the
    /// upgrade would bless a row edited before it — while any change of it later breaks the
    /// seal. (A token's `profile`, `full` by default; a project's `git_emails`, `hide` by
    /// default, `worktree_of`, NULL by default, and `git_hooks`, `off` by default.)
    pub tails: &'static [(&'static str, Option<&'static str>)],
}

/// Whether a tail column holds its default.
fn is_default(value: ValueRef<'_>, default: Option<&str>) -> bool {
    match default {
        None => matches!(value, ValueRef::Null),
        Some(default) => value.as_str().ok() == Some(default),
    }
}

/// The seal of `row`: its first `n` columns, then each tail column (from index `n`) that is not
/// its default.
fn seal_of_row(
    key: &[u8; 32],
    table: &str,
    row: &Row<'_>,
    n: usize,
    tails: &[(&str, Option<&str>)],
    extra: &[&str],
) -> rusqlite::Result<[u8; 32]> {
    let mut values = (0..n).map(|i| row.get_ref(i)).collect::<rusqlite::Result<Vec<_>>>()?;
    for (i, (name, default)) in tails.iter().enumerate() {
        let value = row.get_ref(n + i)?;
        if !is_default(value, *default) {
            values.push(ValueRef::Text(name.as_bytes()));
            values.push(value);
        }
    }
    Ok(seal_of(key, table, &values, extra))
}

impl SealedTable {
    /// The columns a seal is computed from, the tails last.
    fn selected(&self) -> String {
        let mut columns = self.columns.to_owned();
        for (tail, _) in self.tails {
            columns.push_str(", ");
            columns.push_str(tail);
        }
        columns
    }

    /// The index of the `seal` column after [`SealedTable::selected`].
    fn seal_index(&self) -> usize {
        self.n_columns + self.tails.len()
    }

    /// The seal `row` (its first `n_columns` columns, then the tail) should carry.
    pub(crate) fn compute(
        &self,
        conn: &Connection,
        key: &[u8; 32],
        row: &Row<'_>,
    ) -> Result<[u8; 32], StoreError> {
        let scope = if self.scope {
            let id: String = row.get(0)?;
            scope_of(conn, &id)?
        } else {
            Vec::new()
        };
        let scope: Vec<&str> = scope.iter().map(String::as_str).collect();
        Ok(seal_of_row(key, self.table, row, self.n_columns, self.tails, &scope)?)
    }

    /// Whether the row `id` carries the seal it should (false when it is missing).
    pub(crate) fn verify(
        &self,
        conn: &Connection,
        key: &[u8; 32],
        id: &dyn rusqlite::ToSql,
    ) -> Result<bool, StoreError> {
        let sql =
            format!("SELECT {}, seal FROM {} WHERE {} = ?1", self.selected(), self.table, self.id);
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([id])?;
        let Some(row) = rows.next()? else { return Ok(false) };
        let computed = self.compute(conn, key, row)?;
        let stored: Option<Vec<u8>> = row.get(self.seal_index())?;
        Ok(matches(&computed, stored.as_deref()))
    }

    /// Recomputes the seal of row `id` after a legitimate write, in the caller's transaction.
    pub(crate) fn reseal(
        &self,
        conn: &Connection,
        key: &[u8; 32],
        id: &dyn rusqlite::ToSql,
    ) -> Result<(), StoreError> {
        let sql = format!("SELECT {} FROM {} WHERE {} = ?1", self.selected(), self.table, self.id);
        let seal = {
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut rows = stmt.query([id])?;
            let Some(row) = rows.next()? else { return Ok(()) };
            self.compute(conn, key, row)?
        };
        conn.prepare_cached(&format!(
            "UPDATE {} SET seal = ?2 WHERE {} = ?1",
            self.table, self.id
        ))?
        .execute(params![id, &seal[..]])?;
        Ok(())
    }

    /// Every row's key and whether its seal verifies.
    pub(crate) fn check_all(
        &self,
        conn: &Connection,
        key: &[u8; 32],
    ) -> Result<Vec<(String, bool)>, StoreError> {
        let sql =
            format!("SELECT {}, seal FROM {} ORDER BY {}", self.selected(), self.table, self.id);
        let mut stmt = conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let computed = self.compute(conn, key, row)?;
            let stored: Option<Vec<u8>> = row.get(self.seal_index())?;
            let id = match row.get_ref(0)? {
                ValueRef::Integer(i) => i.to_string(),
                other => other.as_str().unwrap_or("?").to_owned(),
            };
            out.push((id, matches(&computed, stored.as_deref())));
        }
        Ok(out)
    }

    /// Reseals every row (the migration's first sealing, or the user's `reseal`).
    pub(crate) fn reseal_all(
        &self,
        conn: &Connection,
        key: &[u8; 32],
    ) -> Result<usize, StoreError> {
        let ids: Vec<rusqlite::types::Value> = {
            let mut stmt = conn.prepare(&format!("SELECT {} FROM {}", self.id, self.table))?;
            stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?
        };
        for id in &ids {
            self.reseal(conn, key, id)?;
        }
        Ok(ids.len())
    }
}

/// A token's scope rows, sorted, as its seal binds them.
fn scope_of(conn: &Connection, token: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT project_id FROM token_scopes WHERE token_id = ?1 ORDER BY project_id",
    )?;
    let ids = stmt.query_map([token], |r| r.get(0))?;
    Ok(ids.collect::<Result<_, _>>()?)
}

/// The project rows: every column but `updated_ms` (the root, the modes, the lists, the state),
/// their git e-mail setting (schema 18), the project they are a worktree of (schema 19) and their
/// git hooks setting (schema 20).
pub(crate) const PROJECTS: SealedTable = SealedTable {
    table: "projects",
    id: "id",
    columns: "id, name, root, access, exec, state, state_reason, shield_patterns, root_dev, \
              root_ino, created_ms, ask_deletes, ask_writes, network_mode, autorun_rules, \
              hide_paths, unhide_paths, grants, sockets, require_full, network",
    n_columns: 21,
    scope: false,
    tails: &[("git_emails", Some("hide")), ("worktree_of", None), ("git_hooks", Some("off"))],
};

/// The allow rules: the whole rule.
pub(crate) const RULES: SealedTable = SealedTable {
    table: "allow_rules",
    id: "id",
    columns: "id, project_id, argv, created_ms, cwd, env, content, added_from, asked_by",
    n_columns: 9,
    scope: false,
    tails: &[],
};

/// The tokens: all but `last_used_ms` (written on use), their profile (schema 16) and their
/// scope rows.
pub(crate) const TOKENS: SealedTable = SealedTable {
    table: "tokens",
    id: "id",
    columns: "id, label, hash, all_projects, created_ms, expires_ms, revoked_ms, self_limit, \
              self_limited_ms",
    n_columns: 9,
    scope: true,
    tails: &[("profile", Some("full"))],
};
