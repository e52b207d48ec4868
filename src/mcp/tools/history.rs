//! History meta-tools: `tool_history`, `diff_tool`, `rollback_tool`, `restore_tool`,
//! `undo_session` — their MCP definitions and what they do (through `crate::history`).

use super::Ctx;
use super::core::{error_result, json_result, required, str_arg};
use crate::history::{self, HistoryError};
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

/// Names of these meta-tools, in listing order.
pub const NAMES: &[&str] = &[
    "tool_history",
    "diff_tool",
    "rollback_tool",
    "restore_tool",
    "undo_session",
];

fn obj(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

fn annotations(
    title: &str,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(false)
}

/// The MCP definitions.
pub fn definitions() -> Vec<Tool> {
    let name = json!({"type": "string", "description": "Tool name"});
    let rev = |d: &str| json!({"type": "string", "description": d});
    vec![
        Tool::new("tool_history", "The versions of a stored tool, newest first: commit, date, actor (which client or person), session and message. Deleted tools keep their history.", obj(json!({
            "type": "object", "required": ["name"],
            "properties": {"name": name, "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Most versions to list (default 50)"}}
        }))).with_title("History of a tool").with_annotations(annotations("History of a tool", true, false, true)),
        Tool::new("diff_tool", "Unified diff of a tool's files between two revisions (commit ids from tool_history, unique prefixes, HEAD~N, branches or tags).", obj(json!({
            "type": "object", "required": ["name", "from"],
            "properties": {"name": name, "from": rev("The older revision"), "to": rev("The newer revision (default HEAD)")}
        }))).with_title("Diff a tool between revisions").with_annotations(annotations("Diff a tool between revisions", true, false, true)),
        Tool::new("rollback_tool", "Restore a tool as it was at a revision, as a NEW commit (history is never rewritten). A WASM artifact comes back from that commit, verified against the hash in its tool.toml; a script environment is rebuilt on the next call if its lockfile changed.", obj(json!({
            "type": "object", "required": ["name", "revision"],
            "properties": {"name": name, "revision": rev("The version to go back to (a commit from tool_history)")}
        }))).with_title("Roll a tool back").with_annotations(annotations("Roll a tool back", false, true, true)),
        Tool::new("restore_tool", "Bring back a deleted tool: from the last commit where it existed, or from a given revision. A new commit.", obj(json!({
            "type": "object", "required": ["name"],
            "properties": {"name": name, "revision": rev("Restore this version instead of the last one")}
        }))).with_title("Restore a deleted tool").with_annotations(annotations("Restore a deleted tool", false, false, true)),
        Tool::new("undo_session", "Revert every change one MCP session made to the toolbox (by default: this session), as ONE new commit. Refused, changing nothing, if someone changed one of those tools after the session.", obj(json!({
            "type": "object",
            "properties": {"session": {"type": "string", "description": "The session id (the `Session:` trailer of its commits); default: the calling session"}}
        }))).with_title("Undo a session's changes").with_annotations(annotations("Undo a session's changes", false, true, false)),
    ]
}

/// Run a history operation on a blocking thread; errors become results with a hint.
pub(crate) async fn blocking<T, E>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
    hint: fn(&E) -> Option<String>,
) -> Result<T, CallToolResult>
where
    T: Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(error_result(&e, hint(&e))),
        Err(e) => Err(error_result(format!("the operation failed: {e}"), None)),
    }
}

fn to_json(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Run one of these meta-tools. Returns None when `name` is not one of them.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    let r = match name {
        "tool_history" => tool_history(&ctx, &args).await,
        "diff_tool" => diff_tool(&ctx, &args).await,
        "rollback_tool" => rollback(&ctx, &args, false).await,
        "restore_tool" => rollback(&ctx, &args, true).await,
        "undo_session" => undo(&ctx, &args).await,
        _ => return None,
    };
    Some(r.unwrap_or_else(|e| e))
}

async fn tool_history(ctx: &Ctx, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let name = required(args, "name")?.to_string();
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(50)
        .clamp(1, 1000) as usize;
    let tb = ctx.shared.app.toolbox.clone();
    let n = name.clone();
    let versions = blocking(
        move || history::tool_history(&tb, &n, limit),
        HistoryError::hint,
    )
    .await?;
    if versions.is_empty() {
        return Err(error_result(
            format!("tool {name:?} has no history in this toolbox"),
            Some("`list_tools` shows the tools there are".into()),
        ));
    }
    let exists = ctx.shared.app.index().get(&name).is_some();
    Ok(json_result(
        json!({"name": name, "exists": exists, "versions": versions}),
    ))
}

