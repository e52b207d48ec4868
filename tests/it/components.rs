//! WebAssembly components end to end: a WIT-typed Rust component (tests/fixtures/
//! component-probe, built by real cargo for wasm32-wasip2, offline from the registry cache
//! that scripts/setup.sh fills), stored as a tool with `[run] world`, called through `App`
//! in real wasmtime: its WIT types as schemas, typed arguments checked, a record, variant and
//! result round trip, an `err` as a tool error, limits, deny-by-default files, tampering.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use toolsmith::app::{App, CallError};
use toolsmith::runner::RunError;
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{FileSpec, Toolbox};

/// The fixture component, built once per run (cargo reuses its target directory).
pub(crate) fn component() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let target = root.join("target/component-fixture");
        let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--offline", "--release", "--target", "wasm32-wasip2"])
            .arg("--manifest-path")
            .arg(root.join("tests/fixtures/component-probe/Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            // scripts/test.sh builds the workspace through clippy's driver: not this fixture.
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("CLIPPY_ARGS")
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "the fixture component does not build (run scripts/setup.sh: it adds wasm32-wasip2 and fetches wit-bindgen):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(target.join("wasm32-wasip2/release/component_probe.wasm")).expect("the component")
    })
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

pub(crate) fn manifest(name: &str, export: &str, extra: &str) -> String {
    let sha = toolsmith::hashing::sha256_bytes(component());
    format!(
        "format = 1\nname = \"{name}\"\ndescription = \"Component probe: {export}\"\nkind = \"wasm\"\n\n[run]\nworld = \"probe\"\nexport = \"{export}\"\n{extra}\n[hashes]\nartifact = \"{sha}\"\n"
    )
}

/// A toolbox holding the component as `measure` and `probe` (with `extra` in probe's
/// tool.toml), and an app over it with `roots` allowed and a private personal directory.
fn app_with(extra: &str, roots: Vec<PathBuf>) -> (tempfile::TempDir, App) {
    let (tmp, tb) = toolbox();
    for (name, export, more) in [("measure", "measure", ""), ("probe", "probe", extra)] {
        tb.write_tool(
            name,
            &[
                FileSpec::new("tool.toml", manifest(name, export, more)),
                FileSpec::new("tool.wasm", component().to_vec()),
            ],
            "test",
        )
        .expect("write the tool");
    }
    (tmp, app(tb, roots))
}

