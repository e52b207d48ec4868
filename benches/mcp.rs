//! MCP server benchmarks with raw JSON-RPC over stdio and streamable HTTP; prints a table.
//! Run: `cargo bench --bench mcp` (uses the binary cargo builds for the bench, optimized).
//!
//! stdio: spawn → initialize; tools/list with 10 / 1,000 / 10,000 tools; a warm WASM call
//! round trip (p50/p95); the first call after a restart; hand edit of a tool.toml →
//! list_changed. HTTP (keep-alive, one session per client): tools/list and the warm WASM call
//! beside the stdio figures, 100 concurrent clients × 100 calls (p50/p95), server RSS before
//! and after.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    fn spawn(bin: &Path, toolbox: &Path, cache: &Path) -> (Server, Duration) {
        let t = Instant::now();
        let mut child = Command::new(bin)
            .args(["--toolbox"])
            .arg(toolbox)
            .arg("serve")
            .env("TOOLSMITH_CACHE", cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn toolsmith");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            stdin,
            stdout,
            next: 1,
        };
        s.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}));
        let init = t.elapsed();
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (s, init)
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}"))
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.read();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }

    /// Wait for a notification with this method.
    fn wait_for(&mut self, method: &str) {
        loop {
            let v = self.read();
            if v.get("method").and_then(Value::as_str) == Some(method) {
                return;
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A streamable-HTTP MCP client on one kept-alive connection (one 2025-11-25 session).
struct HttpClient {
    agent: ureq::Agent,
    url: String,
    session: String,
    next: u64,
}

impl HttpClient {
    fn connect(url: &str) -> HttpClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut c = HttpClient {
            agent,
            url: url.to_string(),
            session: String::new(),
            next: 1,
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
        let resp = c.post(&init);
        c.session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_string();
        let _ = resp.into_body().read_to_string();
        let _ = c
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .into_body()
            .read_to_string();
        c
    }

    fn post(&self, body: &Value) -> ureq::http::Response<ureq::Body> {
        let mut req = self
            .agent
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25");
        if !self.session.is_empty() {
            req = req.header("mcp-session-id", &self.session);
        }
        req.send(body.to_string()).expect("POST /mcp")
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let body = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .into_body()
            .read_to_string()
            .expect("a response body");
        // An SSE stream (data: lines) or one JSON document.
        body.lines()
            .filter_map(|l| l.strip_prefix("data:").map(str::trim))
            .chain(std::iter::once(body.trim()))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|v| v.get("id") == Some(&json!(id)))
            .unwrap_or_else(|| panic!("no response to {method} in {body:?}"))
    }
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The HTTP rows: tools/list and a warm WASM call over keep-alive beside stdio, then 100
/// concurrent clients × 100 calls, with the server's RSS before and after.
fn http_rows(bin: &Path, rows: &mut Vec<(String, String, &'static str)>) {
    let tmp = tempfile::tempdir().unwrap();
    let tb = toolbox(bin, tmp.path(), 0);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(bin)
        .arg("--toolbox")
        .arg(&tb)
        .args(["serve", "--http", &addr])
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn toolsmith serve --http");
    let up = (0..400).any(|_| {
        std::thread::sleep(Duration::from_millis(25));
        std::net::TcpStream::connect(&addr).is_ok()
    });
    assert!(up, "serve --http did not listen on {addr}");
    let url = format!("http://{addr}/mcp");
    let args = json!({"name": "word_count", "arguments": {"text": "the quick brown fox"}});
    let mut c = HttpClient::connect(&url);
    let r = c.request("tools/call", args.clone());
    assert_eq!(r["result"]["structuredContent"]["words"], 4, "{r}");
    let mut lists: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            c.request("tools/list", json!({}));
            t.elapsed()
        })
        .collect();
    rows.push((
        "HTTP keep-alive tools/list, 10 tools p50".into(),
        ms(pct(&mut lists, 0.5)),
        "stdio + 1 ms",
    ));
    let mut calls: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            c.request("tools/call", args.clone());
            t.elapsed()
        })
        .collect();
    rows.push((
        "HTTP keep-alive warm WASM call p50".into(),
        ms(pct(&mut calls, 0.5)),
        "stdio + 1 ms",
    ));
    rows.push((
        "HTTP keep-alive warm WASM call p95".into(),
        ms(pct(&mut calls, 0.95)),
        "",
    ));
    let before = rss_kib(child.id());
    let t = Instant::now();
    let threads: Vec<_> = (0..100)
        .map(|_| {
            let url = url.clone();
            let args = args.clone();
            std::thread::spawn(move || {
                let mut c = HttpClient::connect(&url);
                (0..100)
                    .map(|_| {
                        let t = Instant::now();
                        c.request("tools/call", args.clone());
                        t.elapsed()
                    })
                    .collect::<Vec<Duration>>()
            })
        })
        .collect();
    let mut all: Vec<Duration> = threads
        .into_iter()
        .flat_map(|h| h.join().expect("a client thread"))
        .collect();
    let wall = t.elapsed();
    let after = rss_kib(child.id());
    rows.push((
        "HTTP 100 clients × 100 WASM calls p50".into(),
        ms(pct(&mut all, 0.5)),
        "",
    ));
    rows.push((
        "HTTP 100 clients × 100 WASM calls p95".into(),
        ms(pct(&mut all, 0.95)),
        "",
    ));
    rows.push((
        "HTTP 100 clients × 100 WASM calls, throughput".into(),
        format!("{:.0} calls/s", all.len() as f64 / wall.as_secs_f64()),
        "",
    ));
    rows.push((
        "HTTP server RSS before → after the 100 clients".into(),
        format!(
            "{:.1} MiB → {:.1} MiB",
            before as f64 / 1024.0,
            after as f64 / 1024.0
        ),
        "",
    ));
    let _ = child.kill();
    let _ = child.wait();
}

