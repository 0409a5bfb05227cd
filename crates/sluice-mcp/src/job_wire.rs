//! Wire shapes of the command and job tools (`run_command`, `run_tests`, `run_build`,
//! `start_job`, `job_status`, `job_logs`, `write_job_input`, `list_jobs`, `cancel_job`,
//! `fetch_from_job`): the contract a model reads, so every field is documented. The tools
//! themselves are in `exec` (starting), `live` (watching and typing) and `ports` (published
//! ports), which all build on these.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sluice_exec::{Interactive, JobStatus, PublishedPort};

/// A command: a program and its arguments as an array, never a shell string.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct CommandArgs {
    /// The program: a bare name found on the trusted PATH (`cargo`, `git`, `npm`) or an
    /// absolute path outside the project. No shell: `|`, `;`, `$(…)` mean nothing here.
    pub program: String,
    /// The arguments, one element each, passed exactly as given.
    #[serde(default)]
    pub args: Vec<String>,
    /// Working folder, project-relative (default: the project root).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Environment additions (only allow-listed names such as `RUST_BACKTRACE`, `NODE_ENV`,
    /// `CI`); the command otherwise runs in a cleared environment.
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// Time limit in seconds; the whole process tree is killed when it is reached.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// How to test or build: detected from the folder's files unless `toolchain` says.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ToolchainArgs {
    /// The project-relative folder to run in, e.g. a package of a monorepo (default: the
    /// project root). Detection looks at this folder's files only.
    #[serde(default)]
    pub path: Option<String>,
    /// Use this toolchain instead of detecting one: cargo, npm, pnpm, yarn, bun, go, gradle,
    /// maven, dotnet, pytest (tests only), make or just.
    #[serde(default)]
    pub toolchain: Option<String>,
    /// Tests only: run the tests matching this name (cargo's test filter, go's `-run`, pytest's
    /// `-k`, gradle's `--tests`, maven's `-Dtest=`, dotnet's `--filter`, an npm script argument).
    #[serde(default)]
    pub filter: Option<String>,
    /// Extra arguments, one element each, checked against the toolchain's allowed options
    /// (e.g. `["--release"]`, `["--", "--nocapture"]`); anything else is refused.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment additions (only allow-listed names such as `RUST_BACKTRACE`, `CI`).
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// Time limit in seconds (default 300, at most 600); for longer runs use start_job.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// One job, by id.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct JobArgs {
    /// The job id (`job_…`) that `start_job` or `list_jobs` returned.
    pub job_id: String,
}

/// Optional project filter for `list_jobs`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ListJobsArgs {
    /// Only this project's jobs (id or name); all visible projects when absent.
    #[serde(default)]
    pub project: Option<String>,
}

/// The result of a command run to completion.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct RunCommandOutput {
    /// The command as it ran (resolved program and quoted arguments, secrets redacted).
    pub command: String,
    /// `succeeded`, `failed`, `cancelled` or `timed-out`.
    pub state: String,
    /// The exit code, when the program exited on its own.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Standard output (ANSI stripped, secrets redacted, capped).
    pub stdout: String,
    /// Standard error (same treatment).
    pub stderr: String,
    /// Whether output was dropped because it exceeded the cap.
    pub truncated: bool,
    /// Wall-clock time in milliseconds.
    pub duration_ms: u64,
    /// Whether the time limit ended it.
    pub timed_out: bool,
    /// The checkpoint Sluice took of the project right before the command (project and any
    /// modes): restore_checkpoint with it undoes what the command changed.
    pub checkpoint_id: Option<String>,
    /// Why no checkpoint was taken when one would have been (the project over the bounds).
    pub checkpoint_skipped: Option<String>,
}

/// The result of `run_tests` / `run_build`: what was detected, and how the run ended.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ToolchainRunOutput {
    /// The toolchain that ran (`cargo`, `npm`, `go`, …).
    pub toolchain: String,
    /// The file that decided it, in the folder it ran in (`Cargo.toml`, `yarn.lock`, …).
    pub detected_from: String,
    /// The project-relative folder it ran in (`""`: the project root).
    pub path: String,
    #[serde(flatten)]
    pub run: RunCommandOutput,
}