fn app(tb: Toolbox, roots: Vec<PathBuf>) -> App {
    let mut config = toolsmith::config::Config::from_env().expect("config");
    config.roots = roots;
    let personal = tempfile::tempdir().expect("tempdir").keep();
    App::new(tb, config).with_personal_dir(personal)
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

#[test]
fn wit_types_become_the_schemas() {
    let runner = toolsmith::wasm::WasmRunner::new(None, Vec::new()).expect("engine");
    let s = runner
        .component_schemas(component(), Some("measure"))
        .expect("schemas");
    assert_eq!(s.export, "measure");
    assert_eq!(s.input["required"], json!(["at", "shape", "scale"]));
    let at = &s.input["properties"]["at"];
    assert_eq!(at["type"], "object");
    assert_eq!(
        at["required"],
        json!(["x", "y"]),
        "an option field is not required"
    );
    assert_eq!(at["properties"]["x"]["minimum"], json!(i32::MIN));
    assert_eq!(
        at["properties"]["label"]["anyOf"][1],
        json!({"type": "null"})
    );
    let cases = s.input["properties"]["shape"]["oneOf"]
        .as_array()
        .expect("variant cases");
    assert_eq!(cases.len(), 3);
    assert!(cases.contains(&json!({"const": "empty"})));
    assert_eq!(s.input["properties"]["scale"]["maximum"], json!(u32::MAX));
    let out = s.output.expect("a record result has an output schema");
    assert_eq!(out["required"], json!(["area", "shape", "tags", "note"]));

    let p = runner
        .component_schemas(component(), Some("probe"))
        .expect("schemas");
    assert_eq!(
        p.input["properties"]["mode"]["enum"],
        json!(["echo", "spin", "hog", "spew", "read-file", "fetch"])
    );
    assert_eq!(p.output, None, "a string result is not structured content");

    let both = runner.component_schemas(component(), None).unwrap_err();
    assert!(
        both.contains("several functions (measure, probe)"),
        "{both}"
    );
    let none = runner
        .component_schemas(component(), Some("nope"))
        .unwrap_err();
    assert!(none.contains("exports no function \"nope\""), "{none}");
}

#[test]
fn a_record_variant_and_result_round_trip() {
    let (_tmp, app) = app_with("", Vec::new());
    let out = call(
        &app,
        "measure",
        json!({"at": {"x": 2, "y": -3, "label": "home"}, "shape": {"rect": {"x": 4, "y": -5}}, "scale": 2}),
    )
    .expect("measured");
    assert_eq!(
        out.structured,
        Some(json!({
            "area": 40,
            "shape": {"rect": {"x": 4, "y": -5, "label": null}},
            "tags": ["home"],
            "note": "at 2,-3"
        }))
    );
    let circle = call(
        &app,
        "measure",
        json!({"at": {"x": 0, "y": 0}, "shape": {"circle": 2}, "scale": 1}),
    )
    .expect("measured");
    assert_eq!(
        circle.structured.as_ref().map(|v| &v["area"]),
        Some(&json!(12))
    );
    assert_eq!(
        circle.structured.as_ref().map(|v| &v["tags"]),
        Some(&json!([]))
    );

    // `err` of the function's result is the tool's error, with the error value.
    match run_error(call(
        &app,
        "measure",
        json!({"at": {"x": 1, "y": 2}, "shape": "empty", "scale": 1}),
    )) {
        RunError::ToolError { message, data, .. } => {
            assert_eq!(message, "nothing to measure at (1, 2)");
            assert_eq!(data, Some(json!("nothing to measure at (1, 2)")));
        }
        other => panic!("expected a tool error, got {other:?}"),
    }
}

#[test]
fn arguments_are_checked_against_the_wit_types() {
    let (_tmp, app) = app_with("", Vec::new());
    let cases = [
        (
            json!({"at": {"x": 1, "y": 2}, "shape": "empty"}),
            "argument `scale`: missing",
        ),
        (
            json!({"at": {"x": "1", "y": 2}, "shape": "empty", "scale": 1}),
            "argument `at.x`: expected an integer",
        ),
        (
            json!({"at": {"x": 1, "y": 2}, "shape": "empty", "scale": -1}),
            "argument `scale`: expected an integer from 0 to 4294967295",
        ),
        (
            json!({"at": {"x": 1, "y": 2, "z": 3}, "shape": "empty", "scale": 1}),
            "argument `at.z`: no such field (expected: x, y, label)",
        ),
        (
            json!({"at": {"x": 1, "y": 2}, "shape": {"square": 1}, "scale": 1}),
            "argument `shape`: expected one of circle, rect, empty",
        ),
        (
            json!({"at": {"x": 1, "y": 2}, "shape": {"rect": {"x": 1}}, "scale": 1}),
            "argument `shape.rect.y`: missing",
        ),
        (
            json!({"at": {"x": 1, "y": 2}, "shape": "circle", "scale": 1}),
            "case circle needs a value",
        ),
    ];
    for (args, want) in cases {
        match run_error(call(&app, "measure", args.clone())) {
            e @ RunError::Arguments { .. } => {
                let text = e.to_string();
                assert!(text.contains(want), "{args}: {text}");
                let hint = toolsmith::error::Hint::hint(&e).expect("a hint");
                assert!(hint.contains("input schema"), "{hint}");
            }
            other => panic!("{args}: expected an argument error, got {other:?}"),
        }
    }
    let e = run_error(call(&app, "probe", json!({"mode": "shout", "text": ""})));
    assert!(
        e.to_string()
            .contains("argument `mode`: expected one of echo, spin, hog, spew, read-file, fetch"),
        "{e}"
    );
}

#[test]
fn stderr_is_logged_and_limits_hold() {
    let (_tmp, app) = app_with(
        "\n[limits]\ntimeout_ms = 300\nmemory_mb = 32\noutput_bytes = 65536\n",
        Vec::new(),
    );
    let echo = call(&app, "probe", json!({"mode": "echo", "text": "hello"})).expect("echo");
    assert_eq!(echo.text, "hello");
    assert_eq!(echo.logs, vec!["echoing 5 chars".to_string()]);

    let started = std::time::Instant::now();
    match run_error(call(&app, "probe", json!({"mode": "spin", "text": ""}))) {
        RunError::Timeout { ms, .. } => assert_eq!(ms, 300),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    match run_error(call(&app, "probe", json!({"mode": "hog", "text": ""}))) {
        RunError::Memory { mb, .. } => assert_eq!(mb, 32),
        other => panic!("expected the memory limit, got {other:?}"),
    }
    match run_error(call(&app, "probe", json!({"mode": "spew", "text": ""}))) {
        RunError::OutputTooLarge { bytes, .. } => assert_eq!(bytes, 65536),
        other => panic!("expected the output limit, got {other:?}"),
    }
    // The instance pool is not used up by failed calls.
    for _ in 0..3 {
        call(&app, "probe", json!({"mode": "echo", "text": "again"})).expect("echo after limits");
    }
}

#[test]
fn files_are_denied_by_default_and_a_granted_root_is_readable_after_approval() {
    let data = tempfile::tempdir().expect("tempdir");
    let dir = data.path().canonicalize().expect("canonical");
    std::fs::write(dir.join("note.txt"), "granted text").expect("write");
    let file = dir.join("note.txt").display().to_string();

    // No grant: the component sees no file system at all.
    let (_t1, app1) = app_with("", vec![dir.clone()]);
    match run_error(call(
        &app1,
        "probe",
        json!({"mode": "read-file", "text": file}),
    )) {
        RunError::ToolError { message, .. } => assert!(message.starts_with(&file), "{message}"),
        other => panic!("expected the read to fail inside the tool, got {other:?}"),
    }
    let passwd = run_error(call(
        &app1,
        "probe",
        json!({"mode": "read-file", "text": "/etc/passwd"}),
    ));
    assert!(matches!(passwd, RunError::ToolError { .. }), "{passwd:?}");

    // A read grant waits for the person, then reads the root and nothing else.
    let grant = format!("\n[capabilities]\nread = [\"{}\"]\n", dir.display());
    let (_t2, app2) = app_with(&grant, vec![dir.clone()]);
    let before = call(&app2, "probe", json!({"mode": "read-file", "text": file}));
    assert!(
        matches!(before, Err(CallError::Gate(_))),
        "an unapproved grant is not used: {before:?}"
    );
    approve(&app2, "probe");
    let read = call(&app2, "probe", json!({"mode": "read-file", "text": file})).expect("read");
    assert_eq!(read.text, "granted text");
    let outside = run_error(call(
        &app2,
        "probe",
        json!({"mode": "read-file", "text": "/etc/passwd"}),
    ));
    assert!(matches!(outside, RunError::ToolError { .. }), "{outside:?}");
    let write_path = dir.join("new.txt");
    assert!(!write_path.exists());
}

#[test]
fn http_reaches_only_approved_hosts_through_the_wasi_http_filter() {
    let (port, seen) = http_server();
    let url = |host: &str, path: &str| format!("http://{host}:{port}{path}");
    let fetch = |app: &App, u: String| call(app, "probe", json!({"mode": "fetch", "text": u}));

    // Nothing declared: the request is refused in the host, the guest sees the error code.
    let (_t1, none) = app_with("", Vec::new());
    match run_error(fetch(&none, url("127.0.0.1", "/none"))) {
        RunError::ToolError { message, .. } => assert_eq!(message, "ErrorCode::HttpRequestDenied"),
        other => panic!("expected the guest to see the denial, got {other:?}"),
    }

    // Declared: nothing runs before the person approved it.
    let (_t2, app) = app_with("\n[capabilities]\nnetwork = [\"127.0.0.1\"]\n", Vec::new());
    let before = fetch(&app, url("127.0.0.1", "/early"));
    assert!(matches!(before, Err(CallError::Gate(_))), "{before:?}");
    assert!(
        seen.lock().expect("seen").is_empty(),
        "nothing reached the server yet"
    );

    approve(&app, "probe");
    let ok = fetch(&app, url("127.0.0.1", "/granted")).expect("the approved host");
    assert_eq!(ok.text, "200 hello /granted");
    assert_eq!(
        ok.network
            .as_ref()
            .map(|s| s.allowed.iter().cloned().collect::<Vec<_>>()),
        Some(vec!["127.0.0.1".to_string()])
    );
    assert!(ok.warnings.is_empty(), "{:?}", ok.warnings);

    // Another host (the same server under another name) is refused, and the AI is told.
    match run_error(fetch(&app, url("localhost", "/other"))) {
        RunError::ToolError { message, .. } => assert_eq!(message, "ErrorCode::HttpRequestDenied"),
        other => panic!("expected the denial, got {other:?}"),
    }
    assert_eq!(
        *seen.lock().expect("seen"),
        vec!["GET /granted HTTP/1.1".to_string()],
        "only the approved request reached the server"
    );
    let log = toolsmith::audit::Log::new(app.personal_dir())
        .read(None, None)
        .expect("audit");
    let granted = log
        .iter()
        .find(|e| e.outcome == "ok" && e.tool == "probe")
        .expect("the call's audit entry");
    assert_eq!(granted.hosts_reached, vec!["127.0.0.1".to_string()]);
    assert_eq!(
        granted.grants,
        vec!["network access to 127.0.0.1 only".to_string()]
    );
}

/// A component whose instantiation runs none of its code is instantiated once when prepared
/// (no grant, a deadline two ticks away), so its first call finds its memory image ready.
#[test]
fn a_component_is_instantiated_ahead_when_prepared() {
    let (_tmp, app) = app_with("", Vec::new());
    let runner = toolsmith::wasm::WasmRunner::new(None, Vec::new()).expect("engine");
    let tool = app.tool("measure").expect("the tool");
    let dir = app.toolbox.tools_dir().join("measure");
    assert_eq!(
        runner.prepare(&dir, &tool).expect("prepared"),
        toolsmith::wasm::Prepared::Instantiated
    );
}

#[test]
fn a_tampered_component_is_refused() {
    let (_tmp, app) = app_with("", Vec::new());
    call(
        &app,
        "measure",
        json!({"at": {"x": 1, "y": 1}, "shape": {"circle": 1}, "scale": 1}),
    )
    .expect("runs before");
    let path = app.toolbox.tools_dir().join("measure/tool.wasm");
    let mut bytes = std::fs::read(&path).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&path, bytes).expect("tamper");
    let e = run_error(call(
        &app,
        "measure",
        json!({"at": {"x": 1, "y": 1}, "shape": {"circle": 1}, "scale": 1}),
    ));
    assert!(matches!(e, RunError::Tampered { .. }), "{e:?}");
}

/// The shared build cache of the WASM tests (cargo target dirs, compiled dependencies).
fn build_cache() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/wasm-test-cache")
}

