//! Live jobs: starting a job the assistant can type into (`start_job` with `interactive`),
//! typing into it (`write_job_input`), and reading a job's output or state with a wait instead
//! of polling (`job_logs` and `job_status`). A wait is woken by the registry's watch channels
//! (new output, a state change), ends at its deadline (at most [`MAX_WAIT`], so no client
//! times out) or when the client cancels the call; the job goes on either way.
//!
//! An interactive job's output and input belong to the token that started it
//! (`Engine::job_to_read`, `Engine::job_to_write`); typing is an `agent`-profile change, and
//! what was typed is audited by size and keyed hash only.

use std::time::Duration;

use rmcp::handler::server::common::{Extension, schema_for_output};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, tool, tool_router};
use serde::Serialize;
use sluice_core::{ErrorCode, Failure};
use sluice_engine::Caller;
use sluice_exec::{ExecError, InputPart, JobStatus, Key, Stream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::job_wire::{
    JobLogsArgs, JobLogsOutput, JobOutput, JobStatusArgs, WriteJobInputArgs, WriteJobInputOutput,
    state_str,
};
use crate::server::{SluiceServer, failed, succeeded};

/// The longest a read waits in one call.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(30);
/// The wait when the call asks for one without saying how long.
const DEFAULT_WAIT: Duration = Duration::from_secs(10);
/// The largest log page.
const MAX_PAGE: usize = 64 * 1024;
/// The longest pattern (as `search_text`).
const MAX_PATTERN_LEN: usize = 4096;
/// How far back from the newest output a pattern is looked for: the ring's size.
pub(crate) const PATTERN_WINDOW: usize = 1 << 20;

/// What a wait waits for.
enum Until {
    Output,
    Pattern(regex::Regex),
    End,
}

fn until_of(args: &JobLogsArgs) -> Result<Option<Until>, Failure> {
    Ok(Some(match (args.wait.as_deref(), &args.pattern) {
        (None, None) => return Ok(None),
        (Some("output"), None) => Until::Output,
        (Some("end"), None) => Until::End,
        (Some("pattern") | None, Some(p)) => Until::Pattern(pattern(p)?),
        (Some("pattern"), None) => return Err(Failure::invalid("`wait: pattern` needs `pattern`")),
        (Some("output" | "end"), Some(_)) => {
            return Err(Failure::invalid("`pattern` goes with `wait: pattern` (or no `wait`)"));
        }
        (Some(other), _) => {
            return Err(Failure::invalid(format!(
                "wait must be `output`, `pattern` (with `pattern`) or `end`, not {other:?}"
            )));
        }
    }))
}

/// A pattern compiled with `search_text`'s bounds: linear-time matching, and compile-time
/// memory capped for hostile patterns.
pub(crate) fn pattern(p: &str) -> Result<regex::Regex, Failure> {
    if p.is_empty() || p.len() > MAX_PATTERN_LEN {
        return Err(Failure::invalid(format!(
            "`pattern` must be 1 to {MAX_PATTERN_LEN} bytes long"
        )));
    }
    regex::RegexBuilder::new(p)
        .size_limit(16 * 1024 * 1024)
        .dfa_size_limit(32 * 1024 * 1024)
        .build()
        .map_err(|e| Failure::invalid(format!("invalid regex: {e}")))
}

pub(crate) fn wait_for(seconds: Option<u64>) -> Duration {
    seconds.map_or(DEFAULT_WAIT, Duration::from_secs).min(MAX_WAIT)
}

fn stream_of(name: Option<&str>) -> Result<Stream, Failure> {
    match name {
        None | Some("stdout") => Ok(Stream::Stdout),
        Some("stderr") => Ok(Stream::Stderr),
        Some(other) => {
            Err(Failure::invalid(format!("stream must be `stdout` or `stderr`, not {other:?}")))
        }
    }
}

/// The refusal of a wait the client cancelled: the job is untouched.
pub(crate) fn wait_cancelled() -> Failure {
    Failure::new(
        ErrorCode::Cancelled,
        "the client cancelled the call, so the wait ended; the job goes on",
    )
}

/// Output of a job the registry no longer holds (remembered in the store only).
fn not_kept(status: &JobStatus) -> Failure {
    Failure::new(
        ErrorCode::NotFound,
        format!(
            "the output of job {} is no longer kept (output lives in memory only and does not \
             survive a Sluice restart); job_status still says how it ended",
            status.id
        ),
    )
}

#[tool_router(router = live_tools, vis = "pub(crate)")]
impl SluiceServer {
    #[tool(
        description = "Type into an interactive job this token started (start_job with \
        `interactive`): `text`, then named `keys` (enter, tab, escape, backspace, up, down, \
        right, left, ctrl-c, ctrl-d), then optionally `end_input`. At most 16 KiB a write and \
        64 KiB a second. Then read the answer with job_logs from the returned `next_cursor` \
        with `wait: output` or `wait: pattern`.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<WriteJobInputOutput>()
    )]
    async fn write_job_input(
        &self,
        Extension(caller): Extension<Caller>,
        Parameters(args): Parameters<WriteJobInputArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        respond(self.write_input(caller, args).await)
    }
}

