//! The meta-tools, one module per capability. Each meta-tool is a type implementing
//! [`meta::MetaTool`] (typed arguments, purpose, result keys, annotations, guide details, what
//! it does); [`ALL`] lists each once, in listing order, and `tools/list`, the guide, `is_meta`
//! and dispatch derive from that list. To add one: implement `MetaTool` and add it to `ALL`
//! (and its name to `names::META_TOOL_NAMES`, which a test keeps equal).

pub mod args;
mod as_component;
pub mod build;
pub mod compose;
pub mod core;
pub mod history;
pub mod memory;
pub mod meta;
pub mod result;
pub mod scripts;
pub mod servers;
pub mod share;
pub mod team;

use super::Shared;
use super::host::McpHost;
use crate::toolbox::Actor;
use meta::Entry;
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

/// Every meta-tool, in listing order.
pub static ALL: &[Entry] = &[
    Entry::of::<core::ListTools>(),
    Entry::of::<core::GetTool>(),
    Entry::of::<core::SearchTools>(),
    Entry::of::<core::CallTool>(),
    Entry::of::<core::DeleteTool>(),
    Entry::of::<compose::Pipeline>(),
    Entry::of::<compose::ExecuteCode>(),
    Entry::of::<build::BuildTool>(),
    Entry::of::<scripts::RegisterScript>(),
    Entry::of::<memory::MemoryTool>(),
    Entry::of::<history::ToolHistory>(),
    Entry::of::<history::DiffTool>(),
    Entry::of::<history::RollbackTool>(),
    Entry::of::<history::RestoreTool>(),
    Entry::of::<history::UndoSession>(),
    Entry::of::<share::ImportTool>(),
    Entry::of::<share::UpdateTool>(),
    Entry::of::<share::ExportTool>(),
    Entry::of::<servers::ImportMcp>(),
    Entry::of::<team::SyncTool>(),
];

/// All meta-tool definitions, in listing order (built once: they never change at runtime).
pub fn definitions() -> Vec<Tool> {
    static DEFS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    DEFS.get_or_init(|| ALL.iter().map(Entry::definition).collect())
        .clone()
}

/// The closed input schemas arguments are checked against, in listing order (built once).
fn checked_schemas() -> &'static [Arc<JsonObject>] {
    static CHECKED: std::sync::OnceLock<Vec<Arc<JsonObject>>> = std::sync::OnceLock::new();
    CHECKED.get_or_init(|| ALL.iter().map(Entry::checked_schema).collect())
}

/// The guide's section on the meta-tools: each one's purpose, what its description leaves
/// out, and the main keys of its result.
pub fn guide_section() -> String {
    use std::fmt::Write;
    let mut g = String::from(
        "## Meta-tools

",
    );
    for (e, t) in ALL.iter().zip(definitions()) {
        let _ = write!(
            g,
            "- `{}`: {}",
            e.name,
            t.description.as_deref().unwrap_or("")
        );
        if !e.details.is_empty() {
            let _ = write!(g, " {}", e.details);
        }
        if !e.result.is_empty() {
            let list: Vec<String> = e.result.iter().map(|k| format!("`{k}`")).collect();
            let _ = write!(g, " Result: {}.", list.join(", "));
        }
        g.push('\n');
    }
    g.push('\n');
    g
}

/// Whether `name` is a meta-tool.
pub fn is_meta(name: &str) -> bool {
    ALL.iter().any(|e| e.name == name)
}

/// Run a meta-tool; None when `name` is not one. (A response, not just a result: a 2026
/// client may be answered with an input-required result.)
pub async fn call(name: &str, mut args: JsonObject, ctx: Ctx) -> Option<CallToolResponse> {
    let (entry, checked) = ALL
        .iter()
        .zip(checked_schemas())
        .find(|(e, _)| e.name == name)?;
    // Every meta-tool's arguments are checked against its typed, closed schema first: old
    // spellings renamed, unknown keys refused with a "did you mean".
    if let Err(e) = args::check(name, checked, &mut args) {
        return Some(e.into());
    }
    Some(entry.run(args, ctx).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored tool can never take a meta-tool's name: the reserved list is the registry's.
    #[test]
    fn the_reserved_meta_tool_names_are_the_registry() {
        let mut registry: Vec<&str> = ALL.iter().map(|e| e.name).collect();
        let mut reserved: Vec<&str> = crate::names::META_TOOL_NAMES.to_vec();
        registry.sort_unstable();
        reserved.sort_unstable();
        assert_eq!(registry, reserved);
        for name in registry {
            assert!(
                crate::names::validate(name).is_err(),
                "{name} must be refused as a stored tool's name"
            );
        }
    }

    /// An output schema types only keys the guide names as the result's, and the input
    /// schema sent is the checked one opened: the same properties, no `additionalProperties:
    /// false` (an unknown key is still refused, by the check).
    #[test]
    fn output_schemas_type_named_keys_and_sent_inputs_are_the_checked_ones_opened() {
        for (e, t) in ALL.iter().zip(definitions()) {
            let out = t.output_schema.as_deref().cloned().unwrap_or_default();
            assert_eq!(
                out.get("type"),
                Some(&serde_json::json!("object")),
                "{}",
                e.name
            );
            let typed = out.get("properties").and_then(|p| p.as_object());
            for k in typed.into_iter().flat_map(|p| p.keys()) {
                assert!(
                    e.result.contains(&k.as_str()),
                    "{}: `{k}` typed, not in RESULT",
                    e.name
                );
            }
            let sent = serde_json::to_string(&t.input_schema).unwrap_or_default();
            assert!(
                !sent.contains("\"additionalProperties\":false"),
                "{}: {sent}",
                e.name
            );
            assert_eq!(
                *args::as_sent(&e.checked_schema()),
                *t.input_schema,
                "{}",
                e.name
            );
        }
        let mut unknown = serde_json::json!({"name": "x", "source": "print(1)",
            "description": "d", "limits": {"timeout": 5}})
        .as_object()
        .cloned()
        .unwrap_or_default();
        let checked = &checked_schemas()[ALL
            .iter()
            .position(|e| e.name == "register_script")
            .unwrap_or(0)];
        let refused = args::check("register_script", checked, &mut unknown)
            .expect_err("an unknown key inside limits is refused");
        let text = format!("{:?}", refused.content);
        assert!(
            text.contains("unknown key `timeout`") && text.contains("timeout_ms"),
            "{text}"
        );
    }

    /// Each meta-tool's definition carries its own name, and names are unique.
    #[test]
    fn definitions_follow_the_registry() {
        let names: Vec<String> = definitions().iter().map(|t| t.name.to_string()).collect();
        let listed: Vec<&str> = ALL.iter().map(|e| e.name).collect();
        assert_eq!(names, listed);
        let unique: std::collections::BTreeSet<&str> = listed.iter().copied().collect();
        assert_eq!(unique.len(), listed.len());
    }
}
