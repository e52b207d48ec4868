//! Team meta-tools: `sync` (fetch, integrate, push through `crate::sync`). Reviewing and
//! trusting held tools is for a person at the command line (`toolsmith review` / `trust`): no
//! meta-tool can trust anything.

use super::Ctx;
use super::history::blocking;
use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{error_result, json_result};
use crate::error::Hint;
use crate::sync::{self, Side, SyncError, SyncRequest};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

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

/// `sync`.
pub struct SyncTool;
impl MetaTool for SyncTool {
    const NAME: &'static str = "sync";
    const DESCRIPTION: &'static str = "Fetch, merge, push with a git remote (default origin).";
    const DETAILS: &'static str = "`take`: {tool: side} settles a conflicting tool.";
    const RESULT: &'static [&'static str] = &["action", "changed_tools", "held"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("action", Ty::Str), ("held", Ty::Arr)];
    const HINTS: Hints = Hints::WRITE.idempotent().open_world();
    type Args = SyncArgs;
    async fn call(a: SyncArgs, ctx: Ctx) -> Reply {
        run_sync(&ctx, a).await
    }
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
