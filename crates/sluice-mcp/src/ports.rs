//! Dev servers: a job's published ports (`start_job` with `publish`), the wait until the server
//! is ready, and `fetch_from_job`, the assistant's HTTP request to a published port of a running
//! job of its project and to nothing else. The request goes through the same loopback forward
//! the user's browser opens ([`sluice_exec::publish`]); the answer comes back through the job's
//! output redactor, bounded.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header;
use hyper_util::rt::TokioIo;
use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, tool, tool_router};
use sluice_core::{ErrorCode, Failure};
use sluice_engine::Caller;
use sluice_exec::{JobId, Stream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cimd::AbortOnDrop;
use crate::job_wire::{FetchFromJobArgs, FetchFromJobOutput, HeaderOutput, ReadyArg};
use crate::live::respond;
use crate::live::{PATTERN_WINDOW, pattern, wait_cancelled, wait_for};
use crate::server::SluiceServer;

/// The largest request body the assistant may send.
const MAX_REQUEST_BODY: usize = 1 << 20;
/// The most of an answer's body returned.
const MAX_RESPONSE_BODY: usize = 256 * 1024;
/// The most request headers.
const MAX_HEADERS: usize = 32;
/// How often a readiness wait for a port or an HTTP answer looks again (nothing announces a
/// port opening; a wait for a log pattern wakes on the job's output instead).
const READY_POLL: Duration = Duration::from_millis(50);

/// The line publishing adds to the user's approval card.
pub(crate) fn publish_line(ports: &[u16]) -> String {
    let list: Vec<String> = ports.iter().map(u16::to_string).collect();
    format!(
        "publishes port {}: its server can be opened from this computer (127.0.0.1) while the \
         job runs, by your browser and by the assistant; the job's network stays closed",
        list.join(", ")
    )
}

/// A readiness wait, checked.
pub(crate) struct Ready {
    until: Until,
    deadline: Duration,
}

enum Until {
    Port(u16),
    Http(u16, String),
    Log(regex::Regex),
}

impl Ready {
    /// The wait `arg` asks for, refused when it names no condition, two, or a port the job
    /// does not publish.
    pub(crate) fn of(arg: Option<&ReadyArg>, publish: &[u16]) -> Result<Option<Ready>, Failure> {
        let Some(arg) = arg else { return Ok(None) };
        let published = |port: u16| {
            if publish.contains(&port) {
                Ok(port)
            } else {
                Err(Failure::invalid(format!("`ready.port` {port} is not in `publish`")))
            }
        };
        let until = match (&arg.http_path, &arg.log_pattern) {
            (Some(_), Some(_)) => {
                return Err(Failure::invalid(
                    "`ready` takes `http_path` or `log_pattern`, not both",
                ));
            }
            (Some(path), None) => {
                check_path(path)?;
                let port = match arg.port {
                    Some(p) => published(p)?,
                    None => *publish.first().ok_or_else(|| {
                        Failure::invalid("`ready.http_path` needs a port in `publish`")
                    })?,
                };
                Until::Http(port, path.clone())
            }
            (None, Some(p)) if arg.port.is_none() => Until::Log(pattern(p)?),
            (None, Some(_)) => {
                return Err(Failure::invalid("`ready` takes `port` or `log_pattern`, not both"));
            }
            (None, None) => match arg.port {
                Some(p) => Until::Port(published(p)?),
                None => {
                    return Err(Failure::invalid(
                        "`ready` needs one of `port`, `http_path` or `log_pattern`",
                    ));
                }
            },
        };
        Ok(Some(Ready { until, deadline: wait_for(arg.timeout_seconds) }))
    }
}

/// A path to request: absolute, no scheme or host, no spaces or control characters.
fn check_path(path: &str) -> Result<(), Failure> {
    let ok = path.starts_with('/')
        && !path.starts_with("//")
        && path.len() <= 2048
        && path.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(())
    } else {
        Err(Failure::invalid(
            "the path must start with a single `/` and hold no spaces or control characters \
             (at most 2048 bytes; percent-encode the rest)",
        ))
    }
}

