//! The guide's fixed sections: how to use the toolbox, script tools, WASM tools, MCP servers
//! (the parts `render` does not derive from the toolbox).

pub(crate) const MCP_SERVERS: &str = r#"## MCP servers

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

pub(crate) const SCRIPTS: &str = r#"## Script tools (`register_script`)

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

pub(crate) const WASM: &str = r#"## WASM tools (`build_tool`)

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

pub(crate) const CONVENTIONS: &str = r#"## How to use this toolbox

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
