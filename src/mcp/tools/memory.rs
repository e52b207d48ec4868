//! The `memory` meta-tool: read and change a stored tool's persistent key–value memory (the
//! same store scripts reach with `memory/get|set|list|delete`), and see how much is kept.

use super::Ctx;
use super::args::{define, hints, parse};
use super::result::{error_result, failure, json_result};
use crate::error::Hint;
use crate::memory::Memory;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

pub const NAMES: &[&str] = &["memory"];

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

/// The MCP definition.
pub fn definitions() -> Vec<Tool> {
    vec![define::<MemoryArgs>(
        "memory",
        "A tool's persistent key-value memory.",
        &["found", "value", "keys"],
        hints(false, true, false, false),
    )]
}

/// Run `memory`. None for other names.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    if name != "memory" {
        return None;
    }
    let a: MemoryArgs = match parse(name, args) {
        Ok(a) => a,
        Err(e) => return Some(e),
    };
    // Memory belongs to a stored tool: a name that is none is refused, not silently created.
    if a.action != Action::Stats {
        match a.name.as_deref() {
            None => {
                return Some(error_result(
                    "`memory` needs the tool's `name` (except for stats)",
                    Some("pass name: the stored tool whose memory this is".into()),
                ));
            }
            Some(n) if ctx.shared.app.index().get(n).is_none() => {
                return Some(super::core::unknown_tool(&ctx.shared, n));
            }
            Some(_) => {}
        }
    }
    let mem = Memory::for_toolbox(ctx.shared.app.toolbox.root());
    let r = tokio::task::spawn_blocking(move || run(&mem, a))
        .await
        .unwrap_or_else(|e| Err(error_result(e, None)));
    Some(r.unwrap_or_else(|e| e))
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
