//! The `registries` network: a job reaches only the hosts of an allow-list (the package
//! registries its toolchains use), through a filtering proxy the engine runs for it.
//!
//! How it is wired (Linux, in namespaces): the job has a network namespace of its own, with only
//! loopback. Before the namespace's init starts, the job's side creates a listening socket on
//! `127.0.0.1:`[`PROXY_PORT`] *inside that namespace* and passes it to the engine over a socket
//! pair ([`crate::jail`]); the engine accepts on it ([`serve`]) and opens the outbound
//! connections itself, in the host's namespace, after checking each host. The job gets
//! `HTTPS_PROXY` and friends pointing there; nothing else leaves its namespace, so a program
//! that ignores the proxy variables reaches nothing (no route, no DNS).
//!
//! The proxy speaks only `CONNECT host:443` (every registry is HTTPS; the TLS stays end to end,
//! nothing is decrypted): no plain HTTP, no other port, no IP literal, no host off the list, and
//! never an address on the machine itself or its link (a listed name that resolves to loopback
//! would otherwise reach Sluice's own MCP server). A refusal is an HTTP 403 whose body names the
//! host, which the job's tool prints (so the user sees it in the job's log, redacted like any
//! output); the engine logs nothing of it — a host name can carry data.
//!
//! What it does not stop: the registries accept uploads from anyone with an account, so a job
//! determined to send data out can still publish it there. It keeps a job from reaching an
//! arbitrary host (a download of a second stage, a callback, the cloud metadata address), which is
//! the common case. Written by hand because it is small and must be exactly this strict; an HTTP
//! proxy library would bring plain HTTP, other methods and pooling that have to be turned off.

// The proxy serves Linux jobs only (it needs their network namespace); the rest compiles and is
// unit-tested everywhere.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Where the proxy listens inside a job's network namespace (the namespace is the job's own,
/// so no other program's port can collide).
pub const PROXY_PORT: u16 = 3128;

/// The registries a `registries` network reaches unless the user changed the list: host and
/// what it serves. Only what the toolchains fetch packages and toolchains from; no code host
/// (GitHub accepts anything anyone pushes).
pub const DEFAULT_REGISTRIES: &[(&str, &str)] = &[
    ("index.crates.io", "Rust crates (index)"),
    ("static.crates.io", "Rust crates (downloads)"),
    ("crates.io", "Rust crates (API)"),
    ("static.rust-lang.org", "Rust toolchains (rustup)"),
    ("registry.npmjs.org", "npm packages"),
    ("registry.yarnpkg.com", "npm packages through Yarn"),
    ("pypi.org", "Python packages (index)"),
    ("files.pythonhosted.org", "Python packages (downloads)"),
    ("proxy.golang.org", "Go modules"),
    ("sum.golang.org", "Go checksum database"),
    ("repo.maven.apache.org", "Maven Central"),
    ("repo1.maven.org", "Maven Central"),
    ("plugins.gradle.org", "Gradle plugins"),
    ("services.gradle.org", "Gradle distributions (the wrapper)"),
    ("rubygems.org", "Ruby gems"),
    ("index.rubygems.org", "Ruby gems (index)"),
    ("api.nuget.org", "NuGet packages"),
];

/// The hosts a job may reach: names (`pypi.org`) and whole subdomains (`*.example.com`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostList {
    hosts: Vec<String>,
}

impl HostList {
    /// The default list ([`DEFAULT_REGISTRIES`]).
    pub fn registries() -> HostList {
        HostList { hosts: DEFAULT_REGISTRIES.iter().map(|(h, _)| (*h).to_owned()).collect() }
    }

    /// Checks every entry: a DNS name of two labels or more (letters, digits, hyphens), or
    /// `*.` and such a name for its subdomains. No IP address, port, scheme or path.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<HostList, String> {
        let mut hosts = Vec::with_capacity(entries.len());
        for entry in entries {
            let entry = entry.as_ref().trim().to_ascii_lowercase();
            let name = entry.strip_prefix("*.").unwrap_or(&entry);
            if let Err(why) = check_name(name) {
                return Err(format!("{entry:?} is not a host name: {why}"));
            }
            if !hosts.contains(&entry) {
                hosts.push(entry);
            }
        }
        Ok(HostList { hosts })
    }

    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Whether `host` (as a client sent it) is on the list.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        if check_name(&host).is_err() {
            return false;
        }
        self.hosts.iter().any(|h| match h.strip_prefix("*.") {
            Some(domain) => {
                host.len() > domain.len() + 1
                    && host.ends_with(domain)
                    && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
            }
            None => *h == host,
        })
    }
}

fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() || name.len() > 253 {
        return Err("a name has 1 to 253 characters");
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 {
        return Err("a registry's name has a dot (a single label is a local name)");
    }
    for label in &labels {
        if label.is_empty() || label.len() > 63 {
            return Err("each part between dots has 1 to 63 characters");
        }
        if !label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            || label.starts_with('-')
            || label.ends_with('-')
        {
            return Err(
                "only letters, digits and inner hyphens (international names in xn-- form)",
            );
        }
    }
    if labels.last().is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit())) {
        return Err("an IP address is not a host name");
    }
    Ok(())
}

/// Connections one job may have open through the proxy at once.
const MAX_CONNECTIONS: usize = 64;
/// The longest request head a client may send (`CONNECT` and its headers).
const MAX_HEAD: usize = 8 * 1024;
/// How long a client may take to send its request head, and a registry to accept.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Serves the proxy on `listener` (a socket in the job's namespace) until the process `job`
/// ends, on a thread of its own; each connection gets a thread. Errors are the client's
/// answer, never the engine's problem.
#[cfg(target_os = "linux")]
pub(crate) fn serve(
    listener: std::os::fd::OwnedFd,
    job: u32,
    hosts: Arc<HostList>,
) -> std::io::Result<()> {
    let pidfd = crate::kill::pidfd(job)?;
    let listener = std::net::TcpListener::from(listener);
    std::thread::Builder::new()
        .name("sluice-egress".into())
        .spawn(move || accept_until_ended(&listener, &pidfd, &hosts))?;
    Ok(())
}

/// Accepts on `listener` until the process of `pidfd` ends, handing each client a thread of its
/// own, at most [`MAX_CONNECTIONS`] at once.
#[cfg(target_os = "linux")]
fn accept_until_ended(
    listener: &std::net::TcpListener,
    pidfd: &std::os::fd::OwnedFd,
    hosts: &Arc<HostList>,
) {
    use rustix::event::{PollFd, PollFlags, poll};
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        let mut fds = [PollFd::new(listener, PollFlags::IN), PollFd::new(pidfd, PollFlags::IN)];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
        }
        // The job ended: its namespace goes when this listener does.
        if !fds[1].revents().is_empty() {
            return;
        }
        let Ok((client, _)) = listener.accept() else { continue };
        hand_off(client, hosts, &open);
    }
}

/// Serves `client` on a thread of its own, at most [`MAX_CONNECTIONS`] at once (`open` counts
/// them).
fn hand_off(client: TcpStream, hosts: &Arc<HostList>, open: &Arc<AtomicUsize>) {
    if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
        open.fetch_sub(1, Ordering::SeqCst);
        refuse(client, 503, "too many connections through Sluice's proxy at once");
        return;
    }
    let (hosts, open) = (hosts.clone(), open.clone());
    let spawned = std::thread::Builder::new().name("sluice-egress-conn".into()).spawn(move || {
        connection(client, &hosts);
        open.fetch_sub(1, Ordering::SeqCst);
    });
    if spawned.is_err() {
        // The closure, with the client, is gone: the client sees the connection close.
    }
}

/// Who may use a [`LoopbackProxy`]: asked of each client before anything is read from it.
pub type Admit = Box<dyn Fn(&TcpStream) -> bool + Send + Sync>;

/// The proxy for a job that shares the host's network (Windows, as the sandbox account, whose
/// firewall rules leave it loopback only): a port of its own on `127.0.0.1`, serving only the
/// clients `admit` accepts (there: processes in the job's Job Object); any other program on the
/// machine that connects is refused, so a job of a project whose network is off cannot borrow
/// another job's way out. It stops when dropped.
pub struct LoopbackProxy {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for LoopbackProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackProxy").field("port", &self.port).finish()
    }
}

impl LoopbackProxy {
    /// Listens on a free port of `127.0.0.1` and serves `hosts` to the clients `admit` accepts,
    /// on a thread of its own.
    pub fn start(hosts: Arc<HostList>, admit: Admit) -> std::io::Result<LoopbackProxy> {
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::Builder::new().name("sluice-egress".into()).spawn(move || {
            let open = Arc::new(AtomicUsize::new(0));
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                if !admit(&client) {
                    refuse(client, 403, "this proxy serves one job's processes only");
                    continue;
                }
                hand_off(client, &hosts, &open);
            }
        })?;
        Ok(LoopbackProxy { port, stop })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for LoopbackProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which sees the flag and ends, and the listener with it.
        let _ = TcpStream::connect_timeout(
            &SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)),
            Duration::from_secs(1),
        );
    }
}

