//! Components from other languages than Rust (issue 29): `build_tool` with
//! `language = "python"` builds `app.py` with the real componentize-py, `language =
//! "javascript"` builds `app.js` with the real ComponentizeJS (scripts/setup.sh installs both,
//! pinned, under target/), contained, the WIT generated from the declared schemas; the
//! component is then called through `App` and over MCP with schema-checked arguments, a
//! record and a `result` round trip, and a tampered artifact is refused.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use toolsmith::app::{App, CallError};
use toolsmith::runner::RunError;
use toolsmith::runner::script::NoHost;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The componentize-py scripts/setup.sh installs.
fn componentize_py() -> PathBuf {
    let exe = root().join("target/componentize-py/bin/componentize-py");
    assert!(
        exe.is_file(),
        "{} is missing: run scripts/setup.sh (it installs componentize-py)",
        exe.display()
    );
    exe
}

/// The ComponentizeJS scripts/setup.sh installs.
fn componentize_js() -> PathBuf {
    let exe = root().join("target/componentize-js/node_modules/.bin/componentize-js");
    assert!(
        exe.is_file(),
        "{} is missing: run scripts/setup.sh (it installs ComponentizeJS)",
        exe.display()
    );
    exe
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn app(tb: toolsmith::toolbox::Toolbox) -> App {
    let mut config = toolsmith::config::Config::from_env().expect("config");
    config.componentize_py = componentize_py();
    config.componentize_js = componentize_js();
    let personal = tempfile::tempdir().expect("tempdir").keep();
    App::new(tb, config).with_personal_dir(personal)
}

fn cache() -> PathBuf {
    root().join("target/wasm-test-cache")
}

fn call(app: &App, name: &str, args: Value) -> Result<toolsmith::runner::CallOutput, CallError> {
    rt().block_on(app.call(name, args, &NoHost))
}

fn run_error(r: Result<toolsmith::runner::CallOutput, CallError>) -> RunError {
    match r {
        Err(CallError::Run(e)) => e,
        other => panic!("expected a run error, got {other:?}"),
    }
}

/// The generated WIT's function: `call(mode, text, times)` (alphabetical), `result<output,
/// string>`; componentize-py raises `Err` for the error case.
const SHOUT_PY: &str = r#"import wit_world
from wit_world import Output, Mode
from componentize_py_types import Err


class WitWorld(wit_world.WitWorld):
    def call(self, mode, text, times):
        n = 1 if times is None else times
        if n < 0:
            raise Err(f"times must not be negative, got {n}")
        one = text.lower() if mode == Mode.QUIET else text.upper()
        return Output(shout=" ".join([one] * n), words=len(text.split()))
"#;

/// The same in JavaScript, as a person writes it: an absent option is `undefined`, an enum case
/// its name, integers are numbers both ways, and a thrown value is the tool's error (the
/// module toolsmith wraps around a generated world's `call` does the last two).
const SHOUT_JS: &str = r#"export function call(mode, text, times) {
  const n = times ?? 1;
  if (n < 0) throw new Error(`times must not be negative, got ${n}`);
  const one = mode === "quiet" ? text.toLowerCase() : text.toUpperCase();
  const words = text.split(/\s+/).filter((w) => w.length > 0).length;
  return { shout: Array(n).fill(one).join(" "), words };
}
"#;

fn shout_request(language: &str, source: &str) -> toolsmith::build::BuildRequest {
    serde_json::from_value(json!({
        "name": "shout",
        "description": "Shout a text some times",
        "language": language,
        "source": source,
        "input_schema": {"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "description": "what to shout"},
            "times": {"type": "integer"},
            "mode": {"type": "string", "enum": ["loud", "quiet"]}
        }},
        "output_schema": {"type": "object", "required": ["shout", "words"], "properties": {
            "shout": {"type": "string"}, "words": {"type": "integer"}
        }},
        "examples": [{"input": {"text": "hi there", "times": 2}, "output": {"shout": "HI THERE HI THERE", "words": 2}}]
    }))
    .expect("a build request")
}

