//! The `build_tool` meta-tool: build a Rust program into a WASM tool and commit it, with
//! progress and log notifications while cargo runs and cancellation that stops cargo.

use super::Ctx;
use super::args::{define, hints};
use super::result::{error_result, failure, json_result};
use crate::build::{self, BuildError, BuildRequest};
use crate::error::Hint;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde_json::{Value, json};

/// Names of the meta-tools in this module.
pub const NAMES: &[&str] = &["build_tool"];

/// `build_tool` arguments: a build request, and whether to commit despite failing examples.
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used: a call is checked against it, then parsed as a BuildRequest
struct BuildArgs {
    #[serde(flatten)]
    request: BuildRequest,
    commit_anyway: Option<bool>,
}

const DESCRIPTION: &str = "Build Rust into a WASM tool; commits once its examples pass.";

/// The MCP definition of `build_tool`.
pub fn definitions() -> Vec<Tool> {
    vec![define::<BuildArgs>(
        "build_tool",
        DESCRIPTION,
        &["name", "action", "commit", "warnings"],
        hints(false, false, true, true),
    )]
}

/// Run `build_tool`. None when `name` is not one of this module's tools.
pub async fn call(name: &str, mut args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    if name != "build_tool" {
        return None;
    }
    let commit_anyway = args
        .remove("commit_anyway")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let req: BuildRequest = match serde_json::from_value(Value::Object(args)) {
        Ok(r) => r,
        Err(e) => {
            return Some(error_result(
                format!("invalid build_tool arguments: {e}"),
                Some("see build_tool's input schema".into()),
            ));
        }
    };
    Some(run(req, commit_anyway, &ctx).await)
}

/// Build and commit `req` (also `register_script`'s `component = true`).
pub(super) async fn run(req: BuildRequest, commit_anyway: bool, ctx: &Ctx) -> CallToolResult {
    let mut opts = build::Options::new(&ctx.host, ctx.actor.clone());
    opts.cancel = ctx.request.ct.clone();
    opts.commit_anyway = commit_anyway;
    let result = build::build(&ctx.shared.app, req, &opts).await;
    match result {
        Ok(outcome) => {
            if outcome.commit.is_some() {
                ctx.changed();
            }
            json_result(serde_json::to_value(&outcome).unwrap_or(Value::Null))
        }
        Err(e) => build_failure(&e),
    }
}

/// An error result; compile errors also carry the diagnostics as structured content.
fn build_failure(e: &BuildError) -> CallToolResult {
    let mut r = failure(e, e.hint());
    if let BuildError::Compile { diagnostics, .. } = e {
        let list: Vec<Value> = diagnostics
            .iter()
            .map(|d| json!({"file": d.file, "line": d.line, "column": d.column, "code": d.code, "message": d.message}))
            .collect();
        r.content.push(ContentBlock::text(
            serde_json::to_string_pretty(&list).unwrap_or_default(),
        ));
    }
    r
}
