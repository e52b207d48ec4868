//! The `build_tool` meta-tool: build a Rust program into a WASM tool and commit it, with
//! progress and log notifications while cargo runs and cancellation that stops cargo.

use super::Ctx;
use super::core::{error_result, json_result};
use crate::build::{self, BuildError, BuildRequest};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

/// Names of the meta-tools in this module.
pub const NAMES: &[&str] = &["build_tool"];

fn obj(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

const DESCRIPTION: &str = "Build a Rust program into a WebAssembly tool and store it (one git commit). \
The program is src/main.rs with a `fn main`: it reads the arguments as ONE JSON document on stdin and prints \
the result on stdout (JSON becomes structured output); stderr lines become logs; a non-zero exit is an error. \
No filesystem, network or environment unless `capabilities` grants them. It is compiled with cargo for \
wasm32-wasip1 (crates from `crates`, default serde_json), its `examples` are run, and only then is it \
committed; a failed build returns the compiler errors with line numbers and changes nothing. Building an \
existing name updates it (fields left out stay as they were; without `source` the stored source is rebuilt).";

/// The MCP definition of `build_tool`.
pub fn definitions() -> Vec<Tool> {
    let json_object = json!({"type": "object", "description": "A JSON Schema (an object schema)", "additionalProperties": true});
    let string_list = json!({"type": "array", "items": {"type": "string"}});
    let input = json!({
        "type": "object",
        "required": ["name"],
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z][a-z0-9_-]*$", "maxLength": 64,
                     "description": "Tool name (lowercase letters, digits, '_' and '-'; starts with a letter)"},
            "source": {"type": "string", "description": "The Rust source of src/main.rs: a program with `fn main` that reads JSON arguments from stdin and prints the result to stdout. Required for a new tool; leave out to rebuild the stored source."},
            "files": {"type": "object", "additionalProperties": {"type": "string"},
                      "description": "Extra source files by relative path, e.g. {\"src/parse.rs\": \"...\"} (declare them with `mod parse;` in main.rs)"},
            "description": {"type": "string", "description": "What the tool does: what goes in and what comes out. Required for a new tool."},
            "version": {"type": "string", "description": "Free-form version, e.g. \"1.0.0\""},
            "tags": string_list.clone(),
            "crates": {
                "type": "object",
                "description": "Crate dependencies: name → version requirement, or {version, features, default_features}. Default for a new tool: {\"serde_json\": \"1\"}. Pass {} for none.",
                "additionalProperties": {
                    "oneOf": [
                        {"type": "string"},
                        {"type": "object", "required": ["version"], "additionalProperties": false, "properties": {
                            "version": {"type": "string"},
                            "features": string_list.clone(),
                            "default_features": {"type": "boolean"}
                        }}
                    ]
                }
            },
            "input_schema": json_object.clone(),
            "output_schema": json_object,
            "annotations": {"type": "object", "additionalProperties": false, "properties": {
                "title": {"type": "string"},
                "read_only": {"type": "boolean"},
                "destructive": {"type": "boolean"},
                "idempotent": {"type": "boolean"},
                "open_world": {"type": "boolean"}
            }},
            "limits": {"type": "object", "additionalProperties": false, "properties": {
                "timeout_ms": {"type": "integer", "minimum": 1, "description": "Time limit of one call (default 10000)"},
                "memory_mb": {"type": "integer", "minimum": 1, "description": "Memory limit in MiB (default 256)"},
                "output_bytes": {"type": "integer", "minimum": 1, "description": "Cap on stdout and stderr (default 1 MiB)"}
            }},
            "capabilities": {"type": "object", "additionalProperties": false, "properties": {
                "network": {"type": "boolean"},
                "env": {"type": "array", "items": {"type": "string"}, "description": "Environment variables passed through"},
                "read": {"type": "array", "items": {"type": "string"}, "description": "Directories the tool may read (inside the allowed roots)"},
                "write": {"type": "array", "items": {"type": "string"}, "description": "Directories the tool may write (inside the allowed roots)"}
            }},
            "examples": {"type": "array", "description": "1–3 input → expected output pairs; run after the build, failures block the commit",
                "items": {"type": "object", "required": ["input"], "additionalProperties": false, "properties": {
                    "description": {"type": "string"},
                    "input": {"type": "object", "additionalProperties": true},
                    "output": {"description": "Expected structured output (exact JSON equality)"},
                    "output_text": {"type": "string", "description": "Expected text output"}
                }}},
            "commit_anyway": {"type": "boolean", "description": "Commit even when examples fail (default false)"}
        }
    });
    let output = json!({
        "type": "object",
        "required": ["name", "action", "compiled", "source_hash", "artifact_hash"],
        "properties": {
            "name": {"type": "string"},
            "action": {"type": "string", "enum": ["add", "update", "unchanged"]},
            "commit": {"type": ["string", "null"]},
            "compiled": {"type": "boolean", "description": "false when the source was unchanged and nothing was compiled"},
            "compiled_crates": {"type": "array", "items": {"type": "string"}},
            "cargo_ms": {"type": ["integer", "null"]},
            "total_ms": {"type": "integer"},
            "source_hash": {"type": "string"},
            "artifact_hash": {"type": "string"},
            "artifact_bytes": {"type": "integer"},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "cargo_output": {"type": "array", "items": {"type": "string"}},
            "examples_run": {"type": "integer"},
            "example_failures": {"type": "array", "items": {"type": "object"}}
        }
    });
    vec![
        Tool::new("build_tool", DESCRIPTION, obj(input))
            .with_raw_output_schema(obj(output))
            .with_title("Build a WASM tool from Rust")
            .with_annotations(
                ToolAnnotations::with_title("Build a WASM tool from Rust")
                    .read_only(false)
                    .destructive(false)
                    .idempotent(true)
                    .open_world(true),
            ),
    ]
}

/// Run `build_tool`. None when `name` is not one of this module's tools.
pub async fn call(name: &str, mut args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    if name != "build_tool" {
        return None;
    }
    let commit_anyway = args
        .remove("commit_anyway")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let req: BuildRequest = match serde_json::from_value(Value::Object(args)) {
        Ok(r) => r,
        Err(e) => {
            return Some(error_result(
                format!("invalid build_tool arguments: {e}"),
                Some("see build_tool's input schema".into()),
            ));
        }
    };
    let mut opts = build::Options::new(&ctx.host, ctx.actor.clone());
    opts.cancel = ctx.request.ct.clone();
    opts.commit_anyway = commit_anyway;
    let result = build::build(&ctx.shared.app, req, &opts).await;
    Some(match result {
        Ok(outcome) => {
            if outcome.commit.is_some() {
                ctx.changed();
            }
            json_result(serde_json::to_value(&outcome).unwrap_or(Value::Null))
        }
        Err(e) => failure(&e),
    })
}

/// An error result; compile errors also carry the diagnostics as structured content.
fn failure(e: &BuildError) -> CallToolResult {
    let mut r = error_result(e, e.hint());
    if let BuildError::Compile { diagnostics, .. } = e {
        let list: Vec<Value> = diagnostics
            .iter()
            .map(|d| json!({"file": d.file, "line": d.line, "column": d.column, "code": d.code, "message": d.message}))
            .collect();
        r.content.push(ContentBlock::text(
            serde_json::to_string_pretty(&list).unwrap_or_default(),
        ));
    }
    r
}
