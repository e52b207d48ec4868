//! The guide: a Markdown document that teaches an AI how to use this toolbox, derived from
//! the index (served as the `toolsmith://guide` resource and printed by `toolsmith guide`).
//! It carries everything an MCP client needs and cannot open elsewhere: the script protocol in
//! brief, a template per language, the WASM calling convention, the tool.toml fields (from
//! the same schema as `docs/tool.schema.json`) and how to reach tools past the list's cap.
//!
//! It reads the toolbox through a `trust::View`: a held tool is its name, who brought it and
//! why it is held, never its description or a skill's instructions.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_config as config;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_sandbox as sandbox;
use toolsmith_toolbox as toolbox;
use toolsmith_trust as trust;

mod texts;

use crate::config::SandboxConfig;
use crate::index::Status;
use crate::manifest::LANGUAGES;
use crate::trust::{Open, Shown, View};
use std::fmt::Write;
use texts::{CONVENTIONS, MCP_SERVERS, SCRIPTS, WASM};

/// Render the guide for the current view of the toolbox, with the sandbox that applies here.
pub fn render(view: &View, sandbox: &SandboxConfig) -> String {
    let mut g = String::new();
    let tools: Vec<Shown> = view.tools().collect();
    let broken: Vec<Open> = view.broken().collect();
    let _ = writeln!(g, "# toolsmith guide\n");
    let _ = writeln!(
        g,
        "This toolbox holds {} tool(s){}. Every tool is a directory `tools/<name>/` in a git \
         repository, described by a hand-editable `tool.toml`. Every change made through toolsmith \
         is one git commit, so any version can be read, compared and restored.\n",
        tools.len(),
        if broken.is_empty() {
            String::new()
        } else {
            format!(" and {} broken one(s)", broken.len())
        }
    );
    g.push_str(CONVENTIONS);
    let _ = writeln!(g, "{}\n", crate::sandbox::guide_line(sandbox));
    let _ = writeln!(
        g,
        "- **Many tools**: `tools/list` shows at most {cap} stored tools: pinned ones first, then the \
         most recently used, then the most recently changed. Reach every other tool with \
         `search_tools` (find it) and `call_tool` (run it), or call it by its own name.\n",
        cap = crate::index::rank::LIST_CAP
    );
    g.push_str(SCRIPTS);
    let langs: Vec<&str> = LANGUAGES.iter().map(|(l, _, _)| *l).collect();
    let _ = writeln!(
        g,
        "Script languages with a known interpreter: {}. Any other interpreter works with `interpreter = [\"cmd\", \"args\"]`.\n",
        langs.join(", ")
    );
    g.push_str(WASM);
    mcp_servers(&mut g, view);
    tool_toml_fields(&mut g);
    let skills = skills(view);
    if !skills.is_empty() {
        let _ = writeln!(
            g,
            "## Skills\n\nInstructions of the imported Agent Skills (each also the resource `{SKILL_URI_PREFIX}<name>`, and a tool of the same name, or a tool per script).\n"
        );
        for Skill {
            name,
            description,
            body,
            tools,
        } in &skills
        {
            let _ = writeln!(g, "### Skill `{name}`\n\n{description}\n");
            if tools.len() > 1 || tools[0] != *name {
                let list: Vec<String> = tools.iter().map(|t| format!("`{t}`")).collect();
                let _ = writeln!(
                    g,
                    "Its tools, one per script: {} (the instructions are also `{SKILL_URI_PREFIX}<tool>`).\n",
                    list.join(", ")
                );
            }
            const MAX: usize = 3000;
            if body.len() > MAX {
                let mut end = MAX;
                while !body.is_char_boundary(end) {
                    end -= 1;
                }
                let _ = writeln!(
                    g,
                    "{}\n\n… (the rest: `{SKILL_URI_PREFIX}{name}`)\n",
                    &body[..end]
                );
            } else {
                let _ = writeln!(g, "{body}\n");
            }
        }
    }

    let _ = writeln!(g, "## Tools in this toolbox\n");
    if tools.is_empty() {
        let _ = writeln!(g, "No tools yet. Create one (see above).\n");
    } else {
        let _ = writeln!(
            g,
            "| name | kind | tags | what it does |\n|---|---|---|---|"
        );
        for t in &tools {
            match t.open().and_then(|o| o.tool()) {
                Some(t) => {
                    let m = &t.manifest;
                    let _ = writeln!(
                        g,
                        "| `{}` | {} | {} | {} |",
                        m.name,
                        m.kind,
                        m.tags.join(", "),
                        m.summary().replace('|', "\\|")
                    );
                }
                None => {
                    let _ = writeln!(
                        g,
                        "| `{}` | held | | not shown until a person trusts it (see Held tools) |",
                        t.name()
                    );
                }
            }
        }
        g.push('\n');
    }
    render_broken(&mut g, &broken);
    g
}

