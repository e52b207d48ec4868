//! One call's JSON-RPC conversation with a script (fresh process or warm worker): the request
//! line that carries the call, and answering the script's own requests (memory, the host's
//! methods) until its response arrives.

use super::CallOutput;
use super::host::{Host, ToolRequest};
use super::outcome::Ending;
use crate::error::{HostCode, HostError};
use crate::index::Tool;
use serde_json::{Value, json};
use std::path::PathBuf;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The JSON-RPC request that carries one call.
pub(crate) fn request_line(tool: &Tool, id: u64, args: &Value, roots: &[PathBuf]) -> String {
    let m = &tool.manifest;
    let mut line = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"arguments": args, "context": {"tool": m.name, "roots": roots, "capabilities": m.capabilities}},
    })
    .to_string();
    line.push('\n');
    line
}

/// One call's side of the JSON-RPC conversation: answers the script's requests until the
/// response to the call's id arrives.
pub(crate) struct Conversation<'a> {
    pub tool: &'a str,
    /// Where `memory/*` requests are answered (None outside a toolbox).
    pub memory: Option<&'a crate::memory::Memory>,
    pub host: &'a dyn Host,
    /// Most bytes the script may write on stdout during this call.
    pub cap: usize,
}

impl Conversation<'_> {
    async fn answer(&self, method: &str, params: Value) -> Result<Value, HostError> {
        let mut request = ToolRequest::parse(method, params)?;
        if matches!(request, ToolRequest::Memory(_)) {
            // What a tool stores is read back by the AI (the memory meta-tool): no secret in
            // it, neither in a value nor in a key.
            request.redact_with(&mut |v| self.host.redact(v));
        }
        match request {
            ToolRequest::Memory(op) => match self.memory {
                Some(mem) => {
                    let (mem, tool) = (mem.clone(), self.tool.to_string());
                    crate::platform::blocking(move || mem.answer(&tool, op))
                        .await
                        .unwrap_or_else(|e| Err(HostError::new(HostCode::Internal, e.to_string())))
                }
                None => Err(HostError::new(
                    HostCode::MethodNotFound,
                    "memory is only available to tools stored in a toolbox",
                )),
            },
            request => self.host.request(request).await,
        }
    }

    /// Read the script's messages until the response to `id`; `Ending::Eof` when stdout ends.
    pub(crate) async fn exchange(
        &self,
        stdin: &mut (impl tokio::io::AsyncWrite + Unpin),
        reader: &mut BufReader<impl tokio::io::AsyncRead + Unpin>,
        call_id: u64,
    ) -> Result<CallOutput, Ending> {
        let host = self.host;
        let mut total = 0usize;
        let mut buf = String::new();
        let mut logs = Vec::new();
        loop {
            buf.clear();
            let n = reader
                .read_line(&mut buf)
                .await
                .map_err(|e| Ending::Protocol(format!("reading stdout: {e}")))?;
            if n == 0 {
                return Err(Ending::Eof);
            }
            total += n;
            if total > self.cap {
                return Err(Ending::Overflow);
            }
            let text = buf.trim();
            if text.is_empty() {
                continue;
            }
            let msg: Value = match serde_json::from_str(text) {
                Ok(v) => v,
                Err(_) => {
                    // A stray print: keep it as a log line rather than failing the call.
                    host.log("info", text);
                    logs.push(text.to_string());
                    continue;
                }
            };
            let method = msg.get("method").and_then(Value::as_str);
            let id = msg.get("id").cloned();
            match (method, id) {
                (None, Some(id)) if id == json!(call_id) => {
                    if let Some(err) = msg.get("error") {
                        let message = err
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("unknown error")
                            .to_string();
                        return Err(Ending::ToolError(message, err.get("data").cloned()));
                    }
                    let result = msg.get("result").cloned().ok_or_else(|| {
                        Ending::Protocol(format!(
                            "the response to id {call_id} has neither result nor error"
                        ))
                    })?;
                    return Ok(CallOutput::from_value(result, logs));
                }
                (None, None) if msg.get("jsonrpc").is_none() => {
                    let shown: String = text.chars().take(200).collect();
                    return Err(Ending::Mismatch(format!(
                        "it printed {shown} instead of a JSON-RPC response"
                    )));
                }
                (None, _) => {
                    return Err(Ending::Protocol(format!("unexpected response {text}")));
                }
                (Some("log"), None) | (Some("notifications/message"), None) => {
                    let p = msg.get("params").cloned().unwrap_or(Value::Null);
                    let level = p.get("level").and_then(Value::as_str).unwrap_or("info");
                    let message = p
                        .get("message")
                        .or_else(|| p.get("data"))
                        .map(|v| {
                            v.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| v.to_string())
                        })
                        .unwrap_or_default();
                    host.log(level, &message);
                    logs.push(message);
                }
                (Some("progress"), None) | (Some("notifications/progress"), None) => {
                    let p = msg.get("params").cloned().unwrap_or(Value::Null);
                    let progress = p.get("progress").and_then(Value::as_f64).unwrap_or(0.0);
                    host.progress(
                        progress,
                        p.get("total").and_then(Value::as_f64),
                        p.get("message").and_then(Value::as_str).map(str::to_string),
                    );
                }
                (Some(_), None) => {} // unknown notification: ignored, as JSON-RPC allows
                (Some(method), Some(id)) => {
                    let params = msg.get("params").cloned().unwrap_or(Value::Null);
                    let reply = match self.answer(method, params).await {
                        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                        Err(e) => {
                            json!({"jsonrpc": "2.0", "id": id, "error": {"code": e.code.number(), "message": e.message}})
                        }
                    };
                    let mut line = reply.to_string();
                    line.push('\n');
                    stdin.write_all(line.as_bytes()).await.map_err(|e| {
                        Ending::Protocol(format!(
                            "the script closed stdin before the host answered {method}: {e}"
                        ))
                    })?;
                }
            }
        }
    }
}
