//! Every tool's argument deserialisation (`sluice_mcp::arguments`): whatever JSON a client
//! sends as a `tools/call`'s `arguments`, each tool accepts or refuses it with an error, never
//! a panic. Input: one JSON value; an object is tried as every tool's arguments, and so is each
//! object inside it (where a client nests what it meant to send).

use serde_json::Value;
use sluice_mcp::arguments::{TOOLS, check};

pub fn tool_arguments(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    let mut objects = vec![&value];
    match &value {
        Value::Object(map) => objects.extend(map.values().filter(|v| v.is_object())),
        Value::Array(items) => objects.extend(items.iter().filter(|v| v.is_object())),
        _ => {}
    }
    for object in objects {
        let Value::Object(map) = object else { continue };
        for tool in TOOLS {
            let res = check(tool, map.clone()).expect("every listed tool is known");
            if let Err(message) = res {
                assert!(!message.is_empty(), "{tool}: a refusal without a reason");
            }
        }
    }
    assert!(check("no_such_tool", Default::default()).is_none());
}
