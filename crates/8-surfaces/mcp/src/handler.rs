//! The rmcp `ServerHandler`: tools (meta-tools plus exposed stored tools), the guide and tool
//! resources, prompts, completion, logging level, and the two eras' notification channels.

use super::host::McpHost;
use super::resources::{TOOL_URI_PREFIX, TOOL_URI_TEMPLATE, read_text};
use super::watch::GUIDE_URI;
use super::{Server, convert, fixtures, tasks, tools};
use crate::guide;
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::sync::Arc;

const PAGE: usize = 500;

fn is_modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version().is_some_and(|v| !v.has_initialize())
}

impl Server {
    fn actor(&self, ctx: &RequestContext<RoleServer>) -> crate::toolbox::Actor {
        // Over authenticated HTTP (OAuth), the person the token names; else the client.
        let name = super::http::auth::principal(&ctx.extensions)
            .or_else(|| ctx.client_info().map(|i| i.name))
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| "mcp-client".into());
        crate::toolbox::Actor {
            name,
            session: Some(self.session.id.clone()),
        }
    }

    fn host(&self, ctx: &RequestContext<RoleServer>) -> McpHost {
        let log_level = if is_modern(ctx) {
            ctx.meta.log_level()
        } else {
            Some(
                self.session
                    .log_level
                    .lock()
                    .ok()
                    .and_then(|l| *l)
                    .unwrap_or(LoggingLevel::Info),
            )
        };
        McpHost {
            shared: Arc::clone(&self.shared),
            peer: ctx.peer.clone(),
            progress_token: ctx.meta.get_progress_token(),
            log_level,
            depth: 0,
            rounds: None,
            task: None,
            notes: Default::default(),
            actor: Some(self.actor(ctx)),
            elicitation: ctx
                .client_capabilities()
                .is_some_and(|c| c.elicitation.is_some()),
        }
    }

    fn all_tools(&self) -> Vec<Tool> {
        let idx = super::early::index_for_list(&self.shared);
        let view = crate::trust::View::new(&self.shared.app.toolbox, Arc::clone(&idx));
        let mut tools = tools::definitions();
        tools.extend(
            self.shared
                .exposure
                .select(&idx, &self.shared.app.usage())
                .into_iter()
                .filter_map(|t| view.get(&t.manifest.name))
                .map(convert::mcp_tool),
        );
        if self.shared.fixtures {
            tools.extend(fixtures::tools());
        }
        tools.extend(std::iter::empty());
        tools
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerInfo {
        let caps = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .enable_skills()
            .build();
        ServerInfo::new(caps)
            .with_server_info(Implementation::new("toolsmith", env!("CARGO_PKG_VERSION")))
            .with_instructions("toolsmith stores tools in a git toolbox. Read the resource toolsmith://guide first. Find tools with list_tools / search_tools, inspect with get_tool, run with call_tool or by their own name.")
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        self.shared
            .hub
            .add_legacy(ctx.peer.clone(), Arc::clone(&self.session));
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Ok(mut l) = self.session.log_level.lock() {
            *l = Some(request.level);
        }
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let id = self.shared.hub.add_sink(context.sink().clone());
        context.cancelled().await;
        self.shared.hub.remove_sink(id);
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .map_err(|_| McpError::invalid_params(format!("invalid cursor {c:?}"), None))?,
        };
        let tools = self.all_tools();
        let total = tools.len();
        let page: Vec<Tool> = tools.into_iter().skip(start).take(PAGE).collect();
        let mut result = ListToolsResult::with_all_items(page);
        if start + PAGE < total {
            result.next_cursor = Some((start + PAGE).to_string());
        }
        self.shared.listed.send_replace(true);
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if let Some(t) = tools::definitions().into_iter().find(|t| t.name == name) {
            return Some(t);
        }
        if self.shared.fixtures
            && let Some(t) = fixtures::tools().into_iter().find(|t| t.name == name)
        {
            return Some(t);
        }
        let view = self.shared.app.view();
        view.get(name)
            .filter(|s| s.open().is_none_or(|o| o.tool().is_some()))
            .map(convert::mcp_tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let t_handler = std::time::Instant::now();
        // Long work runs as a task for clients that declared the tasks extension.
        // (Conformance fixtures, test-only, say their own.)
        let fixture = self
            .shared
            .fixtures
            .then(|| fixtures::task_support(&request))
            .flatten();
        let support = fixture.unwrap_or_else(|| tasks::support(&self.shared, &request));
        let as_task = match support {
            tasks::Support::Never => false,
            tasks::Support::Optional => tasks::opted_in(&ctx),
            tasks::Support::Required if tasks::opted_in(&ctx) => true,
            tasks::Support::Required => return Err(tasks::required_error()),
        };
        if as_task {
            // The task outlives its request: only tasks/cancel cancels it.
            ctx.ct = tokio_util::sync::CancellationToken::new();
        }
        let fixture_request =
            (self.shared.fixtures && fixtures::is_tool(&name)).then(|| request.clone());
        let args = request.arguments.unwrap_or_default();
        let mut host = self.host(&ctx);
        // 2026 clients: questions a script asks end the attempt with an input-required result.
        let rounds = if is_modern(&ctx) && !as_task {
            let r = super::rounds::Rounds::from_request(
                request.request_state.as_ref(),
                request.input_responses.as_ref(),
            )?;
            Some(Arc::new(r))
        } else {
            None
        };
        host.rounds = rounds.clone();
        let asked = move || -> Result<Option<CallToolResponse>, McpError> {
            match &rounds {
                Some(r) => Ok(r.input_required()?.map(Into::into)),
                None => Ok(None),
            }
        };
        let actor = self.actor(&ctx);
        let shared = Arc::clone(&self.shared);
        let ct = ctx.ct.clone();
        let notes = host.notes.clone();
        let make_work = move |task: Option<rmcp::task_manager::TaskContext>| async move {
            host.task = task.clone();
            if let Some(req) = fixture_request {
                return fixtures::call_request(&req, &ctx, &shared.hub, task.as_ref()).await;
            }
            if tools::is_meta(&name) {
                let tctx = tools::Ctx {
                    shared,
                    host,
                    actor,
                    request: ctx,
                };
                let r = tools::call(&name, args, tctx)
                    .await
                    .unwrap_or_else(|| tools::error_result("unknown meta-tool", None).into());
                return Ok(asked()?.unwrap_or(r));
            }
            if shared.app.index().get(&name).is_none() {
                // The model asked for a tool by name: tell it (isError), with likely names.
                return Ok(tools::core::unknown_tool(&shared, &name).into());
            }
            let out = tokio::select! {
                out = shared.app.call(&name, Value::Object(args), &host) => out,
                // A cancelled task: dropping the call kills the tool's process.
                _ = ctx.ct.cancelled() => {
                    return Err(McpError::internal_error("the call was cancelled", None));
                }
            };
            Ok(asked()?.unwrap_or_else(|| tools::call_result(out).into()))
        };
        if as_task {
            let label = request.name.to_string();
            return Ok(tasks::spawn(&self.shared.tasks, &label, ct, move |t| {
                make_work(Some(t))
            }));
        }
        let work = make_work(None);
        let r = tokio::select! {
            _ = ct.cancelled() => Err(McpError::internal_error("the call was cancelled", None)),
            r = work => r,
        };
        // The call's log and progress notifications go out before its result.
        notes.flush().await;
        tracing::debug!(tool = %request.name, took = ?t_handler.elapsed(), "tools/call answered");
        r
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        tasks::get(&self.shared.tasks, &request.task_id)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shared
            .tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shared.tasks.cancel_task(&request.task_id)
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let guide = Resource::new(GUIDE_URI, "guide")
            .with_description("How to use this toolbox: conventions and the current tools")
            .with_mime_type("text/markdown");
        let mut all = vec![guide, super::report::resource()];
        // Each imported Agent Skill's instructions (held ones are not among them).
        for s in guide::skills(&self.shared.app.view()) {
            all.push(
                Resource::new(
                    format!("{}{}", guide::SKILL_URI_PREFIX, s.name),
                    s.name.clone(),
                )
                .with_description(s.description)
                .with_mime_type("text/markdown"),
            );
        }
        // The same skills under the skills extension's scheme.
        all.extend(super::skills::resources(&self.shared));
        if self.shared.fixtures {
            all.extend(fixtures::resources());
        }
        Ok(ListResourcesResult::with_all_items(all))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let mut all = vec![
            ResourceTemplate::new(TOOL_URI_TEMPLATE, "tool")
                .with_description("A stored tool: its tool.toml and source")
                .with_mime_type("text/markdown"),
        ];
        if self.shared.fixtures {
            all.extend(fixtures::templates());
        }
        Ok(ListResourceTemplatesResult::with_all_items(all))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if self.shared.fixtures
            && let Some(r) = fixtures::read(&request.uri)
        {
            return Ok(r.into());
        }
        if let Some(r) = super::skills::read(&self.shared, &request.uri) {
            return Ok(r.into());
        }
        if request.uri == crate::health::URI {
            return super::report::read(&self.shared).await.map(Into::into);
        }
        match read_text(&self.shared, &request.uri) {
            Some((text, mime)) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text, request.uri.clone()).with_mime_type(mime),
            ])
            .into()),
            None => Err(McpError::resource_not_found(
                format!(
                    "no resource {}; try {GUIDE_URI} or {TOOL_URI_TEMPLATE}",
                    request.uri
                ),
                Some(json!({"uri": request.uri})),
            )),
        }
    }

    async fn list_skills(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        Ok(super::skills::list(&self.shared))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        super::skills::get(&self.shared, &request.uri)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Ok(mut s) = self.session.subscribed.lock() {
            s.insert(request.uri);
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Ok(mut s) = self.session.subscribed.lock() {
            s.remove(&request.uri);
        }
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let prefix = request.argument.value.as_str();
        let names = || -> Vec<String> {
            self.shared
                .app
                .index()
                .tools()
                .map(|t| t.manifest.name.clone())
                .filter(|n| n.starts_with(prefix))
                .collect()
        };
        let values = match &request.r#ref {
            Reference::Resource(r)
                if r.uri == TOOL_URI_TEMPLATE && request.argument.name == "name" =>
            {
                names()
            }
            Reference::Prompt(p) if p.name == "improve_tool" && request.argument.name == "name" => {
                names()
            }
            Reference::Prompt(p)
                if p.name == "create_tool" && request.argument.name == "language" =>
            {
                ["rust", "python", "node", "ruby", "bash", "perl", "php"]
                    .iter()
                    .filter(|l| l.starts_with(prefix))
                    .map(|s| s.to_string())
                    .collect()
            }
            _ => Vec::new(),
        };
        let total = values.len();
        let shown: Vec<String> = values
            .into_iter()
            .take(CompletionInfo::MAX_VALUES)
            .collect();
        let info = CompletionInfo::with_pagination(
            shown,
            Some(total as u32),
            total > CompletionInfo::MAX_VALUES,
        )
        .map_err(|e| McpError::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }

    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let mut all = vec![
            Prompt::new(
                "create_tool",
                Some("Write a new tool for this toolbox, following its conventions"),
                Some(vec![
                    PromptArgument::new("purpose").with_description("What the tool should do").with_required(true),
                    PromptArgument::new("language").with_description("rust (WebAssembly) or a script language: python, node, ruby, bash, perl, php"),
                ]),
            ),
            Prompt::new(
                "improve_tool",
                Some("Improve an existing tool: read it, change it, keep its examples passing"),
                Some(vec![
                    PromptArgument::new("name").with_description("The tool to improve").with_required(true),
                    PromptArgument::new("feedback").with_description("What is wrong or missing"),
                ]),
            ),
        ];
        if self.shared.fixtures {
            all.extend(fixtures::prompts());
        }
        Ok(ListPromptsResult::with_all_items(all))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if self.shared.fixtures
            && let Some(r) = fixtures::get_prompt_request(&request)
        {
            return r;
        }
        let args = request.arguments.unwrap_or_default();
        let arg = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
        let guide = super::guide(
            &self.shared.app.view(),
            &self.shared.app.toolbox,
            &self.shared.app.config().sandbox,
        );
        let text = match request.name.as_str() {
            "create_tool" => {
                let purpose = arg("purpose")
                    .ok_or_else(|| McpError::invalid_params("missing argument: purpose", None))?;
                let language = arg("language").unwrap_or_else(|| {
                    "the best fitting language (rust for pure computation)".into()
                });
                format!(
                    "Create a new toolsmith tool that does this: {purpose}\n\nUse {language}. First check with search_tools that no existing tool already does it. Give it a short snake_case name, a one-sentence description, an input_schema with a description on every property, an output_schema if the result is structured, honest annotations, and at least two [[examples]] (input → expected output). Then build it (build_tool for Rust, register_script for scripts) and call it once to check.\n\n{guide}"
                )
            }
            "improve_tool" => {
                let name = arg("name")
                    .ok_or_else(|| McpError::invalid_params("missing argument: name", None))?;
                let feedback = arg("feedback")
                    .unwrap_or_else(|| "make it more robust and better documented".into());
                let current = read_text(&self.shared, &format!("{TOOL_URI_PREFIX}{name}"))
                    .map(|(t, _)| t)
                    .ok_or_else(|| {
                        McpError::invalid_params(format!("there is no tool named {name:?}"), None)
                    })?;
                format!(
                    "Improve the toolsmith tool `{name}`: {feedback}\n\nHere is the tool now:\n\n{current}\nKeep its name and its existing examples passing unless the change requires otherwise; add an example for the new behaviour. Saving it again creates a new version in git; the old one stays in history.\n\n{guide}"
                )
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown prompt {other:?}; prompts: create_tool, improve_tool"),
                    None,
                ));
            }
        };
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(format!("toolsmith: {}", request.name))
                .into(),
        )
    }
}