/// The guide, plus the tools that run uncommitted or unrecorded changes (hand edits).
pub fn render_for(
    view: &View,
    toolbox: &crate::toolbox::Toolbox,
    sandbox: &SandboxConfig,
) -> String {
    let mut g = render(view, sandbox);
    let drift = view.drift(toolbox);
    if !drift.is_empty() {
        let _ = writeln!(
            g,
            "## Tools running uncommitted changes\n\nThese tools differ from their committed version (hand edits): calls work{} and say so. Commit or drop the edits with git.\n",
            if toolbox.uncommitted_policy() == crate::toolbox::UncommittedPolicy::Refuse {
                " only after the change is committed (toolsmith.toml refuses them)"
            } else {
                ""
            }
        );
        for (name, d) in &drift {
            let _ = writeln!(g, "- `{name}`: {}", d.describe(name));
        }
        g.push('\n');
    }
    let held: Vec<_> = view
        .tools()
        .filter_map(|s| match s {
            Shown::Held(w) => Some(w),
            Shown::Open(_) => None,
        })
        .collect();
    if !held.is_empty() {
        let _ = writeln!(
            g,
            "## Held tools\n\nThese tools' current versions came from elsewhere (a sync, a pull or an import) unsigned by an allowed key: nothing of them (description, instructions, schemas, files) is shown here and their calls are refused until a person on this machine runs `toolsmith review NAME` and `toolsmith trust NAME`. No meta-tool can trust them.\n"
        );
        for w in &held {
            let h = w.held();
            let _ = writeln!(
                g,
                "- `{}`: {} (commit {} by {})",
                w.name(),
                h.reason,
                h.short,
                w.author()
            );
        }
        g.push('\n');
    }
    g
}

fn render_broken(g: &mut String, broken: &[Open]) {
    if !broken.is_empty() {
        let _ = writeln!(
            g,
            "## Broken tools\n\nThese directories could not be loaded; fix their tool.toml (`toolsmith lint` shows file:line):\n"
        );
        for e in broken.iter().map(Open::entry) {
            if let Status::Broken(diags) = &e.status {
                let first = diags
                    .first()
                    .map(|d| d.message.as_str())
                    .unwrap_or("unknown error");
                let _ = writeln!(g, "- `{}`: {}", e.name, first);
            }
        }
        g.push('\n');
    }
}

/// Where an imported skill's instructions are served.
pub const SKILL_URI_PREFIX: &str = "toolsmith://skills/";

/// One imported Agent Skill: its instructions, and the tools made from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The resource name (`toolsmith://skills/<name>`): the tool's name for a skill that is
    /// one tool; the skill's own name for a skill with a tool per script (the first tool's name
    /// when that is taken).
    pub name: String,
    /// Its description (the front matter's).
    pub description: String,
    /// SKILL.md without its front matter.
    pub body: String,
    /// The tools made from it, by name; each also serves the instructions as
    /// `toolsmith://skills/<tool>`.
    pub tools: Vec<String>,
}

impl Skill {
    /// Whether `toolsmith://skills/<name>` is this skill's instructions.
    pub fn serves(&self, name: &str) -> bool {
        self.name == name || self.tools.iter().any(|t| t == name)
    }
}