/// A job's state and counters.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct JobOutput {
    /// The job id (`job_…`).
    pub job_id: String,
    /// The project's id.
    pub project: String,
    /// The command (resolved program and quoted arguments, secrets redacted).
    pub command: String,
    /// `queued`, `running`, `succeeded`, `failed`, `cancelled`, `timed-out`, or `lost` (Sluice
    /// stopped before it finished).
    pub state: String,
    /// The exit code, once it exited on its own.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Why it could not run, if it could not.
    pub error: Option<String>,
    /// Running time so far (or in total) in milliseconds.
    pub runtime_ms: Option<u64>,
    /// Bytes written to standard output so far.
    pub stdout_bytes: u64,
    /// Bytes written to standard error so far.
    pub stderr_bytes: u64,
    /// Output bytes dropped from the bounded log buffers.
    pub dropped_bytes: u64,
    /// How the job is confined (Landlock), in a sentence.
    pub confinement: Option<String>,
    /// `terminal` or `pipe` when its owner can type into it (write_job_input); null
    /// otherwise.
    pub interactive: Option<String>,
    /// Ports the job published (start_job with `publish`), while it runs: fetch them with
    /// fetch_from_job; `url` is where the user's browser opens them on this computer.
    pub ports: Vec<PortOutput>,
    /// How start_job's `ready` wait ended (`ready`, `ended` or `deadline`); null otherwise.
    pub ready: Option<String>,
    /// The checkpoint taken right before it (restore_checkpoint undoes what it changed).
    pub checkpoint_id: Option<String>,
    /// Why no checkpoint was taken when one would have been (start_job only).
    pub checkpoint_skipped: Option<String>,
    /// CPU use of the job's process tree at the last sample, percent.
    pub cpu_percent: Option<f32>,
    /// Memory of the job's process tree at the last sample, bytes.
    pub memory_bytes: Option<u64>,
}

/// A command line as results show it to the assistant: through the same redactor as the
/// output, so a secret pasted into arguments does not come back into the transcript (the user's
/// approval shows the command exactly).
pub(crate) fn shown(command: &str) -> String {
    sluice_core::redact::redact(command).into_owned()
}

impl From<JobStatus> for JobOutput {
    fn from(s: JobStatus) -> JobOutput {
        JobOutput {
            job_id: s.id.0,
            project: s.project,
            command: shown(&s.command),
            state: if s.lost { "lost".to_owned() } else { state_str(s.state) },
            exit_code: s.exit_code,
            signal: s.signal,
            error: s.error,
            runtime_ms: s.runtime.map(|d| d.as_millis() as u64),
            stdout_bytes: s.stdout_bytes,
            stderr_bytes: s.stderr_bytes,
            dropped_bytes: s.dropped_bytes,
            confinement: s.confinement.map(|c| c.summary),
            interactive: s.interactive.map(|i| i.as_str().to_owned()),
            ports: s.ports.iter().map(PortOutput::from).collect(),
            ready: None,
            checkpoint_id: s.checkpoint,
            checkpoint_skipped: None,
            cpu_percent: s.sample.map(|x| x.cpu_percent),
            memory_bytes: s.sample.map(|x| x.memory_bytes),
        }
    }
}

/// Every visible job.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ListJobsOutput {
    /// Jobs of the projects this token may use, oldest first (past ones, also from before a
    /// restart, then those this engine runs).
    pub jobs: Vec<JobOutput>,
}

pub(crate) fn state_str<T: Serialize>(state: T) -> String {
    serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// How a job takes input.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InteractiveArg {
    /// A pseudo-terminal of its own (inside the sandbox): for REPLs, prompts, debuggers and
    /// programs that check for a terminal. Output is one stream (`stdout`), as a terminal
    /// shows it, echo included.
    Terminal,
    /// Its stdin is a pipe (stdout and stderr stay separate). Ctrl-C sends SIGINT, ctrl-d and
    /// `end_input` close the pipe.
    Pipe,
}

/// `start_job`'s arguments: a command, and whether the assistant may type into it.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct StartJobArgs {
    #[serde(flatten)]
    pub command: CommandArgs,
    /// Start it interactive: `terminal` or `pipe` (default: not interactive, stdin empty).
    /// Always asks the user first; only this token can then type into it (write_job_input)
    /// and read its output.
    #[serde(default)]
    pub interactive: Option<InteractiveArg>,
    /// Ports the program will listen on (at most 4), to open from this computer: each is
    /// forwarded from 127.0.0.1 while the job runs (the job's network stays closed otherwise).
    /// Needs the project's network `off` or `registries`. Always asks the user first.
    #[serde(default)]
    pub publish: Vec<u16>,
    /// Wait (at most 30 s) until the server is ready before answering: one of `port` (it
    /// accepts connections), `http_path` (an HTTP GET of it answers below 500) or `log_pattern`
    /// (a regular expression its output matches).
    #[serde(default)]
    pub ready: Option<ReadyArg>,
}

impl From<InteractiveArg> for Interactive {
    fn from(a: InteractiveArg) -> Interactive {
        match a {
            InteractiveArg::Terminal => Interactive::Terminal,
            InteractiveArg::Pipe => Interactive::Pipe,
        }
    }
}

/// Input for an interactive job: text, then keys, then (optionally) end of input.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct WriteJobInputArgs {
    /// The job id (`job_…`) of an interactive job this token started.
    pub job_id: String,
    /// Text to type, sent as it is (a newline in it is a newline, not a key press).
    #[serde(default)]
    pub text: Option<String>,
    /// Keys pressed after the text, in order: enter, tab, escape, backspace, up, down, right,
    /// left, ctrl-c, ctrl-d.
    #[serde(default)]
    pub keys: Vec<String>,
    /// End the input after the text and keys (a pipe closes; a terminal gets ctrl-d).
    #[serde(default)]
    pub end_input: bool,
}

