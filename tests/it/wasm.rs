//! Rust → WebAssembly tools end to end: real cargo builds into one shared target directory
//! (under target/, reused across runs), real wasmtime calls, the git CLI as the oracle.
//! Builds are few: one std-only probe (shared by the sandbox and limit tests through git
//! clones), two serde_json tools, and a couple of small ones.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use toolsmith::app::{App, CallError};
use toolsmith::build::{self, BuildError, BuildOutcome, BuildRequest};
use toolsmith::error::Hint;
use toolsmith::runner::RunError;
use toolsmith::runner::script::{Host, NoHost};
use toolsmith::toolbox::Toolbox;

/// A std-only tool that misbehaves on request: echo, loop, alloc, spew, env, fs.
const PROBE_SRC: &str = r#"use std::io::{Read, Write};

fn field(input: &str, key: &str) -> Option<String> {
    let pat = format!("\"{key}\":\"");
    let start = input.find(&pat)? + pat.len();
    let end = input[start..].find('"')? + start;
    Some(input[start..end].to_string())
}

fn quoted(v: Option<String>) -> String {
    match v {
        Some(s) => format!("\"{s}\""),
        None => "null".to_string(),
    }
}

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    match field(&input, "mode").as_deref() {
        Some("echo") => {
            let text = field(&input, "text").unwrap_or_default();
            eprintln!("echoing {} chars", text.len());
            println!("{{\"echo\":\"{text}\",\"len\":{}}}", text.len());
        }
        Some("loop") => {
            let mut x: u64 = 0;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        Some("alloc") => {
            let mut keep: Vec<Vec<u8>> = Vec::new();
            loop {
                keep.push(vec![7u8; 1 << 20]);
                std::hint::black_box(&keep);
            }
        }
        Some("spew") => {
            let chunk = vec![b'x'; 1 << 20];
            let mut out = std::io::stdout();
            for _ in 0..100 {
                if out.write_all(&chunk).is_err() {
                    std::process::exit(3);
                }
            }
        }
        Some("env") => {
            let greeting = std::env::var("TOOLSMITH_TEST_GREETING").ok();
            let secret = std::env::var("TOOLSMITH_TEST_SECRET").ok();
            let count = std::env::vars().count();
            println!("{{\"greeting\":{},\"secret\":{},\"vars\":{count}}}", quoted(greeting), quoted(secret));
        }
        Some("fs") => {
            let root = std::fs::read_dir("/").is_ok();
            let passwd = std::fs::read_to_string("/etc/passwd").is_ok();
            let here = std::fs::read_dir(".").is_ok();
            let create = std::fs::File::create("written-by-probe.txt").is_ok();
            println!("{{\"root\":{root},\"passwd\":{passwd},\"here\":{here},\"create\":{create}}}");
        }
        other => {
            eprintln!("unknown mode {other:?}");
            std::process::exit(2);
        }
    }
}
"#;

/// A serde_json tool: upper-cases a text and counts its words.
const SHOUT_SRC: &str = r#"use serde_json::{json, Value};
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: Value = serde_json::from_str(&s).unwrap();
    let text = v["text"].as_str().unwrap_or("");
    println!("{}", json!({"loud": text.to_uppercase(), "words": text.split_whitespace().count()}));
}
"#;

/// The shared cache (cargo target dir, work dirs, compiled modules) for every test and run.
fn cache() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/wasm-test-cache")
}