/// The imported Agent Skills that are not held. A skill is a tool tagged `skill` whose
/// directory holds a SKILL.md; the tools made from one skill with several scripts (`[origin] script`, the same
/// origin URL, ref and path) are one skill, listed once.
pub fn skills(view: &View) -> Vec<Skill> {
    type Key = (String, Option<String>, Option<String>);
    let mut out: Vec<Skill> = Vec::new();
    let mut groups: Vec<(Key, usize)> = Vec::new();
    for (e, t) in view
        .open_tools()
        .filter(|(_, t)| t.manifest.tags.iter().any(|g| g == "skill"))
    {
        let Ok(text) = std::fs::read_to_string(e.dir().join("SKILL.md")) else {
            continue;
        };
        let tool = t.manifest.name.clone();
        let body = without_front_matter(&text).trim().to_string();
        let Some(o) = t.manifest.origin.as_ref().filter(|o| o.script.is_some()) else {
            out.push(Skill {
                name: tool.clone(),
                description: t.manifest.summary().to_string(),
                body,
                tools: vec![tool],
            });
            continue;
        };
        let key = (o.url.clone(), o.reference.clone(), o.path.clone());
        if let Some((_, i)) = groups.iter().find(|(k, _)| *k == key) {
            out[*i].tools.push(tool);
            continue;
        }
        let (name, description) = skill_front_matter(&text);
        let dir = o.path.as_deref().unwrap_or("");
        let dir = dir.rsplit('/').next().unwrap_or(dir);
        groups.push((key, out.len()));
        out.push(Skill {
            name: crate::names::sanitize(name.as_deref().unwrap_or(dir)),
            description: description.unwrap_or_else(|| t.manifest.summary().to_string()),
            body,
            tools: vec![tool],
        });
    }
    // A skill's name never hides another skill's instructions.
    for i in 0..out.len() {
        let taken = out
            .iter()
            .enumerate()
            .any(|(j, s)| j != i && s.serves(&out[i].name));
        if taken {
            out[i].name = out[i].tools[0].clone();
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The YAML front matter fields `name` and `description` of a SKILL.md (simple scalars).
pub fn skill_front_matter(text: &str) -> (Option<String>, Option<String>) {
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("---") {
        return (None, None);
    }
    let (mut name, mut desc) = (None, None);
    for l in lines {
        if l.trim() == "---" {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim().trim_matches(['"', '\'']).to_string();
            match k.trim() {
                "name" if !v.is_empty() => name = Some(v),
                "description" if !v.is_empty() && v != "|" && v != ">" => desc = Some(v),
                _ => {}
            }
        }
    }
    (name, desc)
}

/// A Markdown text without its leading `---` front matter.
fn without_front_matter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---") else {
        return text;
    };
    match rest.find("\n---") {
        Some(i) => rest[i + 4..].trim_start_matches(['\r', '\n']),
        None => text,
    }
}

/// The MCP server entries and their tools (a held entry is named in the held tools).
fn mcp_servers(g: &mut String, view: &View) {
    g.push_str(MCP_SERVERS);
    let entries: Vec<_> = view
        .open_tools()
        .map(|(_, t)| t)
        .filter(|t| t.manifest.kind == crate::manifest::Kind::Mcp && t.upstream.is_none())
        .collect();
    if entries.is_empty() {
        return;
    }
    let _ = writeln!(g, "The MCP servers here:\n");
    for e in entries {
        let name = &e.manifest.name;
        let tools: Vec<String> = view
            .open_tools()
            .map(|(_, t)| t)
            .filter(|t| t.upstream.as_ref().is_some_and(|u| &u.entry == name))
            .map(|t| format!("`{}`", t.manifest.name))
            .collect();
        let how = match e.manifest.mcp.as_ref() {
            Some(s) if s.url.is_some() => format!("at {}", s.url.as_deref().unwrap_or("")),
            Some(s) => format!("`{}`", s.command.as_deref().unwrap_or("")),
            None => String::new(),
        };
        if tools.is_empty() {
            let _ = writeln!(
                g,
                "- `{name}` ({how}): its tools are not listed yet (they are once it runs)"
            );
        } else {
            let _ = writeln!(g, "- `{name}` ({how}): {}", tools.join(", "));
        }
    }
    g.push('\n');
}

/// The tool.toml fields with their meaning, from the manifest's JSON Schema.
fn tool_toml_fields(g: &mut String) {
    let schema = crate::manifest::json_schema();
    let _ = writeln!(g, "## tool.toml fields\n");
    if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
        for (name, p) in props {
            let desc = p
                .get("description")
                .and_then(|d| d.as_str())
                .unwrap_or("")
                .replace('\n', " ");
            let _ = writeln!(g, "- `{name}`: {desc}");
        }
    }
    let _ = writeln!(
        g,
        "\n`[run]`: `language`, `entry`, `interpreter`, `protocol` (plain / jsonrpc), `worker`, \
         `sandbox` (auto / required / none). `[limits]`: `timeout_ms` (10000), `memory_mb` (256), \
         `output_bytes` (1 MiB). `[capabilities]`: `network`, `env`, `read`, `write` (paths inside \
         TOOLSMITH_ROOTS). `[secrets]`: `NAME = \"what it is for\"` (the value arrives in the \
         environment variable NAME). `[[examples]]`: `input`, `output` (compared as JSON values: 1 equals 1.0) \
         or `output_text`, `description`.\n"
    );
}
