//! Small key/value state for the engine ("paused", the install secret's source, …). Values are
//! text; booleans are stored as `true` / `false`.

use rusqlite::{OptionalExtension, params};

use crate::seal::{kv_get_sealed, kv_put_sealed, seal_name};
use crate::{Store, StoreError};

impl Store {
    pub fn kv_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        let conn = self.conn();
        let value = conn
            .query_row("SELECT value FROM kv WHERE key = ?1", [key], |r| r.get(0))
            .optional()?;
        Ok(value)
    }

    pub fn kv_set(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO kv (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }

    /// Removes a key; returns whether it existed.
    pub fn kv_delete(&self, key: &str) -> Result<bool, StoreError> {
        Ok(self.conn().execute("DELETE FROM kv WHERE key = ?1", [key])? > 0)
    }

    pub fn kv_get_bool(&self, key: &str) -> Result<Option<bool>, StoreError> {
        match self.kv_get(key)?.as_deref() {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(StoreError::Corrupt(format!("kv {key:?} is not a bool: {other:?}"))),
        }
    }

    pub fn kv_set_bool(&self, key: &str, value: bool) -> Result<(), StoreError> {
        self.kv_set(key, if value { "true" } else { "false" })
    }

    /// A sealed text value: `None` when it is missing or its seal does not match — the caller
    /// then assumes the safe value (for the reach setting: off).
    pub fn sealed_text(&self, name: &str) -> Result<Option<String>, StoreError> {
        let Some(key) = self.sealing()? else { return self.kv_get(name) };
        kv_get_sealed(&self.conn(), key, name)
    }

    /// Sets a sealed text value, or removes it (and its seal) with `None`.
    pub fn set_sealed_text(&self, name: &str, value: Option<&str>) -> Result<(), StoreError> {
        let key = self.sealing()?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        match (value, key) {
            (Some(value), Some(key)) => kv_put_sealed(&tx, key, name, value)?,
            (Some(value), None) => {
                tx.execute(
                    "INSERT INTO kv (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![name, value],
                )?;
            }
            (None, _) => {
                tx.execute("DELETE FROM kv WHERE key IN (?1, ?2)", params![name, seal_name(name)])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
