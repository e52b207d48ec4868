//! The core meta-tools: `list_tools`, `get_tool`, `search_tools`, `call_tool`, `delete_tool` —
//! their MCP definitions (schemas, annotations) and what they do.

use super::Ctx;
use crate::app::CallError;
use crate::index::{self, Status};
use crate::mcp::Shared;
use crate::runner::CallOutput;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

/// Names of the meta-tools, in listing order.
pub const NAMES: &[&str] = &[
    "list_tools",
    "get_tool",
    "search_tools",
    "call_tool",
    "delete_tool",
];

fn obj(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

fn titled_read_only(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false)
}

/// The MCP definitions of the meta-tools.
pub fn definitions() -> Vec<Tool> {
    let name_prop = json!({"type": "string", "description": "Tool name (lowercase letters, digits, '_' and '-')"});
    vec![
        Tool::new("list_tools", "List the stored tools: a compact table of contents (name, kind, one-line description). Filter by kind or tag; page with cursor.", obj(json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["wasm", "script", "pipeline"], "description": "Only tools of this kind"},
                "tag": {"type": "string", "description": "Only tools with this tag"},
                "cursor": {"type": "string", "description": "The next_cursor of a previous page"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Tools per page (default 100)"}
            }
        }))).with_title("List stored tools").with_annotations(titled_read_only("List stored tools")),
        Tool::new("get_tool", "Everything about one stored tool: manifest, input and output schema, source files, examples, current version (git commit).", obj(json!({
            "type": "object", "required": ["name"],
            "properties": {"name": name_prop, "include_source": {"type": "boolean", "description": "Include the source files (default true)"}, "revision": {"type": "string", "description": "Show the tool as it was at this revision (a commit from tool_history, HEAD~N, a branch or tag); default: as it is now"}}
        }))).with_title("Get a stored tool").with_annotations(titled_read_only("Get a stored tool")),
        Tool::new("search_tools", "Ranked keyword search over tool names, tags, descriptions and argument names.", obj(json!({
            "type": "object", "required": ["query"],
            "properties": {"query": {"type": "string", "description": "Keywords"}, "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Most results (default 10)"}}
        }))).with_title("Search stored tools").with_annotations(titled_read_only("Search stored tools")),
        Tool::new("call_tool", "Call any stored tool by name with arguments. Works even when your client has not refreshed its tool list.", obj(json!({
            "type": "object", "required": ["name"],
            "properties": {"name": name_prop, "arguments": {"type": "object", "description": "Arguments for the tool, matching its input schema", "additionalProperties": true}}
        }))).with_title("Call a stored tool").with_annotations(ToolAnnotations::with_title("Call a stored tool").read_only(false).destructive(false).idempotent(false).open_world(true)),
        Tool::new("delete_tool", "Delete a stored tool. This is a git commit: the tool's history is kept and it can be restored.", obj(json!({
            "type": "object", "required": ["name"], "properties": {"name": name_prop}
        }))).with_title("Delete a stored tool").with_annotations(ToolAnnotations::with_title("Delete a stored tool").read_only(false).destructive(true).idempotent(true).open_world(false)),
    ]
}

/// A failure the model should see, with what to do about it.
pub fn error_result(message: impl std::fmt::Display, hint: Option<String>) -> CallToolResult {
    let text = match hint {
        Some(h) => format!("{message}\nhint: {h}"),
        None => message.to_string(),
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
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
        Err(e) => error_result(&e, e.hint()),
    }
}

/// A string argument, if given.
pub fn str_arg<'a>(args: &'a JsonObject, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A required string argument, or an error result saying it is missing.
pub fn required<'a>(args: &'a JsonObject, key: &str) -> Result<&'a str, CallToolResult> {
    str_arg(args, key).ok_or_else(|| {
        error_result(
            format!("missing the string argument `{key}`"),
            Some("see the tool's input schema".into()),
        )
    })
}

/// Run a meta-tool. Returns None when `name` is not one.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    let shared = &ctx.shared;
    let r = match name {
        "list_tools" => list_tools(shared, &args),
        "get_tool" => get_tool(shared, &args),
        "search_tools" => search_tools(shared, &args),
        "call_tool" => call_tool(&ctx, &args).await,
        "delete_tool" => delete_tool(&ctx, &args).await,
        _ => return None,
    };
    Some(r.unwrap_or_else(|e| e))
}

