//! What every meta-tool answers with: a failure the model should see (with a hint), a JSON
//! result whose text equals its structured content, and a stored tool's call result.

use crate::app::CallError;
use crate::error::Hint;
use crate::runner::CallOutput;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// A failure the model should see, with what to do about it.
pub fn error_result(message: impl std::fmt::Display, hint: Option<String>) -> CallToolResult {
    let text = match hint {
        Some(h) => format!("{message}\nhint: {h}"),
        None => message.to_string(),
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A failure from an error: its message with every cause (see `crate::error::chain`).
pub fn failure(e: &(dyn std::error::Error + 'static), hint: Option<String>) -> CallToolResult {
    error_result(crate::error::chain(e), hint)
}

/// A JSON result: structured content plus the same JSON as text.
pub fn json_result(v: Value) -> CallToolResult {
    let text = serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string());
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(v);
    r
}

/// The MCP result of a stored tool's call.
pub fn call_result(out: Result<CallOutput, CallError>) -> CallToolResult {
    match out {
        Ok(o) => {
            let mut blocks = vec![ContentBlock::text(o.text)];
            // An MCP server's images, audio and resources, as it returned them.
            blocks.extend(
                o.content
                    .into_iter()
                    .filter_map(|c| serde_json::from_value::<ContentBlock>(c).ok()),
            );
            blocks.extend(
                o.warnings
                    .iter()
                    .map(|w| ContentBlock::text(format!("warning: {w}"))),
            );
            let mut r = CallToolResult::success(blocks);
            // MCP structured content must be an object; other JSON stays text.
            if let Some(v @ Value::Object(_)) = o.structured {
                r.structured_content = Some(v);
            }
            r
        }
        Err(e) => failure(&e, e.hint()),
    }
}
