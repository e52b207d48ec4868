//! The `register_script` meta-tool: store a script tool in any language (Python, Node, Ruby,
//! Bash, Perl, PHP or any interpreter) with its dependencies, installed and pinned, its examples
//! run before the commit, and progress notifications while pip or npm work.

use super::Ctx;
use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{error_result, failure, json_result};
use crate::error::Hint;
use crate::register::{self, ScriptSpec};
use crate::runner::script::Host;
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::json;

/// `register_script`.
pub struct RegisterScript;
impl MetaTool for RegisterScript {
    const NAME: &'static str = "register_script";
    const DESCRIPTION: &'static str = "Store a script tool in any language (JSON on stdin, JSON out); commits once examples pass.";
    const DETAILS: &'static str = "Simplest: read the JSON arguments on stdin, print JSON. It runs sandboxed (the result's `sandbox` says how); templates, the jsonrpc protocol and dependencies: *Script tools*. `interpreter`: a command of its own, e.g. [\"lua5.4\"].";
    const RESULT: &'static [&'static str] = &[
        "name", "action", "commit", "protocol", "warnings", "similar",
    ];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("action", Ty::Str), ("warnings", Ty::Arr)];
    const HINTS: Hints = Hints::WRITE.idempotent().open_world();
    type Args = ScriptSpec;
    /// Only with dependencies to install.
    fn runs_as_task(args: &JsonObject) -> bool {
        args.get("dependencies")
            .and_then(|d| d.as_object())
            .is_some_and(|d| {
                d.values().any(|v| match v {
                    serde_json::Value::Array(a) => !a.is_empty(),
                    serde_json::Value::Object(o) => !o.is_empty(),
                    _ => false,
                })
            })
    }
    async fn call(spec: ScriptSpec, ctx: Ctx) -> Reply {
        Ok(register_script(spec, &ctx).await)
    }
}

async fn register_script(spec: ScriptSpec, ctx: &Ctx) -> CallToolResult {
    if spec.component == Some(true) {
        return match super::as_component::as_component(&spec) {
            Ok(req) => super::build::run(req, false, ctx).await,
            Err(e) => failure(&e, e.hint()),
        };
    }
    let host = &ctx.host;
    let progress = |p: f64, total: f64, message: String| {
        host.log("info", &message);
        host.progress(p, Some(total), Some(message));
    };
    let work = register::register(&ctx.shared.app, &spec, &ctx.actor, host, &progress);
    let r = tokio::select! {
        _ = ctx.request.ct.cancelled() => return error_result("register_script was cancelled; nothing was committed", None),
        r = work => r,
    };
    match r {
        Ok(out) => {
            ctx.changed();
            let mut v = json!(out);
            // The sandbox the tool gets on this machine, so the client and the person see it.
            if let Ok(t) = ctx.shared.app.tool(&out.name) {
                v["sandbox"] =
                    crate::sandbox::describe(&t.manifest, &ctx.shared.app.config().sandbox);
            }
            // Tools that already do this, so the model can update one instead (nothing refused).
            crate::report::add_similar(&ctx.shared, &out.name, &mut v).await;
            json_result(v)
        }
        Err(e) => failure(&e, e.hint()),
    }
}
