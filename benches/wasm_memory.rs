//! Many Python components in one server, within the memory budget (issue 41); prints a table.
//! Run: `cargo bench --bench wasm_memory` (TOOLSMITH_BENCH_N: how many, default 50).
//!
//! One Python component is built with `build_tool` (componentize-py from
//! `TOOLSMITH_COMPONENTIZE_PY` or scripts/setup.sh's target/componentize-py), then stored again
//! under N names (the same artifact: one compiled-code cache entry, N tools the server loads
//! each for itself, as it would N different components of the same size). A `toolsmith serve`
//! (MCP over stdio, raw JSON-RPC) then calls each once; its resident memory (VmRSS) is read
//! after every tenth call. Then: a warm call (the tool called last, p50 of 50), and the call of
//! a tool the budget unloaded (the first ones, each its first call since; median). Twice: with
//! the default budget, and with one no N components reach (what a server did before).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use toolsmith::app::App;
use toolsmith::build;
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{FileSpec, Toolbox};

const PYTHON_SRC: &str = r#"import wit_world
from wit_world import Output


class WitWorld(wit_world.WitWorld):
    def call(self, text):
        return Output(message=f"Hello, {text}!")
"#;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    fn spawn(toolbox: &Path, cache: &Path, budget: Option<&str>) -> Server {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        c.arg("--toolbox")
            .arg(toolbox)
            .arg("serve")
            .env("TOOLSMITH_CACHE", cache)
            .env_remove("TOOLSMITH_WASM_MEMORY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // TOOLSMITH_BENCH_STDERR=FILE keeps the servers' logs (with TOOLSMITH_LOG=debug,
            // the phases of each load).
            .stderr(match std::env::var_os("TOOLSMITH_BENCH_STDERR") {
                Some(f) => std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(f)
                    .map(Stdio::from)
                    .unwrap_or_else(|_| Stdio::null()),
                None => Stdio::null(),
            });
        if let Some(b) = budget {
            c.env("TOOLSMITH_WASM_MEMORY", b);
        }
        let mut child = c.spawn().expect("spawn toolsmith");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Server {
            child,
            stdin,
            stdout,
            next: 1,
        };
        s.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}));
        writeln!(
            s.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .expect("write");
        s
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .expect("write");
        self.stdin.flush().expect("flush");
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).expect("read");
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }

    /// One call of `tool`, checked; how long it took.
    fn call(&mut self, tool: &str) -> Duration {
        let t = Instant::now();
        let r = self.request(
            "tools/call",
            json!({"name": tool, "arguments": {"text": "bench"}}),
        );
        let took = t.elapsed();
        assert_eq!(
            r["result"]["structuredContent"],
            json!({"message": "Hello, bench!"}),
            "{r}"
        );
        took
    }

    /// Its resident memory now, in MB.
    fn rss_mb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kib| kib / 1024)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let n: usize = std::env::var("TOOLSMITH_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache: PathBuf = tmp.path().join("cache");
    let root = tmp.path().join("box");
    let tb = Toolbox::init(&root, &[], "bench").expect("init");
    let mut config = toolsmith::config::Config::from_env().expect("config");
    config.cache_dir = cache.clone();
    if std::env::var_os("TOOLSMITH_COMPONENTIZE_PY").is_none() {
        config.componentize_py = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/componentize-py/bin/componentize-py");
    }
    let app = App::new(tb, config);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let req = serde_json::from_value(json!({
        "name": "py0",
        "description": "Greets a text (benchmark)",
        "language": "python",
        "source": PYTHON_SRC,
        "input_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
        "output_schema": {"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}},
    }))
    .expect("a request");
    let mut opts = build::Options::new(&NoHost, "bench");
    opts.cache = Some(cache.clone());
    let t = Instant::now();
    let out = rt
        .block_on(build::build(&app, req, &opts))
        .unwrap_or_else(|e| panic!("build: {e}"));
    println!(
        "built one Python component in {} ({} bytes); storing it under {n} names",
        ms(t.elapsed()),
        out.artifact_bytes
    );
    let dir = app.toolbox.tools_dir().join("py0");
    let mut files = Vec::new();
    for e in walk(&dir) {
        let rel = e
            .strip_prefix(&dir)
            .expect("inside")
            .to_string_lossy()
            .to_string();
        files.push(FileSpec::new(rel, std::fs::read(&e).expect("read")));
    }
    for i in 1..n {
        let name = format!("py{i}");
        let renamed: Vec<FileSpec> = files
            .iter()
            .map(|f| {
                if f.path == "tool.toml" {
                    let text = String::from_utf8_lossy(&f.contents).replacen(
                        "name = \"py0\"",
                        &format!("name = \"{name}\""),
                        1,
                    );
                    FileSpec::new("tool.toml", text)
                } else {
                    FileSpec::new(f.path.clone(), f.contents.clone())
                }
            })
            .collect();
        app.toolbox
            .write_tool(&name, &renamed, "bench")
            .expect("store a copy");
    }
    drop(app);

    let mut rows: Vec<(String, String)> = Vec::new();
    let default = toolsmith::config::DEFAULT_WASM_MEMORY_MB.to_string();
    for (label, budget) in [
        (format!("budget {default} MiB (default)"), None),
        ("no budget reached (before)".to_string(), Some("1000000")),
    ] {
        let mut server = Server::spawn(&root, &cache, budget);
        std::thread::sleep(Duration::from_secs(1));
        let start = server.rss_mb();
        let mut rss = vec![format!("start {start}")];
        let mut firsts = Vec::new();
        for i in 0..n {
            firsts.push(server.call(&format!("py{i}")));
            if (i + 1) % 10 == 0 || i + 1 == n || i == 0 {
                rss.push(format!("{} → {}", i + 1, server.rss_mb()));
            }
        }
        let last = format!("py{}", n - 1);
        let warm = median((0..50).map(|_| server.call(&last)).collect());
        let again = median(
            (0..5.min(n))
                .map(|i| server.call(&format!("py{i}")))
                .collect(),
        );
        rows.push((
            format!("{label}: RSS MB after N called once"),
            rss.join(", "),
        ));
        rows.push((
            format!("{label}: first calls (load from the compiled-code cache)"),
            format!("median {}", ms(median(firsts))),
        ));
        rows.push((format!("{label}: warm call, p50 of 50"), ms(warm)));
        rows.push((
            format!(
                "{label}: call of one of the first 5 again (unloaded when over the budget), median"
            ),
            ms(again),
        ));
        rows.push((
            format!("{label}: RSS MB at the end"),
            server.rss_mb().to_string(),
        ));
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "N = {n}; load average: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    for (what, value) in rows {
        println!("{what:w$}  {value}");
    }
}

/// The files under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
