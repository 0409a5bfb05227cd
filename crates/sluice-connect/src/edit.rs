//! Format-preserving edits of a client's config text: set or remove `servers["sluice"]` and
//! nothing else. JSON and JSONC go through `jsonc-parser`'s CST (comments, order and layout
//! stay), TOML through `toml_edit`, YAML through a minimal line edit of the `extensions:`
//! mapping (no maintained Rust crate edits YAML in place).
//!
//! Every edit is verified before it is returned: the text before and after is parsed by a
//! real parser of its format, and the parsed "after" must equal the parsed "before" with only
//! Sluice's entry (and VS Code's `sluice-token` input) changed. Anything else is an error and
//! the caller writes nothing.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value as Json;

use crate::value::V;
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

fn cst_value(v: &V) -> CstInputValue {
    match v {
        V::Str(s) => CstInputValue::String(s.clone()),
        V::Bool(b) => CstInputValue::Bool(*b),
        V::Int(i) => CstInputValue::Number(i.to_string()),
        V::List(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        V::Map(pairs) => {
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

fn toml_value(v: &V) -> toml_edit::Value {
    match v {
        V::Str(s) => toml_edit::Value::from(s.as_str()),
        V::Bool(b) => toml_edit::Value::from(*b),
        V::Int(i) => toml_edit::Value::from(*i),
        V::List(items) => {
            toml_edit::Value::Array(items.iter().map(toml_value).collect::<toml_edit::Array>())
        }
        V::Map(pairs) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in pairs {
                t.insert(k, toml_value(v));
            }
            toml_edit::Value::InlineTable(t)
        }
    }
}

/// Sluice's entry as a `[mcp_servers.sluice]` table (nested maps inline: `env = { … }`).
fn toml_entry(v: &V) -> toml_edit::Table {
    let mut table = toml_edit::Table::new();
    if let V::Map(pairs) = v {
        for (k, v) in pairs {
            table.insert(k, toml_edit::Item::Value(toml_value(v)));
        }
    }
    table
}

/// The TOML of a config holding only Sluice's entry.
pub fn render_toml_new(entry: &V) -> String {
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

/// A YAML scalar: plain when that cannot be misread, else a double-quoted (JSON) string.
fn yaml_scalar(v: &V) -> String {
    match v {
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::Str(s) => {
            let plain = !s.is_empty()
                && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
                && s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '/')
                && !matches!(
                    s.to_ascii_lowercase().as_str(),
                    "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
                );
            if plain { s.clone() } else { crate::value::json_string(s) }
        }
        // Lists of scalars are written in flow style (`[stdio]`), maps never reach here.
        V::List(items) => {
            format!("[{}]", items.iter().map(yaml_scalar).collect::<Vec<_>>().join(", "))
        }
        V::Map(pairs) if pairs.is_empty() => "{}".to_owned(),
        V::Map(_) => crate::value::json_string(""),
    }
}

/// Appends `v` (a map) as a block mapping at `depth` levels of two spaces.
pub fn yaml_block(out: &mut String, v: &V, depth: usize) {
    yaml_block_at(out, v, depth * 2, 2);
}

/// Appends `v` (a map) as a block mapping indented `base` spaces, nested levels `unit` more.
fn yaml_block_at(out: &mut String, v: &V, base: usize, unit: usize) {
    let V::Map(pairs) = v else { return };
    let pad = " ".repeat(base);
    for (k, val) in pairs {
        out.push_str(&pad);
        out.push_str(&yaml_scalar(&V::s(k.clone())));
        match val {
            V::Map(inner) if !inner.is_empty() => {
                out.push_str(":\n");
                yaml_block_at(out, val, base + unit, unit);
            }
            _ => {
                out.push_str(": ");
                out.push_str(&yaml_scalar(val));
                out.push('\n');
            }
        }
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A line that carries content (not blank, not only a comment).
fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// The name of the mapping key a line opens (`name:` or `"name":` with nothing but a comment
/// after the colon), if it opens a block.
fn opens_block(line: &str, name: &str) -> bool {
    let t = line.trim_start();
    let rest = [format!("{name}:"), format!("\"{name}\":"), format!("'{name}':")]
        .into_iter()
        .find_map(|p| t.strip_prefix(p.as_str()).map(str::to_owned));
    rest.is_some_and(|r| {
        let r = r.trim();
        r.is_empty() || r.starts_with('#')
    })
}

fn key_line(line: &str, name: &str) -> bool {
    let t = line.trim_start();
    [format!("{name}:"), format!("\"{name}\":"), format!("'{name}':")]
        .iter()
        .any(|p| t.starts_with(p.as_str()))
}

/// The end (exclusive) of the block that starts at `start`: the next content line indented at
/// most `indent`. Trailing blank and comment lines are left outside the block.
fn block_end(lines: &[&str], start: usize, indent: usize) -> usize {
    let mut end = start + 1;
    let mut last_content = start;
    while end < lines.len() {
        let l = lines[end];
        if is_content(l) {
            if indent_of(l) <= indent {
                break;
            }
            last_content = end;
        }
        end += 1;
    }
    last_content + 1
}

fn edit_yaml(key: &str, text: &str, op: Op<'_>) -> Result<String, EditError> {
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().any(|l| l.starts_with('\t')) {
        return Err(EditError::Unsafe("the YAML file is indented with tabs".into()));
    }
    let top = lines.iter().position(|l| indent_of(l) == 0 && key_line(l, key));
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let render = |entry: &Entry, base: usize, unit: usize| {
        let mut s = String::new();
        yaml_block_at(&mut s, &V::map([(SERVER_NAME, entry.value.clone())]), base, unit);
        s.lines().map(str::to_owned).collect::<Vec<_>>()
    };
    match (op, top) {
        (Op::Remove, None) => {}
        (Op::Set(entry), None) => {
            while out.last().is_some_and(|l| l.trim().is_empty()) {
                out.pop();
            }
            if !out.is_empty() {
                out.push(String::new());
            }
            out.push(format!("{key}:"));
            out.extend(render(entry, 2, 2));
        }
        (op, Some(top)) => {
            let header = lines[top];
            if !opens_block(header, key) {
                // `extensions: {}` is the one flow form worth handling: an empty mapping.
                let rest = header.trim_start()[key.len() + 1..].trim();
                let empty = rest == "{}"
                    || rest.starts_with("{}") && rest[2..].trim_start().starts_with('#');
                match (op, empty) {
                    (Op::Remove, true) => {}
                    (Op::Set(entry), true) => {
                        out[top] = format!("{key}:");
                        let body = render(entry, 2, 2);
                        out.splice(top + 1..top + 1, body);
                    }
                    _ => {
                        return Err(EditError::Unsafe(format!(
                            "\"{key}\" is written in YAML flow style; add the snippet by hand"
                        )));
                    }
                }
            } else {
                let end = block_end(&lines, top, 0);
                let child_indent = lines[top + 1..end]
                    .iter()
                    .find(|l| is_content(l))
                    .map(|l| indent_of(l))
                    .unwrap_or(2);
                let ours = (top + 1..end).find(|&i| {
                    indent_of(lines[i]) == child_indent && key_line(lines[i], SERVER_NAME)
                });
                // The file's own indentation, for the entry and its nested levels.
                let body = |entry: &Entry| render(entry, child_indent, child_indent.max(1));
                match (op, ours) {
                    (Op::Remove, None) => {}
                    (Op::Remove, Some(i)) => {
                        let j = block_end(&lines, i, child_indent);
                        out.drain(i..j);
                    }
                    (Op::Set(entry), Some(i)) => {
                        let j = block_end(&lines, i, child_indent);
                        out.splice(i..j, body(entry));
                    }
                    (Op::Set(entry), None) => {
                        out.splice(end..end, body(entry));
                    }
                }
            }
        }
    }
    let mut joined = out.join(nl);
    if !joined.is_empty() {
        joined.push_str(nl);
    }
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_scalars_are_plain_only_when_unambiguous() {
        assert_eq!(yaml_scalar(&V::s("stdio")), "stdio");
        assert_eq!(yaml_scalar(&V::s("/opt/sluice/sluice")), "/opt/sluice/sluice");
        assert_eq!(yaml_scalar(&V::s("true")), "\"true\"");
        assert_eq!(yaml_scalar(&V::s("http://127.0.0.1:1/mcp")), "\"http://127.0.0.1:1/mcp\"");
        assert_eq!(yaml_scalar(&V::s("Bearer x")), "\"Bearer x\"");
        assert_eq!(yaml_scalar(&V::s("C:\\a b")), "\"C:\\\\a b\"");
    }
}
