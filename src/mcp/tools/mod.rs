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
pub mod servers;
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
    v.extend(servers::definitions());
    v.extend(team::definitions());
    v
}

/// What a meta-tool's one-line description leaves to the guide.
const DETAILS: &[(&str, &str)] = &[
    (
        "get_tool",
        "`include_source`: the files' text too; `revision`: as it was at that revision.",
    ),
    (
        "build_tool",
        "The Rust source (`source`, src/main.rs; left out: rebuild the stored one; `files`: other files, path → text) reads the JSON arguments on stdin and prints the result on stdout (see *WASM tools*); `crates`: name → version (serde_json by default).",
    ),
    (
        "register_script",
        "Simplest: read the JSON arguments on stdin, print JSON. It runs sandboxed (the result's `sandbox` says how); templates, the jsonrpc protocol and dependencies: *Script tools*. `interpreter`: a command of its own, e.g. [\"lua5.4\"].",
    ),
    (
        "pipeline",
        "A step's `args` may use `$input.x`, `$prev.x` and `$steps.NAME.x`; `when` runs it only when the reference is truthy; `on_error`: stop or continue.",
    ),
    (
        "memory",
        "`name`: the tool whose memory it is (not for `stats`).",
    ),
    (
        "execute_code",
        "`code` is a function body returning the result.",
    ),
    ("undo_session", "`session` defaults to this session."),
    (
        "import_tool",
        "Validated, never run; the result lists what it refused. `source`: a git URL or path, a Gist or oci://REF; `path`: a directory in it.",
    ),
    (
        "update_tool",
        "`commit`: the reviewed origin commit or digest (refused if the origin moved on).",
    ),
    ("export_tool", "`oci`: REGISTRY/REPO:TAG."),
    ("sync", "`take`: {tool: side} settles a conflicting tool."),
    (
        "import_mcp",
        "`package`: npm:NAME@VERSION or pip:NAME==VERSION, installed and pinned like a script's dependencies; `command` and `args` start it (default: the package's own command; `npx -y PKG@VER ...` and `uvx PKG ...` become the package); or `url`, a streamable HTTP server (network to its host). `env`: settings it starts with; `secrets`: names a person sets with `toolsmith secret set NAME`, given as environment variables (with a `url`, one secret is sent as `Authorization: Bearer`); `network` (true or domains), `read` and `write` (paths): what it may reach. Anything beyond the default grants waits for the person's approval; its tools are listed once it runs (see *MCP servers*).",
    ),
];

/// The guide's section on the meta-tools: each one's purpose, what its description leaves
/// out, and the main keys of its result.
pub fn guide_section() -> String {
    use std::fmt::Write;
    let mut g = String::from(
        "## Meta-tools

",
    );
    for t in definitions() {
        let name = t.name.to_string();
        let _ = write!(g, "- `{name}`: {}", t.description.as_deref().unwrap_or(""));
        if let Some((_, d)) = DETAILS.iter().find(|(n, _)| *n == name) {
            let _ = write!(g, " {d}");
        }
        let keys = args::results(&name);
        if !keys.is_empty() {
            let list: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
            let _ = write!(g, " Result: {}.", list.join(", "));
        }
        g.push('\n');
    }
    g.push('\n');
    g
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
    if servers::NAMES.contains(&name) {
        return servers::call(name, args, ctx).await.map(Into::into);
    }
    if team::NAMES.contains(&name) {
        return team::call(name, args, ctx).await.map(Into::into);
    }
    None
}
