//! Composition meta-tools: `pipeline` (create / list / show / delete pipelines) and
//! `execute_code` (Python or JavaScript calling stored tools; only the final result returns).

use super::Ctx;
use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{error_result, failure, json_result};
use crate::compose::{execute, pipeline};
use crate::error::Hint;
use crate::manifest::{self, Kind};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// What `pipeline` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PipelineAction {
    Create,
    List,
    Show,
    Delete,
}

/// `pipeline` arguments (`create` makes a `PipelineSpec` of them).
#[derive(Debug, Deserialize, JsonSchema)]
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

impl PipelineAction {
    fn word(self) -> &'static str {
        match self {
            PipelineAction::Create => "create",
            PipelineAction::List => "list",
            PipelineAction::Show => "show",
            PipelineAction::Delete => "delete",
        }
    }
}

impl PipelineArgs {
    /// What `create` stores.
    fn spec(&self) -> Result<pipeline::PipelineSpec, CallToolResult> {
        let missing = |what: &str| {
            error_result(
                format!("`create` needs the pipeline's `{what}`"),
                Some("give name, description and steps: [{tool, args}]".into()),
            )
        };
        Ok(pipeline::PipelineSpec {
            name: self.name.clone().ok_or_else(|| missing("name"))?,
            description: self
                .description
                .clone()
                .ok_or_else(|| missing("description"))?,
            steps: self.steps.clone().ok_or_else(|| missing("steps"))?,
            input_schema: self.input_schema.clone(),
            output_schema: self.output_schema.clone(),
            tags: self.tags.clone().unwrap_or_default(),
            examples: self.examples.clone().unwrap_or_default(),
            annotations: self.annotations.clone(),
        })
    }
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

/// `pipeline`.
pub struct Pipeline;
impl MetaTool for Pipeline {
    const NAME: &'static str = "pipeline";
    const DESCRIPTION: &'static str = "Pipelines: tools made of steps that call other tools.";
    const DETAILS: &'static str = "A step's `args` may use `$input.x`, `$prev.x` and `$steps.NAME.x`; `when` runs it only when the reference is truthy; `on_error`: stop or continue.";
    const RESULT: &'static [&'static str] = &["pipelines", "steps", "commit"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("pipelines", Ty::Arr), ("steps", Ty::Arr)];
    const HINTS: Hints = Hints::WRITE.destructive();
    type Args = PipelineArgs;
    async fn call(a: PipelineArgs, ctx: Ctx) -> Reply {
        pipeline_tool(&ctx, a).await
    }
}

/// `execute_code`.
pub struct ExecuteCode;
impl MetaTool for ExecuteCode {
    const NAME: &'static str = "execute_code";
    const DESCRIPTION: &'static str =
        "Run Python/Node code that calls tools.NAME(args); only its result returns.";
    const DETAILS: &'static str = "`code` is a function body returning the result.";
    const RESULT: &'static [&'static str] = &["result", "tool_calls"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("result", Ty::Any), ("tool_calls", Ty::Int)];
    const HINTS: Hints = Hints::WRITE.open_world();
    type Args = ExecArgs;
    async fn call(a: ExecArgs, ctx: Ctx) -> Reply {
        execute_code(&ctx, a).await
    }
}

async fn pipeline_tool(ctx: &Ctx, a: PipelineArgs) -> Reply {
    let app = &ctx.shared.app;
    let named = || {
        a.name.as_deref().ok_or_else(|| {
            error_result(
                format!("`{}` needs the pipeline's `name`", a.action.word()),
                Some("pass name: the pipeline".into()),
            )
        })
    };
    match a.action {
        PipelineAction::Create => {
            let commit_anyway = a.commit_anyway.unwrap_or(false);
            let spec = a.spec()?;
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
            let name = named()?;
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
            let name = named()?.to_string();
            let t = app.tool(&name).map_err(|e| failure(&e, e.hint()))?;
            if t.manifest.kind != Kind::Pipeline {
                return Err(error_result(
                    format!("{name:?} is not a pipeline"),
                    Some("delete_tool deletes any tool".into()),
                ));
            }
            let tb = app.toolbox.clone();
            let actor = ctx.actor.clone();
            let out = crate::platform::blocking(move || tb.delete_tool(&name, actor))
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

async fn execute_code(ctx: &Ctx, a: ExecArgs) -> Reply {
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
