//! Component tools beside wasip1 modules; prints a table.
//! Run: `cargo bench --bench components` (uses the binary cargo builds for the bench).
//!
//! The same greeting tool built twice with `build_tool` — as a wasip1 module (serde_json on
//! stdin/stdout) and as a WASI 0.2 component (WIT-typed, wit-bindgen) — into one fresh
//! toolbox, sharing the cargo cache of the test suite when it is there; then warm calls of
//! each in process (`App::call`) and through `toolsmith serve` over MCP stdio (raw JSON-RPC),
//! and the first call after a restart (the compiled-code cache). A third build is the same
//! tool in Python (`language = "python"`, componentize-py from `TOOLSMITH_COMPONENTIZE_PY` or
//! scripts/setup.sh's target/componentize-py), a fourth in JavaScript (`language =
//! "javascript"`, ComponentizeJS from `TOOLSMITH_COMPONENTIZE_JS` or target/componentize-js).
//! Then a second Python and a second JavaScript component (other functions): their builds
//! after the first show what a build re-does.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use toolsmith::app::App;
use toolsmith::build;
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::Toolbox;

/// How long after a server's start (or its last call) the paused first calls come.
const PAUSE: Duration = Duration::from_secs(2);

const MODULE_SRC: &str = r#"use serde_json::{json, Value};
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: Value = serde_json::from_str(&s).unwrap_or(json!({}));
    let text = v["text"].as_str().unwrap_or("");
    println!("{}", json!({"message": format!("Hello, {text}!")}));
}
"#;

const COMPONENT_SRC: &str = r#"wit_bindgen::generate!({ world: "tool", path: "wit" });
struct T;
impl Guest for T {
    fn call(text: String) -> Result<Output, String> {
        Ok(Output { message: format!("Hello, {text}!") })
    }
}
export!(T);
"#;

const PYTHON_SRC: &str = r#"import wit_world
from wit_world import Output


class WitWorld(wit_world.WitWorld):
    def call(self, text):
        return Output(message=f"Hello, {text}!")
"#;

const PYTHON_SECOND_SRC: &str = r#"def call(text: str) -> dict:
    return {"message": text.upper() + "!"}
"#;

const JS_SECOND_SRC: &str = r#"export function call(text) {
  return { message: text.toUpperCase() + "!" };
}
"#;

const JS_SRC: &str = r#"export function call(text) {
  return { message: `Hello, ${text}!` };
}
"#;

fn request(name: &str, component: bool) -> Value {
    let mut r = json!({
        "name": name,
        "description": "Greets a text (benchmark)",
        "source": match name { "python" => PYTHON_SRC, "javascript" => JS_SRC, _ if component => COMPONENT_SRC, _ => MODULE_SRC },
        "input_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
        "output_schema": {"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}},
    });
    if name == "python" || name == "javascript" {
        r["language"] = json!(name);
    } else if component {
        r["world"] = json!("tool");
    } else {
        r["crates"] = json!({"serde_json": "1"});
    }
    r
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    fn spawn(toolbox: &Path, cache: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("--toolbox")
            .arg(toolbox)
            .arg("serve")
            .env("TOOLSMITH_CACHE", cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // TOOLSMITH_BENCH_STDERR=FILE keeps the servers' logs (with RUST_LOG, their phases).
            .stderr(match std::env::var_os("TOOLSMITH_BENCH_STDERR") {
                Some(f) => std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(f)
                    .map(Stdio::from)
                    .unwrap_or_else(|_| Stdio::null()),
                None => Stdio::null(),
            })
            .spawn()
            .expect("spawn toolsmith");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Server {
            child,
            stdin,
            stdout,
            next: 1,
        };
        s.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}));
        writeln!(
            s.input(),
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .expect("write");
        s
    }

    fn input(&mut self) -> &mut ChildStdin {
        self.stdin.as_mut().expect("the session is open")
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        writeln!(
            self.input(),
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .expect("write");
        self.input().flush().expect("flush");
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).expect("read");
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }

    fn call(&mut self, tool: &str) -> Value {
        let r = self.request(
            "tools/call",
            json!({"name": tool, "arguments": {"text": "bench"}}),
        );
        assert_eq!(
            r["result"]["structuredContent"],
            json!({"message": "Hello, bench!"}),
            "{r}"
        );
        r
    }
}