/// The configuration of every app here: the environment's, with the shared cache (handed
/// over, never set in the environment: other tests of this binary run beside these).
fn config() -> toolsmith::config::Config {
    let mut config = toolsmith::config::Config::from_env().expect("config");
    config.cache_dir = cache();
    config
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// A host that records logs and progress messages.
#[derive(Default)]
struct Recorder {
    logs: Mutex<Vec<String>>,
    progress: Mutex<Vec<String>>,
}

impl Host for Recorder {
    fn log(&self, _level: &str, message: &str) {
        self.logs.lock().unwrap().push(message.to_string());
    }
    fn progress(&self, _: f64, _: Option<f64>, message: Option<String>) {
        self.progress
            .lock()
            .unwrap()
            .push(message.unwrap_or_default());
    }
}

fn request(v: Value) -> BuildRequest {
    serde_json::from_value(v).expect("a valid build request")
}

fn build_with(
    app: &App,
    req: Value,
    host: &dyn Host,
    commit_anyway: bool,
) -> Result<BuildOutcome, BuildError> {
    let mut opts = build::Options::new(host, "test");
    opts.cache = Some(cache());
    opts.commit_anyway = commit_anyway;
    rt().block_on(build::build(app, request(req), &opts))
}

fn build(app: &App, req: Value) -> Result<BuildOutcome, BuildError> {
    build_with(app, req, &NoHost, false)
}

fn call(app: &App, name: &str, args: Value) -> Result<toolsmith::runner::CallOutput, CallError> {
    rt().block_on(app.call(name, args, &NoHost))
}

/// An app whose person approved the probe's environment variable (its personal directory is
/// a temporary one, never the real one).
fn approved_app(tb: Toolbox) -> App {
    let personal = tempfile::tempdir().expect("tempdir").keep();
    let app = App::new(tb, config()).with_personal_dir(personal);
    if app
        .tool("probe")
        .is_ok_and(|t| !toolsmith::approval::requested(&t.manifest).is_empty())
    {
        common::approve(&app, "probe");
    }
    app
}

fn probe_request() -> Value {
    json!({
        "name": "probe",
        "description": "Test probe: echo, loop, alloc, spew, env, fs",
        "source": PROBE_SRC,
        "crates": {},
        "input_schema": {"type": "object", "required": ["mode"], "properties": {
            "mode": {"type": "string"}, "text": {"type": "string"}}},
        "output_schema": {"type": "object"},
        "limits": {"timeout_ms": 500, "memory_mb": 32, "output_bytes": 65536},
        "capabilities": {"env": ["TOOLSMITH_TEST_GREETING"]},
        "examples": [{"description": "echo", "input": {"mode": "echo", "text": "hi"},
                      "output": {"echo": "hi", "len": 2}}]
    })
}

/// A toolbox with the probe built and committed, built once per test run.
fn probe_fixture() -> &'static Path {
    static FIXTURE: OnceLock<PathBuf> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("toolsmith-probe-")
            .tempdir()
            .expect("tempdir")
            .keep();
        let tb = Toolbox::init(&dir.join("box"), &[], "test").expect("init");
        let app = approved_app(tb);
        let out = build(&app, probe_request()).unwrap_or_else(|e| panic!("probe build: {e}"));
        assert_eq!(out.action, "add");
        dir.join("box")
    })
}

/// A git clone of the probe toolbox (tool.wasm included), for a test to change freely.
fn probe_clone() -> (tempfile::TempDir, App) {
    let fixture = probe_fixture();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dest = tmp.path().join("box");
    git(
        fixture,
        &[
            "clone",
            "-q",
            fixture.to_str().unwrap(),
            dest.to_str().unwrap(),
        ],
    );
    git(&dest, &["config", "user.email", "t@example.com"]);
    git(&dest, &["config", "user.name", "t"]);
    let app = approved_app(Toolbox::open(&dest).expect("open clone"));
    (tmp, app)
}

fn toolsmith(toolbox: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    c.arg("--toolbox").arg(toolbox).args(args);
    c.env("TOOLSMITH_CACHE", cache());
    // The person's approvals: beside the toolbox, never the real ones.
    c.env(
        "TOOLSMITH_DATA",
        toolbox.parent().unwrap_or(toolbox).join("personal"),
    );
    c
}

