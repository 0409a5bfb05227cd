//! Slow and flooding clients over HTTP: headers or a body sent a byte at a time are cut off
//! while the client is still sending (`HEADER_TIMEOUT`, `BODY_TIMEOUT` in sluice-mcp's
//! http.rs), and a token that holds every request slot it has and floods for more takes no
//! other token's turn. No timing is asserted: each client would go on for minutes, and the test
//! checks that Sluice ended it first (the give-up bound only keeps a broken build from hanging).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::harness::{Sandbox, bearer, initialize_body, post};

/// Far beyond either timeout (10 s for headers, 30 s for a body): a client still sending then
/// was never cut off.
const GIVE_UP: Duration = Duration::from_secs(150);

/// What the connection says now: `None` while it is open and silent, else what it answered
/// (empty when it was closed).
fn answered(s: &mut TcpStream) -> Option<String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Some(String::from_utf8_lossy(&got).into_owned()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return if got.is_empty() {
                    None
                } else {
                    Some(String::from_utf8_lossy(&got).into_owned())
                };
            }
            Err(_) => return Some(String::from_utf8_lossy(&got).into_owned()),
        }
    }
}

/// Sends `head`, then one byte of `trickle` every quarter second until Sluice answers or closes
/// the connection; returns what it said and how many trickled bytes it took first.
fn trickle(port: u16, head: &str, bytes: &[u8]) -> (String, usize) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(250))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    for (sent, byte) in bytes.iter().enumerate() {
        if let Some(said) = answered(&mut s) {
            return (said, sent);
        }
        assert!(
            started.elapsed() < GIVE_UP,
            "a client trickling for {GIVE_UP:?} was never cut off"
        );
        if s.write_all(&[*byte]).is_err() {
            return (answered(&mut s).unwrap_or_default(), sent);
        }
    }
    panic!("the whole request went out a byte at a time and Sluice still waited");
}

#[test]
fn hs07_slow_headers_and_silent_connections_are_cut_off() {
    let sb = Sandbox::new();
    sb.add_project();
    let server = sb.serve();
    // A connection that never sends a byte, and one whose header never ends.
    let mut silent = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let head = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Slow: ", server.port);
    let (said, sent) = trickle(server.port, &head, &[b'a'; 4096]);
    assert!(said.is_empty() || said.starts_with("HTTP/1.1 408"), "{said}");
    eprintln!("slow headers: cut off after {sent} trickled bytes");
    silent.set_read_timeout(Some(GIVE_UP)).unwrap();
    assert!(answered(&mut silent).is_some(), "a silent connection was kept for {GIVE_UP:?}");
}

#[test]
fn hs07_slow_bodies_are_cut_off() {
    let sb = Sandbox::new();
    sb.add_project();
    let token = sb.token("slow", &[]);
    let server = sb.serve();
    let body = initialize_body();
    let padded = format!("{body:<4096}");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}Content-Length: {len}\r\n\r\n",
        port = server.port,
        auth = bearer(&token),
        len = padded.len(),
    );
    let (said, sent) = trickle(server.port, &head, padded.as_bytes());
    eprintln!("slow body: cut off after {sent} of {} bytes", padded.len());
    assert!(said.starts_with("HTTP/1.1 408") && said.contains("too slow"), "{said}");
    // The same token is served at once afterwards.
    assert_eq!(post(server.port, &bearer(&token), &body).status, 200);
}

/// A token holding every request slot it has (bodies that never come) and flooding for more
/// is refused at once (429), while another token is answered every time — with the first
/// token's requests still open.
#[test]
fn one_tokens_flood_takes_no_other_tokens_turn() {
    let sb = Sandbox::new();
    sb.add_project();
    let (flood, calm) = (sb.token("flood", &[]), sb.token("calm", &[]));
    let server = sb.serve_with(&["--max-in-flight", "4"]);
    let port = server.port;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{}Content-Length: 100\r\n\r\n{{",
        bearer(&flood)
    );
    // Each holds a slot once admitted: headers and the first byte of a body that never comes.
    let hold = || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        s
    };
    let mut held: Vec<TcpStream> = (0..4).map(|_| hold()).collect();
    // The flooding token is out of slots once its held requests are let in. The first probe
    // may reach the gate before a held request does and take its slot for a moment; that held
    // request is then refused (429) and replaced.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = post(port, &bearer(&flood), &initialize_body());
        if r.status == 429 && r.body.contains("in flight") {
            break;
        }
        for s in &mut held {
            if let Some(said) = answered(s) {
                assert!(said.starts_with("HTTP/1.1 429"), "a held request: {said}");
                *s = hold();
            }
        }
        if Instant::now() >= deadline {
            let held: Vec<_> = held.iter_mut().map(answered).collect();
            panic!(
                "the held requests never took the slots: {} {}; held: {held:?}",
                r.status, r.body
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // One more held request is refused, and soon: its body never comes, but a refused request
    // holds no slot and must not hold its connection for the body's whole time either.
    let mut extra = hold();
    extra.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let said = answered(&mut extra).unwrap_or_default();
    assert!(said.starts_with("HTTP/1.1 429") && said.contains(r#""id":null"#), "{said}");
    let (refused, calm_answers) = std::thread::scope(|s| {
        let floods: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    (0..10)
                        .filter(|_| post(port, &bearer(&flood), &initialize_body()).status == 429)
                        .count()
                })
            })
            .collect();
        let answers: Vec<u16> =
            (0..20).map(|_| post(port, &bearer(&calm), &initialize_body()).status).collect();
        (floods.into_iter().map(|t| t.join().unwrap()).sum::<usize>(), answers)
    });
    assert_eq!(refused, 80, "the flooding token got past its budget");
    assert!(calm_answers.iter().all(|&s| s == 200), "{calm_answers:?}");
    // Its requests were all still held, unanswered, while the other token was served.
    for s in &mut held {
        assert_eq!(answered(s), None, "a held request ended before the test did");
    }
}
