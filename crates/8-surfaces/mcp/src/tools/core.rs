//! The core meta-tools: `list_tools`, `get_tool`, `search_tools`, `call_tool`, `delete_tool` —
//! their MCP definitions (schemas, annotations) and what they do.

use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{call_result, error_result, failure, json_result};
use super::{Ctx, args};
use crate::Shared;
use crate::error::Hint;
use crate::index::Status;
use crate::manifest::Kind;
use crate::trust::Shown;
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Map;
use serde_json::{Value, json};

/// `list_tools` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    pub kind: Option<Kind>,
    pub tag: Option<String>,
    pub cursor: Option<String>,
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

/// `get_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    pub name: String,
    pub include_source: Option<bool>,
    pub revision: Option<String>,
}

/// `search_tools` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What the tool should do, in your own words, or (part of) its name
    pub query: String,
    /// How many results (default 10)
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// `call_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallArgs {
    pub name: String,
    pub arguments: Option<Map<String, Value>>,
}

/// `delete_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NameArgs {
    pub name: String,
}

/// `list_tools`.
pub struct ListTools;
impl MetaTool for ListTools {
    const NAME: &'static str = "list_tools";
    const DESCRIPTION: &'static str = "Stored tools (name, kind, summary), by kind or tag.";
    const RESULT: &'static [&'static str] = &["tools", "total", "next_cursor"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("tools", Ty::Arr), ("total", Ty::Int)];
    const HINTS: Hints = Hints::READ;
    type Args = ListArgs;
    async fn call(a: ListArgs, ctx: Ctx) -> Reply {
        list_tools(&ctx.shared, a)
    }
}

/// `get_tool`.
pub struct GetTool;
impl MetaTool for GetTool {
    const NAME: &'static str = "get_tool";
    const DESCRIPTION: &'static str = "One tool: manifest, schemas, version, files.";
    const DETAILS: &'static str =
        "`include_source`: the files' text too; `revision`: as it was at that revision.";
    const RESULT: &'static [&'static str] =
        &["name", "status", "kind", "protocol", "manifest", "files"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[
        ("name", Ty::Str),
        ("status", Ty::Str),
        ("kind", Ty::Str),
        ("manifest", Ty::Obj),
    ];
    const HINTS: Hints = Hints::READ;
    type Args = GetArgs;
    async fn call(a: GetArgs, ctx: Ctx) -> Reply {
        get_tool(&ctx.shared, a)
    }
}

/// `search_tools`.
pub struct SearchTools;
impl MetaTool for SearchTools {
    const NAME: &'static str = "search_tools";
    const DESCRIPTION: &'static str = "Find tools by what they do or by name; results say why.";
    const RESULT: &'static [&'static str] = &["query", "results", "ranking", "notice"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("results", Ty::Arr), ("ranking", Ty::Str)];
    const HINTS: Hints = Hints::READ;
    type Args = SearchArgs;
    async fn call(a: SearchArgs, ctx: Ctx) -> Reply {
        search_tools(&ctx, a).await
    }
}

/// `call_tool`.
pub struct CallTool;
impl MetaTool for CallTool {
    const NAME: &'static str = "call_tool";
    const DESCRIPTION: &'static str = "Call any stored tool, listed or not.";
    const RESULT: &'static [&'static str] = &[];
    const HINTS: Hints = Hints::WRITE.open_world();
    type Args = CallArgs;
    async fn call(a: CallArgs, ctx: Ctx) -> Reply {
        call_tool(&ctx, a).await
    }
}

/// `delete_tool`.
pub struct DeleteTool;
impl MetaTool for DeleteTool {
    const NAME: &'static str = "delete_tool";
    const DESCRIPTION: &'static str = "Delete a tool (restore_tool undoes it).";
    const RESULT: &'static [&'static str] = &["deleted", "commit"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("deleted", Ty::Str)];
    const HINTS: Hints = Hints::WRITE.destructive().idempotent();
    type Args = NameArgs;
    async fn call(a: NameArgs, ctx: Ctx) -> Reply {
        delete_tool(&ctx, a).await
    }
}

