//! A project's git hooks, run for `git_commit` (and `post-checkout` for `git_switch`) where the
//! user allowed them
//! (`GitHooks::Sandbox`): each hook is a job in the project's sandbox like any command the
//! project runs — the token that committed owns it, the Jobs view shows it, pause and the
//! emergency stop refuse or end it, the project's network setting applies and its output is
//! redacted. The hook folder (`.git/hooks`) and `.git/config` are read-only inside the sandbox,
//! so a hook cannot rewrite itself or the next one.

use std::sync::Arc;
use std::time::Duration;

use sluice_core::{ErrorCode, ExecMode, Failure};
use sluice_engine::{Caller, Engine, ProjectHandle};
use sluice_exec::ResolvedCommand;
use sluice_git::{GitError, HookCall, HookRun, HookRunner};

/// The longest one hook may run (a pre-commit that runs a test suite).
const HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// The most of a hook's output a commit's result carries (its end; `job_logs` has the rest).
const OUTPUT_TAIL: usize = 4096;

/// Added to a commit's or a switch's approval summary in a project that runs its hooks.
pub(crate) const SUMMARY_LINE: &str =
    "\nthe repository's git hooks then run, each as a job in the project's sandbox";

/// Refuses a commit or switch whose hooks could not run: they run only where the token may run the
/// project's programs (execution mode `project` or `any`). Committing without them would skip
/// the checks the user asked for.
pub(crate) fn check_runnable(handle: &ProjectHandle) -> Result<(), Failure> {
    if matches!(handle.exec, ExecMode::Project | ExecMode::Any) {
        return Ok(());
    }
    Err(Failure::new(
        ErrorCode::Forbidden,
        format!(
            "project {:?} runs its git hooks on every commit and switch, as jobs in its \
             sandbox, and this token may not run the project's programs here (execution mode \
             `{}`), so nothing was done. The user can allow commands for this token and project, or turn \
             the project's git hooks off in Sluice.",
            handle.name, handle.exec
        ),
    ))
}

/// Runs each hook as a job of the committing token and waits for its end.
pub(crate) struct SandboxHooks {
    engine: Arc<Engine>,
    handle: ProjectHandle,
    owner: String,
    runtime: tokio::runtime::Handle,
}

impl SandboxHooks {
    pub(crate) fn new(engine: Arc<Engine>, handle: ProjectHandle, caller: &Caller) -> SandboxHooks {
        SandboxHooks {
            engine,
            handle,
            owner: caller.token_id.as_str().to_owned(),
            runtime: tokio::runtime::Handle::current(),
        }
    }
}

fn refused(f: Failure) -> GitError {
    GitError::Hook(f.code, f.message)
}

impl HookRunner for SandboxHooks {
    fn run(&self, call: &HookCall) -> Result<HookRun, GitError> {
        self.engine.check_exec_start().map_err(refused)?;
        let command = ResolvedCommand {
            program: call.program.clone(),
            args: call.args.clone(),
            cwd: String::new(),
            env: call.env.clone(),
            timeout: Some(HOOK_TIMEOUT),
        };
        let mut request = self.engine.command_request(&self.handle, command).map_err(refused)?;
        request.owner = Some(self.owner.clone());
        request.shown_as = Some(format!("git hook {}", call.name));
        let jobs = self.engine.jobs();
        let id = jobs.start(request).map_err(|e| refused(e.into()))?;
        let out = self.runtime.block_on(jobs.output(&id)).map_err(|e| refused(e.into()))?;
        let mut output = out.stdout;
        output.push_str(&out.stderr);
        Ok(HookRun {
            hook: call.name.to_owned(),
            job_id: id.0,
            exit_code: out.exit_code.filter(|_| !out.timed_out),
            output: tail(&output, OUTPUT_TAIL).to_owned(),
        })
    }
}

/// The last `max` bytes of `s`, cut at a character boundary.
fn tail(s: &str, max: usize) -> &str {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}
