//! The JSON Schemas a model reads: every field described, no non-standard integer formats.

use schemars::schema_for;
use serde_json::Value;

fn check(schema: Value) {
    let text = serde_json::to_string(&schema).unwrap();
    assert!(!text.contains("\"format\":\"uint"), "{text}");
    assert!(!text.contains("\"format\":\"int"), "{text}");
    fn descriptions(v: &Value, at: &str) {
        if let Some(props) = v.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                assert!(prop.get("description").is_some(), "{at}.{name} has no description");
            }
        }
        if let Some(defs) = v.get("$defs").and_then(Value::as_object) {
            for (name, def) in defs {
                descriptions(def, name);
            }
        }
    }
    descriptions(&schema, "root");
}

#[test]
fn schemas_describe_every_field_without_integer_formats() {
    check(schema_for!(sluice_git::GitStatusArgs).to_value());
    check(schema_for!(sluice_git::GitDiffArgs).to_value());
    check(schema_for!(sluice_git::GitLogArgs).to_value());
    check(schema_for!(sluice_git::GitShowArgs).to_value());
    check(schema_for!(sluice_git::GitStatusOutput).to_value());
    check(schema_for!(sluice_git::GitDiffOutput).to_value());
    check(schema_for!(sluice_git::GitLogOutput).to_value());
    check(schema_for!(sluice_git::GitShowOutput).to_value());
}

#[test]
fn args_accept_sparse_json_and_unknown_fields() {
    let args: sluice_git::GitLogArgs =
        serde_json::from_value(serde_json::json!({ "project": "p", "max_count": 3 })).unwrap();
    assert_eq!(args.max_count, Some(3));
    let args: sluice_git::GitShowArgs =
        serde_json::from_value(serde_json::json!({ "project": "p", "rev": "HEAD" })).unwrap();
    assert_eq!(args.rev, "HEAD");
    let _: sluice_git::GitDiffArgs = serde_json::from_value(serde_json::json!({})).unwrap();
    let _: sluice_git::GitStatusArgs = serde_json::from_value(serde_json::json!({})).unwrap();
}

#[test]
fn log_args_schema_is_plain() {
    let schema = schema_for!(sluice_git::GitLogArgs).to_value();
    let max_count = &schema["properties"]["max_count"];
    assert_eq!(max_count["type"], serde_json::json!(["integer", "null"]));
    assert_eq!(max_count["minimum"], 0);
    assert!(max_count.get("format").is_none());
}
