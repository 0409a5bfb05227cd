//! Format-preserving edits of a client's config text: set or remove `servers["sluice"]` and
//! nothing else. JSON and JSONC go through `jsonc-parser`'s CST (comments, order and layout
//! stay), TOML through `toml_edit`, YAML through `yaml-edit`'s lossless syntax tree.
//!
//! Every edit is verified before it is returned: the text before and after is parsed by a
//! real parser of its format, and the parsed "after" must equal the parsed "before" with only
//! Sluice's entry (and VS Code's `sluice-token` input) changed. Anything else is an error and
//! the caller writes nothing.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value as Json;

use crate::value::ConfigValue;
use crate::{Entry, Format, SERVER_NAME, VSCODE_INPUT_ID};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    /// The file is not valid in its format, or not shaped as the client expects.
    #[error("{0}")]
    Unparseable(String),
    /// The edit could not be made (or proven) to change only Sluice's entry.
    #[error("{0}")]
    Unsafe(String),
}

/// What to do to the config.
#[derive(Debug, Clone, Copy)]
pub enum Op<'a> {
    Set(&'a Entry),
    Remove,
}

/// Applies `op` to `text` (a whole config file in `format`, whose servers map is under `key`)
/// and returns the new text. An empty `text` is an empty config.
pub fn edit(format: Format, key: &str, text: &str, op: Op<'_>) -> Result<String, EditError> {
    let before = parse(format, text)?;
    let after_text = match format {
        Format::Json | Format::Jsonc => edit_json(key, text, op)?,
        Format::Toml => edit_toml(key, text, op)?,
        Format::Yaml => edit_yaml(key, text, op)?,
    };
    let after = parse(format, &after_text).map_err(|e| {
        EditError::Unsafe(format!("the edited file would not parse ({e}); nothing was written"))
    })?;
    let expected = expected(before, key, op)?;
    if after != expected {
        return Err(EditError::Unsafe(
            "the edit would change more than Sluice's entry; nothing was written — add the \
             snippet by hand"
                .into(),
        ));
    }
    Ok(after_text)
}

/// Parses a config text into a JSON value (an empty text is `{}`), with the parser of its
/// format. Strict JSON clients get a strict parse: a file they would reject is not "fixed".
pub fn parse(format: Format, text: &str) -> Result<Json, EditError> {
    if text.trim().is_empty() {
        return Ok(Json::Object(Default::default()));
    }
    let bad = |e: String| {
        EditError::Unparseable(format!("the file cannot be parsed as {}: {e}", name(format)))
    };
    let value = match format {
        Format::Json => serde_json::from_str::<Json>(text).map_err(|e| bad(e.to_string()))?,
        Format::Jsonc => CstRootNode::parse(text, &jsonc_options())
            .map_err(|e| bad(e.to_string()))?
            .value()
            .and_then(|v| v.to_serde_value())
            .unwrap_or(Json::Null),
        Format::Toml => {
            let doc = text.parse::<toml_edit::DocumentMut>().map_err(|e| bad(e.to_string()))?;
            toml_table_json(doc.as_table())
        }
        Format::Yaml => {
            let docs =
                yaml_rust2::YamlLoader::load_from_str(text).map_err(|e| bad(e.to_string()))?;
            match docs.as_slice() {
                [] => Json::Object(Default::default()),
                [doc] => yaml_json(doc),
                _ => return Err(bad("it holds several YAML documents".into())),
            }
        }
    };
    match value {
        Json::Object(_) => Ok(value),
        // `~` or an empty document
        Json::Null => Ok(Json::Object(Default::default())),
        _ => Err(EditError::Unparseable(format!(
            "the file's top level is not a {} mapping",
            name(format)
        ))),
    }
}

fn name(format: Format) -> &'static str {
    match format {
        Format::Json => "JSON",
        Format::Jsonc => "JSON with comments",
        Format::Toml => "TOML",
        Format::Yaml => "YAML",
    }
}

fn jsonc_options() -> ParseOptions {
    ParseOptions { allow_comments: true, allow_trailing_commas: true, ..ParseOptions::default() }
}

