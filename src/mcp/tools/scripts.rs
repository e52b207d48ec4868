//! The `register_script` meta-tool: store a script tool in any language (Python, Node, Ruby,
//! Bash, Perl, PHP or any interpreter) with its dependencies, installed and pinned, its examples
//! run before the commit, and progress notifications while pip or npm work.

use super::Ctx;
use super::args::{define, hints, parse};
use super::result::{error_result, failure, json_result};
use crate::error::Hint;
use crate::register::{self, ScriptSpec};
use crate::runner::script::Host;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

pub const NAMES: &[&str] = &["register_script"];

const DESCRIPTION: &str = "Store a script tool, any language (simplest: JSON on stdin, JSON out); commits once its examples pass.";

/// The MCP definition.
pub fn definitions() -> Vec<Tool> {
    vec![define::<ScriptSpec>(
        "register_script",
        DESCRIPTION,
        &["name", "action", "commit", "protocol", "warnings"],
        hints(false, false, true, true),
    )]
}

/// Run `register_script`. None for other names.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    if name != "register_script" {
        return None;
    }
    let spec: ScriptSpec = match parse(name, args) {
        Ok(s) => s,
        Err(e) => return Some(e),
    };
    if spec.component == Some(true) {
        return Some(match register::as_component(&spec) {
            Ok(req) => super::build::run(req, false, &ctx).await,
            Err(e) => failure(&e, e.hint()),
        });
    }
    let host = &ctx.host;
    let progress = |p: f64, total: f64, message: String| {
        host.log("info", &message);
        host.progress(p, Some(total), Some(message));
    };
    let work = register::register(&ctx.shared.app, &spec, &ctx.actor, host, &progress);
    let r = tokio::select! {
        _ = ctx.request.ct.cancelled() => return Some(error_result("register_script was cancelled; nothing was committed", None)),
        r = work => r,
    };
    Some(match r {
        Ok(out) => {
            ctx.changed();
            let mut v = json!(out);
            // The sandbox the tool gets on this machine, so the client and the person see it.
            if let Ok(t) = ctx.shared.app.tool(&out.name) {
                v["sandbox"] =
                    crate::runner::sandbox::describe(&t.manifest, &ctx.shared.app.config().sandbox);
            }
            json_result(v)
        }
        Err(e) => failure(&e, e.hint()),
    })
}
