//! Fetching a client ID metadata document: the one request Sluice makes to a URL a stranger
//! chose (a hosted client's `client_id`), so it is as narrow as the job.
//!
//! - The URL is checked first (`sluice_engine::reach::metadata_url_host`): `https`, port 443,
//!   a host name, in normal form.
//! - Every address the name resolves to must be publicly routable: never loopback, private,
//!   shared (CGNAT), link-local (cloud metadata services), documentation, benchmarking,
//!   multicast or reserved; IPv4 inside IPv6 (mapped, NAT64, 6to4, Teredo) is refused. One bad
//!   address refuses the name.
//! - The connection goes to an address that was checked: nothing is resolved twice, so a name
//!   cannot resolve to a public address for the check and a private one for the connection.
//! - The certificate is verified against the platform's trust store; no proxy from the
//!   environment is used; a redirect is not followed; 5 s in all, 5 KiB at most, `application/
//!   json`, one fetch at a time.
//!
//! Written with hyper's connection API and rustls rather than a general HTTP client because
//! each rule above is one such a client's defaults loosen (redirects, proxies, resolving again
//! for happy eyeballs).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::header;
use hyper_util::rt::TokioIo;
use sluice_engine::reach::{MAX_DOCUMENT_BYTES, metadata_url_host};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore, pki_types::ServerName};

/// The whole fetch: resolving, connecting, TLS, the answer.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Fetches metadata documents, one at a time.
pub(crate) struct MetadataFetcher {
    /// `Err` says why nothing can be fetched (no trusted certificates on this machine).
    tls: Result<TlsConnector, String>,
    one: Semaphore,
}

impl MetadataFetcher {
    pub(crate) fn new() -> MetadataFetcher {
        MetadataFetcher { tls: connector(), one: Semaphore::new(1) }
    }

    /// The document at `client_id`, or a sentence saying why not, for the page the person
    /// sees.
    pub(crate) async fn fetch(&self, client_id: &str) -> Result<Bytes, String> {
        let host = metadata_url_host(client_id)?;
        let tls = self.tls.as_ref().map_err(Clone::clone)?;
        let attempt = async {
            let _one = self.one.acquire().await.map_err(|_| "Sluice is stopping".to_owned())?;
            get(tls, &host, client_id).await
        };
        tokio::time::timeout(FETCH_TIMEOUT, attempt)
            .await
            .map_err(|_| "it did not answer within 5 seconds".to_owned())?
    }
}

/// TLS with the platform's trust store, HTTP/1.1 only.
pub(crate) fn connector() -> Result<TlsConnector, String> {
    let mut roots = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        return Err("this computer has no trusted certificates for Sluice to check it with".into());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsConnector::from(Arc::new(config)))
}

async fn get(tls: &TlsConnector, host: &str, url: &str) -> Result<Bytes, String> {
    let addrs = resolve(host).await?;
    let tcp = connect(&addrs).await.map_err(|e| format!("{host} could not be reached ({e})"))?;
    let name = ServerName::try_from(host.to_owned()).map_err(|_| "its host is not a name")?;
    let stream = tls
        .connect(name, tcp)
        .await
        .map_err(|e| format!("{host} did not prove who it is over TLS ({e})"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("{host} did not speak HTTP ({e})"))?;
    let conn = AbortOnDrop(tokio::spawn(conn));
    // The URL is `https://HOST/PATH` in normal form (metadata_url_host checked it).
    let path = url.strip_prefix("https://").and_then(|r| r.strip_prefix(host)).unwrap_or("/");
    let request = hyper::Request::get(path)
        .header(header::HOST, host)
        .header(header::ACCEPT, "application/json")
        .header(header::USER_AGENT, concat!("Sluice/", env!("CARGO_PKG_VERSION")))
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("the request could not be built ({e})"))?;
    let response =
        sender.send_request(request).await.map_err(|e| format!("{host} did not answer ({e})"))?;
    let status = response.status();
    if status.is_redirection() {
        return Err(format!("it answered {status}; redirects are not followed"));
    }
    if status != hyper::StatusCode::OK {
        return Err(format!("it answered {status}"));
    }
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err("it is not served as application/json".into());
    }
    let body = Limited::new(response.into_body(), MAX_DOCUMENT_BYTES)
        .collect()
        .await
        .map_err(|_| "it is larger than 5 KiB, or was cut off".to_owned())?
        .to_bytes();
    drop(conn);
    Ok(body)
}

