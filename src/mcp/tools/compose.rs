//! Composition meta-tools: `pipeline` (create / list / show / delete pipelines) and
//! `execute_code` (Python or JavaScript calling stored tools; only the final result returns).

use super::Ctx;
use super::args::{define, hints, parse, required};
use super::result::{error_result, failure, json_result};
use crate::compose::{execute, pipeline};
use crate::error::Hint;
use crate::manifest::{self, Kind};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

pub const NAMES: &[&str] = &["pipeline", "execute_code"];

/// What `pipeline` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PipelineAction {
    Create,
    List,
    Show,
    Delete,
}

/// `pipeline` arguments (for `create`, the same object is then read as a `PipelineSpec`).
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // fields other than `action` are read through PipelineSpec
#[serde(deny_unknown_fields)]
pub struct PipelineArgs {
    pub action: PipelineAction,
    pub name: Option<String>,
    pub description: Option<String>,
    // args may use $input.x, $prev.x, $steps.NAME.x (the guide says it)
    pub steps: Option<Vec<manifest::Step>>,
    pub input_schema: Option<Map<String, Value>>,
    pub output_schema: Option<Map<String, Value>>,
    pub tags: Option<Vec<String>>,
    pub examples: Option<Vec<manifest::Example>>,
    pub annotations: Option<manifest::Annotations>,
    pub commit_anyway: Option<bool>,
}

/// The languages of execute_code (the same names as register_script's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecLanguage {
    Python,
    Node,
}

/// `execute_code` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecArgs {
    pub language: ExecLanguage,
    // A function body returning the result (the guide says it)
    pub code: String,
    pub args: Option<Value>,
    #[schemars(range(min = 1, max = 600000))]
    pub timeout_ms: Option<u64>,
    #[schemars(range(min = 1, max = 1000))]
    pub max_calls: Option<u32>,
}

pub fn definitions() -> Vec<Tool> {
    vec![
        define::<PipelineArgs>(
            "pipeline",
            "Pipelines: tools made of steps that call other tools.",
            &["pipelines", "steps", "commit"],
            hints(false, true, false, false),
        ),
        define::<ExecArgs>(
            "execute_code",
            "Run Python/Node code calling tools as tools.NAME(args); only its result returns.",
            &["result", "tool_calls"],
            hints(false, false, false, true),
        ),
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
    let checked: PipelineArgs = parse("pipeline", args.clone())?;
    match checked.action {
        PipelineAction::Create => {
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
                .map_err(|e| failure(&e, e.hint()))?;
            ctx.changed();
            Ok(json_result(
                json!({"created": out.name, "action": out.action, "commit": out.commit, "call_as": out.name}),
            ))
        }
        PipelineAction::List => {
            let idx = app.index();
            let list: Vec<Value> = idx
                .tools()
                .filter(|t| t.manifest.kind == Kind::Pipeline)
                .map(|t| json!({"name": t.manifest.name, "description": t.manifest.summary(), "steps": t.manifest.steps.iter().map(|s| s.tool.clone()).collect::<Vec<_>>()}))
                .collect();
            Ok(json_result(json!({"pipelines": list})))
        }
        PipelineAction::Show => {
            let name = required(&args, "name")?;
            let t = app.tool(name).map_err(|e| failure(&e, e.hint()))?;
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
        PipelineAction::Delete => {
            let name = required(&args, "name")?.to_string();
            let t = app.tool(&name).map_err(|e| failure(&e, e.hint()))?;
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
                .map_err(|e| failure(&e, e.hint()))?;
            ctx.changed();
            Ok(json_result(
                json!({"deleted": out.name, "commit": out.commit}),
            ))
        }
    }
}

async fn execute_code(ctx: &Ctx, args: JsonObject) -> Result<CallToolResult, CallToolResult> {
    let a: ExecArgs = parse("execute_code", args)?;
    let language = match a.language {
        ExecLanguage::Python => execute::Language::Python,
        ExecLanguage::Node => execute::Language::JavaScript,
    };
    let data = a.args.unwrap_or_else(|| json!({}));
    match execute::run(
        &ctx.shared.app,
        language,
        &a.code,
        data,
        a.timeout_ms,
        a.max_calls.map(|n| n as usize),
        &ctx.host,
    )
    .await
    {
        // The text and the structured content carry the same value.
        Ok(done) => Ok(json_result(
            json!({"result": done.output.structured.unwrap_or(Value::String(done.output.text)), "tool_calls": done.tool_calls}),
        )),
        Err(e) => Err(failure(&e, e.hint())),
    }
}
