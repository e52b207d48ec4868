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

use crate::config::SandboxConfig;
use crate::index::Status;
use crate::manifest::LANGUAGES;
use crate::trust::{Open, Shown, View};
use std::fmt::Write;

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

const MCP_SERVERS: &str = r#"## MCP servers

Another MCP server can live in this toolbox as an entry (`kind = "mcp"`): its tools become
tools here, named `<entry>__<tool>`, listed, searched, called directly, with `call_tool`, from
pipelines and from `execute_code` like any other. Add one with `import_mcp` (or, in a
terminal, `toolsmith add-mcp NAME --npm PKG@VER -- COMMAND ARGS`, or `toolsmith import
mcp.json` for an editor's configuration). Its package is installed and pinned like a script's
dependencies; its server runs in the sandbox with the default grants (no network, no
environment, its own scratch directory) and starts on first use, then stays warm while used.
What it needs beyond that (`[capabilities]` network or paths, `[secrets]`; a remote `url` is
network to its host) waits for the person's approval. Its tools' descriptions are what the
server says (quoted, cut at 1024 characters), not instructions from toolsmith. Calling the
entry itself (`call_tool NAME`) asks its server for its tools again.

"#;

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

const SCRIPTS: &str = r#"## Script tools (`register_script`)

**plain** (the simplest; chosen when the source does not speak JSON-RPC): the arguments arrive
as one JSON object on stdin, followed by end of input; print the result on stdout (JSON
becomes structured content, anything else is text); stderr lines are logs; a non-zero exit is
an error whose message is the end of stderr (or stdout).

| language | a complete plain tool |
|---|---|
| python | `import json, sys` / `args = json.load(sys.stdin)` / `print(json.dumps({"sum": args["a"] + args["b"]}))` |
| node | `const args = JSON.parse(require('fs').readFileSync(0, 'utf8'));` / `console.log(JSON.stringify({sum: args.a + args.b}));` |
| ruby | `require 'json'` / `args = JSON.parse($stdin.read)` / `puts JSON.generate({'sum' => args['a'] + args['b']})` |
| bash | `input=$(cat)` / `a=$(echo "$input" \| jq .a)` (or sed) / `echo "{"sum": $((a + b))}"` |
| perl | `use JSON::PP;` / `my $a = decode_json(do { local $/; <STDIN> });` / `print encode_json({sum => $a->{a} + $a->{b}});` |
| php | `<?php $a = json_decode(stream_get_contents(STDIN), true);` / `echo json_encode(['sum' => $a['a'] + $a['b']]);` |

**jsonrpc** (for logs, progress, memory, calling other tools, asking the user or the model, warm
workers): the host writes ONE line `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":
{"arguments":{...},"context":{"tool":...}}}` and keeps stdin open for its answers. The script
writes JSON-RPC lines on stdout: notifications `{"jsonrpc":"2.0","method":"log","params":
{"level":"info","message":"..."}}` and `"progress"` (`progress`, `total`, `message`); requests
with string ids (`"c1"`) for `memory/get|set|list|delete`, `tools/call`, `resources/read`,
`elicitation/create`, `sampling/createMessage`, each answered on stdin; and last the response
`{"jsonrpc":"2.0","id":0,"result":...}` (or `"error":{"code":-32000,"message":"..."}`). Nothing
else on stdout. A script that reads stdin to the end never sees that end under jsonrpc: that is
a "protocol mismatch" — use plain. The Python helper (Node and Ruby have the same, from
`toolsmith new NAME --lang node|ruby`): write `def run(args, ctx): return {...}` above it; it
offers `log(msg)`, `progress(done, total, msg)` and `call_host(method, params)`.

```python
# --- toolsmith jsonrpc helper (keep as is) ---
import json, sys, itertools
_ids = itertools.count(1)
def _send(msg):
    sys.stdout.write(json.dumps(msg, ensure_ascii=False) + "
"); sys.stdout.flush()
def log(msg, level="info"):
    _send({"jsonrpc": "2.0", "method": "log", "params": {"level": level, "message": str(msg)}})
def progress(done, total=None, message=None):
    _send({"jsonrpc": "2.0", "method": "progress", "params": {"progress": done, "total": total, "message": message}})
def call_host(method, params=None):
    cid = f"c{next(_ids)}"
    _send({"jsonrpc": "2.0", "id": cid, "method": method, "params": params or {}})
    while True:
        resp = json.loads(sys.stdin.readline())
        if resp.get("id") == cid:
            if "error" in resp:
                raise RuntimeError(resp["error"].get("message", "host error"))
            return resp.get("result")
def _main():
    import os
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        if line.strip():
            req = json.loads(line); p = req.get("params") or {}
            try:
                _send({"jsonrpc": "2.0", "id": req.get("id", 0), "result": run(p.get("arguments") or {}, p.get("context") or {})})
            except Exception as e:
                _send({"jsonrpc": "2.0", "id": req.get("id", 0), "error": {"code": -32000, "message": str(e)}})
            if os.environ.get("TOOLSMITH_WORKER") != "1":
                return
if __name__ == "__main__":
    _main()
```

`protocol` is detected when not given (a source mentioning `jsonrpc`, as the helper does, is
jsonrpc; anything else plain) and shown in the result and in `get_tool`. **Dependencies**:
`{"pip": ["six==1.16.0"], "npm": {"left-pad": "1.3.0"}}` (npm also as `["left-pad@1.3.0"]`),
installed per tool and pinned in `requirements.lock` / `package-lock.json`; registering again
with the same dependencies reuses the environment. Scripts run in a scratch directory with a
cleared environment, sandboxed (no network unless `capabilities.network`: `true` for every host,
or a list like `["api.github.com"]` reached through a filtering proxy in `HTTPS_PROXY`), with a
timeout.

"#;

const WASM: &str = r#"## WASM tools (`build_tool`)

Rust `src/main.rs`, compiled for wasm32-wasip1 (crates from `crates`, default `serde_json`):
read the arguments as ONE JSON document on stdin, print the result on stdout (JSON becomes
structured content), write logs to stderr, exit non-zero for an error (its message is stderr).
No filesystem, network or environment unless `capabilities` grants it. A failed build returns
the compiler errors with line numbers and changes nothing.

```rust
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let args: serde_json::Value = serde_json::from_str(&s).unwrap_or_default();
    let text = args["text"].as_str().unwrap_or("");
    println!("{}", serde_json::json!({"words": text.split_whitespace().count()}));
}
```

**Typed (a WASI 0.2 component)**: give `world` (e.g. `"tool"`) and `source` is `src/lib.rs`
with wit-bindgen. Without `wit`, toolsmith writes `wit/world.wit` from `input_schema` and
`output_schema`: one function `call`, its parameters the input properties in alphabetical order
(`string`, `integer`→`s64`, `number`→`f64`, `boolean`, `array`→`list`, a string `enum` → an
enum, not required or `null` beside a type → `option`, `prefixItems` → a tuple,
`additionalProperties` → `list<tuple<string, T>>`, `anyOf` of JSON types → a variant with a case
per type, a free-form value (no `type`) → a `string` of its JSON), returning
`result<output, string>` (`output`: the output schema's type). Return `Err` for an error. Or give the WIT as `wit` (and `export` when it
exports several functions): the WIT types then are the schemas. Arguments are checked against
them. Network: declare `capabilities.network = ["api.example.com"]` (the person approves it);
requests go out through `wasi:http` only (e.g. `crates = {"wasip2": "1"}`,
`wasip2::http::outgoing_handler::handle`), to the listed hosts only; any other request gets
`ErrorCode::HttpRequestDenied`. There are no sockets or name lookups in a component.

**Python as a component**: add `language = "python"` (or give `register_script` the same
source with `component = true`); `source` is `app.py`: a plain module-level function (named
after the tool, or `call`, or the only one), returning any JSON value (dict, list, str, int,
float, bool, None); raise for the tool's error (its traceback is the message). The input
schema's properties are its parameters by name; leave `input_schema` out and its annotations
give it (`int`, `str`, `list[int]`, `tuple[int, str]`, `dict[str, float]`, `Optional[str]`,
`int | str`, `Any`; a default makes a parameter optional). Standard library only (imported
anywhere in the file; `socket`, `subprocess`, `threading`, `asyncio` and the like are refused
at build: use a script), no pip packages. It needs no OS sandbox.

```python
import hashlib

def digest(text: str, times: int = 1) -> dict:
    if times < 1:
        raise ValueError("times must be at least 1")      # the tool's error
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "times": times}
```

**JavaScript as a component**: `language = "javascript"` (or `register_script` with
`component = true`); `source` is `app.js`, an ES module exporting `call` (no npm packages, no
Node.js modules: SpiderMonkey with `fetch` and the web APIs). A record is a plain object, an
enum case its name (`"quiet"`), an absent option `undefined`, an integer a number; throw for
the tool's error:

```js
export function call(text, times) {       // parameters in alphabetical order
  const n = times ?? 1;
  if (n < 0) throw new Error("times must not be negative");   // the tool's error
  return { words: text.split(/\s+/).filter((w) => w).length * n };
}
```

```rust
wit_bindgen::generate!({ world: "tool", path: "wit" });
struct Tool;
impl Guest for Tool {
    // input_schema: {"required": ["text"], "properties": {"text": {"type": "string"}, "times": {"type": "integer"}}}
    // output_schema: {"properties": {"words": {"type": "integer"}}, "required": ["words"]}
    fn call(text: String, times: Option<i64>) -> Result<Output, String> {
        Ok(Output { words: text.split_whitespace().count() as i64 * times.unwrap_or(1) })
    }
}
export!(Tool);
```

"#;

const CONVENTIONS: &str = r#"## How to use this toolbox

- **Find a tool**: `list_tools` gives a compact table of contents (filter by `kind` or `tag`);
  `search_tools` finds tools by what they do, asked in plain words or by (part of) a name: it
  ranks by meaning and by words together, and each result says which fields matched; `get_tool` returns everything about one tool (manifest, schemas, source, examples,
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
  in `[capabilities]`. Ask for the network as the domains the tool needs
  (`network = ["api.github.com"]`, reached through the proxy in `HTTPS_PROXY`) rather than
  `network = true`: a person approves a short list more readily. Limits (`timeout_ms`, `memory_mb`, `output_bytes`) have safe defaults.
- Anything beyond the defaults (capabilities, secrets, higher limits, `sandbox = "none"`) waits
  for the person's approval on their machine, given outside the MCP client: in their terminal
  (`toolsmith console`, a page in their browser, or `toolsmith approve NAME`). An answer
  through the client never approves. Any change asks again.
  Examples run before the commit with the defaults only.
- Never put an API key or token in a tool's files (the commit is refused): declare it in
  `[secrets]` (`register_script` takes `secrets`), read it from the environment variable of
  that name, and ask the person to run `toolsmith secret set NAME`. Values are shown as
  `[secret NAME]` in results.
- Set annotations honestly: `read_only`, `destructive`, `idempotent`, `open_world`.

"#;