#[tool_router(router = port_tools, vis = "pub(crate)")]
impl SluiceServer {
    #[tool(
        description = "Make an HTTP request to a dev server a running job of this project \
        published (start_job with `publish`), as the user's browser would open it: `job_id`, \
        `port`, then `path` (default /), `method`, `headers`, `body`. Nothing else is reachable \
        this way. The answer's body is text, redacted like job output, at most 256 KiB.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<FetchFromJobOutput>()
    )]
    async fn fetch_from_job(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(args): Parameters<FetchFromJobArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        respond(self.fetch(&caller, args).await)
    }
}

impl SluiceServer {
    async fn fetch(
        &self,
        caller: &Caller,
        args: FetchFromJobArgs,
    ) -> Result<FetchFromJobOutput, Failure> {
        let path = args.path.unwrap_or_else(|| "/".to_owned());
        check_path(&path)?;
        let method = match args.method.as_deref().unwrap_or("GET").to_ascii_uppercase().as_str() {
            m @ ("GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS") => {
                hyper::Method::from_bytes(m.as_bytes()).map_err(|_| Failure::internal())?
            }
            other => {
                return Err(Failure::invalid(format!(
                    "method must be GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS, not {other:?}"
                )));
            }
        };
        if args.headers.len() > MAX_HEADERS {
            return Err(Failure::invalid(format!("at most {MAX_HEADERS} headers")));
        }
        let body = args.body.unwrap_or_default();
        if body.len() > MAX_REQUEST_BODY {
            return Err(Failure::new(ErrorCode::TooLarge, "the body is larger than 1 MiB"));
        }
        let (host_port, redactor) = self.engine().port_to_fetch(caller, &args.job_id, args.port)?;
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(&path)
            .header(header::HOST, format!("127.0.0.1:{host_port}"));
        for (name, value) in &args.headers {
            let name = header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Failure::invalid(format!("{name:?} is not a header name")))?;
            if matches!(
                name,
                header::HOST
                    | header::CONNECTION
                    | header::CONTENT_LENGTH
                    | header::TRANSFER_ENCODING
                    | header::UPGRADE
                    | header::TE
            ) {
                return Err(Failure::invalid(format!("the {name} header is set by Sluice")));
            }
            let value = header::HeaderValue::from_str(value)
                .map_err(|_| Failure::invalid(format!("the value of {name} is not valid")))?;
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| Failure::invalid(format!("the request could not be built ({e})")))?;
        let timeout = wait_for(args.timeout_seconds);
        let answer = tokio::time::timeout(timeout, send(host_port, request))
            .await
            .map_err(|_| unreachable_now(args.port, "did not answer in time"))??;
        let (status, headers, body, truncated) = answer;
        // The body and each header value are redacted as the job's output is, each whole.
        let shown = |bytes: &[u8]| {
            let mut r = redactor.clone();
            r.push(&String::from_utf8_lossy(bytes)) + &r.finish()
        };
        let headers = headers
            .iter()
            .map(|(name, value)| HeaderOutput {
                name: name.as_str().to_owned(),
                value: shown(value.as_bytes()),
            })
            .collect();
        Ok(FetchFromJobOutput { status, headers, body: shown(&body), truncated })
    }

    /// Waits until `ready` holds for job `id`, it ends, the deadline passes or the client
    /// cancels the call (the job goes on in every case but the last, where it goes on too).
    pub(crate) async fn wait_ready(
        &self,
        id: &JobId,
        ready: Ready,
        cancel: CancellationToken,
    ) -> Result<&'static str, Failure> {
        let deadline = Instant::now() + ready.deadline;
        let jobs = self.engine().jobs();
        let (mut output, mut state) = jobs.watch(id).map_err(Failure::from)?;
        let polls = !matches!(ready.until, Until::Log(_));
        loop {
            output.borrow_and_update();
            state.borrow_and_update();
            let status = jobs.status(id).map_err(Failure::from)?;
            let met = match &ready.until {
                Until::Port(port) => {
                    let (jobs, id, port) = (jobs.clone(), id.clone(), *port);
                    tokio::task::spawn_blocking(move || jobs.port_accepting(&id, port))
                        .await
                        .map_err(|_| Failure::internal())?
                        .unwrap_or(false)
                }
                Until::Http(port, path) => match status.ports.iter().find(|p| p.port == *port) {
                    Some(p) => answers(p.host_port, path, deadline).await,
                    None => false,
                },
                Until::Log(re) => [Stream::Stdout, Stream::Stderr].into_iter().any(|stream| {
                    jobs.logs(id, stream, 0, PATTERN_WINDOW)
                        .is_ok_and(|page| re.is_match(&page.text))
                }),
            };
            if met {
                return Ok("ready");
            }
            if status.state.is_final() {
                return Ok("ended");
            }
            tokio::select! {
                changed = output.changed(), if !polls => if changed.is_err() { return Ok("ended") },
                changed = state.changed() => if changed.is_err() { return Ok("ended") },
                () = tokio::time::sleep(READY_POLL), if polls => {}
                () = tokio::time::sleep_until(deadline) => return Ok("deadline"),
                () = cancel.cancelled() => return Err(wait_cancelled()),
            }
        }
    }
}

