//! Uses of a name in a file: the identifiers of its syntax tree spelled so, which leaves out
//! comments, strings and longer names that contain it (what a text search would return).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;

use crate::lang::Language;

thread_local! {
    static PARSERS: RefCell<HashMap<Language, tree_sitter::Parser>> = RefCell::new(HashMap::new());
}

/// Whether a leaf of this kind names something (`identifier`, `type_identifier`,
/// `field_identifier`, `property_identifier`, `shorthand_property_identifier`, …).
fn is_identifier(kind: &str) -> bool {
    kind.ends_with("identifier") || kind == "constant"
}

/// Each identifier spelled `name`: its 1-based line and column, and the byte range of its line.
pub(crate) fn identifiers_named(
    language: Language,
    source: &[u8],
    name: &str,
) -> Vec<(u64, u64, Range<usize>)> {
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = match parsers.entry(language) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(language.parser()?),
        };
        parser.parse(source, None)
    });
    let Some(tree) = tree else { return Vec::new() };
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if node.child_count() == 0
            && is_identifier(node.kind())
            && source.get(node.byte_range()) == Some(name.as_bytes())
        {
            let start = node.start_byte();
            let line_start = source[..start].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let line_end = source[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(source.len(), |i| start + i);
            let at = node.start_position();
            out.push((at.row as u64 + 1, at.column as u64 + 1, line_start..line_end));
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                return out;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
}
