//! The `build_tool` meta-tool: build a Rust program into a WASM tool and commit it, with
//! progress and log notifications while cargo runs and cancellation that stops cargo.

use super::Ctx;
use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{failure, json_result};
use crate::build::{self, BuildError, BuildRequest};
use crate::error::Hint;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use schemars::JsonSchema;
use serde_json::{Value, json};

/// `build_tool` arguments: a build request, and whether to commit despite failing examples.
#[derive(serde::Deserialize, JsonSchema)]
pub struct BuildArgs {
    #[serde(flatten)]
    request: BuildRequest,
    commit_anyway: Option<bool>,
}

/// `build_tool`.
pub struct BuildTool;
impl MetaTool for BuildTool {
    const NAME: &'static str = "build_tool";
    const DESCRIPTION: &'static str = "Build Rust modules/components or Python/JavaScript components; commits once examples pass.";
    const DETAILS: &'static str = "The Rust source (`source`, src/main.rs; left out: rebuild the stored one; `files`: other files, path → text) reads the JSON arguments on stdin and prints the result on stdout (see *WASM tools*); `crates`: name → version (serde_json by default).";
    const RESULT: &'static [&'static str] = &["name", "action", "commit", "warnings", "similar"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("action", Ty::Str), ("warnings", Ty::Arr)];
    const HINTS: Hints = Hints::WRITE.idempotent().open_world();
    type Args = BuildArgs;
    fn runs_as_task(_: &JsonObject) -> bool {
        true
    }
    async fn call(a: BuildArgs, ctx: Ctx) -> Reply {
        Ok(run(a.request, a.commit_anyway.unwrap_or(false), &ctx).await)
    }
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
            let mut v = serde_json::to_value(&outcome).unwrap_or(Value::Null);
            crate::report::add_similar(&ctx.shared, &outcome.name, &mut v).await;
            json_result(v)
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