/// The error for a name that is no stored tool, with the likely intended ones.
pub fn unknown_tool(shared: &Shared, name: &str) -> CallToolResult {
    let idx = shared.app.index();
    let names: Vec<&str> = idx.tools().map(|t| t.manifest.name.as_str()).collect();
    let mut close: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| args::closest(name, [*n]).is_some())
        .collect();
    close.sort_by(|a, b| strsim::jaro_winkler(name, b).total_cmp(&strsim::jaro_winkler(name, a)));
    close.truncate(3);
    let deleted = shared
        .app
        .toolbox
        .log(Some(name), 1)
        .ok()
        .is_some_and(|l| !l.is_empty());
    let mut msg = format!("there is no tool named {name:?}");
    if deleted {
        msg.push_str(" (it was deleted; its history is kept)");
    }
    if !close.is_empty() {
        msg.push_str(&format!(
            "; did you mean {}?",
            close
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    let hint = if deleted {
        format!(
            "`restore_tool` with name {name:?} brings it back; `list_tools` or `search_tools` shows the tools there are"
        )
    } else {
        "`list_tools` or `search_tools` shows the tools there are".into()
    };
    error_result(msg, Some(hint))
}

fn list_tools(shared: &Shared, a: ListArgs) -> Result<CallToolResult, CallToolResult> {
    let view = shared.app.view();
    let limit = a.limit.unwrap_or(100).clamp(1, 1000) as usize;
    let start: usize = match a.cursor.as_deref() {
        None => 0,
        Some(c) => c.parse().map_err(|_| {
            error_result(
                format!("invalid cursor {c:?}"),
                Some("pass the next_cursor of the previous page, or none".into()),
            )
        })?,
    };
    // A held tool is listed by name only (and only when no filter asks what it holds).
    let unfiltered = a.kind.is_none() && a.tag.is_none();
    let all: Vec<Value> = view
        .tools()
        .filter_map(|s| match s.open() {
            None => unfiltered.then(|| {
                let Shown::Held(w) = s else { return Value::Null };
                json!({"name": w.name(), "kind": "held", "description": w.note()})
            }),
            Some(o) => {
                let t = o.tool()?;
                let shown = a.kind.is_none_or(|k| t.manifest.kind == k)
                    && a.tag
                        .as_deref()
                        .is_none_or(|g| t.manifest.tags.iter().any(|x| x == g));
                shown.then(|| json!({"name": t.manifest.name, "kind": t.manifest.kind, "description": t.manifest.summary()}))
            }
        })
        .collect();
    let page: Vec<Value> = all.iter().skip(start).take(limit).cloned().collect();
    let next = (start + limit < all.len()).then(|| (start + limit).to_string());
    let broken: Vec<Value> = view
        .broken()
        .map(|o| o.entry())
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
    for e in crate::hashing::walk_tool_dir(dir)
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

fn get_tool(shared: &Shared, a: GetArgs) -> Result<CallToolResult, CallToolResult> {
    let name = a.name.as_str();
    let include_source = a.include_source.unwrap_or(false);
    if let Some(rev) = a.revision.as_deref() {
        return super::history::get_tool_at(shared, name, rev, include_source);
    }
    let view = shared.app.view();
    let entry = match view.get(name).ok_or_else(|| unknown_tool(shared, name))? {
        Shown::Open(o) => o.entry(),
        // Held: its name, who brought it and why; nothing of its content.
        Shown::Held(w) => return Ok(json_result(w.json())),
    };
    let idx = shared.app.index();
    let version = shared
        .app
        .toolbox
        .log(Some(name), 1)
        .ok()
        .and_then(|l| l.into_iter().next())
        .map(|c| json!({"commit": c.id, "time": c.time, "message": c.summary}));
    // A tool of an MCP entry's server is verified, trusted and approved as its entry.
    let entry_tool = entry
        .tool()
        .and_then(|t| t.upstream.as_ref())
        .and_then(|u| idx.tool(&u.entry));
    let mut v = match &entry.status {
        Status::Ok(t) => json!({
            "name": name,
            "status": "ok",
            "kind": t.manifest.kind,
            "description": t.manifest.description,
            "protocol": (t.manifest.kind == crate::manifest::Kind::Script).then(|| t.manifest.protocol()),
            "manifest": t.manifest,
            "input_schema": t.input_schema,
            "output_schema": t.output_schema,
            "examples": t.manifest.examples,
            "exposed_as_mcp_tool": shared.exposure.exposes(&idx, &shared.app.usage(), name),
            "sandbox": crate::sandbox::describe_tool(&t.manifest, &shared.app.config().sandbox),
            "builds": crate::sandbox::describe_builds(&shared.app.config().sandbox),
            "approval": crate::approval::describe(&shared.app.gate(), entry_tool.unwrap_or(t)),
            "references": crate::approval::references::describe(&shared.app.gate(), name),
            "warnings": t.warnings.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
        }),
        Status::Broken(d) => {
            json!({"name": name, "status": "broken", "errors": d.iter().map(|d| d.to_string()).collect::<Vec<_>>()})
        }
    };
    v["version"] = version.unwrap_or(Value::Null);
    if let Some(t) = entry.tool() {
        super::servers::describe(shared, t, &mut v);
    }
    let files = source_files(&entry.dir);
    v["files"] = if include_source {
        json!(files)
    } else {
        // A summary: paths and sizes; the text comes with include_source.
        json!(files.iter().map(|f| json!({"path": f["path"], "bytes": f.get("text").and_then(Value::as_str).map_or_else(|| f["bytes"].clone(), |t| json!(t.len()))})).collect::<Vec<_>>())
    };
    Ok(json_result(v))
}

async fn search_tools(ctx: &Ctx, a: SearchArgs) -> Result<CallToolResult, CallToolResult> {
    let limit = a.limit.unwrap_or(10).clamp(1, 100) as usize;
    let shared = std::sync::Arc::clone(&ctx.shared);
    let query = a.query.clone();
    // Off the async threads: a configured endpoint is a blocking HTTP request.
    let found = crate::platform::blocking(move || shared.app.search(&query, limit))
        .await
        .map_err(|e| error_result(e, None))?;
    let mut v = json!({"query": a.query, "results": found.results, "ranking": found.ranking});
    if let Some(n) = found.notice {
        v["notice"] = json!(n);
    }
    Ok(json_result(v))
}

async fn call_tool(ctx: &Ctx, a: CallArgs) -> Result<CallToolResult, CallToolResult> {
    let name = a.name.as_str();
    if ctx.shared.app.index().get(name).is_none() {
        return Err(unknown_tool(&ctx.shared, name));
    }
    let arguments = Value::Object(a.arguments.unwrap_or_default());
    let mut r = call_result(ctx.shared.app.call(name, arguments, &ctx.host).await);
    // call_tool has an output schema (an object), so a result always carries one: the tool's
    // own structured result, or its text as {"text": ...}.
    if r.is_error != Some(true) && r.structured_content.is_none() {
        let text: String = r
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        r.structured_content = Some(match serde_json::from_str::<Value>(&text) {
            Ok(v) if !v.is_string() && !text.trim().is_empty() => json!({"result": v}),
            _ => json!({"text": text}),
        });
    }
    Ok(r)
}

async fn delete_tool(ctx: &Ctx, a: NameArgs) -> Result<CallToolResult, CallToolResult> {
    let name = a.name;
    if ctx.shared.app.index().get(&name).is_none() {
        return Err(unknown_tool(&ctx.shared, &name));
    }
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let out = crate::platform::blocking(move || tb.delete_tool(&name, &actor))
        .await
        .map_err(|e| error_result(e, None))?
        .map_err(|e| failure(&e, e.hint()))?;
    // An MCP entry's server stops with it.
    if let Some(u) = ctx.shared.app.upstream() {
        u.stop(&out.name);
    }
    ctx.changed();
    Ok(json_result(
        json!({"deleted": out.name, "commit": out.commit}),
    ))
}
