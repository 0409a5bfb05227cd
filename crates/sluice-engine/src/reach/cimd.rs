//! Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a hosted client
//! names itself by an `https` URL, and the document at that URL gives its name and redirect
//! URIs. Claude.ai uses one when the server says it accepts them; ChatGPT may.
//!
//! Here: which URLs may stand for a client, and what a fetched document must say before it does.
//! The fetch, with its guard against reaching the user's own network, is `sluice_mcp::cimd`.
//! A document is fetched again on every authorization request (never trusted from an earlier
//! fetch) and each request still waits for the person, who sees the document's host beside the
//! name it claims: "Claude (claude.ai)".

use serde::Deserialize;
use sluice_store::OAuthClient;

use super::{OAuthError, client_name};
use crate::{Engine, store_failure};

/// The largest document read; the draft suggests 5 KiB.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// The longest client id that names a metadata document.
const MAX_CLIENT_ID_BYTES: usize = 512;
/// Redirect URIs a document may list (those Sluice accepts are kept, at most eight).
const MAX_DOCUMENT_REDIRECTS: usize = 32;

/// Whether `client_id` names a metadata document rather than a registration.
pub fn is_metadata_client_id(client_id: &str) -> bool {
    client_id.starts_with("https://")
}

/// Checks a client id that names a metadata document; returns its host.
///
/// `https` on the default port, a host name (an address literal tells the person approving
/// nothing, and is the usual way to aim at a private network), a path other than `/`, and
/// nothing else: no user info, query or fragment. It must be written in its normal form, so
/// that the string compared with the document's `client_id` is the one fetched (a dot segment,
/// an upper-case host or an explicit `:443` would make them two spellings of one URL).
pub fn metadata_url_host(client_id: &str) -> Result<String, String> {
    if client_id.len() > MAX_CLIENT_ID_BYTES {
        return Err("it is longer than 512 bytes".into());
    }
    let url = url::Url::parse(client_id).map_err(|e| format!("it is not a URL ({e})"))?;
    if url.scheme() != "https" {
        return Err("it is not an https URL".into());
    }
    if url.as_str() != client_id {
        return Err("it is not written in its normal form (dot segments, case, default port, \
                    escapes)"
            .into());
    }
    if url.port().is_some() {
        return Err("only the default https port is fetched".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("it carries a user name or password".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("it has a query or a fragment".into());
    }
    if url.path() == "/" {
        return Err("it has no path".into());
    }
    match url.host() {
        Some(url::Host::Domain(host)) if host.contains('.') && !host.ends_with('.') => {
            Ok(host.to_owned())
        }
        Some(url::Host::Domain(_)) => Err("its host is not a full domain name".into()),
        _ => Err("its host is an address, not a name".into()),
    }
}

/// The members Sluice reads. serde refuses one given twice; others are ignored, as the draft
/// lets a document carry any registered metadata.
#[derive(Deserialize)]
struct Document {
    client_id: String,
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    token_endpoint_auth_method: Option<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
}

impl Engine {
    /// Records the client a fetched metadata document describes, replacing what an earlier
    /// fetch recorded: its name (with the document's host, which the name cannot fake) and
    /// the redirect URIs it lists that Sluice accepts.
    pub fn metadata_client(&self, client_id: &str, body: &[u8]) -> Result<OAuthClient, OAuthError> {
        let invalid = |why: String| OAuthError::new("invalid_client", why);
        let reach = self.reach_on()?;
        let host = metadata_url_host(client_id).map_err(|why| {
            invalid(format!("the client id is not a metadata URL Sluice fetches: {why}"))
        })?;
        if body.len() > MAX_DOCUMENT_BYTES {
            return Err(invalid("the client's metadata document is larger than 5 KiB".into()));
        }
        let doc: Document = serde_json::from_slice(body)
            .map_err(|e| invalid(format!("the client's metadata document is not valid: {e}")))?;
        if doc.client_id != client_id {
            return Err(invalid(
                "the metadata document's client_id is not the URL it was fetched from".into(),
            ));
        }
        if doc.token_endpoint_auth_method.as_deref().is_some_and(|m| m != "none") {
            return Err(invalid(
                "only public clients are accepted (token_endpoint_auth_method \"none\", with \
                 PKCE)"
                    .into(),
            ));
        }
        let lacks = |list: &Option<Vec<String>>, value: &str| {
            list.as_ref().is_some_and(|l| !l.iter().any(|v| v == value))
        };
        if lacks(&doc.grant_types, "authorization_code") || lacks(&doc.response_types, "code") {
            return Err(invalid("the client does not use the authorization code grant".into()));
        }
        if doc.redirect_uris.len() > MAX_DOCUMENT_REDIRECTS {
            return Err(invalid("the metadata document lists too many redirect URIs".into()));
        }
        let redirect_uris: Vec<String> =
            doc.redirect_uris.into_iter().filter(|u| reach.allows_redirect(u)).take(8).collect();
        if redirect_uris.is_empty() {
            return Err(invalid(
                "none of the client's redirect URIs is one Sluice accepts; the user can allow \
                 one with `sluice reach on --redirect URI`"
                    .into(),
            ));
        }
        let name = client_name(doc.client_name.as_deref());
        let client = OAuthClient {
            id: client_id.to_owned(),
            name: format!("{name} ({host})"),
            redirect_uris,
            created_ms: sluice_store::now_ms(),
        };
        self.store.put_oauth_client(&client).map_err(|e| OAuthError::internal(store_failure(e)))?;
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_https_name_with_a_path_is_a_metadata_url() {
        let good = "https://claude.ai/oauth/mcp-oauth-client-metadata";
        assert_eq!(metadata_url_host(good).as_deref(), Ok("claude.ai"));
        for bad in [
            "http://claude.ai/client.json",
            "https://claude.ai",
            "https://claude.ai/",
            "https://claude.ai:443/client.json",
            "https://claude.ai:8443/client.json",
            "https://Claude.ai/client.json",
            "https://claude.ai/a/../client.json",
            "https://claude.ai/./client.json",
            "https://user:pw@claude.ai/client.json",
            "https://claude.ai/client.json?x=1",
            "https://claude.ai/client.json#x",
            "https://127.0.0.1/client.json",
            "https://2130706433/client.json",
            "https://0x7f.1/client.json",
            "https://[::1]/client.json",
            "https://localhost/client.json",
            "https://claude.ai./client.json",
            "https://claude.ai/client.json ",
        ] {
            assert!(metadata_url_host(bad).is_err(), "{bad} accepted");
        }
    }
}