/// The parsed "before" with only Sluice's change applied: what "after" must parse to.
fn expected(mut before: Json, key: &str, op: Op<'_>) -> Result<Json, EditError> {
    let root =
        before.as_object_mut().ok_or_else(|| EditError::Unparseable("not a mapping".into()))?;
    match op {
        Op::Set(entry) => {
            let servers = root.entry(key).or_insert_with(|| Json::Object(Default::default()));
            if servers.is_null() {
                *servers = Json::Object(Default::default());
            }
            let servers = servers.as_object_mut().ok_or_else(|| {
                EditError::Unparseable(format!("\"{key}\" in the file is not a mapping"))
            })?;
            servers.insert(SERVER_NAME.to_owned(), entry.value.to_serde());
            if let Some(input) = &entry.input {
                let inputs = root.entry("inputs").or_insert_with(|| Json::Array(vec![]));
                let list = inputs.as_array_mut().ok_or_else(|| {
                    EditError::Unparseable("\"inputs\" in the file is not a list".into())
                })?;
                if !list.iter().any(is_sluice_input) {
                    list.push(input.to_serde());
                }
            }
        }
        Op::Remove => {
            if let Some(servers) = root.get_mut(key).and_then(Json::as_object_mut) {
                servers.remove(SERVER_NAME);
            }
            if let Some(list) = root.get_mut("inputs").and_then(Json::as_array_mut) {
                list.retain(|i| !is_sluice_input(i));
            }
        }
    }
    Ok(before)
}

fn is_sluice_input(v: &Json) -> bool {
    v.get("id").and_then(Json::as_str) == Some(VSCODE_INPUT_ID)
}

// ── JSON / JSONC ──────────────────────────────────────────────────────────────────────────

