//! What a running tool can ask of its caller: the MCP layer implements [`Host`] and routes each
//! request to the client; [`NoHost`] (the CLI, tests) refuses everything but logging. A tool's
//! requests arrive as the script protocol's method names and are parsed once, where they
//! arrive, into a [`ToolRequest`]; every host matches on that, never on a name.

use crate::error::{HostCode, HostError};
use crate::memory::MemoryOp;
use futures::future::BoxFuture;
use serde_json::Value;

/// What a running tool asks of its host.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRequest {
    /// `tools/call`: another stored tool, by name.
    CallTool {
        /// The tool called.
        name: String,
        /// Its arguments (`{}` when the request has none).
        arguments: Value,
    },
    /// `resources/read`: one of toolsmith's resources.
    ReadResource {
        /// The resource's URI.
        uri: String,
    },
    /// `elicitation/create`: the tool's own question to the person (shown as the tool's).
    Question(Value),
    /// `sampling/createMessage`: a request for the client's model.
    Sample(Value),
    /// `memory/*`: the calling tool's memory (answered by the runner, which knows the tool).
    Memory(MemoryOp),
    /// A method toolsmith does not offer, by the name the tool sent.
    Unknown(String),
}

impl ToolRequest {
    /// The request the tool sent as `method` with `params`; bad params of a known method are
    /// refused here, as the host refuses them.
    pub fn parse(method: &str, params: Value) -> Result<ToolRequest, HostError> {
        let text = |field: &str| {
            params
                .get(field)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or(HostError::new(
                    HostCode::InvalidParams,
                    format!("{method} needs a string `{field}`"),
                ))
        };
        Ok(match method {
            "tools/call" => ToolRequest::CallTool {
                name: text("name")?,
                arguments: params
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({})),
            },
            "resources/read" => ToolRequest::ReadResource { uri: text("uri")? },
            "elicitation/create" => ToolRequest::Question(params),
            "sampling/createMessage" => ToolRequest::Sample(params),
            m if m.starts_with("memory/") => ToolRequest::Memory(MemoryOp::parse(m, params)?),
            other => ToolRequest::Unknown(other.to_string()),
        })
    }

    /// Its method's name in the script protocol (for messages).
    pub fn method(&self) -> &str {
        match self {
            ToolRequest::CallTool { .. } => "tools/call",
            ToolRequest::ReadResource { .. } => "resources/read",
            ToolRequest::Question(_) => "elicitation/create",
            ToolRequest::Sample(_) => "sampling/createMessage",
            ToolRequest::Memory(op) => op.method(),
            ToolRequest::Unknown(m) => m,
        }
    }

    /// Apply `redact` to every value and text the tool sends in it (arguments, a question, a
    /// prompt, a name, a URI, a memory key, value or prefix): what a host redacts secrets from
    /// before anything of it is kept, shown or passed on.
    pub fn redact_with(&mut self, redact: &mut dyn FnMut(&mut Value)) {
        match self {
            ToolRequest::CallTool { name, arguments } => {
                redact_text(name, redact);
                redact(arguments);
            }
            ToolRequest::ReadResource { uri } => redact_text(uri, redact),
            ToolRequest::Question(p) | ToolRequest::Sample(p) => redact(p),
            ToolRequest::Memory(op) => match op {
                MemoryOp::Get { key } | MemoryOp::Delete { key } => redact_text(key, redact),
                MemoryOp::Set { key, value } => {
                    redact_text(key, redact);
                    redact(value);
                }
                MemoryOp::List { prefix } => {
                    if let Some(p) = prefix {
                        redact_text(p, redact);
                    }
                }
            },
            ToolRequest::Unknown(method) => redact_text(method, redact),
        }
    }

    /// How a host that does not offer it refuses it.
    pub fn not_offered(&self) -> HostError {
        HostError::new(
            HostCode::MethodNotFound,
            format!("the host does not offer {} here", self.method()),
        )
    }
}

/// toolsmith's own question to the person (never a tool's: those are `ToolRequest::Question`),
/// asked through the one channel a host offers for it, `Host::ask_person`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    /// What names it among toolsmith's questions (a 2026 client answers it by this key on the
    /// call's retry).
    pub key: String,
    /// What the person is told.
    pub message: String,
    /// What the person does.
    pub wants: Wants,
}

/// What toolsmith's question wants of the person.
#[derive(Debug, Clone, PartialEq)]
pub enum Wants {
    /// To open a page of toolsmith's console (an elicitation in URL mode): `id` is the
    /// elicitation's, told to the client again when the person is done there.
    Page {
        /// The page.
        url: String,
        /// The elicitation's id.
        id: String,
    },
    /// To fill in a form: its JSON Schema (an object; no properties when there is only the
    /// choice to decline).
    Form(Value),
}

