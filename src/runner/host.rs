//! What a running tool can ask of its caller: the MCP layer implements [`Host`] and routes each
//! request to the client; [`NoHost`] (the CLI, tests) refuses everything but logging.

use futures::future::BoxFuture;
use serde_json::Value;

/// Why the host refused or could not answer a request a tool made: a JSON-RPC error the tool
/// receives as the answer (its code named, not a bare number).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    pub code: HostCode,
    pub message: String,
}

/// The JSON-RPC error codes a host answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCode {
    /// -32602: the request's parameters are wrong.
    InvalidParams,
    /// -32601: the host does not offer this method here.
    MethodNotFound,
    /// -32603: the host failed while answering.
    Internal,
    /// -32000: the host refused, or what it asked on the tool's behalf failed.
    Refused,
    /// -32002: the resource asked for does not exist.
    ResourceNotFound,
}

impl HostCode {
    /// The JSON-RPC error code.
    pub fn number(self) -> i64 {
        match self {
            HostCode::InvalidParams => -32602,
            HostCode::MethodNotFound => -32601,
            HostCode::Internal => -32603,
            HostCode::Refused => -32000,
            HostCode::ResourceNotFound => -32002,
        }
    }
}

impl HostError {
    pub fn new(code: HostCode, message: impl Into<String>) -> HostError {
        HostError {
            code,
            message: message.into(),
        }
    }
}

/// What a running script can ask of the host. The MCP layer implements it and routes each
/// request to the client; `NoHost` refuses everything but logging.
pub trait Host: Send + Sync {
    /// A log line from the tool.
    fn log(&self, level: &str, message: &str);
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
    /// toolsmith's own question to the person (an approval, a secret page): an elicitation
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
