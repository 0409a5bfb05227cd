//! The client config editors (`sluice_connect::edit`): JSON, JSONC, TOML and YAML in, exactly
//! one entry changed out.
//!
//! Input: a selector byte (which client — and so which format and servers key —, which
//! transport, set or remove), then the config file's text. Properties: an invalid document
//! (one the format's parser refuses) gives an error, never a panic and never an output; for a
//! valid one, whenever the edit succeeds, its output parses, and parses to the input's document
//! with only Sluice's entry (and VS Code's `sluice-token` input) set or removed; and the edit
//! is idempotent: made again on its own output, it gives the same document.

use std::path::Path;

use serde_json::Value as Json;
use sluice_connect::edit::{self, EditError, Op};
use sluice_connect::{Client, Endpoint, SERVER_NAME, Transport, VSCODE_INPUT_ID, entry};

pub fn config_edit(data: &[u8]) {
    let [sel, text @ ..] = data else { return };
    let Ok(text) = std::str::from_utf8(text) else { return };
    let clients: Vec<Client> = Client::ALL.into_iter().filter(|c| c.format().is_some()).collect();
    let client = clients[usize::from(*sel & 0x3f) % clients.len()];
    let transport = if sel & 0x40 == 0 { Transport::Stdio } else { Transport::Http };
    let endpoint = Endpoint {
        port: 8765,
        token: "slc_0123456789abcdefghijklmnopqrstuv",
        binary: Path::new("/usr/bin/sluice"),
        connection: Some("fuzz"),
        data_dir: None,
    };
    let Some(entry) = entry(client, transport, &endpoint)
        .or_else(|| entry(client, client.default_transport(), &endpoint))
    else {
        return;
    };
    let format = client.format().expect("filtered");
    let key = client.servers_key();
    let op = if sel & 0x80 == 0 { Op::Set(&entry) } else { Op::Remove };

    let result = edit::edit(format, key, text, op);
    let before = match edit::parse(format, text) {
        Ok(before) => before,
        Err(_) => {
            assert!(result.is_err(), "{client:?}: an unparseable file was edited: {result:?}");
            return;
        }
    };
    let Ok(out) = result else { return };
    let after = edit::parse(format, &out)
        .unwrap_or_else(|e| panic!("{client:?}: the edited file does not parse ({e}):\n{out}"));
    assert_eq!(without_sluice(&after, key), without_sluice(&before, key), "{client:?}:\n{out}");
    let ours = after.get(key).and_then(|s| s.get(SERVER_NAME));
    match op {
        Op::Set(entry) => {
            assert_eq!(ours, Some(&entry.value.to_serde()), "{client:?}: the entry:\n{out}");
        }
        Op::Remove => assert_eq!(ours, None, "{client:?}: still there:\n{out}"),
    }
    match edit::edit(format, key, &out, op) {
        Ok(again) => assert_eq!(edit::parse(format, &again), Ok(after), "{client:?}: again"),
        Err(EditError::Unparseable(e)) => panic!("{client:?}: its own output is unparseable: {e}"),
        // A refusal to prove the second edit is conservative, not wrong.
        Err(EditError::Unsafe(_)) => {}
    }
}

/// The document without what Sluice may change: its server entry (and a servers map or
/// `inputs` list left empty or null by that) and VS Code's token input.
fn without_sluice(doc: &Json, key: &str) -> Json {
    let mut doc = doc.clone();
    let Some(root) = doc.as_object_mut() else { return doc };
    if let Some(servers) = root.get_mut(key) {
        if let Some(map) = servers.as_object_mut() {
            map.remove(SERVER_NAME);
        }
        if servers.is_null() || servers.as_object().is_some_and(|m| m.is_empty()) {
            root.remove(key);
        }
    }
    if let Some(inputs) = root.get_mut("inputs") {
        if let Some(list) = inputs.as_array_mut() {
            list.retain(|i| i.get("id").and_then(Json::as_str) != Some(VSCODE_INPUT_ID));
        }
        if inputs.as_array().is_some_and(|l| l.is_empty()) {
            root.remove("inputs");
        }
    }
    doc
}