fn bin() -> PathBuf {
    // Cargo builds the binary with the bench profile (optimized) for this bench.
    PathBuf::from(env!("CARGO_BIN_EXE_toolsmith"))
}

fn toolbox(bin: &Path, dir: &Path, extra: usize) -> PathBuf {
    let tb = dir.join("box");
    assert!(
        Command::new(bin)
            .args(["init", "--example"])
            .arg(&tb)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success()
    );
    for i in 0..extra {
        let d = tb.join("tools").join(format!("gen_{i:05}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("tool.toml"), format!("name = \"gen_{i:05}\"\ndescription = \"Generated tool {i}\"\nkind = \"script\"\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n[input_schema]\ntype = \"object\"\n[input_schema.properties.text]\ntype = \"string\"\n")).unwrap();
    }
    tb
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let bin = bin();
    let mut rows: Vec<(String, String, &'static str)> = Vec::new();
    for (extra, label) in [(3usize, "10"), (993, "1,000"), (9_993, "10,000")] {
        let tmp = tempfile::tempdir().unwrap();
        let tb = toolbox(&bin, tmp.path(), extra);
        let cache = tmp.path().join("cache");
        let mut inits: Vec<Duration> = (0..5).map(|_| Server::spawn(&bin, &tb, &cache).1).collect();
        rows.push((
            format!("spawn → initialize, {label} tools"),
            ms(pct(&mut inits, 0.5)),
            if label == "1,000" { "≤ 15 ms" } else { "" },
        ));
        let (mut s, _) = Server::spawn(&bin, &tb, &cache);
        let mut lists: Vec<Duration> = (0..20)
            .map(|_| {
                let t = Instant::now();
                s.request("tools/list", json!({}));
                t.elapsed()
            })
            .collect();
        let target = match label {
            "10" => "≤ 1 ms",
            "10,000" => "≤ 20 ms",
            _ => "",
        };
        rows.push((
            format!("tools/list, {label} tools"),
            ms(pct(&mut lists, 0.5)),
            target,
        ));
    }

    let tmp = tempfile::tempdir().unwrap();
    let tb = toolbox(&bin, tmp.path(), 0);
    let cache = tmp.path().join("cache");
    let args = json!({"name": "word_count", "arguments": {"text": "the quick brown fox"}});
    {
        let (mut s, _) = Server::spawn(&bin, &tb, &cache);
        let t = Instant::now();
        let r = s.request("tools/call", args.clone());
        rows.push((
            "first WASM call, cold cache (compiles)".into(),
            ms(t.elapsed()),
            "",
        ));
        assert_eq!(r["result"]["structuredContent"]["words"], 4, "{r}");
        let mut calls: Vec<Duration> = (0..200)
            .map(|_| {
                let t = Instant::now();
                s.request("tools/call", args.clone());
                t.elapsed()
            })
            .collect();
        rows.push((
            "warm WASM call word_count p50".into(),
            ms(pct(&mut calls, 0.5)),
            "≤ 1 ms",
        ));
        rows.push((
            "warm WASM call word_count p95".into(),
            ms(pct(&mut calls, 0.95)),
            "",
        ));
        let mut calls: Vec<Duration> = (0..50).map(|_| { let t = Instant::now(); s.request("tools/call", json!({"name": "call_tool", "arguments": {"name": "system_info", "arguments": {}}})); t.elapsed() }).collect();
        rows.push((
            "bash script call (fresh process) p50".into(),
            ms(pct(&mut calls, 0.5)),
            "",
        ));
        let mut calls: Vec<Duration> = (0..30)
            .map(|_| {
                let t = Instant::now();
                s.request(
                    "tools/call",
                    json!({"name": "json_format", "arguments": {"json": "[1,2]"}}),
                );
                t.elapsed()
            })
            .collect();
        rows.push((
            "python script call (fresh process) p50".into(),
            ms(pct(&mut calls, 0.5)),
            "",
        ));
        let mut calls: Vec<Duration> = (0..30)
            .map(|_| {
                let t = Instant::now();
                s.request(
                    "tools/call",
                    json!({"name": "slugify", "arguments": {"text": "A b"}}),
                );
                t.elapsed()
            })
            .collect();
        rows.push((
            "node script call (fresh process) p50".into(),
            ms(pct(&mut calls, 0.5)),
            "",
        ));
    }
    {
        let (mut s, _) = Server::spawn(&bin, &tb, &cache);
        let t = Instant::now();
        s.request("tools/call", args.clone());
        rows.push((
            "first WASM call after restart (cached module)".into(),
            ms(t.elapsed()),
            "≤ 5 ms",
        ));
        let path = tb.join("tools/word_count/tool.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut edits = Vec::new();
        for i in 0..10 {
            std::thread::sleep(Duration::from_millis(300));
            let t = Instant::now();
            std::fs::write(
                &path,
                text.replace("Count the words", &format!("Count (v{i}) the words")),
            )
            .unwrap();
            s.wait_for("notifications/tools/list_changed");
            edits.push(t.elapsed());
        }
        rows.push((
            "hand edit → list_changed p50".into(),
            ms(pct(&mut edits, 0.5)),
            "≤ 100 ms",
        ));
    }

    http_rows(&bin, &mut rows);

    println!("\n| benchmark | result | target |\n|---|---|---|");
    for (n, r, t) in rows {
        println!("| {n} | {r} | {t} |");
    }
}
