//! The `memory` meta-tool: read and change a stored tool's persistent key–value memory (the
//! same store scripts reach with `memory/get|set|list|delete`), and see how much is kept.

use super::Ctx;
use super::core::{error_result, json_result, required, str_arg};
use crate::memory::Memory;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

pub const NAMES: &[&str] = &["memory"];

/// The MCP definition.
pub fn definitions() -> Vec<Tool> {
    let Value::Object(schema) = json!({
        "type": "object",
        "required": ["action"],
        "properties": {
            "action": {"type": "string", "enum": ["store", "get", "list", "delete", "stats"], "description": "What to do"},
            "tool": {"type": "string", "description": "The tool whose memory this is (required except for stats)"},
            "key": {"type": "string", "description": "The key (store, get, delete)"},
            "value": {"description": "The JSON value to store (store)"},
            "prefix": {"type": "string", "description": "Only keys starting with this (list)"}
        }
    }) else {
        return Vec::new();
    };
    vec![
        Tool::new(
            "memory",
            "A stored tool's persistent key-value memory, kept outside git and surviving restarts: store / get / list / delete a key of one tool, or stats (keys and bytes per tool). Scripts use the same memory with memory/get|set|list|delete requests.",
            Arc::new(schema),
        )
        .with_title("Tool memory")
        .with_annotations(
            ToolAnnotations::with_title("Tool memory")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        ),
    ]
}

/// Run `memory`. None for other names.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    if name != "memory" {
        return None;
    }
    let mem = Memory::for_toolbox(ctx.shared.app.toolbox.root());
    let r = tokio::task::spawn_blocking(move || run(&mem, &args))
        .await
        .unwrap_or_else(|e| Err(error_result(e, None)));
    Some(r.unwrap_or_else(|e| e))
}

fn run(mem: &Memory, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let fail = |e: crate::memory::MemoryError| error_result(&e, e.hint());
    let action = required(args, "action")?;
    if action == "stats" {
        return Ok(json_result(mem.stats(str_arg(args, "tool")).map_err(fail)?));
    }
    let tool = required(args, "tool")?;
    let v = match action {
        "store" | "set" => {
            let key = required(args, "key")?;
            let value = args.get("value").cloned().ok_or_else(|| {
                error_result("`store` needs a `value`", Some("any JSON value".into()))
            })?;
            let previous = mem.set(tool, key, value).map_err(fail)?;
            json!({"tool": tool, "key": key, "stored": true, "previous": previous})
        }
        "get" => {
            let key = required(args, "key")?;
            let v = mem.get(tool, key).map_err(fail)?;
            json!({"tool": tool, "key": key, "found": v.is_some(), "value": v})
        }
        "delete" => {
            let key = required(args, "key")?;
            json!({"tool": tool, "key": key, "deleted": mem.delete(tool, key).map_err(fail)?})
        }
        "list" => {
            json!({"tool": tool, "keys": mem.list(tool, str_arg(args, "prefix")).map_err(fail)?})
        }
        other => {
            return Err(error_result(
                format!("unknown action {other:?}"),
                Some("use store, get, list, delete or stats".into()),
            ));
        }
    };
    Ok(json_result(v))
}
