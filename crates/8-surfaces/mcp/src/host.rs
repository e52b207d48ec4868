//! The host side of the script protocol during an MCP call: a script's log and progress go
//! to the client; its requests are answered by the server (other tools, resources) or routed to
//! the client (elicitation, sampling — 2025 sessions only), or refused with a clear error.
//! (`memory/*` is answered by the script runner, which knows the calling tool.)
#![allow(deprecated)] // MCP logging is deprecated for 2026 (SEP-2577) but 2025 peers use it.

use super::Shared;
use crate::error::{HostCode, HostError};
use crate::runner::script::{Ask, Host, ToolRequest};
use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, SamplingMessage,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use std::sync::Arc;

/// What a script sees when its question goes to a 2026 client: the call ends here and is
/// retried by the client with the answer.
const INPUT_REQUIRED: &str =
    "input required: the question was sent to the MCP client, which answers by retrying the call";

/// How deep tools may call tools.
pub const MAX_DEPTH: usize = 8;

pub struct McpHost {
    pub shared: Arc<Shared>,
    pub peer: Peer<RoleServer>,
    pub progress_token: Option<ProgressToken>,
    /// Log level threshold for this request; None sends no log messages.
    pub log_level: Option<LoggingLevel>,
    pub depth: usize,
    /// For 2026-07-28 clients: answers known so far and the question this attempt ends with.
    pub rounds: Option<Arc<super::rounds::Rounds>>,
    /// When the call runs as an MCP task: progress also becomes the task's status message.
    pub task: Option<rmcp::task_manager::TaskContext>,
    /// The call's log and progress notifications, sent in order before its result.
    pub notes: Notes,
    /// Who makes the call (for the audit log).
    pub actor: Option<crate::toolbox::Actor>,
    /// Whether the client declared elicitation (for this request, in the 2026 era).
    pub elicitation: bool,
}

/// Notifications of one call, delivered in the order they were made; `flush` waits until all
/// are handed to the transport, so they reach the client before the call's result.
#[derive(Clone, Default)]
pub struct Notes(Arc<std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>>);

impl Notes {
    /// Send after every notification queued before it.
    pub fn send(&self, note: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let previous = last.take();
        *last = Some(tokio::spawn(async move {
            if let Some(p) = previous {
                let _ = p.await;
            }
            note.await;
        }));
    }

    /// Wait until every queued notification was sent.
    pub async fn flush(&self) {
        let last = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = last {
            let _ = h.await;
        }
    }
}

pub fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

pub fn parse_level(s: &str) -> LoggingLevel {
    match s.to_ascii_lowercase().as_str() {
        "debug" | "trace" => LoggingLevel::Debug,
        "notice" => LoggingLevel::Notice,
        "warn" | "warning" => LoggingLevel::Warning,
        "error" => LoggingLevel::Error,
        "critical" => LoggingLevel::Critical,
        "alert" => LoggingLevel::Alert,
        "emergency" => LoggingLevel::Emergency,
        _ => LoggingLevel::Info,
    }
}

/// Why a server→client request cannot be made on this peer, if it cannot.
fn refuse_modern(peer: &Peer<RoleServer>, what: &str) -> Option<HostError> {
    let info = peer.peer_info();
    let modern = info
        .as_ref()
        .is_none_or(|i| !i.protocol_version.has_initialize());
    modern.then(|| {
        HostError::new(
            HostCode::Refused,
            format!(
                "{what} from a script needs an MCP client session of protocol 2025-11-25 or older: \
                 this client speaks 2026-07-28, where a server may not send requests to the client \
                 during a call (it would have to return an input-required result and re-run the \
                 script, which toolsmith does not do yet). Connect with a 2025 session (e.g. the \
                 Python SDK's mode=\"legacy\"), or give the tool its input as arguments."
            ),
        )
    })
}

