//! A server tool's `CallToolResult` as toolsmith's `CallOutput`: its text blocks as the text,
//! its structured content (or text that is JSON) as the structured result, other blocks
//! (images, audio, resources) passed on as they are; an `isError` result is the tool's error.

use crate::runner::{CallOutput, RunError};
use rmcp::model::CallToolResult;
use serde_json::Value;

/// The output of the call of `tool` (its toolsmith name), within `cap` bytes.
pub fn output(tool: &str, r: CallToolResult, cap: u64) -> Result<CallOutput, RunError> {
    let mut texts: Vec<String> = Vec::new();
    let mut content = Vec::new();
    for block in r.content {
        match block.as_text() {
            Some(t) => texts.push(t.text.clone()),
            None => content.extend(serde_json::to_value(&block).ok()),
        }
    }
    let text = texts.join("\n");
    let size = text.len()
        + content.iter().map(|c| c.to_string().len()).sum::<usize>()
        + r.structured_content
            .as_ref()
            .map_or(0, |v| v.to_string().len());
    if size as u64 > cap {
        return Err(RunError::OutputTooLarge {
            tool: tool.to_string(),
            bytes: cap,
        });
    }
    let structured = r.structured_content.or_else(|| {
        serde_json::from_str::<Value>(text.trim())
            .ok()
            .filter(|v| v.is_object() || v.is_array())
    });
    if r.is_error == Some(true) {
        return Err(RunError::ToolError {
            tool: tool.to_string(),
            message: if text.is_empty() {
                "it reported an error without a message".into()
            } else {
                text
            },
            data: structured,
        });
    }
    Ok(CallOutput {
        text,
        structured,
        logs: Vec::new(),
        warnings: Vec::new(),
        network: None,
        content,
        process: None,
    })
}