fn cst_value(v: &ConfigValue) -> CstInputValue {
    match v {
        ConfigValue::Str(s) => CstInputValue::String(s.clone()),
        ConfigValue::Bool(b) => CstInputValue::Bool(*b),
        ConfigValue::Int(i) => CstInputValue::Number(i.to_string()),
        ConfigValue::List(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        ConfigValue::Map(pairs) => {
            CstInputValue::Object(pairs.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect())
        }
    }
}

/// The object under `key` of `obj`, created empty when absent; an error when it is something
/// else (Sluice does not replace a value it does not understand).
fn child_object(obj: &CstObject, key: &str) -> Result<CstObject, EditError> {
    if obj.get(key).is_none() {
        obj.append(key, CstInputValue::Object(vec![]));
    }
    let prop = obj.get(key).ok_or_else(|| EditError::Unsafe(format!("cannot add \"{key}\"")))?;
    if let Some(value) = prop.value()
        && value.as_null_keyword().is_some()
    {
        prop.set_value(CstInputValue::Object(vec![]));
    }
    prop.object_value()
        .ok_or_else(|| EditError::Unparseable(format!("\"{key}\" in the file is not an object")))
}

fn edit_json(key: &str, text: &str, op: Op<'_>) -> Result<String, EditError> {
    let src = if text.trim().is_empty() { "{}\n" } else { text };
    let root = CstRootNode::parse(src, &jsonc_options())
        .map_err(|e| EditError::Unparseable(format!("the file cannot be parsed: {e}")))?;
    let obj = match root.value() {
        None => root.object_value_or_set(),
        Some(v) => v.as_object().ok_or_else(|| {
            EditError::Unparseable("the file's top level is not a JSON object".into())
        })?,
    };
    match op {
        Op::Set(entry) => {
            let servers = child_object(&obj, key)?;
            let value = cst_value(&entry.value);
            match servers.get(SERVER_NAME) {
                Some(prop) => prop.set_value(value),
                None => {
                    servers.append(SERVER_NAME, value);
                }
            }
            if let Some(input) = &entry.input {
                if obj.get("inputs").is_none() {
                    obj.insert(0, "inputs", CstInputValue::Array(vec![]));
                }
                let inputs = obj
                    .get("inputs")
                    .and_then(|p| p.array_value())
                    .ok_or_else(|| EditError::Unparseable("\"inputs\" is not a list".into()))?;
                let present = inputs.elements().iter().any(|el| {
                    el.as_object()
                        .and_then(|o| o.get("id"))
                        .and_then(|p| p.value())
                        .and_then(|v| v.as_string_lit())
                        .and_then(|s| s.decoded_value().ok())
                        .is_some_and(|id| id == VSCODE_INPUT_ID)
                });
                if !present {
                    inputs.append(cst_value(input));
                }
            }
        }
        Op::Remove => {
            let servers = obj.get(key).and_then(|p| p.object_value());
            if let Some(prop) = servers.and_then(|s| s.get(SERVER_NAME)) {
                prop.remove();
            }
            if let Some(inputs) = obj.get("inputs").and_then(|p| p.array_value()) {
                for el in inputs.elements() {
                    let ours = el
                        .as_object()
                        .and_then(|o| o.get("id"))
                        .and_then(|p| p.value())
                        .and_then(|v| v.as_string_lit())
                        .and_then(|s| s.decoded_value().ok())
                        .is_some_and(|id| id == VSCODE_INPUT_ID);
                    if ours {
                        el.remove();
                    }
                }
            }
        }
    }
    let mut out = root.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

// ── TOML ──────────────────────────────────────────────────────────────────────────────────

fn toml_value(v: &ConfigValue) -> toml_edit::Value {
    match v {
        ConfigValue::Str(s) => toml_edit::Value::from(s.as_str()),
        ConfigValue::Bool(b) => toml_edit::Value::from(*b),
        ConfigValue::Int(i) => toml_edit::Value::from(*i),
        ConfigValue::List(items) => {
            toml_edit::Value::Array(items.iter().map(toml_value).collect::<toml_edit::Array>())
        }
        ConfigValue::Map(pairs) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in pairs {
                t.insert(k, toml_value(v));
            }
            toml_edit::Value::InlineTable(t)
        }
    }
}

/// Sluice's entry as a `[mcp_servers.sluice]` table (nested maps inline: `env = { … }`).
fn toml_entry(v: &ConfigValue) -> toml_edit::Table {
    let mut table = toml_edit::Table::new();
    if let ConfigValue::Map(pairs) = v {
        for (k, v) in pairs {
            table.insert(k, toml_edit::Item::Value(toml_value(v)));
        }
    }
    table
}

/// The TOML of a config holding only Sluice's entry.
pub fn render_toml_new(entry: &ConfigValue) -> String {
    let mut doc = toml_edit::DocumentMut::new();
    let mut servers = toml_edit::Table::new();
    servers.set_implicit(true);
    servers.insert(SERVER_NAME, toml_edit::Item::Table(toml_entry(entry)));
    doc.insert("mcp_servers", toml_edit::Item::Table(servers));
    doc.to_string()
}

fn edit_toml(key: &str, text: &str, op: Op<'_>) -> Result<String, EditError> {
    let mut doc = text
        .parse::<toml_edit::DocumentMut>()
        .map_err(|e| EditError::Unparseable(format!("the file cannot be parsed as TOML: {e}")))?;
    match op {
        Op::Set(entry) => {
            if !doc.contains_key(key) {
                let mut servers = toml_edit::Table::new();
                servers.set_implicit(true);
                doc.insert(key, toml_edit::Item::Table(servers));
            }
            let servers = doc[key].as_table_like_mut().ok_or_else(|| {
                EditError::Unparseable(format!("\"{key}\" in the file is not a table"))
            })?;
            let item = if servers.is_dotted() || doc_key_is_inline(text, key) {
                toml_edit::Item::Value(toml_value(&entry.value))
            } else {
                toml_edit::Item::Table(toml_entry(&entry.value))
            };
            let servers = doc[key].as_table_like_mut().ok_or_else(|| {
                EditError::Unparseable(format!("\"{key}\" in the file is not a table"))
            })?;
            servers.insert(SERVER_NAME, item);
        }
        Op::Remove => {
            if let Some(servers) = doc.get_mut(key).and_then(|i| i.as_table_like_mut()) {
                servers.remove(SERVER_NAME);
            }
        }
    }
    Ok(doc.to_string())
}

/// Whether `key` is written as an inline table (`mcp_servers = { … }`): a nested table
/// header cannot be added inside it, so the entry goes inline too.
fn doc_key_is_inline(text: &str, key: &str) -> bool {
    text.parse::<toml_edit::DocumentMut>()
        .ok()
        .and_then(|d| d.get(key).map(|i| i.is_inline_table()))
        .unwrap_or(false)
}

fn toml_item_json(item: &toml_edit::Item) -> Json {
    match item {
        toml_edit::Item::None => Json::Null,
        toml_edit::Item::Value(v) => toml_value_json(v),
        toml_edit::Item::Table(t) => toml_table_json(t),
        toml_edit::Item::ArrayOfTables(a) => Json::Array(a.iter().map(toml_table_json).collect()),
    }
}

fn toml_table_json(t: &toml_edit::Table) -> Json {
    Json::Object(t.iter().map(|(k, v)| (k.to_owned(), toml_item_json(v))).collect())
}

fn toml_value_json(v: &toml_edit::Value) -> Json {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Json::String(s.value().clone()),
        T::Integer(i) => Json::from(*i.value()),
        // Compared as text: equality of floats is not what is being checked.
        T::Float(f) => Json::String(f.value().to_string()),
        T::Boolean(b) => Json::Bool(*b.value()),
        T::Datetime(d) => Json::String(d.value().to_string()),
        T::Array(a) => Json::Array(a.iter().map(toml_value_json).collect()),
        T::InlineTable(t) => {
            Json::Object(t.iter().map(|(k, v)| (k.to_owned(), toml_value_json(v))).collect())
        }
    }
}

