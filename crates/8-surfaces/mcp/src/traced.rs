//! Every request a session answers, traced (`toolsmith-telemetry`): the server's handler
//! wrapped so that each request gets its span by the MCP conventions (parent from the
//! request's `_meta.traceparent`), the handler runs with that span current (its stages become
//! children), and the outcome — a JSON-RPC error, a tool result with `isError` — ends it and
//! records the request's metrics. With nothing exported, requests go straight through.
//!
//! rmcp serves a `ServerHandler` over both transports, so the wrapper is one: each of its
//! methods hands over to `Server`'s (a test keeps the two lists equal).

use super::Server;
use crate::telemetry::{self, Outcome, Target, Transport};
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use std::borrow::Cow;

/// The server of one session, as rmcp runs it.
pub struct Traced {
    inner: Server,
    transport: Transport,
    started: std::time::Instant,
    /// The protocol version of the session's last request (for its duration's point).
    version: std::sync::Mutex<Option<String>>,
}

impl Traced {
    pub(crate) fn new(inner: Server, transport: Transport) -> Traced {
        Traced {
            inner,
            transport,
            started: std::time::Instant::now(),
            version: std::sync::Mutex::new(None),
        }
    }

    /// The request's span (None when nothing is exported).
    fn start(
        &self,
        method: &str,
        target: Target<'_>,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<telemetry::Request> {
        if !telemetry::enabled() {
            return None;
        }
        let negotiated = ctx.protocol_version();
        let modern = negotiated.as_ref().is_some_and(|v| !v.has_initialize());
        let version = negotiated
            .or_else(|| ctx.meta.protocol_version())
            .map(|v| v.to_string());
        if let Ok(mut v) = self.version.lock() {
            v.clone_from(&version);
        }
        telemetry::request(&telemetry::RequestInfo {
            method,
            target,
            request_id: ctx.id.to_string(),
            protocol_version: version,
            session_id: (!modern).then_some(self.inner.session.id.as_str()),
            transport: self.transport,
            traceparent: ctx.meta.get_traceparent(),
            tracestate: ctx.meta.get_tracestate(),
        })
    }
}

/// How a request ended, from its answer.
fn outcome<T>(out: &Result<T, McpError>) -> Outcome {
    match out {
        Ok(_) => Outcome::Ok,
        Err(e) => Outcome::RpcError(e.code.0),
    }
}

/// What a tool's result says, as JSON: its structured content, else its text blocks.
fn result_value(r: &CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or_else(|| {
        let text: Vec<&str> = r
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect();
        Value::String(text.join("\n"))
    })
}

/// The inner handler's answer to a request, within the request's span.
macro_rules! traced {
    ($self:ident, $method:expr, $target:expr, $ctx:ident, $call:expr) => {{
        match $self.start($method, $target, &$ctx) {
            None => $call.await,
            Some(span) => {
                let out = span.run($call).await;
                span.finish(outcome(&out));
                out
            }
        }
    }};
}

impl Drop for Traced {
    /// The session is over: `mcp.server.session.duration`.
    fn drop(&mut self) {
        if telemetry::enabled() {
            let version = self.version.lock().ok().and_then(|mut v| v.take());
            telemetry::session_ended(
                self.started.elapsed().as_secs_f64(),
                version,
                self.transport,
            );
        }
    }
}

