//! Reading Sluice's entry back out of a client's config file, whatever form it has (the one
//! `sluice connect` wrote, an older one, or one the user edited by hand): how the client
//! reaches Sluice (the URL and its port, or the command line), and where the entry's token is —
//! written in the file, in Sluice's keychain entry (`--connection NAME`), or kept by the client
//! itself (VS Code's prompt, an environment reference the client resolves).
//!
//! Pure reading: nothing is written and nothing is run. Any file content gives an answer or an
//! [`ReadError`], never a panic. A token read from a file is a [`Secret`], which neither
//! `Debug` nor `Display` shows.

use std::fmt;
use std::path::Path;

use serde_json::Value as Json;

use crate::edit::{self, EditError};
use crate::{Client, SERVER_NAME, TOKEN_ENV, TokenStorage, Transport, VSCODE_INPUT_ID};

/// A token read from a config file. Never printed: `Debug` says `Secret(…)`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The plaintext, for the one use that needs it (an MCP call, reusing it in a repair).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// Where the token of an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// Written in the file (a bearer header, or `SLUICE_TOKEN` in a stdio entry's environment).
    InFile(Secret),
    /// `sluice stdio --connection NAME`: in Sluice's keychain entry of that name.
    Keychain(String),
    /// VS Code's `${input:sluice-token}`: the client asked once and keeps it.
    ClientPrompt,
    /// A reference the client resolves from its environment (`${SLUICE_TOKEN}`,
    /// `{env:SLUICE_TOKEN}`, `$SLUICE_TOKEN`, Codex's `bearer_token_env_var`); the variable's
    /// name.
    Environment(String),
    /// No token at all (a stdio entry with neither `--connection` nor `SLUICE_TOKEN`).
    None,
}

impl Credential {
    /// Where the token lives, as the rest of Sluice names it (`None` when there is none).
    pub fn storage(&self) -> Option<TokenStorage> {
        match self {
            Credential::InFile(_) => Some(TokenStorage::PlainInFile),
            Credential::Keychain(_) => Some(TokenStorage::SluiceKeychain),
            Credential::ClientPrompt => Some(TokenStorage::ClientPrompt),
            Credential::Environment(_) => Some(TokenStorage::Environment),
            Credential::None => None,
        }
    }
}

/// Sluice's entry as found in a client's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub transport: Transport,
    /// The URL of an HTTP entry.
    pub url: Option<String>,
    /// The port of that URL (`None` when it has none or is not `http://host:port/…`).
    pub port: Option<u16>,
    /// What a stdio entry runs: the program and its arguments.
    pub command: Option<(String, Vec<String>)>,
    /// `--data-dir DIR` in a stdio entry's arguments.
    pub data_dir: Option<String>,
    pub credential: Credential,
}

impl Found {
    /// The connection name of a stdio entry that reads its token from the keychain.
    pub fn connection(&self) -> Option<&str> {
        match &self.credential {
            Credential::Keychain(name) => Some(name),
            _ => None,
        }
    }
}

/// Why a config file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The file is not valid in its format, not UTF-8, or not shaped as the client expects.
    #[error("{0}")]
    Invalid(String),
    /// The file could not be read at all (permissions, a folder in its place).
    #[error("{0}")]
    Unreadable(String),
}

/// The most of a config file read: client settings are kilobytes; anything this large is not
/// one.
const MAX_FILE: u64 = 16 * 1024 * 1024;

/// Reads the config file at `path`: `Ok(None)` when it does not exist, else its text.
pub fn read_file(path: &Path) -> Result<Option<String>, ReadError> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReadError::Unreadable(format!("cannot read the file: {e}"))),
    };
    let meta = file.metadata().map_err(|e| ReadError::Unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(ReadError::Unreadable("this is not a regular file".into()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::Unreadable(format!("cannot read the file: {e}")))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(ReadError::Invalid("the file is larger than 16 MiB".into()));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ReadError::Invalid("the file is not UTF-8 text".into()))
}

/// Sluice's entry in `text`, the whole config file of `client`: `Ok(None)` when the file has
/// no `sluice` entry.
pub fn read_entry(client: Client, text: &str) -> Result<Option<Found>, ReadError> {
    let format = client
        .format()
        .ok_or_else(|| ReadError::Invalid(format!("{} has no config file", client.title())))?;
    let doc = edit::parse(format, text).map_err(|e| match e {
        EditError::Unparseable(m) | EditError::Unsafe(m) => ReadError::Invalid(m),
    })?;
    let key = client.servers_key();
    let servers = match doc.get(key) {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Object(map)) => map,
        Some(_) => {
            return Err(ReadError::Invalid(format!("\"{key}\" in the file is not a mapping")));
        }
    };
    match servers.get(SERVER_NAME) {
        None => Ok(None),
        Some(Json::Object(_)) => entry(&servers[SERVER_NAME]).map(Some),
        Some(_) => Err(ReadError::Invalid(format!("\"{key}.{SERVER_NAME}\" is not a mapping"))),
    }
}