/// The answer: status, headers, up to [`MAX_RESPONSE_BODY`] of the body, whether it was cut.
type Answer = (u16, hyper::HeaderMap, Bytes, bool);

async fn send(host_port: u16, request: hyper::Request<Full<Bytes>>) -> Result<Answer, Failure> {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", host_port))
        .await
        .map_err(|_| unreachable_now(host_port, "is not open"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|_| unreachable_now(host_port, "did not speak HTTP"))?;
    let conn = AbortOnDrop(tokio::spawn(conn));
    let head_only = request.method() == hyper::Method::HEAD;
    let response = sender
        .send_request(request)
        .await
        .map_err(|_| unreachable_now(host_port, "closed the connection without an answer"))?;
    let (parts, mut body) = response.into_parts();
    let mut kept = Vec::new();
    let mut truncated = false;
    // A HEAD answer has no body, whatever its Content-Length says.
    while !head_only && let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            let room = MAX_RESPONSE_BODY - kept.len();
            kept.extend_from_slice(&data[..data.len().min(room)]);
            if data.len() > room {
                truncated = true;
                break;
            }
        }
    }
    drop(conn);
    Ok((parts.status.as_u16(), parts.headers, Bytes::from(kept), truncated))
}

/// Whether a GET of `path` through `host_port` answers below 500, within 2 s and `deadline`.
async fn answers(host_port: u16, path: &str, deadline: Instant) -> bool {
    let Ok(request) = hyper::Request::get(path)
        .header(header::HOST, format!("127.0.0.1:{host_port}"))
        .body(Full::new(Bytes::new()))
    else {
        return false;
    };
    let patience = deadline.saturating_duration_since(Instant::now()).min(Duration::from_secs(2));
    matches!(
        tokio::time::timeout(patience, send(host_port, request)).await,
        Ok(Ok((status, ..))) if status < 500
    )
}

fn unreachable_now(port: u16, what: &str) -> Failure {
    Failure::new(
        ErrorCode::Conflict,
        format!("the job's server on port {port} {what}; is it listening yet (start_job `ready`)?"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(port: Option<u16>, http: Option<&str>, log: Option<&str>) -> ReadyArg {
        ReadyArg {
            port,
            http_path: http.map(str::to_owned),
            log_pattern: log.map(str::to_owned),
            timeout_seconds: Some(3600),
        }
    }

    #[test]
    fn a_ready_wait_names_one_condition_on_a_published_port() {
        let publish = [8000];
        let ok = |a: ReadyArg| Ready::of(Some(&a), &publish).map(|r| r.map(|r| r.deadline));
        assert_eq!(ok(ready(Some(8000), None, None)).ok().flatten(), Some(Duration::from_secs(30)));
        assert!(ok(ready(None, Some("/health"), None)).is_ok());
        assert!(ok(ready(None, None, Some("Serving"))).is_ok());
        for bad in [
            ready(None, None, None),
            ready(Some(9000), None, None),
            ready(None, Some("/a"), Some("b")),
            ready(Some(8000), None, Some("b")),
            ready(None, Some("http://evil/"), None),
            ready(None, Some("//evil/"), None),
            ready(None, Some("/a b"), None),
        ] {
            assert!(Ready::of(Some(&bad), &publish).is_err(), "{bad:?}");
        }
        assert!(Ready::of(Some(&ready(None, Some("/"), None)), &[]).is_err());
    }
}
