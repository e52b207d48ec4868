//! The host side of the script protocol during an MCP call: a script's log and progress go
//! to the client; its requests are answered by the server (calling other tools) or refused
//! with a clear error where this build has no answer yet.
#![allow(deprecated)] // MCP logging is deprecated for 2026 (SEP-2577) but 2025 peers use it.

use super::Shared;
use crate::runner::script::Host;
use futures::future::BoxFuture;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use std::sync::Arc;

/// How deep tools may call tools.
pub const MAX_DEPTH: usize = 8;

pub struct McpHost {
    pub shared: Arc<Shared>,
    pub peer: Peer<RoleServer>,
    pub progress_token: Option<ProgressToken>,
    /// Log level threshold for this request; None sends no log messages.
    pub log_level: Option<LoggingLevel>,
    pub depth: usize,
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

impl Host for McpHost {
    fn log(&self, level: &str, message: &str) {
        let level = parse_level(level);
        let Some(threshold) = self.log_level else {
            return;
        };
        if rank(level) < rank(threshold) {
            return;
        }
        let peer = self.peer.clone();
        let param = LoggingMessageNotificationParam::new(level, Value::String(message.to_string()))
            .with_logger("toolsmith");
        tokio::spawn(async move {
            let _ = peer.notify_logging_message(param).await;
        });
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
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
        tokio::spawn(async move {
            let _ = peer.notify_progress(p).await;
        });
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, (i64, String)>> {
        Box::pin(async move {
            match method {
                "tools/call" => {
                    if self.depth >= MAX_DEPTH {
                        return Err((
                            -32000,
                            format!("tools may call tools at most {MAX_DEPTH} deep"),
                        ));
                    }
                    let name = params
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or((-32602, "tools/call needs a `name`".to_string()))?;
                    let args = params
                        .get("arguments")
                        .cloned()
                        .unwrap_or_else(|| json!({}));
                    let inner = McpHost {
                        shared: Arc::clone(&self.shared),
                        peer: self.peer.clone(),
                        progress_token: None,
                        log_level: self.log_level,
                        depth: self.depth + 1,
                    };
                    match self.shared.app.call(name, args, &inner).await {
                        Ok(out) => Ok(out.structured.unwrap_or(Value::String(out.text))),
                        Err(e) => Err((-32000, e.to_string())),
                    }
                }
                "resources/read" => {
                    let uri = params
                        .get("uri")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    match super::handler::read_text(&self.shared, uri) {
                        Some((text, _)) => Ok(json!({"uri": uri, "text": text})),
                        None => Err((-32002, format!("no resource {uri}"))),
                    }
                }
                other => Err((
                    -32601,
                    format!("the host does not offer {other:?} in this version of toolsmith"),
                )),
            }
        })
    }
}
