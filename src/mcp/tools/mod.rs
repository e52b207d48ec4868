//! The meta-tools, one module per capability. Each module offers `definitions()` (its MCP
//! tool definitions) and `call(name, args, ctx)` returning `None` for names it does not own.
//! To add a capability: write a module here and add it to `definitions` and `call` below.

pub mod args;
pub mod build;
pub mod compose;
pub mod core;
pub mod history;
pub mod memory;
pub mod result;
pub mod scripts;
pub mod share;
pub mod team;

use super::Shared;
use super::host::McpHost;
use crate::toolbox::Actor;
use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, JsonObject, Tool};
use rmcp::service::RequestContext;
use std::sync::Arc;

pub use self::result::{call_result, error_result};

/// Everything a meta-tool call may need.
pub struct Ctx {
    pub shared: Arc<Shared>,
    /// The script host for this request (log, progress, nested calls).
    pub host: McpHost,
    /// Who is calling (client name and session), for commit trailers.
    pub actor: Actor,
    /// The MCP request: cancellation (`request.ct`), progress token, peer, protocol era.
    pub request: RequestContext<RoleServer>,
}

impl Ctx {
    /// Tell clients the toolbox changed, after a write made through MCP.
    pub fn changed(&self) {
        self.shared.app.refresh();
        self.shared.poke.notify_one();
    }
}

/// All meta-tool definitions, in listing order (built once: they never change at runtime).
pub fn definitions() -> Vec<Tool> {
    static DEFS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    DEFS.get_or_init(build_definitions).clone()
}

fn build_definitions() -> Vec<Tool> {
    #[allow(unused_mut)]
    let mut v = core::definitions();
    v.extend(compose::definitions());
    v.extend(build::definitions());
    v.extend(scripts::definitions());
    v.extend(memory::definitions());
    v.extend(history::definitions());
    v.extend(share::definitions());
    v.extend(team::definitions());
    v
}

/// Whether `name` is a meta-tool.
pub fn is_meta(name: &str) -> bool {
    static NAMES: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            build_definitions()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect()
        })
        .contains(name)
}

/// Run a meta-tool; None when `name` is not one. (A response, not just a result: a 2026
/// client may be answered with an input-required result.)
pub async fn call(name: &str, mut args: JsonObject, ctx: Ctx) -> Option<CallToolResponse> {
    // Every meta-tool's arguments are checked against its typed schema first: old spellings
    // renamed, unknown keys refused with a "did you mean".
    if let Some(def) = definitions().into_iter().find(|t| t.name == name)
        && let Err(e) = args::check(name, &def.input_schema, &mut args)
    {
        return Some(e.into());
    }
    if core::NAMES.contains(&name) {
        return core::call(name, args, ctx).await.map(Into::into);
    }
    if compose::NAMES.contains(&name) {
        return compose::call(name, args, ctx).await.map(Into::into);
    }
    if build::NAMES.contains(&name) {
        return build::call(name, args, ctx).await.map(Into::into);
    }
    if scripts::NAMES.contains(&name) {
        return scripts::call(name, args, ctx).await.map(Into::into);
    }
    if memory::NAMES.contains(&name) {
        return memory::call(name, args, ctx).await.map(Into::into);
    }
    if history::NAMES.contains(&name) {
        return history::call(name, args, ctx).await.map(Into::into);
    }
    if share::NAMES.contains(&name) {
        return share::call(name, args, ctx).await.map(Into::into);
    }
    if team::NAMES.contains(&name) {
        return team::call(name, args, ctx).await.map(Into::into);
    }
    None
}