/// What a write did.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct WriteJobInputOutput {
    /// The job id.
    pub job_id: String,
    /// Bytes the program was sent.
    pub bytes_sent: u64,
    /// The input is closed now (a pipe after `end_input`); later writes are refused.
    pub input_closed: bool,
    /// Where the job's output stood just before this write: pass it as `cursor` to job_logs
    /// (with `wait`) to read what the program echoes and answers.
    pub next_cursor: u64,
}

/// One job's state, optionally after waiting for it to end.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct JobStatusArgs {
    /// The job id (`job_…`) that `start_job` or `list_jobs` returned.
    pub job_id: String,
    /// Wait up to this many seconds (at most 30) for the job to end before answering.
    #[serde(default)]
    pub wait_seconds: Option<u64>,
}

/// A page of one job's output, optionally after waiting.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct JobLogsArgs {
    /// The job id (`job_…`).
    pub job_id: String,
    /// `stdout` (default) or `stderr`.
    #[serde(default)]
    pub stream: Option<String>,
    /// Where to continue: 0 (default) for the start, or the `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<u64>,
    /// The most bytes to return (default and maximum 65536).
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// Wait before answering: `output` (until there is output past `cursor`), `pattern` (until
    /// the output past `cursor` matches `pattern`) or `end` (until the job ends). Any wait also
    /// ends when the job ends, and at `wait_seconds`.
    #[serde(default)]
    pub wait: Option<String>,
    /// For `wait: pattern`: a regular expression (Rust syntax, at most 4096 bytes).
    #[serde(default)]
    pub pattern: Option<String>,
    /// The longest wait in seconds (default 10, at most 30).
    #[serde(default)]
    pub wait_seconds: Option<u64>,
}

/// A page of a job's output.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct JobLogsOutput {
    /// The text of this page.
    pub text: String,
    /// Where this page starts (may be past the requested cursor when older output was dropped).
    pub cursor: u64,
    /// Pass this as `cursor` to read on.
    pub next_cursor: u64,
    /// Bytes dropped from the buffer so far (older output that can no longer be read).
    pub dropped_bytes: u64,
    /// Whether this page reaches the end of what was written so far.
    pub at_end: bool,
    /// The job's state now; once it is final and `at_end` is true, there is nothing more.
    pub state: String,
    /// How a wait ended: `output`, `pattern`, `end` or `deadline`; null without a wait.
    pub waited: Option<String>,
}

/// A published port as results show it.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct PortOutput {
    /// The port the job's program listens on.
    pub port: u16,
    /// Where the user's browser opens it, on this computer (fetch_from_job reaches it too).
    pub url: String,
}

impl From<&PublishedPort> for PortOutput {
    fn from(p: &PublishedPort) -> PortOutput {
        PortOutput { port: p.port, url: sluice_core::link::job_link(p.host_port) }
    }
}

/// `start_job`'s readiness wait.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct ReadyArg {
    /// Ready when this published port accepts connections.
    #[serde(default)]
    pub port: Option<u16>,
    /// Ready when an HTTP GET of this path (on the first published port, or `port`) answers
    /// with a status below 500.
    #[serde(default)]
    pub http_path: Option<String>,
    /// Ready when the job's output (stdout or stderr) matches this regular expression.
    #[serde(default)]
    pub log_pattern: Option<String>,
    /// The longest wait in seconds (default 10, at most 30); the job goes on either way.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// `fetch_from_job`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct FetchFromJobArgs {
    /// The job id (`job_…`) of a running job of a project this token uses.
    pub job_id: String,
    /// One of the ports that job published (start_job with `publish`).
    pub port: u16,
    /// The path and query to request (default `/`).
    #[serde(default)]
    pub path: Option<String>,
    /// GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS.
    #[serde(default)]
    pub method: Option<String>,
    /// Request headers (at most 32); Host, Connection and the body's framing are Sluice's.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A request body, as text (at most 1 MiB).
    #[serde(default)]
    pub body: Option<String>,
    /// The longest wait for the answer in seconds (default 10, at most 30).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// One header of an answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HeaderOutput {
    pub name: String,
    pub value: String,
}

/// The answer of the job's server.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(transform = sluice_core::schema::plain_integers)]
pub struct FetchFromJobOutput {
    /// The HTTP status code.
    pub status: u16,
    pub headers: Vec<HeaderOutput>,
    /// The body as text (invalid UTF-8 replaced), redacted like the job's output, at most
    /// 256 KiB.
    pub body: String,
    /// Whether the body was longer and cut.
    pub truncated: bool,
}
