//! Python components from the form an AI writes first (issue 40), through the built binary
//! over MCP with the official Python SDK (tests/py/python_components.py), one `toolsmith serve`
//! per test: a plain function (`def add(a: int, b: int) -> int`) with an input schema or only
//! its annotations, any JSON value returned, an exception as `isError` with the Python
//! traceback only (in the class form too), the standard library at call time (`hashlib`, lazily imported modules), a
//! module a component cannot use refused at build time by name; and the JSON Schema forms an
//! AI writes (`prefixItems`, `anyOf` with `null`, `additionalProperties`, a union, a free-form
//! value, an optional result) carried to the function and back, in Python and in JavaScript.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A tool chain scripts/setup.sh installs under target/.
fn installed(rel: &str) -> PathBuf {
    let exe = root().join(rel);
    assert!(
        exe.is_file(),
        "{} is missing: run scripts/setup.sh",
        exe.display()
    );
    exe
}

/// Run `calls` (meta-tools and tools) through `toolsmith serve` on `toolbox`.
fn through_mcp(toolbox: &Path, calls: &[Value]) -> Value {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("calls.json");
    std::fs::write(&file, serde_json::to_string(calls).expect("json")).expect("write");
    let out = Command::new(python())
        .arg(root().join("tests/py/python_components.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(toolbox)
        .arg("--calls")
        .arg(&file)
        .env("TOOLSMITH_CACHE", root().join("target/wasm-test-cache"))
        .env(
            "TOOLSMITH_COMPONENTIZE_PY",
            installed("target/componentize-py/bin/componentize-py"),
        )
        .env(
            "TOOLSMITH_COMPONENTIZE_JS",
            installed("target/componentize-js/node_modules/.bin/componentize-js"),
        )
        .env("TOOLSMITH_DATA", tmp.path().join("data"))
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn text(c: &Value) -> &str {
    c["text"].as_str().unwrap_or("")
}

fn ok(c: &Value) -> &Value {
    assert_eq!(c["is_error"], false, "{}", text(c));
    c
}

const PROBE: &str = r#"import hashlib
import json
from datetime import datetime


def probe(kind: str, text: str = "") -> object:
    if kind == "none":
        return None
    if kind == "dict":
        return {"text": text, "n": len(text), "nested": {"ok": True}}
    if kind == "list":
        return [1, "two", 3.5, None]
    if kind == "hash":
        return hashlib.sha256(text.encode()).hexdigest()
    if kind == "lazy":
        import statistics
        import textwrap
        when = datetime.strptime(text, "%Y-%m-%d")
        return {
            "median": statistics.median([3, 1, 2]),
            "date": when.strftime("%d/%m/%Y"),
            "wrapped": textwrap.wrap("aa bb cc", 5),
            "latin1": "é".encode("latin-1").hex(),
        }
    if kind == "raise":
        return _fail(text)
    return kind


def _fail(text):
    raise ValueError(f"cannot handle {text!r}")
"#;

/// The plain function: the issue's `add` with an input schema, `probe` with only its
/// annotations (every JSON value back, an exception, the standard library), and an import
/// a component cannot have, refused before anything is built.
#[test]
fn a_plain_python_function_is_a_component() {
    let (_tmp, tb) = toolbox();
    let boxdir = tb.root().to_path_buf();
    drop(tb);
    let calls = [
        json!({"tool": "build_tool", "args": {
            "name": "add", "description": "Add two integers", "language": "python",
            "source": "def add(a: int, b: int) -> int:\n    return a + b\n",
            "input_schema": {"type": "object", "required": ["a", "b"], "properties": {
                "a": {"type": "integer"}, "b": {"type": "integer"}}}
        }}),
        json!({"tool": "add", "args": {"a": 2, "b": 3}}),
        json!({"tool": "build_tool", "args": {
            "name": "probe", "description": "Answer with a value of each JSON kind",
            "language": "python", "source": PROBE
        }}),
        json!({"tool": "probe", "args": {"kind": "none"}}),
        json!({"tool": "probe", "args": {"kind": "dict", "text": "héllo"}}),
        json!({"tool": "probe", "args": {"kind": "list"}}),
        json!({"tool": "probe", "args": {"kind": "hash", "text": "abc"}}),
        json!({"tool": "probe", "args": {"kind": "lazy", "text": "2024-03-05"}}),
        json!({"tool": "probe", "args": {"kind": "raise", "text": "x"}}),
        json!({"tool": "build_tool", "args": {
            "name": "twice", "description": "Double a number", "language": "python",
            "source": "import wit_world\n\n\nclass WitWorld(wit_world.WitWorld):\n    def call(self, n):\n        if n < 0:\n            raise ValueError(\"negative\")\n        return n * 2\n",
            "input_schema": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
        }}),
        json!({"tool": "twice", "args": {"n": 21}}),
        json!({"tool": "twice", "args": {"n": -1}}),
        json!({"tool": "build_tool", "args": {
            "name": "lookup", "description": "Resolve a host name", "language": "python",
            "source": "def lookup(host: str) -> str:\n    import socket\n    return socket.gethostbyname(host)\n"
        }}),
    ];
    let out = through_mcp(&boxdir, &calls);
    let c = out["calls"].as_array().expect("calls");

    // The issue's reproduction: the plain function, its input schema, 5.
    ok(&c[0]);
    assert_eq!(text(ok(&c[1])), "5");

    // Only annotations: they are the input schema (a default is not required).
    ok(&c[2]);
    let input = &out["tools"]["probe"]["input"];
    assert_eq!(input["required"], json!(["kind"]), "{input}");
    assert_eq!(input["properties"]["text"]["type"], "string", "{input}");
    assert_eq!(input["properties"]["text"]["default"], "", "{input}");

    // Any JSON value: no output schema, so as JSON text (a string as it is).
    assert_eq!(text(ok(&c[3])), "null");
    let dict: Value = serde_json::from_str(text(ok(&c[4]))).expect("JSON text");
    assert_eq!(
        dict,
        json!({"text": "héllo", "n": 5, "nested": {"ok": true}})
    );
    let list: Value = serde_json::from_str(text(ok(&c[5]))).expect("JSON text");
    assert_eq!(list, json!([1, "two", 3.5, null]));

    // The standard library at call time: hashlib, and what is imported inside the function
    // (statistics, textwrap), lazily by the library itself (_strptime) or by name (a codec).
    assert_eq!(
        text(ok(&c[6])),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let lazy: Value = serde_json::from_str(text(ok(&c[7]))).expect("JSON text");
    assert_eq!(
        lazy,
        json!({"median": 2, "date": "05/03/2024", "wrapped": ["aa bb", "cc"], "latin1": "e9"})
    );

    // An exception: the tool's error, its Python traceback only, a hint about the code.
    let raised = &c[8];
    assert_eq!(raised["is_error"], true, "{}", text(raised));
    let t = text(raised);
    for want in [
        "Traceback (most recent call last):",
        "File \"app.py\", line",
        "in _fail",
        "raise ValueError(f\"cannot handle {text!r}\")",
        "ValueError: cannot handle 'x'",
        "fix the code",
    ] {
        assert!(t.contains(want), "{want:?} in {t}");
    }
    for unwanted in ["wasm", "toolsmith_entry", "check the arguments"] {
        assert!(!t.contains(unwanted), "{unwanted:?} in {t}");
    }

    // The class form the guide showed, without an output schema: an int is sent as JSON
    // text, an exception is the tool's error with its traceback.
    ok(&c[9]);
    assert_eq!(text(ok(&c[10])), "42");
    assert_eq!(c[11]["is_error"], true, "{}", text(&c[11]));
    assert!(
        text(&c[11]).contains("ValueError: negative") && !text(&c[11]).contains("wasm"),
        "{}",
        text(&c[11])
    );

    // A module a component cannot use: refused at build time, by name, with what to do.
    let refused = &c[12];
    assert_eq!(refused["is_error"], true, "{}", text(refused));
    let t = text(refused);
    for want in ["`socket` (line 2)", "no sockets", "register_script"] {
        assert!(t.contains(want), "{want:?} in {t}");
    }
    assert!(!boxdir.join("tools/lookup").exists(), "nothing committed");
    assert!(boxdir.join("tools/probe/app.py").is_file());
    assert!(
        !boxdir.join("tools/probe/toolsmith_entry.py").exists()
            && !boxdir.join("tools/probe/.build").exists(),
        "toolsmith's module around app.py is not committed"
    );
}

/// The schemas an AI writes for tuples, optionals, maps, unions and free-form values, in
/// Python (`build_tool`) and JavaScript (`register_script` with `component = true`): each
/// value reaches the function as it was sent, the result comes back valid against the output
/// schema (an absent optional property left out, not `null`).
#[test]
fn json_schema_forms_reach_python_and_javascript_functions() {
    let input = json!({"type": "object", "required": ["pair", "counts", "either", "anything"], "properties": {
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "array", "items": {"type": "integer"}}]},
        "anything": {"description": "any JSON value"},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "maxLen": {"type": ["integer", "null"]}
    }});
    let output = json!({"type": "object", "required": ["kinds", "values", "total", "either", "anything"], "properties": {
        "kinds": {"type": "array", "items": {"type": "string"}},
        "values": {"type": "array", "items": {"type": "integer"}},
        "total": {"type": "integer"},
        "either": {"type": "string"},
        "anything": {},
        "result": {"type": "string"},
        "max_len": {"type": ["integer", "null"]}
    }});
    let py = "def shapes(pair, counts, either, anything, maybe=None, maxLen=None):\n    return {\n        \"kinds\": [type(x).__name__ for x in pair] + sorted(counts),\n        \"values\": sorted(counts.values()),\n        \"total\": sum(counts.values()),\n        \"either\": f\"{type(either).__name__}:{either!r}\",\n        \"anything\": anything,\n        \"result\": maybe,\n        \"max_len\": maxLen,\n    }\n";
    let js = "export function call(anything, counts, either, maxLen, maybe, pair) {\n  return {\n    kinds: [...pair.map((x) => typeof x), ...Object.keys(counts).sort()],\n    values: Object.values(counts).sort((a, b) => a - b),\n    total: Object.values(counts).reduce((a, b) => a + b, 0),\n    either: `${Array.isArray(either) ? \"array\" : typeof either}:${JSON.stringify(either)}`,\n    anything,\n    result: maybe,\n    max_len: maxLen ?? null,\n  };\n}\n";
    let args = [
        json!({"pair": [1, "x"], "counts": {"b": 2, "a": 3}, "either": 5, "anything": {"k": [1, null, "é"]}, "maybe": "m", "maxLen": 7}),
        json!({"pair": [2, "y"], "counts": {}, "either": "five", "anything": null}),
        json!({"pair": [3, "z"], "counts": {"c": -1}, "either": [1, 2], "anything": 2.5, "maybe": null, "maxLen": null}),
        json!({"pair": [4, "w"], "counts": {}, "either": true, "anything": 1}),
    ];
    let (_tmp, tb) = toolbox();
    let boxdir = tb.root().to_path_buf();
    drop(tb);
    let mut calls = vec![
        json!({"tool": "build_tool", "args": {
            "name": "shapes", "description": "Say what each argument was", "language": "python",
            "source": py, "input_schema": input, "output_schema": output
        }}),
        json!({"tool": "register_script", "args": {
            "name": "shapes_js", "description": "Say what each argument was", "language": "javascript",
            "component": true, "source": js, "input_schema": input, "output_schema": output
        }}),
    ];
    for tool in ["shapes", "shapes_js"] {
        calls.extend(args.iter().map(|a| json!({"tool": tool, "args": a})));
    }
    let out = through_mcp(&boxdir, &calls);
    let c = out["calls"].as_array().expect("calls");
    ok(&c[0]);
    ok(&c[1]);
    for (lang, at, int, text_kind, list_kind) in [
        ("python", 2, "int", "str:'five'", "list:[1, 2]"),
        ("javascript", 6, "number", "string:\"five\"", "array:[1,2]"),
    ] {
        let first = ok(&c[at]);
        let s = &first["structured"];
        assert_eq!(
            s["kinds"],
            json!([
                int,
                if lang == "python" { "str" } else { "string" },
                "a",
                "b"
            ]),
            "{lang}: {first}"
        );
        assert_eq!(s["total"], 5, "{lang}");
        assert_eq!(
            s["values"],
            json!([2, 3]),
            "{lang}: a list of integers back"
        );
        assert_eq!(
            s["either"],
            if lang == "python" {
                json!("int:5")
            } else {
                json!("number:5")
            },
            "{lang}"
        );
        assert_eq!(s["anything"], json!({"k": [1, null, "é"]}), "{lang}");
        assert_eq!(s["result"], "m", "{lang}");
        assert_eq!(s["max_len"], 7, "{lang}");
        assert_eq!(first["valid"], true, "{lang}: {first}");

        // The optional result absent: left out, the output schema still holds.
        let second = ok(&c[at + 1]);
        let s = &second["structured"];
        assert!(s.get("result").is_none(), "{lang}: {second}");
        assert_eq!(s["max_len"], Value::Null, "{lang}: nullable, so null");
        assert_eq!(s["either"], text_kind, "{lang}");
        assert_eq!(s["anything"], Value::Null, "{lang}");
        assert_eq!(second["valid"], true, "{lang}: {second}");

        let third = ok(&c[at + 2]);
        assert_eq!(third["structured"]["either"], list_kind, "{lang}");
        assert_eq!(third["structured"]["anything"], 2.5, "{lang}");
        assert_eq!(third["valid"], true, "{lang}: {third}");

        // A value of none of the union's types: refused, naming the argument.
        let wrong = &c[at + 3];
        assert_eq!(wrong["is_error"], true, "{lang}: {wrong}");
        assert!(text(wrong).contains("either"), "{lang}: {}", text(wrong));
    }
    let toml = std::fs::read_to_string(boxdir.join("tools/shapes/wit/world.wit")).expect("wit");
    for want in [
        "%pair: tuple<s64, string>",
        "%counts: list<tuple<string, s64>>",
        "%either: %either",
        "%anything: string",
        "%max-len: option<s64>",
    ] {
        assert!(toml.contains(want), "{want} in {toml}");
    }
}