fn str_of<'a>(v: &'a Json, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Json::as_str)
}

fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|i| i.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn entry(v: &Json) -> Result<Found, ReadError> {
    let url = ["url", "httpUrl", "serverUrl", "uri"].iter().find_map(|k| str_of(v, k));
    let command = match v.get("command").or_else(|| v.get("cmd")) {
        Some(Json::String(program)) => {
            Some((program.clone(), v.get("args").map(strings).unwrap_or_default()))
        }
        Some(line @ Json::Array(_)) => {
            let mut line = strings(line).into_iter();
            line.next().map(|program| (program, line.collect()))
        }
        _ => None,
    };
    if let Some((program, args)) = command {
        let flag =
            |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
        let env = ["env", "environment", "envs"]
            .iter()
            .find_map(|k| v.get(k).and_then(|e| e.get(TOKEN_ENV)))
            .and_then(Json::as_str);
        let credential = match (flag("--connection"), env) {
            (_, Some(value)) if !value.trim().is_empty() => credential(value),
            (Some(name), _) => Credential::Keychain(name),
            _ => Credential::None,
        };
        let data_dir = flag("--data-dir");
        return Ok(Found {
            transport: Transport::Stdio,
            url: None,
            port: None,
            command: Some((program, args)),
            data_dir,
            credential,
        });
    }
    let Some(url) = url else {
        return Err(ReadError::Invalid(
            "Sluice's entry has neither a URL nor a command to run".into(),
        ));
    };
    let header = v
        .get("headers")
        .and_then(Json::as_object)
        .and_then(|h| h.iter().find(|(k, _)| k.eq_ignore_ascii_case("authorization")))
        .and_then(|(_, v)| v.as_str());
    let credential = match (header, str_of(v, "bearer_token_env_var")) {
        (_, Some(var)) => Credential::Environment(var.to_owned()),
        (Some(h), None) => {
            let value = h.trim();
            let value = value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("bearer "))
                .unwrap_or(value)
                .trim();
            credential(value)
        }
        (None, None) => Credential::None,
    };
    Ok(Found {
        transport: Transport::Http,
        port: port_of(url),
        url: Some(url.to_owned()),
        command: None,
        data_dir: None,
        credential,
    })
}

/// What a token value is: VS Code's prompt, an environment reference in one of the clients'
/// syntaxes (`${VAR}`, `${env:VAR}`, `{env:VAR}`, `$VAR`), or the token itself.
fn credential(value: &str) -> Credential {
    if value == format!("${{input:{VSCODE_INPUT_ID}}}") || value.starts_with("${input:") {
        return Credential::ClientPrompt;
    }
    let var = value
        .strip_prefix("${env:")
        .or_else(|| value.strip_prefix("${"))
        .or_else(|| value.strip_prefix("{env:"))
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| value.strip_prefix('$'));
    match var {
        Some(name)
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
        {
            Credential::Environment(name.to_owned())
        }
        _ => Credential::InFile(Secret(value.to_owned())),
    }
}

/// The port of `http://host:port/…` (`None` without an explicit port).
fn port_of(url: &str) -> Option<u16> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (_, port) = host_port.rsplit_once(':')?;
    port.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_of_urls() {
        assert_eq!(port_of("http://127.0.0.1:7457/mcp"), Some(7457));
        assert_eq!(port_of("http://localhost:1/"), Some(1));
        assert_eq!(port_of("http://[::1]:8080/mcp"), Some(8080));
        assert_eq!(port_of("http://127.0.0.1/mcp"), None);
        assert_eq!(port_of("http://127.0.0.1:99999/mcp"), None);
        assert_eq!(port_of(""), None);
    }

    #[test]
    fn secrets_are_not_printed() {
        let c = credential("slc_secret");
        assert_eq!(format!("{c:?}"), "InFile(Secret(…))");
        assert_eq!(credential("${SLUICE_TOKEN}"), Credential::Environment("SLUICE_TOKEN".into()));
        assert_eq!(
            credential("{env:SLUICE_TOKEN}"),
            Credential::Environment("SLUICE_TOKEN".into())
        );
        assert_eq!(credential("$SLUICE_TOKEN"), Credential::Environment("SLUICE_TOKEN".into()));
        assert_eq!(credential("${env:X_1}"), Credential::Environment("X_1".into()));
        assert_eq!(credential("${input:sluice-token}"), Credential::ClientPrompt);
    }
}
