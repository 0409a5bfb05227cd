//! A tiny ordered value tree. Config entries keep the key order the clients' docs show
//! (`type`, `url`, `headers`…), which `serde_json::Value` (sorted maps here) would lose; each
//! writer renders it into its own format.

/// A config value: strings, booleans, integers, lists and ordered maps.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Str(String),
    Bool(bool),
    Int(i64),
    List(Vec<V>),
    Map(Vec<(String, V)>),
}

impl V {
    pub fn s(s: impl Into<String>) -> V {
        V::Str(s.into())
    }

    pub fn strs(items: &[&str]) -> V {
        V::List(items.iter().map(|s| V::s(*s)).collect())
    }

    pub fn map<K: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> V {
        V::Map(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// The value of `key` in a map.
    pub fn get(&self, key: &str) -> Option<&V> {
        match self {
            V::Map(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The same value as JSON (key order is lost where serde_json sorts).
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            V::Str(s) => serde_json::Value::String(s.clone()),
            V::Bool(b) => serde_json::Value::Bool(*b),
            V::Int(i) => serde_json::Value::from(*i),
            V::List(items) => serde_json::Value::Array(items.iter().map(V::to_serde).collect()),
            V::Map(pairs) => serde_json::Value::Object(
                pairs.iter().map(|(k, v)| (k.clone(), v.to_serde())).collect(),
            ),
        }
    }

    /// One-line JSON, keys in order.
    pub fn to_json_compact(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out, None, 0);
        out
    }

    /// JSON indented by two spaces, keys in order (the layout `serde_json` pretty-prints).
    pub fn to_json_pretty(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out, Some("  "), 0);
        out
    }

    fn write_json(&self, out: &mut String, indent: Option<&str>, depth: usize) {
        let newline = |out: &mut String, depth: usize| {
            if let Some(unit) = indent {
                out.push('\n');
                for _ in 0..depth {
                    out.push_str(unit);
                }
            }
        };
        match self {
            V::Str(s) => out.push_str(&json_string(s)),
            V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            V::Int(i) => out.push_str(&i.to_string()),
            V::List(items) if items.is_empty() => out.push_str("[]"),
            V::Map(pairs) if pairs.is_empty() => out.push_str("{}"),
            V::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, depth + 1);
                    item.write_json(out, indent, depth + 1);
                }
                newline(out, depth);
                out.push(']');
            }
            V::Map(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, depth + 1);
                    out.push_str(&json_string(k));
                    out.push(':');
                    if indent.is_some() {
                        out.push(' ');
                    }
                    v.write_json(out, indent, depth + 1);
                }
                newline(out, depth);
                out.push('}');
            }
        }
    }
}

/// A JSON string literal (escapes quotes, backslashes and control characters).
pub(crate) fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}