impl McpHost {
    /// `elicitation/create`: ask the user through the client (2025 sessions).
    async fn elicit(&self, params: Value) -> Result<Value, HostError> {
        if let Some(e) = refuse_modern(&self.peer, "elicitation") {
            let Some(rounds) = &self.rounds else {
                return Err(e);
            };
            if !self.elicitation {
                return Err(HostError::new(
                    HostCode::Refused,
                    "the MCP client does not support elicitation (it declared no elicitation capability)",
                ));
            }
            // 2026: the answer comes back on a retry of the whole call.
            let mut p = params.clone();
            if p.get("mode").is_none() {
                p["mode"] = json!("form");
            }
            return rounds
                .ask(json!({"method": "elicitation/create", "params": p}))
                .ok_or(HostError::new(
                    HostCode::Refused,
                    INPUT_REQUIRED.to_string(),
                ));
        }
        if self
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.elicitation.is_none())
        {
            return Err(HostError::new(
                HostCode::Refused,
                "the MCP client does not support elicitation (it declared no elicitation capability)",
            ));
        }
        let p: ElicitRequestParams = serde_json::from_value(params).map_err(|e| {
            HostError::new(HostCode::InvalidParams, format!("elicitation/create needs {{\"message\": string, \"requestedSchema\": object schema with primitive properties}}: {e}"))
        })?;
        // Awaited inside the call's own task: rmcp routes the request to the right stream.
        let r =
            self.peer.create_elicitation(p).await.map_err(|e| {
                HostError::new(HostCode::Refused, format!("elicitation failed: {e}"))
            })?;
        serde_json::to_value(r).map_err(|e| HostError::new(HostCode::Internal, e.to_string()))
    }

    /// `sampling/createMessage`: ask the client's model (2025 sessions). Accepts the MCP
    /// params, or the short form `{"prompt": "...", "maxTokens": 200, "systemPrompt": "..."}`.
    async fn sample(&self, params: Value) -> Result<Value, HostError> {
        if let Some(e) = refuse_modern(&self.peer, "sampling") {
            let Some(rounds) = &self.rounds else {
                return Err(e);
            };
            let p = match params.get("prompt").and_then(Value::as_str) {
                Some(prompt) => {
                    let mut p = json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                        "maxTokens": params.get("maxTokens").and_then(Value::as_u64).unwrap_or(500)});
                    if let Some(sys) = params.get("systemPrompt") {
                        p["systemPrompt"] = sys.clone();
                    }
                    p
                }
                None => params.clone(),
            };
            let mut answer = rounds
                .ask(json!({"method": "sampling/createMessage", "params": p}))
                .ok_or(HostError::new(
                    HostCode::Refused,
                    INPUT_REQUIRED.to_string(),
                ))?;
            // The same shape as a 2025 answer: the CreateMessageResult plus its text.
            let text = answer["content"]["text"]
                .as_str()
                .map(str::to_string)
                .or_else(|| {
                    answer["content"].as_array().and_then(|a| {
                        a.iter()
                            .find_map(|c| c["text"].as_str().map(str::to_string))
                    })
                });
            answer["text"] = text.map(Value::String).unwrap_or(Value::Null);
            return Ok(answer);
        }
        if self
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.sampling.is_none())
        {
            return Err(HostError::new(
                HostCode::Refused,
                "the MCP client does not support sampling (it declared no sampling capability)",
            ));
        }
        let p: CreateMessageRequestParams = match params.get("prompt").and_then(Value::as_str) {
            Some(prompt) => {
                let max = params.get("maxTokens").and_then(Value::as_u64).unwrap_or(500) as u32;
                let mut p = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], max);
                if let Some(sys) = params.get("systemPrompt").and_then(Value::as_str) {
                    p.system_prompt = Some(sys.to_string());
                }
                p
            }
            None => serde_json::from_value(params).map_err(|e| {
                HostError::new(HostCode::InvalidParams, format!("sampling/createMessage needs {{\"prompt\": string}} or MCP CreateMessageRequest params: {e}"))
            })?,
        };
        let r = self
            .peer
            .create_message(p)
            .await
            .map_err(|e| HostError::new(HostCode::Refused, format!("sampling failed: {e}")))?;
        let text = r
            .message
            .content
            .first()
            .and_then(|b| b.as_text())
            .map(|t| t.text.clone());
        let mut v = serde_json::to_value(r)
            .map_err(|e| HostError::new(HostCode::Internal, e.to_string()))?;
        v["text"] = text.map(Value::String).unwrap_or(Value::Null);
        Ok(v)
    }
}

impl McpHost {
    /// A `notifications/message` from `logger`, at or above the client's level.
    fn send_log(&self, logger: &str, level: &str, message: &str) {
        let level = parse_level(level);
        let Some(threshold) = self.log_level else {
            return;
        };
        if rank(level) < rank(threshold) {
            return;
        }
        let peer = self.peer.clone();
        let param = LoggingMessageNotificationParam::new(level, Value::String(message.to_string()))
            .with_logger(logger);
        self.notes.send(async move {
            let _ = peer.notify_logging_message(param).await;
        });
    }
}

