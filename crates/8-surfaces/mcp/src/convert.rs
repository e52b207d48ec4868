//! From index entries to MCP tool definitions, and which stored tools are exposed.

use crate::index::rank::Usage;
use crate::index::{Index, Tool as IndexTool};
use crate::trust::Shown;
use rmcp::model::{Tool, ToolAnnotations};
use std::sync::Arc;

/// Which stored tools appear in `tools/list` as tools of their own (meta-tools always do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Exposure {
    /// Every valid tool while there are at most `ALL_CAP`; past that, the `ALL_CAP` ranked
    /// first (pinned, then recently used, then recently changed: `index::rank`).
    #[default]
    All,
    /// Only tools with `pinned = true`.
    Pinned,
    /// None: meta-tools only; stored tools are reached with `call_tool`.
    None,
}

/// Most stored tools `All` lists, so clients are not flooded; the rest are reached with
/// `search_tools` and `call_tool`.
pub const ALL_CAP: usize = crate::index::rank::LIST_CAP;

impl Exposure {
    /// The stored tools to list: in name order when all fit, else in rank order.
    pub fn select<'a>(self, index: &'a Index, usage: &Usage) -> Vec<&'a IndexTool> {
        // An MCP entry is listed through its server's tools, not as a tool of its own.
        let own = |t: &&IndexTool| {
            !(t.manifest.kind == crate::manifest::Kind::Mcp && t.upstream.is_none())
        };
        match self {
            Exposure::All => crate::index::rank::ranked(index, usage, ALL_CAP)
                .into_iter()
                .filter(own)
                .collect(),
            Exposure::Pinned => index
                .tools()
                .filter(|t| t.manifest.pinned)
                .filter(own)
                .collect(),
            Exposure::None => Vec::new(),
        }
    }

    /// Whether one stored tool is listed on its own.
    pub fn exposes(self, index: &Index, usage: &Usage, name: &str) -> bool {
        self.select(index, usage)
            .iter()
            .any(|t| t.manifest.name == name)
    }
}

/// The MCP definition of a stored tool as the view shows it: from its tool.toml, or, for a
/// held tool, its name, why it is held and an empty object schema.
pub fn mcp_tool(shown: Shown) -> Tool {
    let t = match shown {
        Shown::Open(o) => match o.tool() {
            Some(t) => t,
            None => return withheld(o.name(), "a broken tool directory".into()),
        },
        Shown::Held(w) => return withheld(w.name(), w.note()),
    };
    let m = &t.manifest;
    let mut tool = Tool::new(
        m.name.clone(),
        m.description.clone(),
        Arc::clone(&t.input_schema),
    );
    if let Some(title) = &m.annotations.title {
        tool = tool.with_title(title.clone());
    }
    let a = &m.annotations;
    let mut ann = match &a.title {
        Some(title) => ToolAnnotations::with_title(title.clone()),
        None => ToolAnnotations::new(),
    };
    if let Some(v) = a.read_only {
        ann = ann.read_only(v);
    }
    if let Some(v) = a.destructive {
        ann = ann.destructive(v);
    }
    if let Some(v) = a.idempotent {
        ann = ann.idempotent(v);
    }
    if let Some(v) = a.open_world {
        ann = ann.open_world(v);
    }
    tool = tool.with_annotations(ann);
    if let Some(out) = &t.output_schema
        && out.get("type").and_then(|v| v.as_str()) == Some("object")
    {
        tool = tool.with_raw_output_schema(Arc::clone(out));
    }
    tool
}

/// A tool of which only the name and `note` are shown.
fn withheld(name: &str, note: String) -> Tool {
    let mut schema = serde_json::Map::new();
    schema.insert("type".into(), "object".into());
    Tool::new(name.to_string(), note, Arc::new(schema))
}
