//! "Always allow this exact command in this project" rules, created from an approval and
//! reviewable (and removable) by the user. The match is on the exact argv, nothing looser.
//! Each rule remembers who added it (where the user decided, which assistant asked), so the
//! list the user reviews says where every rule came from.

use rusqlite::{OptionalExtension, Row, params};
use sluice_core::ProjectId;

use crate::projects::{decode_error, project_not_found};
use crate::seal::RULES;
use crate::{Store, StoreError, now_ms};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowRule {
    pub id: i64,
    pub project_id: ProjectId,
    pub argv: Vec<String>,
    /// The normalized project-relative working folder (`""`: the root).
    pub cwd: String,
    /// Environment additions, sorted by name.
    pub env: Vec<(String, String)>,
    /// The hash of the project-defined text the command runs, as approved (`npm run`, `make`,
    /// `just`); the rule holds only while it is unchanged.
    pub content: Option<String>,
    pub created_ms: i64,
    pub origin: RuleOrigin,
}

/// Where the local user granted a rule: the window, the tray menu or the `sluice` CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    Window,
    Tray,
    Cli,
}

impl Channel {
    pub const fn as_str(self) -> &'static str {
        match self {
            Channel::Window => "window",
            Channel::Tray => "tray",
            Channel::Cli => "cli",
        }
    }

    fn parse(s: &str) -> Option<Channel> {
        [Channel::Window, Channel::Tray, Channel::Cli].into_iter().find(|c| c.as_str() == s)
    }
}

/// Who added a rule. Both are `None` for rules made before Sluice recorded them (schema v8).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleOrigin {
    /// Where the user chose "always allow".
    pub from: Option<Channel>,
    /// The label of the assistant's token whose request the user answered, as it was then.
    pub asked_by: Option<String>,
}

const COLUMNS: &str = "id, project_id, argv, created_ms, cwd, env, content, added_from, asked_by";

impl Store {
    /// Adds a rule, recording who added it; adding an existing command again binds it to
    /// `content` (the user approved the command as it is now) and returns it. The existing
    /// rule keeps when and by whom it was first added.
    pub fn insert_allow_rule(
        &self,
        project: &ProjectId,
        argv: &[String],
        cwd: &str,
        env: &[(String, String)],
        content: Option<&str>,
        origin: &RuleOrigin,
    ) -> Result<AllowRule, StoreError> {
        if argv.is_empty() || argv[0].is_empty() {
            return Err(StoreError::Invalid("an allow rule needs a program".into()));
        }
        let json = argv_json(argv)?;
        let key = self.sealing()?;
        let mut env = env.to_vec();
        env.sort();
        let env = serde_json::to_string(&env)
            .map_err(|e| StoreError::Invalid(format!("bad environment: {e}")))?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let n = tx
            .execute(
                "INSERT INTO allow_rules
                     (project_id, argv, cwd, env, created_ms, content, added_from, asked_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (project_id, argv, cwd, env) DO UPDATE SET content = excluded.content",
                params![
                    project.as_str(),
                    json,
                    cwd,
                    env,
                    now_ms(),
                    content,
                    origin.from.map(Channel::as_str),
                    origin.asked_by,
                ],
            )
            .map_err(|e| {
                if crate::error::is_foreign_key_violation(&e) {
                    project_not_found(project.as_str())
                } else {
                    e.into()
                }
            })?;
        let rule = tx
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM allow_rules
                     WHERE project_id = ?1 AND argv = ?2 AND cwd = ?3 AND env = ?4"
                ),
                params![project.as_str(), json, cwd, env],
                rule_from_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::Corrupt("allow rule vanished".into()))?;
        // The user approved exactly this command: the rule is sealed as it is now, even if it
        // existed before with a broken seal.
        if let Some(key) = key {
            RULES.reseal(&tx, key, &rule.id)?;
        }
        tx.commit()?;
        tracing::debug!(written = n > 0, rule = rule.id, "allow rule");
        Ok(rule)
    }

    /// The rules of one project, or of all projects, oldest first. A rule whose seal does not
    /// match (added or changed outside Sluice) is left out: it allows nothing, and
    /// [`Store::integrity`] names it.
    pub fn list_allow_rules(
        &self,
        project: Option<&ProjectId>,
    ) -> Result<Vec<AllowRule>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM allow_rules WHERE ?1 IS NULL OR project_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([project.map(ProjectId::as_str)], rule_from_row)?;
        let mut rules = Vec::new();
        for rule in rows {
            let rule = rule?;
            if self.row_sealed(&conn, &RULES, &rule.id)? {
                rules.push(rule);
            }
        }
        Ok(rules)
    }

    pub fn delete_allow_rule(&self, id: i64) -> Result<(), StoreError> {
        let n = self.conn().execute("DELETE FROM allow_rules WHERE id = ?1", [id])?;
        if n == 0 {
            return Err(StoreError::NotFound(format!("no allow rule {id}")));
        }
        Ok(())
    }
}

/// serde_json's output for a string list is canonical (no whitespace, fixed escaping), so the
/// UNIQUE constraint and the equality lookup compare like with like.
fn argv_json(argv: &[String]) -> Result<String, StoreError> {
    serde_json::to_string(argv).map_err(|e| StoreError::Invalid(format!("bad argv: {e}")))
}

fn rule_from_row(r: &Row<'_>) -> rusqlite::Result<AllowRule> {
    let project: String = r.get(1)?;
    let argv: String = r.get(2)?;
    Ok(AllowRule {
        id: r.get(0)?,
        project_id: ProjectId::parse(&project)
            .ok_or_else(|| decode_error(1, format!("bad project id {project:?}")))?,
        argv: serde_json::from_str(&argv).map_err(|e| decode_error(2, e.to_string()))?,
        created_ms: r.get(3)?,
        cwd: r.get(4)?,
        env: {
            let env: String = r.get(5)?;
            serde_json::from_str(&env).map_err(|e| decode_error(5, e.to_string()))?
        },
        content: r.get(6)?,
        origin: RuleOrigin {
            from: r
                .get::<_, Option<String>>(7)?
                .map(|s| {
                    Channel::parse(&s).ok_or_else(|| decode_error(7, format!("bad channel {s:?}")))
                })
                .transpose()?,
            asked_by: r.get(8)?,
        },
    })
}
