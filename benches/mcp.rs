//! MCP server benchmarks over stdio with raw JSON-RPC; prints a table.
//! Run: `cargo bench --bench mcp` (uses the binary cargo builds for the bench, optimized).
//!
//! spawn → initialize; tools/list with 10 / 1,000 / 10,000 tools; a warm WASM call round trip
//! (p50/p95); the first call after a restart; hand edit of a tool.toml → list_changed.

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
    let mut rows: Vec<(String, String, &str)> = Vec::new();
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

    println!("\n| benchmark | result | target |\n|---|---|---|");
    for (n, r, t) in rows {
        println!("| {n} | {r} | {t} |");
    }
}