/// Build `shout` in `language`, check the call results through `App` and over MCP, then
/// tamper with its artifact.
fn builds_and_calls(language: &str, source: &str, entry: &str) {
    let (_tmp, tb) = toolbox();
    let boxdir = tb.root().to_path_buf();
    let app = app(tb);
    let mut opts = toolsmith::build::Options::new(&NoHost, "test");
    opts.cache = Some(cache());
    let out = match rt().block_on(toolsmith::build::build(
        &app,
        shout_request(language, source),
        &opts,
    )) {
        Ok(o) => o,
        Err(e) => panic!(
            "the {language} component builds: {e}\nhint: {:?}",
            toolsmith::error::Hint::hint(&e)
        ),
    };
    assert!(out.compiled, "{out:?}");
    assert_eq!(out.examples_run, 1);
    let dir = boxdir.join("tools/shout");
    assert!(dir.join(entry).is_file(), "the source is committed");
    assert!(!dir.join("Cargo.toml").exists(), "no Rust crate around it");
    let toml = std::fs::read_to_string(dir.join("tool.toml")).expect("tool.toml");
    assert!(
        toml.contains(&format!("language = \"{language}\"")) && toml.contains("world = \"tool\""),
        "{toml}"
    );
    let bytes = std::fs::read(dir.join("tool.wasm")).expect("artifact");
    assert!(bytes.starts_with(b"\0asm\x0d\0\x01\0"), "a component");
    assert_clean(&boxdir);

    // A record back, and `err` as the tool's error with its value.
    let r = call(
        &app,
        "shout",
        json!({"text": "Hey you", "mode": "quiet", "times": 3}),
    )
    .expect("call");
    assert_eq!(
        r.structured,
        Some(json!({"shout": "hey you hey you hey you", "words": 2}))
    );
    match run_error(call(&app, "shout", json!({"text": "x", "times": -1}))) {
        RunError::ToolError { message, data, .. } => {
            assert_eq!(message, "times must not be negative, got -1");
            assert_eq!(data, Some(json!("times must not be negative, got -1")));
        }
        other => panic!("{other:?}"),
    }

    // Over MCP: schema-checked arguments.
    let mcp = through_mcp(
        &boxdir,
        &[
            json!({"tool": "shout", "args": {"text": "a b", "times": 2}}),
            json!({"tool": "shout", "args": {"text": "x", "mode": "whisper"}}),
            json!({"tool": "shout", "args": {"text": 5}}),
            json!({"tool": "shout", "args": {"text": "x", "times": -2}}),
        ],
    );
    let calls = mcp["calls"].as_array().expect("calls");
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]["text"]);
    assert_eq!(
        calls[0]["structured"],
        json!({"shout": "A B A B", "words": 2})
    );
    for (i, want) in [(1, "mode"), (2, "text"), (3, "must not be negative")] {
        assert_eq!(calls[i]["is_error"], true, "{}", calls[i]["text"]);
        assert!(
            calls[i]["text"].as_str().unwrap_or("").contains(want),
            "{}",
            calls[i]["text"]
        );
    }
    assert_eq!(
        mcp["tools"]["shout"]["output"]["required"],
        json!(["shout", "words"])
    );

    // A changed artifact is refused.
    let path = dir.join("tool.wasm");
    let mut bytes = bytes;
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&path, bytes).expect("tamper");
    let e = run_error(call(&app, "shout", json!({"text": "x"})));
    assert!(matches!(e, RunError::Tampered { .. }), "{e:?}");
}

/// Calls through `toolsmith serve` with the Python SDK.
fn through_mcp(root_dir: &Path, calls: &[Value]) -> Value {
    through_mcp_with(root_dir, calls, &[])
}

