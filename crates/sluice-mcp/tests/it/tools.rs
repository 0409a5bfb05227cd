//! The tool surface as a client sees it in `tools/list` — names, descriptions, input and output
//! schemas, annotations — committed as `tests/tools-list.json`, so a change to what models read
//! shows in review as a diff. `UPDATE_GOLDEN=1 cargo test -p sluice-mcp` rewrites it.

use std::path::PathBuf;

use sluice_mcp::server::SluiceServer;

#[test]
fn tools_list_matches_the_committed_golden() {
    let mut tools = SluiceServer::all_tools().list_all();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let tools = sorted(serde_json::to_value(&tools).expect("tools serialize"));
    let want = serde_json::to_string_pretty(&tools).expect("tools serialize") + "\n";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tools-list.json");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &want).expect("write the golden");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: run `UPDATE_GOLDEN=1 cargo test -p sluice-mcp` and commit the result",
        path.display()
    );
}

/// `v` with every object's keys in order, whatever order serde_json keeps them in (a feature
/// another crate of the workspace turns on makes it keep insertion order).
fn sorted(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries.into_iter().map(|(k, v)| (k, sorted(v))).collect()
        }
        serde_json::Value::Array(items) => items.into_iter().map(sorted).collect(),
        other => other,
    }
}

/// Every tool a model may call says what it does and how it behaves, and every argument is
/// described: the golden above is only worth reading if nothing in it is blank.
#[test]
fn every_tool_and_argument_is_described_and_annotated() {
    for tool in SluiceServer::all_tools().list_all() {
        let name = tool.name.as_ref();
        assert!(tool.description.as_deref().is_some_and(|d| d.len() > 20), "{name}");
        let a = tool.annotations.as_ref().unwrap_or_else(|| panic!("{name} has no annotations"));
        assert!(a.read_only_hint.is_some() && a.open_world_hint == Some(false), "{name}: {a:?}");
        assert!(tool.output_schema.is_some(), "{name} has no output schema");
        let props = tool.input_schema.get("properties").and_then(|p| p.as_object());
        for (arg, schema) in props.into_iter().flatten() {
            let described = schema.get("description").is_some() || schema.get("$ref").is_some();
            assert!(described, "{name}.{arg} is not described: {schema}");
        }
    }
}
