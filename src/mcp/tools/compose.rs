//! Composition meta-tools: `pipeline` (create / list / show / delete pipelines) and
//! `execute_code` (Python or JavaScript calling stored tools; only the final result returns).

use super::Ctx;
use super::core::{error_result, json_result, required, str_arg};
use crate::compose::{execute, pipeline};
use crate::manifest::Kind;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

pub const NAMES: &[&str] = &["pipeline", "execute_code"];

fn obj(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

pub fn definitions() -> Vec<Tool> {
    let step = json!({
        "type": "object", "required": ["tool"],
        "properties": {
            "name": {"type": "string", "description": "Step name, referenced later as $steps.<name>"},
            "tool": {"type": "string", "description": "The stored tool this step calls"},
            "args": {"type": "object", "description": "Arguments; strings may reference $input.<path>, $prev.<path>, $steps.<name>.<path>, and interpolate: \"Hi $input.name\"", "additionalProperties": true},
            "when": {"type": "string", "description": "Run the step only when this reference is truthy, e.g. \"$input.enabled\""},
            "on_error": {"type": "string", "enum": ["stop", "continue"], "description": "What a failure of this step does (default stop)"}
        }
    });
    vec![
        Tool::new(
            "pipeline",
            "Create, list, show or delete pipelines: tools made of steps that call other tools, passing data between them without it reaching the model. A pipeline is committed, versioned and callable by its own name.",
            obj(json!({
                "type": "object", "required": ["action"],
                "properties": {
                    "action": {"type": "string", "enum": ["create", "list", "show", "delete"]},
                    "name": {"type": "string", "description": "Pipeline name (create, show, delete)"},
                    "description": {"type": "string", "description": "What the pipeline does (create)"},
                    "steps": {"type": "array", "items": step, "description": "Ordered steps (create)"},
                    "input_schema": {"type": "object", "description": "JSON Schema of the pipeline's arguments (create)"},
                    "output_schema": {"type": "object", "description": "JSON Schema of the result (create)"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "examples": {"type": "array", "items": {"type": "object", "properties": {"input": {"type": "object"}, "output": {}}}, "description": "Input → expected output, checked before the commit"},
                    "commit_anyway": {"type": "boolean", "description": "Commit even if examples fail"}
                }
            })),
        )
        .with_title("Pipelines")
        .with_annotations(ToolAnnotations::with_title("Pipelines").read_only(false).destructive(true).idempotent(false).open_world(false)),
        Tool::new(
            "execute_code",
            "Run Python or JavaScript that calls stored tools through a `tools` object (Python: `tools.word_count({\"text\": t})`, set `result` or `return` it; JavaScript: `await tools.word_count({text: t})`, `return` the result). Intermediate data stays in the sandbox; only the final result comes back. Same limits and sandbox as script tools.",
            obj(json!({
                "type": "object", "required": ["language", "code"],
                "properties": {
                    "language": {"type": "string", "enum": ["python", "javascript"]},
                    "code": {"type": "string", "description": "The code (a function body)"},
                    "args": {"type": "object", "description": "Data the code sees as `args`"},
                    "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 600000, "description": "Time limit for the whole run (default 30000)"},
                    "max_calls": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Most tool calls (default 1000)"}
                }
            })),
        )
        .with_title("Execute code")
        .with_annotations(ToolAnnotations::with_title("Execute code").read_only(false).destructive(false).idempotent(false).open_world(true)),
    ]
}

pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    let r = match name {
        "pipeline" => pipeline_tool(&ctx, args).await,
        "execute_code" => execute_code(&ctx, args).await,
        _ => return None,
    };
    Some(r.unwrap_or_else(|e| e))
}

async fn pipeline_tool(ctx: &Ctx, args: JsonObject) -> Result<CallToolResult, CallToolResult> {
    let app = &ctx.shared.app;
    match required(&args, "action")? {
        "create" => {
            let commit_anyway = args
                .get("commit_anyway")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let spec: pipeline::PipelineSpec = serde_json::from_value(Value::Object(args))
                .map_err(|e| {
                    error_result(
                        format!("the pipeline spec is not valid: {e}"),
                        Some("give name, description and steps: [{tool, args}]".into()),
                    )
                })?;
            let out = pipeline::create(app, &spec, &ctx.actor, &ctx.host, commit_anyway)
                .await
                .map_err(|e| error_result(&e, e.hint()))?;
            ctx.changed();
            Ok(json_result(
                json!({"created": out.name, "action": out.action, "commit": out.commit, "call_as": out.name}),
            ))
        }
        "list" => {
            let idx = app.index();
            let list: Vec<Value> = idx
                .tools()
                .filter(|t| t.manifest.kind == Kind::Pipeline)
                .map(|t| json!({"name": t.manifest.name, "description": t.manifest.summary(), "steps": t.manifest.steps.iter().map(|s| s.tool.clone()).collect::<Vec<_>>()}))
                .collect();
            Ok(json_result(json!({"pipelines": list})))
        }
        "show" => {
            let name = required(&args, "name")?;
            let t = app.tool(name).map_err(|e| error_result(&e, e.hint()))?;
            if t.manifest.kind != Kind::Pipeline {
                return Err(error_result(
                    format!("{name:?} is a {} tool, not a pipeline", t.manifest.kind),
                    Some("get_tool shows any tool".into()),
                ));
            }
            Ok(json_result(
                json!({"name": name, "description": t.manifest.description, "steps": t.manifest.steps, "input_schema": t.input_schema, "examples": t.manifest.examples}),
            ))
        }
        "delete" => {
            let name = required(&args, "name")?.to_string();
            let t = app.tool(&name).map_err(|e| error_result(&e, e.hint()))?;
            if t.manifest.kind != Kind::Pipeline {
                return Err(error_result(
                    format!("{name:?} is not a pipeline"),
                    Some("delete_tool deletes any tool".into()),
                ));
            }
            let tb = app.toolbox.clone();
            let actor = ctx.actor.clone();
            let out = tokio::task::spawn_blocking(move || tb.delete_tool(&name, actor))
                .await
                .map_err(|e| error_result(e, None))?
                .map_err(|e| error_result(&e, e.hint()))?;
            ctx.changed();
            Ok(json_result(
                json!({"deleted": out.name, "commit": out.commit}),
            ))
        }
        other => Err(error_result(
            format!("unknown action {other:?}"),
            Some("use create, list, show or delete".into()),
        )),
    }
}

async fn execute_code(ctx: &Ctx, args: JsonObject) -> Result<CallToolResult, CallToolResult> {
    let language: execute::Language = required(&args, "language")?
        .parse()
        .map_err(|e: String| error_result(e, Some("language is python or javascript".into())))?;
    let code = required(&args, "code")?;
    let data = args.get("args").cloned().unwrap_or_else(|| json!({}));
    let timeout = args.get("timeout_ms").and_then(Value::as_u64);
    let max_calls = args
        .get("max_calls")
        .and_then(Value::as_u64)
        .map(|n| n as usize);
    let _ = str_arg(&args, "language");
    match execute::run(
        &ctx.shared.app,
        language,
        code,
        data,
        timeout,
        max_calls,
        &ctx.host,
    )
    .await
    {
        Ok(done) => {
            let o = done.output;
            let mut r = CallToolResult::success(vec![ContentBlock::text(o.text)]);
            r.structured_content = Some(
                json!({"result": o.structured.unwrap_or(Value::Null), "tool_calls": done.tool_calls}),
            );
            Ok(r)
        }
        Err(e) => Err(error_result(&e, e.hint())),
    }
}