/// Calls through `toolsmith serve` with the Python SDK, the server given `env` too.
fn through_mcp_with(root_dir: &Path, calls: &[Value], env: &[(&str, &str)]) -> Value {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("calls.json");
    std::fs::write(&file, serde_json::to_string(calls).expect("json")).expect("write");
    let out = Command::new(python())
        .arg(root().join("tests/py/components_mcp.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(root_dir)
        .arg("--calls")
        .arg(&file)
        .env("TOOLSMITH_CACHE", cache())
        .env("TOOLSMITH_COMPONENTIZE_PY", componentize_py())
        .env("TOOLSMITH_COMPONENTIZE_JS", componentize_js())
        .env("TOOLSMITH_DATA", tmp.path().join("data"))
        .envs(env.iter().copied())
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

#[test]
fn a_python_component_is_built_contained_and_called_with_typed_arguments() {
    builds_and_calls("python", SHOUT_PY, "app.py");
}

#[test]
fn a_javascript_component_is_built_contained_and_called_with_typed_arguments() {
    builds_and_calls("javascript", SHOUT_JS, "app.js");
}

/// A source that does not parse: the tool chain's error, a hint, nothing committed.
fn build_error_says_what_failed(language: &str, source: &str, chain: &str) {
    let (_tmp, tb) = toolbox();
    let boxdir = tb.root().to_path_buf();
    let app = app(tb);
    let mut opts = toolsmith::build::Options::new(&NoHost, "test");
    opts.cache = Some(cache());
    let e = rt()
        .block_on(toolsmith::build::build(
            &app,
            shout_request(language, source),
            &opts,
        ))
        .expect_err("a syntax error does not build");
    let text = e.to_string();
    assert!(text.contains(&format!("{chain} failed")), "{text}");
    assert!(text.contains("SyntaxError"), "{text}");
    assert!(toolsmith::error::Hint::hint(&e).is_some());
    assert!(!boxdir.join("tools/shout").exists(), "nothing committed");
}

#[test]
fn a_python_build_error_says_what_failed() {
    build_error_says_what_failed("python", "def call(:\n", "componentize-py");
}

#[test]
fn a_javascript_build_error_says_what_failed() {
    build_error_says_what_failed(
        "javascript",
        "export function call(mode, text, times) {\n  return {;\n}\n",
        "componentize-js",
    );
}

/// On a machine without bubblewrap (hidden here) the builds run in the in-process sandbox,
/// which lets them write only their own directory: ComponentizeJS's wizer keeps its
/// compiled-code cache there, not under the passwd home.
#[test]
fn register_script_makes_a_python_or_javascript_component_when_asked() {
    let (_tmp, tb) = toolbox();
    let boxdir = tb.root().to_path_buf();
    drop(tb);
    let spec = json!({
        "name": "count",
        "description": "Count the words of a text",
        "language": "python",
        "component": true,
        "source": "import wit_world\nfrom wit_world import Output\n\nclass WitWorld(wit_world.WitWorld):\n    def call(self, text):\n        return Output(words=len(text.split()))\n",
        "input_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
        "output_schema": {"type": "object", "required": ["words"], "properties": {"words": {"type": "integer"}}},
        "examples": [{"input": {"text": "a b c"}, "output": {"words": 3}}]
    });
    let mut script_form = spec.clone();
    script_form["name"] = json!("count2");
    script_form["source"] = json!("import json, sys\nprint(json.dumps({'words': 1}))\n");
    let mut js = spec.clone();
    js["name"] = json!("countjs");
    js["language"] = json!("javascript");
    js["source"] = json!(
        "export function call(text) {\n  return { words: text.split(/\\s+/).filter((w) => w).length };\n}\n"
    );
    let mut js_script_form = js.clone();
    js_script_form["name"] = json!("countjs2");
    js_script_form["source"] = json!("console.log(JSON.stringify({words: 1}));\n");
    let out = through_mcp_with(
        &boxdir,
        &[
            json!({"tool": "register_script", "args": spec}),
            json!({"tool": "count", "args": {"text": "one two"}}),
            json!({"tool": "register_script", "args": script_form}),
            json!({"tool": "register_script", "args": js}),
            json!({"tool": "countjs", "args": {"text": "one two three"}}),
            json!({"tool": "register_script", "args": js_script_form}),
        ],
        &[("TOOLSMITH_BWRAP", "/nonexistent/bwrap")],
    );
    let calls = out["calls"].as_array().expect("calls");
    assert_eq!(calls[3]["is_error"], false, "{}", calls[3]["text"]);
    assert_eq!(
        calls[4]["structured"],
        json!({"words": 3}),
        "{}",
        calls[4]["text"]
    );
    assert_eq!(calls[5]["is_error"], true);
    assert!(
        calls[5]["text"]
            .as_str()
            .unwrap_or("")
            .contains("export function call"),
        "{}",
        calls[5]["text"]
    );
    let toml = std::fs::read_to_string(boxdir.join("tools/countjs/tool.toml")).expect("tool.toml");
    assert!(toml.contains("language = \"javascript\""), "{toml}");
    assert!(boxdir.join("tools/countjs/app.js").is_file());
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]["text"]);
    assert_eq!(
        calls[1]["structured"],
        json!({"words": 2}),
        "{}",
        calls[1]["text"]
    );
    assert_eq!(calls[2]["is_error"], true);
    assert!(
        calls[2]["text"]
            .as_str()
            .unwrap_or("")
            .contains("class WitWorld"),
        "{}",
        calls[2]["text"]
    );
    let toml = std::fs::read_to_string(boxdir.join("tools/count/tool.toml")).expect("tool.toml");
    assert!(
        toml.contains("kind = \"wasm\"") && toml.contains("language = \"python\""),
        "{toml}"
    );
    assert_clean(&boxdir);

    // Where no OS sandbox runs a script, the refusal points at components.
    let e = toolsmith::sandbox::SandboxError::Unavailable {
        missing: "bubblewrap".into(),
        required: false,
    };
    let hint = toolsmith::error::Hint::hint(&e).expect("a hint");
    assert!(hint.contains("component = true"), "{hint}");
}

/// JavaScript's `fetch` goes out through `wasi:http`: before the person approved the declared
/// host nothing runs; after, the request reaches the server on 127.0.0.1; another host is
/// refused in the host and the tool sees the refusal.
#[test]
fn a_javascript_fetch_reaches_only_the_approved_host() {
    let (port, seen) = http_server();
    let (_tmp, tb) = toolbox();
    let app = app(tb);
    let mut opts = toolsmith::build::Options::new(&NoHost, "test");
    opts.cache = Some(cache());
    let req = serde_json::from_value(json!({
        "name": "fetcher",
        "description": "Fetch a URL and say what came back",
        "language": "javascript",
        "source": "export async function call(url) {\n  const r = await fetch(url);\n  return { status: r.status, body: await r.text() };\n}\n",
        "input_schema": {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}},
        "output_schema": {"type": "object", "required": ["status", "body"], "properties": {
            "status": {"type": "integer"}, "body": {"type": "string"}
        }},
        "capabilities": {"network": ["127.0.0.1"]}
    }))
    .expect("a build request");
    if let Err(e) = rt().block_on(toolsmith::build::build(&app, req, &opts)) {
        panic!("builds: {e}");
    }
    let url = |host: &str, path: &str| json!({"url": format!("http://{host}:{port}{path}")});

    let before = call(&app, "fetcher", url("127.0.0.1", "/early"));
    assert!(matches!(before, Err(CallError::Gate(_))), "{before:?}");
    assert!(seen.lock().expect("seen").is_empty(), "nothing went out");

    approve(&app, "fetcher");
    let ok = call(&app, "fetcher", url("127.0.0.1", "/granted")).expect("the approved host");
    assert_eq!(
        ok.structured,
        Some(json!({"status": 200, "body": "hello /granted"}))
    );
    match run_error(call(&app, "fetcher", url("localhost", "/other"))) {
        RunError::ToolError { message, .. } => assert!(!message.is_empty()),
        other => panic!("expected the tool's error, got {other:?}"),
    }
    assert_eq!(
        *seen.lock().expect("seen"),
        vec!["GET /granted HTTP/1.1".to_string()],
        "only the approved request reached the server"
    );
}