impl Server {
    /// End the session as a client does (stdin closed) and wait for the server to exit: it
    /// writes what it keeps across restarts (which tools were used).
    fn close(mut self) {
        drop(self.stdin.take());
        for _ in 0..500 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn p(times: &mut [Duration], q: usize) -> Duration {
    times.sort();
    times[times.len() * q / 100]
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache: PathBuf = std::env::var_os("TOOLSMITH_BENCH_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/wasm-test-cache"));
    let root = tmp.path().join("box");
    let tb = Toolbox::init(&root, &[], "bench").expect("init");
    let mut config = toolsmith::config::Config::from_env().expect("config");
    if std::env::var_os("TOOLSMITH_COMPONENTIZE_PY").is_none() {
        config.componentize_py = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/componentize-py/bin/componentize-py");
    }
    if std::env::var_os("TOOLSMITH_COMPONENTIZE_JS").is_none() {
        config.componentize_js = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/componentize-js/node_modules/.bin/componentize-js");
    }
    let app = App::new(tb, config);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut rows: Vec<(String, String, String)> = Vec::new();
    const TOOLS: [&str; 4] = ["module", "component", "python", "javascript"];
    for (name, component) in [
        ("module", false),
        ("component", true),
        ("python", true),
        ("javascript", true),
    ] {
        let mut opts = build::Options::new(&NoHost, "bench");
        opts.cache = Some(cache.clone());
        let req = serde_json::from_value(request(name, component)).expect("a request");
        let t = Instant::now();
        let out = rt
            .block_on(build::build(&app, req, &opts))
            .unwrap_or_else(|e| panic!("build of {name}: {e}"));
        rows.push((
            format!("build: {name}"),
            ms(t.elapsed()),
            format!(
                "{} bytes, cargo compiled {}",
                out.artifact_bytes,
                out.compiled_crates.join(", ")
            ),
        ));
    }
    // A second Python and JavaScript component (another function): what is the tool's own
    // and what the interpreter's, which the first build compiled (issue 41).
    for (name, language, source) in [
        ("python_second", "python", PYTHON_SECOND_SRC),
        ("javascript_second", "javascript", JS_SECOND_SRC),
    ] {
        let mut opts = build::Options::new(&NoHost, "bench");
        opts.cache = Some(cache.clone());
        let mut r = request(language, true);
        r["name"] = json!(name);
        r["source"] = json!(source);
        let req = serde_json::from_value(r).expect("a request");
        let t = Instant::now();
        let out = rt
            .block_on(build::build(&app, req, &opts))
            .unwrap_or_else(|e| panic!("build of {name}: {e}"));
        rows.push((
            format!("build: {name} (after the first)"),
            ms(t.elapsed()),
            format!("{} bytes", out.artifact_bytes),
        ));
    }
    let n = 2000;
    for name in TOOLS {
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let out = rt
                .block_on(app.call(name, json!({"text": "bench"}), &NoHost))
                .expect("call");
            times.push(t.elapsed());
            assert_eq!(out.structured, Some(json!({"message": "Hello, bench!"})));
        }
        rows.push((
            format!("call in process, warm: {name} ({n})"),
            format!("p50 {}", ms(p(&mut times, 50))),
            format!("p95 {}", ms(p(&mut times, 95))),
        ));
    }
    drop(app);
    for name in TOOLS {
        // A first server compiles the tool into the cache; the restart then finds it there.
        let mut first = Server::spawn(&root, &cache);
        first.call(name);
        first.close();
        // A restart whose first call comes a moment later (an editor starts the server, the
        // person then asks): the server prepared the tool meanwhile. Five restarts, the median.
        let mut later_times = Vec::new();
        for _ in 0..5 {
            let mut later = Server::spawn(&root, &cache);
            std::thread::sleep(PAUSE);
            let t = Instant::now();
            later.call(name);
            later_times.push(t.elapsed());
        }
        let first_later = p(&mut later_times, 50);
        let mut server = Server::spawn(&root, &cache);
        let t = Instant::now();
        server.call(name);
        let first = t.elapsed();
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            server.call(name);
            times.push(t.elapsed());
        }
        // The same pause without a restart: what the pause alone costs a call (threads and
        // processor caches gone cold), so the restart's own cost is the difference.
        let mut paused = Vec::new();
        for _ in 0..5 {
            std::thread::sleep(PAUSE);
            let t = Instant::now();
            server.call(name);
            paused.push(t.elapsed());
        }
        rows.push((
            format!("call over MCP stdio, warm: {name} ({n})"),
            format!("p50 {}", ms(p(&mut times, 50))),
            format!(
                "p95 {}; first call after a restart: at once {}, 2 s later {} (median of 5); a warm call 2 s after the last {} (median of 5)",
                ms(p(&mut times, 95)),
                ms(first),
                ms(first_later),
                ms(p(&mut paused, 50))
            ),
        ));
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    println!(
        "load average: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("{:w$}  {:>14}  notes", "what", "time");
    for (what, time, note) in rows {
        println!("{what:w$}  {time:>14}  {note}");
    }
}