/// Every address `host` resolves to on port 443, all of them public.
async fn resolve(host: &str) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 443))
        .await
        .map_err(|_| format!("{host} does not resolve"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("{host} does not resolve"));
    }
    if addrs.iter().any(|a| !is_public(a.ip())) {
        return Err(format!(
            "{host} resolves to an address on a private, local or reserved network, which \
             Sluice never fetches from"
        ));
    }
    Ok(addrs)
}

/// Connects to the first of `addrs` that answers.
pub(crate) async fn connect(addrs: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::other("no address");
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(tcp) => return Ok(tcp),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Ends a connection's task with its last user.
pub(crate) struct AbortOnDrop<T>(pub(crate) tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Whether `ip` is a publicly routable unicast address.
fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0                                    // "this network"
        || a == 10                              // private
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || a == 127                             // loopback
        || (a == 169 && b == 254)               // link-local: cloud metadata services
        || (a == 172 && (16..32).contains(&b))  // private
        || (a == 192 && b == 0 && (c == 0 || c == 2)) // IETF assignments, documentation
        || (a == 192 && b == 88 && c == 99)     // 6to4 relays
        || (a == 192 && b == 168)               // private
        || (a == 198 && (b == 18 || b == 19))   // benchmarking
        || (a == 198 && b == 51 && c == 100)    // documentation
        || (a == 203 && b == 0 && c == 113)     // documentation
        || a >= 224) // multicast, reserved, broadcast
}

/// Global unicast (2000::/3) only, less the blocks inside it that are not a host on the
/// internet or that carry an IPv4 address (Teredo, 6to4).
fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    (s[0] & 0xe000) == 0x2000
        && !(s[0] == 0x2001 && s[1] < 0x0200) // IETF protocol assignments, Teredo
        && !(s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        && s[0] != 0x2002 // 6to4
        && !(s[0] == 0x3fff && s[1] < 0x1000) // documentation (RFC 9637)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_publicly_routable_addresses_are_fetched_from() {
        for public in ["1.1.1.1", "11.22.33.44", "100.63.255.255", "100.128.0.1", "172.32.0.1"]
            .into_iter()
            .chain(["192.0.1.1", "198.20.0.1", "223.255.255.254", "2606:4700::1111"])
            .chain(["2a00:1450:4001::1", "::ffff:8.8.8.8"])
        {
            assert!(is_public(public.parse().unwrap()), "{public} refused");
        }
        for private in ["0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.255"]
            .into_iter()
            .chain(["127.0.0.1", "127.255.255.255", "169.254.169.254", "172.16.0.1"])
            .chain(["172.31.255.255", "192.0.0.1", "192.0.2.1", "192.88.99.1", "192.168.1.1"])
            .chain(["198.18.0.1", "198.19.255.255", "198.51.100.1", "203.0.113.1"])
            .chain(["224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255"])
            .chain(["::", "::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1"])
            .chain(["64:ff9b::7f00:1", "64:ff9b:1::a00:1", "fc00::1", "fd12:3456::1"])
            .chain(["fe80::1", "fec0::1", "ff02::1", "2001::1", "2001:0:4136:e378::1"])
            .chain(["2001:db8::1", "2002:7f00:1::1", "3fff::1", "100::1"])
        {
            assert!(!is_public(private.parse().unwrap()), "{private} accepted");
        }
    }

    #[tokio::test]
    async fn a_name_with_one_private_address_is_refused_before_any_connection() {
        let err = resolve("localhost").await.unwrap_err();
        assert!(err.contains("private, local or reserved"), "{err}");
        let fetcher = MetadataFetcher::new();
        for url in ["https://127.0.0.1/x.json", "https://localhost/x.json", "http://a.example/x"] {
            assert!(fetcher.fetch(url).await.is_err(), "{url}");
        }
    }
}