// ── YAML (Goose) ──────────────────────────────────────────────────────────────────────────

fn yaml_json(y: &yaml_rust2::Yaml) -> Json {
    use yaml_rust2::Yaml as Y;
    match y {
        Y::Real(s) => Json::String(s.clone()),
        Y::Integer(i) => Json::from(*i),
        Y::String(s) => Json::String(s.clone()),
        Y::Boolean(b) => Json::Bool(*b),
        Y::Array(a) => Json::Array(a.iter().map(yaml_json).collect()),
        Y::Hash(h) => Json::Object(
            h.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Y::String(s) => s.clone(),
                        Y::Integer(i) => i.to_string(),
                        Y::Boolean(b) => b.to_string(),
                        other => format!("{other:?}"),
                    };
                    (key, yaml_json(v))
                })
                .collect(),
        ),
        Y::Alias(n) => Json::String(format!("*alias{n}")),
        Y::Null | Y::BadValue => Json::Null,
    }
}

/// `v` (a map) as a block mapping built by `yaml-edit`, which quotes every string that a plain
/// scalar would misread (`'true'`, `'12'`, `'a: b'`, `'--flag'`). Lists are block sequences.
fn yaml_mapping(v: &ConfigValue) -> yaml_edit::MappingBuilder {
    let ConfigValue::Map(pairs) = v else { return yaml_edit::MappingBuilder::new() };
    pairs.iter().fold(yaml_edit::MappingBuilder::new(), |m, (k, v)| match v {
        ConfigValue::Str(s) => m.pair(k, s.as_str()),
        ConfigValue::Bool(b) => m.pair(k, *b),
        ConfigValue::Int(i) => m.pair(k, *i),
        ConfigValue::List(_) => m.insert_sequence(k, yaml_sequence(v)),
        ConfigValue::Map(_) => m.insert_mapping(k, yaml_mapping(v)),
    })
}

fn yaml_sequence(v: &ConfigValue) -> yaml_edit::SequenceBuilder {
    let ConfigValue::List(items) = v else { return yaml_edit::SequenceBuilder::new() };
    items.iter().fold(yaml_edit::SequenceBuilder::new(), |l, v| match v {
        ConfigValue::Str(s) => l.item(s.as_str()),
        ConfigValue::Bool(b) => l.item(*b),
        ConfigValue::Int(i) => l.item(*i),
        ConfigValue::List(_) => l.insert_sequence(yaml_sequence(v)),
        ConfigValue::Map(_) => l.insert_mapping(yaml_mapping(v)),
    })
}

/// `{key: {sluice: entry}}`, built by `yaml-edit`.
fn yaml_new(key: &str, entry: &ConfigValue) -> yaml_edit::Document {
    let servers = yaml_edit::MappingBuilder::new().insert_mapping(SERVER_NAME, yaml_mapping(entry));
    yaml_edit::MappingBuilder::new().insert_mapping(key, servers).build_document()
}