async fn diff_tool(ctx: &Ctx, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let name = required(args, "name")?.to_string();
    let from = required(args, "from")?.to_string();
    let to = str_arg(args, "to").unwrap_or("HEAD").to_string();
    let tb = ctx.shared.app.toolbox.clone();
    let d = blocking(
        move || history::diff_tool(&tb, &name, &from, &to),
        HistoryError::hint,
    )
    .await?;
    Ok(json_result(to_json(d)))
}

async fn rollback(
    ctx: &Ctx,
    args: &JsonObject,
    restore: bool,
) -> Result<CallToolResult, CallToolResult> {
    let name = required(args, "name")?.to_string();
    let rev = if restore {
        str_arg(args, "revision").map(str::to_string)
    } else {
        Some(required(args, "revision")?.to_string())
    };
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let out = blocking(
        move || {
            if restore {
                history::restore_tool(&tb, &name, rev.as_deref(), &actor)
            } else {
                history::rollback_tool(&tb, &name, rev.as_deref().unwrap_or("HEAD"), &actor)
            }
        },
        HistoryError::hint,
    )
    .await?;
    ctx.changed();
    Ok(json_result(to_json(out)))
}

async fn undo(ctx: &Ctx, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let session = match str_arg(args, "session").or(ctx.actor.session.as_deref()) {
        Some(s) => s.to_string(),
        None => {
            let e = HistoryError::NoSession;
            return Err(error_result(&e, e.hint()));
        }
    };
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let out = blocking(
        move || history::undo_session(&tb, &session, &actor),
        HistoryError::hint,
    )
    .await?;
    ctx.changed();
    Ok(json_result(to_json(out)))
}

/// `get_tool` with a `revision`: the manifest and files of a tool as they were in that commit.
pub(crate) fn get_tool_at(
    shared: &crate::mcp::Shared,
    name: &str,
    rev: &str,
    args: &JsonObject,
) -> Result<CallToolResult, CallToolResult> {
    let include_source = args
        .get("include_source")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let at =
        history::tool_at(&shared.app.toolbox, name, rev).map_err(|e| error_result(&e, e.hint()))?;
    let mut v = json!({"name": name, "revision": rev, "commit": at.commit});
    match at.manifest_text().map(|t| {
        crate::manifest::parse(
            std::path::Path::new(crate::manifest::FILE_NAME),
            Some(name),
            t,
        )
    }) {
        Some(Ok(p)) => {
            let schema_file = |f: &Option<String>| {
                f.as_ref()
                    .and_then(|f| at.file(f))
                    .and_then(|f| serde_json::from_slice::<Value>(&f.bytes).ok())
            };
            v["status"] = json!("ok");
            v["kind"] = json!(p.manifest.kind);
            v["description"] = json!(p.manifest.description);
            v["input_schema"] = p
                .manifest
                .input_schema
                .clone()
                .map(Value::Object)
                .or_else(|| schema_file(&p.manifest.input_schema_file))
                .unwrap_or(Value::Null);
            v["manifest"] = to_json(&p.manifest);
        }
        Some(Err(d)) => {
            v["status"] = json!("broken");
            v["errors"] = json!(d.iter().map(|d| d.to_string()).collect::<Vec<_>>());
        }
        None => {
            v["status"] = json!("broken");
            v["errors"] = json!(["no UTF-8 tool.toml at this revision"]);
        }
    }
    if include_source {
        v["files"] = json!(
            at.files
                .iter()
                .map(|f| match std::str::from_utf8(&f.bytes) {
                    Ok(t) if f.bytes.len() <= 256 * 1024 => json!({"path": f.path, "text": t}),
                    _ => json!({"path": f.path, "bytes": f.bytes.len(), "sha256": crate::hashing::sha256_bytes(&f.bytes), "note": "binary or too large; not included"}),
                })
                .collect::<Vec<_>>()
        );
    }
    Ok(json_result(v))
}