/// One client: its `CONNECT`, the check, the registry's connection, then bytes both ways.
fn connection(mut client: TcpStream, hosts: &HostList) {
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let (head, rest) = match read_head(&mut client) {
        Ok(parts) => parts,
        Err(why) => return refuse(client, 400, why),
    };
    let target = match parse_connect(&head) {
        Ok(target) => target,
        Err((status, why)) => return refuse(client, status, &why),
    };
    if !hosts.allows(&target.host) {
        let why = format!(
            "{} is not on this project's list of registries (its network is \"registries\"; \
             the user can add the host to the list, or turn the network on)",
            target.host
        );
        return refuse(client, 403, &why);
    }
    let mut upstream = match open(&target) {
        Ok(stream) => stream,
        Err(why) => return refuse(client, 502, &why),
    };
    let _ = client.set_read_timeout(None);
    if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").is_err()
        || (!rest.is_empty() && upstream.write_all(&rest).is_err())
    {
        return;
    }
    let (Ok(mut client_rx), Ok(mut upstream_tx)) = (client.try_clone(), upstream.try_clone())
    else {
        return;
    };
    let up = std::thread::Builder::new().name("sluice-egress-up".into()).spawn(move || {
        let _ = std::io::copy(&mut client_rx, &mut upstream_tx);
        let _ = upstream_tx.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut upstream, &mut client);
    let _ = client.shutdown(std::net::Shutdown::Write);
    if let Ok(up) = up {
        let _ = up.join();
    }
}

/// Reads up to the blank line that ends the request head; returns the head and any bytes the
/// client sent after it (the start of its TLS handshake).
fn read_head(client: &mut TcpStream) -> Result<(String, Vec<u8>), &'static str> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            let head = String::from_utf8(buf).map_err(|_| "the request is not text")?;
            return Ok((head, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err("the request head is too long");
        }
        match client.read(&mut chunk) {
            Ok(0) | Err(_) => return Err("the request ended before its head did"),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
}

/// `CONNECT host:443 HTTP/1.1`, and nothing else.
fn parse_connect(head: &str) -> Result<Target, (u16, String)> {
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split(' ');
    let (method, authority, version) = (parts.next(), parts.next(), parts.next());
    if method != Some("CONNECT") {
        return Err((
            405,
            "Sluice's proxy only tunnels HTTPS (CONNECT host:443); plain HTTP is refused".into(),
        ));
    }
    let (Some(authority), Some(version), None) = (authority, version, parts.next()) else {
        return Err((400, "a CONNECT request line is CONNECT host:port HTTP/1.1".into()));
    };
    if !version.starts_with("HTTP/1.") {
        return Err((400, "a CONNECT request line is CONNECT host:port HTTP/1.1".into()));
    }
    let Some((host, port)) = authority.rsplit_once(':') else {
        return Err((400, "the CONNECT target has no port".into()));
    };
    if host.starts_with('[') || host.parse::<IpAddr>().is_ok() {
        return Err((403, format!("{host} is an IP address; only listed host names are reached")));
    }
    let port: u16 =
        port.parse().map_err(|_| (400, "the CONNECT target's port is not a number".into()))?;
    if port != 443 {
        return Err((403, format!("port {port} is refused; registries are reached on 443 only")));
    }
    Ok(Target { host: host.to_owned(), port })
}

/// Resolves and connects, skipping every address on this machine or its link.
fn open(target: &Target) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|_| format!("{} does not resolve", target.host))?
        .filter(|a| public(a.ip()))
        .collect();
    if addrs.is_empty() {
        return Err(format!("{} resolves to no address outside this machine", target.host));
    }
    let mut last = String::new();
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("cannot reach {}: {last}", target.host))
}

/// Not loopback, unspecified, link-local (the cloud metadata address among them), multicast or
/// broadcast — also in their IPv4-mapped IPv6 forms.
fn public(ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_loopback()
                || v4.is_unspecified()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.octets()[0] == 0)
        }
        IpAddr::V6(v6) => {
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}