fn list_tools(shared: &Shared, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let idx = shared.app.index();
    let kind = str_arg(args, "kind");
    let tag = str_arg(args, "tag");
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(100)
        .clamp(1, 1000) as usize;
    let start: usize = match str_arg(args, "cursor") {
        None => 0,
        Some(c) => c.parse().map_err(|_| {
            error_result(
                format!("invalid cursor {c:?}"),
                Some("pass the next_cursor of the previous page, or none".into()),
            )
        })?,
    };
    let all: Vec<_> = idx
        .tools()
        .filter(|t| kind.is_none_or(|k| t.manifest.kind.as_str() == k))
        .filter(|t| tag.is_none_or(|g| t.manifest.tags.iter().any(|x| x == g)))
        .collect();
    let page: Vec<Value> = all.iter().skip(start).take(limit).map(|t| json!({"name": t.manifest.name, "kind": t.manifest.kind, "description": t.manifest.summary()})).collect();
    let next = (start + limit < all.len()).then(|| (start + limit).to_string());
    let broken: Vec<Value> = idx
        .broken()
        .map(|e| json!({"name": e.name, "error": e.errors().first().map(|d| d.to_string())}))
        .collect();
    let mut v = json!({"tools": page, "total": all.len()});
    if let Some(n) = next {
        v["next_cursor"] = json!(n);
    }
    if !broken.is_empty() && start == 0 {
        v["broken"] = json!(broken);
    }
    Ok(json_result(v))
}

/// Text files of a tool directory (skipping binaries and ignored dirs), up to a size budget.
fn source_files(dir: &std::path::Path) -> Vec<Value> {
    const BUDGET: usize = 256 * 1024;
    let mut used = 0;
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !crate::hashing::IGNORED_NAMES.contains(&e.file_name().to_string_lossy().as_ref())
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let rel = e
            .path()
            .strip_prefix(dir)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        match std::fs::read(e.path()) {
            Ok(bytes) if std::str::from_utf8(&bytes).is_ok() && used + bytes.len() <= BUDGET => {
                used += bytes.len();
                out.push(json!({"path": rel, "text": String::from_utf8_lossy(&bytes)}));
            }
            Ok(bytes) => out.push(json!({"path": rel, "bytes": bytes.len(), "note": "binary or too large; not included"})),
            Err(_) => {}
        }
    }
    out
}

fn get_tool(shared: &Shared, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let name = required(args, "name")?;
    if let Some(rev) = str_arg(args, "revision") {
        return super::history::get_tool_at(shared, name, rev, args);
    }
    let idx = shared.app.index();
    let entry = idx.get(name).ok_or_else(|| {
        error_result(
            format!("there is no tool named {name:?}"),
            Some("`list_tools` or `search_tools` shows the tools there are".into()),
        )
    })?;
    let include_source = args
        .get("include_source")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let version = shared
        .app
        .toolbox
        .log(Some(name), 1)
        .ok()
        .and_then(|l| l.into_iter().next())
        .map(|c| json!({"commit": c.id, "time": c.time, "message": c.summary}));
    let mut v = match &entry.status {
        Status::Ok(t) => json!({
            "name": name,
            "status": "ok",
            "kind": t.manifest.kind,
            "description": t.manifest.description,
            "manifest": t.manifest,
            "input_schema": t.input_schema,
            "output_schema": t.output_schema,
            "examples": t.manifest.examples,
            "exposed_as_mcp_tool": shared.exposure.exposes(&idx, name),
            "sandbox": crate::runner::sandbox::describe_tool(&t.manifest),
            "warnings": t.warnings.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
        }),
        Status::Broken(d) => {
            json!({"name": name, "status": "broken", "errors": d.iter().map(|d| d.to_string()).collect::<Vec<_>>()})
        }
    };
    v["version"] = version.unwrap_or(Value::Null);
    if include_source {
        v["files"] = json!(source_files(&entry.dir));
    }
    Ok(json_result(v))
}

fn search_tools(shared: &Shared, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let query = required(args, "query")?;
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(10)
        .clamp(1, 100) as usize;
    let hits = index::search(&shared.app.index(), query, limit);
    Ok(json_result(json!({"query": query, "results": hits})))
}

async fn call_tool(ctx: &Ctx, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let name = required(args, "name")?;
    let arguments = match args.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(v) => v.clone(),
    };
    Ok(call_result(
        ctx.shared.app.call(name, arguments, &ctx.host).await,
    ))
}

async fn delete_tool(ctx: &Ctx, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let name = required(args, "name")?.to_string();
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let out = tokio::task::spawn_blocking(move || tb.delete_tool(&name, &actor))
        .await
        .map_err(|e| error_result(e, None))?
        .map_err(|e| error_result(&e, e.hint()))?;
    ctx.changed();
    Ok(json_result(
        json!({"deleted": out.name, "commit": out.commit, "restore": "the tool stays in git history"}),
    ))
}
