//! What a running tool can ask of its caller: the MCP layer implements [`Host`] and routes each
//! request to the client; [`NoHost`] (the CLI, tests) refuses everything but logging.

use crate::error::{HostCode, HostError};
use futures::future::BoxFuture;
use serde_json::Value;

/// What a running script can ask of the host. The MCP layer implements it and routes each
/// request to the client; `NoHost` refuses everything but logging.
pub trait Host: Send + Sync {
    /// A log line from the tool.
    fn log(&self, level: &str, message: &str);
    /// A log line from the stored tool `tool`, sent as that tool's (the MCP layer names the
    /// tool as the logger, never toolsmith). Default: `log`.
    fn tool_log(&self, tool: &str, level: &str, message: &str) {
        let _ = tool;
        self.log(level, message);
    }
    /// A progress report from the tool.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>);
    /// A request from the tool (`memory/get`, `tools/call`, ...): its result, or a JSON-RPC
    /// error (code, message).
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, HostError>>;
    /// Who makes the call (name, session), for the audit log; None when unknown.
    fn actor(&self) -> Option<(String, Option<String>)> {
        None
    }
    /// toolsmith tells the client that a URL-mode elicitation it asked for (`elicitation_id`)
    /// was completed out of band (the person submitted the page).
    fn elicitation_complete(&self, elicitation_id: &str) {
        let _ = elicitation_id;
    }
    /// Take secret values out of what a tool stores (a memory write): `[secret NAME]` instead.
    /// No-op for a host that knows no secrets.
    fn redact(&self, value: &mut Value) {
        let _ = value;
    }
    /// A tool's question to the person (`elicitation/create` from `tool`'s script), shown as
    /// the tool's, never as toolsmith's. Refused by default.
    fn tool_question<'a>(
        &'a self,
        tool: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, HostError>> {
        let _ = (tool, params);
        Box::pin(async move {
            Err(HostError::new(
                HostCode::MethodNotFound,
                "the host does not offer elicitation/create here",
            ))
        })
    }
    /// toolsmith's own question to the person (an approval, a missing secret): an elicitation
    /// under a `key` of its own, which a tool's requests (always `request`) cannot use.
    fn ask_person<'a>(
        &'a self,
        key: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, HostError>> {
        let _ = key;
        self.request("elicitation/create", params)
    }
}

/// A host that logs through tracing and answers no requests.
pub struct NoHost;

impl Host for NoHost {
    fn log(&self, level: &str, message: &str) {
        tracing::info!(level, "tool: {message}");
    }
    fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}
    fn request<'a>(&'a self, method: &'a str, _: Value) -> BoxFuture<'a, Result<Value, HostError>> {
        Box::pin(async move {
            Err(HostError::new(
                HostCode::MethodNotFound,
                format!("the host does not offer {method} here"),
            ))
        })
    }
}
