//! Published ports in the real sandbox: a server inside a job's own network namespace is
//! reached from the host's loopback, and nothing else is: the job still reaches no host port,
//! a forward reaches only the job's loopback (not a host service on the same port number, such
//! as the engine's), and the forward is gone once the job ends. Publishing with the network on
//! is refused with nothing started.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use sluice_exec::{ExecError, JobId, JobLimits, JobState, Jobs, Network, Stream};

use crate::support::Fixture;

/// A Python HTTP server on `port` inside the job, serving the project folder.
fn serve(jobs: &Jobs, fx: &Fixture, port: u16) -> JobId {
    let mut req =
        fx.request("python3", &["-m", "http.server", &port.to_string(), "-b", "127.0.0.1"]);
    req.publish = vec![port];
    jobs.start(req).expect("start")
}

fn get(host_port: u16, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, host_port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

fn until_ready(jobs: &Jobs, id: &JobId, port: u16) {
    let end = Instant::now() + Duration::from_secs(30);
    while !jobs.port_accepting(id, port).expect("published") {
        let out = jobs.logs(id, Stream::Stderr, 0, 1 << 16).expect("logs").text;
        assert!(Instant::now() < end, "port {port} never accepted; stderr: {out}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_published_server_is_reached_from_the_host_and_gone_when_the_job_ends() {
    let fx = Fixture::new();
    std::fs::write(fx.root().join("hello.txt"), "HELLO-FROM-THE-JOB").expect("write");
    let jobs = Jobs::new(JobLimits::default());
    let id = serve(&jobs, &fx, 8000);
    until_ready(&jobs, &id, 8000);
    let status = jobs.status(&id).expect("status");
    assert_eq!(status.ports.len(), 1, "{status:?}");
    let host_port = status.ports[0].host_port;
    let page = get(host_port, "/hello.txt").expect("get");
    assert!(page.starts_with("HTTP/1.0 200") && page.contains("HELLO-FROM-THE-JOB"), "{page}");

    jobs.cancel(&id).expect("cancel");
    assert_eq!(jobs.status(&id).expect("status").state, JobState::Cancelled);
    assert!(jobs.status(&id).expect("status").ports.is_empty());
    // The host's listener closes with the job (its thread sees the job's pidfd end).
    let end = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect((Ipv4Addr::LOCALHOST, host_port)).is_ok() {
        assert!(Instant::now() < end, "port {host_port} still open after the job ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(matches!(jobs.port_accepting(&id, 8000), Err(ExecError::NotPublished(_))));
}

/// The attacks: the job's network stays closed to the host although a port is published, and
/// a forward reaches the job's own loopback only, never a host service on the same number.
#[test]
fn a_published_port_opens_nothing_else_either_way() {
    let fx = Fixture::new();
    // A host service (as the engine's own MCP port would be), on loopback.
    let host = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    host.set_nonblocking(true).expect("nonblocking");
    let host_service = host.local_addr().expect("addr").port();
    let jobs = Jobs::new(JobLimits::default());
    // The job publishes the host service's number, where nothing of the job's listens, and
    // tries the host's port itself while its other server runs.
    let probe = format!(
        "import socket, http.server, threading\n\
         srv = http.server.HTTPServer(('127.0.0.1', 8001), http.server.SimpleHTTPRequestHandler)\n\
         threading.Thread(target=srv.serve_forever, daemon=True).start()\n\
         try:\n    socket.create_connection(('127.0.0.1', {host_service}), timeout=2); print('REACHED-HOST', flush=True)\n\
         except OSError as e:\n    print('no-host', e.__class__.__name__, flush=True)\n\
         import time; time.sleep(60)\n"
    );
    let mut req = fx.request("python3", &["-c", &probe]);
    req.publish = vec![8001, host_service];
    let id = jobs.start(req).expect("start");
    until_ready(&jobs, &id, 8001);
    let end = Instant::now() + Duration::from_secs(20);
    let out = loop {
        let out = jobs.logs(&id, Stream::Stdout, 0, 1 << 16).expect("logs").text;
        if out.contains("host") || Instant::now() > end {
            break out;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(out.contains("no-host") && !out.contains("REACHED-HOST"), "{out:?}");

    let status = jobs.status(&id).expect("status");
    let forward = status.ports.iter().find(|p| p.port == host_service).expect("published");
    assert_ne!(forward.host_port, host_service, "the host's number was taken, so another is used");
    // Through the forward, the host service is not reached: the connection closes unanswered.
    let mut through =
        TcpStream::connect((Ipv4Addr::LOCALHOST, forward.host_port)).expect("connect");
    through.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    let _ = through.write_all(b"GET / HTTP/1.0\r\n\r\n");
    let mut buf = Vec::new();
    let _ = through.read_to_end(&mut buf);
    assert!(buf.is_empty(), "{:?}", String::from_utf8_lossy(&buf));
    assert!(!jobs.port_accepting(&id, host_service).expect("published"));
    assert!(host.accept().is_err(), "the host service was reached through the forward");
    jobs.cancel(&id).expect("cancel");
}

#[test]
fn publishing_is_refused_with_the_network_on_and_with_bad_lists() {
    let fx = Fixture::new();
    let jobs = Jobs::new(JobLimits::default());
    let mut on = fx.request("true", &[]);
    on.sandbox = fx.sandbox(Network::Allowed);
    on.publish = vec![3000];
    let refused = jobs.start(on);
    assert!(matches!(refused, Err(ExecError::CannotPublish(_))), "{refused:?}");
    for bad in [vec![0], vec![80, 80], vec![1, 2, 3, 4, 5]] {
        let mut req = fx.request("true", &[]);
        req.publish = bad.clone();
        assert!(jobs.start(req).is_err(), "{bad:?}");
    }
    // Nothing was left running by the refusals.
    assert!(jobs.list().iter().all(|j| j.state.is_final()));
}
