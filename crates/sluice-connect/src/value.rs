//! A tiny ordered value tree. Config entries keep the key order the clients' docs show
//! (`type`, `url`, `headers`…), which `serde_json::Value` (sorted maps here) would lose; each
//! writer renders it into its own format (JSON through `Serialize`, which keeps the order).

use serde::{Serialize, Serializer};

/// A config value: strings, booleans, integers, lists and ordered maps.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigValue {
    Str(String),
    Bool(bool),
    Int(i64),
    List(Vec<ConfigValue>),
    Map(Vec<(String, ConfigValue)>),
}

impl ConfigValue {
    pub fn s(s: impl Into<String>) -> ConfigValue {
        ConfigValue::Str(s.into())
    }

    pub fn strs(items: &[&str]) -> ConfigValue {
        ConfigValue::List(items.iter().map(|s| ConfigValue::s(*s)).collect())
    }

    pub fn map<K: Into<String>>(pairs: impl IntoIterator<Item = (K, ConfigValue)>) -> ConfigValue {
        ConfigValue::Map(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// The value of `key` in a map.
    pub fn get(&self, key: &str) -> Option<&ConfigValue> {
        match self {
            ConfigValue::Map(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The same value as JSON (key order is lost where serde_json sorts).
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            ConfigValue::Str(s) => serde_json::Value::String(s.clone()),
            ConfigValue::Bool(b) => serde_json::Value::Bool(*b),
            ConfigValue::Int(i) => serde_json::Value::from(*i),
            ConfigValue::List(items) => {
                serde_json::Value::Array(items.iter().map(ConfigValue::to_serde).collect())
            }
            ConfigValue::Map(pairs) => serde_json::Value::Object(
                pairs.iter().map(|(k, v)| (k.clone(), v.to_serde())).collect(),
            ),
        }
    }

    // Serializing a `ConfigValue` cannot fail: every map key is a string.

    /// One-line JSON, keys in order.
    pub fn to_json_compact(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// JSON indented by two spaces, keys in order.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Maps keep their order: serialized entry by entry, never through a sorted map.
impl Serialize for ConfigValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ConfigValue::Str(s) => serializer.serialize_str(s),
            ConfigValue::Bool(b) => serializer.serialize_bool(*b),
            ConfigValue::Int(i) => serializer.serialize_i64(*i),
            ConfigValue::List(items) => serializer.collect_seq(items),
            ConfigValue::Map(pairs) => serializer.collect_map(pairs.iter().map(|(k, v)| (k, v))),
        }
    }
}