#[test]
fn std_only_tool_builds_commits_and_answers_with_structured_output() {
    let fixture = probe_fixture();
    let app = approved_app(Toolbox::open(fixture).unwrap());
    let out = call(&app, "probe", json!({"mode": "echo", "text": "hello"})).unwrap();
    assert_eq!(out.structured, Some(json!({"echo": "hello", "len": 5})));
    assert_eq!(out.logs, vec!["echoing 5 chars".to_string()]);
    // One commit added the tool: sources, lockfile, manifest with both hashes, the module.
    let log = git(fixture, &["log", "--format=%s", "--", "tools/probe"]);
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        vec!["add probe: Test probe: echo, loop, alloc, spew, env, fs"]
    );
    let files = git(fixture, &["ls-files", "tools/probe"]);
    for f in [
        "Cargo.toml",
        "Cargo.lock",
        "src/main.rs",
        "tool.toml",
        "tool.wasm",
    ] {
        assert!(
            files.contains(&format!("tools/probe/{f}")),
            "{f} not committed: {files}"
        );
    }
    let manifest = std::fs::read_to_string(fixture.join("tools/probe/tool.toml")).unwrap();
    let wasm = std::fs::read(fixture.join("tools/probe/tool.wasm")).unwrap();
    let artifact = toolsmith::hashing::sha256_bytes(&wasm);
    assert!(
        manifest.contains(&format!("artifact = \"{artifact}\"")),
        "{manifest}"
    );
    let source =
        toolsmith::hashing::source_hash(&fixture.join("tools/probe"), Some("tool.wasm")).unwrap();
    assert!(
        manifest.contains(&format!("source = \"{source}\"")),
        "{manifest}"
    );
    let cargo = std::fs::read_to_string(fixture.join("tools/probe/Cargo.toml")).unwrap();
    assert!(
        cargo.contains("name = \"tool-probe\"") && cargo.contains("[workspace]"),
        "{cargo}"
    );
    assert_clean(fixture);
    // Arguments are checked against the input schema before the module runs.
    let bad = call(&app, "probe", json!({"text": "no mode"})).unwrap_err();
    assert!(matches!(bad, CallError::BadArguments { .. }), "{bad}");
}

#[test]
fn serde_json_tools_build_and_the_second_reuses_compiled_dependencies() {
    let tmp = tempfile::tempdir().unwrap();
    let boxdir = tmp.path().join("box");
    Toolbox::init(&boxdir, &[], "test").unwrap();
    // A person's flow: scaffold from the rust template, build in place, call.
    let ok = |c: &mut Command| {
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "{c:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    ok(&mut toolsmith(
        &boxdir,
        &["new", "greet", "--lang", "rust", "-d", "Greets"],
    ));
    let built: Value =
        serde_json::from_str(&ok(&mut toolsmith(&boxdir, &["--json", "build", "greet"]))).unwrap();
    assert_eq!(built["compiled"], true, "{built}");
    assert_eq!(built["action"], "update");
    assert_eq!(built["examples_run"], 1);
    let called: Value = serde_json::from_str(&ok(&mut toolsmith(
        &boxdir,
        &["--json", "call", "greet", "--args", r#"{"text":"world"}"#],
    )))
    .unwrap();
    assert_eq!(called["structured"], json!({"message": "Hello, world!"}));

    // A second tool with the same crate: serde_json is not compiled again.
    let app = approved_app(Toolbox::open(&boxdir).unwrap());
    let host = Recorder::default();
    // A unique comment each run, so cargo has the tool itself to compile even with the
    // shared cache of an earlier run.
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let src = format!("// run {nonce}\n{SHOUT_SRC}");
    let out = build_with(
        &app,
        json!({
            "name": "shout", "description": "Upper-cases a text", "source": src,
            "crates": {"serde_json": "1"},
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "examples": [{"input": {"text": "a b"}, "output": {"loud": "A B", "words": 2}}]
        }),
        &host,
        false,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.compiled);
    assert!(
        out.compiled_crates.contains(&"tool-shout".to_string()),
        "{:?}",
        out.compiled_crates
    );
    assert!(
        !out.compiled_crates.iter().any(|c| c == "serde_json"),
        "{:?}",
        out.compiled_crates
    );
    assert!(
        !out.cargo_output
            .iter()
            .any(|l| l.contains("Compiling serde_json")),
        "{:?}",
        out.cargo_output
    );
    assert!(
        out.cargo_output
            .iter()
            .any(|l| l.starts_with("Compiling tool-shout")),
        "{:?}",
        out.cargo_output
    );
    // cargo's status lines arrived as logs and progress while it ran.
    assert!(
        host.logs
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("Compiling tool-shout"))
    );
    assert!(
        host.progress
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("Compiling tool-shout"))
    );
    let r = call(&app, "shout", json!({"text": "hi there"})).unwrap();
    assert_eq!(r.structured, Some(json!({"loud": "HI THERE", "words": 2})));
    let cargo = std::fs::read_to_string(boxdir.join("tools/shout/Cargo.toml")).unwrap();
    assert!(cargo.contains("serde_json = \"1\""), "{cargo}");
    assert_eq!(commit_count(&boxdir), 4); // init, new greet, build greet, add shout
    assert_clean(&boxdir);
}