impl SluiceServer {
    async fn write_input(
        &self,
        caller: Caller,
        args: WriteJobInputArgs,
    ) -> Result<WriteJobInputOutput, Failure> {
        let mut parts = Vec::new();
        if let Some(text) = args.text.filter(|t| !t.is_empty()) {
            parts.push(InputPart::Text(text));
        }
        for name in &args.keys {
            let key = Key::parse(name).ok_or_else(|| {
                Failure::invalid(format!("unknown key {name:?}; keys are: {}", Key::NAMES))
            })?;
            parts.push(InputPart::Key(key));
        }
        if args.end_input {
            parts.push(InputPart::Eof);
        }
        if parts.is_empty() {
            return Err(Failure::invalid("nothing to send: give `text`, `keys` or `end_input`"));
        }
        let engine = self.engine().clone();
        let status = engine.job_to_write(&caller, &args.job_id)?;
        let id = status.id.clone();
        let done = tokio::task::spawn_blocking(move || {
            // Where the output stood before the write: the echo and the answer come after it.
            let next = engine.jobs().status(&id).map(|s| s.stdout_bytes).unwrap_or(0);
            let result = engine.jobs().write_input(&id, &parts);
            // A stalled write may have sent part of its bytes: recorded as attempted.
            let sent = match &result {
                Ok(report) => Some(report.bytes),
                Err(ExecError::InputNotTaken(_)) => None,
                Err(_) => return result.map_err(Failure::from).map(|r| (r, 0)),
            };
            let bytes: Vec<u8> = parts
                .iter()
                .flat_map(|p| match p {
                    InputPart::Text(t) => t.as_bytes().to_vec(),
                    InputPart::Key(k) => format!("<{k:?}>").into_bytes(),
                    InputPart::Eof => b"<eof>".to_vec(),
                })
                .collect();
            engine.record_job_input(&caller, &status, &bytes, sent);
            result.map_err(Failure::from).map(|r| (r, next))
        })
        .await
        .map_err(|_| Failure::internal())??;
        let (report, next_cursor) = done;
        Ok(WriteJobInputOutput {
            job_id: args.job_id,
            bytes_sent: report.bytes as u64,
            input_closed: report.closed,
            next_cursor,
        })
    }

    /// `job_status`, after waiting for the end when asked.
    pub(crate) async fn status_waiting(
        &self,
        caller: &Caller,
        args: &JobStatusArgs,
        cancel: CancellationToken,
    ) -> Result<JobOutput, Failure> {
        let status = self.engine().job_for(caller, &args.job_id)?;
        if args.wait_seconds.is_none() || status.state.is_final() {
            return Ok(JobOutput::from(status));
        }
        let deadline = Instant::now() + wait_for(args.wait_seconds);
        let Ok((_, mut state)) = self.engine().jobs().watch(&status.id) else {
            return Ok(JobOutput::from(status));
        };
        tokio::select! {
            _ = state.wait_for(|s| s.is_final()) => {}
            () = tokio::time::sleep_until(deadline) => {}
            () = cancel.cancelled() => return Err(wait_cancelled()),
        }
        Ok(JobOutput::from(self.engine().job_for(caller, &args.job_id)?))
    }