impl Ask {
    /// The question as MCP's `elicitation/create` params.
    pub fn elicitation(&self) -> Value {
        match &self.wants {
            Wants::Page { url, id } => serde_json::json!({
                "mode": "url", "message": self.message, "url": url, "elicitationId": id,
            }),
            Wants::Form(schema) => serde_json::json!({
                "mode": "form", "message": self.message, "requestedSchema": schema,
            }),
        }
    }
}

/// `redact` applied to a text (as a JSON string).
fn redact_text(text: &mut String, redact: &mut dyn FnMut(&mut Value)) {
    let mut v = Value::String(std::mem::take(text));
    redact(&mut v);
    *text = match v {
        Value::String(t) => t,
        other => other.to_string(),
    };
}

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
    /// A request from the tool (another tool, a resource, a question, a prompt): its result,
    /// or a JSON-RPC error (code, message). Refused by default.
    fn request(&self, request: ToolRequest) -> BoxFuture<'_, Result<Value, HostError>> {
        Box::pin(async move { Err(request.not_offered()) })
    }
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
    /// under the question's key, which a tool's requests cannot use; the answer as the client
    /// gave it (`action`, and `content` for a form). Refused by default.
    fn ask_person<'a>(&'a self, question: Ask) -> BoxFuture<'a, Result<Value, HostError>> {
        let _ = question;
        Box::pin(async move {
            Err(HostError::new(
                HostCode::MethodNotFound,
                "the host cannot ask the person here (no MCP client that offers elicitation)",
            ))
        })
    }
}

/// A host that logs through tracing and answers no requests.
pub struct NoHost;

impl Host for NoHost {
    fn log(&self, level: &str, message: &str) {
        tracing::info!(level, "tool: {message}");
    }
    fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn toolsmiths_question_is_an_elicitation_of_its_kind() {
        let page = Ask {
            key: "console-t".into(),
            message: "approve t there".into(),
            wants: Wants::Page {
                url: "http://127.0.0.1:1/approvals#tool-t".into(),
                id: "ab12".into(),
            },
        };
        assert_eq!(
            page.elicitation(),
            json!({"mode": "url", "message": "approve t there",
                "url": "http://127.0.0.1:1/approvals#tool-t", "elicitationId": "ab12"})
        );
        let form = Ask {
            key: "tell-t".into(),
            message: "m".into(),
            wants: Wants::Form(json!({"type": "object", "properties": {}})),
        };
        assert_eq!(
            form.elicitation(),
            json!({"mode": "form", "message": "m",
                "requestedSchema": {"type": "object", "properties": {}}})
        );
        let refused = futures::executor::block_on(NoHost.ask_person(form)).unwrap_err();
        assert_eq!(refused.code, HostCode::MethodNotFound);
    }

    #[test]
    fn a_tools_request_is_parsed_once_by_its_method() {
        let call = ToolRequest::parse("tools/call", json!({"name": "t"})).unwrap();
        assert_eq!(
            call,
            ToolRequest::CallTool {
                name: "t".into(),
                arguments: json!({})
            }
        );
        let bad = ToolRequest::parse("tools/call", json!({"arguments": {}})).unwrap_err();
        assert_eq!(bad.code, HostCode::InvalidParams);
        assert!(bad.message.contains("`name`"), "{bad:?}");
        let mem = ToolRequest::parse("memory/set", json!({"key": "k", "value": 1})).unwrap();
        assert_eq!(mem.method(), "memory/set");
        // Every text it sends is redacted: a memory key as much as another tool's arguments.
        let hide = &mut |v: &mut Value| {
            if let Some(s) = v.as_str() {
                *v = Value::String(s.replace("tok", "[secret T]"));
            } else if let Some(o) = v.as_object_mut() {
                for x in o.values_mut() {
                    if x.as_str() == Some("tok") {
                        *x = json!("[secret T]");
                    }
                }
            }
        };
        let mut set =
            ToolRequest::parse("memory/set", json!({"key": "tok", "value": "tok"})).unwrap();
        set.redact_with(hide);
        assert_eq!(
            set,
            ToolRequest::Memory(MemoryOp::Set {
                key: "[secret T]".into(),
                value: json!("[secret T]")
            })
        );
        let mut call = ToolRequest::parse(
            "tools/call",
            json!({"name": "tok", "arguments": {"a": "tok"}}),
        )
        .unwrap();
        call.redact_with(hide);
        assert_eq!(
            call,
            ToolRequest::CallTool {
                name: "[secret T]".into(),
                arguments: json!({"a": "[secret T]"})
            }
        );
        let other = ToolRequest::parse("roots/list", json!({})).unwrap();
        assert_eq!(other, ToolRequest::Unknown("roots/list".into()));
        let refused = futures::executor::block_on(NoHost.request(other)).unwrap_err();
        assert_eq!(refused.code, HostCode::MethodNotFound);
        assert!(refused.message.contains("roots/list"), "{refused:?}");
    }
}