impl Host for McpHost {
    fn ask_person<'a>(&'a self, question: Ask) -> BoxFuture<'a, Result<Value, HostError>> {
        Box::pin(async move {
            let (key, params) = (&question.key, question.elicitation());
            match &self.rounds {
                Some(rounds) if refuse_modern(&self.peer, "elicitation").is_some() => {
                    if !self.elicitation {
                        return Err(HostError::new(
                            HostCode::Refused,
                            "the MCP client does not support elicitation",
                        ));
                    }
                    rounds
                        .ask_keyed(
                            &format!("toolsmith-{key}"),
                            json!({"method": "elicitation/create", "params": params}),
                        )
                        .ok_or(HostError::new(
                            HostCode::Refused,
                            INPUT_REQUIRED.to_string(),
                        ))
                }
                _ => self.elicit(params).await,
            }
        })
    }

    fn tool_question<'a>(
        &'a self,
        tool: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, HostError>> {
        Box::pin(async move {
            let vetted = super::tool_asks::vet(tool, params)?;
            self.elicit(vetted).await
        })
    }

    fn actor(&self) -> Option<(String, Option<String>)> {
        self.actor
            .as_ref()
            .map(|a| (a.name.clone(), a.session.clone()))
    }

    fn log(&self, level: &str, message: &str) {
        self.send_log("toolsmith", level, message);
    }

    fn tool_log(&self, tool: &str, level: &str, message: &str) {
        // A tool's words are labelled as its own: it cannot speak as toolsmith here either.
        self.send_log(&format!("tool {tool}"), level, message);
    }

    fn elicitation_complete(&self, elicitation_id: &str) {
        let peer = self.peer.clone();
        let note = rmcp::model::CustomNotification::new(
            "notifications/elicitation/complete",
            Some(json!({ "elicitationId": elicitation_id })),
        );
        self.notes.send(async move {
            let _ = peer
                .send_notification(rmcp::model::ServerNotification::CustomNotification(note))
                .await;
        });
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(task) = &self.task {
            task.set_status_message(match (&message, total) {
                (Some(m), _) => m.clone(),
                (None, Some(t)) => format!("{progress}/{t}"),
                (None, None) => format!("{progress}"),
            });
        }
        let Some(token) = self.progress_token.clone() else {
            return;
        };
        let mut p = ProgressNotificationParam::new(token, progress);
        if let Some(t) = total {
            p = p.with_total(t);
        }
        if let Some(m) = message {
            p = p.with_message(m);
        }
        let peer = self.peer.clone();
        self.notes.send(async move {
            let _ = peer.notify_progress(p).await;
        });
    }

    fn request(&self, request: ToolRequest) -> BoxFuture<'_, Result<Value, HostError>> {
        Box::pin(async move {
            match request {
                ToolRequest::CallTool { name, arguments } => {
                    if self.depth >= MAX_DEPTH {
                        return Err(HostError::new(
                            HostCode::Refused,
                            format!("tools may call tools at most {MAX_DEPTH} deep"),
                        ));
                    }
                    let inner = McpHost {
                        shared: Arc::clone(&self.shared),
                        peer: self.peer.clone(),
                        progress_token: None,
                        log_level: self.log_level,
                        depth: self.depth + 1,
                        rounds: self.rounds.clone(),
                        task: None,
                        notes: self.notes.clone(),
                        actor: self.actor.clone(),
                        elicitation: self.elicitation,
                    };
                    self.shared.app.call_for_script(&name, arguments, &inner).await
                }
                ToolRequest::ReadResource { uri } => {
                    match super::resources::read_text(&self.shared, &uri) {
                        Some((text, _)) => Ok(json!({"uri": uri, "text": text})),
                        None => Err(HostError::new(HostCode::ResourceNotFound, format!("no resource {uri}"))),
                    }
                }
                // Reached without a tool's name (every stored tool's requests come through the
                // approval gate's host, which names it): labelled all the same.
                ToolRequest::Question(params) => self.tool_question("(unnamed)", params).await,
                ToolRequest::Sample(params) => self.sample(params).await,
                ToolRequest::Memory(_) => Err(HostError::new(
                    HostCode::MethodNotFound,
                    "memory is answered by the script runner for stored tools; this call has no tool to keep memory for".to_string(),
                )),
                request @ ToolRequest::Unknown(_) => Err(HostError::new(
                    HostCode::MethodNotFound,
                    format!("the host does not offer {:?} in this version of toolsmith", request.method()),
                )),
            }
        })
    }
}