    /// `job_logs`, after waiting when asked: the wait wakes on every change of the job's output
    /// or state, and checks its condition then.
    pub(crate) async fn logs_waiting(
        &self,
        caller: &Caller,
        args: &JobLogsArgs,
        cancel: CancellationToken,
    ) -> Result<JobLogsOutput, Failure> {
        let status = self.engine().job_to_read(caller, &args.job_id)?;
        let stream = stream_of(args.stream.as_deref())?;
        let until = until_of(args)?;
        let cursor = args.cursor.unwrap_or(0);
        let jobs = self.engine().jobs();
        let waited = match until {
            None => None,
            Some(until) => {
                let deadline = Instant::now() + wait_for(args.wait_seconds);
                let (mut output, mut state) =
                    jobs.watch(&status.id).map_err(|_| not_kept(&status))?;
                Some(loop {
                    output.borrow_and_update();
                    let ended = state.borrow_and_update().is_final();
                    let met = match &until {
                        Until::Output => {
                            jobs.status(&status.id).is_ok_and(|s| bytes_of(&s, stream) > cursor)
                        }
                        Until::Pattern(re) => jobs
                            .logs(&status.id, stream, cursor, PATTERN_WINDOW)
                            .is_ok_and(|page| re.is_match(&page.text)),
                        Until::End => false,
                    };
                    if met {
                        break match until {
                            Until::Pattern(_) => "pattern",
                            _ => "output",
                        };
                    }
                    if ended {
                        break "end";
                    }
                    tokio::select! {
                        changed = output.changed() => if changed.is_err() { break "end" },
                        changed = state.changed() => if changed.is_err() { break "end" },
                        () = tokio::time::sleep_until(deadline) => break "deadline",
                        () = cancel.cancelled() => return Err(wait_cancelled()),
                    }
                })
            }
        };
        let status = self.engine().job_to_read(caller, &args.job_id)?;
        let max = args.max_bytes.unwrap_or(MAX_PAGE).clamp(1, MAX_PAGE);
        let page = jobs.logs(&status.id, stream, cursor, max).map_err(|e| match e {
            // Remembered in the store, but its output lived in a registry now gone.
            ExecError::NoSuchJob(_) => not_kept(&status),
            other => Failure::from(other),
        })?;
        Ok(JobLogsOutput {
            text: page.text,
            cursor: page.cursor,
            next_cursor: page.next_cursor,
            dropped_bytes: page.dropped_bytes,
            at_end: page.at_end,
            state: if status.lost { "lost".to_owned() } else { state_str(status.state) },
            waited: waited.map(str::to_owned),
        })
    }
}

fn bytes_of(status: &JobStatus, stream: Stream) -> u64 {
    match stream {
        Stream::Stdout => status.stdout_bytes,
        Stream::Stderr => status.stderr_bytes,
    }
}

/// A tool's result: its output, or its refusal as a tool error.
pub(crate) fn respond<T: Serialize>(r: Result<T, Failure>) -> Result<CallToolResult, ErrorData> {
    Ok(match r {
        Ok(out) => succeeded(&out),
        Err(f) => failed(&f),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(wait: Option<&str>, pattern: Option<&str>) -> JobLogsArgs {
        JobLogsArgs {
            job_id: "job_x".into(),
            stream: None,
            cursor: None,
            max_bytes: None,
            wait: wait.map(str::to_owned),
            pattern: pattern.map(str::to_owned),
            wait_seconds: None,
        }
    }

    #[test]
    fn waits_are_read_from_their_arguments_and_odd_ones_refused() {
        assert!(matches!(until_of(&args(None, None)), Ok(None)));
        assert!(matches!(until_of(&args(Some("output"), None)), Ok(Some(Until::Output))));
        assert!(matches!(until_of(&args(Some("end"), None)), Ok(Some(Until::End))));
        assert!(matches!(until_of(&args(None, Some("a+"))), Ok(Some(Until::Pattern(_)))));
        for (wait, pattern) in [
            (Some("pattern"), None),
            (Some("output"), Some("a")),
            (Some("soon"), None),
            (None, Some("(")),
            (None, Some("")),
        ] {
            let err = until_of(&args(wait, pattern)).err().map(|f| f.code);
            assert_eq!(err, Some(ErrorCode::InvalidArgument), "{wait:?} {pattern:?}");
        }
        let long = "a".repeat(MAX_PATTERN_LEN + 1);
        assert!(until_of(&args(None, Some(&long))).is_err());
        // A pattern whose compiled form would be huge is refused, not built.
        assert!(until_of(&args(None, Some("\\w{1000}{1000}"))).is_err());
        assert_eq!(wait_for(Some(3600)), MAX_WAIT);
        assert_eq!(wait_for(None), DEFAULT_WAIT);
    }
}
