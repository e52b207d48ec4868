//! Team meta-tools: `sync` (fetch, integrate, push through `crate::sync`). Reviewing and
//! trusting held tools is for a person at the command line (`toolsmith review` / `trust`): no
//! meta-tool can trust anything.

use super::Ctx;
use super::args::{define, hints, parse};
use super::history::blocking;
use super::result::{error_result, json_result};
use crate::error::Hint;
use crate::sync::{self, Side, SyncError, SyncRequest};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Names of these meta-tools, in listing order.
pub const NAMES: &[&str] = &["sync"];

/// Which side of a conflict to keep.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TakeSide {
    Ours,
    Theirs,
}

/// `sync` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncArgs {
    pub remote: Option<String>,
    pub take: Option<BTreeMap<String, TakeSide>>,
}

/// The MCP definitions.
pub fn definitions() -> Vec<Tool> {
    vec![define::<SyncArgs>(
        "sync",
        "Fetch, merge, push with a git remote (default origin).",
        &["action", "changed_tools", "held"],
        hints(false, false, true, true),
    )]
}

/// Run one of these meta-tools. Returns None when `name` is not one of them.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    let r = match name {
        "sync" => match parse(name, args) {
            Ok(a) => run_sync(&ctx, a).await,
            Err(e) => Err(e),
        },
        _ => return None,
    };
    Some(r.unwrap_or_else(|e| e))
}

async fn run_sync(ctx: &Ctx, a: SyncArgs) -> Result<CallToolResult, CallToolResult> {
    let req = SyncRequest {
        remote: a.remote,
        take: a
            .take
            .unwrap_or_default()
            .into_iter()
            .map(|(n, s)| {
                let side = match s {
                    TakeSide::Ours => Side::Ours,
                    TakeSide::Theirs => Side::Theirs,
                };
                (n, side)
            })
            .collect(),
    };
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let out = blocking(move || sync::sync(&tb, &req, &actor), SyncError::hint).await?;
    if !out.changed_tools.is_empty() || !out.changed_files.is_empty() {
        ctx.changed();
    }
    let v = serde_json::to_value(&out).map_err(|e| error_result(e, None))?;
    Ok(json_result(v))
}