#[test]
fn a_failing_build_returns_located_diagnostics_and_keeps_the_old_version() {
    let (_tmp, app) = probe_clone();
    let root = app.toolbox.root().to_path_buf();
    let before = commit_count(&root);
    let broken = "fn main() {\n    let n: u32 = \"not a number\";\n    println!(\"{n}\");\n}\n";
    let err = build(&app, json!({"name": "probe", "source": broken})).unwrap_err();
    let BuildError::Compile {
        diagnostics, total, ..
    } = &err
    else {
        panic!("expected a compile error, got {err}");
    };
    assert_eq!(*total, 1);
    assert_eq!(diagnostics[0].file.as_deref(), Some("src/main.rs"));
    assert_eq!(diagnostics[0].line, Some(2));
    assert_eq!(diagnostics[0].code.as_deref(), Some("E0308"));
    let text = err.to_string();
    assert!(
        text.contains("src/main.rs:2") && text.contains("mismatched types"),
        "{text}"
    );
    assert!(
        err.hint()
            .unwrap()
            .contains("previous version stays active")
    );
    // Nothing committed, nothing changed on disk, the old version still answers.
    assert_eq!(commit_count(&root), before);
    assert_clean(&root);
    let out = call(&app, "probe", json!({"mode": "echo", "text": "still"})).unwrap();
    assert_eq!(out.structured, Some(json!({"echo": "still", "len": 5})));
}

#[test]
fn an_infinite_loop_is_stopped_by_the_time_limit_and_calls_go_on() {
    let (_tmp, app) = probe_clone();
    let err = call(&app, "probe", json!({"mode": "loop"})).unwrap_err();
    assert!(
        matches!(err, CallError::Run(RunError::Timeout { ms: 500, .. })),
        "{err}"
    );
    assert!(err.hint().unwrap().contains("timeout_ms"));
    let out = call(&app, "probe", json!({"mode": "echo", "text": "after"})).unwrap();
    assert_eq!(out.structured.unwrap()["echo"], "after");
}

#[test]
fn a_memory_bomb_is_stopped_by_the_memory_limit_and_calls_go_on() {
    let (_tmp, app) = probe_clone();
    let err = call(&app, "probe", json!({"mode": "alloc"})).unwrap_err();
    assert!(
        matches!(err, CallError::Run(RunError::Memory { mb: 32, .. })),
        "{err}"
    );
    assert!(err.hint().unwrap().contains("memory_mb"));
    let out = call(&app, "probe", json!({"mode": "echo", "text": "after"})).unwrap();
    assert_eq!(out.structured.unwrap()["echo"], "after");
}

#[test]
fn a_hundred_megabytes_of_output_are_stopped_by_the_output_cap() {
    let (_tmp, app) = probe_clone();
    let err = call(&app, "probe", json!({"mode": "spew"})).unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Run(RunError::OutputTooLarge { bytes: 65536, .. })
        ),
        "{err}"
    );
    assert!(err.hint().unwrap().contains("output_bytes"));
    let out = call(&app, "probe", json!({"mode": "echo", "text": "after"})).unwrap();
    assert_eq!(out.structured.unwrap()["echo"], "after");
}

