//! Tests of the format-preserving edits: what changes, what stays byte for byte, and what is
//! refused.

use super::*;
use crate::{Client, TokenStorage, Transport};

/// Strings a plain YAML scalar would misread: booleans and nulls of YAML 1.1 and 1.2,
/// numbers, `: ` and ` #`, indicators, quotes, escapes, line breaks, blanks.
const TRICKY: &[&str] = &[
    "true",
    "False",
    "yes",
    "NO",
    "on",
    "Off",
    "y",
    "n",
    "null",
    "~",
    "",
    " ",
    " x ",
    "12",
    "-3",
    "1.5",
    "1e3",
    ".inf",
    ".NaN",
    "0x1F",
    "0o17",
    "0b101",
    "2001-12-14",
    "http://127.0.0.1:1/mcp",
    "a: b",
    "a:b",
    "x #y",
    "x#y",
    "#x",
    "- a",
    "-",
    "--flag",
    "? x",
    "?",
    ":x",
    ",a",
    "[a]",
    "{a}",
    "*a",
    "&a",
    "!a",
    "%a",
    "@a",
    "`a",
    "|",
    ">",
    "'q'",
    "\"dq\"",
    "it's",
    "C:\\Program Files\\x.exe",
    "line\nbreak",
    "tab\tx",
    "trail\n",
    "---",
    "...",
    "Bearer slc_x",
    "日本語",
    "\u{7f}del",
];

fn goose(value: ConfigValue) -> Entry {
    Entry {
        client: Client::Goose,
        transport: Transport::Stdio,
        value,
        input: None,
        storage: TokenStorage::PlainInFile,
    }
}

fn yaml(text: &str) -> yaml_rust2::Yaml {
    let mut docs = yaml_rust2::YamlLoader::load_from_str(text).unwrap();
    assert_eq!(docs.len(), 1, "{text}");
    docs.remove(0)
}

#[test]
fn strings_that_look_like_other_things_read_back_as_strings() {
    let env =
        ConfigValue::Map(TRICKY.iter().map(|s| (format!("K{s}"), ConfigValue::s(*s))).collect());
    let keys = ConfigValue::Map(
        TRICKY.iter().map(|s| ((*s).to_owned(), ConfigValue::Bool(true))).collect(),
    );
    let value = ConfigValue::map([
        ("args", ConfigValue::strs(TRICKY)),
        ("envs", env),
        ("keys", keys),
        ("empty_map", ConfigValue::map::<&str>([])),
        ("empty_list", ConfigValue::List(vec![])),
        (
            "nested",
            ConfigValue::List(vec![
                ConfigValue::map([("a", ConfigValue::Int(-7))]),
                ConfigValue::strs(&["x", "true"]),
            ]),
        ),
    ]);
    for base in ["", "extensions:\n    other:\n        a: 1\n"] {
        let out = edit(Format::Yaml, "extensions", base, Op::Set(&goose(value.clone())))
            .unwrap_or_else(|e| panic!("{e}"));
        let doc = yaml(&out);
        let ours = &doc["extensions"]["sluice"];
        for (i, s) in TRICKY.iter().enumerate() {
            assert_eq!(ours["args"][i].as_str(), Some(*s), "list item {s:?} in\n{out}");
            let k = format!("K{s}");
            assert_eq!(ours["envs"][k.as_str()].as_str(), Some(*s), "value {s:?} in\n{out}");
            assert_eq!(ours["keys"][*s].as_bool(), Some(true), "key {s:?} in\n{out}");
        }
        assert_eq!(yaml_json(ours), value.to_serde(), "{out}");
    }
}

#[test]
fn the_new_file_is_the_library_rendering_and_reads_back() {
    let value = ConfigValue::map([
        ("type", ConfigValue::s("stdio")),
        ("args", ConfigValue::strs(&["--x", "y"])),
    ]);
    let text = render_yaml_new("extensions", &value);
    assert_eq!(
        text,
        "extensions:\n  sluice:\n    type: stdio\n    args:\n      - '--x'\n      - y\n"
    );
    assert_eq!(yaml_json(&yaml(&text)["extensions"]["sluice"]), value.to_serde());
    // Editing an empty file gives the same text.
    let edited = edit(Format::Yaml, "extensions", "", Op::Set(&goose(value))).unwrap();
    assert_eq!(edited, text);
}

#[test]
fn extensions_that_is_not_a_block_mapping_is_refused() {
    let e = goose(ConfigValue::map([("type", ConfigValue::s("stdio"))]));
    for (text, unsafe_edit) in [
        ("extensions: {developer: {enabled: true}}\n", true),
        ("extensions: {sluice: {enabled: true}}\n", true),
        ("extensions: 3\n", false),
        ("extensions: [a]\n", false),
        ("extensions:\n- a\n", false),
        ("extensions: on\n", false),
    ] {
        for op in [Op::Set(&e), Op::Remove] {
            let flow_without_ours = text.starts_with("extensions: {dev");
            match (edit(Format::Yaml, "extensions", text, op), op) {
                // Nothing of ours in a flow mapping: nothing to remove.
                (Ok(out), Op::Remove) if flow_without_ours => assert_eq!(out, text),
                (Err(EditError::Unsafe(m)), _) if unsafe_edit => {
                    assert!(m.contains("flow style"), "{m}")
                }
                (Err(EditError::Unparseable(m)), _) if !unsafe_edit => {
                    assert!(m.contains("not a mapping"), "{m}")
                }
                (other, _) => panic!("{text:?}: {other:?}"),
            }
        }
    }
    let several = "a: 1\n---\nb: 2\n";
    assert!(matches!(
        edit(Format::Yaml, "extensions", several, Op::Set(&e)),
        Err(EditError::Unparseable(m)) if m.contains("several YAML documents")
    ));
}

#[test]
fn an_edit_the_parser_reads_differently_is_refused() {
    // `other` is an alias of `extensions`: adding Sluice there would change it too.
    let text = "extensions: &x\n  dev:\n    a: 1\nother: *x\n";
    let e = goose(ConfigValue::map([("type", ConfigValue::s("stdio"))]));
    assert!(matches!(
        edit(Format::Yaml, "extensions", text, Op::Set(&e)),
        Err(EditError::Unsafe(m)) if m.contains("more than Sluice's entry")
    ));
}

#[test]
fn empty_and_null_extensions_become_a_block_mapping() {
    let e = goose(ConfigValue::map([("type", ConfigValue::s("stdio"))]));
    let ours = "  sluice:\n    type: stdio\n";
    for (text, expected) in [
        ("", format!("extensions:\n{ours}")),
        ("\n", format!("\nextensions:\n{ours}")),
        ("# goose\n", format!("# goose\nextensions:\n{ours}")),
        ("---\n", format!("---\nextensions:\n{ours}")),
        ("A: 1", format!("A: 1\nextensions:\n{ours}")),
        ("extensions: {}\nA: 1\n", format!("extensions:\n{ours}A: 1\n")),
        ("extensions:\nA: 1\n", format!("extensions:\n{ours}A: 1\n")),
        ("extensions: ~ # none\nA: 1\n", format!("extensions: # none\n{ours}A: 1\n")),
    ] {
        let out = edit(Format::Yaml, "extensions", text, Op::Set(&e)).unwrap();
        assert_eq!(out, expected, "{text:?}");
        // Nothing to remove: not a byte changes.
        assert_eq!(edit(Format::Yaml, "extensions", text, Op::Remove).unwrap(), text);
    }
}
