//! JSON Schema polish shared by every crate whose types become MCP tool schemas. schemars 1.x
//! tags unsigned integers with `format: "uint32"` (or `"uint"`), which are not JSON Schema
//! formats; strict validators in TypeScript MCP clients warn about them. `minimum: 0` already
//! says everything, so the format is dropped.

use schemars::Schema;
use schemars::transform::{RecursiveTransform, Transform};

/// Container-level `#[schemars(transform = sluice_core::schema::plain_integers)]` hook.
pub fn plain_integers(schema: &mut Schema) {
    RecursiveTransform(drop_integer_format).transform(schema);
}

fn drop_integer_format(schema: &mut Schema) {
    let is_integer = match schema.get("type") {
        Some(t) if t.as_str() == Some("integer") => true,
        Some(t) => t.as_array().is_some_and(|a| a.iter().any(|v| v.as_str() == Some("integer"))),
        None => false,
    };
    if is_integer {
        schema.remove("format");
    }
}
