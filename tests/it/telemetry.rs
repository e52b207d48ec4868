//! OpenTelemetry (issue 43): `toolsmith serve` with its exporter pointed at a real OTLP/HTTP
//! receiver on 127.0.0.1 (tests/py/otlp_receiver.py, built on the protocol's own message
//! classes from PyPI `opentelemetry-proto`). A call carrying a `traceparent` in `_meta` gives a
//! SERVER span `tools/call NAME` under that parent with the MCP conventions' attributes, child
//! spans for the call's stages, and the conventions' metrics; a tool that answers `isError` is
//! a `tool_error`. With content recording opted in, a secret — in the arguments, the result,
//! the error, the logs — never appears in any exported byte.

use crate::common::python;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";
const SECRET: &str = "otel-secret-5c1e9a7d3b";

pub(crate) struct Env {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub personal: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let e = Env {
            root: tmp.path().join("box"),
            personal: tmp.path().join("personal"),
            tmp,
        };
        let out = e.cli(&["init", e.root.to_str().unwrap()], None);
        assert!(out.status.success(), "{out:?}");
        e
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        cmd.arg("--toolbox")
            .arg(&self.root)
            .env("TOOLSMITH_DATA", &self.personal)
            .env("TOOLSMITH_CACHE", self.tmp.path().join("cache"))
            .env("TOOLSMITH_ROOTS", self.tmp.path())
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("TOOLSMITH_TELEMETRY_CONTENT");
        cmd
    }

    pub fn cli(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the CLI runs");
        let mut input = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            input.write_all(s.as_bytes()).unwrap();
        }
        drop(input);
        child.wait_with_output().unwrap()
    }

    /// Register a Python script tool (plain protocol) with extra register_script fields.
    pub fn register(&self, name: &str, code: &str, extra: Value) {
        let dir = self.tmp.path().join("work");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{name}.py"));
        std::fs::write(&file, code).unwrap();
        let mut spec = json!({"language": "python", "protocol": "plain"});
        for (k, v) in extra.as_object().unwrap() {
            spec[k] = v.clone();
        }
        let spec_file = dir.join(format!("{name}.json"));
        std::fs::write(&spec_file, spec.to_string()).unwrap();
        let out = self.cli(
            &[
                "register",
                name,
                "--spec",
                spec_file.to_str().unwrap(),
                "--code",
                file.to_str().unwrap(),
            ],
            None,
        );
        assert!(
            out.status.success(),
            "register {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A raw JSON-RPC client of `toolsmith serve` over stdio.
pub(crate) struct Session {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<Value>,
    next: u64,
}

impl Session {
    pub fn start(mut cmd: Command) -> Session {
        let mut child = cmd
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let mut s = Session {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next: 1,
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "otel-test", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "toolsmith", "{init}");
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("open");
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// Send a request; its response (notifications in between are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// Close stdin (the client goes) and wait for the server to end.
    pub fn end(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the server ended with {status}");
    }
}

/// The OTLP receiver: its port and the file it writes each export to.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(dir: &Path) -> Receiver {
        let out = dir.join("otlp.jsonl");
        let mut child = Command::new(python())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/otlp_receiver.py"))
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the receiver starts (scripts/setup.sh installs opentelemetry-proto)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("the receiver's port, not {line:?}"));
        Receiver { child, port, out }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every export received: (path, raw body, decoded request).
    fn exports(&self) -> Vec<(String, Vec<u8>, Value)> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .map(|l| {
                let r: Value = serde_json::from_str(l).unwrap();
                assert!(r.get("error").is_none(), "a body that did not parse: {r}");
                assert_eq!(r["content_type"], "application/x-protobuf", "{r}");
                let body = hex::decode(r["body_hex"].as_str().unwrap()).unwrap();
                (
                    r["path"].as_str().unwrap().to_string(),
                    body,
                    r["decoded"].clone(),
                )
            })
            .collect()
    }

    fn spans(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for (path, _, d) in self.exports() {
            if path != "/v1/traces" {
                continue;
            }
            for rs in d["resourceSpans"].as_array().unwrap() {
                let service = attr(&rs["resource"], "service.name");
                assert_eq!(service, json!("toolsmith"), "{rs}");
                for ss in rs["scopeSpans"].as_array().unwrap() {
                    out.extend(ss["spans"].as_array().unwrap().iter().cloned());
                }
            }
        }
        out
    }

    fn metrics(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for (path, _, d) in self.exports() {
            if path != "/v1/metrics" {
                continue;
            }
            for rm in d["resourceMetrics"].as_array().unwrap() {
                for sm in rm["scopeMetrics"].as_array().unwrap() {
                    out.extend(sm["metrics"].as_array().unwrap().iter().cloned());
                }
            }
        }
        out
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An attribute's value (`{"stringValue": …}` → the string) among `v["attributes"]`.
fn attr(v: &Value, key: &str) -> Value {
    v["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["key"] == key)
        .map(|a| {
            let val = &a["value"];
            val.get("stringValue")
                .or_else(|| val.get("intValue"))
                .or_else(|| val.get("boolValue"))
                .cloned()
                .unwrap_or(Value::Null)
        })
        .unwrap_or(Value::Null)
}

fn span<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    spans
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no span {name:?} in {:?}", names(spans)))
}

fn names(spans: &[Value]) -> Vec<&str> {
    spans.iter().filter_map(|s| s["name"].as_str()).collect()
}

const ADD: &str = "import json, sys\na = json.load(sys.stdin)\nif a.get('fail'):\n    sys.stderr.write('cannot add\\n')\n    sys.exit(1)\nprint(json.dumps({'sum': a['a'] + a['b']}))\n";

fn call(s: &mut Session, tool: &str, args: Value, trace: Option<&str>) -> Value {
    let mut params = json!({"name": tool, "arguments": args});
    if let Some(tp) = trace {
        params["_meta"] = json!({"traceparent": tp});
    }
    s.request("tools/call", params)
}

#[test]
fn spans_and_metrics_reach_an_otlp_receiver() {
    let e = Env::new();
    e.register(
        "add",
        ADD,
        json!({"description": "Add two numbers", "input_schema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "fail": {"type": "boolean"}}}}),
    );
    let receiver = Receiver::start(e.tmp.path());
    let mut cmd = e.command();
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
    let mut s = Session::start(cmd);
    let tp = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    let ok = call(&mut s, "add", json!({"a": 1, "b": 2}), Some(&tp));
    assert_eq!(ok["result"]["structuredContent"]["sum"], 3, "{ok}");
    let failed = call(&mut s, "add", json!({"a": 1, "b": 2, "fail": true}), None);
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    let list = s.request("tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
    s.end();

    let spans = receiver.spans();
    // The call's span: SERVER, named by the conventions, under the client's parent.
    let calls: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "tools/call add")
        .collect();
    assert_eq!(calls.len(), 2, "{:?}", names(&spans));
    let root = calls
        .iter()
        .find(|s| s["traceId"] == PARENT_TRACE)
        .unwrap_or_else(|| panic!("no span in the client's trace: {calls:?}"));
    assert_eq!(root["parentSpanId"], PARENT_SPAN, "{root}");
    assert_eq!(root["kind"], "SPAN_KIND_SERVER", "{root}");
    for (k, v) in [
        ("mcp.method.name", json!("tools/call")),
        ("gen_ai.tool.name", json!("add")),
        ("gen_ai.operation.name", json!("execute_tool")),
        ("jsonrpc.request.id", json!("2")),
        ("mcp.protocol.version", json!("2025-11-25")),
        ("network.transport", json!("pipe")),
    ] {
        assert_eq!(attr(root, k), v, "{k}: {root}");
    }
    assert!(attr(root, "mcp.session.id").is_string(), "{root}");
    assert_eq!(attr(root, "error.type"), Value::Null, "{root}");
    // No arguments or results unless the person opts in.
    assert_eq!(attr(root, "gen_ai.tool.call.arguments"), Value::Null);
    assert_eq!(attr(root, "gen_ai.tool.call.result"), Value::Null);

    // The stages, children of the call (the sandbox start inside the run).
    let id = root["spanId"].as_str().unwrap();
    let in_trace: Vec<Value> = spans
        .iter()
        .filter(|s| s["traceId"] == PARENT_TRACE)
        .cloned()
        .collect();
    for stage in ["argument check", "approval wait", "tool run", "redaction"] {
        assert_eq!(span(&in_trace, stage)["parentSpanId"], id, "{stage}");
    }
    let run = span(&in_trace, "tool run");
    assert_eq!(attr(run, "toolsmith.tool.kind"), json!("script"), "{run}");
    assert_eq!(
        span(&in_trace, "sandbox start")["parentSpanId"],
        run["spanId"],
        "the sandbox starts inside the run"
    );

    // The failed call: a tool error, in a trace of its own; its run failed.
    let bad = calls.iter().find(|s| s["traceId"] != PARENT_TRACE).unwrap();
    assert_eq!(attr(bad, "error.type"), json!("tool_error"), "{bad}");
    assert_eq!(bad["status"]["code"], "STATUS_CODE_ERROR", "{bad}");
    assert!(bad.get("parentSpanId").is_none() || bad["parentSpanId"] == "");
    // Every request has its span: initialize and tools/list too.
    span(&spans, "initialize");
    span(&spans, "tools/list");

    // Metrics: the conventions' histograms and the per-tool counts.
    let metrics = receiver.metrics();
    let metric = |name: &str| -> Vec<Value> {
        metrics
            .iter()
            .filter(|m| m["name"] == name)
            .flat_map(|m| {
                let data = m
                    .get("histogram")
                    .or_else(|| m.get("sum"))
                    .unwrap_or_else(|| panic!("{m}"));
                data["dataPoints"].as_array().unwrap().clone()
            })
            .collect()
    };
    let ops = metric("mcp.server.operation.duration");
    let call_points: Vec<&Value> = ops
        .iter()
        .filter(|p| {
            attr(p, "mcp.method.name") == "tools/call" && attr(p, "gen_ai.tool.name") == "add"
        })
        .collect();
    let count: u64 = call_points
        .iter()
        .map(|p| p["count"].as_str().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(count, 2, "{call_points:?}");
    assert!(
        call_points
            .iter()
            .any(|p| attr(p, "error.type") == "tool_error"),
        "{call_points:?}"
    );
    assert!(
        metrics
            .iter()
            .any(|m| m["name"] == "mcp.server.operation.duration" && m["unit"] == "s")
    );
    let sessions = metric("mcp.server.session.duration");
    assert!(!sessions.is_empty(), "a session's duration: {metrics:?}");
    let sum = |name: &str| -> i64 {
        metric(name)
            .iter()
            .filter(|p| attr(p, "gen_ai.tool.name") == "add")
            .map(|p| p["asInt"].as_str().unwrap().parse::<i64>().unwrap())
            .sum()
    };
    assert_eq!(sum("toolsmith.tool.calls"), 2);
    assert_eq!(sum("toolsmith.tool.errors"), 1);
}

const LEAK: &str = "import json, os, sys\na = json.load(sys.stdin)\ntok = os.environ.get('OTEL_TEST_TOKEN', '')\nsys.stderr.write('log ' + tok + '\\n')\nif a.get('fail'):\n    sys.stderr.write('failing with ' + tok + '\\n')\n    sys.exit(1)\nprint(json.dumps({'token': tok, 'echo': a.get('text')}))\n";

#[test]
fn a_secret_never_appears_in_any_exported_field() {
    let e = Env::new();
    e.register(
        "leak",
        LEAK,
        json!({"description": "Reads a token", "secrets": {"OTEL_TEST_TOKEN": "a token"}}),
    );
    assert!(e.cli(&["approve", "leak"], None).status.success());
    let set = e.cli(
        &["secret", "set", "OTEL_TEST_TOKEN"],
        Some(&format!("{SECRET}\n")),
    );
    assert!(set.status.success(), "{set:?}");
    let receiver = Receiver::start(e.tmp.path());
    let mut cmd = e.command();
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        // Content recorded: what is recorded must be redacted.
        .env("TOOLSMITH_TELEMETRY_CONTENT", "1");
    let mut s = Session::start(cmd);
    let tp = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    // The secret in the arguments (as if the model had seen it), the result and the logs.
    let ok = call(
        &mut s,
        "leak",
        json!({"text": format!("x {SECRET} y")}),
        Some(&tp),
    );
    assert_eq!(
        ok["result"]["structuredContent"]["token"], "[secret OTEL_TEST_TOKEN]",
        "{ok}"
    );
    // And in an error.
    let bad = call(&mut s, "leak", json!({"fail": true}), None);
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    s.end();

    let exports = receiver.exports();
    assert!(exports.iter().any(|(p, _, _)| p == "/v1/traces"));
    let needles = [
        SECRET.as_bytes().to_vec(),
        hex::encode(SECRET).into_bytes(),
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, SECRET).into_bytes(),
    ];
    for (path, body, decoded) in &exports {
        let text = decoded.to_string();
        for n in &needles {
            let n_text = String::from_utf8_lossy(n);
            assert!(
                !body.windows(n.len()).any(|w| w == n.as_slice()),
                "{path}: the secret in the exported bytes"
            );
            assert!(!text.contains(n_text.as_ref()), "{path}: {text}");
        }
    }
    // Content was recorded (so the check above means something), redacted.
    let spans = receiver.spans();
    let root = spans
        .iter()
        .find(|s| s["name"] == "tools/call leak" && s["traceId"] == PARENT_TRACE)
        .expect("the call's span");
    let args = attr(root, "gen_ai.tool.call.arguments");
    assert!(
        args.as_str()
            .is_some_and(|a| a.contains("x [secret OTEL_TEST_TOKEN] y")),
        "{args}"
    );
    let result = attr(root, "gen_ai.tool.call.result");
    assert!(
        result
            .as_str()
            .is_some_and(|r| r.contains("[secret OTEL_TEST_TOKEN]")),
        "{result}"
    );
}

const TASK_TRACE: &str = "7c1e9a7d3b5f4e2a9d8c6b4a2f0e1d3c";

/// A call that runs as a task (over streamable HTTP, for a client that opted in) outlives its
/// request: the request's span ends when the task is created, and the stages that end after it
/// (the run) are still exported, in the client's trace, under the request's span.
#[test]
fn a_tasks_stages_that_end_after_its_request_are_exported_under_it() {
    let (tmp, tb) = crate::support::example_box();
    crate::common::commit_tool(
        &tb,
        "slow_hello",
        &[
            ("tool.toml", crate::tasks::SLOW_HELLO),
            ("main.sh", crate::tasks::SLOW_HELLO_SH),
        ],
    );
    let receiver = Receiver::start(tmp.path());
    let endpoint = receiver.endpoint();
    let server = crate::support::HttpServer::start(
        &tb,
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            // Spans leave within 100 ms, not at shutdown (this server is killed, not stopped).
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    );
    let mut c = crate::support::session(&server.url, true);
    let tp = format!("00-{TASK_TRACE}-{PARENT_SPAN}-01");
    let r = c.request(
        "tools/call",
        json!({"name": "slow_hello", "arguments": {}, "_meta": {"traceparent": tp}}),
    );
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let id = r["result"]["taskId"]
        .as_str()
        .expect("a taskId")
        .to_string();
    let task = crate::support::wait_terminal(&mut c, &id);
    assert_eq!(task["status"], "completed", "{task}");
    // The run's span is exported after the task ended (the telemetry thread, then a batch).
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let in_trace = loop {
        let text = std::fs::read_to_string(&receiver.out).unwrap_or_default();
        if text.ends_with('\n') && text.contains("\"tool run\"") {
            let spans: Vec<Value> = receiver
                .spans()
                .into_iter()
                .filter(|s| s["traceId"] == TASK_TRACE)
                .collect();
            if names(&spans).contains(&"tool run") {
                break spans;
            }
        }
        assert!(
            std::time::Instant::now() < until,
            "no run span exported: {:?}",
            names(&receiver.spans())
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let root = span(&in_trace, "tools/call slow_hello");
    assert_eq!(root["parentSpanId"], PARENT_SPAN, "{root}");
    let run = span(&in_trace, "tool run");
    assert_eq!(run["parentSpanId"], root["spanId"], "{run}");
    let end = |s: &Value| -> u128 {
        s["endTimeUnixNano"]
            .as_str()
            .and_then(|v| v.parse().ok())
            .or_else(|| s["endTimeUnixNano"].as_u64().map(u128::from))
            .unwrap_or_else(|| panic!("an end time: {s}"))
    };
    assert!(
        end(run) > end(root),
        "the run ended after the request answered: {run} {root}"
    );
}
