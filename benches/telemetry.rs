//! What tracing costs a call: a warm WASM call (`word_count` of the example toolbox) over MCP
//! stdio, by a server exporting nothing and by one exporting every span and metric over OTLP
//! HTTP/protobuf to a sink on 127.0.0.1 (rounds alternate between the two servers, so both see
//! the same machine); and a stage span's cost with nothing exported. Prints a table.
//! Run: `cargo bench --bench telemetry`.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
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
    fn spawn(toolbox: &Path, cache: &Path, otlp: Option<&str>) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        cmd.arg("--toolbox")
            .arg(toolbox)
            .arg("serve")
            .env("TOOLSMITH_CACHE", cache)
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(e) = otlp {
            cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", e);
        }
        let mut child = cmd.spawn().expect("spawn toolsmith");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
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
        .unwrap();
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
        .unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
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

/// An OTLP/HTTP sink on 127.0.0.1: answers every POST with 200 (keep-alive); the bodies and
/// their count are kept as totals.
fn sink() -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let bytes = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = std::sync::Arc::clone(&bytes);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let seen = std::sync::Arc::clone(&seen);
            std::thread::spawn(move || {
                let mut r = BufReader::new(conn.try_clone().unwrap());
                let mut w = conn;
                loop {
                    let mut len = 0usize;
                    loop {
                        let mut line = String::new();
                        if r.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let l = line.to_ascii_lowercase();
                        if let Some(v) = l.strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; len];
                    if r.read_exact(&mut body).is_err() {
                        return;
                    }
                    seen.fetch_add(len as u64, Ordering::Relaxed);
                    let _ = w.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n");
                }
            });
        }
    });
    (format!("http://{addr}"), bytes)
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let tb: PathBuf = tmp.path().join("box");
    assert!(
        Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(["init", "--example"])
            .arg(&tb)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success()
    );
    let cache = tmp.path().join("cache");
    let (endpoint, exported) = sink();
    let mut off = Server::spawn(&tb, &cache, None);
    let mut on = Server::spawn(&tb, &cache, Some(&endpoint));
    let args = json!({"name": "word_count", "arguments": {"text": "the quick brown fox"}});
    for s in [&mut off, &mut on] {
        for _ in 0..50 {
            let r = s.request("tools/call", args.clone());
            assert_eq!(r["result"]["structuredContent"]["words"], 4, "{r}");
        }
    }
    let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
    let traced = |i: u64| {
        let mut a = args.clone();
        a["_meta"] = json!({"traceparent": format!("00-{:032x}-{:016x}-01", i + 1, i + 1)});
        a
    };
    // Both servers are sent the same requests, each with a `traceparent` (a client that traces
    // sends it whether or not the server exports): the one difference is the export. Rounds
    // alternate which server is asked first, so neither is always the one whose call follows
    // the other's (an A/A run, OTEL_SDK_DISABLED=true, shows what is left).
    let rounds: u64 = std::env::var("TOOLSMITH_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    for round in 0..rounds {
        for i in 0..25u64 {
            let req = traced(round * 100 + i);
            let mut timed_off = |off: &mut Server, req: Value| {
                let t = Instant::now();
                off.request("tools/call", req);
                t_off.push(t.elapsed());
            };
            if round % 2 == 0 {
                timed_off(&mut off, req.clone());
            }
            let t = Instant::now();
            on.request("tools/call", req.clone());
            t_on.push(t.elapsed());
            if round % 2 == 1 {
                timed_off(&mut off, req);
            }
        }
    }
    let (p50_off, p50_on) = (pct(&mut t_off, 0.5), pct(&mut t_on, 0.5));
    let (p95_off, p95_on) = (pct(&mut t_off, 0.95), pct(&mut t_on, 0.95));
    drop(on);
    let sent = exported.load(std::sync::atomic::Ordering::Relaxed);
    // With nothing installed, a stage is one check.
    let n = 1_000_000u32;
    let t = Instant::now();
    for _ in 0..n {
        drop(std::hint::black_box(toolsmith::telemetry::stage("bench")));
    }
    let per_stage = t.elapsed().as_secs_f64() * 1e9 / f64::from(n);
    // With the pipeline installed (exporting to the sink): what one warm call's telemetry
    // costs on the calling thread — recording its request, the five stages a WASM call makes
    // and its outcome — and on the telemetry thread, making those into spans and points; apart
    // from the call itself and from the exporter's own thread.
    let settings = toolsmith::telemetry::Settings::from_vars(
        |k| (k == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| endpoint.clone()),
        false,
        tmp.path().join("personal"),
    );
    assert!(toolsmith::telemetry::install(settings).expect("the pipeline"));
    let one_call = |i: u64| {
        let tp = format!("00-{:032x}-{:016x}-01", i + 1, i + 1);
        let r = toolsmith::telemetry::request(&toolsmith::telemetry::RequestInfo {
            method: "tools/call",
            target: toolsmith::telemetry::Target::Tool("word_count"),
            request_id: i.to_string(),
            protocol_version: Some("2025-11-25".into()),
            session_id: Some("bench-session"),
            transport: toolsmith::telemetry::Transport::Pipe,
            traceparent: Some(&tp),
            tracestate: None,
        })
        .expect("a request span");
        let _cx = r.context().attach();
        toolsmith::telemetry::stage("argument check").enter(|| ());
        toolsmith::telemetry::stage("approval wait").enter(|| ());
        toolsmith::telemetry::stage("tool run").enter(|| {
            toolsmith::telemetry::stage("sandbox start").enter(|| ());
        });
        toolsmith::telemetry::stage("redaction").enter(|| ());
        drop(_cx);
        r.finish(toolsmith::telemetry::Outcome::Ok);
    };
    for i in 0..1000 {
        one_call(i);
    }
    toolsmith::telemetry::flush();
    // The calling thread's part, then the telemetry thread's (making the spans and points),
    // in batches the size of its queue's usual take.
    let (batches, batch) = (20u64, 1_000u64);
    let (mut calling, mut making) = (Duration::ZERO, Duration::ZERO);
    for b in 0..batches {
        let t = Instant::now();
        for i in 0..batch {
            one_call(b * batch + i);
        }
        calling += t.elapsed();
        let t = Instant::now();
        toolsmith::telemetry::flush();
        making += t.elapsed();
    }
    let calls = (batches * batch) as f64;
    let per_call = calling.as_secs_f64() * 1e6 / calls;
    let per_call_made = making.as_secs_f64() * 1e6 / calls;
    let overhead = |a: Duration, b: Duration| (b.as_secs_f64() / a.as_secs_f64() - 1.0) * 100.0;
    let rows = [
        (
            "warm WASM call over MCP stdio, not exported, p50 / p95".to_string(),
            format!("{} / {}", ms(p50_off), ms(p95_off)),
        ),
        (
            "the same call traced, exported over OTLP, p50 / p95".into(),
            format!("{} / {}", ms(p50_on), ms(p95_on)),
        ),
        (
            "overhead of tracing, p50 / p95 (target ≤ 5 %)".into(),
            format!(
                "{:+.1} % / {:+.1} %",
                overhead(p50_off, p50_on),
                overhead(p95_off, p95_on)
            ),
        ),
        (
            "a stage span with nothing exported".into(),
            format!("{per_stage:.1} ns"),
        ),
        (
            "one call's telemetry (request, 5 stages, outcome) on the calling thread".into(),
            format!("{per_call:.1} µs"),
        ),
        (
            "making its 6 spans and its points, on the telemetry thread".into(),
            format!("{per_call_made:.1} µs"),
        ),
        (
            "OTLP bytes the traced server sent (before its last flush)".into(),
            sent.to_string(),
        ),
    ];
    println!("| measure | value |\n|---|---|");
    for (k, v) in rows {
        println!("| {k} | {v} |");
    }
}