impl ServerHandler for Traced {
    fn get_info(&self) -> ServerInfo {
        self.inner.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    async fn ping(&self, ctx: RequestContext<RoleServer>) -> Result<(), McpError> {
        traced!(self, "ping", Target::None, ctx, self.inner.ping(ctx))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        traced!(
            self,
            "initialize",
            Target::None,
            ctx,
            self.inner.initialize(request, ctx)
        )
    }

    async fn discover(&self, ctx: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        traced!(
            self,
            "server/discover",
            Target::None,
            ctx,
            self.inner.discover(ctx)
        )
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        traced!(
            self,
            "completion/complete",
            Target::None,
            ctx,
            self.inner.complete(request, ctx)
        )
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        traced!(
            self,
            "logging/setLevel",
            Target::None,
            ctx,
            self.inner.set_level(request, ctx)
        )
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let name = request.name.clone();
        traced!(
            self,
            "prompts/get",
            Target::Prompt(&name),
            ctx,
            self.inner.get_prompt(request, ctx)
        )
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        traced!(
            self,
            "prompts/list",
            Target::None,
            ctx,
            self.inner.list_prompts(request, ctx)
        )
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        traced!(
            self,
            "resources/list",
            Target::None,
            ctx,
            self.inner.list_resources(request, ctx)
        )
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        traced!(
            self,
            "resources/templates/list",
            Target::None,
            ctx,
            self.inner.list_resource_templates(request, ctx)
        )
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.clone();
        traced!(
            self,
            "resources/read",
            Target::Resource(&uri),
            ctx,
            self.inner.read_resource(request, ctx)
        )
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.inner.listen(context).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = request.uri.clone();
        traced!(
            self,
            "resources/subscribe",
            Target::Resource(&uri),
            ctx,
            self.inner.subscribe(request, ctx)
        )
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = request.uri.clone();
        traced!(
            self,
            "resources/unsubscribe",
            Target::Resource(&uri),
            ctx,
            self.inner.unsubscribe(request, ctx)
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let Some(mut span) = self.start("tools/call", Target::Tool(&name), &ctx) else {
            return self.inner.call_tool(request, ctx).await;
        };
        let arguments = span
            .records_content()
            .then(|| Value::Object(request.arguments.clone().unwrap_or_default()));
        let out = span.run(self.inner.call_tool(request, ctx)).await;
        let result = match &out {
            Ok(CallToolResponse::Complete(r)) => Some(r),
            _ => None,
        };
        if arguments.is_some() {
            span.content(arguments, result.map(result_value));
        }
        span.finish(match result {
            Some(r) if r.is_error == Some(true) => Outcome::ToolError,
            _ => outcome(&out),
        });
        out
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        traced!(
            self,
            "tools/list",
            Target::None,
            ctx,
            self.inner.list_tools(request, ctx)
        )
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let method = request.method.clone();
        traced!(
            self,
            &method,
            Target::None,
            ctx,
            self.inner.on_custom_request(request, ctx)
        )
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        ctx: NotificationContext<RoleServer>,
    ) {
        self.inner.on_cancelled(notification, ctx).await
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        ctx: NotificationContext<RoleServer>,
    ) {
        self.inner.on_progress(notification, ctx).await
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        self.inner.on_initialized(ctx).await
    }

    async fn on_roots_list_changed(&self, ctx: NotificationContext<RoleServer>) {
        self.inner.on_roots_list_changed(ctx).await
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        ctx: NotificationContext<RoleServer>,
    ) {
        self.inner.on_custom_notification(notification, ctx).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        traced!(
            self,
            "tasks/get",
            Target::None,
            ctx,
            self.inner.get_task(request, ctx)
        )
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        traced!(
            self,
            "tasks/update",
            Target::None,
            ctx,
            self.inner.update_task(request, ctx)
        )
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        traced!(
            self,
            "tasks/cancel",
            Target::None,
            ctx,
            self.inner.cancel_task(request, ctx)
        )
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        traced!(
            self,
            "skills/list",
            Target::None,
            ctx,
            self.inner.list_skills(request, ctx)
        )
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        traced!(
            self,
            "skills/get",
            Target::None,
            ctx,
            self.inner.get_skill(request, ctx)
        )
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, McpError> {
        traced!(
            self,
            "resources/directory/read",
            Target::None,
            ctx,
            self.inner.read_resource_directory(request, ctx)
        )
    }
}

#[cfg(test)]
mod tests {
    /// The methods of an `impl ServerHandler for …` block in `source`.
    fn methods(source: &str, ty: &str) -> Vec<String> {
        let start = source
            .find(&format!("impl ServerHandler for {ty}"))
            .expect("the impl");
        let body = &source[start..];
        let end = body.find("\n}\n").unwrap_or(body.len());
        let mut out: Vec<String> = body[..end]
            .split("fn ")
            .skip(1)
            .filter_map(|s| s.split('(').next())
            .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .map(str::to_string)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Every method `Server` implements is handed over by `Traced` (a method left out would
    /// silently answer with rmcp's default).
    #[test]
    fn the_wrapper_hands_over_every_method_the_server_has() {
        let server = methods(include_str!("handler.rs"), "Server");
        let traced = methods(include_str!("traced.rs"), "Traced");
        let missing: Vec<&String> = server.iter().filter(|m| !traced.contains(m)).collect();
        assert!(server.len() > 10, "{server:?}");
        assert!(missing.is_empty(), "Traced does not hand over {missing:?}");
    }
}