/// The YAML of a config holding only Sluice's entry under `key`.
pub fn render_yaml_new(key: &str, entry: &ConfigValue) -> String {
    let mut out = yaml_new(key, entry).to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// What the value under the servers key is, as far as an edit cares.
enum Servers {
    /// No such key, or an empty value (`extensions:`, `~`, `{}`): replaced whole on set.
    Empty,
    /// A block mapping: Sluice's entry is set or removed inside it.
    Block(yaml_edit::Mapping),
    /// A flow mapping with entries: not edited.
    Flow(yaml_edit::Mapping),
    /// Anything else.
    Other,
}

fn servers_of(root: &yaml_edit::Mapping, key: &str) -> Servers {
    let Some(node) = root.get(key) else { return Servers::Empty };
    if let Some(m) = node.as_mapping() {
        return match (m.is_flow_style(), m.is_empty()) {
            (_, true) => Servers::Empty,
            (true, false) => Servers::Flow(m.clone()),
            (false, false) => Servers::Block(m.clone()),
        };
    }
    match node.as_scalar() {
        Some(s) if s.is_null() => Servers::Empty,
        _ => Servers::Other,
    }
}

/// Edits the `key` mapping of a YAML file in `yaml-edit`'s lossless syntax tree: Sluice's
/// entry is set or removed, and every other byte (comments, order, quoting, indentation, line
/// endings) stays as it was.
fn edit_yaml(key: &str, text: &str, op: Op<'_>) -> Result<String, EditError> {
    let file = text.parse::<yaml_edit::YamlFile>().map_err(|e| {
        EditError::Unsafe(format!(
            "the YAML file cannot be edited in place ({e}); add the snippet by hand"
        ))
    })?;
    if file.documents().nth(1).is_some() {
        return Err(EditError::Unparseable(
            "the file cannot be parsed as YAML: it holds several YAML documents".into(),
        ));
    }
    let not_a_mapping =
        || EditError::Unparseable(format!("\"{key}\" in the file is not a mapping"));
    let flow = || {
        EditError::Unsafe(format!(
            "\"{key}\" is written in YAML flow style; add the snippet by hand"
        ))
    };
    let root = file.document().and_then(|d| d.as_mapping());
    match op {
        Op::Remove => match root.map(|r| servers_of(&r, key)) {
            None | Some(Servers::Empty) => return Ok(text.to_owned()),
            Some(Servers::Block(servers)) => {
                if servers.remove(SERVER_NAME).is_none() {
                    return Ok(text.to_owned());
                }
            }
            Some(Servers::Flow(servers)) if servers.contains_key(SERVER_NAME) => {
                return Err(flow());
            }
            Some(Servers::Flow(_)) => return Ok(text.to_owned()),
            Some(Servers::Other) => return Err(not_a_mapping()),
        },
        Op::Set(entry) => {
            let fresh = yaml_new(key, &entry.value);
            let fresh = fresh.as_mapping().and_then(|m| m.get(key));
            let fresh = fresh.as_ref().and_then(|n| n.as_mapping()).ok_or_else(|| {
                EditError::Unsafe("Sluice's YAML entry could not be built".into())
            })?;
            match root.map(|r| (servers_of(&r, key), r)) {
                // No document, or an empty one.
                None => {
                    if !file.set(key, fresh) {
                        return Err(EditError::Unparseable(
                            "the file's top level is not a YAML mapping".into(),
                        ));
                    }
                }
                Some((Servers::Empty, root)) => root.set(key, fresh),
                Some((Servers::Block(servers), _)) => {
                    let ours = fresh.get(SERVER_NAME);
                    let ours = ours.as_ref().and_then(|n| n.as_mapping()).ok_or_else(|| {
                        EditError::Unsafe("Sluice's YAML entry could not be built".into())
                    })?;
                    servers.set(SERVER_NAME, ours);
                }
                Some((Servers::Flow(_), _)) => return Err(flow()),
                Some((Servers::Other, _)) => return Err(not_a_mapping()),
            }
        }
    }
    let mut out = file.to_string();
    if !out.ends_with('\n') {
        out.push_str(if text.contains("\r\n") { "\r\n" } else { "\n" });
    }
    Ok(out)
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
