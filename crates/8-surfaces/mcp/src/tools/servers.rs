//! `import_mcp`: another MCP server as an entry of the toolbox (`servers::add`); its tools
//! become `<name>__<tool>` tools. What it asks for beyond the defaults waits for the person.

use super::Ctx;
use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{error_result, failure, json_result};
use crate::error::Hint;
use crate::manifest::{Capabilities, Network, SecretsSpec};
use crate::runner::host::Host;
use crate::servers::{self, ServerSpec};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

/// `import_mcp` arguments (`servers::ServerSpec`, the fields the model needs).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportMcpArgs {
    pub name: String,
    /// npm:NAME@VER or pip:NAME==VER
    pub package: Option<String>,
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub url: Option<String>,
    pub env: Option<BTreeMap<String, String>>,
    pub secrets: Option<Vec<String>>,
    pub network: Option<Network>,
    pub read: Option<Vec<String>>,
    pub write: Option<Vec<String>>,
}

/// `import_mcp`.
pub struct ImportMcp;
impl MetaTool for ImportMcp {
    const NAME: &'static str = "import_mcp";
    const DESCRIPTION: &'static str =
        "Add an MCP server (package, command or url); its tools become NAME__TOOL.";
    const DETAILS: &'static str = "`package`: npm:NAME@VERSION or pip:NAME==VERSION, installed and pinned like a script's dependencies; `command` and `args` start it (default: the package's own command; `npx -y PKG@VER ...` and `uvx PKG ...` become the package); or `url`, a streamable HTTP server (network to its host). `env`: settings it starts with; `secrets`: names a person sets with `toolsmith secret set NAME`, given as environment variables (with a `url`, one secret is sent as `Authorization: Bearer`); `network` (true or domains), `read` and `write` (paths): what it may reach. Anything beyond the default grants waits for the person's approval; its tools are listed once it runs (see *MCP servers*).";
    const RESULT: &'static [&'static str] = &["entries", "commit"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("entries", Ty::Arr)];
    const HINTS: Hints = Hints::WRITE.idempotent().open_world();
    type Args = ImportMcpArgs;
    async fn call(a: ImportMcpArgs, ctx: Ctx) -> Reply {
        Ok(import_mcp(a, &ctx).await)
    }
}

/// What `get_tool` adds for an MCP entry (its server, its listing, what was left out) and
/// for a tool of one (which server tool it calls).
pub fn describe(shared: &crate::Shared, t: &crate::index::Tool, v: &mut serde_json::Value) {
    use crate::index::upstream;
    if let Some(u) = &t.upstream {
        v["upstream"] = serde_json::json!({"entry": u.entry, "tool": u.tool});
        return;
    }
    if t.manifest.kind != crate::manifest::Kind::Mcp {
        return;
    }
    let root = shared.app.toolbox.root();
    let name = &t.manifest.name;
    let listing = upstream::read(root, name);
    let dir = shared.app.toolbox.tools_dir().join(name);
    let idx = shared.app.index();
    let tools: Vec<&str> = idx
        .tools()
        .filter(|x| x.upstream.as_ref().is_some_and(|u| &u.entry == name))
        .map(|x| x.manifest.name.as_str())
        .collect();
    v["server"] = serde_json::json!({
        "listed": listing.as_ref().map(|l| l.listed_at),
        "stale": listing.as_ref().is_some_and(|l| l.manifest != upstream::manifest_hash(&dir)),
        // The server's words about itself: checked, quoted and labelled as its own.
        "says_it_is": listing.as_ref().and_then(|l| l.says_it_is(name)),
        "instructions": listing.as_ref().and_then(|l| l.shown_instructions(name)),
        "tools": tools,
    });
}

async fn import_mcp(a: ImportMcpArgs, ctx: &Ctx) -> CallToolResult {
    let spec = ServerSpec {
        name: a.name,
        package: a.package,
        command: a.command,
        args: a.args.unwrap_or_default(),
        url: a.url,
        env: a.env.unwrap_or_default(),
        headers: BTreeMap::new(),
        secrets: a.secrets.map(SecretsSpec::Names),
        capabilities: Some(Capabilities {
            network: a.network.unwrap_or_default(),
            env: Vec::new(),
            read: a.read.unwrap_or_default(),
            write: a.write.unwrap_or_default(),
        }),
        description: None,
    };
    let host = &ctx.host;
    let progress = |p: f64, total: f64, message: String| {
        host.log("info", &message);
        host.progress(p, Some(total), Some(message));
    };
    let specs = [spec];
    let work = servers::add(&ctx.shared.app, &specs, &ctx.actor, host, &progress, None);
    let r = tokio::select! {
        _ = ctx.request.ct.cancelled() => return error_result("import_mcp was cancelled; nothing was committed", None),
        r = work => r,
    };
    match r {
        Ok(out) => {
            ctx.changed();
            json_result(serde_json::json!(out))
        }
        Err(e) => failure(&e, e.hint()),
    }
}
