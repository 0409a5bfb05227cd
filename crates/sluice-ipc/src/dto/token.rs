//! Tokens: as listed, as created (with the client snippets of a new token), and their scope.

use serde::{Deserialize, Serialize};
use sluice_engine::TokenRecord;
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScopeEntry {
    pub id: String,
    /// The project's name, or `null` when the project was removed since.
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenDto {
    pub id: String,
    pub label: String,
    /// `null`: every project.
    pub scope: Option<Vec<ScopeEntry>>,
    #[ts(type = "number")]
    pub created_ms: i64,
    #[ts(type = "number | null")]
    pub last_used_ms: Option<i64>,
    #[ts(type = "number | null")]
    pub expires_ms: Option<i64>,
    #[ts(type = "number | null")]
    pub revoked_ms: Option<i64>,
    /// The limit the assistant put on this token itself (`drop_privileges`): `read-only` or
    /// `paused`; `null` when none. Only the user lifts it (`restore_token`).
    pub self_limit: Option<String>,
    #[ts(type = "number | null")]
    pub self_limited_ms: Option<i64>,
    /// Issued to a hosted assistant through reach from the web (OAuth), not created by the
    /// user; turning reach off revokes it.
    pub remote: bool,
    /// The tools it is offered (`full` for tokens made before profiles existed).
    #[ts(type = "Profile")]
    pub profile: String,
}

impl TokenDto {
    pub(crate) fn new(t: &TokenRecord, names: &[(String, String)]) -> TokenDto {
        TokenDto {
            id: t.id.as_str().to_owned(),
            label: t.label.clone(),
            scope: t.scope.as_ref().map(|ids| {
                ids.iter()
                    .map(|id| ScopeEntry {
                        id: id.as_str().to_owned(),
                        name: name_of(names, id.as_str()),
                    })
                    .collect()
            }),
            created_ms: t.created_ms,
            last_used_ms: t.last_used_ms,
            expires_ms: t.expires_ms,
            revoked_ms: t.revoked_ms,
            self_limit: t.self_limit.map(|(l, _)| l.as_str().to_owned()),
            self_limited_ms: t.self_limit.map(|(_, at)| at),
            remote: t.remote,
            profile: t.profile.as_str().to_owned(),
        }
    }
}

pub(crate) fn name_of(names: &[(String, String)], id: &str) -> Option<String> {
    names.iter().find(|(i, _)| i == id).map(|(_, n)| n.clone())
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CreateToken {
    pub label: String,
    /// Project ids or names; `null` for every project.
    pub scope: Option<Vec<String>>,
    /// `null`: never expires.
    pub expires_in_days: Option<u32>,
    /// The tools it offers; `null` is `review`, the safe start (as `sluice token create`).
    #[ts(type = "Profile | null")]
    pub profile: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientSnippetDto {
    pub client: String,
    pub title: String,
    pub target: String,
    pub text: String,
    pub holds_token: bool,
    /// A one-click install link (Cursor, VS Code, VS Code Insiders); never carries the token.
    pub link: Option<String>,
    /// Exactly what the link installs (the server entry, as JSON), shown beside it.
    pub link_installs: Option<String>,
    /// Whether the token lies in plain text in the client's file when set up this way.
    pub plain_text: bool,
    /// Something to do besides pasting (set a variable, answer a prompt).
    pub note: Option<String>,
}

/// A new token: the plaintext exists only in this value, shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CreatedToken {
    pub token: TokenDto,
    pub secret: String,
    pub snippets: Vec<ClientSnippetDto>,
}
