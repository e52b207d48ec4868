//! `execute_code`: run Python or JavaScript that calls stored tools through a `tools` object.
//!
//! The code runs as a script tool (same runner, limits and sandbox) speaking the jsonrpc
//! protocol; each `tools.<name>(args)` is a `tools/call` request that the host answers by
//! running the real tool. Intermediate data stays in the script; only the final result
//! returns. Calls are counted and their nesting depth is limited.

use crate::app::App;
use crate::error::{HostCode, HostError};
use crate::index::Tool;
use crate::manifest::{self, Kind, Manifest, Protocol};
use crate::runner::CallOutput;
use crate::runner::host::{Ask, Host, ToolRequest};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Most tool calls one execute_code run may make.
pub const MAX_CALLS: usize = 1000;
/// Deepest nesting of tools calling tools below execute_code.
pub const MAX_DEPTH: usize = 4;

/// Languages execute_code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Python 3.
    Python,
    /// JavaScript on Node.js.
    JavaScript,
}

impl std::str::FromStr for Language {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "python" | "py" => Ok(Language::Python),
            "javascript" | "js" | "node" => Ok(Language::JavaScript),
            other => Err(format!(
                "execute_code runs python or javascript, not {other:?}"
            )),
        }
    }
}

const PY_PRELUDE: &str = r#"import json, sys, traceback
class ToolError(Exception):
    pass
_n = [0]
def _send(msg):
    sys.stdout.write(json.dumps(msg) + "\n"); sys.stdout.flush()
def _rpc(method, params):
    _n[0] += 1
    rid = "x%d" % _n[0]
    _send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    while True:
        line = sys.stdin.readline()
        if not line:
            raise ToolError("the host closed the connection")
        msg = json.loads(line)
        if msg.get("id") == rid:
            if "error" in msg:
                raise ToolError(msg["error"].get("message", "tool error"))
            return msg.get("result")
class _Tools:
    def call(self, name, args=None):
        return _rpc("tools/call", {"name": name, "arguments": args or {}})
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda args=None, **kw: self.call(name, args if args is not None else kw)
tools = _Tools()
def log(message):
    _send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info", "message": str(message)}})
_req = json.loads(sys.stdin.readline())
"#;

const PY_MAIN: &str = r#"
_ns = {"tools": tools, "log": log, "ToolError": ToolError, "args": _req["params"].get("arguments", {}).get("args", {})}
_body = "\n".join("    " + l for l in _SOURCE.splitlines()) or "    pass"
try:
    exec("def __main():\n" + _body + "\n    return locals().get('result')\n", _ns)
    _res = _ns["__main"]()
    _send({"jsonrpc": "2.0", "id": _req["id"], "result": _res})
except Exception as e:
    _send({"jsonrpc": "2.0", "id": _req["id"], "error": {"code": -32000, "message": "%s: %s" % (type(e).__name__, e), "data": traceback.format_exc()}})
"#;

const JS_PRELUDE: &str = r#"const readline = require('readline');
const rl = readline.createInterface({ input: process.stdin });
const pending = new Map();
let first = null, n = 0, resolveFirst;
const firstLine = new Promise(r => { resolveFirst = r; });
rl.on('line', line => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (first === null) { first = msg; resolveFirst(msg); return; }
  const p = pending.get(msg.id);
  if (p) { pending.delete(msg.id); msg.error ? p.reject(new Error(msg.error.message)) : p.resolve(msg.result); }
});
const send = m => process.stdout.write(JSON.stringify(m) + '\n');
function rpc(method, params) {
  const id = 'x' + (++n);
  return new Promise((resolve, reject) => { pending.set(id, { resolve, reject }); send({ jsonrpc: '2.0', id, method, params }); });
}
const tools = new Proxy({}, { get: (_, name) => name === 'call'
  ? (tool, a) => rpc('tools/call', { name: tool, arguments: a || {} })
  : (a) => rpc('tools/call', { name: String(name), arguments: a || {} }) });
function log(m) { send({ jsonrpc: '2.0', method: 'log', params: { level: 'info', message: String(m) } }); }
"#;

fn python_source(code: &str) -> String {
    format!("{PY_PRELUDE}_SOURCE = {}\n{PY_MAIN}", json!(code))
}

fn js_source(code: &str) -> String {
    format!(
        "{JS_PRELUDE}(async () => {{\n  const req = await firstLine;\n  const args = (req.params.arguments || {{}}).args || {{}};\n  let out;\n  try {{\n    const result = await (async () => {{\n{code}\n    }})();\n    out = {{ jsonrpc: '2.0', id: req.id, result: result === undefined ? null : result }};\n  }} catch (e) {{\n    out = {{ jsonrpc: '2.0', id: req.id, error: {{ code: -32000, message: String(e && e.message || e), data: String(e && e.stack || '') }} }};\n  }}\n  send(out);\n  rl.close();\n  process.exit(0);\n}})();\n"
    )
}

/// The host side during execute_code: answers `tools/call` by running the real tool, counting
/// calls and limiting depth; passes logs and progress to the outer host.
struct CountingHost<'a> {
    app: &'a App,
    outer: &'a dyn Host,
    calls: &'a AtomicUsize,
    max_calls: usize,
    depth: usize,
}