fn refuse(mut client: TcpStream, status: u16, why: &str) {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        502 => "Bad Gateway",
        _ => "Service Unavailable",
    };
    let body = format!("Sluice: {why}\n");
    let answer = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(answer.as_bytes());
    let _ = client.shutdown(std::net::Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the proxy on `port` answers `request`: its status line and body.
    fn ask(port: u16, request: &str) -> String {
        let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer
    }

    #[test]
    fn a_loopback_proxy_serves_only_whom_it_admits_and_stops_when_dropped() {
        let admitted = Arc::new(AtomicBool::new(false));
        let who = admitted.clone();
        let hosts = Arc::new(HostList::parse(&["pypi.org"]).unwrap());
        let proxy =
            LoopbackProxy::start(hosts, Box::new(move |_| who.load(Ordering::SeqCst))).unwrap();
        let port = proxy.port();
        // Another program on the machine: refused before its request is read (so it sends
        // none here: one left unread could turn the close into a reset that loses the answer).
        let said = ask(port, "");
        assert!(said.starts_with("HTTP/1.1 403") && said.contains("one job's processes"), "{said}");
        // The job's own processes get the same rules as a job in namespaces.
        admitted.store(true, Ordering::SeqCst);
        for (request, status) in [
            ("CONNECT example.org:443 HTTP/1.1\r\n\r\n", "403"),
            ("CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", "403"),
            ("CONNECT pypi.org:22 HTTP/1.1\r\n\r\n", "403"),
            ("GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n", "405"),
        ] {
            let said = ask(port, request);
            assert!(said.starts_with(&format!("HTTP/1.1 {status}")), "{request:?}: {said}");
        }
        drop(proxy);
        let end = std::time::Instant::now() + Duration::from_secs(10);
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
            assert!(std::time::Instant::now() < end, "the proxy still listens after its drop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn the_list_takes_names_and_subdomains_only() {
        let list = HostList::parse(&["PyPI.org", " *.example.com ", "pypi.org"]).unwrap();
        assert_eq!(list.hosts(), ["pypi.org", "*.example.com"]);
        for bad in [
            "",
            "localhost",
            "127.0.0.1",
            "10.0.0.1",
            "::1",
            "[::1]",
            "pypi.org:443",
            "https://pypi.org",
            "pypi.org/simple",
            "-a.org",
            "a-.org",
            "a..org",
            "*.",
            "*.com.",
            "pÿpi.org",
            "*.*.org",
            "a b.org",
        ] {
            assert!(HostList::parse(&[bad]).is_err(), "{bad:?} was accepted");
        }
        assert!(HostList::parse(&["xn--bcher-kva.example"]).is_ok());
    }

    #[test]
    fn a_host_is_allowed_exactly_or_as_a_listed_subdomain() {
        let list = HostList::parse(&["pypi.org", "*.example.com"]).unwrap();
        assert!(list.allows("pypi.org"));
        assert!(list.allows("PYPI.ORG."));
        assert!(list.allows("a.example.com"));
        assert!(list.allows("a.b.example.com"));
        for denied in [
            "example.com",
            "evilexample.com",
            "pypi.org.evil.com",
            "evilpypi.org",
            "a.pypi.org",
            "pypi.org\0",
            "pypi.org%00",
            "127.0.0.1",
            "",
            ".",
        ] {
            assert!(!list.allows(denied), "{denied:?} was allowed");
        }
        assert!(HostList::registries().allows("index.crates.io"));
    }

    #[test]
    fn only_connect_to_a_named_host_on_443_is_understood() {
        let ok = parse_connect("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n");
        assert_eq!(ok, Ok(Target { host: "pypi.org".into(), port: 443 }));
        for (head, status) in [
            ("GET http://pypi.org/ HTTP/1.1\r\n\r\n", 405),
            ("CONNECT pypi.org:80 HTTP/1.1\r\n\r\n", 403),
            ("CONNECT pypi.org:22 HTTP/1.1\r\n\r\n", 403),
            ("CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", 403),
            ("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", 403),
            ("CONNECT 169.254.169.254:443 HTTP/1.1\r\n\r\n", 403),
            ("CONNECT pypi.org HTTP/1.1\r\n\r\n", 400),
            ("CONNECT pypi.org:443 HTTP/2\r\n\r\n", 400),
            ("CONNECT pypi.org:443 HTTP/1.1 x\r\n\r\n", 400),
            ("CONNECT pypi.org:99999 HTTP/1.1\r\n\r\n", 400),
        ] {
            assert_eq!(parse_connect(head).map_err(|e| e.0), Err(status), "{head:?}");
        }
    }

    #[test]
    fn addresses_on_the_machine_or_its_link_are_never_reached() {
        for ip in [
            "127.0.0.1",
            "127.8.9.1",
            "0.0.0.0",
            "169.254.169.254",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(!public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["151.101.0.223", "10.1.2.3", "2a04:4e42::223"] {
            assert!(public(ip.parse().unwrap()), "{ip}");
        }
    }
}