#[test]
fn a_tampered_artifact_is_refused_until_rebuilt() {
    let (_tmp, app) = probe_clone();
    let root = app.toolbox.root().to_path_buf();
    let wasm = root.join("tools/probe/tool.wasm");
    let mut bytes = std::fs::read(&wasm).unwrap();
    bytes.extend_from_slice(b"\0tampered");
    std::fs::write(&wasm, &bytes).unwrap();
    let err = call(&app, "probe", json!({"mode": "echo", "text": "x"})).unwrap_err();
    assert!(
        matches!(err, CallError::Run(RunError::Tampered { .. })),
        "{err}"
    );
    let hint = err.hint().unwrap();
    assert!(
        hint.contains("build_tool") && hint.contains("toolsmith build probe"),
        "{hint}"
    );
    // Rebuilding from the stored source restores the committed module.
    let out = build(&app, json!({"name": "probe"})).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.commit, None,
        "the rebuilt module equals the committed one"
    );
    assert_clean(&root);
    let ok = call(&app, "probe", json!({"mode": "echo", "text": "x"})).unwrap();
    assert_eq!(ok.structured.unwrap()["len"], 1);
}

#[test]
fn rebuilding_an_unchanged_tool_runs_no_cargo() {
    let (_tmp, app) = probe_clone();
    let root = app.toolbox.root().to_path_buf();
    let before = commit_count(&root);
    let out = build(&app, json!({"name": "probe"})).unwrap();
    assert!(!out.compiled && out.cargo_output.is_empty());
    assert_eq!((out.action, out.commit.clone()), ("unchanged", None));
    // The same request again is unchanged too, and a manifest-only change commits without
    // compiling.
    assert!(!build(&app, probe_request()).unwrap().compiled);
    let mut req = probe_request();
    req["description"] = json!("Test probe, described anew");
    let out = build(&app, req).unwrap();
    assert!(!out.compiled);
    assert_eq!(out.action, "update");
    assert_eq!(commit_count(&root), before + 1);
    // Proof that no cargo runs: the CLI build succeeds with cargo made unreachable.
    let o = toolsmith(&root, &["build", "probe"])
        .env("TOOLSMITH_CARGO", "/nonexistent/cargo")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing compiled"));
    assert_eq!(commit_count(&root), before + 1);
    assert_clean(&root);
}

