//! Long work as MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663, on
//! rmcp's `TaskManager`): which calls may run as a task, running one detached from its
//! request, and `tasks/get`, `tasks/update` and `tasks/cancel`.
//!
//! A call becomes a task only when the request declared the extension (per session at
//! `initialize`, or per request in `_meta`); every other client gets the plain result, as
//! before. Cancelling a task cancels the work's token (a build kills cargo's process group
//! and commits nothing; a registration stops before its commit), waits briefly for the work
//! to wind down, then drops it (script processes are killed on drop).

use super::Shared;
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, CreateTaskResult, GetTaskResult,
    JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How a tool relates to tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Always answered in the request.
    Never,
    /// A task for clients that declared the extension, else answered in the request.
    Optional,
    /// Only as a task: clients without the extension get `-32021` (no stored or meta tool
    /// is one yet; the conformance fixtures have some).
    #[cfg_attr(not(feature = "conformance-fixtures"), allow(dead_code))]
    Required,
}

/// How long cancelled work may take to stop on its own before it is dropped.
const WIND_DOWN: Duration = Duration::from_secs(10);

/// Whether this call may run as a task: the long meta-tools (each says so,
/// `MetaTool::runs_as_task`: `build_tool`, `import_tool`, `register_script` with dependencies
/// to install) and stored tools whose `tool.toml` says `[run] long = true`.
pub fn support(shared: &Shared, request: &CallToolRequestParams) -> Support {
    let name = request.name.as_ref();
    let empty = JsonObject::new();
    let args = request.arguments.as_ref().unwrap_or(&empty);
    if let Some(meta) = super::tools::ALL.iter().find(|e| e.name == name) {
        return if (meta.runs_as_task)(args) {
            Support::Optional
        } else {
            Support::Never
        };
    }
    match shared.app.index().tool(name) {
        Some(t) if t.manifest.run.long => Support::Optional,
        _ => Support::Never,
    }
}

/// Whether this request declared the tasks extension.
pub fn opted_in(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .is_some_and(|c| c.supports_tasks())
}

/// The error for a task-only tool called by a client without the extension.
pub fn required_error() -> McpError {
    McpError::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

/// Start `work` as a task and answer with its `CreateTaskResult`. `ct` is the token the work
/// watches; it is cancelled by `tasks/cancel` (not by the end of the HTTP request).
/// `make_work` receives the task's context (status messages, in-task input requests).
pub fn spawn<W, F>(
    tasks: &TaskManager,
    name: &str,
    ct: CancellationToken,
    make_work: W,
) -> CallToolResponse
where
    W: FnOnce(TaskContext) -> F,
    F: Future<Output = Result<CallToolResponse, McpError>> + Send + 'static,
{
    let options = TaskOptions::new().with_status_message(format!("{name} is running"));
    let name = name.to_string();
    // The task's work stays a child of the request's span after the request is answered.
    let carried = crate::telemetry::Carried::here();
    let task = tasks.spawn(options, move |tctx: TaskContext| {
        let work = carried.run(make_work(tctx.clone()));
        Box::pin(async move {
            tokio::pin!(work);
            let outcome = tokio::select! {
                r = &mut work => r,
                _ = tctx.cancelled() => {
                    tctx.set_status_message(format!("{name} is being cancelled"));
                    ct.cancel();
                    // Let the work stop itself (kill its processes, skip its commit). Work
                    // that finished anyway is reported as it is (SEP-2663 allows a task to
                    // complete after a cancel), so a commit is never hidden.
                    return match tokio::time::timeout(WIND_DOWN, &mut work).await {
                        Ok(Ok(CallToolResponse::Complete(r))) if r.is_error != Some(true) => Ok(r),
                        _ => Err(TaskExit::Cancelled),
                    };
                }
            };
            match outcome {
                Ok(CallToolResponse::Complete(r)) => Ok(r),
                Ok(_) => Err(TaskExit::Error(McpError::internal_error(
                    format!("{name} asked the client a question inside a task; call it without the tasks extension to answer"),
                    None,
                ))),
                Err(e) => Err(TaskExit::Error(e)),
            }
        })
    });
    CallToolResponse::Task(CreateTaskResult::new(task))
}

/// `tasks/get`.
pub fn get(tasks: &TaskManager, task_id: &str) -> Result<GetTaskResult, McpError> {
    Ok(GetTaskResult::new(tasks.get_task(task_id)?))
}
