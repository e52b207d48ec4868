//! The `memory` meta-tool: read and change a stored tool's persistent key–value memory (the
//! same store scripts reach with `memory/get|set|list|delete`), and see how much is kept.

use super::Ctx;
use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{error_result, failure, json_result};
use crate::error::Hint;
use crate::memory::Memory;
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// What `memory` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    #[serde(alias = "set")]
    Store,
    Get,
    List,
    Delete,
    Stats,
}

/// `memory` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryArgs {
    pub action: Action,
    // The tool (not for stats); the guide says it.
    #[serde(alias = "tool")]
    pub name: Option<String>,
    pub key: Option<String>,
    pub value: Option<Value>,
    pub prefix: Option<String>,
}

/// `memory`.
pub struct MemoryTool;
impl MetaTool for MemoryTool {
    const NAME: &'static str = "memory";
    const DESCRIPTION: &'static str = "A tool's persistent key-value memory.";
    const DETAILS: &'static str = "`name`: the tool whose memory it is (not for `stats`).";
    const RESULT: &'static [&'static str] = &["found", "value", "keys"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[
        ("found", Ty::Bool),
        ("value", Ty::Any),
        ("keys", Ty::ArrOrInt),
    ];
    const HINTS: Hints = Hints::WRITE.destructive();
    type Args = MemoryArgs;
    async fn call(a: MemoryArgs, ctx: Ctx) -> Reply {
        memory(a, &ctx).await
    }
}

async fn memory(a: MemoryArgs, ctx: &Ctx) -> Reply {
    // Memory belongs to a stored tool: a name that is none is refused, not silently created.
    if a.action != Action::Stats {
        match a.name.as_deref() {
            None => {
                return Err(error_result(
                    "`memory` needs the tool's `name` (except for stats)",
                    Some("pass name: the stored tool whose memory this is".into()),
                ));
            }
            Some(n) if ctx.shared.app.index().get(n).is_none() => {
                return Err(super::core::unknown_tool(&ctx.shared, n));
            }
            Some(_) => {}
        }
    }
    let mem = Memory::for_toolbox(ctx.shared.app.toolbox.root());
    crate::platform::blocking(move || run(&mem, a))
        .await
        .unwrap_or_else(|e| Err(error_result(e, None)))
}

fn run(mem: &Memory, a: MemoryArgs) -> Result<CallToolResult, CallToolResult> {
    let fail = |e: crate::memory::MemoryError| failure(&e, e.hint());
    let key = || {
        a.key.as_deref().ok_or_else(|| {
            error_result(
                "this action needs a `key`",
                Some("pass key: the memory key".into()),
            )
        })
    };
    let tool = a.name.as_deref().unwrap_or_default();
    let v = match a.action {
        Action::Stats => return Ok(json_result(mem.stats(a.name.as_deref()).map_err(fail)?)),
        Action::Store => {
            let key = key()?;
            let value = a.value.clone().ok_or_else(|| {
                error_result("`store` needs a `value`", Some("any JSON value".into()))
            })?;
            let previous = mem.set(tool, key, value).map_err(fail)?;
            json!({"name": tool, "key": key, "stored": true, "previous": previous})
        }
        Action::Get => {
            let key = key()?;
            let v = mem.get(tool, key).map_err(fail)?;
            json!({"name": tool, "key": key, "found": v.is_some(), "value": v})
        }
        Action::Delete => {
            let key = key()?;
            json!({"name": tool, "key": key, "deleted": mem.delete(tool, key).map_err(fail)?})
        }
        Action::List => {
            json!({"name": tool, "keys": mem.list(tool, a.prefix.as_deref()).map_err(fail)?})
        }
    };
    Ok(json_result(v))
}
