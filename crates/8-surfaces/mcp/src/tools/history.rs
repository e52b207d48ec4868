//! History meta-tools: `tool_history`, `diff_tool`, `rollback_tool`, `restore_tool`,
//! `undo_session` — their MCP definitions and what they do (through `crate::history`).

use super::Ctx;
use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{error_result, failure, json_result};
use crate::error::Hint;
use crate::history::{self, HistoryError};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// `tool_history` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    pub name: String,
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

/// `diff_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    pub name: String,
    pub from: String,
    pub to: Option<String>,
}

/// `rollback_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackArgs {
    pub name: String,
    pub revision: String,
}

/// `restore_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreArgs {
    pub name: String,
    pub revision: Option<String>,
}

/// `undo_session` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoArgs {
    pub session: Option<String>,
}

/// `tool_history`.
pub struct ToolHistory;
impl MetaTool for ToolHistory {
    const NAME: &'static str = "tool_history";
    const DESCRIPTION: &'static str = "A tool's versions, newest first.";
    const RESULT: &'static [&'static str] = &["versions"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("versions", Ty::Arr)];
    const HINTS: Hints = Hints::READ;
    type Args = HistoryArgs;
    async fn call(a: HistoryArgs, ctx: Ctx) -> Reply {
        tool_history(&ctx, a).await
    }
}

/// `diff_tool`.
pub struct DiffTool;
impl MetaTool for DiffTool {
    const NAME: &'static str = "diff_tool";
    const DESCRIPTION: &'static str = "Diff a tool between revisions.";
    const RESULT: &'static [&'static str] = &["files", "unified"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("files", Ty::Arr), ("unified", Ty::Str)];
    const HINTS: Hints = Hints::READ;
    type Args = DiffArgs;
    async fn call(a: DiffArgs, ctx: Ctx) -> Reply {
        diff_tool(&ctx, a).await
    }
}

/// `rollback_tool`.
pub struct RollbackTool;
impl MetaTool for RollbackTool {
    const NAME: &'static str = "rollback_tool";
    const DESCRIPTION: &'static str = "Roll a tool back to a revision.";
    const RESULT: &'static [&'static str] = &["commit", "warnings"];
    const HINTS: Hints = Hints::WRITE.destructive().idempotent();
    type Args = RollbackArgs;
    async fn call(a: RollbackArgs, ctx: Ctx) -> Reply {
        rollback(&ctx, a.name, Some(a.revision), false).await
    }
}

/// `restore_tool`.
pub struct RestoreTool;
impl MetaTool for RestoreTool {
    const NAME: &'static str = "restore_tool";
    const DESCRIPTION: &'static str = "Bring back a deleted tool.";
    const RESULT: &'static [&'static str] = &["commit", "warnings"];
    const HINTS: Hints = Hints::WRITE.idempotent();
    type Args = RestoreArgs;
    async fn call(a: RestoreArgs, ctx: Ctx) -> Reply {
        rollback(&ctx, a.name, a.revision, true).await
    }
}

/// `undo_session`.
pub struct UndoSession;
impl MetaTool for UndoSession {
    const NAME: &'static str = "undo_session";
    const DESCRIPTION: &'static str = "Revert an MCP session's changes in one commit.";
    const DETAILS: &'static str = "`session` defaults to this session.";
    const RESULT: &'static [&'static str] = &["tools", "commit"];
    const HINTS: Hints = Hints::WRITE.destructive();
    type Args = UndoArgs;
    async fn call(a: UndoArgs, ctx: Ctx) -> Reply {
        undo(&ctx, a).await
    }
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
    match crate::platform::blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(error_result(&e, hint(&e))),
        Err(e) => Err(error_result(e, None)),
    }
}

fn to_json(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

async fn tool_history(ctx: &Ctx, a: HistoryArgs) -> Result<CallToolResult, CallToolResult> {
    let name = a.name;
    let limit = a.limit.unwrap_or(50).clamp(1, 1000) as usize;
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

async fn diff_tool(ctx: &Ctx, a: DiffArgs) -> Result<CallToolResult, CallToolResult> {
    let to = a.to.unwrap_or_else(|| "HEAD".into());
    let tb = ctx.shared.app.toolbox.clone();
    let d = blocking(
        move || {
            // A version this machine does not trust is not shown, not even as a diff.
            for rev in [&a.from, &to] {
                not_held(&tb, &a.name, rev)?;
            }
            history::diff_tool(&tb, &a.name, &a.from, &to).map_err(|e| Refused::History(e.into()))
        },
        Refused::hint,
    )
    .await?;
    Ok(json_result(to_json(d)))
}

/// Why a history meta-tool shows nothing: the version is held, or the history said no.
enum Refused {
    Held(Box<crate::trust::Held>),
    History(HistoryError),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Held(h) => write!(f, "tool {}: {}", h.name, h.withheld().note()),
            Refused::History(e) => e.fmt(f),
        }
    }
}

impl Refused {
    fn hint(&self) -> Option<String> {
        match self {
            Refused::Held(h) => h.hint(),
            Refused::History(e) => e.hint(),
        }
    }
}

/// Refuse a version of `name` at `rev` that this machine does not trust (fail closed).
fn not_held(tb: &crate::toolbox::Toolbox, name: &str, rev: &str) -> Result<(), Refused> {
    match crate::trust::held_at(tb, name, rev) {
        Ok(None) => Ok(()),
        Ok(Some(h)) => Err(Refused::Held(Box::new(h))),
        // A revision or name git cannot read: the history operation says so itself.
        Err(crate::trust::TrustError::Toolbox(_))
        | Err(crate::trust::TrustError::NoSuchTool(_)) => Ok(()),
        Err(e) => Err(Refused::Held(Box::new(crate::trust::Held::unjudged(
            name,
            &e.to_string(),
        )))),
    }
}

async fn rollback(
    ctx: &Ctx,
    name: String,
    rev: Option<String>,
    restore: bool,
) -> Result<CallToolResult, CallToolResult> {
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

async fn undo(ctx: &Ctx, a: UndoArgs) -> Result<CallToolResult, CallToolResult> {
    let session = match a.session.or_else(|| ctx.actor.session.clone()) {
        Some(s) => s,
        None => {
            let e = HistoryError::NoSession;
            return Err(failure(&e, e.hint()));
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
    shared: &crate::Shared,
    name: &str,
    rev: &str,
    include_source: bool,
) -> Result<CallToolResult, CallToolResult> {
    if let Err(r) = not_held(&shared.app.toolbox, name, rev) {
        return match r {
            Refused::Held(h) => Ok(json_result(h.withheld().json())),
            Refused::History(e) => Err(failure(&e, e.hint())),
        };
    }
    let at = history::tool_at(&shared.app.toolbox, name, rev).map_err(|e| failure(&e, e.hint()))?;
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
                .as_deref()
                .map(|s| Value::Object(s.clone()))
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