const SHOUT_LIB: &str = r#"wit_bindgen::generate!({ world: "tool", path: "wit" });

struct Tool;

impl Guest for Tool {
    fn call(mode: Option<Mode>, text: String, times: Option<i64>) -> Result<Output, String> {
        let n = times.unwrap_or(1);
        if n < 0 {
            return Err(format!("times must not be negative, got {n}"));
        }
        let one = match mode {
            Some(Mode::Quiet) => text.to_lowercase(),
            _ => text.to_uppercase(),
        };
        Ok(Output { shout: vec![one; n as usize].join(" "), words: text.split_whitespace().count() as i64 })
    }
}

export!(Tool);
"#;

#[test]
fn build_tool_makes_a_rust_component_from_the_declared_schemas() {
    let (_tmp, tb) = toolbox();
    let boxdir = tb.root().to_path_buf();
    let app = app(tb, Vec::new());
    let req: toolsmith::build::BuildRequest = serde_json::from_value(json!({
        "name": "shout",
        "description": "Shout a text some times",
        "world": "tool",
        "source": SHOUT_LIB,
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
    .expect("a build request");
    let mut opts = toolsmith::build::Options::new(&NoHost, "test");
    opts.cache = Some(build_cache());
    let out = match rt().block_on(toolsmith::build::build(&app, req, &opts)) {
        Ok(o) => o,
        Err(e) => panic!(
            "the component builds: {e}\nhint: {:?}",
            toolsmith::error::Hint::hint(&e)
        ),
    };
    assert_eq!(out.examples_run, 1);
    assert!(
        out.example_failures.is_empty(),
        "{:?}",
        out.example_failures
    );
    let dir = boxdir.join("tools/shout");
    let wit =
        std::fs::read_to_string(dir.join("wit/world.wit")).expect("the generated WIT is committed");
    assert!(wit.contains("export call: func("), "{wit}");
    let toml = std::fs::read_to_string(dir.join("tool.toml")).expect("tool.toml");
    assert!(
        toml.contains("world = \"tool\"") && toml.contains("export = \"call\""),
        "{toml}"
    );
    let bytes = std::fs::read(dir.join("tool.wasm")).expect("artifact");
    assert!(
        bytes.starts_with(b"\0asm\x0d\0\x01\0"),
        "a component, not a core module"
    );
    assert_clean(&boxdir);
    git(&boxdir, &["fsck", "--strict"]);

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
        RunError::ToolError { message, .. } => {
            assert_eq!(message, "times must not be negative, got -1")
        }
        other => panic!("{other:?}"),
    }
    // The declared schema stays (with its descriptions); the WIT types check the rest.
    let bad = call(&app, "shout", json!({"text": "x", "mode": "whisper"})).unwrap_err();
    assert!(bad.to_string().contains("mode"), "{bad}");
}

/// Calls through `toolsmith serve` with the Python SDK: (tool list, results).
fn through_mcp(root: &Path, calls: &[Value]) -> Value {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("calls.json");
    std::fs::write(&file, serde_json::to_string(calls).expect("json")).expect("write");
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/components_mcp.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(root)
        .arg("--calls")
        .arg(&file)
        .env("TOOLSMITH_CACHE", build_cache())
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

#[test]
fn a_wit_typed_tool_over_mcp_built_and_called_with_checked_arguments() {
    let (_tmp, app) = app_with("", Vec::new());
    let root = app.toolbox.root().to_path_buf();
    drop(app);
    let build = json!({
        "name": "greet",
        "description": "Greet someone by name",
        "world": "greeter",
        "wit": "package toolsmith:greet;\n\nworld greeter {\n  record greeting {\n    text: string,\n    length: u32,\n  }\n\n  export greet: func(name: string, excited: bool) -> result<greeting, string>;\n}\n",
        "source": "wit_bindgen::generate!({ world: \"greeter\", path: \"wit\" });\nstruct G;\nimpl Guest for G {\n    fn greet(name: String, excited: bool) -> Result<Greeting, String> {\n        if name.is_empty() { return Err(\"no name\".into()); }\n        let text = format!(\"Hello, {name}{}\", if excited { \"!\" } else { \".\" });\n        Ok(Greeting { length: text.len() as u32, text })\n    }\n}\nexport!(G);\n"
    });
    let out = through_mcp(
        &root,
        &[
            json!({"tool": "build_tool", "args": build}),
            json!({"tool": "greet", "args": {"name": "Ada", "excited": true}}),
            json!({"tool": "greet", "args": {"name": "", "excited": false}}),
            json!({"tool": "greet", "args": {"name": "Ada", "excited": "yes"}}),
            json!({"tool": "measure", "args": {"at": {"x": 1, "y": 1}, "shape": {"rect": {"x": 2, "y": 3}}, "scale": 1}}),
            json!({"tool": "measure", "args": {"at": {"x": 1, "y": 1}, "shape": "empty", "scale": 1}}),
            json!({"tool": "measure", "args": {"at": {"x": 1, "y": 1}, "shape": {"rect": {"x": 2, "y": "3"}}, "scale": 1}}),
        ],
    );
    let calls = out["calls"].as_array().expect("calls");
    assert_eq!(
        calls[0]["is_error"], false,
        "build_tool: {}",
        calls[0]["text"]
    );
    assert_eq!(calls[1]["is_error"], false, "{}", calls[1]["text"]);
    assert_eq!(
        calls[1]["structured"],
        json!({"text": "Hello, Ada!", "length": 11})
    );
    assert_eq!(calls[2]["is_error"], true);
    assert!(
        calls[2]["text"].as_str().unwrap_or("").contains("no name"),
        "{}",
        calls[2]["text"]
    );
    assert_eq!(calls[3]["is_error"], true);
    assert!(
        calls[3]["text"].as_str().unwrap_or("").contains("excited"),
        "{}",
        calls[3]["text"]
    );
    assert_eq!(calls[4]["is_error"], false, "{}", calls[4]["text"]);
    assert_eq!(calls[4]["structured"]["area"], 6);
    assert_eq!(
        calls[4]["structured"]["shape"],
        json!({"rect": {"x": 2, "y": 3, "label": null}})
    );
    assert_eq!(calls[5]["is_error"], true);
    assert!(
        calls[5]["text"]
            .as_str()
            .unwrap_or("")
            .contains("nothing to measure at (1, 1)"),
        "{}",
        calls[5]["text"]
    );
    assert_eq!(calls[6]["is_error"], true);
    assert!(
        calls[6]["text"]
            .as_str()
            .unwrap_or("")
            .contains("shape.rect.y"),
        "{}",
        calls[6]["text"]
    );

    // The schemas MCP lists are the WIT types: given as WIT, never declared as JSON.
    let greet = &out["tools"]["greet"];
    assert_eq!(
        greet["input"]["required"],
        json!(["name", "excited"]),
        "{greet}"
    );
    assert_eq!(
        greet["input"]["properties"]["excited"],
        json!({"type": "boolean"})
    );
    assert_eq!(
        greet["output"]["properties"]["length"]["maximum"],
        json!(u32::MAX)
    );
    assert_clean(&root);
}
