//! The guide: a Markdown document that teaches an AI how to use this toolbox, derived from
//! the index (served as the `toolsmith://guide` resource and printed by `toolsmith guide`).

use crate::index::{Index, Status};
use crate::manifest::LANGUAGES;
use std::fmt::Write;

/// Render the guide for the current index.
pub fn render(index: &Index) -> String {
    let mut g = String::new();
    let tools: Vec<_> = index.tools().collect();
    let broken: Vec<_> = index.broken().collect();
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
    let _ = writeln!(g, "{}\n", crate::runner::sandbox::guide_line());
    let langs: Vec<&str> = LANGUAGES.iter().map(|(l, _, _)| *l).collect();
    let _ = writeln!(
        g,
        "Script languages with a known interpreter: {}. Any other interpreter works with `interpreter = [\"cmd\", \"args\"]`.\n",
        langs.join(", ")
    );

    let _ = writeln!(g, "## Tools in this toolbox\n");
    if tools.is_empty() {
        let _ = writeln!(g, "No tools yet. Create one (see above).\n");
    } else {
        let _ = writeln!(
            g,
            "| name | kind | tags | what it does |\n|---|---|---|---|"
        );
        for t in &tools {
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
        g.push('\n');
    }
    render_broken(&mut g, &broken);
    g
}

/// The guide, plus the tools that run uncommitted or unrecorded changes (hand edits).
pub fn render_for(index: &Index, toolbox: &crate::toolbox::Toolbox) -> String {
    let mut g = render(index);
    let drift = toolbox.drift_report(index);
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
    g
}

fn render_broken(g: &mut String, broken: &[&crate::index::Entry]) {
    if !broken.is_empty() {
        let _ = writeln!(
            g,
            "## Broken tools\n\nThese directories could not be loaded; fix their tool.toml (`toolsmith lint` shows file:line):\n"
        );
        for e in broken {
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

const CONVENTIONS: &str = r#"## How to use this toolbox

- **Find a tool**: `list_tools` gives a compact table of contents (filter by `kind` or `tag`);
  `search_tools` ranks tools by a keyword query over names, tags, descriptions and argument
  names; `get_tool` returns everything about one tool (manifest, schemas, source, examples,
  version).
- **Call a tool**: each tool is also an MCP tool under its own name. If your client does not
  refresh its tool list, use `call_tool` with `{"name": "...", "arguments": {...}}`.
- **Create a tool**: write Rust for WebAssembly with `build_tool` (fast, sandboxed, no
  filesystem or network unless granted), or a script in any language with `register_script`.
  Prefer WASM for pure computation, a script when you need a library from pip or npm, a
  pipeline to chain existing tools, and `execute_code` for one-off glue code.
- **Change a tool**: building or registering an existing name updates it as a new version.
  `tool_history`, `diff_tool` and `rollback_tool` work on the git history; nothing is lost.

## Conventions

- Names: lowercase letters, digits, `_` and `-`, starting with a letter, at most 64 characters.
- Arguments arrive as one JSON object (on stdin for WASM and plain scripts; as `params.arguments`
  of a JSON-RPC request for `jsonrpc` scripts). Print the result as JSON on stdout: a JSON
  result becomes structured content, anything else is text. Write diagnostics to stderr.
- Declare an `input_schema` (an object schema) with a `description` on every property, and an
  `output_schema` when the result is structured.
- Add `[[examples]]` (input → expected output): they are run before a change is committed.
- Capabilities (network, environment variables, filesystem paths) are denied unless declared
  in `[capabilities]`. Limits (`timeout_ms`, `memory_mb`, `output_bytes`) have safe defaults.
- Set annotations honestly: `read_only`, `destructive`, `idempotent`, `open_world`.

"#;
