//! Sharing meta-tools: `import_tool`, `update_tool`, `export_tool` — their MCP definitions and
//! what they do (through `crate::share`).

use super::Ctx;
use super::core::{error_result, json_result, required, str_arg};
use super::history::blocking;
use crate::share::{self, ImportRequest, ShareError};
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

/// Names of these meta-tools, in listing order.
pub const NAMES: &[&str] = &["import_tool", "update_tool", "export_tool"];

fn obj(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The MCP definitions.
pub fn definitions() -> Vec<Tool> {
    vec![
        Tool::new("import_tool", "Import a tool, or every tool of another toolbox, from a git repository (https, ssh, git, file URL or path) or a GitHub Gist (URL or id), as one commit pinned to the fetched commit ([origin] in tool.toml). Manifests are validated; symlinks, paths leaving the tool, files over 10 MB and bad names are refused; nothing imported runs. Skillz tools (manifest.json), Agent Skills (SKILL.md with scripts) and single-script Gists are converted, and the inferred manifest is shown.", obj(json!({
            "type": "object", "required": ["source"],
            "properties": {
                "source": {"type": "string", "description": "Git URL or path, Gist URL, `gist:<id>` or a Gist id"},
                "ref": {"type": "string", "description": "Branch, tag or commit (default: the remote's default branch)"},
                "path": {"type": "string", "description": "The tool's directory in the repository, or a toolbox (imports all its tools); default: the root"},
                "name": {"type": "string", "description": "Import under this name (required when the name is taken)"}
            }
        }))).with_title("Import a tool").with_annotations(ToolAnnotations::with_title("Import a tool").read_only(false).destructive(false).idempotent(false).open_world(true)),
        Tool::new("update_tool", "Fetch an imported tool's origin and show what changed: files (a unified diff), description, input schema, capabilities, annotations. Applies nothing unless apply is true; pass the reviewed `commit` with apply so that only what you saw is applied.", obj(json!({
            "type": "object", "required": ["name"],
            "properties": {
                "name": {"type": "string", "description": "An imported tool"},
                "apply": {"type": "boolean", "description": "Apply the update as a commit (default false: only show it)"},
                "commit": {"type": "string", "description": "With apply: the origin commit that was reviewed; refused if the origin has moved on"}
            }
        }))).with_title("Update an imported tool").with_annotations(ToolAnnotations::with_title("Update an imported tool").read_only(false).destructive(true).idempotent(true).open_world(true)),
        Tool::new("export_tool", "Publish tools: push the whole toolbox, or a branch holding the named tools, to a git remote (a bare repository path or URL; uses the git CLI, never force-pushes); or return one tool as a Gist-shaped JSON document (gist: true).", obj(json!({
            "type": "object",
            "properties": {
                "names": {"type": "array", "items": {"type": "string"}, "description": "Tools to export (default: the whole toolbox)"},
                "remote": {"type": "string", "description": "Where to push (a path or URL)"},
                "branch": {"type": "string", "description": "Remote branch (default main)"},
                "gist": {"type": "boolean", "description": "Instead of pushing, return the one named tool as a Gist-shaped JSON document"}
            }
        }))).with_title("Export tools").with_annotations(ToolAnnotations::with_title("Export tools").read_only(false).destructive(false).idempotent(true).open_world(true)),
    ]
}

fn to_json(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Run one of these meta-tools. Returns None when `name` is not one of them.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    let r = match name {
        "import_tool" => import(&ctx, &args).await,
        "update_tool" => update(&ctx, &args).await,
        "export_tool" => export(&ctx, &args).await,
        _ => return None,
    };
    Some(r.unwrap_or_else(|e| e))
}

async fn import(ctx: &Ctx, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let req = ImportRequest {
        source: required(args, "source")?.to_string(),
        reference: str_arg(args, "ref").map(str::to_string),
        path: str_arg(args, "path").map(str::to_string),
        name: str_arg(args, "name").map(str::to_string),
    };
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let out = blocking(
        move || share::import_tool(&tb, &req, &actor),
        ShareError::hint,
    )
    .await?;
    ctx.changed();
    Ok(json_result(to_json(out)))
}

async fn update(ctx: &Ctx, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let name = required(args, "name")?.to_string();
    let apply = args.get("apply").and_then(Value::as_bool).unwrap_or(false);
    let commit = str_arg(args, "commit").map(str::to_string);
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let out = blocking(
        move || share::update_tool(&tb, &name, apply, commit.as_deref(), &actor),
        ShareError::hint,
    )
    .await?;
    if out.applied {
        ctx.changed();
    }
    Ok(json_result(to_json(out)))
}

async fn export(ctx: &Ctx, args: &JsonObject) -> Result<CallToolResult, CallToolResult> {
    let names: Vec<String> = args
        .get("names")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let tb = ctx.shared.app.toolbox.clone();
    if args.get("gist").and_then(Value::as_bool).unwrap_or(false) {
        let [name] = names.as_slice() else {
            return Err(error_result(
                "a Gist export takes exactly one tool in `names`",
                Some("pass names: [\"TOOL\"]".into()),
            ));
        };
        let name = name.clone();
        let v = blocking(move || share::gist_json(&tb, &name), ShareError::hint).await?;
        return Ok(json_result(v));
    }
    let remote = required(args, "remote")?.to_string();
    let branch = str_arg(args, "branch").unwrap_or("main").to_string();
    let out = blocking(
        move || share::export_tools(&tb, &names, &remote, &branch),
        ShareError::hint,
    )
    .await?;
    Ok(json_result(to_json(out)))
}
