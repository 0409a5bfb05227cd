//! The Tasks extension (`io.modelcontextprotocol/tasks`): when a client declares it, a call that
//! runs a command or may wait for the user answers at once with a task, and the call goes on
//! in the background exactly as it would have in the foreground — same approval, same checks,
//! same audit record. `tasks/get` reads its state, `tasks/cancel` cancels the call's token,
//! which withdraws a waiting approval or kills the command (the path a closed response stream
//! takes), and `tasks/update` has nothing to receive: Sluice asks the user, never the client.
//!
//! The task itself is in the store before its id leaves (`Engine::create_task`), and only the
//! token that created it sees it, while it still sees the project. What the call returned stays
//! in memory only ([`Tasks`]): it holds command output and file contents, which Sluice never
//! writes to disk. A task whose result is gone (a restart, or evicted) still answers, with a
//! result that says so.

use std::time::{Duration, UNIX_EPOCH};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult,
    DetailedTask, GetTaskParams, GetTaskResult, JsonObject, Task, TaskPayload, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};
use sluice_core::{ErrorCode, Failure};
use sluice_engine::{Caller, ProjectHandle, TaskRow, TaskStatus};
use tokio_util::sync::CancellationToken;

use crate::server::{SluiceServer, caller_of, failed, result_meta};
use crate::task_results::{Outcome, POLL_INTERVAL};

impl SluiceServer {
    /// Starts `request` as a task of `project` and answers with it. The call runs on its own
    /// cancellation token: the request's token ends with its response.
    pub(crate) fn start_task(
        &self,
        caller: Caller,
        project: &ProjectHandle,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let task = match self.engine().create_task(&caller, project, &request.name) {
            Ok(task) => task,
            Err(failure) => return CallToolResponse::Complete(failed(&failure)),
        };
        let cancel = CancellationToken::new();
        self.tasks().started(&task.id, cancel.clone());
        context.ct = cancel.clone();
        let server = self.clone();
        let id = task.id.clone();
        tokio::spawn(async move {
            let result = server.call_now(caller, request, context).await;
            let (status, outcome) = match result {
                _ if cancel.is_cancelled() => (TaskStatus::Cancelled, None),
                Ok(CallToolResponse::Complete(result)) => {
                    let is_error = result.is_error == Some(true);
                    (TaskStatus::Completed { is_error }, Some(Outcome::Result(object(&result))))
                }
                // Sluice's tools never answer a call with a task of their own.
                Ok(_) => {
                    let error = ErrorData::internal_error("a task within a task", None);
                    (TaskStatus::Failed, Some(Outcome::Error(object(&error))))
                }
                Err(error) => (TaskStatus::Failed, Some(Outcome::Error(object(&error)))),
            };
            // The outcome is in memory before the store says the task ended, so a poll that
            // sees the end also finds what it returned.
            server.tasks().ended(&id, outcome);
            server.engine().end_task(&id, status, None);
        });
        let seed = wire(&task, TaskStatus::Working);
        CallToolResponse::Task(CreateTaskResult::new(seed).with_meta(result_meta()))
    }

    pub(crate) async fn get_task_now(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let task = self.visible_task(&request.task_id, &context)?;
        let payload = match task.status {
            TaskStatus::Working => TaskPayload::Working,
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            TaskStatus::Completed { is_error } => match self.tasks().outcome(&task.id) {
                Some(Outcome::Result(result)) => TaskPayload::Completed { result },
                _ => TaskPayload::Completed { result: forgotten(is_error) },
            },
            TaskStatus::Failed => match self.tasks().outcome(&task.id) {
                Some(Outcome::Error(error)) => TaskPayload::Failed { error },
                _ => {
                    let message = task.error.clone().unwrap_or_else(|| "the task failed".into());
                    let error =
                        ErrorData::internal_error(message, Some(json!({"code": "internal"})));
                    TaskPayload::Failed { error: object(&error) }
                }
            },
        };
        let mut result = GetTaskResult::new(DetailedTask::new(wire(&task, task.status), payload));
        result.meta = Some(result_meta());
        Ok(result)
    }

    /// Cancellation is cooperative: the call's token is cancelled, and the task ends as
    /// `cancelled` once the call has let go (an approval withdrawn, a command's tree killed).
    /// A task that already ended keeps its end.
    pub(crate) fn cancel_task_now(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let task = self.visible_task(&request.task_id, &context)?;
        self.tasks().cancel(&task.id);
        Ok(())
    }

    /// Sluice never asks the client for input, so there is nothing to fulfil; responses for
    /// unknown keys are ignored, as the extension says.
    pub(crate) fn update_task_now(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.visible_task(&request.task_id, &context).map(|_| ())
    }

    /// The task, if this request's token may see it; otherwise invalid params (`-32602`), the
    /// same for a task that does not exist and for one of another token.
    fn visible_task(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<TaskRow, ErrorData> {
        let caller = caller_of(context)
            .ok_or_else(|| ErrorData::invalid_request("unauthenticated request", None))?;
        self.engine().task_for(&caller, id).map_err(|f: Failure| {
            ErrorData::invalid_params(f.message, Some(json!({"code": f.code.as_str()})))
        })
    }
}

/// The task as the extension shows it.
fn wire(task: &TaskRow, status: TaskStatus) -> Task {
    let status = match status {
        TaskStatus::Working => rmcp::model::TaskStatus::Working,
        TaskStatus::Completed { .. } => rmcp::model::TaskStatus::Completed,
        TaskStatus::Failed => rmcp::model::TaskStatus::Failed,
        TaskStatus::Cancelled => rmcp::model::TaskStatus::Cancelled,
    };
    Task::new(task.id.clone(), status, iso(task.created_ms), iso(task.updated_ms))
        .with_ttl_ms(u64::try_from(task.ttl_ms).unwrap_or(0))
        .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64)
}

fn iso(ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(at).to_string()
}

fn object<T: serde::Serialize>(value: &T) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// The result of a task that completed but whose result is no longer in memory.
fn forgotten(is_error: bool) -> JsonObject {
    let how = if is_error { "was refused" } else { "succeeded" };
    let failure = Failure::new(
        ErrorCode::NotFound,
        format!(
            "this call {how}, but its result is gone: Sluice keeps results only in memory for \
             the latest tasks (never command output or file contents on disk). Look at the \
             project's files, git_diff or list_jobs for what it did"
        ),
    );
    let result: CallToolResult = failed(&failure);
    object(&result)
}