impl Host for CountingHost<'_> {
    fn log(&self, level: &str, message: &str) {
        self.outer.tool_log("execute_code", level, message);
    }
    fn tool_log(&self, tool: &str, level: &str, message: &str) {
        self.outer.tool_log(tool, level, message);
    }
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.outer.progress(progress, total, message);
    }
    // Tools called from the code act for the same caller and ask the same person.
    fn actor(&self) -> Option<(String, Option<String>)> {
        self.outer.actor()
    }
    fn ask_person<'b>(&'b self, question: Ask) -> BoxFuture<'b, Result<Value, HostError>> {
        self.outer.ask_person(question)
    }
    fn elicitation_complete(&self, elicitation_id: &str) {
        self.outer.elicitation_complete(elicitation_id);
    }
    fn tool_question<'b>(
        &'b self,
        tool: &'b str,
        params: Value,
    ) -> BoxFuture<'b, Result<Value, HostError>> {
        self.outer.tool_question(tool, params)
    }
    fn redact(&self, value: &mut Value) {
        self.outer.redact(value);
    }
    fn request(&self, request: ToolRequest) -> BoxFuture<'_, Result<Value, HostError>> {
        Box::pin(async move {
            let (name, arguments) = match request {
                ToolRequest::CallTool { name, arguments } => (name, arguments),
                // The code's own question: shown as execute_code's, never as toolsmith's.
                ToolRequest::Question(params) => {
                    return self.outer.tool_question("execute_code", params).await;
                }
                request => return self.outer.request(request).await,
            };
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            if n > self.max_calls {
                return Err(HostError::new(
                    HostCode::Refused,
                    format!(
                        "execute_code may make at most {} tool calls",
                        self.max_calls
                    ),
                ));
            }
            if self.depth >= MAX_DEPTH {
                return Err(HostError::new(
                    HostCode::Refused,
                    format!("tools may call tools at most {MAX_DEPTH} deep inside execute_code"),
                ));
            }
            let inner = CountingHost {
                app: self.app,
                outer: self.outer,
                calls: self.calls,
                max_calls: self.max_calls,
                depth: self.depth + 1,
            };
            self.app.call_for_script(&name, arguments, &inner).await
        })
    }
}

/// The outcome of execute_code: the final result and how many tool calls it made.
#[derive(Debug)]
pub struct Executed {
    /// What the code returned (its final result).
    pub output: CallOutput,
    /// How many stored tools it called.
    pub tool_calls: usize,
}

/// Run code. `args` is visible to the code as `args`; `timeout_ms` bounds the whole run.
pub async fn run(
    app: &App,
    language: Language,
    code: &str,
    args: Value,
    timeout_ms: Option<u64>,
    max_calls: Option<usize>,
    host: &dyn Host,
) -> Result<Executed, crate::app::CallError> {
    let scratch = tempfile::Builder::new()
        .prefix("toolsmith-exec-")
        .tempdir()
        .map_err(|e| crate::runner::RunError::Start {
            tool: "execute_code".into(),
            message: format!("cannot create a temp dir: {e}"),
        })?;
    let (file, source, lang) = match language {
        Language::Python => ("main.py", python_source(code), "python"),
        Language::JavaScript => ("main.js", js_source(code), "node"),
    };
    std::fs::write(scratch.path().join(file), source).map_err(|e| {
        crate::runner::RunError::Start {
            tool: "execute_code".into(),
            message: format!("cannot write the code: {e}"),
        }
    })?;
    let mut m = Manifest {
        format: manifest::FORMAT_VERSION,
        name: "execute_code".into(),
        description: "code run by execute_code".into(),
        kind: Kind::Script,
        version: None,
        tags: vec![],
        pinned: false,
        run: Default::default(),
        input_schema: None,
        input_schema_file: None,
        output_schema: None,
        output_schema_file: None,
        annotations: Default::default(),
        dependencies: Default::default(),
        limits: Default::default(),
        capabilities: Default::default(),
        secrets: Default::default(),
        examples: vec![],
        hashes: Default::default(),
        origin: None,
        steps: vec![],
        mcp: None,
    };
    m.run.language = Some(lang.into());
    m.run.entry = Some(file.into());
    m.run.protocol = Some(Protocol::Jsonrpc);
    m.limits.timeout_ms = Some(timeout_ms.unwrap_or(30_000).clamp(1, 600_000));
    let tool = Tool {
        manifest: m,
        input_schema: Default::default(),
        output_schema: None,
        warnings: vec![],
        validator: Default::default(),
        upstream: None,
    };
    let calls = AtomicUsize::new(0);
    let counting = CountingHost {
        app,
        outer: host,
        calls: &calls,
        max_calls: max_calls.unwrap_or(MAX_CALLS).min(MAX_CALLS),
        depth: 0,
    };
    let output = app
        .scripts()
        .call(
            scratch.path(),
            &crate::runner::Granted::defaults(tool, crate::index::Origin::Scratch),
            &json!({ "args": args }),
            &counting,
        )
        .await?;
    Ok(Executed {
        output,
        tool_calls: calls.load(Ordering::SeqCst),
    })
}
