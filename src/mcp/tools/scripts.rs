//! The `register_script` meta-tool: store a script tool in any language (Python, Node, Ruby,
//! Bash, Perl, PHP or any interpreter) with its dependencies, installed and pinned, its examples
//! run before the commit, and progress notifications while pip or npm work.

use super::Ctx;
use super::core::{error_result, json_result};
use crate::deps::register::{self, ScriptSpec};
use crate::runner::script::Host;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

pub const NAMES: &[&str] = &["register_script"];

const DESCRIPTION: &str = "Store a new script tool, or update one, in any language: python, node, ruby, bash, perl, php, or any interpreter command. \
The tool directory (tool.toml, the code, lockfiles) becomes one git commit; the examples run before it and a failing example commits nothing. \
Protocol \"jsonrpc\" (default): the script reads ONE JSON-RPC request line on stdin {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/call\",\"params\":{\"arguments\":{...},\"context\":{...}}} \
and answers with {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":...} (or \"error\":{\"code\":-32000,\"message\":...}) on stdout; meanwhile it may send \"log\"/\"progress\" notifications \
and requests with string ids (\"c1\") to the host: memory/get|set|list|delete, tools/call, resources/read, elicitation/create, sampling/createMessage. \
Protocol \"plain\": JSON arguments on stdin, the result printed on stdout. The templates (toolsmith://guide) contain a ready helper per language. \
Dependencies: pip requirements or npm packages (\"@scope/name\" works); they are installed per tool and the exact versions are committed as requirements.lock / package-lock.json. \
Scripts run with a cleared environment in a scratch directory, inside the strongest sandbox this machine offers (bubblewrap, else Landlock+seccomp, Seatbelt on macOS: no network unless capabilities.network, no home directory, writes only to scratch and declared paths) with a timeout; where none is available they are refused unless the person started toolsmith with --allow-unsandboxed. The result's `sandbox` says which applies.";

fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["name", "code", "description"],
        "properties": {
            "name": {"type": "string", "description": "Tool name: lowercase letters, digits, '_' and '-', starting with a letter"},
            "code": {"type": "string", "description": "The source of the entry file"},
            "description": {"type": "string", "description": "What the tool does: what goes in, what comes out"},
            "language": {"type": "string", "enum": ["python", "node", "ruby", "bash", "perl", "php", "other"], "description": "The language; or give `interpreter`"},
            "interpreter": {"type": "array", "items": {"type": "string"}, "description": "Explicit interpreter command and leading arguments, e.g. [\"lua5.4\"]; the entry path is appended"},
            "entry": {"type": "string", "description": "Entry file name (default main.py, main.js, main.rb, main.sh, main.pl, main.php)"},
            "protocol": {"type": "string", "enum": ["jsonrpc", "plain"], "description": "jsonrpc (default) or plain"},
            "worker": {"type": "boolean", "description": "Keep a warm worker process between calls (jsonrpc; the template helpers support it)"},
            "sandbox": {"type": "string", "enum": ["auto", "required", "none"], "description": "auto (default): the strongest sandbox available, refused when there is none (unless the person allowed unsandboxed runs); required: never unsandboxed; none: refused unless the person started toolsmith with --allow-unsandboxed"},
            "dependencies": {"type": "object", "description": "Packages to install for this tool", "properties": {
                "pip": {"type": "array", "items": {"type": "string"}, "description": "pip requirements, e.g. [\"six==1.16.0\"]"},
                "npm": {"type": "object", "additionalProperties": {"type": "string"}, "description": "npm name → version, e.g. {\"left-pad\": \"1.3.0\", \"@scope/pkg\": \"1.0.0\"}"}
            }},
            "input_schema": {"type": "object", "description": "JSON Schema of the arguments (an object schema)"},
            "output_schema": {"type": "object", "description": "JSON Schema of the structured result"},
            "annotations": {"type": "object", "properties": {
                "title": {"type": "string"}, "read_only": {"type": "boolean"}, "destructive": {"type": "boolean"},
                "idempotent": {"type": "boolean"}, "open_world": {"type": "boolean"}}},
            "limits": {"type": "object", "properties": {
                "timeout_ms": {"type": "integer", "minimum": 1}, "memory_mb": {"type": "integer", "minimum": 1},
                "output_bytes": {"type": "integer", "minimum": 1}}},
            "capabilities": {"type": "object", "properties": {
                "network": {"type": "boolean"}, "env": {"type": "array", "items": {"type": "string"}},
                "read": {"type": "array", "items": {"type": "string"}}, "write": {"type": "array", "items": {"type": "string"}}}},
            "examples": {"type": "array", "description": "1–3 input → expected output pairs, run before the commit", "items": {"type": "object", "required": ["input"], "properties": {
                "description": {"type": "string"}, "input": {"type": "object"}, "output": {}, "output_text": {"type": "string"}}}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "version": {"type": "string"}
        }
    })
}

/// The MCP definition.
pub fn definitions() -> Vec<Tool> {
    let Value::Object(schema) = schema() else {
        return Vec::new();
    };
    vec![
        Tool::new("register_script", DESCRIPTION, Arc::new(schema))
            .with_title("Register a script tool")
            .with_annotations(
                ToolAnnotations::with_title("Register a script tool")
                    .read_only(false)
                    .destructive(false)
                    .idempotent(true)
                    .open_world(true),
            ),
    ]
}

/// Run `register_script`. None for other names.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    if name != "register_script" {
        return None;
    }
    let spec: ScriptSpec = match serde_json::from_value(Value::Object(args)) {
        Ok(s) => s,
        Err(e) => {
            return Some(error_result(
                format!("invalid register_script arguments: {e}"),
                Some("required: name, code, description; see the tool's input schema".into()),
            ));
        }
    };
    let host = &ctx.host;
    let progress = |p: f64, total: f64, message: String| {
        host.log("info", &message);
        host.progress(p, Some(total), Some(message));
    };
    let work = register::register(&ctx.shared.app, &spec, &ctx.actor, host, &progress);
    let r = tokio::select! {
        _ = ctx.request.ct.cancelled() => return Some(error_result("register_script was cancelled; nothing was committed", None)),
        r = work => r,
    };
    Some(match r {
        Ok(out) => {
            ctx.changed();
            let mut v = json!(out);
            // The sandbox the tool gets on this machine, so the client and the person see it.
            if let Ok(t) = ctx.shared.app.tool(&out.name) {
                v["sandbox"] = crate::runner::sandbox::describe(&t.manifest);
            }
            json_result(v)
        }
        Err(e) => error_result(&e, e.hint()),
    })
}