#[test]
fn failing_examples_gate_the_commit_unless_forced() {
    let (_tmp, app) = probe_clone();
    let root = app.toolbox.root().to_path_buf();
    let before = commit_count(&root);
    let mut req = probe_request();
    req["examples"] =
        json!([{"input": {"mode": "echo", "text": "hi"}, "output": {"echo": "hi", "len": 3}}]);
    let err = build(&app, req.clone()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, BuildError::Examples { .. }), "{text}");
    assert!(
        text.contains(r#"expected {"echo":"hi","len":3}"#)
            && text.contains(r#"got {"echo":"hi","len":2}"#),
        "{text}"
    );
    assert!(err.hint().unwrap().contains("commit_anyway"));
    assert_eq!(commit_count(&root), before);
    assert_clean(&root);
    let out = build_with(&app, req, &NoHost, true).unwrap();
    assert_eq!(out.example_failures.len(), 1);
    assert_eq!(out.action, "update");
    assert_eq!(commit_count(&root), before + 1);
    assert_clean(&root);
}

#[test]
fn the_sandbox_has_no_filesystem_and_only_declared_environment() {
    let (_tmp, app) = probe_clone();
    let root = app.toolbox.root().to_path_buf();
    // A person approved the declared environment variable on this machine.
    let approved = toolsmith(&root, &["approve", "probe"]).output().unwrap();
    assert!(approved.status.success(), "{approved:?}");
    let run = |args: &str| -> Value {
        let o = toolsmith(&root, &["--json", "call", "probe", "--args", args])
            .env("TOOLSMITH_TEST_GREETING", "hello")
            .env("TOOLSMITH_TEST_SECRET", "s3cret")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["structured"].clone()
    };
    // Declared: TOOLSMITH_TEST_GREETING arrives; nothing else does.
    assert_eq!(
        run(r#"{"mode":"env"}"#),
        json!({"greeting": "hello", "secret": null, "vars": 1})
    );
    assert_eq!(
        run(r#"{"mode":"fs"}"#),
        json!({"root": false, "passwd": false, "here": false, "create": false})
    );
    assert!(!root.join("tools/probe/written-by-probe.txt").exists());
    // Without the capability, no environment at all.
    let mut req = probe_request();
    req["capabilities"] = json!({});
    assert!(!build(&app, req).unwrap().compiled);
    assert_eq!(
        run(r#"{"mode":"env"}"#),
        json!({"greeting": null, "secret": null, "vars": 0})
    );
}

#[test]
fn build_errors_for_people_and_models_say_what_to_do() {
    let (tmp, tb) = toolbox();
    let app = approved_app(tb);
    // A new tool needs a description; unknown fields are refused; bad paths too.
    let e = build(&app, json!({"name": "fresh", "source": "fn main() {}"})).unwrap_err();
    assert!(e.to_string().contains("description"), "{e}");
    let e = serde_json::from_value::<BuildRequest>(json!({"name": "x", "dependencies": {}}))
        .unwrap_err();
    assert!(e.to_string().contains("dependencies"), "{e}");
    let e = build(&app, json!({"name": "fresh", "description": "d", "source": "fn main() {}", "files": {"../evil.rs": ""}})).unwrap_err();
    assert!(matches!(e, BuildError::BadRequest { .. }), "{e}");
    let e = build(
        &app,
        json!({"name": "build_tool", "description": "d", "source": "fn main() {}"}),
    )
    .unwrap_err();
    assert!(matches!(e, BuildError::Name(_)), "{e}");
    let e = build(&app, json!({"name": "ghost"})).unwrap_err();
    assert!(matches!(e, BuildError::NoSuchTool { .. }), "{e}");
    // Missing cargo: a clear error naming the fix, and nothing committed.
    let boxdir = tmp.path().join("box");
    let o = toolsmith(&boxdir, &["new", "nocargo", "--lang", "rust"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let before = commit_count(&boxdir);
    let o = toolsmith(&boxdir, &["build", "nocargo"])
        .env("TOOLSMITH_CARGO", "/nonexistent/cargo")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("cannot run cargo") && stderr.contains("rustup target add wasm32-wasip1"),
        "{stderr}"
    );
    assert_eq!(commit_count(&boxdir), before);
    assert_clean(&boxdir);
    assert_eq!(
        BuildError::NoTarget.hint().unwrap(),
        "run `rustup target add wasm32-wasip1`"
    );
}

#[test]
fn cancelling_a_build_stops_cargo_and_commits_nothing() {
    /// Cancels the build as soon as cargo starts compiling the tool.
    struct Canceller(tokio_util::sync::CancellationToken);
    impl Host for Canceller {
        fn log(&self, _: &str, message: &str) {
            if message.contains("Compiling tool-slowpoke") {
                self.0.cancel();
            }
        }
        fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}
    }
    let (_tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();
    let app = approved_app(tb);
    let cancel = tokio_util::sync::CancellationToken::new();
    let host = Canceller(cancel.clone());
    let mut opts = build::Options::new(&host, "test");
    opts.cache = Some(cache());
    opts.cancel = cancel;
    // A unique body each run, so cargo always has something to compile.
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let src = format!("fn main() {{ println!(\"{{}}\", {nonce}u128); }}\n");
    let req = request(json!({"name": "slowpoke", "description": "d", "source": src, "crates": {}}));
    let err = rt().block_on(build::build(&app, req, &opts)).unwrap_err();
    assert!(matches!(err, BuildError::Cancelled { .. }), "{err}");
    assert_eq!(commit_count(&root), 1);
    assert!(!root.join("tools/slowpoke").exists());
    assert_clean(&root);
    // No rustc of that crate is left running (killed with cargo's process group).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let alive = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .any(|p| {
                std::fs::read(p.path().join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains("tool_slowpoke"))
                    .unwrap_or(false)
            });
        if !alive {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "a rustc of the cancelled build is still running"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn store_example_wasm_tool_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let boxdir = tmp.path().join("box");
    let o = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["init", "--example"])
        .arg(&boxdir)
        .output()
        .unwrap();
    assert!(o.status.success());
    let app = approved_app(Toolbox::open(&boxdir).unwrap());
    let out = call(&app, "word_count", json!({"text": "one two three"})).unwrap();
    assert_eq!(out.structured.unwrap()["words"], 3);
}
