//! The argument and output schemas a model reads: every argument documented, no integer
//! `format` keywords (TypeScript clients warn on `uint32`), no `deny_unknown_fields`.

use schemars::{JsonSchema, schema_for};
use sluice_runner::*;

fn check_schema<T: JsonSchema>(documented_properties: bool) {
    let schema = serde_json::to_value(schema_for!(T)).unwrap();
    let text = schema.to_string();
    assert!(!text.contains("\"format\":\"uint") && !text.contains("\"format\":\"int"), "{text}");
    assert!(!text.contains("\"additionalProperties\":false"), "{text}");
    if documented_properties {
        let props = schema["properties"].as_object().unwrap();
        for (name, prop) in props {
            assert!(prop.get("description").is_some(), "{name} has no description: {text}");
        }
    }
}

#[test]
fn argument_schemas_are_documented_and_plain() {
    check_schema::<ListDirectoryArgs>(true);
    check_schema::<StatArgs>(true);
    check_schema::<ReadFileArgs>(true);
    check_schema::<ReadMediaArgs>(true);
    check_schema::<FindFilesArgs>(true);
    check_schema::<SearchTextArgs>(true);
    check_schema::<WriteFileArgs>(true);
    check_schema::<EditFileArgs>(true);
    check_schema::<TextEdit>(true);
    check_schema::<ApplyPatchArgs>(true);
    check_schema::<MovePathArgs>(true);
    check_schema::<CreateDirectoryArgs>(true);
    check_schema::<DeletePathArgs>(true);
    check_schema::<RestoreArgs>(true);
    check_schema::<ListBackupsArgs>(true);
    check_schema::<MutationOutput>(false);
    check_schema::<ListBackupsOutput>(false);
    check_schema::<ListDirectoryOutput>(false);
    check_schema::<StatOutput>(false);
    check_schema::<ReadFileOutput>(false);
    check_schema::<ReadMediaOutput>(true);
    check_schema::<FindFilesOutput>(false);
    check_schema::<SearchTextOutput>(false);
}

#[test]
fn arguments_deserialize_with_defaults_and_extra_fields() {
    let args: SearchTextArgs =
        serde_json::from_str(r#"{"pattern":"x","project":"proj_abc","case":"insensitive"}"#)
            .unwrap();
    assert_eq!(args.case, Some(CaseMode::Insensitive));
    let args: ListDirectoryArgs = serde_json::from_str("{}").unwrap();
    assert!(args.path.is_none());
}
